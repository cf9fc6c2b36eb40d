"""The tokenizer protocol and :class:`TokenizedText`, shared by every tokenizer.

A tokenizer turns a string into integer token ids plus, for each token, the half-open
character span ``[start, end)`` it covers in the string AS PASSED (never a normalized
copy). citekit accepts any object with a ``tokenize(text)`` method returning
``(token_ids, spans)`` (the protocol of the specification); :func:`tokenize_checked`
calls such an object and validates what it returns.
"""

from __future__ import annotations

from typing import Any, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

from citekit._validation import check_str

__all__ = ["Tokenizer", "TokenizedText", "tokenize_checked"]


@runtime_checkable
class Tokenizer(Protocol):
    """Anything with ``tokenize(text) -> (token_ids, spans)``.

    ``token_ids`` is a sequence of ints and ``spans`` a sequence of ``(start, end)``
    character offsets into ``text``; spans are non-empty, in bounds, ordered and
    non-overlapping.
    """

    def tokenize(self, text: str) -> tuple[Sequence[int], Sequence[tuple[int, int]]]: ...


class TokenizedText:
    """Token ids and character spans of one text.

    Behaves like the protocol's ``(token_ids, spans)`` pair (it unpacks into two
    values) while keeping the data as numpy arrays for the kernels.

    Parameters
    ----------
    text : str
        The text as passed to the tokenizer.
    token_ids : array_like of int
        One id per token (stored as ``int64``).
    starts, ends : array_like of int
        Half-open character offsets of each token into ``text`` (stored as ``int64``).

    Examples
    --------
    >>> t = TokenizedText("a b", [7, 8], [0, 2], [1, 3])
    >>> ids, spans = t
    >>> ids.tolist(), spans
    ([7, 8], [(0, 1), (2, 3)])
    >>> [t.text[s:e] for s, e in t.spans]
    ['a', 'b']
    """

    __slots__ = ("text", "token_ids", "starts", "ends")

    def __init__(self, text: str, token_ids: Any, starts: Any, ends: Any) -> None:
        self.text = text
        self.token_ids = np.ascontiguousarray(token_ids, dtype=np.int64)
        self.starts = np.ascontiguousarray(starts, dtype=np.int64)
        self.ends = np.ascontiguousarray(ends, dtype=np.int64)
        n = self.token_ids.shape[0]
        if self.starts.shape != (n,) or self.ends.shape != (n,):
            raise ValueError("token_ids, starts and ends must be 1-D arrays of one length")

    @property
    def spans(self) -> list[tuple[int, int]]:
        """The ``(start, end)`` pairs as a list of tuples of Python ints."""
        return list(zip(self.starts.tolist(), self.ends.tolist()))

    @property
    def tokens(self) -> list[str]:
        """The text of each token, ``text[start:end]``."""
        return [self.text[s:e] for s, e in self.spans]

    def __len__(self) -> int:
        return int(self.token_ids.shape[0])

    def __iter__(self) -> Iterator[Any]:
        yield self.token_ids
        yield self.spans

    def __getitem__(self, index: int) -> Any:
        return (self.token_ids, self.spans)[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokenizedText):
            return NotImplemented
        return (
            self.text == other.text
            and np.array_equal(self.token_ids, other.token_ids)
            and np.array_equal(self.starts, other.starts)
            and np.array_equal(self.ends, other.ends)
        )

    def __repr__(self) -> str:
        preview = ", ".join(repr(t) for t in self.tokens[:8])
        more = ", ..." if len(self) > 8 else ""
        return f"TokenizedText({len(self)} tokens: [{preview}{more}])"

    def validate(self) -> "TokenizedText":
        """Check spans are in bounds, non-empty, ordered and non-overlapping.

        Returns
        -------
        TokenizedText
            ``self``, so that calls chain.

        Raises
        ------
        ValueError
            Naming the first offending token.

        Examples
        --------
        >>> TokenizedText("ab", [1, 2], [0, 1], [1, 2]).validate().tokens
        ['a', 'b']
        >>> TokenizedText("ab", [1, 2], [0, 0], [2, 1]).validate()
        Traceback (most recent call last):
        ...
        ValueError: tokenizer returned overlapping or unordered spans at token 1: (0, 2) then (0, 1)
        """
        n_chars = len(self.text)
        starts, ends = self.starts, self.ends
        if len(self) == 0:
            return self
        bad = np.flatnonzero((starts < 0) | (ends > n_chars) | (starts >= ends))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"tokenizer returned an invalid span for token {i}: "
                f"({int(starts[i])}, {int(ends[i])}) in a text of {n_chars} characters"
            )
        overlap = np.flatnonzero(starts[1:] < ends[:-1])
        if overlap.size:
            i = int(overlap[0]) + 1
            raise ValueError(
                f"tokenizer returned overlapping or unordered spans at token {i}: "
                f"({int(starts[i - 1])}, {int(ends[i - 1])}) then "
                f"({int(starts[i])}, {int(ends[i])})"
            )
        return self


# ``tokenize`` functions whose spans are valid by construction (tested with hypothesis on
# arbitrary Unicode): their output skips the per-call validation. A subclass that
# overrides ``tokenize`` is validated again.
_VALID_BY_CONSTRUCTION: set[Any] = set()


def tokenize_checked(tokenizer: Any, text: str, *, name: str = "tokenizer") -> TokenizedText:
    """Tokenize ``text`` with any protocol-following tokenizer and validate the result.

    Parameters
    ----------
    tokenizer : Tokenizer
        Any object with ``tokenize(text)`` returning ``(token_ids, spans)`` or a
        :class:`TokenizedText`.
    text : str
        The text to tokenize.
    name : str, optional
        How to call the tokenizer in error messages.

    Returns
    -------
    TokenizedText
        Validated ids and spans.

    Raises
    ------
    TypeError
        If ``tokenizer`` has no ``tokenize`` method or returns something else.
    ValueError
        If the spans are out of bounds, empty, unordered or overlapping.

    Examples
    --------
    >>> class Words:
    ...     def tokenize(self, text):
    ...         return [1, 2], [(0, 5), (6, 11)]
    >>> tokenize_checked(Words(), "hello world").tokens
    ['hello', 'world']
    """
    check_str(text, "text")
    method = getattr(tokenizer, "tokenize", None)
    if not callable(method):
        raise TypeError(
            f"{name} must have a tokenize(text) method returning (token_ids, spans); "
            f"got {type(tokenizer).__name__}"
        )
    result = method(text)
    if isinstance(result, TokenizedText):
        if result.text is not text and result.text != text:
            raise ValueError(f"{name}.tokenize returned a TokenizedText of a different text")
        if getattr(method, "__func__", None) in _VALID_BY_CONSTRUCTION:
            return result
        return result.validate()
    try:
        token_ids, spans = result
    except (TypeError, ValueError):
        raise TypeError(
            f"{name}.tokenize must return (token_ids, spans); got {type(result).__name__}"
        ) from None
    ids = np.asarray(token_ids)
    if ids.size and not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name}.tokenize returned non-integer token ids ({ids.dtype})")
    if ids.ndim != 1 and ids.size:
        raise ValueError(f"{name}.tokenize returned token ids of shape {ids.shape}")
    ids = ids.reshape(-1)
    try:
        span_array = np.asarray(spans)
    except ValueError:  # ragged
        raise ValueError(
            f"{name}.tokenize returned spans that are not (start, end) pairs"
        ) from None
    if span_array.size == 0:
        span_array = np.zeros((0, 2), dtype=np.int64)
    if span_array.ndim != 2 or span_array.shape[1] != 2:
        raise ValueError(f"{name}.tokenize returned spans that are not (start, end) pairs")
    if not np.issubdtype(span_array.dtype, np.integer):
        raise TypeError(f"{name}.tokenize returned non-integer spans ({span_array.dtype})")
    if span_array.shape[0] != ids.shape[0]:
        raise ValueError(
            f"{name}.tokenize returned {ids.shape[0]} ids but {span_array.shape[0]} spans"
        )
    return TokenizedText(text, ids, span_array[:, 0], span_array[:, 1]).validate()
