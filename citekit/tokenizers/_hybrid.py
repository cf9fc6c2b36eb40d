"""The hybrid cut of :class:`~citekit.tokenizers.simple.SimpleTokenizer`: the kernel reads
a text, and only the pieces around the characters it cannot read take the general path.

A *cut point* is a position after ASCII whitespace (not between CR and LF) whose
character joins no whitespace before it (no combining mark, no second half of a canonical
composition, nothing that extends a grapheme cluster after a space). No token,
normalization unit, symbol padding, thousands separator or grapheme cluster crosses one,
so the text between two cut points tokenizes alone as it does in context. Each character
the kernel cannot read marks the piece between the cut points around it; the pieces are
joined by spaces (the joints are cut points too) and tokenized in one general-path call,
whose tokens replace the kernel's inside the pieces. When the pieces cover more than
:data:`GENERAL_SHARE` of a text, the general path takes all of it. Many texts are read
by one kernel call and one general-path call for all their pieces (a text's start is a
cut point, as the start of a text alone). The result is always that of the general path
on the whole text (tested).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from citekit._code_units import code_units
from citekit.kernels._tokenize import (
    LETTER,
    MARK,
    NUKTA,
    NUKTA_BASE,
    OTHER,
    THAI,
    THAI_MARK,
    THAI_MARK_CLASSES,
)
from citekit.normalize import _attaches
from citekit.tokenizers._general import regexes
from citekit.tokenizers._kernel_chars import table_index, unit_codes
from citekit.tokenizers.base import TokenizedText

__all__ = [
    "GENERAL_SHARE",
    "general_pieces",
    "general_pieces_many",
    "hybrid_many",
    "joins_space",
    "kernel_tokens",
    "merge_pieces",
    "tokenize_hybrid",
    "tokenize_many",
]

#: The kernel's function and tables for a configuration
#: (:func:`~citekit.tokenizers._kernel_chars.kernel_tables`).
Kernel = tuple[Any, np.ndarray, np.ndarray, np.ndarray]
#: The general path on a whole text (the tokenizer's ``_tokenize_unicode``).
General = Callable[[str], TokenizedText]
#: A text read in part by the general path: the text, the kernel's ids, starts and ends of
#: its tokens, and its pieces (``(start, end)`` rows).
_Item = tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

# One kernel scratch buffer per thread (the kernel releases the GIL) for the tokens of a
# text while they are found, so that a text of up to this many tokens needs no fresh
# memory but its result (first-touch page faults cost as much as a tenth of the kernel's
# time). 3 x 8 bytes per token; pages are only resident once used.
_SCRATCH_TOKENS = 1 << 15
_scratch = threading.local()


# Above this share of the text in general-path pieces, the whole text takes the general path.
GENERAL_SHARE = 0.5


@lru_cache(maxsize=4096)
def joins_space(char: str) -> bool:
    """True if ``char`` may join ASCII whitespace before it (normalization or cluster)."""
    return _attaches(char) or regexes()[5].match(char) is not None


def general_pieces(text: str, code_points: np.ndarray) -> np.ndarray | None:
    """``(start, end)`` rows of the pieces that need the general path (see the module doc).

    ``code_points`` are :func:`~citekit._code_units.code_units`'s. None when the pieces
    would cover more than ``GENERAL_SHARE`` of the text.
    """
    return general_pieces_many(text, code_points, np.array([0, len(text)], dtype=np.int64))[0]


def general_pieces_many(
    joined: str, code_points: np.ndarray, text_starts: np.ndarray
) -> list[np.ndarray | None]:
    """:func:`general_pieces` of every text ``joined[text_starts[t]:text_starts[t + 1]]``
    (offsets relative to the text), from numpy passes over the whole of ``joined``: the
    start of every text is a cut, as the start of a text alone."""
    n_chars = len(joined)
    if code_points.dtype == np.uint8:  # (ASCII: no piece; the look-ups below are 16-bit)
        code_points = code_points.astype(np.uint16)
    high = np.flatnonzero(code_points > 127)
    # (the kernel reads the same characters with or without NFKC)
    codes = unit_codes(True)
    high_codes = codes[table_index(code_points[high])]
    others = high[high_codes == OTHER]
    # (the piece finder mirrors the kernel's rules for the marks it reads: Indic marks and
    # nuktas, then Thai marks)
    is_mark = (high_codes == MARK) | (high_codes == NUKTA)
    if is_mark.any():
        # a mark the kernel reads only right after a letter or another mark, a nukta only
        # right after a letter but those it composes with (after a character the kernel
        # cannot read, the mark's word is a piece already); never first in its text
        marks = high[is_mark]
        before = code_points[np.maximum(marks - 1, 0)]
        before_codes = codes[table_index(before)]
        after_letter = (
            ((before | 32) >= 97) & ((before | 32) <= 122) | (before_codes == LETTER)
        )
        after_mark = (
            (before_codes == NUKTA_BASE)
            | (before_codes == MARK)
            | (before_codes == NUKTA)
        )
        nukta = high_codes[is_mark] == NUKTA
        first = np.zeros(n_chars + 1, dtype=np.bool_)
        first[text_starts] = True
        read = (after_letter | (after_mark & ~nukta) | (before_codes == OTHER)) & ~first[
            marks
        ]
        if not read.all():
            # (both ascending, no position in both)
            others = np.sort(np.concatenate((others, marks[~read])), kind="mergesort")
    is_thai_mark = (high_codes >= THAI_MARK) & (
        high_codes < THAI_MARK + len(THAI_MARK_CLASSES)
    )
    if is_thai_mark.any():
        # a Thai mark the kernel reads only right after a Thai character or a Thai mark of
        # a class not higher than its own (or of class 0, or it of class 0); never first
        # in its text (after a character the kernel cannot read, its word is a piece)
        marks = high[is_thai_mark]
        ranks = high_codes[is_thai_mark].astype(np.int64) - THAI_MARK
        before_codes = codes[table_index(code_points[np.maximum(marks - 1, 0)])]
        before_ranks = before_codes.astype(np.int64) - THAI_MARK
        after_mark = (
            (before_ranks >= 0)
            & (before_ranks < len(THAI_MARK_CLASSES))
            & ((ranks == 0) | (before_ranks <= ranks))
        )
        first = np.zeros(n_chars + 1, dtype=np.bool_)
        first[text_starts] = True
        read = (
            (before_codes == THAI) | after_mark | (before_codes == OTHER)
        ) & ~first[marks]
        if not read.all():
            others = np.sort(np.concatenate((others, marks[~read])), kind="mergesort")
    # candidates: after ASCII whitespace (not after a typographic space: without NFKC,
    # a no-break space is no space to the symbol padding)
    previous = code_points[:-1]
    cuts = np.flatnonzero((previous == 32) | ((previous >= 9) & (previous <= 13))) + 1
    not_cut = (code_points[cuts - 1] == 13) & (code_points[cuts] == 10)  # CR LF
    # a non-ASCII character right after the whitespace may join it (not one the kernel
    # reads but a mark: each is a normalization unit and cluster of its own)
    after_cut = code_points[cuts]
    check = np.flatnonzero(after_cut > 127)
    check_codes = codes[table_index(after_cut[check])]
    check = check[
        (check_codes == OTHER)
        | (check_codes == MARK)
        | (check_codes == NUKTA)
        | ((check_codes >= THAI_MARK) & (check_codes < THAI))
    ]
    joining = [index for index in check.tolist() if joins_space(joined[cuts[index]])]
    not_cut[joining] = True
    # (the texts' starts and the end are cuts whatever precedes them)
    is_cut = np.zeros(n_chars + 1, dtype=np.bool_)
    is_cut[cuts[~not_cut]] = True
    is_cut[text_starts] = True
    cuts = np.flatnonzero(is_cut)
    cells = np.searchsorted(cuts, others, side="right") - 1
    if cells.size:
        cells = cells[np.concatenate((_TRUE, cells[1:] != cells[:-1]))]  # others ascend
    starts, ends = cuts[cells], cuts[cells + 1]
    n_texts = text_starts.shape[0] - 1
    text_of = np.searchsorted(text_starts, starts, side="right") - 1
    bounds = np.searchsorted(text_of, np.arange(n_texts + 1)).tolist()
    firsts = text_starts.tolist()
    out: list[np.ndarray | None] = []
    for text in range(n_texts):
        lo, hi = bounds[text], bounds[text + 1]
        base = firsts[text]
        if int((ends[lo:hi] - starts[lo:hi]).sum()) > GENERAL_SHARE * (firsts[text + 1] - base):
            out.append(None)
        else:
            out.append(np.stack([starts[lo:hi] - base, ends[lo:hi] - base], axis=1))
    return out


_TRUE = np.ones(1, dtype=bool)


def merge_pieces(
    ids: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    pieces: np.ndarray,
    general_ids: np.ndarray,
    general_starts: np.ndarray,
    general_ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's tokens (``ids``, ``starts``, ``ends``) outside ``pieces`` and the
    general path's tokens inside them, in text order."""
    piece_starts, piece_ends = pieces[:, 0], pieces[:, 1]
    piece = np.searchsorted(piece_starts, starts, side="right") - 1
    inside = (piece >= 0) & (starts < piece_ends[np.maximum(piece, 0)])
    keep = ~inside
    ids, starts, ends = ids[keep], starts[keep], ends[keep]
    n_general = general_ids.size
    if n_general == 0:
        return ids, starts, ends
    # the pieces hold no kept token: general tokens go before the first kept token that
    # starts after them
    general_at = np.searchsorted(starts, general_starts) + np.arange(n_general)
    from_kernel = np.ones(ids.size + n_general, dtype=bool)
    from_kernel[general_at] = False
    merged = []
    for kernel_values, general_values in (
        (ids, general_ids),
        (starts, general_starts),
        (ends, general_ends),
    ):
        values = np.empty(from_kernel.size, dtype=np.int64)
        values[from_kernel] = kernel_values
        values[general_at] = general_values
        merged.append(values)
    return merged[0], merged[1], merged[2]


def kernel_tokens(
    kernel: Kernel, code_points: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Ids, starts and ends of the kernel's tokens, and how many characters it cannot read.

    ``code_points`` are :func:`~citekit._code_units.code_units`'s; the characters the
    kernel cannot read separate tokens.
    """
    function, table, ids, letter_keys = kernel
    scratch = getattr(_scratch, "tokens", None)
    if scratch is None:
        scratch = _scratch.tokens = np.empty(3 * _SCRATCH_TOKENS, dtype=np.int64)
    return function(code_points, table, ids, letter_keys, scratch)


def tokenize_many(
    kernel: Kernel,
    general: General,
    texts: Sequence[str],
    joined: str,
    text_starts: np.ndarray,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tokens of each of ``texts`` as read alone, from one kernel call.

    ``joined`` is ``"".join(texts)``, text ``t`` being
    ``joined[text_starts[t]:text_starts[t + 1]]`` (``int64``). Returns the ids, starts
    and ends of every text's tokens, concatenated (offsets relative to their own text),
    and the token offsets (text ``t`` has tokens ``offsets[t]:offsets[t + 1]``). The
    pieces of the texts with characters the kernel cannot read go to one general-path
    call, the texts mostly made of them to one call each, as alone. An ``out`` (int64,
    three regions of ``len(out) // 3`` tokens; a larger one is allocated if the texts
    have more tokens) is written instead of the thread's scratch, and the kernel's arrays
    are views of it (see :func:`~citekit.kernels._tokenize.kernel_tokens_many`).
    """
    from citekit.kernels._tokenize import kernel_tokens_many

    _, table, kernel_ids, letter_keys = kernel
    scratch = out
    if scratch is None:
        scratch = getattr(_scratch, "tokens", None)
        if scratch is None:
            scratch = _scratch.tokens = np.empty(3 * _SCRATCH_TOKENS, dtype=np.int64)
    units = code_units(joined)
    ids, starts, ends, offsets, n_other = kernel_tokens_many(
        units, text_starts, table, kernel_ids, letter_keys, scratch, out is not None
    )
    if not np.count_nonzero(n_other):
        return ids, starts, ends, offsets
    parts: list[Any] = []
    hybrid: list[int] = []  # the texts read by the kernel and the general path
    items: list[_Item] = []
    needing = np.flatnonzero(n_other).tolist()
    if len(needing) == len(texts):
        found = general_pieces_many(joined, units, text_starts)
    else:
        # (the units of these texts copied: code_units keeps the joined text's array
        # for the segmenter)
        bounds = text_starts.tolist()
        found = general_pieces_many(
            "".join([texts[number] for number in needing]),
            np.concatenate([units[bounds[n] : bounds[n + 1]] for n in needing]),
            np.cumsum([0] + [len(texts[number]) for number in needing], dtype=np.int64),
        )
    pieces_of = dict(zip(needing, found))
    for number, text in enumerate(texts):
        lo, hi = offsets[number], offsets[number + 1]
        kernel_part = (ids[lo:hi], starts[lo:hi], ends[lo:hi])
        pieces = pieces_of.get(number)
        if not n_other[number]:
            parts.append(kernel_part)
        elif pieces is None:
            tokens = general(text)
            parts.append((tokens.token_ids, tokens.starts, tokens.ends))
        else:
            parts.append(None)
            hybrid.append(number)
            items.append((text, *kernel_part, pieces))
    # the general path's pieces of all these texts in as few calls as can be
    for number, tokens in zip(hybrid, hybrid_many(items, general)):
        parts[number] = tokens
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(part[0]) for part in parts], out=offsets[1:])
    ids, starts, ends = (np.concatenate([part[k] for part in parts]) for k in range(3))
    return ids, starts, ends, offsets


def tokenize_hybrid(
    general: General,
    text: str,
    ids: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    pieces: np.ndarray,
) -> TokenizedText:
    """Kernel tokens outside ``pieces``, general-path tokens inside them.

    ``ids``, ``starts`` and ``ends`` are the kernel's tokens of the whole text.
    """
    return TokenizedText(text, *_hybrid_group([(text, ids, starts, ends, pieces)], general)[0])


def hybrid_many(
    items: list[_Item], general: General
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`tokenize_hybrid`'s ``(ids, starts, ends)`` for each ``(text, ids, starts,
    ends, pieces)`` of ``items``, the pieces of all texts in one general-path call.

    Within a text, pieces are joined as :func:`_hybrid_group` explains. Between texts,
    a text's first piece may start at its first character and its last piece end at
    its last: a space before the first character is a cut point unless the character
    joins a space (a combining mark), and after the last one unless it is a Prepend
    character (which joins what follows, UAX #29 GB9b). A text with either gets a call
    of its own.
    """
    prepend = regexes()[3]
    shared = []
    alone = []
    for number, (text, *_, pieces) in enumerate(items):
        n_pieces = pieces.shape[0]
        at_start = n_pieces and pieces[0, 0] == 0 and joins_space(text[0])
        at_end = (
            n_pieces and pieces[-1, 1] == len(text) and prepend.match(text, len(text) - 1)
        )
        (alone if at_start or at_end else shared).append(number)
    results: list[Any] = [None] * len(items)
    groups = [shared] if shared else []
    groups.extend([number] for number in alone)
    for group in groups:
        for number, tokens in zip(group, _hybrid_group([items[n] for n in group], general)):
            results[number] = tokens
    return results


def _hybrid_group(
    items: list[_Item], general: General
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """One general-path call for the pieces of every text of ``items`` (see
    :func:`hybrid_many`), then each text's kernel tokens outside its pieces merged
    with the general tokens inside them."""
    # One general-path call for all pieces, joined by spaces: each piece ends with ASCII
    # whitespace (or the text) and starts with a character that joins no space, so the
    # joints are cut points too and each piece tokenizes as it does in the text.
    piece_list: list[str] = []
    for text, *_, pieces in items:
        piece_list.extend(
            text[start:end] for start, end in zip(pieces[:, 0].tolist(), pieces[:, 1].tolist())
        )
    tokens = general(" ".join(piece_list))
    piece_starts = np.concatenate([item[4][:, 0] for item in items])
    piece_ends = np.concatenate([item[4][:, 1] for item in items])
    joined_starts = np.zeros(len(piece_list), dtype=np.int64)
    np.cumsum(piece_ends[:-1] - piece_starts[:-1] + 1, out=joined_starts[1:])
    piece = np.searchsorted(joined_starts, tokens.starts, side="right") - 1
    shifts = piece_starts[piece] - joined_starts[piece]
    general_ids = tokens.token_ids
    general_starts, general_ends = tokens.starts + shifts, tokens.ends + shifts
    # the general tokens of each text (pieces, hence tokens, come text after text)
    piece_bounds = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([item[4].shape[0] for item in items], out=piece_bounds[1:])
    token_bounds = np.searchsorted(piece, piece_bounds).tolist()
    results = []
    for number, (_, ids, starts, ends, pieces) in enumerate(items):
        lo, hi = token_bounds[number], token_bounds[number + 1]
        results.append(
            merge_pieces(
                ids, starts, ends, pieces,
                general_ids[lo:hi], general_starts[lo:hi], general_ends[lo:hi],
            )
        )
    return results
