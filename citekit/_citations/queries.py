"""Reading the answer sentences: the tokens of every sentence of a batch of answers, packed
CSR, with what each token's text says (content token, word or single letter, Han
ideograph, coverage weight, value).

Reference markers (``[1]``) are left out: they point at sources, they are not the claim.
A sentence of stop words only is judged on all its tokens.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from citekit._citations.content import (
    citation_marker_mask,
    ideograph_token_mask,
    letter_token_mask,
    surface_facts,
)
from citekit.index import gather_ranges

__all__ = ["Queries", "QueryBatch"]


class QueryBatch(NamedTuple):
    """The tokens of a batch of sentences, packed CSR: sentence ``q`` owns tokens
    ``offsets[q]:offsets[q + 1]`` of the other arrays."""

    offsets: np.ndarray
    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    content: np.ndarray  # (the tokens the sentence is judged on)
    words: np.ndarray  # (content tokens that are words: not single letters of Thai, kana...)
    ideographs: np.ndarray  # (content Han ideographs)
    content_prefix: np.ndarray  # (prefix sums of ``content``: n_tokens + 1)
    word_prefix: np.ndarray  # (of ``words``; ``content_prefix`` itself when they agree)
    has_letters: bool  # (some content token is a single letter: ``words`` differs)
    content_total: np.ndarray  # (each sentence's content tokens)


class _Packed(NamedTuple):
    """Every sentence's tokens (see :meth:`Queries._all`)."""

    offsets: np.ndarray
    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    content: np.ndarray
    words: np.ndarray
    ideographs: np.ndarray
    weights: np.ndarray
    values: np.ndarray


class Queries:
    """Answer sentences of a batch of answers, tokens packed CSR (sentence ``q`` owns
    tokens ``offsets[q]:offsets[q + 1]`` of the packed arrays)."""

    # dtypes of the packed columns: ids, starts, ends, content, words, ideographs, weights,
    # values
    _DTYPES = (np.int64, np.int64, np.int64, bool, bool, bool, np.float64, bool)

    def __init__(self) -> None:
        self.answer_of: list[int] = []
        self.spans: list[tuple[int, int]] = []
        self.sentence_index: list[int] = []
        self.lengths: list[int] = []
        self._parts: list[tuple[np.ndarray, ...]] = []
        self._folded: list[str] = []
        self._packed: _Packed | None = None

    def add_answer(self, answer_number: int, answer: str, tokens: Any, spans: np.ndarray) -> None:
        if spans.shape[0] == 0:
            return
        token_ids, starts, ends = tokens.token_ids, tokens.starts, tokens.ends
        # reference markers ([1], [2, 3]) point at sources: they are not part of the claim
        markers = citation_marker_mask(answer, starts, ends)
        if markers.any():
            keep = ~markers
            token_ids, starts, ends = token_ids[keep], starts[keep], ends[keep]
        # what each token's text says (content token, folded text, weights, value), one
        # cached look-up per token
        surfaces = map(answer.__getitem__, map(slice, starts.tolist(), ends.tolist()))
        facts = list(map(surface_facts, surfaces))
        is_content, folded, weight_content, weight_other, values = (
            zip(*facts) if facts else ((), (), (), (), ())
        )
        mask = np.array(is_content, dtype=bool)
        token_first = np.searchsorted(starts, spans[:, 0], side="left")
        token_last = np.maximum(np.searchsorted(ends, spans[:, 1], side="right"), token_first)
        positions, owner = gather_ranges(token_first, token_last)
        content = mask[positions]
        # a sentence of stop words only is judged on all its tokens
        n_sentences = spans.shape[0]
        has_content = np.bincount(owner[content], minlength=n_sentences) > 0
        content |= ~has_content[owner]
        # content tokens that are words: not single letters of Thai, kana, ...
        words = content & ~letter_token_mask(answer, starts, ends)[positions]
        # and content Han ideographs
        ideographs = content & ideograph_token_mask(answer, starts, ends)[positions]
        # each sentence token's coverage weight, as the content token it is judged (or not)
        weights = np.where(
            content,
            np.array(weight_content, dtype=np.float64)[positions],
            np.array(weight_other, dtype=np.float64)[positions],
        )
        self._parts.append(
            (
                np.asarray(token_ids, dtype=np.int64)[positions],
                np.asarray(starts, dtype=np.int64)[positions],
                np.asarray(ends, dtype=np.int64)[positions],
                content,
                words,
                ideographs,
                weights,
                np.array(values, dtype=bool)[positions],
            )
        )
        self._folded.extend(map(folded.__getitem__, positions.tolist()))
        self._packed = None
        self.answer_of.extend([answer_number] * n_sentences)
        self.spans.extend(map(tuple, spans.tolist()))
        self.sentence_index.extend(range(n_sentences))
        self.lengths.extend((token_last - token_first).tolist())

    def __len__(self) -> int:
        return len(self.spans)

    def _all(self) -> _Packed:
        """The tokens of every sentence."""
        if self._packed is None:
            offsets = np.zeros(len(self.lengths) + 1, dtype=np.int64)
            np.cumsum(self.lengths, out=offsets[1:])
            if len(self._parts) == 1:  # (one answer: its arrays, no copy)
                columns = list(self._parts[0])
            else:
                columns = [
                    np.concatenate([part[i] for part in self._parts])
                    if self._parts
                    else np.zeros(0, dtype=dtype)
                    for i, dtype in enumerate(self._DTYPES)
                ]
            self._packed = _Packed(offsets, *columns)
        return self._packed

    def tokens_of(self, query: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, ends, content) of sentence ``query``'s tokens."""
        packed = self._all()
        lo, hi = int(packed.offsets[query]), int(packed.offsets[query + 1])
        return packed.starts[lo:hi], packed.ends[lo:hi], packed.content[lo:hi]

    def texts(self, answers: list[str], first: int, last: int) -> list[str]:
        """The text of sentences ``first:last`` (``answers``: the answers added)."""
        return [answers[self.answer_of[q]][slice(*self.spans[q])] for q in range(first, last)]

    def pack(self, first: int, last: int) -> QueryBatch:
        """The tokens of sentences ``first:last``, with their content prefix sums."""
        packed = self._all()
        lo, hi = int(packed.offsets[first]), int(packed.offsets[last])
        offsets = packed.offsets[first : last + 1] - lo
        ids = packed.ids[lo:hi]
        content = packed.content[lo:hi]
        words = packed.words[lo:hi]
        content_prefix = np.zeros(ids.shape[0] + 1, dtype=np.int64)
        np.cumsum(content, out=content_prefix[1:])
        # the same for content words (no single letters of Thai, kana, ...)
        word_prefix = content_prefix
        has_letters = not np.array_equal(words, content)
        if has_letters:
            word_prefix = np.zeros(ids.shape[0] + 1, dtype=np.int64)
            np.cumsum(words, out=word_prefix[1:])
        return QueryBatch(
            offsets=offsets,
            ids=ids,
            starts=packed.starts[lo:hi],
            ends=packed.ends[lo:hi],
            content=content,
            words=words,
            ideographs=packed.ideographs[lo:hi],
            content_prefix=content_prefix,
            word_prefix=word_prefix,
            has_letters=has_letters,
            content_total=np.diff(content_prefix[offsets]),
        )

    def facts(self, first: int, last: int) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(folded texts, coverage weights, which are values) of the tokens of sentences
        ``first:last`` (:func:`~citekit._citations.content.surface_facts`)."""
        packed = self._all()
        lo, hi = int(packed.offsets[first]), int(packed.offsets[last])
        return self._folded[lo:hi], packed.weights[lo:hi], packed.values[lo:hi]
