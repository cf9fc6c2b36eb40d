"""citekit._content: folding for coverage tests and coverage weights."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit._content import (
    FUNCTION_WORD_WEIGHT,
    VALUE_WEIGHT,
    content_mask,
    coverage_weights,
    fold_surface,
)


@pytest.mark.parametrize(
    "a, b",
    [
        ("countries", "country"),
        ("varies", "vary"),
        ("studied", "study"),
        ("making", "make"),
        ("stated", "state"),
        ("stopped", "stop"),
        ("planned", "plans"),
        ("used", "use"),
        ("pressed", "press"),
        ("classes", "class"),
        ("falls", "fall"),
        ("Analysts", "analyst"),
        ("Energy's", "energy"),
        ("Twelve", "12"),
        ("forty", "40"),
        ("7th", "7"),
        ("need", "needed"),
        ("needs", "need"),
        ("speeding", "speed"),
        ("exceeded", "exceeds"),
        ("using", "use"),
        ("using", "used"),
        ("aging", "age"),
    ],
)
def test_inflections_fold_together(a, b):
    assert fold_surface(a) == fold_surface(b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("bus", "but"),
        ("press", "pres"),
        ("fall", "fail"),
        ("one", "once"),
        ("12", "13"),
        ("seed", "see"),
        ("feed", "fee"),
        ("thing", "the"),
        ("bring", "bre"),
    ],
)
def test_different_words_stay_apart(a, b):
    assert fold_surface(a) != fold_surface(b)


def test_short_words_keep_their_letters():
    assert [fold_surface(w) for w in ["is", "as", "was", "red", "bed", "sing"]] == [
        "is",
        "as",
        "was",
        "red",
        "bed",
        "sing",
    ]


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'-0123456789"))
def test_fold_ignores_case(text):
    assert fold_surface(text) == fold_surface(text.swapcase())


@given(st.text(max_size=30))
def test_fold_accepts_any_text(text):
    assert isinstance(fold_surface(text), str)


def test_coverage_weights_by_kind():
    words = ["Revenue", "grew", "15", "fifteen", "in", "the", ",", "%", "2024"]
    text = " ".join(words)
    starts, ends, position = [], [], 0
    for word in words:
        starts.append(position)
        ends.append(position + len(word))
        position += len(word) + 1
    content = content_mask(text, np.array(starts), np.array(ends))
    weights = coverage_weights([fold_surface(w) for w in words], content)
    assert weights.tolist() == [
        1.0,
        1.0,
        VALUE_WEIGHT,
        VALUE_WEIGHT,
        FUNCTION_WORD_WEIGHT,
        FUNCTION_WORD_WEIGHT,
        0.0,
        0.0,
        VALUE_WEIGHT,
    ]


def test_coverage_weights_edge_cases():
    assert coverage_weights([], np.zeros(0, dtype=bool)).shape == (0,)
    assert coverage_weights(["émigré", "🎉"], np.array([True, True])).tolist() == [1.0, 1.0]
    # a sentence judged on all its tokens (no content word) weighs its stop words fully
    assert coverage_weights(["the", "of"], np.array([True, True])).tolist() == [1.0, 1.0]


def test_find_conflicts_with_known_value_mask_is_the_same():
    from citekit._content import find_conflicts, value_mask
    from citekit.tokenizers import SimpleTokenizer

    tokenizer = SimpleTokenizer()
    answer = "Sales grew 9% to $2.1 million in March 2020, said Dr. Lee."
    source = "Sales grew 15% to $2.4 million in May 2020, said Dr. Lee."
    a, s = tokenizer.tokenize(answer), tokenizer.tokenize(source)
    blocks = [(0, 0, 2), (3, 3, 2), (7, 7, 1), (9, 9, 4)]
    plain = find_conflicts(
        answer, a.token_ids, a.starts, a.ends, source, s.token_ids, s.starts, s.ends, blocks
    )
    assert {c.kind for c in plain} >= {"percent", "currency"}
    mask = value_mask(answer, a.starts, a.ends)
    assert mask.sum() >= 4
    given_mask = find_conflicts(
        answer, a.token_ids, a.starts, a.ends, source, s.token_ids, s.starts, s.ends, blocks,
        answer_values=mask.tolist(),
    )
    assert given_mask == plain
    # no value in the answer: nothing to contradict
    assert find_conflicts(
        answer, a.token_ids, a.starts, a.ends, source, s.token_ids, s.starts, s.ends, blocks,
        answer_values=[False] * len(a),
    ) == []


@given(st.text(max_size=12))
def test_digit_and_alnum_shortcuts_equal_their_definitions(text):
    from citekit._content import _has_alnum, _has_digit

    assert _has_digit(text) == any(char.isdigit() for char in text)
    assert _has_alnum(text) == any(char.isalnum() for char in text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12), st.booleans())
def test_token_facts_agree_with_the_three_functions(surface, is_content):
    from citekit._content import coverage_weights, fold_surface, token_facts, value_mask

    folded, weight, is_value = token_facts(surface, is_content)
    assert folded == fold_surface(surface)
    assert weight == coverage_weights([folded], np.array([is_content]))[0]
    assert is_value == value_mask(surface, [0], [len(surface)])[0]


def test_token_facts_bad_input():
    from citekit._content import token_facts

    with pytest.raises(TypeError):
        token_facts(["not", "a", "str"], True)  # unhashable: the cache refuses it
