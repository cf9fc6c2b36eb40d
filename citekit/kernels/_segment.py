"""numba kernel of :class:`~citekit.segment.SentenceSegmenter`.

One pass over the code points of a text finds the blocks (between line breaks, or blank
lines), skips a list marker at the start of each, finds the terminator runs, decides which
end a sentence and writes the trimmed spans, so no Python object is made per sentence.
The rules are those described in :mod:`citekit.segment`; ``tests/naive.py`` keeps the
regular-expression implementation they were first written as, and
``tests/kernels/test_segment_kernel.py`` checks that both give the same spans.

Everything the kernel asks about a character is a bit of one table: the characters of the
rules (terminators, closers, openers, bullets, line breaks: the constants of
:mod:`citekit.segment`) and the Unicode properties some rules use (``str.isspace``,
``islower``, ``isupper``, ``isalpha``, the letters of ``[^\\W\\d_]``, the digits of
``\\d``, ``str.lower`` and the final-sigma context it depends on). Python fills the table
from its own ``str`` methods, so the kernel agrees with Python on every character: one
entry per code point of the Basic Multilingual Plane, a sorted side table above it.
Properties are computed the first time a text needs them: when the kernel meets a
character it does not know yet it says so, and the wrapper learns every new character of
that text and runs the kernel again (the first result is thrown away).

Abbreviations are matched by a 64-bit hash (FNV-1a over the lower-cased code points)
looked up by binary search in the sorted hashes of the keys; a hit is confirmed by
comparing the code points, so a collision never changes a result.
"""

from __future__ import annotations

import threading
from typing import Iterable

import numpy as np

from citekit._code_units import code_units
from citekit._jit import jit
from citekit.kernels._copy import copy_rows
from citekit.kernels._hash import FNV_OFFSET_U64, FNV_PRIME_U64, fnv1a

__all__ = [
    "abbreviation_tables",
    "code_points",
    "segment_code_points",
    "segment_code_points_many",
    "warmup",
]

# The characters of the segmentation rules (described in citekit.segment).
# A line break ends a block: these, a following \n taken with them (\r\n, blank lines).
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
# list markers that are not numbers or letters
_BULLETS = "-*+•‣◦▪▫–—·"
# closing quotes and brackets after a terminator belong to the sentence
_CLOSERS = "\"'”’»)]}」』】〉》〕）］｝›"
# Terminators: every character of Unicode's Sentence_Terminal property (PropList.txt,
# Unicode 16; tests/text/test_segment_scripts.py checks the list against the regex
# module's \p{Sentence_Terminal}), and the ellipsis. Those of Latin punctuation (the
# ASCII ones, their doubled, reversed, small and full-width forms, the one-dot leader)
# need a following space, as a period inside a number or an abbreviation has none; the
# other scripts' end a sentence by themselves (those scripts do not put a space after
# them, or write no spaces at all).
_SPACED_TERMINATORS = (
    ".?!…"
    "\u2024"  # one dot leader (NFKC: ".")
    "\u203c\u203d\u2047\u2048\u2049"  # double exclamation, interrobang, ?? ?! !?
    "\u2e2e\u2e3c\u2e53\u2e54"  # reversed question, stenographic full stop, medieval ! ?
    "\ufe52\uff0e"  # small and full-width full stops (decimal points in full-width numbers)
)
_UNSPACED_TERMINATORS = (
    "。！？।॥؟۔"  # CJK, Devanagari, Arabic and Urdu (the first ones citekit knew)
    "\u0589"  # Armenian full stop
    "\u061d\u061e"  # Arabic end of text, triple dot
    "\u0700\u0701\u0702"  # Syriac
    "\u07f9"  # NKo
    "\u0837\u0839\u083d\u083e"  # Samaritan
    "\u104a\u104b"  # Myanmar
    "\u1362\u1367\u1368"  # Ethiopic
    "\u166e"  # Canadian Syllabics
    "\u1735\u1736"  # Philippine
    "\u17d4\u17d5"  # Khmer
    "\u1803\u1809"  # Mongolian
    "\u1944\u1945"  # Limbu
    "\u1aa8\u1aa9\u1aaa\u1aab"  # Tai Tham
    "\u1b4e\u1b4f\u1b5a\u1b5b\u1b5e\u1b5f\u1b7d\u1b7e\u1b7f"  # Balinese
    "\u1c3b\u1c3c"  # Lepcha
    "\u1c7e\u1c7f"  # Ol Chiki
    "\u2cf9\u2cfa\u2cfb"  # Coptic (Old Nubian)
    "\ua4ff"  # Lisu
    "\ua60e\ua60f"  # Vai
    "\ua6f3\ua6f7"  # Bamum
    "\ua876\ua877"  # Phags-pa
    "\ua8ce\ua8cf"  # Saurashtra
    "\ua92f"  # Kayah Li
    "\ua9c8\ua9c9"  # Javanese
    "\uaa5d\uaa5e\uaa5f"  # Cham
    "\uaaf0\uaaf1\uabeb"  # Meetei Mayek
    "\ufe12\ufe15\ufe16\ufe56\ufe57\uff61"  # CJK vertical, small and half-width forms
    "\U00010a56\U00010a57"  # Kharoshthi
    "\U00010f55\U00010f56\U00010f57\U00010f58\U00010f59"  # Sogdian
    "\U00010f86\U00010f87\U00010f88\U00010f89"  # Old Uyghur
    "\U00011047\U00011048"  # Brahmi
    "\U000110be\U000110bf\U000110c0\U000110c1"  # Kaithi
    "\U00011141\U00011142\U00011143"  # Chakma
    "\U000111c5\U000111c6\U000111cd\U000111de\U000111df"  # Sharada
    "\U00011238\U00011239\U0001123b\U0001123c"  # Khojki
    "\U000112a9"  # Multani
    "\U000113d4\U000113d5"  # Tulu-Tigalari
    "\U0001144b\U0001144c"  # Newa
    "\U000115c2\U000115c3"  # Siddham
    + "".join(map(chr, range(0x115C9, 0x115D8)))  # Siddham end of text and section marks
    + "\U00011641\U00011642"  # Modi
    "\U0001173c\U0001173d\U0001173e"  # Ahom
    "\U00011944\U00011946"  # Dives Akuru
    "\U00011a42\U00011a43"  # Zanabazar Square
    "\U00011a9b\U00011a9c"  # Soyombo
    "\U00011c41\U00011c42"  # Bhaiksuki
    "\U00011ef7\U00011ef8"  # Makasar
    "\U00011f43\U00011f44"  # Kawi
    "\U00016a6e\U00016a6f"  # Mro
    "\U00016af5"  # Bassa Vah
    "\U00016b37\U00016b38\U00016b44"  # Pahawh Hmong
    "\U00016d6e\U00016d6f"  # Kirat Rai
    "\U00016e98"  # Medefaidrin
    "\U0001bc9f"  # Duployan
    "\U0001da88"  # SignWriting
)
# opening quotes and brackets before an abbreviation ("(e.g. ...") are not part of it
_OPENERS = "\"'“‘«([{"

# ---------------------------------------------------------------------------------------
# character table: one int64 per code point
#
# bits 0-7: Unicode properties (valid unless _UNKNOWN), bits 8-14: the rules' own
# characters (valid for every code point of the table), bit 16: _UNKNOWN (the properties
# are not computed yet, or the code point is above the BMP), bits 17-18: how
# many code points str.lower gives (1 or 2; 3 marks the capital sigma, whose lower case
# depends on its neighbours), bits 19-39 and 40-60: those code points.
_SPACE = 1 << 0  # str.isspace, regex \s
_LOWER = 1 << 1  # str.islower, but for Georgian's everyday letters (_UNCAPITALIZED)
_UPPER = 1 << 2  # str.isupper
_ALPHA = 1 << 3  # str.isalpha
_WORD_LETTER = 1 << 4  # regex [^\W\d_]: alphanumeric but not a decimal digit
_DECIMAL = 1 << 5  # regex \d (str.isdecimal)
_CASED = 1 << 6  # cased and not case-ignorable (Unicode's final-sigma rule)
_CASE_IGNORABLE = 1 << 7
_SPACED_TERMINATOR = 1 << 8
_UNSPACED_TERMINATOR = 1 << 9
_CLOSER = 1 << 10
_OPENER = 1 << 11
_BULLET = 1 << 12
_LINE_BREAK = 1 << 13
_CLAUSE_END = 1 << 14  # ";": a sentence end under cite-right's rules only
_TERMINATOR = _SPACED_TERMINATOR | _UNSPACED_TERMINATOR
_RULES = (
    _SPACED_TERMINATOR | _UNSPACED_TERMINATOR | _CLOSER | _OPENER | _BULLET | _LINE_BREAK
    | _CLAUSE_END
)
_UNKNOWN = 1 << 16
_LOWER_COUNT_SHIFT = 17
_LOWER_FIRST_SHIFT = 19
_LOWER_SECOND_SHIFT = 40
_CODE_MASK = (1 << 21) - 1
_SIGMA_LOWER_COUNT = 3

_CAPITAL_SIGMA = 0x3A3
_SMALL_SIGMA = 0x3C3
_FINAL_SIGMA = 0x3C2
_BMP = 0x10000
_LOOKBACK = 64  # no abbreviation is longer


_ABBREVIATION = 1  # kinds of abbreviation keys
_SENTENCE_FINAL = 2

_PERIOD, _RIGHT_PARENTHESIS, _LEFT_PARENTHESIS = 46, 41, 40
_SPACE_CHAR, _TAB, _LINE_FEED, _CARRIAGE_RETURN, _PARAGRAPH_SEPARATOR = 32, 9, 10, 13, 0x2029
# reference markers after a terminator ("grew.[1] Then"): [ ^ 0-9 , ; - en-dash ]
_OPEN_SQUARE, _CLOSE_SQUARE, _CARET, _ZERO, _NINE = 91, 93, 94, 48, 57
_COMMA, _SEMICOLON, _HYPHEN, _EN_DASH = 44, 59, 45, 0x2013

#: ``rules`` of the kernel: citekit's rules, or cite-right's (``;`` ends a sentence, and
#: a lower-case word after a terminator does not continue it)
CITEKIT_RULES, CITE_RIGHT_RULES = 0, 1


def _rule_bits(code: int) -> int:
    char = chr(code)
    bits = 0
    for members, flag in (
        (_SPACED_TERMINATORS, _SPACED_TERMINATOR),
        (_UNSPACED_TERMINATORS, _UNSPACED_TERMINATOR),
        (_CLOSERS, _CLOSER),
        (_OPENERS, _OPENER),
        (_BULLETS, _BULLET),
        (_LINE_BREAKS, _LINE_BREAK),
        (";", _CLAUSE_END),
    ):
        if char in members:
            bits |= flag
    return bits


# Georgian Mkhedruli, the letters Georgian is written in: lower case since Unicode 11 added
# their capitals (Mtavruli), which are not used to start a sentence, so a sentence after a
# period starts with one of these: they are not lower case for the rule that a terminator
# followed by a lower-case word ends no sentence.
_UNCAPITALIZED = range(0x10D0, 0x1100)


def char_info(code: int) -> int:
    """The table entry of one code point, from Python's own ``str`` methods."""
    char = chr(code)
    info = _rule_bits(code)
    if char.isspace():
        info |= _SPACE
    if char.islower() and code not in _UNCAPITALIZED:
        info |= _LOWER
    if char.isupper():
        info |= _UPPER
    if char.isalpha():
        info |= _ALPHA
    if char.isalnum() and not char.isdecimal():
        info |= _WORD_LETTER
    if char.isdecimal():
        info |= _DECIMAL
    # str.lower turns a capital sigma into a final sigma when a cased character precedes
    # it (case-ignorable ones skipped) and none follows; read both properties off that
    # behaviour so they are Python's, for every character
    if ("1" + char + "\u03a3").lower()[-1] == "\u03c2":
        info |= _CASED  # after "1" (neither), only a cased, not ignorable char makes it final
    elif ("A" + char + "\u03a3").lower()[-1] == "\u03c2":
        info |= _CASE_IGNORABLE  # skipped back to the cased "A"
    if code == _CAPITAL_SIGMA:
        info |= _SIGMA_LOWER_COUNT << _LOWER_COUNT_SHIFT
        return info
    lowered = [ord(part) for part in char.lower()]
    if len(lowered) > 2:  # never in Unicode so far (tests check every code point)
        raise RuntimeError(f"U+{code:04X} lower-cases to {len(lowered)} characters")
    info |= len(lowered) << _LOWER_COUNT_SHIFT
    info |= lowered[0] << _LOWER_FIRST_SHIFT
    if len(lowered) == 2:
        info |= lowered[1] << _LOWER_SECOND_SHIFT
    return info


class _CharTable:
    """The shared character table, learned as texts need it (thread-safe)."""

    def __init__(self) -> None:
        self.bmp = np.full(_BMP, _UNKNOWN, dtype=np.int64)
        rule_codes = sorted({ord(char) for char in _rule_characters()})
        for code in rule_codes:
            if code < _BMP:
                self.bmp[code] |= _rule_bits(code)
        # ASCII, Latin-1, general punctuation and currency signs up front; the rest when
        # a text first needs them
        for code in [*range(0x100), *range(0x2000, 0x20D0)]:
            self.bmp[code] = char_info(code)
        # sorted codes above the BMP and their entries, replaced together (readers keep the
        # pair they were given); the rule characters there are known from the start, as
        # the kernel reads their rule bits without asking for missing entries
        astral_rules = [code for code in rule_codes if code >= _BMP]
        self.astral: tuple[np.ndarray, np.ndarray] = (
            np.array(astral_rules, dtype=np.int64),
            np.array([char_info(code) for code in astral_rules], dtype=np.int64),
        )
        self._lock = threading.Lock()

    def learn(self, codes: np.ndarray) -> None:
        """Compute the entries of every code point of ``codes`` not known yet."""
        distinct = np.unique(codes[codes >= 0x80]).astype(np.int64)
        with self._lock:
            bmp_codes = distinct[distinct < _BMP]
            bmp_codes = bmp_codes[(self.bmp[bmp_codes] & _UNKNOWN) != 0]
            for code in bmp_codes.tolist():
                self.bmp[code] = char_info(code)
            astral_codes, astral_info = self.astral
            new_codes = np.setdiff1d(distinct[distinct >= _BMP], astral_codes)
            if new_codes.shape[0]:
                merged = np.concatenate([astral_codes, new_codes])
                info = np.concatenate(
                    [astral_info, np.array([char_info(code) for code in new_codes.tolist()])]
                ).astype(np.int64)
                order = np.argsort(merged, kind="stable")
                self.astral = (merged[order], info[order])


def _rule_characters() -> str:
    return (
        _SPACED_TERMINATORS + _UNSPACED_TERMINATORS + _CLOSERS + _OPENERS + _BULLETS + _LINE_BREAKS
        + ";"
    )


_TABLE: _CharTable | None = None
_TABLE_LOCK = threading.Lock()


def _table() -> _CharTable:
    global _TABLE
    if _TABLE is None:
        with _TABLE_LOCK:
            if _TABLE is None:
                _TABLE = _CharTable()
    return _TABLE


def key_hash(codes: Iterable[int]) -> int:
    """FNV-1a (64 bit) of a sequence of code points, as the kernel computes it."""
    return fnv1a(codes)


def abbreviation_tables(
    abbreviations: Iterable[str], sentence_final: Iterable[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's view of the abbreviation keys (already lower case, no final period).

    Returns ``key_hashes`` (sorted ``uint64``), ``key_bounds`` (``(k, 3)`` int64: start and
    end of the key's code points in ``key_codes``, and its kind: 1 for an abbreviation, 2
    for one that may end a sentence) and ``key_codes`` (int64). A key in both sets counts
    as an abbreviation (the rules test those first).
    """
    kinds = {key: _SENTENCE_FINAL for key in sentence_final}
    kinds.update((key, _ABBREVIATION) for key in abbreviations)
    entries = sorted(
        (key_hash(map(ord, key)), key, kind) for key, kind in kinds.items()
    )
    key_hashes = np.array([entry[0] for entry in entries], dtype=np.uint64)
    key_bounds = np.zeros((len(entries), 3), dtype=np.int64)
    key_codes: list[int] = []
    for row, (_, key, kind) in enumerate(entries):
        key_bounds[row] = (len(key_codes), len(key_codes) + len(key), kind)
        key_codes.extend(map(ord, key))
    return key_hashes, key_bounds, np.array(key_codes, dtype=np.int64)


# The kernel's input for a text: citekit._code_units.code_units (uint8 for ASCII, uint16
# in the BMP, else uint32; read-only, like every array the kernel is compiled for: three
# signatures in all). The tokenizer reads the same array, so a text segmented then
# tokenized is encoded once.
code_points = code_units


def segment_code_points(
    codes: np.ndarray,
    key_hashes: np.ndarray,
    key_bounds: np.ndarray,
    key_codes: np.ndarray,
    split_on_newlines: bool,
    rules: int = CITEKIT_RULES,
) -> np.ndarray:
    """Sentence spans (``(n, 2)`` int64) of a text given as its code points.

    ``codes`` comes from :func:`code_points`, the key arrays from
    :func:`abbreviation_tables`; ``rules`` is :data:`CITEKIT_RULES` or
    :data:`CITE_RIGHT_RULES`.
    """
    # (through the kernel of many texts: a kernel called from Python and from another
    # kernel compiles twice, see citekit._jit.entry)
    text_starts = np.array([0, codes.shape[0]], dtype=np.int64)
    spans, _ = segment_code_points_many(
        codes, text_starts, key_hashes, key_bounds, key_codes, split_on_newlines, rules
    )
    return spans


def segment_code_points_many(
    codes: np.ndarray,
    text_starts: np.ndarray,
    key_hashes: np.ndarray,
    key_bounds: np.ndarray,
    key_codes: np.ndarray,
    split_on_newlines: bool,
    rules: int = CITEKIT_RULES,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`segment_code_points` of several texts in one kernel call.

    Text ``t`` is ``codes[text_starts[t]:text_starts[t + 1]]``. Returns the spans of every
    text, concatenated (``(n, 2)`` int64, offsets relative to their text), and the span
    offsets (text ``t`` has spans ``offsets[t]:offsets[t + 1]``).
    """
    table = _table()
    while True:
        astral_codes, astral_info = table.astral
        spans, offsets, n_missing = _segment_many(
            codes,
            text_starts,
            table.bmp,
            astral_codes,
            astral_info,
            key_hashes,
            key_bounds,
            key_codes,
            split_on_newlines,
            rules,
        )
        if n_missing == 0:
            return spans, offsets
        table.learn(codes)


def warmup() -> None:
    """Compile (or load from the on-disk cache) the kernel for its three unit types, for
    one text and for many.

    Examples
    --------
    >>> warmup()
    """
    key_hashes, key_bounds, key_codes = abbreviation_tables(["dr"], ["inc"])
    # ASCII (uint8), the BMP (uint16), beyond it (uint32)
    for text in ("Dr. A. B. ok", "Dr. A. B. ok \u20ac", "Dr. A. B. ok \U0001f600"):
        for split_on_newlines in (True, False):
            segment_code_points(
                code_points(text), key_hashes, key_bounds, key_codes, split_on_newlines
            )
            segment_code_points_many(
                code_points(text),
                np.array([0, len(text)], dtype=np.int64),
                key_hashes,
                key_bounds,
                key_codes,
                split_on_newlines,
            )
    # (rules is an int64 whatever its value: no signature of its own to compile)


# ---------------------------------------------------------------------------------------
# kernel
#
# Per character, entries are read inline (``bmp[code] if code < _BMP else _UNKNOWN``):
# a call per character into a helper that takes arrays costs more than the work itself.
# Only an entry not in the BMP table (unknown yet, or above the BMP) takes the call to
# _looked_up. Helpers are called per block or per terminator run.


@jit
def _lower_bound(sorted_values, value):
    """The first position of ``sorted_values`` not below ``value`` (binary search)."""
    lo, hi = 0, sorted_values.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_values[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def _looked_up(code, astral_codes, astral_info, missing):
    """The entry of a code point above the BMP, or 0 and ``missing[0]`` counted up when it
    is not learned yet."""
    if code >= _BMP:
        lo = _lower_bound(astral_codes, code)
        if lo < astral_codes.shape[0] and astral_codes[lo] == code:
            return astral_info[lo]
    missing[0] += 1
    return np.int64(0)


@jit
def _astral_rules(code, astral_codes, astral_info):
    """The rule bits of a code point above the BMP (the astral table holds every rule
    character from the start: one not there has none)."""
    lo = _lower_bound(astral_codes, code)
    if lo < astral_codes.shape[0] and astral_codes[lo] == code:
        return astral_info[lo] & _RULES
    return np.int64(0)


@jit
def _info(code, bmp, astral_codes, astral_info, missing):
    """A code point's table entry (the BMP table, else :func:`_looked_up`)."""
    info = bmp[code] if code < _BMP else _UNKNOWN
    if info & _UNKNOWN:
        info = _looked_up(code, astral_codes, astral_info, missing)
    return info


@jit
def _blank_lines_end(codes, position):
    """End of ``(?:[ \\t]*(?:\\r\\n|[\\n\\r\\u2029])){2,}`` matched at ``position``, or -1.

    Units are taken greedily (``\\r\\n`` as one); with a single unit the pattern still
    matches when that unit is ``\\r\\n``, by backtracking into ``\\r`` and ``\\n``.
    """
    n_codes = codes.shape[0]
    units = 0
    end = -1
    first_is_crlf = False
    while True:
        cursor = position
        while cursor < n_codes and (codes[cursor] == _SPACE_CHAR or codes[cursor] == _TAB):
            cursor += 1
        if cursor >= n_codes:
            break
        code = codes[cursor]
        if code == _CARRIAGE_RETURN and cursor + 1 < n_codes and codes[cursor + 1] == _LINE_FEED:
            unit_end = cursor + 2
        elif code == _LINE_FEED or code == _CARRIAGE_RETURN or code == _PARAGRAPH_SEPARATOR:
            unit_end = cursor + 1
        else:
            break
        if units == 0:
            first_is_crlf = unit_end == cursor + 2
        units += 1
        position = unit_end
        end = unit_end
    if units >= 2 or (units == 1 and first_is_crlf):
        return end
    return -1


@jit
def _next_blank_lines(codes, position):
    """``(start, end)`` of the leftmost blank-line match from ``position``, or -1s."""
    n_codes = codes.shape[0]
    while position < n_codes:
        code = codes[position]
        if code == _SPACE_CHAR or code == _TAB:
            # a match can start here only if a line break follows the blanks (and one
            # from inside the run would fail the same way)
            after = position + 1
            while after < n_codes and (codes[after] == _SPACE_CHAR or codes[after] == _TAB):
                after += 1
            if after < n_codes and (
                codes[after] == _LINE_FEED
                or codes[after] == _CARRIAGE_RETURN
                or codes[after] == _PARAGRAPH_SEPARATOR
            ):
                end = _blank_lines_end(codes, position)
                if end >= 0:
                    return position, end
            position = after
        elif code == _LINE_FEED or code == _CARRIAGE_RETURN or code == _PARAGRAPH_SEPARATOR:
            end = _blank_lines_end(codes, position)
            if end >= 0:
                return position, end
            position += 1
        else:
            position += 1
    return -1, -1


@jit
def _is_roman(codes, start, end, one, five, ten):
    """Whether ``codes[start:end]`` fullmatches ``X{0,3}(?:IX|IV|V?I{0,3})``."""
    position = start
    while position < end and codes[position] == ten:
        position += 1
    if position - start > 3:
        return False
    rest = end - position
    if rest == 2 and codes[position] == one and (
        codes[position + 1] == ten or codes[position + 1] == five
    ):
        return True
    if position < end and codes[position] == five:
        position += 1
    ones = 0
    while position < end and codes[position] == one:
        position += 1
        ones += 1
    return position == end and ones <= 3


@jit
def _roman_marker_end(codes, start, block_end, lower):
    """Position of the ``[.)]`` after a roman numeral run at ``start``, or -1: of ``i``,
    ``v`` and ``x`` when ``lower``, else of ``I``, ``V`` and ``X``.

    (The case is a run-time flag rather than the three letters as constants: constant
    arguments would compile this function and :func:`_is_roman` once per case.)"""
    shift = 32 if lower else 0
    one = 73 + shift
    five = 86 + shift
    ten = 88 + shift
    end = start
    while end < block_end and (codes[end] == one or codes[end] == five or codes[end] == ten):
        end += 1
    if end >= block_end or not (codes[end] == _PERIOD or codes[end] == _RIGHT_PARENTHESIS):
        return -1
    if not _is_roman(codes, start, end, one, five, ten):
        return -1
    return end


@jit
def _is_decimal(code, bmp, astral_codes, astral_info, missing):
    return (_info(code, bmp, astral_codes, astral_info, missing) & _DECIMAL) != 0


@jit
def _list_marker_end(codes, start, end, bmp, astral_codes, astral_info, missing):
    """Where the block's text starts after a list marker (``start`` if there is none)."""
    position = start
    while position < end and (codes[position] == _SPACE_CHAR or codes[position] == _TAB):
        position += 1
    if position >= end:
        return start
    code = codes[position]
    if code < _BMP and bmp[code] & _BULLET:
        position += 1
    else:
        if code == _LEFT_PARENTHESIS:
            position += 1
            if position >= end:
                return start
            code = codes[position]
        punctuation = -1  # position of the [.)] after the marker's number or letter
        if _is_decimal(code, bmp, astral_codes, astral_info, missing):
            digits_end = position + 1
            while (
                digits_end < end
                and digits_end - position < 3
                and _is_decimal(codes[digits_end], bmp, astral_codes, astral_info, missing)
            ):
                digits_end += 1
            if digits_end < end and (
                codes[digits_end] == _PERIOD or codes[digits_end] == _RIGHT_PARENTHESIS
            ):
                punctuation = digits_end
        elif 97 <= code <= 122:  # a-z, then roman numerals i, v, x
            after = position + 1
            if after < end and (codes[after] == _PERIOD or codes[after] == _RIGHT_PARENTHESIS):
                punctuation = after
            elif code == 105 or code == 118 or code == 120:
                punctuation = _roman_marker_end(codes, position, end, code >= 97)
        elif 65 <= code <= 90:  # A-Z only before ")", then roman numerals I, V, X
            after = position + 1
            if after < end and codes[after] == _RIGHT_PARENTHESIS:
                punctuation = after
            elif code == 73 or code == 86 or code == 88:
                punctuation = _roman_marker_end(codes, position, end, code >= 97)
                if punctuation == after:
                    # one capital with a period is an initial ("V. Putin"), as any other
                    punctuation = -1
        if punctuation < 0:
            return start
        position = punctuation + 1
    if position >= end or not (codes[position] == _SPACE_CHAR or codes[position] == _TAB):
        return start
    while position < end and (codes[position] == _SPACE_CHAR or codes[position] == _TAB):
        position += 1
    return position


@jit
def _is_final_sigma(codes, start, end, index, bmp, astral_codes, astral_info, missing):
    """Whether ``str.lower`` of ``codes[start:end]`` makes the sigma at ``index`` final."""
    cursor = index - 1
    while cursor >= start and (
        _info(codes[cursor], bmp, astral_codes, astral_info, missing)
        & _CASE_IGNORABLE
    ):
        cursor -= 1
    final = cursor >= start and (
        _info(codes[cursor], bmp, astral_codes, astral_info, missing) & _CASED
    ) != 0
    if final and index < end - 1:
        cursor = index + 1
        while cursor < end and (
            _info(codes[cursor], bmp, astral_codes, astral_info, missing)
            & _CASE_IGNORABLE
        ):
            cursor += 1
        final = cursor == end or (
            _info(codes[cursor], bmp, astral_codes, astral_info, missing) & _CASED
        ) == 0
    return final


@jit(inline="always")  # (inlined into _period_ends_sentence)
def _abbreviation_kind(
    codes, start, end, bmp, astral_codes, astral_info, missing, key_hashes, key_bounds,
    key_codes, lowered,
):
    """Kind of ``codes[start:end].lower()`` among the keys (0: not a key)."""
    length = 0
    for index in range(start, end):
        code = codes[index]
        info = bmp[code] if code < _BMP else _UNKNOWN
        if info & _UNKNOWN:
            info = _looked_up(code, astral_codes, astral_info, missing)
        count = (info >> _LOWER_COUNT_SHIFT) & 3
        if count == _SIGMA_LOWER_COUNT:
            if _is_final_sigma(codes, start, end, index, bmp, astral_codes, astral_info, missing):
                lowered[length] = _FINAL_SIGMA
            else:
                lowered[length] = _SMALL_SIGMA
            length += 1
        elif count >= 1:
            lowered[length] = (info >> _LOWER_FIRST_SHIFT) & _CODE_MASK
            length += 1
            if count == 2:
                lowered[length] = (info >> _LOWER_SECOND_SHIFT) & _CODE_MASK
                length += 1
    value = FNV_OFFSET_U64
    for index in range(length):
        value = (value ^ np.uint64(lowered[index])) * FNV_PRIME_U64
    lo = _lower_bound(key_hashes, value)
    while lo < key_hashes.shape[0] and key_hashes[lo] == value:
        key_start, key_end = key_bounds[lo, 0], key_bounds[lo, 1]
        if key_end - key_start == length:
            same = True
            for offset in range(length):
                if key_codes[key_start + offset] != lowered[offset]:
                    same = False
                    break
            if same:
                return key_bounds[lo, 2]
        lo += 1
    return 0


@jit(inline="always")  # once per sentence: the call would cost a sixth of the kernel
def _period_ends_sentence(
    codes, period, next_info, has_next, bmp, astral_codes, astral_info, missing, key_hashes,
    key_bounds, key_codes, longest_key, lowered,
):
    """Whether a single period at ``period`` (closers may follow) ends a sentence, given
    the entry of the next character after the whitespace (``has_next`` False at the end of
    the block): not after an abbreviation, a dotted acronym or an initial."""
    # One pass back over the last word of the 64 characters before the period: it must
    # be letters, or dotted letter groups (U.S, e.g, Ph.D), after leading openers.
    lookback_start = max(0, period - _LOOKBACK)
    word_start = period
    has_period = False
    first_info = np.int64(0)  # entry of the word's first character
    while word_start > lookback_start:
        code = codes[word_start - 1]
        if code == _PERIOD:
            if word_start == period or codes[word_start] == _PERIOD:
                return True  # "..", or the word ends with a period
            has_period = True
            word_start -= 1
            continue
        info = bmp[code] if code < _BMP else _UNKNOWN
        if info & _UNKNOWN:
            info = _looked_up(code, astral_codes, astral_info, missing)
        if info & _SPACE:
            break
        if info & _WORD_LETTER:
            first_info = info
            word_start -= 1
            continue
        if not info & _OPENER:
            return True  # a number, or a word glued to other punctuation
        # openers: fine only as a prefix up to the whitespace (or the lookback's start)
        opener = word_start - 1
        while opener > lookback_start:
            code = codes[opener - 1]
            info = bmp[code] if code < _BMP else _UNKNOWN
            if info & _UNKNOWN:
                info = _looked_up(code, astral_codes, astral_info, missing)
            if info & _SPACE:
                break
            if not info & _OPENER:
                return True
            opener -= 1
        break
    if word_start == period or codes[word_start] == _PERIOD:
        return True  # no word (whitespace before the period), or it starts with a period
    kind = 0
    if period - word_start <= longest_key:  # (lower case never makes a word shorter)
        kind = _abbreviation_kind(
            codes, word_start, period, bmp, astral_codes, astral_info, missing, key_hashes,
            key_bounds, key_codes, lowered,
        )
    if kind == _ABBREVIATION:
        return False
    if has_period:  # U.S., e.g, Ph.D
        return False
    if period - word_start == 1 and first_info & _UPPER:
        return False  # an initial: J. K. Rowling
    if kind == _SENTENCE_FINAL:
        return not has_next or (next_info & _UPPER) != 0 or (next_info & _ALPHA) == 0
    return True


@jit
def _digits_end(codes, position, limit):
    """End of the 1 to 4 ASCII digits at ``position`` (an optional ``^`` before them), or
    -1."""
    if position < limit and codes[position] == _CARET:
        position += 1
    start = position
    while position < limit and position - start < 4 and _ZERO <= codes[position] <= _NINE:
        position += 1
    return position if position > start else -1


@jit
def _reference_marker_end(codes, start, limit):
    """End of the reference marker (``[1]``, ``[^2]``, ``[2, 3]``, ``[4-6]``) opening at
    ``start``, or -1: digits separated by ``,``, ``;``, ``-`` or ``\u2013`` with spaces
    or tabs around them, then ``]``."""
    position = _digits_end(codes, start + 1, limit)
    while position >= 0:
        while position < limit and (codes[position] == _SPACE_CHAR or codes[position] == _TAB):
            position += 1
        if position >= limit:
            return -1
        code = codes[position]
        if code == _CLOSE_SQUARE:
            return position + 1
        if code != _COMMA and code != _SEMICOLON and code != _HYPHEN and code != _EN_DASH:
            return -1
        position += 1
        while position < limit and (codes[position] == _SPACE_CHAR or codes[position] == _TAB):
            position += 1
        position = _digits_end(codes, position, limit)
    return -1


@jit
def _markers_and_closers_end(codes, position, limit, bmp):
    """Past the reference markers and closers, in any order, from ``position``."""
    while position < limit:
        code = codes[position]
        if code < _BMP and bmp[code] & _CLOSER:
            position += 1
        elif code == _OPEN_SQUARE:
            marker_end = _reference_marker_end(codes, position, limit)
            if marker_end < 0:
                break
            position = marker_end
        else:
            break
    return position


@jit
def _grown(spans):
    larger = np.empty((2 * spans.shape[0], 2), dtype=np.int64)
    copy_rows(larger, np.int64(0), spans, 0, spans.shape[0])  # (the signature of the other call)
    return larger


@jit
def _segment(
    codes, bmp, astral_codes, astral_info, key_hashes, key_bounds, key_codes, split_on_newlines,
    rules,
):
    """Sentence spans, and how many characters the table did not know yet.

    When that count is not 0 the spans are not valid: learn the text's characters and call
    again. ``rules``: CITEKIT_RULES or CITE_RIGHT_RULES.
    """
    # (cite-right's ";" is one more stop: no test of its own per character)
    clause_end = _CLAUSE_END if rules == CITE_RIGHT_RULES else 0
    n_codes = codes.shape[0]
    missing = np.zeros(1, dtype=np.int64)  # characters met that the table does not know
    lowered = np.empty(2 * _LOOKBACK, dtype=np.int64)
    longest_key = 0
    for key in range(key_bounds.shape[0]):
        longest_key = max(longest_key, key_bounds[key, 1] - key_bounds[key, 0])
    spans = np.empty((n_codes // 64 + 16, 2), dtype=np.int64)
    count = 0
    # Splitting on line breaks, a block ends at the first one the scan meets (a line break
    # is never part of a list marker, a run or its closers, so nothing reads past it);
    # otherwise the next blank lines are found first and bound the block.
    line_break = _LINE_BREAK if split_on_newlines else 0
    stops = _TERMINATOR | line_break | clause_end
    next_block = -1
    # (int64 from the start: a literal 0 would be the type numba first infers for the
    # blocks' start, and compile the kernels it is passed to once more for it)
    block_start = np.int64(0)
    while True:
        limit = n_codes
        if not split_on_newlines:
            limit, next_block = _next_blank_lines(codes, block_start)
            if limit < 0:
                limit = n_codes
        sentence_start = _list_marker_end(
            codes, block_start, limit, bmp, astral_codes, astral_info, missing
        )
        position = sentence_start
        block_end = -1
        while block_end < 0:
            # the end of this sentence: a terminator run that ends one, or the block end
            cut = -1
            while position < limit:
                code = codes[position]
                if code < _BMP:
                    rule = bmp[code]
                else:
                    rule = _astral_rules(code, astral_codes, astral_info)
                if not rule & stops:
                    position += 1
                    continue
                if rule & line_break:
                    break
                if rule & clause_end:
                    position += 1
                    cut = position  # (cite-right: "a; b" is two sentences)
                    break
                # a run of terminators, the closers after it, then whitespace
                run_start = position
                has_unspaced = False
                while position < limit:
                    code = codes[position]
                    if code < _BMP:
                        rule = bmp[code]
                    else:
                        rule = _astral_rules(code, astral_codes, astral_info)
                    if not rule & _TERMINATOR:
                        break
                    if rule & _UNSPACED_TERMINATOR:
                        has_unspaced = True
                    position += 1
                while position < limit:
                    code = codes[position]
                    if code >= _BMP or not bmp[code] & _CLOSER:
                        break
                    position += 1
                if position < limit and codes[position] == _OPEN_SQUARE:
                    position = _markers_and_closers_end(codes, position, limit, bmp)
                run_end = position
                next_info = np.int64(0)  # entry of the character after the whitespace
                has_next = False
                while position < limit:
                    code = codes[position]
                    next_info = bmp[code] if code < _BMP else _UNKNOWN
                    if next_info & line_break:  # (rule bits are there even if unknown)
                        break
                    if next_info & _UNKNOWN:
                        next_info = _looked_up(code, astral_codes, astral_info, missing)
                    if not next_info & _SPACE:
                        has_next = True
                        break
                    position += 1
                if has_unspaced:
                    ends = True
                elif position == run_end and has_next:
                    ends = False  # spaced terminators inside a word: 5.2, U.S.-based
                elif has_next and next_info & _LOWER and not clause_end:
                    ends = False  # "approx. five", "wait… what", '"Really?" she asked'
                elif codes[run_start] != _PERIOD or (
                    run_end - run_start >= 2 and codes[run_start + 1] == _PERIOD
                ):
                    ends = True
                elif run_start == 0:
                    ends = True
                else:
                    ends = _period_ends_sentence(
                        codes, run_start, next_info, has_next, bmp, astral_codes, astral_info,
                        missing, key_hashes, key_bounds, key_codes, longest_key, lowered,
                    )
                if ends:
                    cut = run_end
                    break
            if cut < 0:  # the block ends here, at a line break or the limit
                block_end = position
                cut = position
            # the sentence without surrounding whitespace, if anything is left
            first, last = sentence_start, cut
            while first < last:
                code = codes[first]
                info = bmp[code] if code < _BMP else _UNKNOWN
                if info & _UNKNOWN:
                    info = _looked_up(code, astral_codes, astral_info, missing)
                if not info & _SPACE:
                    break
                first += 1
            while last > first:
                code = codes[last - 1]
                info = bmp[code] if code < _BMP else _UNKNOWN
                if info & _UNKNOWN:
                    info = _looked_up(code, astral_codes, astral_info, missing)
                if not info & _SPACE:
                    break
                last -= 1
            if first < last:
                if count == spans.shape[0]:
                    spans = _grown(spans)
                spans[count, 0] = first
                spans[count, 1] = last
                count += 1
            sentence_start = cut
        if split_on_newlines:
            if block_end >= n_codes:
                break
            # [line break]\n?: \r\n, and a blank line's second \n, go with the first
            block_start = block_end + 1
            if block_start < n_codes and codes[block_start] == _LINE_FEED:
                block_start += 1
        else:
            if next_block < 0:
                break
            block_start = next_block
    return spans[:count].copy(), missing[0]


@jit
def _segment_many(
    codes, text_starts, bmp, astral_codes, astral_info, key_hashes, key_bounds, key_codes,
    split_on_newlines, rules,
):
    """:func:`_segment` of each text ``codes[text_starts[t]:text_starts[t + 1]]``: the
    spans of all, their offsets per text, and how many characters the table did not know
    (the spans are not valid unless 0)."""
    n_texts = text_starts.shape[0] - 1
    offsets = np.zeros(n_texts + 1, dtype=np.int64)
    spans = np.empty((codes.shape[0] // 64 + 16, 2), dtype=np.int64)
    count = np.int64(0)  # (not a literal: see _segment's block_start)
    n_missing = 0
    for text in range(n_texts):
        lo, hi = text_starts[text], text_starts[text + 1]
        if lo == hi:
            offsets[text + 1] = count
            continue  # (segment_array's answer for an empty text)
        text_spans, text_missing = _segment(
            codes[lo:hi], bmp, astral_codes, astral_info, key_hashes, key_bounds, key_codes,
            split_on_newlines, rules,
        )
        n_missing += text_missing
        n_spans = text_spans.shape[0]
        while count + n_spans > spans.shape[0]:
            spans = _grown(spans)
        copy_rows(spans, count, text_spans, 0, n_spans)
        count += n_spans
        offsets[text + 1] = count
    return spans[:count].copy(), offsets, n_missing
