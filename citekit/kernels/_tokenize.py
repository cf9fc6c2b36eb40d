"""numba kernel of :class:`~citekit.tokenizers.simple.SimpleTokenizer`'s fast path.

One pass over the text's code units finds the tokens and hashes their keys (FNV-1a, as
:func:`~citekit.tokenizers.simple.token_id` does in Python), so no Python object is made
per token. The kernel reads ASCII, and the non-ASCII characters that
``tokenizers/_kernel_chars.py`` gives kernel codes: typographic punctuation and the
punctuation of other scripts read as ASCII stand-ins, currency symbols read as codes above
127, and some 42,000 characters whose fold
is context-free: letters (``é``, ``ß``, ``ж``, ``ب``, ``한``) and script digits (``٣``)
inside words and numbers, Han, kana and Thai characters as tokens of their own (``東``;
a Thai one extended by the Thai combining marks right after it). Any other
character separates tokens and is counted, so that the caller knows whether the text
needs its general path. Imported with the tokenizer module, not with citekit, so that
importing citekit does not import numba. The rules match the general path;
``tests/text/test_tokenizer_simple.py`` checks the kernel against a plain-Python reference and
against the general path.

Everything the kernel needs to know about a code unit is in one ``uint32`` entry of a
65,536-entry table (:func:`unit_table`): its kernel code, its byte in a token key (the
case-folded ASCII letter or digit, 0 for any other character) and its character class. One
load per character, no branch on the configuration in the loop. A non-ASCII letter's key
has several bytes (with case-folding the two UTF-8 bytes of ``é`` for ``É``, ``ss`` for
``ß``): they are in a second table (:func:`letter_key_table`, also holding the keys of
digits and of tokens of their own), read when the letter ends a run of ASCII letters, so
that ASCII text costs what it did before the kernel read them.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._copy import copy_range
from citekit.kernels._hash import FNV_OFFSET_U64, FNV_PRIME_U64

__all__ = [
    "DIGIT",
    "ID_MASK",
    "LETTER",
    "MARK",
    "NUKTA",
    "NUKTA_BASE",
    "OTHER",
    "MAX_KEY_BYTES",
    "SINGLE",
    "TABLE_UNITS",
    "THAI",
    "THAI_MARK",
    "THAI_MARK_CLASSES",
    "id_table",
    "kernel_tokens",
    "kernel_tokens_many",
    "letter_key_table",
    "unit_table",
]

# Token ids: 64-bit FNV-1a of the key's UTF-8 bytes with the top bit cleared (so ids fit
# int64 and stay non-negative), computed the same way here and in Python
# (citekit.tokenizers.simple.token_id).
ID_MASK = (1 << 63) - 1
_MASK = np.uint64(ID_MASK)

# Kernel codes: ASCII characters are their own code, currency and other symbols codes from
# 128 (their ids given in the id table), and these the rest. The characters the kernel
# cannot read (OTHER) separate tokens; the pieces of the text around them take the
# tokenizer's general path.
OTHER = 255
# The non-ASCII letters the kernel reads (kernel_chars), in words; the kernel's key table
# holds the UTF-8 bytes of their keys.
LETTER = 254
# The non-ASCII decimal digits it reads (Arabic-Indic, Devanagari, full-width, ...): like
# letters, and digits to the number rules.
DIGIT = 253
# The characters it reads as tokens of their own (Han, Hiragana, Katakana), keys in the
# key table.
SINGLE = 252
# The combining marks it reads (Indic vowel signs and viramas, kernel_chars): inside a word
# right after a letter or another such mark, like a letter; anywhere else the kernel cannot
# read them (a mark after a space, a digit or punctuation joins the cluster before it).
MARK = 251
# The nuktas it reads (combining class 7): inside a word right after a letter, but not after
# the letters whose fold it would compose with or be reordered before (Devanagari न, र, ळ
# compose with the nukta; a fold ending in a mark of a higher class, as İ's does): those
# letters have a code of their own.
NUKTA = 250
NUKTA_BASE = 249
# The Thai characters it reads as tokens of their own (letters, vowels written as letters,
# ฯ ๆ ๏ ๚ ๛), which the Thai marks after them extend.
THAI = 248
# The Thai combining marks it reads (vowel signs above and below, tone marks, ...): right
# after a Thai character of THAI or another such mark, extending that token, unless
# NFKC would reorder it before the mark it follows (its combining class lower, not 0). Their
# codes are THAI_MARK + the rank of their combining class in THAI_MARK_CLASSES (so
# the kernel compares ranks); anywhere else the kernel cannot read them.
THAI_MARK_CLASSES = (0, 9, 103, 107)
THAI_MARK = 244

# Character classes: bits of an entry's third byte.
_WORD = 1  # letter or ASCII digit: part of a word or number
_DIGIT = 2  # ASCII digit
_SYMBOL = 4  # a token of its own ("$", "%", currency symbols)
_DIGIT_JOINER = 8  # "." and ",": inside a token between two digits
_WORD_JOINER = 16  # "'" and "-": inside a token between two letters or digits
_THOUSANDS = 32  # "," when thousands separators are left out of keys
_LETTER = 64  # a non-ASCII letter or digit: its key is in the letter key table
_SINGLE = 128  # a token of its own whose key is in the letter key table (Han, kana)
_MARK = 256  # a combining mark read only right after a letter or mark (key: letter key table)
_NUKTA = 512  # a mark (a nukta) read only right after a letter that is no nukta base
_NUKTA_BASE = 1024  # a letter after which a nukta is not read
_EXTENDED = 2048  # a token of its own that the Thai marks after it extend (Thai)
_THAI_MARK = 4096  # a Thai mark: read only right after a Thai character or Thai mark
_RANK_SHIFT = 13  # bits 13-14: the rank of a Thai mark's combining class (0 for class 0)
_STARTS_TOKEN = _WORD | _SYMBOL | _SINGLE
_CLASS_SHIFT = 16
_KEY_SHIFT = 8
# The most UTF-8 bytes a character's key may have: they fit in an int64 of the kernel's
# key table.
MAX_KEY_BYTES = 7
# The kernel's tables have an entry per code point below this (the Basic Multilingual
# Plane and the Supplementary Multilingual Plane, where the emoji are); the code points
# above read as U+FFFF, a noncharacter the kernel cannot read.
TABLE_UNITS = 0x20000

# Layout of the id table: symbol ids by kernel code, then the two words of the plural
# filter, then the plural currency ids, then their singular ids.
_PLURAL_FILTER = 256
_PLURALS = 258


def unit_table(
    unit_codes: np.ndarray, symbol_ids: np.ndarray, casefold: bool, fold_numbers: bool
) -> np.ndarray:
    """The kernel's entry for each code point of ``unit_codes`` (``uint32``, as many).

    Parameters
    ----------
    unit_codes : numpy.ndarray
        ``uint8``: the kernel code of each code point below its length (:data:`OTHER` for the
        characters the kernel cannot read, :data:`LETTER`, :data:`DIGIT` and
        :data:`SINGLE` for the non-ASCII letters, digits and tokens of their own it reads,
        whose keys are in :func:`letter_key_table`'s table).
    symbol_ids : numpy.ndarray
        ``int64[256]``: the id of the symbol token with each kernel code, 0 for the codes
        of characters that are no symbol.
    casefold : bool
        Whether keys hold ASCII letters lower-cased.
    fold_numbers : bool
        Whether a thousands separator is left out of a number's key.

    Returns
    -------
    numpy.ndarray
        Entries ``code | key << 8 | class << 16``: ``key`` is the byte an ASCII letter or
        digit adds to a token's key, 0 for other characters (non-ASCII letters have class
        ``_WORD | _LETTER`` and their key in :func:`letter_key_table`'s table).

    Examples
    --------
    >>> codes = np.full(65536, OTHER, dtype=np.uint8)
    >>> codes[:128] = np.arange(128)
    >>> codes[ord("ß")] = LETTER
    >>> table = unit_table(codes, np.zeros(256, np.int64), casefold=True, fold_numbers=True)
    >>> entry = int(table[ord("A")])  # code "A", key byte "a", class _WORD
    >>> chr(entry & 255), chr(entry >> 8 & 255), entry >> 16 == _WORD
    ('A', 'a', True)
    >>> int(table[ord("ß")]) >> 8 == (_WORD | _LETTER) << 8  # no key byte
    True
    >>> int(table[ord("é")]) == OTHER  # no code, no key, no class
    True
    """
    classes = np.zeros(256, dtype=np.uint32)
    digits = np.frombuffer(b"0123456789", dtype=np.uint8)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", np.uint8)
    classes[letters] = _WORD
    classes[digits] = _WORD | _DIGIT
    classes[ord(".")] = _DIGIT_JOINER
    classes[ord(",")] = _DIGIT_JOINER | (_THOUSANDS if fold_numbers else 0)
    classes[ord("'")] = classes[ord("-")] = _WORD_JOINER
    classes[symbol_ids != 0] = _SYMBOL
    classes[LETTER] = _WORD | _LETTER
    classes[DIGIT] = _WORD | _DIGIT | _LETTER
    classes[SINGLE] = _SINGLE
    classes[MARK] = _LETTER | _MARK
    classes[NUKTA] = _LETTER | _MARK | _NUKTA
    classes[NUKTA_BASE] = _WORD | _LETTER | _NUKTA_BASE
    classes[THAI] = _SINGLE | _EXTENDED
    for rank in range(len(THAI_MARK_CLASSES)):
        # (_MARK: outside a Thai token, the scan counts it as a character it cannot read)
        classes[THAI_MARK + rank] = _MARK | _THAI_MARK | rank << _RANK_SHIFT
    keys = np.zeros(256, dtype=np.uint32)
    keys[letters] = letters
    if casefold:
        keys[letters[26:]] += 32
    keys[digits] = digits
    return (
        unit_codes.astype(np.uint32)
        | keys[unit_codes] << _KEY_SHIFT
        | classes[unit_codes] << _CLASS_SHIFT
    )


def letter_key_table(letter_keys: dict[int, bytes]) -> np.ndarray:
    """The key bytes of the non-ASCII letters the kernel reads, by code unit.

    Parameters
    ----------
    letter_keys : dict of int to bytes
        Code unit -> the UTF-8 bytes that letter adds to a token's key (1 to
        :data:`MAX_KEY_BYTES`, none of them 0).

    Returns
    -------
    numpy.ndarray
        ``int64[TABLE_UNITS]``: the key bytes, the first one lowest; 0 for other code
        points.

    Raises
    ------
    ValueError
        If a key is empty, too long or holds a 0 byte.

    Examples
    --------
    >>> keys = letter_key_table({ord("ß"): b"ss", ord("É"): "é".encode()})
    >>> int(keys[ord("ß")]).to_bytes(2, "little"), int(keys[ord("É")]) == 0xA9C3
    (b'ss', True)
    """
    table = np.zeros(TABLE_UNITS, dtype=np.int64)
    for unit, key in letter_keys.items():
        if not 0 < len(key) <= MAX_KEY_BYTES or 0 in key:
            raise ValueError(
                f"letter_keys: the key of unit {unit} must be 1 to {MAX_KEY_BYTES} non-zero"
                f" bytes, got {key!r}"
            )
        table[unit] = int.from_bytes(key, "little")
    return table


def id_table(
    symbol_ids: np.ndarray, plural_ids: np.ndarray, singular_ids: np.ndarray
) -> np.ndarray:
    """The kernel's ids: symbols, and plural currency words with their singulars' ids.

    Parameters
    ----------
    symbol_ids : numpy.ndarray
        ``int64[256]``: the id of the symbol with each kernel code (0 for other codes).
    plural_ids, singular_ids : numpy.ndarray
        A word whose id is ``plural_ids[k]`` gets ``singular_ids[k]`` instead.

    Returns
    -------
    numpy.ndarray
        ``int64``: ``symbol_ids``, a filter of two 64-bit words (bit ``id & 63`` of the
        first and bit ``id >> 6 & 63`` of the second set for each plural id, so that all
        but about one word in forty skip the comparison with every plural),
        ``plural_ids``, ``singular_ids``.

    Examples
    --------
    >>> table = id_table(np.zeros(256, np.int64), np.array([65, 130]), np.array([1, 2]))
    >>> table[256:258].tolist(), table[258:].tolist()  # 65 = 1 * 64 + 1, 130 = 2 * 64 + 2
    ([6, 6], [65, 130, 1, 2])
    """
    plural_filter = [0, 0]
    for plural in plural_ids.tolist():
        plural_filter[0] |= 1 << (plural & 63)
        plural_filter[1] |= 1 << (plural >> 6 & 63)
    # as the int64 with the same bits
    words = [word - (1 << 64) if word >= 1 << 63 else word for word in plural_filter]
    return np.concatenate([symbol_ids, np.array(words), plural_ids, singular_ids]).astype(np.int64)


@jit
def _entry(units: np.ndarray, position: int, table: np.ndarray) -> int:
    unit = units[position]
    # uint32 units hold whole code points; those above the table read as U+FFFF (not a
    # character, so OTHER)
    return table[unit if unit < table.shape[0] else 65535]


@jit
def _is_digit(units: np.ndarray, position: int, table: np.ndarray) -> bool:
    return (_entry(units, position, table) >> _CLASS_SHIFT) & _DIGIT != 0


@jit
def _after_letter(units: np.ndarray, position: int, table: np.ndarray, kind: int) -> bool:
    """Whether the mark at ``position`` (inside a word; ``kind`` its class) continues the
    word: right after a letter (not a digit) or another mark; a nukta only right after a
    letter that is no nukta base."""
    before = _entry(units, position - 1, table) >> _CLASS_SHIFT
    letter = before & _WORD != 0 and before & _DIGIT == 0
    if kind & _NUKTA:
        return letter and before & _NUKTA_BASE == 0
    return letter or before & _MARK != 0


@jit
def _thousands_comma(units: np.ndarray, position: int, table: np.ndarray) -> bool:
    """The ``normalize.THOUSANDS_COMMA_RE`` rule: a comma before exactly three digits."""
    n_units = units.shape[0]
    if position + 3 >= n_units:
        return False
    for offset in range(1, 4):
        if not _is_digit(units, position + offset, table):
            return False
    return position + 4 >= n_units or not _is_digit(units, position + 4, table)


@jit
def _scan(units, table, ids, letter_keys, out, capacity, count):
    """Append the tokens of ``units`` to ``out`` (three regions of ``capacity`` tokens:
    ids, starts, ends; ``count`` used), growing it as needed. Returns ``(out, capacity,
    count, n_other)``."""
    n_units = units.shape[0]
    n_plurals = (ids.shape[0] - _PLURALS) // 2
    plural_filter, plural_filter_high = ids[_PLURAL_FILTER], ids[_PLURAL_FILTER + 1]
    n_other = 0
    # (int64, not a literal 0: numba would first infer the literal for the loop's
    # position and compile the functions it is passed to once more for it)
    position = np.int64(0)
    while True:
        entry = 0
        while position < n_units:
            entry = _entry(units, position, table)
            if (entry >> _CLASS_SHIFT) & _STARTS_TOKEN:
                break
            # code OTHER (no key, no class), or a mark outside a word
            if entry == OTHER or (entry >> _CLASS_SHIFT) & _MARK:
                n_other += 1
            position += 1
        if position >= n_units:
            break
        if count == capacity:
            # a long text: room for a token per 4 characters at once, then doubling
            larger_capacity = max(2 * capacity + 16, n_units // 4 + 16)
            larger = np.empty(3 * larger_capacity, dtype=np.int64)
            for region in range(3):
                copy_range(larger, region * larger_capacity, out, region * capacity, count)
            out, capacity = larger, larger_capacity
        start = position
        if (entry >> _CLASS_SHIFT) & _SYMBOL:  # a symbol is a token of its own
            token = ids[entry & 255]
            position += 1
        elif (entry >> _CLASS_SHIFT) & _SINGLE:  # so is a Han or kana character
            value = FNV_OFFSET_U64
            key = letter_keys[units[position]]
            while key != 0:
                value = (value ^ np.uint64(key & 255)) * FNV_PRIME_U64
                key >>= 8
            position += 1
            if (entry >> _CLASS_SHIFT) & _EXTENDED:
                # a Thai character: the Thai marks right after it extend its token (key: a
                # space and the mark), but one NFKC would move before the mark it follows
                # (a lower class than that mark's, neither 0)
                rank = 0
                while position < n_units:
                    kind = _entry(units, position, table) >> _CLASS_SHIFT
                    if not kind & _THAI_MARK:
                        break
                    mark_rank = (kind >> _RANK_SHIFT) & 3
                    if mark_rank != 0 and rank > mark_rank:
                        break
                    key = letter_keys[units[position]]
                    while key != 0:
                        value = (value ^ np.uint64(key & 255)) * FNV_PRIME_U64
                        key >>= 8
                    rank = mark_rank
                    position += 1
            token = np.int64(value & _MASK)  # no plural currency word
        else:
            value = FNV_OFFSET_U64
            while True:
                # the ASCII letters and digits of a run
                while position < n_units:
                    key = (_entry(units, position, table) >> _KEY_SHIFT) & 255
                    if key == 0:
                        break
                    value = (value ^ np.uint64(key)) * FNV_PRIME_U64
                    position += 1
                # a non-ASCII letter (key byte 0, so that the loop above tests nothing
                # more per ASCII character) adds its key's bytes and continues the run
                if position < n_units:
                    entry = _entry(units, position, table)
                    kind = entry >> _CLASS_SHIFT
                    if kind & _LETTER and (
                        not kind & _MARK or _after_letter(units, position, table, kind)
                    ):
                        key = letter_keys[units[position]]
                        while key != 0:
                            value = (value ^ np.uint64(key & 255)) * FNV_PRIME_U64
                            key >>= 8
                        position += 1
                        continue
                # a joiner stays inside between two digits ('.', ',') or between two
                # letters or digits ("'", '-'); the character before it is one (the run)
                if position + 1 >= n_units:
                    break
                entry = _entry(units, position, table)
                joiner = entry >> _CLASS_SHIFT
                after = _entry(units, position + 1, table) >> _CLASS_SHIFT
                if joiner & _DIGIT_JOINER:
                    if not (after & _DIGIT and _is_digit(units, position - 1, table)):
                        break
                    if not (joiner & _THOUSANDS and _thousands_comma(units, position, table)):
                        value = (value ^ np.uint64(entry & 255)) * FNV_PRIME_U64
                elif joiner & _WORD_JOINER and after & _WORD:
                    value = (value ^ np.uint64(entry & 255)) * FNV_PRIME_U64
                else:
                    break
                position += 1
            token = np.int64(value & _MASK)
            if (plural_filter >> (token & 63)) & (plural_filter_high >> (token >> 6 & 63)) & 1:
                for index in range(n_plurals):
                    if token == ids[_PLURALS + index]:
                        token = ids[_PLURALS + n_plurals + index]
        out[count] = token
        out[capacity + count] = start
        out[2 * capacity + count] = position
        count += 1
    return out, capacity, count, n_other


@jit
def kernel_tokens(
    units: np.ndarray,
    table: np.ndarray,
    ids: np.ndarray,
    letter_keys: np.ndarray,
    scratch: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Tokens of a text given as one code unit per character, and its unreadable characters.

    ``units`` (``uint8``, ``uint16`` or ``uint32``) hold one character each; ``table`` is
    :func:`unit_table`'s, ``ids`` :func:`id_table`'s, ``letter_keys``
    :func:`letter_key_table`'s. ``scratch`` (``int64``, any length, reused across calls so
    that the per-call buffer needs no fresh memory) holds three regions of
    ``len(scratch) // 3`` tokens while they are found; a larger buffer is allocated when a
    text has more tokens (one token per four characters, then doubled as needed).

    Returns ``(ids, starts, ends, n_other)``: three ``int64`` arrays (views of one buffer)
    and the number of characters whose code is :data:`OTHER` (read as spaces).
    """
    out, capacity, count, n_other = _scan(
        units, table, ids, letter_keys, scratch, scratch.shape[0] // 3, np.int64(0)
    )
    token_ids, starts, ends = _regions(out, capacity, count, out is not scratch)
    return token_ids, starts, ends, n_other


@jit
def kernel_tokens_many(
    units: np.ndarray,
    text_starts: np.ndarray,
    table: np.ndarray,
    ids: np.ndarray,
    letter_keys: np.ndarray,
    scratch: np.ndarray,
    views: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`kernel_tokens` of several texts in one call.

    Text ``t`` is ``units[text_starts[t]:text_starts[t + 1]]``. Returns ``(ids, starts,
    ends, token_offsets, n_other)``: the tokens of every text, concatenated (offsets
    relative to their text; text ``t`` has tokens ``token_offsets[t]:token_offsets[t +
    1]``), and per text the number of characters the kernel cannot read. With ``views``
    the result is views of the buffer holding the tokens, ``scratch`` included (a buffer
    the caller allocated for this result); without, a buffer grown by this call if at
    least half full (as in :func:`kernel_tokens`), else a copy (the scratch is reused).
    """
    n_texts = text_starts.shape[0] - 1
    token_offsets = np.zeros(n_texts + 1, dtype=np.int64)
    n_other = np.zeros(n_texts, dtype=np.int64)
    out = scratch
    capacity = scratch.shape[0] // 3
    count = np.int64(0)  # (not a literal: see _scan)
    for text in range(n_texts):
        out, capacity, count, n_other[text] = _scan(
            units[text_starts[text] : text_starts[text + 1]],
            table,
            ids,
            letter_keys,
            out,
            capacity,
            count,
        )
        token_offsets[text + 1] = count
    if views:
        token_ids = out[:count]
        starts = out[capacity : capacity + count]
        ends = out[2 * capacity : 2 * capacity + count]
    else:
        token_ids, starts, ends = _regions(out, capacity, count, out is not scratch)
    return token_ids, starts, ends, token_offsets, n_other


@jit
def _regions(out, capacity, count, own_buffer):
    """The three regions of a scan's output buffer (``count`` entries each, ``capacity``
    apart). A buffer of this call (``own_buffer``), at least half full, is the result
    itself: a copy would add its size to the peak memory of a long text."""
    if own_buffer and 2 * count >= capacity:
        tokens, stride = out, capacity
    else:
        tokens, stride = np.empty(3 * count, dtype=np.int64), count
        for region in range(3):
            copy_range(tokens, region * count, out, region * capacity, count)
    return tokens[:count], tokens[stride : stride + count], tokens[2 * stride : 2 * stride + count]
