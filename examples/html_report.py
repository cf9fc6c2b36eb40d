"""Write a self-contained HTML report of citations (what Jupyter shows, outside a notebook).

Every answer sentence is coloured by status (supported, partial, unsupported), with a
label (S1, S2, ...) per cited source; below, each cited source with the evidence
underlined at its exact offsets (hover for score components). A legend above the first
answer says what the colours, underlines and labels mean. The file needs no network and
no scripts.

Run: ``python examples/html_report.py [report.html]`` and open the file in a browser.
"""

from __future__ import annotations

import html
import sys

from citekit import Pipeline, render_html
from citekit.data import load_example_answers, load_example_sources


def main(path: str) -> None:
    pipeline = Pipeline()
    corpus = pipeline.prepare(load_example_sources())
    answers = load_example_answers()
    results = pipeline.align_many([a["answer"] for a in answers], corpus)
    # one legend, above the first answer, explains the colours and labels of every answer
    sections = [
        f"<h2>{html.escape(record['question'])}</h2>"
        + render_html(result, result.answer, result.sources, legend=index == 0)
        for index, (record, result) in enumerate(zip(answers, results))
    ]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(
            '<!DOCTYPE html><html><head><meta charset="utf-8"><title>citekit report'
            "</title></head><body>" + "".join(sections) + "</body></html>\n"
        )
    print(f"wrote {path} ({len(answers)} answers)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "citekit_report.html")
