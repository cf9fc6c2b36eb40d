"""citekit quickstart: which characters of which source support each sentence?

Run with ``python examples/quickstart.py``. It aligns a generated answer (numbers,
percentages, currency, one reformatted number, one wrong figure and one invented claim)
with three short sources, then prints every sentence with its status and evidence, the
parts no source supports, and value conflicts. Finally it prepares the sources once as a
reusable ``Corpus`` and aligns a second answer against it.
"""

from __future__ import annotations

from citekit import CitationConfig, Pipeline, SourceDocument, align_citations

SOURCES = [
    SourceDocument(
        id="q4-report",
        text=(
            "Northwind Energy reported fourth-quarter revenue of $2.4 billion, up 15% from a year "
            "earlier. Operating margin improved to 18.5% as fuel costs fell. The company ended "
            "the year with 12,400 employees."
        ),
    ),
    SourceDocument(
        id="press-release",
        text=(
            "The board approved a dividend of $0.42 per share, payable on March 3. Northwind also "
            "announced a new solar plant in Lisbon that will cost €310 million."
        ),
    ),
    SourceDocument(
        id="analyst-note",
        text="Analysts at Trey Research expect revenue growth of 9% in the coming year.",
    ),
]

ANSWER = (
    "Northwind Energy's fourth-quarter revenue rose 15% to $2.4 billion. "
    "Its operating margin improved to 18.5 percent, and the company had 12400 employees "
    "at year end. "
    "The board approved a dividend of $0.45 per share. "
    "A new solar plant in Lisbon will cost €310 million. "
    "The CEO plans to retire next spring."
)


def show(result, sources_by_id):
    for span in result:
        print(f"\n[{span.status.upper():11s}] {span.answer_span.text}")
        for citation in span.citations:
            text = sources_by_id[citation.source_id]
            # offsets index the ORIGINAL source string
            assert text[citation.char_start : citation.char_end] == citation.evidence
            print(
                f"    {citation.source_id} [{citation.char_start}:{citation.char_end}] "
                f"score {citation.score:.2f}: {citation.evidence!r}"
            )
            for conflict in citation.conflicts:
                print(
                    f"    ! {conflict.kind} conflict: answer says {conflict.answer_text!r}, "
                    f"source says {conflict.evidence_text!r}"
                )
        answer = result.answer
        for start, end in span.unsupported_spans:
            print(f"    not in the sources: {answer[start:end]!r}")


def main() -> None:
    sources_by_id = {source.id: source.text for source in SOURCES}

    # one call: sources are prepared inside
    result = align_citations(ANSWER, SOURCES)
    show(result, sources_by_id)

    # many answers against the same sources: prepare them once
    pipe = Pipeline(CitationConfig(top_k=1))
    corpus = pipe.prepare(SOURCES)
    follow_up = pipe.align("Analysts expect revenue to grow 9% next year.", corpus)
    show(follow_up, sources_by_id)


if __name__ == "__main__":
    main()
