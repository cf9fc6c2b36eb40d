"""Span clean-up shared by the model tokenizer wrappers (Hugging Face, tiktoken).

Subword tokenizers report spans that citekit cannot use as they are: a byte-level token
can hold part of a character (two tokens then claim the same character), a normalizer can
expand one character into several tokens (``ﬁ`` -> ``f`` ``##i``), and a token made only
of characters the normalizer inserted covers no character at all. The rules here turn
such output into spans that are non-empty, ordered and non-overlapping:

1. Tokens with an empty span (``start >= end``) carry no character of the text and are
   dropped.
2. Tokens whose spans overlap, directly or through a chain, are merged into one token
   covering the union of their spans. Its id is a stable 63-bit hash of the merged ids
   (in order) with bit 62 set, so it never equals a vocabulary id and the same run of
   model tokens always gives the same id, in any process.

Before that, the model's unknown token (``[UNK]``, ``<unk>``), which stands for any
characters the vocabulary lacks, gets an id made of its own characters
(:func:`unknown_token_ids`: FNV-1a of their code points, in the range from
:data:`UNKNOWN_ID_FLAG` to :data:`MERGED_ID_FLAG`), so it matches only the same
characters: a Thai word the vocabulary lacks no longer matches an Ethiopic one. Byte
fallback needs nothing more: the byte tokens of a character share its span and are
merged (rule 2) into an id of their bytes, in order.

Whitespace-insensitive tokenization (the wrappers' default) additionally reads the text as
the model would if every whitespace character were a space and the text began with one
(:func:`whitespace_canonical`). A word then becomes the same tokens whether it opens the
text, follows a space or follows a line break (byte-level BPE otherwise gives ``The`` and
`` The`` different ids, so an exact copy would lose its first word). Then:

3. spans are trimmed of surrounding whitespace, and tokens made only of whitespace are
   dropped (:func:`trim_whitespace`): alignment ignores whitespace, and a sentence's
   tokens then lie inside the sentence's characters.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = [
    "MERGED_ID_FLAG",
    "UNKNOWN_ID_FLAG",
    "merged_token_id",
    "unknown_token_ids",
    "replace_surrogates",
    "clean_spans",
    "whitespace_canonical",
    "trim_whitespace",
    "finish_tokens",
]

#: Bit set in every id made by merging tokens; vocabulary ids are far below it.
MERGED_ID_FLAG = 1 << 62
_MERGED_ID_MASK = MERGED_ID_FLAG - 1
#: Bit set (and :data:`MERGED_ID_FLAG` clear) in the ids of unknown tokens.
UNKNOWN_ID_FLAG = 1 << 61
_UNKNOWN_ID_MASK = UNKNOWN_ID_FLAG - 1

#: Every code point for which ``str.isspace()`` is true (tests check the list is complete).
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_TO_SPACE = str.maketrans(WHITESPACE, " " * len(WHITESPACE))
# str.translate is fast on ASCII text only; a regex replaces faster elsewhere
_OTHER_WHITESPACE_RE = re.compile("[" + re.escape(WHITESPACE.replace(" ", "")) + "]")


def _mix64(values: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer on uint64 arrays (wrapping arithmetic, platform independent)."""
    values = values + np.uint64(0x9E3779B97F4A7C15)
    values = (values ^ (values >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    values = (values ^ (values >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


def _merged_ids(
    token_ids: np.ndarray, group_first: np.ndarray, group_sizes: np.ndarray
) -> np.ndarray:
    """Ids of merged groups: hash of (id, position in group) pairs, summed per group.

    ``token_ids[group_first[g] : group_first[g] + group_sizes[g]]`` is group ``g``.
    """
    n_tokens = token_ids.shape[0]
    group_of_token = np.repeat(np.arange(group_first.shape[0]), group_sizes)
    position = (np.arange(n_tokens, dtype=np.int64) - group_first[group_of_token]).astype(np.uint64)
    # uint64 array arithmetic wraps modulo 2**64 (no overflow warnings for arrays).
    # Key each id by its position (multiply-xorshift), sum per group, then mix fully.
    keyed = token_ids.astype(np.uint64) ^ (position * np.uint64(0xD6E8FEB86659FD93))
    keyed *= np.uint64(0x9E3779B97F4A7C15)
    keyed ^= keyed >> np.uint64(29)
    summed = np.add.reduceat(keyed, group_first) if n_tokens else keyed
    digest = _mix64(summed ^ group_sizes.astype(np.uint64))
    return (digest & np.uint64(_MERGED_ID_MASK)).astype(np.int64) | np.int64(MERGED_ID_FLAG)


def merged_token_id(token_ids: np.ndarray) -> int:
    """Stable id for a run of model token ids merged into one token.

    It depends on the ids and their order only (integer hashing, the same in every
    process and on every platform) and always has :data:`MERGED_ID_FLAG` set.

    Examples
    --------
    >>> import numpy as np
    >>> a = merged_token_id(np.array([15722, 229], dtype=np.int64))
    >>> a == merged_token_id(np.array([15722, 229], dtype=np.int64)), a >= MERGED_ID_FLAG
    (True, True)
    >>> a == merged_token_id(np.array([229, 15722], dtype=np.int64))
    False
    """
    run = np.ascontiguousarray(token_ids, dtype=np.int64)
    sizes = np.array([run.shape[0]], dtype=np.int64)
    return int(_merged_ids(run, np.zeros(1, dtype=np.int64), sizes)[0])


def unknown_token_ids(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Ids of unknown tokens made of their characters ``text[starts[k]:ends[k]]``.

    FNV-1a (``citekit.kernels._hash``) of the characters' code points, lone surrogates
    included, in 61 bits with :data:`UNKNOWN_ID_FLAG` set: the same characters give the
    same id in every process, and an unknown token never takes a vocabulary id or a
    merged-token id.

    Examples
    --------
    >>> import numpy as np
    >>> text = "ሰላም ສະບາຍ ሰላም"
    >>> ids = unknown_token_ids(text, np.array([0, 4, 10]), np.array([3, 9, 13]))
    >>> bool(ids[0] == ids[2]), bool(ids[0] == ids[1]), bool(ids[1] >= UNKNOWN_ID_FLAG)
    (True, False, True)
    """
    from citekit.kernels._highlight import hash_spans

    # (a writable uint32 array: the signature the highlighter compiles the kernel for)
    pool = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).copy()
    hashes = hash_spans(
        pool,
        np.ascontiguousarray(starts, dtype=np.int64),
        np.ascontiguousarray(ends, dtype=np.int64),
    )
    return (hashes & np.uint64(_UNKNOWN_ID_MASK)).astype(np.int64) | np.int64(UNKNOWN_ID_FLAG)


def replace_surrogates(text: str) -> str:
    """Replace lone surrogate code points (not encodable as UTF-8) by U+FFFD.

    One code point is replaced by one code point, so offsets into the result are
    offsets into ``text``. Text without surrogates is returned unchanged.

    Examples
    --------
    >>> replace_surrogates("a\\ud800b")
    'a\\ufffdb'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def clean_spans(
    token_ids: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop empty spans and merge overlapping ones (the two rules of this module).

    Parameters
    ----------
    token_ids, starts, ends : numpy.ndarray of int64
        One entry per token, in the order the tokenizer produced them.

    Returns
    -------
    tuple of numpy.ndarray
        ``(token_ids, starts, ends)`` with non-empty, ordered, non-overlapping spans.

    Examples
    --------
    >>> import numpy as np
    >>> ids, s, e = clean_spans(np.array([5, 6, 7, 8]), np.array([0, 2, 2, 3]),
    ...                         np.array([1, 3, 3, 3]))
    >>> s.tolist(), e.tolist(), int(ids[0]), bool(ids[1] >= MERGED_ID_FLAG)
    ([0, 2], [1, 3], 5, True)
    """
    keep = starts < ends
    if not keep.all():
        token_ids, starts, ends = token_ids[keep], starts[keep], ends[keep]
    n_tokens = token_ids.shape[0]
    if n_tokens < 2:
        return token_ids, starts, ends
    # A cut before token i is valid iff every earlier token ends at or before the start
    # of every later one; checking against the running max/min makes the rule hold for
    # chains of overlaps and for tokens reported out of order.
    prefix_max_end = np.maximum.accumulate(ends)
    suffix_min_start = np.minimum.accumulate(starts[::-1])[::-1]
    cut = prefix_max_end[:-1] <= suffix_min_start[1:]
    if cut.all():
        return token_ids, starts, ends
    group_first = np.concatenate(([0], np.flatnonzero(cut) + 1))
    group_last = np.append(group_first[1:] - 1, n_tokens - 1)
    group_sizes = group_last - group_first + 1
    # by the cut rule, a group's union is [suffix min start at its first token,
    # prefix max end at its last token)
    merged_starts = suffix_min_start[group_first]
    merged_ends = prefix_max_end[group_last]
    merged_ids = token_ids[group_first]
    multi = group_sizes > 1
    multi_sizes = group_sizes[multi]
    multi_first = np.concatenate(([0], np.cumsum(multi_sizes)[:-1]))
    multi_tokens = token_ids[np.repeat(multi, group_sizes)]
    merged_ids[multi] = _merged_ids(multi_tokens, multi_first, multi_sizes)
    return merged_ids, merged_starts, merged_ends


def whitespace_canonical(text: str) -> str:
    """``" " + text`` with every whitespace character replaced by a space.

    Character ``i`` of ``text`` is character ``i + 1`` of the result.

    Examples
    --------
    >>> whitespace_canonical("a\\n\\tb\\u3000c")
    ' a  b c'
    """
    if text.isascii():
        return " " + text.translate(_TO_SPACE)
    return " " + _OTHER_WHITESPACE_RE.sub(" ", text)


def trim_whitespace(
    canonical: str, token_ids: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trim spans to their non-space characters; drop tokens that are only spaces.

    ``canonical`` is a :func:`whitespace_canonical` text (its only whitespace is ``" "``)
    and the spans index it.

    Examples
    --------
    >>> import numpy as np
    >>> ids, s, e = trim_whitespace(" ab  c", np.array([1, 2, 3]), np.array([0, 3, 4]),
    ...                             np.array([3, 4, 6]))
    >>> ids.tolist(), s.tolist(), e.tolist()
    ([1, 3], [1, 5], [3, 6])
    """
    if token_ids.shape[0] == 0:
        return token_ids, starts, ends
    if canonical.isascii():
        codes = np.frombuffer(canonical.encode("ascii"), dtype=np.uint8)
    else:
        codes = np.frombuffer(canonical.encode("utf-32-le"), dtype=np.uint32)
    if not ((codes[starts] == 32) | (codes[ends - 1] == 32)).any():
        return token_ids, starts, ends  # e.g. WordPiece: spans never hold a space
    is_text = codes != 32
    text_positions = np.flatnonzero(is_text)
    # text characters before each position: a span holds text[before[s]:before[e]]
    text_before = np.zeros(codes.shape[0] + 1, dtype=np.int64)
    np.cumsum(is_text, out=text_before[1:])
    first_text, end_text = text_before[starts], text_before[ends]
    keep = first_text < end_text
    trimmed_starts = text_positions[first_text[keep]]
    trimmed_ends = text_positions[end_text[keep] - 1] + 1
    return token_ids[keep], trimmed_starts, trimmed_ends


def finish_tokens(
    tokenized_text: str,
    token_ids: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    *,
    canonical: bool,
    text: str | None = None,
    unknown_id: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply the module's rules to a model's tokens of ``tokenized_text``.

    With ``canonical``, ``tokenized_text`` is a :func:`whitespace_canonical` text: spans
    are trimmed (rule 3) and shifted back onto the original text. Tokens of the model's
    ``unknown_id`` get ids of their characters in ``text`` (the text as passed, which
    ``tokenized_text`` was made from: its lone surrogates are still there).
    """
    if unknown_id is not None and text is not None:
        unknown = token_ids == unknown_id
        if unknown.any():
            shift = 1 if canonical else 0  # (the space whitespace_canonical puts first)
            token_ids = token_ids.copy()
            token_ids[unknown] = unknown_token_ids(
                text,
                np.clip(starts[unknown] - shift, 0, len(text)),
                np.clip(ends[unknown] - shift, 0, len(text)),
            )
    token_ids, starts, ends = clean_spans(token_ids, starts, ends)
    if canonical:
        token_ids, starts, ends = trim_whitespace(tokenized_text, token_ids, starts, ends)
        starts, ends = starts - 1, ends - 1
    return token_ids, starts, ends
