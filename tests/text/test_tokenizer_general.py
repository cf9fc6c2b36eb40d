"""Tests of citekit.tokenizers._general: tokens against the reference (per-token lists),
offsets over arbitrary Unicode, and memory a small constant per character."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from citekit.tokenizers import _general as general_module
from citekit.tokenizers.simple import SimpleTokenizer, TokenizerConfig

from tests.naive import naive_tokenize_general

CONFIGS = st.builds(
    TokenizerConfig, st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans()
)
# characters NFKC expands into several tokens, or that merge tokens over their neighbours
EXPANDING = st.sampled_from(["\ufdfa", "½", "㏂", "㍻", "ำ", "\u0301", "①", "ﬁ", " ", "."])
TEXT = st.lists(st.text(max_size=6) | EXPANDING, max_size=12).map("".join)


def _same(got, want) -> None:
    assert got.token_ids.tolist() == want.token_ids.tolist()
    assert got.starts.tolist() == want.starts.tolist()
    assert got.ends.tolist() == want.ends.tolist()


@settings(max_examples=300, deadline=None)
@given(TEXT, CONFIGS, st.sampled_from([1, 2, 3, 1 << 15]))
@example("\ufdfa\ufdfa end.", TokenizerConfig(), 1)
@example("\ufdfa" * 9 + " ½ ㏂ a", TokenizerConfig(), 2)
def test_general_path_matches_the_reference(text, config, block):
    tokenizer = SimpleTokenizer(config)
    want = naive_tokenize_general(text, tokenizer._normalizer_config, tokenizer._ids)
    saved = general_module._KEY_BLOCK
    general_module._KEY_BLOCK = block  # (blocks of one, two, three tokens cut groups)
    try:
        got = general_module.tokenize_general(text, tokenizer._normalizer_config, tokenizer._ids)
    finally:
        general_module._KEY_BLOCK = saved
    _same(got, want)


@settings(max_examples=200, deadline=None)
@given(st.text() | TEXT)
def test_general_path_offsets_are_in_bounds_ordered_and_disjoint(text):
    tokenizer = SimpleTokenizer()
    got = general_module.tokenize_general(text, tokenizer._normalizer_config, tokenizer._ids)
    starts, ends = got.starts, got.ends
    assert ((0 <= starts) & (starts < ends) & (ends <= len(text))).all()
    assert (starts[1:] >= ends[:-1]).all()
    assert got.token_ids.dtype == np.int64 and (got.token_ids >= 0).all()


def test_expanded_text_is_one_merged_token_with_the_joined_key():
    tokenizer = SimpleTokenizer()
    text = "\ufdfa" * 5 + " end."
    got = general_module.tokenize_general(text, tokenizer._normalizer_config, tokenizer._ids)
    assert got.spans == [(0, 5), (6, 9)]
    want = naive_tokenize_general(text, tokenizer._normalizer_config, tokenizer._ids)
    _same(got, want)


@pytest.mark.parametrize("n", [200_000])
def test_nfkc_expansion_memory_is_a_small_constant_per_character(n):
    # 4 tokens and 18 normalized characters per '\ufdfa': the Python allocations at their
    # peak stay under 500 bytes per character (the reference's list of tuples and strings
    # took about 1 KB per character on top of the same normalization)
    tokenizer = SimpleTokenizer()
    text = "\ufdfa" * n + " end."
    general_module.tokenize_general("\ufdfa end.", tokenizer._normalizer_config, tokenizer._ids)
    tracemalloc.start()
    try:
        got = general_module.tokenize_general(
            text, tokenizer._normalizer_config, tokenizer._ids
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.spans == [(0, n), (n + 1, n + 4)]
    assert peak / n < 500, peak / n
