"""Citations in LangChain: sources from retrieved ``Document`` lists, and a runnable step.

:func:`from_langchain_documents` turns the documents a retriever returned into citekit
sources, one per document and in order (so ``Citation.source_index`` is the position of
the document cited), keeping each document's metadata. A chunk made by a text splitter
with ``add_start_index=True`` carries ``metadata["start_index"]`` and its parent's name
in ``metadata["source"]``: it becomes a :class:`~citekit.results.SourceChunk` of that
parent, and citation offsets index the parent document.

:func:`citation_runnable` is a step for an LCEL chain (``chain | citation_runnable()``):
it reads the answer and the retrieved documents from the chain's output (the keys
``"answer"`` and ``"context"``, as ``create_retrieval_chain`` writes them) and adds the
citations and the documents they cite.

Needs ``langchain-core`` (``pip install 'citekit[langchain]'``), imported when first used.
"""

from __future__ import annotations

import os
from collections import abc
from typing import Any, Mapping, Sequence

from citekit._optional import import_optional
from citekit.integrations._corpora import CorpusCache, check_pipeline, cited_positions
from citekit.integrations._sources import (
    Retrieved,
    parent_offset,
    place_sources,
    texts_by_id,
)
from citekit.results import AlignmentResult, SourceChunk, SourceDocument

__all__ = ["from_langchain_documents", "citation_runnable"]

_EXTRA = "langchain"


def _document_class() -> type:
    module = import_optional(
        "langchain_core.documents", _EXTRA, purpose="citekit's LangChain integration"
    )
    return module.Document


def from_langchain_documents(
    documents: Sequence[Any],
    *,
    id_key: str | Sequence[str] = "source",
    start_key: str = "start_index",
    end_key: str = "end_index",
    parents: Mapping[str, str] | Sequence[Any] | None = None,
) -> list[SourceDocument | SourceChunk]:
    """citekit sources from LangChain documents, one per document, in order.

    A document whose metadata names its parent (``metadata[id_key]``) and where it starts
    there (``metadata[start_key]``, as text splitters write it with
    ``add_start_index=True``) becomes a :class:`~citekit.results.SourceChunk` of that
    parent: its ``source_id`` is the parent's id and citation offsets index the parent.
    When the parent's text is known (``parents``) the chunk must be exactly the parent's
    characters at that offset, and the chunk carries it as ``document_text``; when it is
    not, the offsets are used as the splitter recorded them (they index the parent as it
    was when split), and chunks of one parent that overlap must agree on the characters
    they share.

    Any other document (no start, or ``start_index = -1``: the splitter did not find it)
    is cited in its own text, as a :class:`~citekit.results.SourceDocument` whose id is
    ``Document.id``, else ``metadata[id_key]``, else its position. Two documents that
    end up with one id but different texts are told apart by a suffix (``"id#2"``); the
    same text retrieved twice is one document. A parent retrieved whole (its text equal
    to ``parents[id]``) is a chunk covering all of that parent.

    Parameters
    ----------
    documents : sequence of langchain_core.documents.Document
        What the retriever returned (an empty list gives no sources).
    id_key : str or sequence of str, default "source"
        The metadata key naming a chunk's parent document; several keys name it by all
        their values joined with ``"#"`` (e.g. ``("source", "page")`` for PDF loaders,
        whose chunks start in a page: ``"report.pdf#3"``).
    start_key, end_key : str, default "start_index", "end_index"
        The metadata keys of where a chunk starts (and, optionally, ends) in its parent.
    parents : mapping of str to str or sequence of Document, optional
        The parents' texts by id, or the parent documents themselves (their id read as a
        chunk's: ``metadata[id_key]``, else ``Document.id``), to check chunk offsets
        against.

    Returns
    -------
    list of SourceDocument or SourceChunk
        One per document, carrying its metadata.

    Raises
    ------
    ImportError
        If langchain-core is not installed (names the extra ``citekit[langchain]``).
    TypeError
        If ``documents`` is not a sequence of ``Document``, or a metadata value read has
        the wrong type (naming the document and key).
    ValueError
        If a chunk's offsets do not fit its text or its parent's text, or overlapping
        chunks of one parent differ (their parents need distinct ids: see ``id_key``).

    Examples
    --------
    >>> from langchain_core.documents import Document
    >>> parent = "Intro. Revenue grew 15% in 2024."
    >>> chunk = Document("Revenue grew 15% in 2024.",
    ...                  metadata={"source": "report.txt", "start_index": 7})
    >>> [source] = from_langchain_documents([chunk], parents={"report.txt": parent})
    >>> source.source_id, parent[source.doc_char_start:source.doc_char_end]
    ('report.txt', 'Revenue grew 15% in 2024.')
    """
    return _SourceOptions(id_key, start_key, end_key, parents).sources(documents)[1]


class _SourceOptions:
    """How documents become sources, checked once (the parents read once)."""

    def __init__(self, id_key: Any, start_key: Any, end_key: Any, parents: Any) -> None:
        self.document_class = _document_class()
        self.keys = _id_keys(id_key)
        for name, key in (("start_key", start_key), ("end_key", end_key)):
            if not isinstance(key, str):
                raise TypeError(f"{name} must be a str, got {type(key).__name__}")
        self.start_key = start_key
        self.end_key = end_key
        self.parent_texts = _parent_texts(parents, self.document_class, self.keys)

    def sources(
        self, documents: Any, name: str = "documents"
    ) -> tuple[list[Any], list[SourceDocument | SourceChunk]]:
        """The documents as a checked list, and their sources."""
        documents = _documents(documents, self.document_class, name)
        items = [
            _retrieved(document, f"{name}[{position}]", self.keys, self.start_key, self.end_key)
            for position, document in enumerate(documents)
        ]
        return documents, place_sources(
            items,
            self.parent_texts,
            parent_hint=f"Name each chunk's parent apart with id_key (now {self.keys!r}).",
        )


def _id_keys(id_key: Any) -> tuple[str, ...]:
    if isinstance(id_key, str):
        return (id_key,)
    if isinstance(id_key, abc.Sequence) and id_key and all(isinstance(k, str) for k in id_key):
        return tuple(id_key)
    raise TypeError(f"id_key must be a str or a non-empty sequence of str, got {id_key!r}")


def _documents(documents: Any, document_class: type, name: str) -> list[Any]:
    if isinstance(documents, (str, bytes, abc.Mapping)) or not isinstance(
        documents, abc.Iterable
    ):
        raise TypeError(
            f"{name} must be a sequence of langchain_core Document, got {type(documents).__name__}"
        )
    documents = list(documents)
    for position, document in enumerate(documents):
        if not isinstance(document, document_class):
            raise TypeError(
                f"{name}[{position}] must be a langchain_core Document, "
                f"got {type(document).__name__}"
            )
        if not isinstance(document.page_content, str):
            raise TypeError(
                f"{name}[{position}].page_content must be a str, "
                f"got {type(document.page_content).__name__}"
            )
    return documents


def _metadata(document: Any) -> dict[str, Any]:
    metadata = document.metadata
    return {} if metadata is None else dict(metadata)


def _parent_id(metadata: Mapping[str, Any], keys: tuple[str, ...], where: str) -> str | None:
    """The parent's id from ``metadata[keys]`` (values joined with ``"#"``), or None when
    any key is missing or None."""
    values = []
    for key in keys:
        value = metadata.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, os.PathLike)):
            raise TypeError(
                f"{where}.metadata[{key!r}] must be a str, an int or a path, "
                f"got {type(value).__name__}"
            )
        values.append(os.fspath(value) if isinstance(value, os.PathLike) else str(value))
    return "#".join(values)


def _retrieved(
    document: Any, where: str, keys: tuple[str, ...], start_key: str, end_key: str
) -> Retrieved:
    metadata = _metadata(document)
    start_field = f"{where}.metadata[{start_key!r}]"
    end_field = f"{where}.metadata[{end_key!r}]"
    own_id = document.id
    if own_id is not None and not isinstance(own_id, str):
        raise TypeError(f"{where}.id must be a str or None, got {type(own_id).__name__}")
    return Retrieved(
        own_id=own_id,
        parent_id=_parent_id(metadata, keys, where),
        text=document.page_content,
        start=parent_offset(metadata.get(start_key), start_field),
        end=parent_offset(metadata.get(end_key), end_field),
        metadata=metadata,
        where=where,
        start_field=start_field,
        end_field=end_field,
    )


def _parent_texts(parents: Any, document_class: type, keys: tuple[str, ...]) -> dict[str, str]:
    """``parents`` as a dict of parent id -> text (an empty one for None)."""
    if parents is None:
        return {}
    if isinstance(parents, abc.Mapping):
        return texts_by_id(parents, "parents")
    texts = {}
    for position, document in enumerate(_documents(parents, document_class, "parents")):
        where = f"parents[{position}]"
        parent_id = _parent_id(_metadata(document), keys, where)
        if parent_id is None:
            parent_id = document.id
        if parent_id is None:
            raise ValueError(
                f"{where} has no id: neither metadata[{keys[0]!r}] nor Document.id is set"
            )
        if texts.setdefault(parent_id, document.page_content) != document.page_content:
            raise ValueError(
                f"two parents have the id {parent_id!r} but different texts: name them "
                f"apart with id_key (now {keys!r})"
            )
    return texts


class _Citer:
    """What :func:`citation_runnable` runs: the inputs with the citations added."""

    def __init__(
        self,
        pipeline: Any,
        *,
        answer_key: str,
        documents_key: str,
        output_key: str,
        cited_key: str,
        id_key: str | Sequence[str],
        start_key: str,
        end_key: str,
        parents: Any,
        cache_size: int,
    ) -> None:
        for name, value in (
            ("answer_key", answer_key),
            ("documents_key", documents_key),
            ("output_key", output_key),
            ("cited_key", cited_key),
        ):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        self.answer_key = answer_key
        self.documents_key = documents_key
        self.output_key = output_key
        self.cited_key = cited_key
        self.source_options = _SourceOptions(id_key, start_key, end_key, parents)
        self.cache = CorpusCache(check_pipeline(pipeline), cache_size)

    def __call__(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(inputs, abc.Mapping):
            raise TypeError(
                f"the citation step takes a dict with {self.answer_key!r} and "
                f"{self.documents_key!r}, got {type(inputs).__name__}"
            )
        for key in (self.answer_key, self.documents_key):
            if key not in inputs:
                keys = sorted(map(str, inputs))
                raise ValueError(f"the citation step's input has no {key!r} key (it has {keys})")
        answer = _answer_text(inputs[self.answer_key], self.answer_key)
        documents, sources = self.source_options.sources(
            inputs[self.documents_key], f"input[{self.documents_key!r}]"
        )
        result: AlignmentResult = self.cache.align(answer, sources)
        return {
            **inputs,
            self.output_key: result,
            self.cited_key: [documents[position] for position in cited_positions(result)],
        }


def _answer_text(answer: Any, key: str) -> str:
    """The answer as a str: a str, or a chat message whose content is one."""
    if isinstance(answer, str):
        return answer
    content = getattr(answer, "content", None)
    if isinstance(content, str):
        return content
    raise TypeError(
        f"input[{key!r}] must be a str or a message with str content, got {type(answer).__name__}"
    )


def citation_runnable(
    pipeline: Any = None,
    *,
    answer_key: str = "answer",
    documents_key: str = "context",
    output_key: str = "citations",
    cited_key: str = "cited_documents",
    id_key: str | Sequence[str] = "source",
    start_key: str = "start_index",
    end_key: str = "end_index",
    parents: Mapping[str, str] | Sequence[Any] | None = None,
    cache_size: int = 16,
) -> Any:
    """A LangChain runnable adding citations to a chain's answer: ``chain | citation_runnable()``.

    It takes a dict holding the answer (``input[answer_key]``: a str, or a chat message
    with str content) and the retrieved documents (``input[documents_key]``) and returns
    the same dict with two more keys: ``output_key``, the
    :class:`~citekit.results.AlignmentResult` of the answer in the documents (sources as
    :func:`from_langchain_documents` makes them, so ``Citation.source_index`` is the
    position of the document cited), and ``cited_key``, the documents cited, in retrieval
    order.

    The prepared corpora of the last ``cache_size`` document lists are kept: a retriever
    over a fixed store that returns the same documents again (the same question, a
    conversation coming back to a subject) reuses them. Calls through one runnable are
    serialized.

    Parameters
    ----------
    pipeline : Pipeline, optional
        Aligns (default ``Pipeline()``).
    answer_key, documents_key : str, default "answer", "context"
        Where the answer and the documents are in the input (the keys of
        ``create_retrieval_chain``'s output).
    output_key, cited_key : str, default "citations", "cited_documents"
        The keys added.
    id_key, start_key, end_key, parents
        How documents become sources (see :func:`from_langchain_documents`).
    cache_size : int, default 16
        Prepared corpora kept (0: prepare the documents on every call).

    Returns
    -------
    langchain_core.runnables.Runnable
        A ``RunnableLambda`` named ``"citekit_citations"``.

    Raises
    ------
    ImportError
        If langchain-core is not installed (names the extra ``citekit[langchain]``).
    TypeError, ValueError
        For arguments of the wrong type or value; when invoked, for an input that is not
        a dict with both keys, or documents :func:`from_langchain_documents` rejects.

    Examples
    --------
    >>> from langchain_core.documents import Document
    >>> from langchain_core.language_models import FakeListLLM
    >>> from langchain_core.runnables import RunnablePassthrough
    >>> documents = [Document("Water boils at 100 degrees.", id="water"),
    ...              Document("The sky is blue.", id="sky")]
    >>> llm = FakeListLLM(responses=["The sky is blue."])
    >>> chain = (RunnablePassthrough.assign(answer=lambda x: llm.invoke(x["question"]))
    ...          | citation_runnable())
    >>> out = chain.invoke({"question": "What colour is the sky?", "context": documents})
    >>> span = out["citations"][0]
    >>> span.status, span.citations[0].source_id, [d.id for d in out["cited_documents"]]
    ('supported', 'sky', ['sky'])
    """
    runnables = import_optional(
        "langchain_core.runnables", _EXTRA, purpose="citekit's LangChain integration"
    )
    citer = _Citer(
        pipeline,
        answer_key=answer_key,
        documents_key=documents_key,
        output_key=output_key,
        cited_key=cited_key,
        id_key=id_key,
        start_key=start_key,
        end_key=end_key,
        parents=parents,
        cache_size=cache_size,
    )
    return runnables.RunnableLambda(citer, name="citekit_citations")
