"""The LlamaIndex adapter against the real llama-index-core: nodes, a query engine, responses."""

import pytest

llama_core = pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex  # noqa: E402
from llama_index.core.base.response.schema import Response, StreamingResponse  # noqa: E402
from llama_index.core.embeddings import MockEmbedding  # noqa: E402
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata, MockLLM  # noqa: E402
from llama_index.core.llms.callbacks import llm_completion_callback  # noqa: E402
from llama_index.core.node_parser import SentenceSplitter  # noqa: E402
from llama_index.core.schema import (  # noqa: E402
    NodeRelationship,
    NodeWithScore,
    RelatedNodeInfo,
    TextNode,
)

from citekit import SourceChunk, SourceDocument  # noqa: E402
from citekit.integrations.llama_index import ResponseCiter, from_llamaindex_nodes  # noqa: E402

REPORT = (
    "Northwind Energy annual report. Revenue grew 15% in 2024, to 2.4 billion euros. "
    "Operating costs fell by 3% as the new turbines came online. "
    "The board approved a dividend of 0.42 euros per share, payable on March 3. "
    "Headcount rose to 5,200 employees across nine countries. "
    "The company expects revenue growth of 8% in 2025."
)
NOTES = "Meeting notes. The sky is blue. Water boils at 100 degrees at sea level."


class CannedLLM(CustomLLM):
    """Answers every prompt with one fixed text (no model, no network)."""

    answer: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    @llm_completion_callback()
    def complete(self, prompt, formatted=False, **kwargs):
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(self, prompt, formatted=False, **kwargs):
        yield CompletionResponse(text=self.answer, delta=self.answer)


def documents():
    return [Document(text=REPORT, doc_id="report", metadata={"file_name": "report.txt"}),
            Document(text=NOTES, doc_id="notes")]


def parse(docs):
    # whitespace tokens: no tiktoken encoding is loaded
    splitter = SentenceSplitter(chunk_size=24, chunk_overlap=6, tokenizer=str.split)
    return splitter.get_nodes_from_documents(docs)


def assert_citations_index(result, texts):
    n = 0
    for span in result:
        for citation in span.citations:
            text = texts[citation.source_id]
            assert text[citation.char_start:citation.char_end] == citation.evidence
            n += 1
    return n


def test_parsed_nodes_become_chunks_of_their_document_with_offsets_that_round_trip():
    docs = documents()
    nodes = parse(docs)
    assert len(nodes) > 3 and any(n.start_char_idx > 0 for n in nodes)
    texts = {d.doc_id: d.text for d in docs}
    for given in (None, docs, texts):
        sources = from_llamaindex_nodes([NodeWithScore(node=n, score=1.0) for n in nodes],
                                        documents=given)
        for source, node in zip(sources, nodes):
            assert isinstance(source, SourceChunk) and source.source_id == node.ref_doc_id
            parent = texts[node.ref_doc_id]
            assert parent[source.doc_char_start:source.doc_char_end] == node.text
            assert source.metadata == node.metadata
            assert (source.document_text == parent) == (given is not None)


def test_a_query_engine_response_gets_citations_in_the_documents():
    docs = documents()
    nodes = parse(docs)
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    answer = ("Headcount rose to 5,200 employees. The dividend was 0.45 euros per share. "
              "Mars is red.")
    engine = index.as_query_engine(llm=CannedLLM(answer=answer), similarity_top_k=len(nodes))
    response = engine.query("How did Northwind do?")
    cited = ResponseCiter(documents=docs)(response)
    assert isinstance(cited, Response) and cited.response == answer
    assert cited.source_nodes == response.source_nodes
    assert "citations" not in (response.metadata or {})  # the response passed is unchanged
    result = cited.metadata["citations"]
    assert [s.status for s in result][0] == "supported" and result[2].status == "unsupported"
    conflicts = [c for citation in result[1].citations for c in citation.conflicts]
    assert [(c.answer_text, c.evidence_text) for c in conflicts] == [("0.45", "0.42")]
    assert assert_citations_index(result, {"report": REPORT, "notes": NOTES}) >= 2
    assert result[0].citations[0].char_start == REPORT.index("Headcount")
    cited_ids = [n.node.node_id for n in cited.metadata["cited_nodes"]]
    for span in result:
        for citation in span.citations:
            assert response.source_nodes[citation.source_index].node.node_id in cited_ids
    # the metadata LlamaIndex put there is kept
    for key, value in (response.metadata or {}).items():
        assert cited.metadata[key] == value


def test_a_mock_llm_echoing_its_prompt_is_cited_in_the_retrieved_nodes():
    docs = [Document(text=NOTES, doc_id="notes")]
    index = VectorStoreIndex(parse(docs), embed_model=MockEmbedding(embed_dim=8))
    response = index.as_query_engine(llm=MockLLM()).query("What colour is the sky?")
    result = ResponseCiter()(response).metadata["citations"]
    supported = [s.answer_span.text for s in result if s.status == "supported"]
    assert any("The sky is blue." in text for text in supported)
    assert_citations_index(result, {"notes": NOTES})


def test_without_the_documents_offsets_are_taken_as_recorded():
    nodes = parse(documents())
    response = Response("Operating costs fell by 3%.",
                        source_nodes=[NodeWithScore(node=n) for n in nodes])
    result = ResponseCiter()(response).metadata["citations"]
    assert result[0].status == "supported"
    assert result[0].citations[0].char_start == REPORT.index("Operating costs")


def test_a_changed_document_is_refused_naming_the_node():
    docs = documents()
    nodes = parse(docs)
    changed = {"report": REPORT.replace("Headcount", "Staff"), "notes": NOTES}
    with pytest.raises(ValueError, match=r"nodes\[\d+\]: the text of its parent 'report' at "
                                         r"nodes\[\d+\].start_char_idx"):
        from_llamaindex_nodes(nodes, documents=changed)
    wrong_end = TextNode(text="abc", start_char_idx=0, end_char_idx=5, relationships={
        NodeRelationship.SOURCE: RelatedNodeInfo(node_id="d")})
    with pytest.raises(ValueError, match=r"nodes\[0\].end_char_idx = 5 but nodes\[0\] holds 3"):
        from_llamaindex_nodes([wrong_end])


def test_nodes_without_offsets_metadata_or_parent_are_documents_of_their_own():
    bare = TextNode(text="The sky is blue.", id_="sky")
    whole = Document(text="Grass is green.", doc_id="grass")
    sources = from_llamaindex_nodes([bare, NodeWithScore(node=whole, score=0.5)])
    assert [(type(s).__name__, s.id, s.metadata) for s in sources] == [
        ("SourceDocument", "sky", {}), ("SourceDocument", "grass", {})
    ]


def test_the_same_node_twice_is_one_document_and_an_empty_retrieval_cites_nothing():
    sky = NodeWithScore(node=TextNode(text="The sky is blue.", id_="sky"), score=1.0)
    cited = ResponseCiter()(Response("The sky is blue.", source_nodes=[sky, sky]))
    assert [c.source_index for c in cited.metadata["citations"][0].citations] == [0]
    assert cited.metadata["cited_nodes"] == [sky]
    empty = ResponseCiter()(Response("The sky is blue. Grass is green.", source_nodes=[]))
    assert [s.status for s in empty.metadata["citations"]] == ["unsupported"] * 2
    assert empty.metadata["cited_nodes"] == [] and from_llamaindex_nodes([]) == []
    nothing = ResponseCiter()(Response(None, source_nodes=[sky]))
    assert list(nothing.metadata["citations"]) == []


def test_repeated_retrievals_reuse_the_prepared_corpus():
    nodes = [NodeWithScore(node=n) for n in parse(documents())]
    citer = ResponseCiter(cache_size=4)
    for answer in ("Revenue grew 15% in 2024.", "The sky is blue.", "Revenue grew."):
        citer(Response(answer, source_nodes=nodes))
    assert citer.cache.hits == 2


def test_bad_inputs_name_what_is_wrong():
    citer = ResponseCiter()
    streaming = StreamingResponse(response_gen=iter(["a"]))
    with pytest.raises(TypeError, match=r"got StreamingResponse \(read a streaming response"):
        citer(streaming)
    with pytest.raises(TypeError, match="response must be a LlamaIndex Response, got str"):
        citer("text")
    with pytest.raises(TypeError, match=r"response.source_nodes\[0\] must be a LlamaIndex"):
        citer(Response("x", source_nodes=["not a node"]))
    with pytest.raises(TypeError, match="nodes must be a sequence of LlamaIndex nodes"):
        from_llamaindex_nodes("text")
    with pytest.raises(TypeError, match=r"documents\[0\] must be a LlamaIndex Document, got str"):
        from_llamaindex_nodes([], documents=["text"])
    with pytest.raises(TypeError, match="documents must map str ids to str texts"):
        from_llamaindex_nodes([], documents={"a": None})
    with pytest.raises(TypeError, match="pipeline must be a citekit Pipeline"):
        ResponseCiter(pipeline=object())
    with pytest.raises(ValueError, match="cache_size must be >= 0"):
        ResponseCiter(cache_size=-1)
    assert isinstance(from_llamaindex_nodes([TextNode(text="")])[0], SourceDocument)
