"""Sources from other representations: :func:`from_dicts` (plain dictionaries, as a
retrieval API or a custom RAG pipeline returns them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable

from citekit._validation import check_str
from citekit.results import SourceDocument

__all__ = ["from_dicts"]


def from_dicts(
    documents: Iterable[Mapping[str, Any]],
    *,
    text_key: str = "text",
    id_key: str = "id",
) -> list[SourceDocument]:
    """:class:`~citekit.results.SourceDocument` records from dictionaries.

    Parameters
    ----------
    documents : iterable of mappings
        One per document.
    text_key : str, default "text"
        The key holding the document's text (a str).
    id_key : str, default "id"
        The key holding the document's id (converted with ``str``); a document without
        one gets its position, ``"0"``, ``"1"``, ...

    Returns
    -------
    list of SourceDocument
        In order; every other key of a document goes to its ``metadata``.

    Raises
    ------
    TypeError
        If ``documents`` is not an iterable of mappings, or a text is not a str.
    ValueError
        If a document has no ``text_key``.

    Examples
    --------
    >>> docs = [{"id": "doc1", "text": "Revenue grew.", "score": 0.9}, {"text": "Costs fell."}]
    >>> [(d.id, d.text, dict(d.metadata)) for d in from_dicts(docs)]
    [('doc1', 'Revenue grew.', {'score': 0.9}), ('1', 'Costs fell.', {})]
    """
    check_str(text_key, "text_key")
    check_str(id_key, "id_key")
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Iterable):
        raise TypeError(
            f"documents must be an iterable of mappings, got {type(documents).__name__}"
        )
    records = []
    for position, document in enumerate(documents):
        if not isinstance(document, Mapping):
            raise TypeError(
                f"documents[{position}] must be a mapping, got {type(document).__name__}"
            )
        if text_key not in document:
            raise ValueError(f"documents[{position}] has no {text_key!r} key")
        text = document[text_key]
        if not isinstance(text, str):
            raise TypeError(
                f"documents[{position}][{text_key!r}] must be a str, got {type(text).__name__}"
            )
        identifier = document.get(id_key)
        metadata = {k: v for k, v in document.items() if k not in (text_key, id_key)}
        records.append(
            SourceDocument(
                id=str(position) if identifier is None else str(identifier),
                text=text,
                metadata=metadata,
            )
        )
    return records
