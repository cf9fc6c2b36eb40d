"""The sources of a corpus, one checked record at a time.

The rules of what a source may be, in one place: :func:`source_record` (an item of a
sequence or iterable given to :meth:`~citekit.corpus.Corpus.build`: a str, a
:class:`~citekit.results.SourceDocument`, a :class:`~citekit.results.SourceChunk` or a
mapping with ``"text"``), :func:`source_from_json` (a line of a JSON Lines sources file,
``{"id", "text", ...}``, as ``citekit align --sources`` and ``citekit prepare`` read it),
:class:`DistinctIds` (no two documents share an id) and :func:`sources_path` (when
``sources`` names a file). :func:`checked_records` and :func:`jsonl_sources` yield the
records of an iterable and of a file, checked as they come, so that a stream is read once.
"""

from __future__ import annotations

import numbers
import os
from collections import abc
from typing import Any, Iterable, Iterator

from citekit.results import SourceChunk, SourceDocument, _unchecked

__all__ = [
    "SOURCES_FILE_SUFFIXES",
    "DistinctIds",
    "check_distinct_ids",
    "check_iterable",
    "checked_records",
    "jsonl_sources",
    "source_from_json",
    "source_record",
    "sources_path",
]

# a str given as sources is the path of a JSON Lines file only when it ends so (compared
# without case): a text is never read as a path, and a mistyped path is not read as a text
SOURCES_FILE_SUFFIXES = (".jsonl", ".jsonl.gz")

_SOURCES_TYPE = (
    "sources must be a sequence or iterable of str, SourceDocument, SourceChunk or mappings "
    "with 'text', or the path of a JSON Lines file (.jsonl or .jsonl.gz)"
)


def sources_path(sources: Any) -> str | None:
    """The path ``sources`` names, or None when it is not a path.

    An :class:`os.PathLike` is always a path; a ``str`` is one when it ends with ``.jsonl``
    or ``.jsonl.gz`` (any other ``str`` is refused: a single text is passed as ``[text]``).
    A name ending in ``.gz`` is read as gzip.

    Raises
    ------
    TypeError
        For another ``str``, or a path given as bytes.
    FileNotFoundError
        If the file does not exist (the message names it).
    ValueError
        If the path is a directory.

    Examples
    --------
    >>> sources_path(["a text"]) is None
    True
    >>> sources_path("Revenue grew.")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: sources must be ... a str is the path of a sources file only when it ends ...
    """
    if isinstance(sources, os.PathLike):
        path = os.fspath(sources)
        if not isinstance(path, str):
            raise TypeError(f"sources: a path must be a str path, got {type(path).__name__}")
    elif isinstance(sources, str):
        if "\n" in sources or not sources.lower().endswith(SOURCES_FILE_SUFFIXES):
            shown = sources if len(sources) <= 40 else sources[:37] + "..."
            raise TypeError(
                f"{_SOURCES_TYPE}; a str is the path of a sources file only when it ends "
                f"with .jsonl or .jsonl.gz, got the str {shown!r} (pass a single text as "
                "[text])"
            )
        path = sources
    else:
        return None
    if not os.path.exists(path):
        raise FileNotFoundError(f"sources file not found: {path}")
    if os.path.isdir(path):
        raise ValueError(f"sources file is a directory: {path}")
    return path


def check_iterable(sources: Any) -> None:
    """Raise ``TypeError`` unless ``sources`` is an iterable of sources (not a str, bytes
    or mapping)."""
    if (
        isinstance(sources, (str, bytes))
        or isinstance(sources, abc.Mapping)
        or not isinstance(sources, abc.Iterable)
    ):
        raise TypeError(f"{_SOURCES_TYPE}; got {type(sources).__name__}")


def source_record(item: Any, position: int) -> SourceDocument | SourceChunk:
    """The record of one item of ``sources`` (number ``position``).

    A ``str`` becomes ``SourceDocument(id=str(position), text=item)``; a mapping needs
    ``"text"`` and takes ``"id"`` (a str, or an int written in decimal; missing or None:
    its position) and ``"metadata"`` (a mapping, or None); records are kept as they are.

    Raises
    ------
    TypeError
        If the item is of another type, or a mapping's ``"text"``, ``"id"`` or
        ``"metadata"`` is (the message names ``sources[position]``).
    ValueError
        If a mapping lacks ``"text"``.

    Examples
    --------
    >>> source_record({"id": 7, "text": "Costs fell."}, 3).id
    '7'
    >>> source_record("Revenue grew.", 3).id
    '3'
    """
    if isinstance(item, (SourceDocument, SourceChunk)):
        return item
    # (records made from checked values without running their checks again: a few
    # microseconds per source, a thousand sources per end-to-end call)
    if isinstance(item, str):
        return _unchecked(SourceDocument, id=str(position), text=item, metadata={})
    if not isinstance(item, abc.Mapping):
        raise TypeError(
            f"sources[{position}] must be a str, SourceDocument, SourceChunk or mapping, "
            f"got {type(item).__name__}"
        )
    if "text" not in item:
        raise ValueError(f"sources[{position}] is a mapping without a 'text' key")
    text = item["text"]
    if not isinstance(text, str):
        raise TypeError(f"sources[{position}]['text'] must be a str, got {type(text).__name__}")
    source_id = item.get("id")
    if source_id is None:
        source_id = str(position)
    elif not isinstance(source_id, str):
        if isinstance(source_id, bool) or not isinstance(source_id, numbers.Integral):
            raise TypeError(
                f"sources[{position}]['id'] must be a str or an int, "
                f"got {type(source_id).__name__}"
            )
        source_id = str(int(source_id))
    metadata = item.get("metadata")
    if metadata is None:
        metadata = {}
    elif type(metadata) is not dict and not isinstance(metadata, abc.Mapping):
        raise TypeError(
            f"sources[{position}]['metadata'] must be a mapping, got {type(metadata).__name__}"
        )
    return _unchecked(SourceDocument, id=source_id, text=text, metadata=dict(metadata))


class DistinctIds:
    """The ids of the documents seen so far, to refuse two documents sharing one.

    A citation's ``source_id`` would not say which of them it quotes. The chunks of one
    document (:class:`~citekit.results.SourceChunk`) share their ``source_id``: they are
    one document, but no :class:`~citekit.results.SourceDocument` may have it.

    Examples
    --------
    >>> ids = DistinctIds()
    >>> ids.add(SourceDocument("a", "x"), 0), ids.add(SourceDocument("a", "y"), 5)
    (None, 0)
    """

    def __init__(self) -> None:
        self._documents: dict[str, int] = {}  # id -> tag of the document that has it
        self._chunks: dict[str, int] = {}  # source_id -> tag of its first chunk

    def add(self, record: SourceDocument | SourceChunk, tag: int) -> int | None:
        """Note ``record`` (``tag``: its position, or its line); return the tag of an
        earlier record it clashes with, or None."""
        if isinstance(record, SourceDocument):
            other = self._documents.get(record.id, self._chunks.get(record.id))
            self._documents.setdefault(record.id, tag)
        else:
            other = self._documents.get(record.source_id)
            self._chunks.setdefault(record.source_id, tag)
        return other


def _same_id(first: int, position: int, record: SourceDocument | SourceChunk) -> ValueError:
    source_id = record.id if isinstance(record, SourceDocument) else record.source_id
    return ValueError(
        f"sources[{first}] and sources[{position}] have the same id {source_id!r}: "
        "give each document its own id (the chunks of one document, SourceChunk, "
        "share its source_id)"
    )


def check_distinct_ids(records: Iterable[SourceDocument | SourceChunk]) -> None:
    """Raise ``ValueError`` naming the positions of two documents that share an id (or a
    document that has the ``source_id`` of chunks).

    Examples
    --------
    >>> check_distinct_ids([SourceDocument("a", "x"), SourceDocument("b", "x")])
    """
    ids = DistinctIds()
    for position, record in enumerate(records):
        other = ids.add(record, position)
        if other is not None:
            raise _same_id(other, position, record)


def checked_records(sources: Iterable[Any]) -> Iterator[SourceDocument | SourceChunk]:
    """The records of ``sources`` (:func:`source_record`), their ids checked as they come
    (:class:`DistinctIds`): an iterable is read once.

    Examples
    --------
    >>> [r.id for r in checked_records(iter(["a", {"id": "x", "text": "b"}]))]
    ['0', 'x']
    """
    ids = DistinctIds()
    for position, item in enumerate(sources):
        record = source_record(item, position)
        other = ids.add(record, position)
        if other is not None:
            raise _same_id(other, position, record)
        yield record


def source_from_json(value: Any, where: str) -> SourceDocument | str:
    """A source read from JSON: an object ``{"id", "text", ...}`` (other keys become its
    metadata), or a string (an answer's own sources may be plain texts).

    Raises
    ------
    ValueError
        ``"<where>: ..."`` for anything else, a missing or non-string ``"text"``, or an
        ``"id"`` that is neither a string nor an integer.

    Examples
    --------
    >>> source_from_json({"id": 7, "text": "Costs fell.", "url": "u"}, "s.jsonl, line 1")
    SourceDocument(id='7', text='Costs fell.', metadata={'url': 'u'})
    >>> source_from_json({"id": 7, "text": 3}, "s.jsonl, line 2")
    Traceback (most recent call last):
    ...
    ValueError: s.jsonl, line 2: a source needs a string 'text' (got int)
    """
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise ValueError(f'{where}: a source must be an object {{"id", "text"}} or a string')
    text = value.get("text")
    if not isinstance(text, str):
        got = "none" if "text" not in value else type(text).__name__
        raise ValueError(f"{where}: a source needs a string 'text' (got {got})")
    source_id = value.get("id")
    if not isinstance(source_id, (str, int)) or isinstance(source_id, bool):
        raise ValueError(f"{where}: a source needs an 'id' (string)")
    metadata = {k: v for k, v in value.items() if k not in ("id", "text")}
    return SourceDocument(id=str(source_id), text=text, metadata=metadata)


def jsonl_sources(path: str | os.PathLike[str]) -> Iterator[SourceDocument]:
    """The sources of a JSON Lines file, one :func:`source_from_json` object per non-blank
    line, read as they are needed (gzip when the name ends with ``.gz``).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        ``"<path>, line N: ..."`` for a line that is not a JSON object (see
        :func:`citekit.batch.read_jsonl`), not a source, or repeats an earlier line's id;
        ``"<path>: ..."`` for a damaged gzip file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = path.write_text('{"id": "a", "text": "x"}\\n\\n{"id": "a", "text": "y"}\\n')
    >>> list(jsonl_sources(path))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...s.jsonl, line 3: duplicate source id 'a' (first on line 1)
    """
    from citekit._rows import numbered_jsonl

    name = os.fspath(path)
    ids = DistinctIds()
    for number, row in numbered_jsonl(path):
        where = f"{name}, line {number}"
        record = source_from_json(row, where)
        assert isinstance(record, SourceDocument)  # (a line is an object)
        first = ids.add(record, number)
        if first is not None:
            raise ValueError(f"{where}: duplicate source id {record.id!r} (first on line {first})")
        yield record
