"""Prepare highlights for a web UI: JSON with UTF-16 offsets that JavaScript can slice.

A chat front end shows the answer, and when the user clicks a sentence, the retrieved chunk
with the supporting passage highlighted. Browsers index strings in UTF-16 code units, so an
emoji or another character outside the Basic Multilingual Plane counts as two: Python
offsets would drift after the first one. This example builds the payload such a UI needs:

* per answer sentence: status and citations (``to_records(..., offsets="utf16")``);
* per chunk: display-friendly highlight spans (``find_answer_highlights``) converted with
  ``utf16_offsets``.

Run: ``python examples/highlight_ui.py``. In the browser, ``chunk.text.slice(start, end)``
returns exactly the highlighted text.
"""

from __future__ import annotations

import json

from citekit import align_citations, find_answer_highlights
from citekit.batch import to_records, utf16_offsets

CHUNKS = [
    {
        "id": "kestrel-returns",
        "text": (
            "📦 Returns\n"
            "You can return most items within 30 days of delivery for a full refund, as long as "
            "they are unused and in their original packaging.\n"
            "Opened software, gift cards and custom-built computers cannot be returned.\n"
            "⭐ Members of Kestrel Plus get free return shipping and a 60-day return window."
        ),
    },
    {
        "id": "kestrel-warranty",
        "text": "🔧 Defective products are covered by a two-year warranty; contact support first.",
    },
]
ANSWER = (
    "You can return unused items within 30 days of delivery for a full refund 👍. "
    "Custom-built computers cannot be returned. Defective products have a two-year warranty."
)


def build_payload(answer: str, chunks: list[dict]) -> dict:
    results = align_citations(answer, chunks)
    sentences = to_records(results, level="sentence", offsets="utf16")
    citations = to_records(results, level="citation", offsets="utf16")
    highlights = []
    for chunk in chunks:
        spans = find_answer_highlights(answer, chunk["text"], keep_longest_only=False)
        flat = utf16_offsets(chunk["text"], [p for span in spans for p in span])
        highlights.append(
            {
                "chunk_id": chunk["id"],
                "spans": [
                    {"start": flat[2 * k], "end": flat[2 * k + 1]} for k in range(len(spans))
                ],
            }
        )
    return {
        "answer": answer,
        "offset_unit": "utf16",
        "sentences": [
            {key: row[key] for key in ("span_index", "sentence_start", "sentence_end", "status")}
            for row in sentences
        ],
        "citations": [
            {
                key: row[key]
                for key in (
                    "span_index",
                    "rank",
                    "source_id",
                    "char_start",
                    "char_end",
                    "score",
                    "evidence",
                )
            }
            for row in citations
        ],
        "highlights": highlights,
    }


def js_slice(text: str, start: int, end: int) -> str:
    """What JavaScript's ``text.slice(start, end)`` returns."""
    return text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


if __name__ == "__main__":
    payload = build_payload(ANSWER, CHUNKS)
    print(json.dumps(payload, ensure_ascii=False, indent=2))
    texts = {chunk["id"]: chunk["text"] for chunk in CHUNKS}
    # check what the front end will see
    for citation in payload["citations"]:
        assert (
            js_slice(texts[citation["source_id"]], citation["char_start"], citation["char_end"])
            == citation["evidence"]
        )
    for block in payload["highlights"]:
        for span in block["spans"]:
            text = texts[block["chunk_id"]]
            print(f"{block['chunk_id']}: {js_slice(text, span['start'], span['end'])!r}")
