"""The tokenizer protocol and :class:`TokenizedText`, shared by every tokenizer.

A tokenizer turns a string into integer token ids plus, for each token, the half-open
character span ``[start, end)`` it covers in the string AS PASSED (never a normalized
copy). citekit accepts any object with a ``tokenize(text)`` method returning
``(token_ids, spans)`` (the protocol of the specification), which may also offer
``tokenize_many(texts)``; :func:`tokenize_checked` and :func:`tokenize_many_checked` call
such an object and validate what it returns.
"""

from __future__ import annotations

from typing import Any, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

from citekit._validation import check_spans, check_str, check_text_spans

__all__ = ["Tokenizer", "TokenizedText", "tokenize_checked", "tokenize_many_checked"]


@runtime_checkable
class Tokenizer(Protocol):
    """Anything with ``tokenize(text) -> (token_ids, spans)``.

    ``token_ids`` is a sequence of ints and ``spans`` a sequence of ``(start, end)``
    character offsets into ``text``; spans are non-empty, in bounds, ordered and
    non-overlapping.

    A tokenizer MAY also offer ``tokenize_many(texts) -> (token_ids, starts, ends,
    offsets)``: the tokens ``tokenize`` gives each of ``texts`` (a sequence of ``str``),
    concatenated text after text, as four 1-D integer arrays: the ids, the starts and ends
    of the spans (relative to each token's own text) and ``offsets``, ``len(texts) + 1``
    entries from 0 to the number of tokens (text ``t`` has the tokens
    ``offsets[t]:offsets[t + 1]``). It exists for speed (one call instead of one per
    text): :meth:`~citekit.corpus.Corpus.build` reads its sources with it when the
    segmenter offers ``segment_many`` too (see
    :meth:`~citekit.segment.SentenceSegmenter.segment_many`), possibly from several
    threads at once, and checks what it returns as it checks ``tokenize``'s
    (:func:`tokenize_many_checked`). A ``tokenize_many`` inherited from a class above
    the one that defines ``tokenize`` is not used (it would not know that
    ``tokenize``). :meth:`~citekit.tokenizers.SimpleTokenizer.tokenize_many` is
    citekit's.
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
    def token_spans(self) -> list[tuple[int, int]]:
        """The same as :attr:`spans` (cite-right's name).

        Examples
        --------
        >>> TokenizedText("ab cd", [1, 2], [0, 3], [2, 5]).token_spans
        [(0, 2), (3, 5)]
        """
        return self.spans

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

    def validate(self, name: str = "tokenizer") -> "TokenizedText":
        """Check spans are in bounds, non-empty, ordered and non-overlapping.

        Parameters
        ----------
        name : str, default "tokenizer"
            How to call the tokenizer in error messages.

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
        >>> TokenizedText("ab", [1, 2], [0, 0], [2, 1]).validate()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: tokenizer returned unordered or overlapping spans for tokens 0 and 1: ...
        """
        check_spans(
            self.starts, self.ends, name, n_chars=len(self.text), empty="reject",
            item="token", returned=True,
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
        return result.validate(name)
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
    return TokenizedText(text, ids, span_array[:, 0], span_array[:, 1]).validate(name)


def tokenize_many_checked(
    tokenizer: Any, texts: Sequence[str], *, name: str = "tokenizer", out: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Call ``tokenizer.tokenize_many(texts)`` (see :class:`Tokenizer`) and validate the
    result.

    Parameters
    ----------
    tokenizer : Tokenizer
        A tokenizer with a ``tokenize_many`` method.
    texts : sequence of str
        The texts.
    name : str, optional
        How to call the tokenizer in error messages.
    out : numpy.ndarray, optional
        Memory for the result, given to citekit's own ``tokenize_many``
        (:meth:`~citekit.tokenizers.SimpleTokenizer.tokenize_many`); other tokenizers
        are called without it.

    Returns
    -------
    token_ids, starts, ends, offsets : numpy.ndarray
        ``int64``; text ``t`` has the tokens ``offsets[t]:offsets[t + 1]``, spans
        relative to it, non-empty, in bounds, ordered and non-overlapping.

    Raises
    ------
    TypeError
        If ``tokenizer`` has no ``tokenize_many`` method or it returns something else
        than four integer arrays.
    ValueError
        If the arrays do not fit together or a text's spans are out of bounds, empty,
        unordered or overlapping.

    Examples
    --------
    >>> import numpy as np
    >>> class Words:
    ...     def tokenize(self, text):
    ...         return [1], [(0, len(text))]
    ...     def tokenize_many(self, texts):
    ...         n = len(texts)
    ...         return [1] * n, [0] * n, [len(text) for text in texts], list(range(n + 1))
    >>> [a.tolist() for a in tokenize_many_checked(Words(), ["ab", "cde"])]
    [[1, 1], [0, 0], [2, 3], [0, 1, 2]]
    >>> tokenize_many_checked(Words(), ["ab", ""])
    Traceback (most recent call last):
    ...
    ValueError: tokenizer.tokenize_many(texts[1]) returned an empty span (0, 0) for token 0
    """
    method = getattr(tokenizer, "tokenize_many", None)
    if not callable(method):
        raise TypeError(
            f"{name} must have a tokenize_many(texts) method; got {type(tokenizer).__name__}"
        )
    if getattr(method, "__func__", None) in _VALID_BY_CONSTRUCTION:
        return method(texts, out=out)  # type: ignore[no-any-return]
    result = method(texts)
    where = f"{name}.tokenize_many"
    try:
        arrays = [np.asarray(part) for part in result]
    except (TypeError, ValueError):
        arrays = []
    if len(arrays) != 4:
        raise TypeError(
            f"{where} must return (token_ids, starts, ends, offsets); got "
            f"{type(result).__name__}"
        )
    checked = []
    for part, array in zip(("token_ids", "starts", "ends", "offsets"), arrays):
        if array.size and not np.issubdtype(array.dtype, np.integer):
            raise TypeError(f"{where} returned non-integer {part} ({array.dtype})")
        if array.ndim != 1:
            raise ValueError(f"{where} returned {part} of shape {array.shape}")
        checked.append(np.ascontiguousarray(array, dtype=np.int64))
    ids, starts, ends, offsets = checked
    n_tokens = ids.shape[0]
    if starts.shape[0] != n_tokens or ends.shape[0] != n_tokens:
        raise ValueError(
            f"{where} returned {n_tokens} ids but {starts.shape[0]} starts and "
            f"{ends.shape[0]} ends"
        )
    check_text_spans(starts, ends, offsets, texts, where, empty="reject", item="token")
    return ids, starts, ends, offsets
