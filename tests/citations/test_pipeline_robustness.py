"""Huge and pathological inputs: correct results, no hang (sizes from issue 4)."""

import pytest

from citekit.pipeline import Pipeline

PARAGRAPH = (
    "The committee approved a budget of $4.2 million for 2025, an increase of 7% over the prior "
    "year. Members debated the allocation for parks. "
)


@pytest.mark.slow
def test_ten_megabyte_source():
    big = PARAGRAPH * (10_000_000 // len(PARAGRAPH) + 1)
    assert len(big) >= 10_000_000
    pipe = Pipeline()
    result = pipe.align("Members debated the allocation for parks.", [big])
    span = result[0]
    assert span.status == "supported"
    for citation in span.citations:
        assert big[citation.char_start : citation.char_end] == citation.evidence


@pytest.mark.slow
def test_pathological_repetition():
    repetition = "a " * 2_000_000
    pipe = Pipeline()
    result = pipe.align("a a a a a a a a.", [repetition])
    assert result[0].status == "supported"
    citation = result[0].citations[0]
    assert repetition[citation.char_start : citation.char_end] == citation.evidence
    # a long repetitive answer against a long repetitive source is banded, not quadratic
    result = pipe.align("a " * 3000, [repetition[:200_000]])
    assert result[0].status == "supported"


@pytest.mark.slow
def test_five_thousand_sentence_answer():
    answer = " ".join(f"Claim number {i} says the value was {i * 3} units." for i in range(5000))
    pipe = Pipeline()
    sources = ["Claim number 17 says the value was 51 units.", PARAGRAPH]
    result = pipe.align(answer, sources)
    assert len(result) == 5000
    assert result[17].status == "supported"
    assert result[17].citations[0].evidence == "Claim number 17 says the value was 51 units"
    # other claims share words but their numbers differ: never supported
    assert all(span.status != "supported" for i, span in enumerate(result) if i != 17)


def test_source_without_tokens_and_whitespace_only_inputs():
    pipe = Pipeline()
    result = pipe.align("Members debated.", ["", "   ", "...", "\n\n", PARAGRAPH])
    assert result[0].citations[0].source_id == "4"
    assert list(pipe.align("\n\n\t ", [PARAGRAPH])) == []
