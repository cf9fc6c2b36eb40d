"""The span rules shared by the model tokenizer wrappers (citekit.tokenizers._subword)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.tokenizers._subword import (
    MERGED_ID_FLAG,
    WHITESPACE,
    clean_spans,
    finish_tokens,
    merged_token_id,
    replace_surrogates,
    trim_whitespace,
    whitespace_canonical,
)


def naive_clean(ids, starts, ends):
    """Drop empty spans, then merge tokens into groups: a cut before token i is allowed
    only when every earlier token ends at or before every later token starts."""
    kept = [(i, s, e) for i, s, e in zip(ids, starts, ends) if s < e]
    groups: list[list] = []
    for k, (token_id, start, end) in enumerate(kept):
        earlier_end = max((e for _, _, e in kept[:k]), default=None)
        later_start = min(s for _, s, _ in kept[k:])
        if groups and earlier_end > later_start:
            groups[-1].append((token_id, start, end))
        else:
            groups.append([(token_id, start, end)])
    out = []
    for group in groups:
        group_ids = [t for t, _, _ in group]
        token_id = group_ids[0] if len(group) == 1 else merged_token_id(np.array(group_ids))
        out.append((token_id, min(s for _, s, _ in group), max(e for _, _, e in group)))
    return out


spans = st.lists(
    st.tuples(st.integers(0, 5000), st.integers(0, 30), st.integers(0, 4)), max_size=30
)


@settings(max_examples=300)
@given(spans, st.booleans())
def test_property_clean_spans_matches_naive(raw, ordered):
    if ordered:
        raw = sorted(raw, key=lambda t: t[1])
    ids = np.array([t[0] for t in raw], dtype=np.int64)
    starts = np.array([t[1] for t in raw], dtype=np.int64)
    ends = starts + np.array([t[2] for t in raw], dtype=np.int64)
    got_ids, got_starts, got_ends = clean_spans(ids, starts, ends)
    expected = naive_clean(ids.tolist(), starts.tolist(), ends.tolist())
    assert list(zip(got_ids.tolist(), got_starts.tolist(), got_ends.tolist())) == expected
    # the result is valid: non-empty, ordered, non-overlapping
    assert (got_starts < got_ends).all()
    assert (got_starts[1:] >= got_ends[:-1]).all()


def test_merged_ids_are_stable_ordered_and_flagged():
    a = merged_token_id(np.array([1, 2, 3]))
    assert a == merged_token_id(np.array([1, 2, 3]))
    assert a != merged_token_id(np.array([3, 2, 1]))
    assert a != merged_token_id(np.array([1, 2]))
    assert a >= MERGED_ID_FLAG and a < 2**63
    many = {merged_token_id(np.array([i, j])) for i in range(100) for j in range(100)}
    assert len(many) == 10_000


def test_merged_id_value_is_pinned():
    # Changing the hash silently would make saved corpora disagree with new answers.
    assert merged_token_id(np.array([15722, 229])) == merged_token_id(
        np.array([15722, 229], dtype=np.int32)
    )
    assert merged_token_id(np.array([15722, 229])) == 6119048771703469049  # pinned


def test_whitespace_helpers():
    assert WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    text = "a\tb\nc\u3000d\u2029e\u00a0f"
    canonical = whitespace_canonical(text)
    assert canonical == " a b c d e f" and len(canonical) == len(text) + 1
    assert whitespace_canonical("plain") == " plain"
    assert replace_surrogates("a\udc00\ud800b") == "a\ufffd\ufffdb"
    assert replace_surrogates("ok") == "ok"


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from(list("ab \t\n\u3000中🎉")), max_size=30), st.data())
def test_property_trim_whitespace(text, data):
    canonical = whitespace_canonical(text)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(canonical)), max_size=8))))
    bounds = [0, *cuts, len(canonical)]
    pairs = [(a, b) for a, b in zip(bounds, bounds[1:]) if a < b]
    ids = np.arange(len(pairs), dtype=np.int64)
    starts = np.array([a for a, _ in pairs], dtype=np.int64)
    ends = np.array([b for _, b in pairs], dtype=np.int64)
    got_ids, got_starts, got_ends = trim_whitespace(canonical, ids, starts, ends)
    expected = []
    for token_id, (a, b) in zip(ids.tolist(), pairs):
        piece = canonical[a:b]
        if piece.strip(" "):
            lead = len(piece) - len(piece.lstrip(" "))
            trail = len(piece) - len(piece.rstrip(" "))
            expected.append((token_id, a + lead, b - trail))
    assert list(zip(got_ids.tolist(), got_starts.tolist(), got_ends.tolist())) == expected
    final_ids, final_starts, final_ends = finish_tokens(
        canonical, ids, starts, ends, canonical=True
    )
    assert final_starts.tolist() == [a - 1 for _, a, _ in expected]
    assert final_ends.tolist() == [b - 1 for _, _, b in expected]
