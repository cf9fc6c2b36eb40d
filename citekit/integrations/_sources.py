"""Sources from what a framework's retriever returned: one record per retrieved item.

The adapters read each retrieved item (a LangChain ``Document``, a LlamaIndex node) into a
:class:`Retrieved` -- its own id, the id of the document it was cut from, its text, and
where the framework says that text starts in it -- and :func:`place_sources` turns the
list into citekit sources, one per item, in order (so a citation's ``source_index`` is
the position of the item it quotes):

- an item that names its parent and where it starts there becomes a
  :class:`~citekit.results.SourceChunk` of that parent (``source_id`` = the parent's id),
  so that citation offsets index the parent document. When the parent's text is known
  the chunk is checked to be exactly the parent's characters at those offsets (and
  carries the parent as ``document_text``); when it is not, the offsets are taken as the
  framework recorded them, and chunks of one parent that overlap must agree on the
  characters they share.
- any other item is a document of its own, cited in its own text (``source_id`` = its
  id, else its parent's id, else its position). Items that end up with one id but
  different texts are told apart by a suffix (``"id#2"``, ``"id#3"``, ...); the same
  text retrieved twice under one id is one document (two chunks covering all of it).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from citekit.results import SourceChunk, SourceDocument

__all__ = ["Retrieved", "place_sources", "parent_offset", "texts_by_id"]


@dataclass(frozen=True)
class Retrieved:
    """One retrieved item as an adapter read it.

    Attributes
    ----------
    own_id : str or None
        The item's id in the framework (a document id, a node id).
    parent_id : str or None
        The id of the document the item was cut from.
    text : str
        The item's text (what is cited).
    start, end : int or None
        Where the framework says ``text`` starts and ends in the parent (``None``: not
        recorded). ``end`` is only checked against ``start + len(text)``.
    metadata : dict
        Kept on the source record.
    where : str
        How an error names the item, e.g. ``"documents[3]"``.
    start_field, end_field : str
        How an error names the fields ``start`` and ``end`` were read from.
    """

    own_id: str | None
    parent_id: str | None
    text: str
    start: int | None
    end: int | None
    metadata: Mapping[str, Any]
    where: str
    start_field: str = "start"
    end_field: str = "end"


def parent_offset(value: Any, where: str) -> int | None:
    """A start or end offset as a framework recorded it: an int, or ``None`` when absent.

    ``-1`` (what LangChain's text splitters write when they could not find a chunk in its
    document) reads as ``None``.

    Raises
    ------
    TypeError
        If ``value`` is not an int (``bool`` included) or None.
    ValueError
        If it is negative other than ``-1``.

    Examples
    --------
    >>> parent_offset(12, "x"), parent_offset(-1, "x"), parent_offset(None, "x")
    (12, None, None)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where} must be an int or None, got {type(value).__name__}")
    value = int(value)
    if value == -1:
        return None
    if value < 0:
        raise ValueError(f"{where} must be >= 0 (or -1: not found), got {value}")
    return value


def texts_by_id(mapping: Mapping[Any, Any], name: str) -> dict[str, str]:
    """``mapping`` (argument ``name``) as a dict of str id -> str text; a TypeError naming
    the argument for any other key or value.

    Examples
    --------
    >>> texts_by_id({"d1": "Revenue grew."}, "parents")
    {'d1': 'Revenue grew.'}
    """
    texts = {}
    for key, text in mapping.items():
        if not isinstance(key, str) or not isinstance(text, str):
            raise TypeError(
                f"{name} must map str ids to str texts, got {type(key).__name__}"
                f" -> {type(text).__name__}"
            )
        texts[key] = text
    return texts


def place_sources(
    items: Sequence[Retrieved],
    parents: Mapping[str, str],
    *,
    parent_hint: str,
) -> list[SourceDocument | SourceChunk]:
    """One citekit source per retrieved item, in order (the rules: the module docstring).

    Parameters
    ----------
    items : sequence of Retrieved
        The retrieved items.
    parents : mapping of str to str
        Known parent texts by parent id (may be empty).
    parent_hint : str
        Appended to the error raised when chunks of one parent disagree: how to give the
        adapter's parents distinct ids.

    Raises
    ------
    ValueError
        If an item's recorded end does not fit its text, its parent's text (when known)
        does not hold its text at its offsets, or two chunks of one parent (parent text
        unknown) disagree on characters they share.

    Examples
    --------
    >>> parent = "Intro. Revenue grew 15%."
    >>> chunk = Retrieved("c1", "report", "Revenue grew 15%.", 7, None, {}, "items[0]")
    >>> whole = Retrieved(None, None, "The sky is blue.", None, None, {}, "items[1]")
    >>> [type(s).__name__ for s in place_sources([chunk, whole], {"report": parent},
    ...                                          parent_hint="")]
    ['SourceChunk', 'SourceDocument']
    """
    placed: list[SourceDocument | SourceChunk | None] = [None] * len(items)
    # parent id -> positions of its chunks (for the overlap check when its text is unknown)
    chunks_of: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        if item.parent_id is None or item.start is None:
            continue
        end = item.start + len(item.text)
        if item.end is not None and item.end != end:
            raise ValueError(
                f"{item.end_field} = {item.end} but {item.where} holds {len(item.text)} "
                f"characters from {item.start_field} = {item.start}: the offsets do not "
                "describe this text"
            )
        parent_text = parents.get(item.parent_id)
        if parent_text is not None and parent_text[item.start : end] != item.text:
            raise ValueError(
                f"{item.where}: the text of its parent {item.parent_id!r} at "
                f"{item.start_field} = {item.start} is not the item's text (was the "
                "parent changed after it was split?)"
            )
        placed[position] = SourceChunk(
            source_id=item.parent_id,
            text=item.text,
            doc_char_start=item.start,
            doc_char_end=end,
            metadata=item.metadata,
            document_text=parent_text,
        )
        if parent_text is None:
            chunks_of.setdefault(item.parent_id, []).append(position)
    for parent_id, positions in chunks_of.items():
        _check_overlaps([items[p] for p in positions], parent_id, parent_hint)
    _place_documents(items, placed, parents)
    return placed  # type: ignore[return-value]


def _check_overlaps(chunks: list[Retrieved], parent_id: str, parent_hint: str) -> None:
    """Chunks said to be characters of one parent (whose text is unknown) that overlap
    must agree on the characters they share: if not, they come from different texts and
    citations would merge evidence of both."""
    ordered = sorted(chunks, key=lambda item: item.start)  # type: ignore[arg-type,return-value]
    for later, chunk in enumerate(ordered):
        start = chunk.start
        assert start is not None  # (only located items are here)
        for earlier in ordered[:later]:
            earlier_start = earlier.start
            assert earlier_start is not None
            overlap_end = min(earlier_start + len(earlier.text), start + len(chunk.text))
            if overlap_end <= start:
                continue
            if (
                earlier.text[start - earlier_start : overlap_end - earlier_start]
                != chunk.text[: overlap_end - start]
            ):
                raise ValueError(
                    f"{earlier.where} and {chunk.where} both say they are characters of "
                    f"{parent_id!r} but differ at characters {start}-{overlap_end}: they come "
                    f"from different texts. {parent_hint}"
                )


def _place_documents(
    items: Sequence[Retrieved],
    placed: list[SourceDocument | SourceChunk | None],
    parents: Mapping[str, str],
) -> None:
    """Fill the unplaced positions of ``placed`` with documents of their own (the ids:
    the module docstring)."""
    taken = {source.source_id for source in placed if isinstance(source, SourceChunk)}
    for position, item in enumerate(items):
        if (
            placed[position] is None
            and item.parent_id is not None
            and parents.get(item.parent_id) == item.text
        ):
            # the parent itself, retrieved whole: a chunk covering all of it
            placed[position] = SourceChunk(
                source_id=item.parent_id,
                text=item.text,
                doc_char_start=0,
                doc_char_end=len(item.text),
                metadata=item.metadata,
                document_text=item.text,
            )
            taken.add(item.parent_id)
    text_of: dict[str, str] = {}  # id of an own document -> its text
    members: dict[str, list[int]] = {}  # id of an own document -> its positions
    for position, item in enumerate(items):
        if placed[position] is not None:
            continue
        base = item.own_id if item.own_id is not None else item.parent_id
        if base is None:
            base = str(position)
        source_id, suffix = base, 1
        while (source_id in taken and source_id not in text_of) or (
            source_id in text_of and text_of[source_id] != item.text
        ):
            suffix += 1
            source_id = f"{base}#{suffix}"
        text_of[source_id] = item.text
        taken.add(source_id)
        members.setdefault(source_id, []).append(position)
    for source_id, positions in members.items():
        for position in positions:
            item = items[position]
            if len(positions) == 1:
                placed[position] = SourceDocument(
                    id=source_id, text=item.text, metadata=item.metadata
                )
            else:
                # one text retrieved more than once: one document, each copy covering it
                placed[position] = SourceChunk(
                    source_id=source_id,
                    text=item.text,
                    doc_char_start=0,
                    doc_char_end=len(item.text),
                    metadata=item.metadata,
                    document_text=item.text,
                )
