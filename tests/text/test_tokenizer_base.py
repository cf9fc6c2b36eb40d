"""Tests of citekit.tokenizers.base: TokenizedText and validation of any tokenizer."""

from __future__ import annotations

import numpy as np
import pytest

from citekit.tokenizers.base import (
    TokenizedText,
    Tokenizer,
    tokenize_checked,
    tokenize_many_checked,
)


class ListTokenizer:
    """A protocol tokenizer returning whatever it was given."""

    def __init__(self, token_ids, spans):
        self.token_ids = token_ids
        self.spans = spans

    def tokenize(self, text):
        return self.token_ids, self.spans


class Whitespace:
    def tokenize(self, text):
        spans, position = [], 0
        for word in text.split():
            start = text.index(word, position)
            spans.append((start, start + len(word)))
            position = start + len(word)
        return [len(text[a:b]) for a, b in spans], spans


def test_tokenized_text_behaves_like_pair():
    tokenized = TokenizedText("ab cd", [1, 2], [0, 3], [2, 5])
    token_ids, spans = tokenized
    assert token_ids.dtype == np.int64 and token_ids.tolist() == [1, 2]
    assert spans == [(0, 2), (3, 5)]
    assert tokenized[0] is tokenized.token_ids and tokenized[1] == spans
    assert tokenized.tokens == ["ab", "cd"]
    assert len(tokenized) == 2
    assert "ab" in repr(tokenized)


def test_tokenized_text_equality():
    first = TokenizedText("ab", [1], [0], [2])
    assert first == TokenizedText("ab", np.array([1], dtype=np.int32), [0], [2])
    assert first != TokenizedText("ab", [2], [0], [2])
    assert first.__eq__("ab") is NotImplemented


def test_tokenized_text_checks_lengths():
    with pytest.raises(ValueError, match="one length"):
        TokenizedText("ab", [1, 2], [0], [1])


def test_repr_truncates():
    tokenized = TokenizedText("a " * 10, list(range(10)), range(0, 20, 2), range(1, 21, 2))
    assert repr(tokenized).endswith(", ...])")


def test_protocol_is_structural():
    assert isinstance(Whitespace(), Tokenizer)
    assert not isinstance(object(), Tokenizer)


def test_tokenize_checked_accepts_plain_sequences():
    result = tokenize_checked(Whitespace(), "hello big world")
    assert result.tokens == ["hello", "big", "world"]
    assert result.token_ids.tolist() == [5, 3, 5]


def test_tokenize_checked_accepts_numpy_and_empty():
    result = tokenize_checked(ListTokenizer(np.array([4]), np.array([[0, 1]])), "a")
    assert result.spans == [(0, 1)]
    empty = tokenize_checked(ListTokenizer([], []), "")
    assert len(empty) == 0


def test_tokenize_checked_passes_tokenized_text_through_validation():
    tokenized = TokenizedText("ab", [1], [0], [3])

    class Returns:
        def tokenize(self, text):
            return tokenized

    with pytest.raises(ValueError, match=r"span outside \[0, 2\]: \(0, 3\) for token 0"):
        tokenize_checked(Returns(), "ab")


@pytest.mark.parametrize(
    "token_ids, spans, message",
    [
        ([1], [(0, 9)], r"tokenizer returned a span outside \[0, 3\]: \(0, 9\) for token 0"),
        ([1], [(-1, 1)], "span outside"),
        ([1], [(1, 1)], "empty span"),
        ([1], [(2, 1)], "reversed span"),
        ([1, 2], [(0, 2), (1, 3)], "unordered or overlapping spans for tokens 0 and 1"),
        ([1, 2], [(2, 3), (0, 1)], "unordered or overlapping"),
        ([1, 2], [(0, 1)], "2 ids but 1 spans"),
    ],
)
def test_tokenize_checked_rejects_bad_spans(token_ids, spans, message):
    with pytest.raises(ValueError, match=message):
        tokenize_checked(ListTokenizer(token_ids, spans), "abc")


def test_tokenize_checked_rejects_non_integer_ids_and_spans():
    with pytest.raises(TypeError, match="non-integer token ids"):
        tokenize_checked(ListTokenizer([1.5], [(0, 1)]), "abc")
    with pytest.raises(TypeError, match="non-integer spans"):
        tokenize_checked(ListTokenizer([1], [(0.5, 1)]), "abc")


@pytest.mark.parametrize(
    "token_ids, spans",
    [
        ([1], [(0, 1, 2)]),
        ([1, 2], [0, 1]),
        ([1, 2], [(0, 1), (2,)]),
        ([[1], [2]], [(0, 1), (1, 2)]),
    ],
)
def test_tokenize_checked_rejects_malformed_shapes(token_ids, spans):
    with pytest.raises(ValueError, match="tokenizer.tokenize returned"):
        tokenize_checked(ListTokenizer(token_ids, spans), "abc")


def test_tokenize_checked_rejects_tokenized_text_of_other_text():
    class Other:
        def tokenize(self, text):
            return TokenizedText("xyz", [1], [0], [1])

    with pytest.raises(ValueError, match="different text"):
        tokenize_checked(Other(), "abc")


def test_tokenize_checked_rejects_non_tokenizers_naming_them():
    with pytest.raises(TypeError, match="my_tokenizer must have a tokenize"):
        tokenize_checked(object(), "abc", name="my_tokenizer")


def test_tokenize_checked_rejects_wrong_return_shape():
    class ReturnsOne:
        def tokenize(self, text):
            return 42

    with pytest.raises(TypeError, match=r"tokenizer.tokenize must return \(token_ids, spans\)"):
        tokenize_checked(ReturnsOne(), "abc")


def test_tokenize_checked_text_must_be_str():
    with pytest.raises(TypeError, match="text"):
        tokenize_checked(Whitespace(), b"abc")


def test_overriding_a_trusted_tokenize_is_validated_again():
    from citekit.tokenizers import SimpleTokenizer

    class Broken(SimpleTokenizer):
        def tokenize(self, text):
            good = super().tokenize(text)
            return TokenizedText(text, good.token_ids, good.starts, good.ends + 100)

    assert len(tokenize_checked(SimpleTokenizer(), "two words")) == 2
    with pytest.raises(ValueError, match="span outside"):
        tokenize_checked(Broken(), "two words")


def test_validate_names_the_tokenizer():
    with pytest.raises(ValueError, match="answer_tokenizer returned an empty span"):
        TokenizedText("ab", [1], [1], [1]).validate("answer_tokenizer")
    with pytest.raises(ValueError, match="my_tokenizer returned a reversed span"):
        tokenize_checked(ListTokenizer([1], [(2, 1)]), "abc", name="my_tokenizer")


class ManyTokenizer(Whitespace):
    """A protocol tokenizer whose ``tokenize_many`` returns what it was given."""

    def __init__(self, result=None):
        self.result = result

    def tokenize_many(self, texts):
        if self.result is not None:
            return self.result
        parts = [self.tokenize(text) for text in texts]
        offsets = np.cumsum([0] + [len(ids) for ids, _ in parts])
        ids = [i for part_ids, _ in parts for i in part_ids]
        spans = [span for _, part_spans in parts for span in part_spans]
        return ids, [s for s, _ in spans], [e for _, e in spans], offsets


def test_tokenize_many_checked_gives_int64_arrays_of_a_protocol_tokenizer():
    texts = ["a bb", "", "ccc"]
    got = tokenize_many_checked(ManyTokenizer(), texts)
    assert [a.tolist() for a in got] == [
        [1, 2, 3], [0, 2, 0], [1, 4, 3], [0, 2, 2, 3]
    ]
    assert all(a.dtype == np.int64 and a.flags.c_contiguous for a in got)


@pytest.mark.parametrize(
    "result, error, message",
    [
        (42, TypeError, r"must return \(token_ids, starts, ends, offsets\)"),
        (([1], [0], [1]), TypeError, "must return"),
        (([1.5], [0], [1], [0, 1, 1]), TypeError, "non-integer token_ids"),
        (([1], [0], [1, 2], [0, 1, 1]), ValueError, "1 ids but 1 starts and 2 ends"),
        (([[1]], [0], [1], [0, 1, 1]), ValueError, "token_ids of shape"),
        (([1], [0], [1], [0, 1]), ValueError, "offsets that are not 3 non-decreasing"),
        (([1], [0], [1], [0, 2, 1]), ValueError, "offsets that are not"),
        (([1], [0], [9], [0, 1, 1]), ValueError,
         r"tokenizer.tokenize_many\(texts\[0\]\) returned a span outside \[0, 2\]"),
        (([1, 2], [0, 1], [2, 2], [0, 2, 2]), ValueError,
         r"unordered or overlapping spans for tokens 0 and 1: \(0, 2\) then \(1, 2\)"),
        (([1], [0], [0], [0, 0, 1]), ValueError,
         r"tokenize_many\(texts\[1\]\) returned an empty span \(0, 0\) for token 0"),
    ],
)
def test_tokenize_many_checked_rejects_bad_results(result, error, message):
    with pytest.raises(error, match=message):
        tokenize_many_checked(ManyTokenizer(result), ["ab", "cd"])


def test_tokenize_many_checked_needs_the_method_and_passes_out_to_citekits_own():
    from citekit.tokenizers import SimpleTokenizer

    with pytest.raises(TypeError, match="my_tokenizer must have a tokenize_many"):
        tokenize_many_checked(Whitespace(), ["a"], name="my_tokenizer")
    out = np.zeros(30, dtype=np.int64)
    ids, starts, ends, offsets = tokenize_many_checked(SimpleTokenizer(), ["a b", "c"], out=out)
    assert starts.tolist() == [0, 2, 0] and offsets.tolist() == [0, 2, 3]
    assert all(np.shares_memory(array, out) for array in (ids, starts, ends))
