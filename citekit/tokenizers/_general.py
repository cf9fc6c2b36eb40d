"""The general path of :class:`~citekit.tokenizers.simple.SimpleTokenizer`: any text.

:func:`citekit.normalize.normalize_text`, a token pattern on the normalized text and the
map back to the text as passed; spans are then widened to whole grapheme clusters of the
original (where normalization moved a cluster boundary, as NFKC does to Thai ``ำ``) and
overlapping tokens merged. Slower than the kernel, which reads most text; the tokenizer
sends here the pieces of a text the kernel cannot read (``_hybrid``).
"""

from __future__ import annotations

import itertools
import operator
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from citekit.normalize import (
    CURRENCY_WORDS,
    PERCENT_SIGNS,
    NormalizerConfig,
    normalize_text,
)
from citekit.tokenizers.base import TokenizedText

__all__ = ["TOKEN_JOINERS", "NextSpace", "regexes", "snap_to_clusters", "tokenize_general"]

_NO_SPACE_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_SYMBOLS = PERCENT_SIGNS + "".join(CURRENCY_WORDS)
# Tokens are found on the normalized text with character classes (fast), then widened to
# whole grapheme clusters of the original text by snap_to_clusters.
_WORD_CHAR = rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{_NO_SPACE_SCRIPTS}]]"
_TOKEN_PATTERN = (
    rf"[{_NO_SPACE_SCRIPTS}]"
    rf"|{_WORD_CHAR}+(?:(?:(?<=\p{{Nd}})[.,](?=\p{{Nd}})|['’ʼ‐‑\-](?={_WORD_CHAR})){_WORD_CHAR}+)*"
    rf"|[\p{{Extended_Pictographic}}\p{{Regional_Indicator}}{_SYMBOLS}]"
)


# A grapheme cluster boundary can only be missing before these characters ...
_JOINS_PREVIOUS = (
    r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{Grapheme_Cluster_Break=SpacingMark}\p{Grapheme_Cluster_Break=L}"
    r"\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}"
    r"\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=LVT}"
    r"\p{Grapheme_Cluster_Break=Regional_Indicator}]"
)
# ... or after these: a Prepend character (UAX #29 GB9b); a character of InCB Linker or
# Extend before a consonant (GB9c: a conjunct; Extend and ZWJ characters too, which they
# mostly are, though not all in every Unicode version); ZWJ before an emoji (GB11). The
# other rules that join need a character of the set above after the position. So
# consonants, most letters of Indic text, are not suspects, nor the end of a word whose last
# letter carries a vowel sign.
_JOINS_NEXT = (
    r"\p{Grapheme_Cluster_Break=Prepend}"
    r"|[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{InCB=Linker}\p{InCB=Extend}](?=\p{InCB=Consonant})"
    r"|\p{Grapheme_Cluster_Break=ZWJ}(?=\p{Extended_Pictographic})"
)
# What joins the whitespace before it into one grapheme cluster (UAX #29 GB9, GB9a; the
# other rules that join a cluster need a Hangul jamo, a virama, an emoji, a regional
# indicator or a Prepend character before, not whitespace).
_JOINS_SPACE = (
    r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{Grapheme_Cluster_Break=SpacingMark}]"
)


@lru_cache(maxsize=1)
def regexes() -> tuple[Any, tuple[Any, Any], Any, Any, Any, Any]:
    """Token pattern, the two suspect finders, grapheme cluster, Prepend, no-space scripts,
    what joins a space.

    Compiled lazily (the ``regex`` module is only needed for non-ASCII text and to build
    the kernel's table).
    """
    import regex

    return (
        regex.compile(_TOKEN_PATTERN, regex.VERSION1),
        (regex.compile(_JOINS_PREVIOUS), regex.compile(_JOINS_NEXT)),
        regex.compile(r"\X"),
        regex.compile(r"\p{Grapheme_Cluster_Break=Prepend}"),
        regex.compile(rf"[{_NO_SPACE_SCRIPTS}]"),
        regex.compile(_JOINS_SPACE),
    )


class NextSpace:
    """Index of the first space or line feed at or after a position (or ``len(text)``),
    for positions that only grow: the next line feed is searched again only once passed
    (searching it from every position made long texts without line breaks quadratic)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newline = -1  # the first line feed at or after the last position, or len(text)

    def __call__(self, position: int) -> int:
        text = self.text
        if self.newline < position:
            newline = text.find("\n", position)
            self.newline = newline if newline >= 0 else len(text)
        space = text.find(" ", position, self.newline)
        return space if space >= 0 else self.newline


def snap_to_clusters(
    text: str, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Widen token spans to whole grapheme clusters of ``text`` and merge overlaps.

    Tokens are found with character classes on the NORMALIZED text, so a mapped span can
    start or end inside a cluster of the original: after a combining mark was left out, or
    where normalization moved a boundary (Thai SARA AM ``ำ`` becomes NIKHAHIT + SARA AA, two
    clusters). Cluster boundaries are computed only if some span starts or ends where a
    boundary can be missing.
    """
    joins_previous, joins_next = regexes()[1]
    suspects = np.array(
        [match.start() for match in joins_previous.finditer(text)]
        + [match.end() for match in joins_next.finditer(text)],
        dtype=np.int64,
    )
    if suspects.size == 0:
        return starts, ends
    # (a flag per position: np.isin sorts, which costs more on the short texts of the
    # hybrid path's pieces)
    is_suspect = np.zeros(len(text) + 1, dtype=np.bool_)
    is_suspect[suspects] = True
    bad_starts = is_suspect[starts]
    bad_ends = is_suspect[ends]
    if not (bad_starts.any() or bad_ends.any()):
        return starts, ends
    # Some spans may cut a cluster: find the cluster boundaries of the stretches between
    # spaces or line breaks that hold such positions (clusters break before a space unless
    # Prepend characters precede it, and before and after a line break).
    cluster, prepend = regexes()[2], regexes()[3]
    boundary_list = [0]
    stretch_end = 0
    next_space = NextSpace(text)
    bad_positions = np.unique(np.concatenate([starts[bad_starts], ends[bad_ends]]))
    for position in bad_positions.tolist():
        if position <= stretch_end:
            continue  # inside a stretch already done
        # (searched back to the previous stretch only: it is the floor below, and a search
        # to the start of the text made long texts without line breaks quadratic)
        stretch_start = max(
            text.rfind(" ", stretch_end, position), text.rfind("\n", stretch_end, position), 0
        )
        if text[stretch_start] == "\n" and text[stretch_start - 1 : stretch_start] == "\r":
            stretch_start -= 1
        while stretch_start > 0 and prepend.match(text, stretch_start - 1):
            stretch_start -= 1
        stretch_start = max(stretch_start, stretch_end)
        stretch_end = position
        while True:
            space = next_space(stretch_end)
            if space == len(text) or text[space] == "\n":
                stretch_end = min(space + 1, len(text))
                break
            if space == 0 or not prepend.match(text, space - 1):
                stretch_end = space
                break
            stretch_end = space + 1
        # (the clusters' lengths, summed from the stretch's start: no match objects)
        boundary_list.extend(
            itertools.accumulate(
                map(len, cluster.findall(text, stretch_start, stretch_end)), initial=stretch_start
            )
        )
    boundaries = np.array(boundary_list, dtype=np.int64)
    starts, ends = starts.copy(), ends.copy()
    starts[bad_starts] = boundaries[
        np.searchsorted(boundaries, starts[bad_starts], side="right") - 1
    ]
    ends[bad_ends] = boundaries[np.searchsorted(boundaries, ends[bad_ends], side="left")]
    return starts, ends


# The characters the token pattern reads inside a token, between two others.
TOKEN_JOINERS = ".,'’ʼ‐‑-"


#: Tokens whose surfaces (Python strings) are alive at once: keys are built and hashed
#: block by block, so a text's tokens cost their spans in arrays, not a string each.
_KEY_BLOCK = 1 << 15


def tokenize_general(
    text: str, normalizer_config: NormalizerConfig, ids: Callable[[list[str]], np.ndarray]
) -> TokenizedText:
    """The general path on the whole of ``text``: tokens found on its normalized form.

    ``ids`` gives the ids of token surfaces found in the normalized text (the
    tokenizer's, which keeps them). Token spans are kept in arrays and surfaces made and
    hashed ``_KEY_BLOCK`` tokens at a time: memory is a small constant per token, however
    many tokens NFKC expansion makes of one character (``\ufdfa``: four).
    """
    normalized = normalize_text(text, normalizer_config)
    folded = normalized.text
    bounds = np.fromiter(
        itertools.chain.from_iterable(map(_SPAN, regexes()[0].finditer(folded))),
        dtype=np.int64,
    )
    if bounds.size == 0:
        return TokenizedText(text, [], [], [])
    norm_starts, norm_ends = bounds[0::2], bounds[1::2]
    orig_starts = normalized.orig_starts[norm_starts]
    orig_ends = normalized.orig_ends[norm_ends - 1]
    del normalized, bounds  # (the maps: 16 bytes per normalized character)
    orig_starts, orig_ends = snap_to_clusters(text, orig_starts, orig_ends)
    # One original character can expand into several tokens (½ -> 1⁄2, ㏂ -> a.m.),
    # and snapping can widen a token over its neighbour: merge overlapping tokens (the
    # spans are monotone, so comparing neighbours finds every overlap). A merged token's
    # key joins its parts with a space, which no single token contains.
    overlaps = orig_starts[1:] < orig_ends[:-1]
    if not overlaps.any():
        return TokenizedText(
            text, _block_ids(folded, norm_starts, norm_ends, None, ids), orig_starts, orig_ends
        )
    first = np.flatnonzero(np.concatenate([[True], ~overlaps]))
    orig_starts = orig_starts[first]
    orig_ends = np.maximum.reduceat(orig_ends, first)
    return TokenizedText(
        text, _block_ids(folded, norm_starts, norm_ends, first, ids), orig_starts, orig_ends
    )


_SPAN = operator.methodcaller("span")


def _block_ids(
    folded: str,
    starts: np.ndarray,
    ends: np.ndarray,
    first: np.ndarray | None,
    ids: Callable[[list[str]], np.ndarray],
) -> np.ndarray:
    """Ids of the tokens ``folded[starts[k]:ends[k]]``, or, with ``first`` (the first
    token of each group), of the groups' keys (their tokens joined by a space), made and
    hashed about ``_KEY_BLOCK`` tokens at a time."""
    if first is None:
        out = np.empty(starts.size, dtype=np.int64)
        for block in range(0, starts.size, _KEY_BLOCK):
            block_end = block + _KEY_BLOCK
            out[block:block_end] = ids([
                folded[start:end]
                for start, end in zip(
                    starts[block:block_end].tolist(), ends[block:block_end].tolist()
                )
            ])
        return out
    group_ends = np.append(first[1:], starts.size)
    out = np.empty(first.size, dtype=np.int64)
    group = 0
    while group < first.size:
        # groups up to about _KEY_BLOCK tokens (at least one group, however large)
        limit = first[group] + _KEY_BLOCK
        block_end = max(int(np.searchsorted(group_ends, limit, side="right")), group + 1)
        keys = [
            _group_key(folded, starts, ends, group_start, group_end)
            for group_start, group_end in zip(
                first[group:block_end].tolist(), group_ends[group:block_end].tolist()
            )
        ]
        out[group:block_end] = ids(keys)
        group = block_end
    return out


def _group_key(folded: str, starts: np.ndarray, ends: np.ndarray, first: int, end: int) -> str:
    """Tokens ``first`` to ``end - 1`` joined by a space (in blocks: a group can hold all
    the tokens of a text, and its parts are not all kept as strings at once)."""
    if end - first == 1:
        return folded[int(starts[first]) : int(ends[first])]
    return " ".join([
        " ".join([
            folded[start:stop]
            for start, stop in zip(
                starts[block : min(block + _KEY_BLOCK, end)].tolist(),
                ends[block : min(block + _KEY_BLOCK, end)].tolist(),
            )
        ])
        for block in range(first, end, _KEY_BLOCK)
    ])
