"""numba kernel of :class:`~citekit.tokenizers.simple.SimpleTokenizer`'s ASCII path.

One pass over the ASCII codes finds the tokens and hashes their keys (FNV-1a, as
:func:`~citekit.tokenizers.simple.token_id` does in Python), so no Python object is made
per token. Imported only when the first ASCII text is tokenized, so that importing
citekit (or the tokenizer module) does not import numba. The rules match the general
path; ``tests/test_tokenizer_simple.py`` checks the kernel against a plain-Python
reference and against the general path.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.tokenizers.simple import _FNV_OFFSET, _FNV_PRIME, _ID_MASK

__all__ = ["ascii_tokens"]

_OFFSET = np.uint64(_FNV_OFFSET)
_PRIME = np.uint64(_FNV_PRIME)
_MASK = np.uint64(_ID_MASK)

_COMMA, _PERIOD, _APOSTROPHE, _HYPHEN = 44, 46, 39, 45


@jit
def _is_digit(code: int) -> bool:
    return 48 <= code <= 57


@jit
def _is_alnum(code: int) -> bool:
    return 48 <= code <= 57 or 97 <= code <= 122 or 65 <= code <= 90


@jit
def _thousands_comma(codes: np.ndarray, position: int) -> bool:
    """The ``normalize.THOUSANDS_COMMA_RE`` rule: a comma before exactly three digits."""
    n_codes = codes.shape[0]
    if position + 3 >= n_codes:
        return False
    for offset in range(1, 4):
        if not _is_digit(codes[position + offset]):
            return False
    return position + 4 >= n_codes or not _is_digit(codes[position + 4])


@jit
def _grow(values: np.ndarray) -> np.ndarray:
    larger = np.empty(2 * values.shape[0], dtype=values.dtype)
    larger[: values.shape[0]] = values
    return larger


@jit
def ascii_tokens(
    codes: np.ndarray,
    casefold: bool,
    fold_numbers: bool,
    symbol_ids: np.ndarray,
    plural_ids: np.ndarray,
    singular_ids: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token ids, starts and ends of ASCII ``codes`` (uint8; codes above 127 are symbols).

    ``symbol_ids[code]`` (256 entries) is the id of a one-character symbol token (``$``,
    ``%``, and non-ASCII currency symbols, which the caller gives codes above 127) or 0;
    a word whose id is ``plural_ids[k]`` gets ``singular_ids[k]`` instead.
    """
    n_codes = codes.shape[0]
    capacity = n_codes // 4 + 16
    ids = np.empty(capacity, dtype=np.int64)
    starts = np.empty(capacity, dtype=np.int64)
    ends = np.empty(capacity, dtype=np.int64)
    count = 0
    position = 0
    while position < n_codes:
        code = codes[position]
        if not _is_alnum(code) and symbol_ids[code] == 0:
            position += 1
            continue
        if count == ids.shape[0]:
            ids, starts, ends = _grow(ids), _grow(starts), _grow(ends)
        start = position
        if symbol_ids[code] != 0:  # a symbol is a token of its own
            ids[count] = symbol_ids[code]
            position += 1
        else:
            value = _OFFSET
            while True:
                code = codes[position]
                if casefold and 65 <= code <= 90:
                    code += 32
                if not (code == _COMMA and fold_numbers and _thousands_comma(codes, position)):
                    value = (value ^ np.uint64(code)) * _PRIME
                position += 1
                if position >= n_codes:
                    break
                code = codes[position]
                if _is_alnum(code):
                    continue
                # a joiner stays inside between two digits ('.', ',') or between two
                # letters or digits ("'", '-')
                if position + 1 < n_codes:
                    before, after = codes[position - 1], codes[position + 1]
                    if (
                        (code == _PERIOD or code == _COMMA)
                        and _is_digit(before)
                        and _is_digit(after)
                    ):
                        continue
                    if (
                        (code == _APOSTROPHE or code == _HYPHEN)
                        and _is_alnum(before)
                        and _is_alnum(after)
                    ):
                        continue
                break
            token = np.int64(value & _MASK)
            for index in range(plural_ids.shape[0]):
                if token == plural_ids[index]:
                    token = singular_ids[index]
            ids[count] = token
        starts[count] = start
        ends[count] = position
        count += 1
    return ids[:count].copy(), starts[:count].copy(), ends[:count].copy()
