"""Plain-Python references for citekit.highlight and its kernels, and the parity tests.

The reference is the documented highlighter algorithm written the obvious way (``re``
tokens, ``str.lower``, ``difflib``, lists), one function per stage. Each numba kernel of
``citekit.kernels._highlight`` is compared with its stage here, and the whole
``find_answer_highlights`` with :func:`naive_highlights`, on arbitrary Unicode.
"""

from __future__ import annotations

import difflib
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels import _highlight as kernels
from citekit.highlight import (
    DEFAULT_SPAN_EXPANSION_REGEX,
    DEFAULT_STOP_WORDS,
    _character_tables,
    _code_points,
    _expand_spans,
    _stop_word_table,
    _TokenizedText,
    find_answer_highlights,
)

WORD_RE = re.compile(r"\w+")
SENTENCE_BREAK_RE = re.compile(r"[.!?…]|\n\s*\n")


# ----------------------------------------------------------------------------- references


def naive_tokens(text, tokenizer="unicode_word"):
    """``(lowered, start, end)`` per token."""
    if tokenizer == "char":
        return [(char.lower(), i, i + 1) for i, char in enumerate(text) if not char.isspace()]
    return [(m.group().lower(), m.start(), m.end()) for m in WORD_RE.finditer(text)]


def naive_gap_breaks(text, tokens):
    return [
        int(index + 1 < len(tokens)
            and bool(SENTENCE_BREAK_RE.search(text[tokens[index][2]:tokens[index + 1][1]])))
        for index in range(len(tokens))
    ]


def naive_punctuation(text, tokens):
    return [int(any(char in ".!?…" for char in text[start:end])) for _, start, end in tokens]


def naive_fnv(values):
    value = 0xCBF29CE484222325
    for code_point in values:
        value = ((value ^ code_point) * 0x100000001B3) % (1 << 64)
    return value


def naive_merge(runs, tokens, text, gap_tokens):
    """Fuse sorted token runs at most ``gap_tokens`` apart unless a sentence break divides them."""
    merged = []
    for start, end in sorted(runs):
        if merged and start - merged[-1][1] <= gap_tokens:
            previous_start, previous_end = merged[-1]
            between = text[tokens[previous_end - 1][2]:tokens[start][1]]
            if start < previous_end or not SENTENCE_BREAK_RE.search(between):
                merged[-1] = (previous_start, max(previous_end, end))
                continue
        merged.append((start, end))
    return merged


def naive_limit_ratio(spans, n_chars, ratio, length):
    if not spans or n_chars <= 0 or sum(length(s) for s in spans) / n_chars <= ratio:
        return spans
    return [max(spans, key=length)]


def naive_select_runs(answer_tokens, chunk_tokens, chunk, stop_words, *, lcs_merge_gap_tokens=2,
                      lcs_min_run_tokens=2, lcs_min_single_token_chars=5,
                      max_highlight_ratio=0.5, neighborhood_tokens=6, min_span_words=2,
                      min_vocab_token_chars=2, keep_longest_only=True):
    """Token runs and character spans before expansion (what ``select_runs`` returns)."""
    answer_words = [token for token, _, _ in answer_tokens]
    chunk_words = [token for token, _, _ in chunk_tokens]
    matcher = difflib.SequenceMatcher(None, answer_words, chunk_words, autojunk=False)
    runs = [(j, j + n) for _, j, n in matcher.get_matching_blocks() if n]
    runs = naive_merge(runs, chunk_tokens, chunk, lcs_merge_gap_tokens)

    def meaningful(run):
        content = [w for w in chunk_words[run[0]:run[1]] if w not in stop_words]
        return len(content) >= lcs_min_run_tokens or any(
            len(w) >= lcs_min_single_token_chars for w in content
        )

    def char_length(run):
        return chunk_tokens[run[1] - 1][2] - chunk_tokens[run[0]][1]

    anchors = naive_limit_ratio([r for r in runs if meaningful(r)], len(chunk),
                                max_highlight_ratio, char_length)
    if not anchors:
        return []
    vocabulary = {w for w in answer_words
                  if w not in stop_words and len(w) >= min_vocab_token_chars}
    bag = naive_merge([(k, k + 1) for k, w in enumerate(chunk_words) if w in vocabulary],
                      chunk_tokens, chunk, neighborhood_tokens)
    near = [
        (start, end) for start, end in bag
        if any(start < a_end + neighborhood_tokens and end > a_start - neighborhood_tokens
               for a_start, a_end in anchors)
    ]
    final = naive_merge(anchors + near, chunk_tokens, chunk, neighborhood_tokens)
    final = [run for run in final if run[1] - run[0] >= min_span_words]
    if keep_longest_only and final:
        final = [max(final, key=char_length)]
    return [(run, (chunk_tokens[run[0]][1], chunk_tokens[run[1] - 1][2])) for run in final]


def naive_expand(spans, text, regex):
    units = [m.span() for m in re.finditer(regex, text) if m.end() > m.start()]
    if not units:
        return spans

    def unit(position):
        return next((u for u in units if u[0] <= position < u[1]), None)

    grown = []
    for start, end in spans:
        first, last = unit(start), unit(max(start, end - 1))
        grown.append((first[0] if first else start, last[1] if last else end))
    grown.sort()
    merged = [grown[0]]
    for start, end in grown[1:]:
        if start <= merged[-1][1] or set(text[merged[-1][1]:start]) <= {"\r", "\n"}:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def naive_highlights(answer, chunk, *, keep_longest_only=True, stop_words=DEFAULT_STOP_WORDS,
                     tokenizer="unicode_word", expand_spans=True,
                     span_expansion_regex=DEFAULT_SPAN_EXPANSION_REGEX, **options):
    """The whole highlighter, stage by stage."""
    stop_words = {word.lower() for word in stop_words}
    answer_tokens = naive_tokens(answer, tokenizer)
    chunk_tokens = naive_tokens(chunk, tokenizer)
    if not answer_tokens or not chunk_tokens:
        return []
    selected = naive_select_runs(answer_tokens, chunk_tokens, chunk, stop_words,
                                 keep_longest_only=keep_longest_only, **options)
    spans = [span for _, span in selected]
    if spans and expand_spans:
        spans = naive_expand(spans, chunk, span_expansion_regex)
    return naive_limit_ratio(spans, len(chunk), options.get("max_highlight_ratio", 0.5),
                             lambda span: span[1] - span[0])


# ----------------------------------------------------------------------------- strategies

# arbitrary Unicode, enriched with what the kernels treat specially: sentence punctuation,
# newlines, CR, characters whose lower-casing is irregular, stop words, combining marks
SPECIAL_TEXT = st.sampled_from(
    [".", "!", "?", "…", "\n", "\n\n", "\r\n", " ", "\t", "İ", "Σ", "ΟΔΟΣ", "σοφός", "ß",
     "e\u0301", "🙂", "the", "and", "of", "refund", "Refund", "REFUND", "window", "items",
     "30", "days", "là", "và", "中文", "退款", "_", "ǅ", "\u00a0", "\u2028", "\ud800"]
)
TEXT = st.lists(st.one_of(st.text(max_size=6), SPECIAL_TEXT), max_size=40).map(" ".join)
# several lines, so that separate passages can survive the max_highlight_ratio valve
LONG_TEXT = st.lists(TEXT, min_size=1, max_size=8).map(". ".join)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "keep_longest_only": st.booleans(),
        "neighborhood_tokens": st.integers(0, 8),
        "min_span_words": st.integers(1, 4),
        "min_vocab_token_chars": st.integers(1, 6),
        "lcs_merge_gap_tokens": st.integers(0, 4),
        "lcs_min_run_tokens": st.integers(1, 3),
        "lcs_min_single_token_chars": st.integers(1, 8),
        "max_highlight_ratio": st.sampled_from([0.1, 0.5, 0.9, 3.0]),
        "tokenizer": st.sampled_from(["unicode_word", "char"]),
        "stop_words": st.sampled_from([DEFAULT_STOP_WORDS, frozenset(), frozenset({"Σ", "İ"})]),
        "expand_spans": st.booleans(),
        "span_expansion_regex": st.sampled_from(
            [DEFAULT_SPAN_EXPANSION_REGEX, r"[^.!?]+", r"\S+", r"(?s)(?:^|\n\n).*?(?=\n\n|$)"]
        ),
    },
)


def _call_citekit(answer, chunk, options):
    from citekit.highlight import HighlightOptions

    options = dict(options)
    keep = options.pop("keep_longest_only", True)
    return find_answer_highlights(answer, chunk, keep_longest_only=keep,
                                  options=HighlightOptions(**options))


# ----------------------------------------------------------------------------- kernel parity


@pytest.mark.parametrize("tokenizer", ["unicode_word", "char"])
@settings(max_examples=120)
@given(text=TEXT)
def test_scan_tokens_matches_re_and_lower(tokenizer, text):
    tokens = _TokenizedText(text, tokenizer == "char")
    expected = naive_tokens(text, tokenizer)
    assert tokens.starts.tolist() == [start for _, start, _ in expected]
    assert tokens.ends.tolist() == [end for _, _, end in expected]
    pool = tokens.pool
    lowered = [
        "".join(map(chr, pool[a:b].tolist())) for a, b in zip(tokens.pool_starts, tokens.pool_ends)
    ]
    assert lowered == [word for word, _, _ in expected]
    assert tokens.hashes.tolist() == [naive_fnv(map(ord, word)) for word, _, _ in expected]
    assert tokens.gap_breaks.tolist() == naive_gap_breaks(text, expected)
    assert tokens.punctuation.tolist() == naive_punctuation(text, expected)


def test_character_tables_match_python():
    char_class, lower = _character_tables()
    every_char = [chr(code_point) for code_point in range(0x110000)]
    word = np.array([c.isalnum() or c == "_" for c in every_char])
    space = np.array([c.isspace() for c in every_char])
    assert np.array_equal((char_class & kernels.WORD_BIT) > 0, word)
    assert np.array_equal((char_class & kernels.SPACE_BIT) > 0, space)
    regular = [cp for cp in range(0x110000) if cp not in (0x130, 0x3A3)]
    assert all(chr(lower[cp]) == every_char[cp].lower() for cp in regular)


def _intern_reference(words):
    ids, first = [], {}
    for word in words:
        ids.append(first.setdefault(word, len(first)))
    return ids, list(first)


@settings(max_examples=100)
@given(answer=TEXT, chunk=TEXT, stop_words=st.lists(st.text(max_size=4), max_size=8))
def test_intern_and_match_tokens_match_dicts(answer, chunk, stop_words):
    stop_words = frozenset(word.lower() for word in stop_words)
    answer_tokens = _TokenizedText(answer, False)
    chunk_tokens = _TokenizedText(chunk, False)
    ids, first_index, table = kernels.intern_spans(
        answer_tokens.pool, answer_tokens.pool_starts, answer_tokens.pool_ends,
        answer_tokens.hashes,
    )
    answer_words = [w for w, _, _ in naive_tokens(answer)]
    expected_ids, vocabulary = _intern_reference(answer_words)
    assert ids.tolist() == expected_ids
    assert [answer_words[i] for i in first_index] == vocabulary
    stops = _stop_word_table(stop_words)
    chunk_ids, is_stop, compressed, positions = kernels.match_tokens(
        chunk_tokens.pool, chunk_tokens.pool_starts, chunk_tokens.pool_ends, chunk_tokens.hashes,
        answer_tokens.pool, answer_tokens.pool_starts, answer_tokens.pool_ends,
        answer_tokens.hashes, first_index, table,
        stops.pool, stops.starts, stops.ends, stops.hashes, stops.first_index, stops.table,
    )
    chunk_words = [w for w, _, _ in naive_tokens(chunk)]
    absent = len(vocabulary)
    expected_chunk_ids = [vocabulary.index(w) if w in vocabulary else absent for w in chunk_words]
    assert chunk_ids.tolist() == expected_chunk_ids
    assert is_stop.tolist() == [w in stop_words for w in chunk_words]
    # compression: absent runs become one token, and the matching blocks map back exactly
    expected_positions = [
        k for k, token_id in enumerate(expected_chunk_ids)
        if token_id != absent or k == 0 or expected_chunk_ids[k - 1] != absent
    ]
    assert positions.tolist() == expected_positions
    assert compressed.tolist() == [expected_chunk_ids[k] for k in expected_positions]
    from citekit.kernels import matching_blocks

    blocks = [(i, positions[j], n) for i, j, n in matching_blocks(ids, compressed) if n]
    direct = difflib.SequenceMatcher(None, answer_words, chunk_words, autojunk=False)
    assert blocks == [tuple(b) for b in direct.get_matching_blocks() if b.size]


SELECT_OPTIONS = st.fixed_dictionaries({
    "lcs_merge_gap_tokens": st.integers(0, 4),
    "lcs_min_run_tokens": st.integers(1, 3),
    "lcs_min_single_token_chars": st.integers(1, 8),
    "neighborhood_tokens": st.integers(0, 8),
    "min_span_words": st.integers(1, 4),
    "min_vocab_token_chars": st.integers(1, 6),
    "max_highlight_ratio": st.sampled_from([0.1, 0.5, 0.9, 3.0]),
    "keep_longest_only": st.booleans(),
})


@pytest.mark.parametrize("tokenizer", ["unicode_word", "char"])
@settings(max_examples=100)
@given(chunk=LONG_TEXT, data=st.data(), options=SELECT_OPTIONS)
def test_select_runs_matches_reference(tokenizer, chunk, data, options):
    from citekit.kernels import matching_blocks

    answer = _fragments(chunk, data)
    char_mode = tokenizer == "char"
    answer_tokens = _TokenizedText(answer, char_mode)
    chunk_tokens = _TokenizedText(chunk, char_mode)
    ids, first_index, table = kernels.intern_spans(
        answer_tokens.pool, answer_tokens.pool_starts, answer_tokens.pool_ends,
        answer_tokens.hashes,
    )
    stops = _stop_word_table(DEFAULT_STOP_WORDS)
    chunk_ids, is_stop, compressed, positions = kernels.match_tokens(
        chunk_tokens.pool, chunk_tokens.pool_starts, chunk_tokens.pool_ends, chunk_tokens.hashes,
        answer_tokens.pool, answer_tokens.pool_starts, answer_tokens.pool_ends,
        answer_tokens.hashes, first_index, table,
        stops.pool, stops.starts, stops.ends, stops.hashes, stops.first_index, stops.table,
    )
    int_options = np.array([options[name] for name in kernels.SELECT_RUNS_OPTIONS], np.int64)
    token_runs, char_spans = kernels.select_runs(
        np.array(matching_blocks(ids, compressed), np.int64), positions, chunk_ids,
        first_index.shape[0], is_stop, chunk_tokens.pool_starts, chunk_tokens.pool_ends,
        chunk_tokens.gap_breaks, chunk_tokens.punctuation, chunk_tokens.starts, chunk_tokens.ends,
        len(chunk), int_options, float(options["max_highlight_ratio"]),
        options["keep_longest_only"],
    )
    expected = naive_select_runs(
        naive_tokens(answer, tokenizer), naive_tokens(chunk, tokenizer), chunk,
        DEFAULT_STOP_WORDS, **options,
    ) if naive_tokens(answer, tokenizer) and naive_tokens(chunk, tokenizer) else []
    assert [tuple(run) for run in token_runs.tolist()] == [run for run, _ in expected]
    assert [tuple(span) for span in char_spans.tolist()] == [span for _, span in expected]


@settings(max_examples=150)
@given(answer=TEXT, chunk=TEXT, options=OPTIONS)
def test_find_answer_highlights_matches_reference(answer, chunk, options):
    assert _call_citekit(answer, chunk, options) == naive_highlights(answer, chunk, **options)


def _fragments(chunk, data):
    # one or two runs of the chunk's own words: anchors, merging and expansion all fire
    words = chunk.split(" ")
    pieces = []
    for _ in range(data.draw(st.integers(1, 2))):
        start = data.draw(st.integers(0, max(0, len(words) - 1)))
        pieces.extend(words[start:start + data.draw(st.integers(1, 8))])
    return " ".join(pieces)


@settings(max_examples=150)
@given(chunk=LONG_TEXT, data=st.data())
def test_copied_fragments_match_reference(chunk, data):
    answer = _fragments(chunk, data)
    options = data.draw(OPTIONS)
    assert _call_citekit(answer, chunk, options) == naive_highlights(answer, chunk, **options)


@settings(max_examples=150)
@given(chunk=LONG_TEXT, data=st.data())
def test_separate_passages_match_reference(chunk, data):
    # every passage kept and no valve: several spans per chunk
    answer = _fragments(chunk, data)
    options = dict(data.draw(OPTIONS), keep_longest_only=False, max_highlight_ratio=3.0)
    assert _call_citekit(answer, chunk, options) == naive_highlights(answer, chunk, **options)


@settings(max_examples=100)
@given(text=TEXT, spans=st.lists(st.tuples(st.integers(0, 200), st.integers(1, 20)), max_size=5),
       regex=st.sampled_from([DEFAULT_SPAN_EXPANSION_REGEX, r"[^.!?]+", r"\S+\s*", r"\w+"]))
def test_expand_spans_matches_reference(text, spans, regex):
    spans = sorted({(min(s, len(text) - 1), min(s + n, len(text))) for s, n in spans if text})
    spans = [(s, e) for s, e in spans if s < e]
    if not spans:
        return
    assert _expand_spans(spans, text, regex) == naive_expand(spans, text, regex)
    # the default-regex shortcut agrees with scanning the same pattern from a compiled regex
    if regex == DEFAULT_SPAN_EXPANSION_REGEX:
        same_units = re.compile(r"[^\n\r]+")
        assert _expand_spans(spans, text, same_units) == naive_expand(spans, text, regex)


def test_stop_word_table_reuses_prepared_tables():
    assert _stop_word_table(DEFAULT_STOP_WORDS) is _stop_word_table(frozenset(DEFAULT_STOP_WORDS))


def test_code_points_keep_lone_surrogates():
    assert _code_points("a\ud800b").tolist() == [0x61, 0xD800, 0x62]
