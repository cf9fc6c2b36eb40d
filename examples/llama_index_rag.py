"""Citations for a LlamaIndex query engine's response, with offsets in the original documents.

Run with ``python examples/llama_index_rag.py`` (needs ``pip install 'citekit[llamaindex]'``).
No model and no network: the documents are parsed into nodes with a ``SentenceSplitter``
(whitespace tokens), indexed in a ``VectorStoreIndex`` with ``MockEmbedding``, and a
tiny ``CustomLLM`` plays the model with a canned answer. ``ResponseCiter`` returns the
response with the citations of its text in its source nodes; every citation's offsets
index the ORIGINAL document (from the nodes' ``start_char_idx``), not the node.
"""

from __future__ import annotations

from typing import Any

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.node_parser import SentenceSplitter

from citekit.integrations.llama_index import ResponseCiter

REPORT = (
    "Northwind Energy reported fourth-quarter revenue of $2.4 billion, up 15% from a year "
    "earlier. Operating margin improved to 18.5% as fuel costs fell. The company ended the "
    "year with 12,400 employees. The board approved a dividend of $0.42 per share, payable "
    "on March 3. Northwind also announced a new solar plant in Lisbon that will cost "
    "€310 million."
)
ANSWER = (
    "Operating margin improved to 18.5%. The company ended the year with 12,400 employees. "
    "The board approved a dividend of $0.45 per share. Northwind plans to list in New York."
)


class CannedLLM(CustomLLM):
    """Answers every prompt with one fixed text: a stand-in for a model."""

    answer: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        yield CompletionResponse(text=self.answer, delta=self.answer)


def main() -> None:
    documents = [Document(text=REPORT, doc_id="q4-report")]
    splitter = SentenceSplitter(chunk_size=50, chunk_overlap=10, tokenizer=str.split)
    nodes = splitter.get_nodes_from_documents(documents)
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    engine = index.as_query_engine(llm=CannedLLM(answer=ANSWER), similarity_top_k=len(nodes))
    response = engine.query("How did Northwind do in the fourth quarter?")

    # the documents let citekit check every node's start_char_idx against its document
    cited = ResponseCiter(documents=documents)(response)
    result = cited.metadata["citations"]
    print(f"{len(cited.source_nodes)} nodes retrieved, "
          f"{len(cited.metadata['cited_nodes'])} cited")
    for span in result:
        print(f"[{span.status:>11}] {span.answer_span.text}")
        for citation in span.citations:
            node = cited.source_nodes[citation.source_index].node
            # the offsets index the original document, not the node
            assert REPORT[citation.char_start:citation.char_end] == citation.evidence
            print(f"              {citation.source_id} [{citation.char_start}:{citation.char_end}]"
                  f" via node {node.start_char_idx}-{node.end_char_idx}: "
                  f"{citation.exact_evidence!r}")
            for conflict in citation.conflicts:
                print(f"              conflict: answer {conflict.answer_text!r}, "
                      f"source {conflict.evidence_text!r}")


if __name__ == "__main__":
    main()
