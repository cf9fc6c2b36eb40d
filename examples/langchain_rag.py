"""Citations in a LangChain RAG chain, with offsets in the original documents.

Run with ``python examples/langchain_rag.py`` (needs ``pip install 'citekit[langchain]'``
and ``langchain-text-splitters``). No model and no network: the documents are split with
``add_start_index=True``, stored in langchain-core's ``InMemoryVectorStore`` with a fake
embedding, and a ``FakeListLLM`` plays the model. The chain ends in
``citation_runnable()``, which adds the citations of the answer in the retrieved chunks;
every citation's offsets index the ORIGINAL document, not the chunk.
"""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import RecursiveCharacterTextSplitter

from citekit.integrations.langchain import citation_runnable

REPORT = (
    "Northwind Energy reported fourth-quarter revenue of $2.4 billion, up 15% from a year "
    "earlier. Operating margin improved to 18.5% as fuel costs fell. The company ended the "
    "year with 12,400 employees. The board approved a dividend of $0.42 per share, payable "
    "on March 3. Northwind also announced a new solar plant in Lisbon that will cost "
    "€310 million."
)
ANSWER = (
    "Revenue rose 15% to $2.4 billion. The board approved a dividend of $0.45 per share. "
    "The Lisbon plant will cost €310 million. Northwind plans to list in New York."
)


def main() -> None:
    parents = [Document(REPORT, metadata={"source": "q4-report.txt"})]
    splitter = RecursiveCharacterTextSplitter(chunk_size=120, chunk_overlap=30,
                                              add_start_index=True)
    chunks = splitter.split_documents(parents)
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents(chunks, ids=[f"chunk-{i}" for i in range(len(chunks))])
    retriever = store.as_retriever(search_kwargs={"k": len(chunks)})

    prompt = PromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    llm = FakeListLLM(responses=[ANSWER])

    def fill_prompt(inputs: dict) -> dict:
        context = "\n\n".join(document.page_content for document in inputs["context"])
        return {"context": context, "question": inputs["question"]}

    chain = (
        RunnableParallel(context=retriever, question=RunnablePassthrough())
        | RunnablePassthrough.assign(answer=fill_prompt | prompt | llm | StrOutputParser())
        # the parents let citekit check every chunk's start_index against the document
        | citation_runnable(parents=parents)
    )
    out = chain.invoke("How did Northwind do in the fourth quarter?")

    print(f"{len(out['context'])} chunks retrieved, {len(out['cited_documents'])} cited")
    for span in out["citations"]:
        print(f"[{span.status:>11}] {span.answer_span.text}")
        for citation in span.citations:
            chunk = out["context"][citation.source_index]
            # the offsets index the original document
            assert REPORT[citation.char_start:citation.char_end] == citation.evidence
            print(f"              {citation.source_id} [{citation.char_start}:{citation.char_end}]"
                  f" via {chunk.id}: {citation.exact_evidence!r}")
            for conflict in citation.conflicts:
                print(f"              conflict: answer {conflict.answer_text!r}, "
                      f"source {conflict.evidence_text!r}")


if __name__ == "__main__":
    main()
