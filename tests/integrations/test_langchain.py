"""The LangChain adapter against the real langchain-core: documents, splitters, LCEL chains."""

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

langchain_core = pytest.importorskip("langchain_core")
text_splitters = pytest.importorskip("langchain_text_splitters")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.language_models import FakeListLLM  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import PromptTemplate  # noqa: E402
from langchain_core.runnables import Runnable, RunnableParallel, RunnablePassthrough  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

from citekit import CitationConfig, Pipeline, SourceChunk, SourceDocument  # noqa: E402
from citekit.integrations.langchain import (  # noqa: E402
    citation_runnable,
    from_langchain_documents,
)

REPORT = (
    "Northwind Energy annual report. Revenue grew 15% in 2024, to 2.4 billion euros. "
    "Operating costs fell by 3% as the new turbines came online. "
    "The board approved a dividend of 0.42 euros per share, payable on March 3. "
    "Headcount rose to 5,200 employees across nine countries. "
    "The company expects revenue growth of 8% in 2025."
)
NOTES = "Meeting notes. The sky is blue. Water boils at 100 degrees at sea level."


def split(text, source, **kwargs):
    splitter = text_splitters.RecursiveCharacterTextSplitter(
        chunk_size=kwargs.pop("chunk_size", 90), chunk_overlap=kwargs.pop("chunk_overlap", 30),
        add_start_index=True, **kwargs,
    )
    return splitter.split_documents([Document(text, metadata={"source": source})])


def assert_citations_index(result, texts_by_source):
    """Every citation slices the text its source_id names (the parent for chunks)."""
    n = 0
    for span in result:
        for citation in span.citations:
            text = texts_by_source[citation.source_id]
            assert text[citation.char_start:citation.char_end] == citation.evidence
            for piece in citation.evidence_spans:
                assert text[piece.char_start:piece.char_end] == piece.evidence
            n += 1
    return n


def test_splitter_chunks_become_chunks_of_their_parent_with_offsets_that_round_trip():
    chunks = split(REPORT, "report.txt")
    assert len(chunks) > 3 and all(c.metadata["start_index"] >= 0 for c in chunks)
    parent_document = Document(REPORT, metadata={"source": "report.txt"})
    for parents in (None, {"report.txt": REPORT}, [parent_document]):
        sources = from_langchain_documents(chunks, parents=parents)
        assert all(isinstance(s, SourceChunk) and s.source_id == "report.txt" for s in sources)
        for source, chunk in zip(sources, chunks):
            assert REPORT[source.doc_char_start:source.doc_char_end] == chunk.page_content
            assert source.metadata == chunk.metadata
            assert (source.document_text == REPORT) == (parents is not None)
    answer = "The board approved a dividend of 0.42 euros per share. Headcount rose to 5,200."
    result = Pipeline().align(answer, from_langchain_documents(chunks))
    assert [s.status for s in result] == ["supported", "supported"]
    assert assert_citations_index(result, {"report.txt": REPORT}) >= 2
    # offsets are the parent's, past the first chunk
    assert result[1].citations[0].char_start == REPORT.index("Headcount")


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    words=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=40),
    size=st.integers(10, 60),
    pick=st.integers(0, 100),
)
def test_any_text_split_anywhere_gives_citations_that_slice_the_parent(words, size, pick):
    parent = " ".join(words)
    chunks = split(parent, "doc", chunk_size=size, chunk_overlap=size // 3)
    if not chunks:
        return
    sources = from_langchain_documents(chunks, parents={"doc": parent})
    answer = chunks[pick % len(chunks)].page_content
    result = Pipeline().align(answer, sources)
    texts = {"doc": parent}
    for source in sources:  # a chunk the splitter could not find is cited in its own text
        if isinstance(source, SourceDocument):
            texts[source.id] = source.text
    assert_citations_index(result, texts)


def test_a_stale_parent_is_refused_naming_the_document():
    chunks = split(REPORT, "report.txt")
    stale = REPORT.replace("Headcount", "Staff")
    first = next(i for i, c in enumerate(chunks) if "Headcount" in c.page_content)
    message = rf"documents\[{first}\]: the text of its parent 'report.txt'"
    with pytest.raises(ValueError, match=message):
        from_langchain_documents(chunks, parents={"report.txt": stale})


def test_pages_of_one_file_need_their_page_in_the_id():
    pages = [
        Document(text, metadata={"source": "a.pdf", "page": page})
        for page, text in enumerate(["First page text about revenue and costs.",
                                     "Second page: the dividend and headcount."])
    ]
    splitter = text_splitters.RecursiveCharacterTextSplitter(
        chunk_size=25, chunk_overlap=0, add_start_index=True
    )
    chunks = splitter.split_documents(pages)
    with pytest.raises(ValueError, match="come from different texts.*id_key"):
        from_langchain_documents(chunks)
    sources = from_langchain_documents(chunks, id_key=("source", "page"), parents=pages)
    assert {s.source_id for s in sources} == {"a.pdf#0", "a.pdf#1"}
    for source in sources:
        page = pages[int(source.source_id[-1])].page_content
        assert page[source.doc_char_start:source.doc_char_end] == source.text


def test_documents_without_metadata_or_ids_are_documents_by_position():
    documents = [Document("The sky is blue."), Document("Grass is green.", id="g")]
    sources = from_langchain_documents(documents)
    assert [(type(s).__name__, s.id, s.metadata) for s in sources] == [
        ("SourceDocument", "0", {}), ("SourceDocument", "g", {})
    ]
    # a chunk the splitter did not find (start_index -1) is cited in its own text
    [lost] = from_langchain_documents(
        [Document("lost", metadata={"source": "r", "start_index": -1})]
    )
    assert isinstance(lost, SourceDocument) and lost.id == "r"


def test_duplicate_ids_the_same_document_twice_is_one_and_other_texts_are_told_apart():
    sky = Document("The sky is blue.", id="d1")
    other = Document("Water boils at 100 degrees.", id="d1")
    sources = from_langchain_documents([sky, other, sky])
    assert [getattr(s, "source_id", None) or s.id for s in sources] == ["d1", "d1#2", "d1"]
    out = citation_runnable().invoke(
        {"answer": "The sky is blue. Water boils at 100 degrees.", "context": [sky, other, sky]}
    )
    assert [s.status for s in out["citations"]] == ["supported", "supported"]
    assert out["cited_documents"] == [sky, other]
    assert [c.source_index for s in out["citations"] for c in s.citations] == [0, 1]


def test_an_empty_retrieval_leaves_every_sentence_unsupported():
    out = citation_runnable().invoke({"answer": "Revenue grew. Costs fell.", "context": []})
    assert [s.status for s in out["citations"]] == ["unsupported", "unsupported"]
    assert out["cited_documents"] == []
    assert from_langchain_documents([]) == []


def make_chain(documents, answers, **options):
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(documents)
    retriever = store.as_retriever(search_kwargs={"k": len(documents)})
    prompt = PromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}\nAnswer:")
    llm = FakeListLLM(responses=answers)

    def format_documents(inputs):
        context = "\n\n".join(d.page_content for d in inputs["context"])
        return {"context": context, "question": inputs["question"]}

    citer = citation_runnable(**options)
    chain = (
        RunnableParallel(context=retriever, question=RunnablePassthrough())
        | RunnablePassthrough.assign(answer=format_documents | prompt | llm | StrOutputParser())
        | citer
    )
    return chain, citer


def test_an_lcel_chain_with_a_retriever_and_a_fake_llm_gets_citations():
    chunks = split(REPORT, "report.txt") + [Document(NOTES, metadata={"source": "notes.txt"})]
    answer = "Revenue grew 15% in 2024. The dividend was 0.45 euros per share. Mars is red."
    chain, citer = make_chain(chunks, [answer], parents={"report.txt": REPORT})
    assert isinstance(citer, Runnable) and citer.name == "citekit_citations"
    out = chain.invoke("How did Northwind do?")
    assert set(out) == {"context", "question", "answer", "citations", "cited_documents"}
    statuses = [s.status for s in out["citations"]]
    assert statuses[0] == "supported" and statuses[2] == "unsupported"
    conflicts = [c for citation in out["citations"][1].citations for c in citation.conflicts]
    assert [(c.answer_text, c.evidence_text) for c in conflicts] == [("0.45", "0.42")]
    assert assert_citations_index(out["citations"], {"report.txt": REPORT}) >= 2
    for citation in out["citations"][0].citations:
        assert out["context"][citation.source_index] in out["cited_documents"]
    assert all(d.metadata["source"] == "report.txt" for d in out["cited_documents"])


def test_repeated_retrievals_reuse_the_prepared_corpus_and_batch_works():
    documents = [Document("The sky is blue.", id="sky"), Document("Grass is green.", id="grass")]
    chain, citer = make_chain(documents, ["The sky is blue.", "Grass is green."])
    outs = chain.batch(["colour of the sky?", "colour of grass?", "sky again?"])
    assert [o["citations"][0].status for o in outs] == ["supported"] * 3
    assert citer.func.cache.hits == 2  # three calls, one set of documents
    uncached, citer = make_chain(documents, ["The sky is blue."], cache_size=0)
    uncached.invoke("a")
    uncached.invoke("b")
    assert citer.func.cache.hits == 0


def test_async_invocation_and_chat_messages():
    documents = [Document("The sky is blue.", id="sky")]
    citer = citation_runnable(Pipeline(CitationConfig(top_k=1)), answer_key="output",
                              documents_key="docs", output_key="cites", cited_key="used")
    out = asyncio.run(citer.ainvoke({"output": AIMessage("The sky is blue."), "docs": documents}))
    assert out["cites"][0].status == "supported" and out["used"] == documents


def test_bad_inputs_name_what_is_wrong():
    citer = citation_runnable()
    with pytest.raises(TypeError, match="takes a dict with 'answer' and 'context', got str"):
        citer.invoke("just a string")
    with pytest.raises(ValueError, match="has no 'context' key"):
        citer.invoke({"answer": "x"})
    with pytest.raises(TypeError, match=r"input\['answer'\] must be a str or a message"):
        citer.invoke({"answer": 3, "context": []})
    with pytest.raises(TypeError, match=r"input\['context'\]\[1\] must be a langchain_core"):
        citer.invoke({"answer": "x", "context": [Document("a"), "b"]})
    with pytest.raises(TypeError, match="documents must be a sequence"):
        from_langchain_documents("text")
    with pytest.raises(TypeError, match="id_key must be a str or a non-empty sequence"):
        from_langchain_documents([], id_key=())
    with pytest.raises(TypeError, match="start_key must be a str"):
        from_langchain_documents([], start_key=1)
    with pytest.raises(TypeError, match=r"documents\[0\].metadata\['start_index'\] must be an int"):
        from_langchain_documents([Document("a", metadata={"source": "r", "start_index": "0"})])
    with pytest.raises(TypeError, match=r"documents\[0\].metadata\['source'\] must be a str"):
        from_langchain_documents([Document("a", metadata={"source": 1.5})])
    with pytest.raises(ValueError, match=r"end_index'\] = 9 but documents\[0\] holds 1"):
        from_langchain_documents(
            [Document("a", metadata={"source": "r", "start_index": 0, "end_index": 9})]
        )
    with pytest.raises(TypeError, match="parents must map str ids to str texts"):
        from_langchain_documents([], parents={"a": 1})
    with pytest.raises(ValueError, match="two parents have the id 'a'"):
        from_langchain_documents([], parents=[Document("x", id="a"), Document("y", id="a")])
    with pytest.raises(ValueError, match=r"parents\[0\] has no id"):
        from_langchain_documents([], parents=[Document("x")])
    with pytest.raises(TypeError, match="answer_key must be a str"):
        citation_runnable(answer_key=None)
    with pytest.raises(TypeError, match="pipeline must be a citekit Pipeline"):
        citation_runnable("pipeline")
