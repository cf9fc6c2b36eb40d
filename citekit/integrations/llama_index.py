"""Citations in LlamaIndex: sources from retrieved nodes, and a hook for a ``Response``.

:func:`from_llamaindex_nodes` turns retrieved nodes (``NodeWithScore`` or bare nodes such
as ``TextNode``) into citekit sources, one per node and in order (so
``Citation.source_index`` is the position of the node cited), keeping each node's
metadata. A node cut from a document by a node parser knows its document
(``node.ref_doc_id``) and where it starts there (``node.start_char_idx``): it becomes a
:class:`~citekit.results.SourceChunk` of that document, and citation offsets index the
document, not the node.

:class:`ResponseCiter` is the hook for a query engine's answer: ``ResponseCiter()(response)``
returns the ``Response`` with the citations of its text in its source nodes, and the
nodes they cite, in its ``metadata``.

Needs ``llama-index-core`` (``pip install 'citekit[llamaindex]'``), imported when first
used.
"""

from __future__ import annotations

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
from citekit.results import SourceChunk, SourceDocument

__all__ = ["from_llamaindex_nodes", "ResponseCiter"]

_EXTRA = "llamaindex"
_PURPOSE = "citekit's LlamaIndex integration"


def _schema() -> Any:
    return import_optional("llama_index.core.schema", _EXTRA, purpose=_PURPOSE)


def from_llamaindex_nodes(
    nodes: Sequence[Any],
    *,
    documents: Mapping[str, str] | Sequence[Any] | None = None,
) -> list[SourceDocument | SourceChunk]:
    """citekit sources from LlamaIndex nodes, one per node, in order.

    A node that names its document (``ref_doc_id``) and where it starts there
    (``start_char_idx``, as node parsers set it) becomes a
    :class:`~citekit.results.SourceChunk` of that document: its ``source_id`` is the
    document's id and citation offsets index the document. When the document's text is
    known (``documents``) the node's text must be exactly the document's characters from
    ``start_char_idx`` (``end_char_idx``, when set, must be where the node's text ends),
    and the chunk carries the document as ``document_text``. When it is not known, the
    offsets are used as the node parser recorded them: they index the document as it
    was when parsed (nothing can check that), and nodes of one document that overlap
    must agree on the characters they share.

    Any other node (a document itself, a node without offsets) is cited in its own
    text, as a :class:`~citekit.results.SourceDocument` whose id is its ``node_id``; the
    same node retrieved twice is one document.

    Parameters
    ----------
    nodes : sequence of NodeWithScore or BaseNode
        What the retriever returned, e.g. ``response.source_nodes`` (an empty list gives
        no sources). A node's text is ``node.get_content(metadata_mode=MetadataMode.NONE)``:
        its text without the metadata LlamaIndex shows the LLM.
    documents : mapping of str to str or sequence of Document, optional
        The documents the nodes were parsed from (by id, or the ``Document`` objects
        themselves), to check node offsets against.

    Returns
    -------
    list of SourceDocument or SourceChunk
        One per node, carrying its metadata.

    Raises
    ------
    ImportError
        If llama-index-core is not installed (names the extra ``citekit[llamaindex]``).
    TypeError
        If ``nodes`` or ``documents`` hold anything else (naming the position).
    ValueError
        If a node's offsets do not fit its text or its document's text, or overlapping
        nodes of one document differ.

    Examples
    --------
    >>> from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
    >>> document = "Intro. Revenue grew 15% in 2024."
    >>> node = TextNode(text="Revenue grew 15% in 2024.", start_char_idx=7, end_char_idx=32,
    ...                 relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="report")})
    >>> [source] = from_llamaindex_nodes([node], documents={"report": document})
    >>> source.source_id, document[source.doc_char_start:source.doc_char_end]
    ('report', 'Revenue grew 15% in 2024.')
    """
    return _NodeSources(documents).sources(nodes)[1]


class _NodeSources:
    """How nodes become sources, with the documents' texts read once."""

    def __init__(self, documents: Any) -> None:
        self.schema = _schema()
        self.document_texts = _document_texts(documents, self.schema)

    def sources(
        self, nodes: Any, name: str = "nodes"
    ) -> tuple[list[Any], list[SourceDocument | SourceChunk]]:
        """The nodes as a checked list, and their sources."""
        if isinstance(nodes, (str, bytes, abc.Mapping)) or not isinstance(nodes, abc.Iterable):
            raise TypeError(
                f"{name} must be a sequence of LlamaIndex nodes, got {type(nodes).__name__}"
            )
        nodes = list(nodes)
        items = [
            self._retrieved(node, f"{name}[{position}]") for position, node in enumerate(nodes)
        ]
        return nodes, place_sources(
            items,
            self.document_texts,
            parent_hint="Check the nodes' ref_doc_id: their documents need distinct ids.",
        )

    def _retrieved(self, item: Any, where: str) -> Retrieved:
        schema = self.schema
        node = item.node if isinstance(item, schema.NodeWithScore) else item
        if not isinstance(node, schema.BaseNode):
            raise TypeError(
                f"{where} must be a LlamaIndex NodeWithScore or node, got {type(item).__name__}"
            )
        text = node.get_content(metadata_mode=schema.MetadataMode.NONE)
        if not isinstance(text, str):
            raise TypeError(f"{where}'s content must be a str, got {type(text).__name__}")
        start_field = f"{where}.start_char_idx"
        end_field = f"{where}.end_char_idx"
        return Retrieved(
            own_id=node.node_id,
            parent_id=node.ref_doc_id,
            text=text,
            start=parent_offset(getattr(node, "start_char_idx", None), start_field),
            end=parent_offset(getattr(node, "end_char_idx", None), end_field),
            metadata=dict(node.metadata or {}),
            where=where,
            start_field=start_field,
            end_field=end_field,
        )


def _document_texts(documents: Any, schema: Any) -> dict[str, str]:
    """``documents`` as a dict of document id -> text (an empty one for None)."""
    if documents is None:
        return {}
    if isinstance(documents, abc.Mapping):
        return texts_by_id(documents, "documents")
    if isinstance(documents, (str, bytes)) or not isinstance(documents, abc.Iterable):
        raise TypeError(
            "documents must be a mapping of id to text or a sequence of LlamaIndex "
            f"documents, got {type(documents).__name__}"
        )
    texts = {}
    for position, document in enumerate(documents):
        if not isinstance(document, schema.BaseNode):
            raise TypeError(
                f"documents[{position}] must be a LlamaIndex Document, "
                f"got {type(document).__name__}"
            )
        text = document.get_content(metadata_mode=schema.MetadataMode.NONE)
        if texts.setdefault(document.node_id, text) != text:
            raise ValueError(
                f"documents[{position}] has the id {document.node_id!r} of an earlier "
                "document with another text"
            )
    return texts


class ResponseCiter:
    """Attaches citations to LlamaIndex responses: ``ResponseCiter()(response)``.

    Calling it on a query engine's ``Response`` aligns the response text against its
    ``source_nodes`` (sources as :func:`from_llamaindex_nodes` makes them) and returns a
    new ``Response`` with the same text and source nodes whose ``metadata`` also holds
    ``"citations"``, the :class:`~citekit.results.AlignmentResult`
    (``Citation.source_index`` is the position of the node cited in ``source_nodes``),
    and ``"cited_nodes"``, the source nodes cited, in retrieval order. The response
    passed is not changed.

    The prepared corpora of the last ``cache_size`` node lists are kept: a retriever over
    a fixed index that returns the same nodes again reuses them. Calls are serialized.

    Parameters
    ----------
    pipeline : Pipeline, optional
        Aligns (default ``Pipeline()``).
    documents : mapping of str to str or sequence of Document, optional
        The documents the nodes were parsed from, to check node offsets against (see
        :func:`from_llamaindex_nodes`).
    cache_size : int, default 16
        Prepared corpora kept (0: prepare the nodes on every call).

    Raises
    ------
    ImportError
        If llama-index-core is not installed (names the extra ``citekit[llamaindex]``).
    TypeError
        If ``pipeline`` is not a Pipeline, or (when called) the response is not a
        ``Response`` with a str (a streaming response must be read first:
        ``response.get_response()``).

    Examples
    --------
    >>> from llama_index.core.base.response.schema import Response
    >>> from llama_index.core.schema import NodeWithScore, TextNode
    >>> nodes = [NodeWithScore(node=TextNode(text="The sky is blue.", id_="sky"), score=0.9)]
    >>> cited = ResponseCiter()(Response("The sky is blue.", source_nodes=nodes))
    >>> cited.metadata["citations"][0].status
    'supported'
    >>> [node.node.node_id for node in cited.metadata["cited_nodes"]]
    ['sky']
    """

    def __init__(
        self,
        pipeline: Any = None,
        *,
        documents: Mapping[str, str] | Sequence[Any] | None = None,
        cache_size: int = 16,
    ) -> None:
        self._node_sources = _NodeSources(documents)
        self._response_class = import_optional(
            "llama_index.core.base.response.schema", _EXTRA, purpose=_PURPOSE
        ).Response
        self.cache = CorpusCache(check_pipeline(pipeline), cache_size)

    def __call__(self, response: Any) -> Any:
        """The response with ``metadata["citations"]`` and ``metadata["cited_nodes"]``."""
        response_class = self._response_class
        if not isinstance(response, response_class):
            hint = (
                " (read a streaming response first: response.get_response())"
                if hasattr(response, "get_response")
                else ""
            )
            raise TypeError(
                f"response must be a LlamaIndex Response, got {type(response).__name__}{hint}"
            )
        answer = response.response
        if answer is None:
            answer = ""
        if not isinstance(answer, str):
            raise TypeError(f"response.response must be a str, got {type(answer).__name__}")
        nodes, sources = self._node_sources.sources(response.source_nodes, "response.source_nodes")
        result = self.cache.align(answer, sources)
        metadata = dict(response.metadata or {})
        metadata["citations"] = result
        metadata["cited_nodes"] = [nodes[position] for position in cited_positions(result)]
        return response_class(response=response.response, source_nodes=nodes, metadata=metadata)
