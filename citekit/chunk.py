"""Token-budget chunking under the offset contract.

An embedding or reranking model reads at most ``max_sequence_length`` tokens, special
tokens included. :class:`ChunkTokenizer` puts any citekit tokenizer (``SimpleTokenizer``,
``HuggingFaceTokenizer``, ``TiktokenTokenizer`` or any object with ``tokenize``) behind
one interface for budgets, and :func:`chunk_text` cuts a document into pieces that fit.

The offset contract
-------------------
``index_by_token_count(text, max_tokens)`` returns ``(i, count_tokens(text[:i]))`` where
``i`` is the largest index such that ``text[:i]`` costs at most ``max_tokens`` tokens,
and ``i`` indexes ``text`` AS PASSED, never a normalized copy (a model's own
"index by token count" call answers in normalized characters or does not search at all).

The prefix cost is not monotone in the prefix length: inside a word, a longer prefix can
cost fewer tokens (BPE merges ``a`` + ``b`` into ``ab``; WordPiece turns a word longer than
its limit into one ``[UNK]``). citekit therefore relies only on *word-start
monotonicity*: a prefix never costs less than its longest prefix ending at a word start
(a position right after whitespace and before non-whitespace). Under that property the
search below is exact:

1. the feasible word starts form a prefix of all word starts, so a galloping then binary
   search finds the last feasible word start ``a`` (and the next word start ``b``);
2. every ``i >= b`` is infeasible, so the answer lies in ``[a, b)``; each index of that
   span is tried from ``b - 1`` downwards (the span is one word and its trailing
   whitespace), which is where non-monotone costs live.

Whatever the tokenizer does, the index returned always fits the budget; only its
maximality rests on the property, which the tests check by brute force for WordPiece,
tiktoken and ``SimpleTokenizer`` on random and non-ASCII text.

Long words
----------
Step 2 costs one tokenization per position of the last word, so a "word" of thousands of
characters (prose in Chinese, Japanese or Thai, a base64 blob) would cost time quadratic
in its length, per chunk. Inside a run of more than ``LONG_WORD`` (256) non-space
characters every position is therefore an anchor of step 1, and step 2 tries only the
``LONG_WORD_SLACK`` (64) positions above the last fitting one: the result is the same
whenever the cost of a prefix never falls back within budget more than 64 characters
beyond a position where it exceeded it (true of the tokenizers above, whose dips are a
few characters: a BPE merge, a whole word turning into one unknown token only within
WordPiece's 100-character word limit). Words of up to 256 characters are searched as
before. Each search then costs O(log n) tokenizations of about one chunk.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from bisect import bisect_left, bisect_right
from typing import Any, Callable

import numpy as np

from citekit._validation import check_int, check_str
from citekit.tokenizers.base import tokenize_checked

__all__ = ["ChunkTokenizer", "chunk_text"]

_WORD_START_RE = re.compile(r"(?<=\s)(?=\S)")
#: Runs of more non-space characters than this are searched position by position
#: (see "Long words" in the module notes).
LONG_WORD = 256
#: Positions above the last fitting one that step 2 tries inside a long word.
LONG_WORD_SLACK = 64
_LONG_WORD_RE = re.compile(r"\S{%d,}" % (LONG_WORD + 1))


def _word_starts(text: str) -> list[int]:
    """Positions right after whitespace and before non-whitespace, ascending."""
    return [match.start() for match in _WORD_START_RE.finditer(text)]


class _Anchors:
    """The points of the search: word starts, and every position inside a long word.

    ``positions`` is ascending (an ``array('q')``: 8 bytes a position); ``long_starts`` /
    ``long_ends`` are the long words, ascending.
    """

    def __init__(self, text: str, word_starts: list[int]) -> None:
        self.word_starts = word_starts
        self.long_starts: list[int] = []
        self.long_ends: list[int] = []
        for match in _LONG_WORD_RE.finditer(text):
            self.long_starts.append(match.start())
            self.long_ends.append(match.end())
        if not self.long_starts:
            self.positions: Any = word_starts
            return
        positions = array("q")
        previous = 0
        for run_start, run_end in zip(self.long_starts, self.long_ends):
            lo = bisect_right(word_starts, previous - 1)
            hi = bisect_right(word_starts, run_start)
            positions.extend(word_starts[lo:hi])
            positions.extend(range(run_start + 1, run_end))
            previous = run_end
        positions.extend(word_starts[bisect_right(word_starts, previous - 1):])
        self.positions = positions

    def in_long_word(self, position: int) -> bool:
        """Is ``position`` a position of a long word (its start included)?"""
        k = bisect_right(self.long_starts, position) - 1
        return k >= 0 and position < self.long_ends[k]

    def slack_end(self, anchor: int, next_point: int, stop: int) -> int:
        """Where step 2 starts (exclusive) above the last fitting ``anchor``: the next
        point of the search, or, from an anchor inside a long word, ``LONG_WORD_SLACK``
        positions above it (not beyond the next word start or ``stop``)."""
        if not self.in_long_word(anchor):
            return next_point
        following = bisect_right(self.word_starts, anchor)
        word_end = self.word_starts[following] if following < len(self.word_starts) else stop
        return max(next_point, min(word_end, stop, anchor + LONG_WORD_SLACK + 1))


def _largest_prefix_within(
    cost: Callable[[int], int],
    start: int,
    stop: int,
    word_starts: list[int] | _Anchors,
    max_tokens: int,
    hint: int | None = None,
    within_last_word: bool = True,
) -> tuple[int, int]:
    """The largest ``end`` in ``[start, stop]`` with ``cost(end) <= max_tokens``.

    ``cost(end)`` is the token count of ``text[start:end]``; ``word_starts`` are the
    anchors of the module notes (sorted; only those inside ``(start, stop)`` are used),
    or an :class:`_Anchors` that adds the positions inside long words.
    ``hint`` is a guess of the answer that only changes how many costs are computed,
    never the result. ``start`` itself is always accepted. With ``within_last_word``
    false, step 2 of the module notes is skipped: the last fitting word start (or
    ``stop``) is returned.
    """
    # The points searched are start, the word starts strictly inside, and stop; point k
    # is read from word_starts by index (no copy: chunking calls this once per chunk).
    anchors = word_starts if isinstance(word_starts, _Anchors) else None
    if anchors is not None:
        word_starts = anchors.positions
    first_inside = bisect_right(word_starts, start)
    n_inside = bisect_left(word_starts, stop) - first_inside
    last = n_inside + 1

    def point(k: int) -> int:
        if k == 0:
            return start
        return stop if k == last else word_starts[first_inside + k - 1]

    memo: dict[int, int] = {}

    def cost_at(end: int) -> int:
        value = memo.get(end)
        if value is None:
            value = memo[end] = cost(end)
        return value

    def fits(k: int) -> bool:
        return cost_at(point(k)) <= max_tokens

    # Gallop from the hinted point to bracket the last fitting point: good fits, bad
    # does not (bad == last + 1 means "nothing known to fail").
    if hint is None or hint <= start:
        guess = 1
    elif hint >= stop:
        guess = last
    else:
        guess = bisect_left(word_starts, hint, first_inside, first_inside + n_inside)
        guess = min(max(guess - first_inside + 1, 1), last)
    good, bad = 0, last + 1
    if guess <= last and fits(guess):
        good, step = guess, 1
        while good + step <= last and fits(good + step):
            good, step = good + step, step * 2
        bad = min(good + step, last + 1)
    elif guess <= last:
        bad, step = guess, 1
        while bad - step > 0 and not fits(bad - step):
            bad, step = bad - step, step * 2
        good = max(bad - step, 0)
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(middle):
            good = middle
        else:
            bad = middle
    anchor = point(good)
    if good == last or not within_last_word:
        return anchor, cost_at(anchor)
    top = point(good + 1)
    if anchors is not None:
        top = anchors.slack_end(anchor, top, stop)
    for end in range(top - 1, anchor, -1):
        if cost_at(end) <= max_tokens:
            return end, memo[end]
    return anchor, cost_at(anchor)


class ChunkTokenizer:
    """Token budgets for any citekit tokenizer.

    Parameters
    ----------
    tokenizer : Tokenizer
        ``SimpleTokenizer``, ``HuggingFaceTokenizer``, ``TiktokenTokenizer`` or any object
        with ``tokenize(text) -> (token_ids, spans)``. If it has a ``count_tokens(text)``
        method (the model wrappers do), that gives the cost; otherwise the number of
        tokens ``tokenize`` returns.
    max_sequence_length : int, optional
        The model's ceiling, special tokens included. Defaults to the tokenizer's
        ``model_max_length`` when it has one (``HuggingFaceTokenizer``), else ``None``.
    special_token_overhead : int, optional
        Tokens the model adds to every sequence that ``count_tokens`` does not report.
        Defaults to the tokenizer's ``special_token_overhead`` (2 for BERT's ``[CLS]``
        ``[SEP]``, more when a prompt is hidden in its template), else 0.
    name : str, optional
        Model name used in :attr:`id`; defaults to the tokenizer's ``name``.

    Examples
    --------
    >>> from citekit import SimpleTokenizer
    >>> chunker = ChunkTokenizer(SimpleTokenizer(), max_sequence_length=8)
    >>> chunker.count_tokens("Revenue rose 15% in 2024.")  # '%' is a token
    6
    >>> chunker.index_by_token_count("Revenue rose 15% in 2024.", 2)
    (13, 2)
    >>> chunker.id.startswith("simple:0:")
    True
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        max_sequence_length: int | None = None,
        special_token_overhead: int | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(tokenizer, ChunkTokenizer):
            raise TypeError("tokenizer is already a ChunkTokenizer; pass its .tokenizer")
        if not callable(getattr(tokenizer, "tokenize", None)):
            raise TypeError(
                "tokenizer must have a tokenize(text) method returning (token_ids, spans); "
                f"got {type(tokenizer).__name__}"
            )
        check_int(max_sequence_length, "max_sequence_length", minimum=1, allow_none=True)
        check_int(special_token_overhead, "special_token_overhead", minimum=0, allow_none=True)
        if name is not None:
            check_str(name, "name")
        self.tokenizer = tokenizer
        if max_sequence_length is None:
            max_sequence_length = getattr(tokenizer, "model_max_length", None)
        self.max_sequence_length: int | None = max_sequence_length
        if special_token_overhead is None:
            special_token_overhead = int(getattr(tokenizer, "special_token_overhead", 0) or 0)
        self.special_token_overhead: int = special_token_overhead
        if (
            self.max_sequence_length is not None
            and self.max_sequence_length <= self.special_token_overhead
        ):
            raise ValueError(
                f"max_sequence_length ({self.max_sequence_length}) must exceed "
                f"special_token_overhead ({self.special_token_overhead})"
            )
        self._name = name
        counter = getattr(tokenizer, "count_tokens", None)
        self._counter = counter if callable(counter) else self._count_by_tokenize

    def _count(self, text: str) -> int:
        # a user counter returning None, nan, -1 or 1.5 would silently bend the budget search
        return check_int(self._counter(text), "tokenizer.count_tokens(text)", minimum=0)

    def _count_by_tokenize(self, text: str) -> int:
        return len(self.tokenizer.tokenize(text)[0])

    @property
    def id(self) -> str:
        """Stable identity of the vocabulary and model: ``kind:vocab_size:name``.

        ``kind`` is the subword model (``wordpiece``, ``bpe``, ``unigram``) or the
        tokenizer's class name without ``Tokenizer``; ``vocab_size`` is 0 when the
        tokenizer has no fixed vocabulary; ``name`` is the model name, or for a
        configurable rule-based tokenizer a short digest of its ``config``. The same
        tokenizer gives the same id in every process.

        Examples
        --------
        >>> from citekit import TiktokenTokenizer
        >>> ChunkTokenizer(TiktokenTokenizer()).id
        'bpe:100277:cl100k_base'
        """
        tokenizer = self.tokenizer
        kind = getattr(tokenizer, "kind", None)
        if not isinstance(kind, str) or not kind:
            class_name = type(tokenizer).__name__.lower()
            kind = class_name.removesuffix("tokenizer") or class_name
        vocab_size = getattr(tokenizer, "vocab_size", 0)
        vocab_size = int(vocab_size) if isinstance(vocab_size, (int, np.integer)) else 0
        name = self._name or getattr(tokenizer, "name", None)
        if not isinstance(name, str) or not name:
            config = getattr(tokenizer, "config", None)
            digest = hashlib.blake2b(repr(config).encode("utf-8"), digest_size=4).hexdigest()
            name = f"config-{digest}"
        return f"{kind}:{vocab_size}:{name}".lower()

    @property
    def max_text_tokens(self) -> int | None:
        """Tokens left for text in one sequence: ``max_sequence_length - overhead``.

        Examples
        --------
        >>> from citekit import SimpleTokenizer
        >>> ChunkTokenizer(SimpleTokenizer(), max_sequence_length=512,
        ...                special_token_overhead=2).max_text_tokens
        510
        """
        if self.max_sequence_length is None:
            return None
        return self.max_sequence_length - self.special_token_overhead

    def count_tokens(self, text: str) -> int:
        """Token cost of ``text``, special tokens excluded.

        Examples
        --------
        >>> from citekit import SimpleTokenizer
        >>> ChunkTokenizer(SimpleTokenizer()).count_tokens("state-of-the-art results")
        2
        """
        check_str(text, "text")
        return self._count(text)

    def index_by_token_count(self, text: str, max_tokens: int) -> tuple[int, int]:
        """Largest prefix of ``text`` that costs at most ``max_tokens`` (offset contract).

        Parameters
        ----------
        text : str
            Any text.
        max_tokens : int
            Budget for ``text`` alone (special tokens excluded), ``>= 0``.

        Returns
        -------
        index : int
            The largest ``i`` with ``count_tokens(text[:i]) <= max_tokens``, an index
            into ``text`` as passed (see the module notes for the exact guarantee).
        token_count : int
            ``count_tokens(text[:index])``.

        Examples
        --------
        >>> from citekit import SimpleTokenizer
        >>> text = "Ünïcödé text stays: ﬁne."
        >>> index, count = ChunkTokenizer(SimpleTokenizer()).index_by_token_count(text, 3)
        >>> text[:index], count
        ('Ünïcödé text stays: ', 3)
        """
        check_str(text, "text")
        check_int(max_tokens, "max_tokens", minimum=0)
        return _largest_prefix_within(
            lambda end: self._count(text[:end]), 0, len(text),
            _Anchors(text, _word_starts(text)), max_tokens,
        )

    def __repr__(self) -> str:
        return (
            f"ChunkTokenizer({self.tokenizer!r}, max_sequence_length={self.max_sequence_length}, "
            f"special_token_overhead={self.special_token_overhead})"
        )


def _sentence_starts(text: str) -> list[int]:
    from citekit.segment import segment_sentences

    return [start for start, _ in segment_sentences(text)[1:]]


def chunk_text(
    text: str,
    tokenizer: Any,
    max_tokens: int,
    *,
    overlap_tokens: int = 0,
) -> list[tuple[int, int]]:
    """Cut ``text`` into chunks that each fit a model's token budget.

    Parameters
    ----------
    text : str
        The document.
    tokenizer : Tokenizer or ChunkTokenizer
        Any citekit tokenizer (wrapped in a :class:`ChunkTokenizer`) or a
        :class:`ChunkTokenizer`, whose ``special_token_overhead`` is charged to every chunk.
    max_tokens : int
        Budget per chunk, special tokens INCLUDED (e.g. the model's
        ``max_sequence_length``).
    overlap_tokens : int, default 0
        Approximate number of tokens each chunk repeats from the end of the previous
        one (at most this many; 0 for no overlap). Must be below the text budget.

    Returns
    -------
    list of tuple of int
        ``(char_start, char_end)`` offsets into ``text``, in order. The first starts at
        0, the last ends at ``len(text)``, each starts at or before the end of the
        previous one (exactly at it without overlap), so every character is covered.
        ``count_tokens(text[start:end]) + special_token_overhead <= max_tokens`` for
        every chunk. Empty text gives ``[]``.

    Raises
    ------
    ValueError
        If ``max_tokens`` leaves no room for text, if ``overlap_tokens`` is not below
        the text budget, or if one character alone costs more than the budget.

    Notes
    -----
    Each chunk is first extended as far as the budget allows
    (:meth:`ChunkTokenizer.index_by_token_count`), then cut back to the last sentence
    start inside it, else the last word start, else left at the limit. Whitespace
    between two chunks belongs to the earlier chunk.

    Examples
    --------
    >>> from citekit import SimpleTokenizer
    >>> text = "One two three. Four five six seven. Eight nine."
    >>> spans = chunk_text(text, SimpleTokenizer(), 5)
    >>> [text[a:b] for a, b in spans]
    ['One two three. ', 'Four five six seven. ', 'Eight nine.']
    >>> [text[a:b] for a, b in chunk_text(text, SimpleTokenizer(), 5, overlap_tokens=2)]
    ['One two three. ', 'two three. Four five six ', 'five six seven. Eight nine.']
    """
    check_str(text, "text")
    chunker = tokenizer if isinstance(tokenizer, ChunkTokenizer) else ChunkTokenizer(tokenizer)
    check_int(max_tokens, "max_tokens", minimum=1)
    check_int(overlap_tokens, "overlap_tokens", minimum=0)
    budget = max_tokens - chunker.special_token_overhead
    if budget < 1:
        raise ValueError(
            f"max_tokens ({max_tokens}) leaves no room for text after "
            f"{chunker.special_token_overhead} special tokens"
        )
    if overlap_tokens >= budget:
        raise ValueError(
            f"overlap_tokens ({overlap_tokens}) must be below the text budget ({budget})"
        )
    n_chars = len(text)
    if n_chars == 0:
        return []
    count = chunker._count
    word_starts = _word_starts(text)
    anchors = _Anchors(text, word_starts)
    sentence_starts = _sentence_starts(text)
    # One tokenization of the whole text gives each search a close first guess.
    token_starts = tokenize_checked(chunker.tokenizer, text).starts

    def guess_end(start: int) -> int:
        target = int(np.searchsorted(token_starts, start)) + budget
        return int(token_starts[target]) if target < token_starts.shape[0] else n_chars

    def has_boundary(boundaries: list[int], low: int, high: int) -> bool:
        """Is there a boundary in ``(low, high]``?"""
        k = bisect_right(boundaries, low)
        return k < len(boundaries) and boundaries[k] <= high

    chunks: list[tuple[int, int]] = []
    start, previous_end = 0, 0
    while True:
        def cost(end: int) -> int:
            return count(text[start:end])

        hint = guess_end(start)
        # The last fitting word start is enough unless the cut may need a position
        # inside the next word: no boundary to cut at before it, or a sentence start
        # (CJK, no space) between it and the next word start.
        limit, _ = _largest_prefix_within(
            cost, start, n_chars, anchors, budget, hint=hint, within_last_word=False
        )
        if limit == n_chars:
            chunks.append((start, n_chars))
            return chunks
        next_word = bisect_right(word_starts, limit)
        next_anchor = word_starts[next_word] if next_word < len(word_starts) else n_chars
        floor = max(start, previous_end)
        # (a limit inside a long word is no word start: search within it as well)
        if not (
            has_boundary(sentence_starts, floor, limit) or has_boundary(word_starts, floor, limit)
        ) or has_boundary(sentence_starts, limit, next_anchor - 1) or anchors.in_long_word(limit):
            limit, _ = _largest_prefix_within(cost, start, n_chars, anchors, budget, hint=hint)
        if start < previous_end and limit <= previous_end:
            # the overlap left no room to advance: start this chunk at the previous end
            start = previous_end
            continue
        if limit == start:
            raise ValueError(
                f"max_tokens ({max_tokens}) is too small: the character at {start} "
                f"({text[start]!r}) alone costs more than {budget} text tokens"
            )
        end = _preferred_cut(
            text, start, previous_end, limit, sentence_starts, word_starts, count, budget
        )
        chunks.append((start, end))
        next_start = end
        if overlap_tokens:
            next_start = _overlap_start(text, start, end, word_starts, count, overlap_tokens)
        start, previous_end = next_start, end


def _preferred_cut(
    text: str,
    start: int,
    previous_end: int,
    limit: int,
    sentence_starts: list[int],
    word_starts: list[int],
    count: Callable[[str], int],
    budget: int,
) -> int:
    """Last sentence start in ``(previous_end, limit]``, else last word start, else ``limit``.

    Cutting after ``previous_end`` (the end of the previous chunk, or ``start``) keeps
    every chunk reaching further than the one before. A candidate is re-checked against
    the budget (costs are not monotone everywhere).
    """
    for boundaries in (sentence_starts, word_starts):
        lo = bisect_right(boundaries, max(start, previous_end))
        for k in range(bisect_right(boundaries, limit) - 1, lo - 1, -1):
            if count(text[start : boundaries[k]]) <= budget:
                return boundaries[k]
    return limit


def _overlap_start(
    text: str,
    start: int,
    end: int,
    word_starts: list[int],
    count: Callable[[str], int],
    overlap_tokens: int,
) -> int:
    """Earliest word start in ``(start, end)`` whose suffix up to ``end`` fits the overlap.

    Falls back to ``end`` (no overlap) when no word start qualifies.
    """
    candidates = word_starts[bisect_right(word_starts, start) : bisect_left(word_starts, end)]
    lo, hi = 0, len(candidates)  # suffix cost shrinks as the start moves right
    while lo < hi:
        middle = (lo + hi) // 2
        if count(text[candidates[middle] : end]) <= overlap_tokens:
            hi = middle
        else:
            lo = middle + 1
    for candidate in candidates[lo:]:
        if count(text[candidate:end]) <= overlap_tokens:
            return candidate
    return end
