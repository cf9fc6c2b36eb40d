"""Offset-preserving text normalization.

:func:`normalize_text` applies Unicode NFKC, case-folding, and number / percent / currency
folding, and keeps for every character of the normalized text the half-open span of the
original text it came from. Any span found in the normalized text therefore maps back to
an exact span of the string the caller passed (:meth:`NormalizedText.to_original`).

How the map is built
--------------------
The text is cut into *normalization units*: a character together with the characters that
can combine with it (combining marks, the second halves of canonical compositions such as
Hangul vowel/final jamo or the Bengali au length mark, and compatibility characters whose
NFKC form starts with a combining mark, such as the half-width katakana voiced mark). Units
are normalized independently, so normalizing a substring gives the same result as the
corresponding part of the whole text. Every character a unit produces maps back to the
original character it came from when that is unambiguous (``ﬁ`` -> ``fi``: both letters map
to the ligature), and to the whole unit otherwise (``e`` + combining acute -> ``é`` maps to
both original characters). The maps are monotone: ``orig_starts`` and ``orig_ends`` never
decrease, and ``orig_starts[i] < orig_ends[i]``.

Folding rules (each switchable in :class:`NormalizerConfig`)
------------------------------------------------------------
- numbers: decimal digits of every script become ASCII digits (``٣`` -> ``3``), the
  Arabic decimal and thousands separators ``٫`` and ``٬`` become ``.`` and ``,``
  (``٣٫٥`` -> ``3.5``), and a comma between digits that starts a group of exactly three
  digits is removed (``1,200`` -> ``1200``, ``12,345,678`` -> ``12345678``, ``١٬٢٠٠`` ->
  ``1200``); decimals stay (``5.2``). A comma in ``1,2`` or ``1,2345`` is kept: it is a
  list or a decimal comma, not a thousands separator.
- percent: ``%`` and the Arabic ``٪`` become the word ``percent``, so ``15%``, ``١٥٪`` and
  ``15 percent`` normalize alike.
- currency: ``$`` -> ``dollar``, ``€`` -> ``euro``, ``£`` -> ``pound``, and the other
  symbols in :data:`CURRENCY_WORDS`.

A replaced symbol is padded with a space on each side that touches a non-space character,
so it always forms a word of its own (``$5`` -> ``dollar 5``); the padding maps to the
symbol.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

import numpy as np

from citekit._validation import check_bool, check_int, check_str

__all__ = [
    "CURRENCY_WORDS",
    "PERCENT_WORD",
    "NormalizerConfig",
    "NormalizedText",
    "normalize_text",
]

#: Word that ``%`` (and its full-width / small forms, after NFKC) folds to.
PERCENT_WORD = "percent"
#: The percent sign and the Arabic one (U+066A).
PERCENT_SIGNS = "%\u066a"

#: Currency symbol -> the (singular) word it folds to.
CURRENCY_WORDS: dict[str, str] = {
    "$": "dollar",
    "€": "euro",
    "£": "pound",
    "¥": "yen",
    "₹": "rupee",
    "₩": "won",
    "₽": "ruble",
    "¢": "cent",
    "₺": "lira",
    "₪": "shekel",
    "₫": "dong",
    "₱": "peso",
    "₿": "bitcoin",
}

# Characters with canonical combining class 0 that are the SECOND character of a canonical
# composition (so they compose with the character before them), plus characters whose NFKC
# form starts with a combining mark (U+FF9E HALFWIDTH KATAKANA VOICED SOUND MARK -> U+3099).
# Derived from the Unicode database; tests/text/test_normalize.py re-derives it from the running
# Python's unicodedata and fails if it differs. Hangul vowel and final jamo are added below.
_ATTACHING_STARTERS = (
    frozenset(
        chr(cp)
        for cp in (
            0x09BE,
            0x09D7,
            0x0B3E,
            0x0B56,
            0x0B57,
            0x0BBE,
            0x0BD7,
            0x0CC2,
            0x0CD5,
            0x0CD6,
            0x0D3E,
            0x0D57,
            0x0DCF,
            0x0DDF,
            0x0F73,
            0x0F75,
            0x0F81,
            0x0FB5,
            0x0FB7,
            0x102E,
            0x1B35,
            0xFF9E,
            0xFF9F,
            0x11127,
            0x1133E,
            0x11357,
            0x114B0,
            0x114BA,
            0x114BD,
            0x115AF,
            0x11930,
        )
    )
    | frozenset(chr(cp) for cp in range(0x1161, 0x1176))
    | frozenset(chr(cp) for cp in range(0x11A8, 0x11C3))
)

_SPACE_CHARS = frozenset(" \t\n\r\f\v")


@dataclass(frozen=True)
class NormalizerConfig:
    """Which normalizations :func:`normalize_text` applies.

    Parameters
    ----------
    nfkc : bool, default True
        Unicode NFKC (compatibility forms such as ``ﬁ``, ``①``, full-width letters).
    casefold : bool, default True
        Unicode case-folding (``REVENUE`` -> ``revenue``, ``ß`` -> ``ss``).
    normalize_numbers : bool, default True
        Script digits to ASCII, the Arabic separators ``٫`` / ``٬`` to ``.`` / ``,``, and
        thousands separators removed (``1,200`` -> ``1200``).
    normalize_percent : bool, default True
        ``%`` (and the Arabic ``٪``) -> ``percent``.
    normalize_currency : bool, default True
        Currency symbols to words (``$`` -> ``dollar``, ``€`` -> ``euro``, ``£`` -> ``pound``).

    Examples
    --------
    >>> NormalizerConfig(casefold=False).casefold
    False
    >>> NormalizerConfig(nfkc=1)
    Traceback (most recent call last):
    ...
    TypeError: nfkc must be a bool, got int
    """

    nfkc: bool = True
    casefold: bool = True
    normalize_numbers: bool = True
    normalize_percent: bool = True
    normalize_currency: bool = True

    def __post_init__(self) -> None:
        for field in fields(self):
            check_bool(getattr(self, field.name), field.name)


class NormalizedText:
    """A normalized string and the map from each of its characters to the original text.

    Normalized character ``i`` comes from ``original[orig_starts[i]:orig_ends[i]]``.

    Parameters
    ----------
    original : str
        The text as passed to :func:`normalize_text`.
    text : str
        The normalized text.
    orig_starts, orig_ends : array_like of int
        One entry per character of ``text`` (stored as ``int64``).

    Examples
    --------
    >>> nt = normalize_text("Ｔｈｅ ﬁnal ＲＥＶＥＮＵＥ")
    >>> nt.text
    'the final revenue'
    >>> start = nt.text.index("fi")
    >>> nt.original[slice(*nt.to_original(start, start + 5))]
    'ﬁnal'
    """

    __slots__ = ("original", "text", "orig_starts", "orig_ends")

    def __init__(self, original: str, text: str, orig_starts: Any, orig_ends: Any) -> None:
        self.original = original
        self.text = text
        self.orig_starts = np.ascontiguousarray(orig_starts, dtype=np.int64)
        self.orig_ends = np.ascontiguousarray(orig_ends, dtype=np.int64)
        if self.orig_starts.shape != (len(text),) or self.orig_ends.shape != (len(text),):
            raise ValueError("orig_starts and orig_ends must have one entry per character of text")

    def __len__(self) -> int:
        return len(self.text)

    def __repr__(self) -> str:
        return f"NormalizedText({self.text!r})"

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map the normalized span ``[start, end)`` to the smallest original span covering it.

        An empty span maps to an empty span at the corresponding original position.

        Parameters
        ----------
        start, end : int
            Half-open span into :attr:`text`, ``0 <= start <= end <= len(text)``.

        Returns
        -------
        tuple of int
            ``(orig_start, orig_end)``, a half-open span into :attr:`original`.

        Examples
        --------
        >>> nt = normalize_text("Straße costs $5")
        >>> nt.text
        'strasse costs dollar 5'
        >>> nt.to_original(0, 7)
        (0, 6)
        >>> nt.to_original(14, 20)
        (13, 14)
        """
        n_chars = len(self.text)
        start = check_int(start, "start", minimum=0, maximum=n_chars)
        end = check_int(end, "end", minimum=start, maximum=n_chars)
        if start == end:
            if start < n_chars:
                position = int(self.orig_starts[start])
            elif n_chars:
                position = int(self.orig_ends[-1])
            else:
                position = len(self.original)
            return position, position
        return int(self.orig_starts[start]), int(self.orig_ends[end - 1])


def normalize_text(text: str, config: NormalizerConfig | None = None) -> NormalizedText:
    """Normalize ``text`` and keep the map back to it.

    Parameters
    ----------
    text : str
        Any string (lone surrogates and control characters are kept as they are).
    config : NormalizerConfig, optional
        Which normalizations to apply; all of them by default.

    Returns
    -------
    NormalizedText
        The normalized text with ``orig_starts`` / ``orig_ends`` maps.

    Raises
    ------
    TypeError
        If ``text`` is not a ``str`` or ``config`` not a :class:`NormalizerConfig`.

    Examples
    --------
    >>> normalize_text("Revenue rose 15% to $1,200 (①ﬁ㎏)").text
    'revenue rose 15 percent to dollar 1200 (1fikg)'
    >>> nt = normalize_text("STRASSE İstanbul")
    >>> nt.text
    'strasse i̇stanbul'
    >>> nt.to_original(8, 10)  # 'i' + combining dot, both from 'İ'
    (8, 9)
    """
    check_str(text, "text")
    if config is None:
        config = NormalizerConfig()
    elif not isinstance(config, NormalizerConfig):
        raise TypeError(f"config must be a NormalizerConfig, got {type(config).__name__}")
    folded, starts, ends = _fold_unicode(text, config)
    folded, starts, ends = _fold_symbols_and_numbers(folded, starts, ends, config)
    return NormalizedText(text, folded, starts, ends)


# ----------------------------------------------------------------------------------------
# Unicode stage: NFKC + casefold + script digits, unit by unit


def _fold_unicode(text: str, config: NormalizerConfig) -> tuple[str, np.ndarray, np.ndarray]:
    folded = _fold_one_to_one(text, config)
    if folded is not None:
        positions = np.arange(len(text), dtype=np.int64)
        return folded, positions, positions + 1
    return _fold_units(text, config)


def _fold_one_to_one(text: str, config: NormalizerConfig) -> str | None:
    """The folded text when folding maps each character to exactly one, else None.

    True of ASCII (NFKC-invariant, ``lower() == casefold()``) and of most text in any
    script: already NFKC and case-folding without expansions (``É`` -> ``é`` but not
    ``ß`` -> ``ss``). Case-folding works character by character, so equal lengths mean
    one-to-one, and a text that is NFKC as a whole is NFKC in every unit.
    """
    if text.isascii():
        return text.lower() if config.casefold else text
    if _has_long_mark_run(text):
        return None  # unicodedata would take quadratic time; units are capped instead
    if config.nfkc and not unicodedata.is_normalized("NFKC", text):
        return None
    if config.casefold:
        folded = text.casefold()
        if len(folded) != len(text):
            return None
        if config.nfkc and not unicodedata.is_normalized("NFKC", folded):
            return None
        text = folded
    if config.normalize_numbers:
        text = _fold_number_syntax(text)
    return text


def _fold_units(text: str, config: NormalizerConfig) -> tuple[str, np.ndarray, np.ndarray]:
    """Fold non-ASCII runs unit by unit (see the module docstring), the rest one to one.

    A unit's map is recorded once per unit (its original start, where its output starts,
    and which of the distinct unit maps it has), not once per output character, and the
    maps are written into the two output arrays block by block: memory is the two maps
    (16 bytes per output character) plus 24 bytes per unit, however much NFKC expands.
    """
    pieces: list[str] = []
    # One-to-one stretches: (output position, original position, length), merged while
    # contiguous; unit-by-unit runs: one row per unit in the three arrays below.
    identity: list[list[int]] = []
    unit_origins = array("q")
    unit_outputs = array("q")
    unit_maps = array("q")
    map_numbers: dict[int, int] = {}  # id of a (cached, shared) unit map -> its number
    distinct_maps: list[tuple[tuple[int, int], ...]] = []
    output_length = 0

    def emit_one_to_one(original_start: int, folded: str) -> None:
        nonlocal output_length
        if not folded:
            return
        pieces.append(folded)
        last = identity[-1] if identity else None
        if last and last[0] + last[2] == output_length and last[1] + last[2] == original_start:
            last[2] += len(folded)
        else:
            identity.append([output_length, original_start, len(folded)])
        output_length += len(folded)

    position = 0
    for match in _NON_ASCII_RUN.finditer(text):
        run_start, run_end = match.span()
        # A combining mark (or composition tail) right after an ASCII letter belongs to it.
        if run_start > position and _attaches(text[run_start]):
            run_start -= 1
        ascii_part = text[position:run_start]
        emit_one_to_one(position, ascii_part.lower() if config.casefold else ascii_part)
        position = run_end
        folded = _fold_one_to_one(text[run_start:run_end], config)
        if folded is not None:
            emit_one_to_one(run_start, folded)
            continue
        unit_start = run_start
        for index in range(run_start + 1, run_end + 1):
            if index < run_end and _attaches(text[index]) and index - unit_start < MAX_UNIT_LENGTH:
                continue
            unit_text, unit_map = _normalize_unit(
                text[unit_start:index], config.nfkc, config.casefold, config.normalize_numbers
            )
            if unit_text:
                number = map_numbers.get(id(unit_map))
                if number is None:
                    number = map_numbers[id(unit_map)] = len(distinct_maps)
                    distinct_maps.append(unit_map)  # (kept alive: its id stays unique)
                pieces.append(unit_text)
                unit_origins.append(unit_start)
                unit_outputs.append(output_length)
                unit_maps.append(number)
                output_length += len(unit_text)
            unit_start = index
    ascii_part = text[position:]
    emit_one_to_one(position, ascii_part.lower() if config.casefold else ascii_part)

    starts = np.empty(output_length, dtype=np.int64)
    ends = np.empty(output_length, dtype=np.int64)
    for output_start, original_start, length in identity:
        starts[output_start : output_start + length] = np.arange(
            original_start, original_start + length, dtype=np.int64
        )
        np.add(starts[output_start : output_start + length], 1,
               out=ends[output_start : output_start + length])
    if unit_maps:
        _write_unit_maps(starts, ends, unit_origins, unit_outputs, unit_maps, distinct_maps)
    return "".join(pieces), starts, ends


#: Units whose maps are written into the output arrays at once (bounds the scratch).
_UNIT_BLOCK = 1 << 12


def _write_unit_maps(
    starts: np.ndarray,
    ends: np.ndarray,
    unit_origins: Any,
    unit_outputs: Any,
    unit_maps: Any,
    distinct_maps: list[tuple[tuple[int, int], ...]],
) -> None:
    """``starts[o + k], ends[o + k] = origin + map[k]`` for every unit (origin ``origin``,
    output start ``o``, map ``map``), ``_UNIT_BLOCK`` units at a time."""
    map_lengths = np.array([len(unit_map) for unit_map in distinct_maps], dtype=np.int64)
    map_offsets = np.zeros(len(distinct_maps), dtype=np.int64)
    np.cumsum(map_lengths[:-1], out=map_offsets[1:])
    flat = np.array([span for unit_map in distinct_maps for span in unit_map],
                    dtype=np.int64).reshape(-1, 2)
    origins = np.frombuffer(unit_origins, dtype=np.int64)
    outputs = np.frombuffer(unit_outputs, dtype=np.int64)
    maps = np.frombuffer(unit_maps, dtype=np.int64)
    for lo in range(0, maps.shape[0], _UNIT_BLOCK):
        block_maps = maps[lo : lo + _UNIT_BLOCK]
        lengths = map_lengths[block_maps]
        firsts = np.cumsum(lengths) - lengths  # each unit's first output within the block
        within = np.arange(int(firsts[-1] + lengths[-1]), dtype=np.int64)
        within -= np.repeat(firsts, lengths)  # k: the output's index within its unit
        positions = np.repeat(outputs[lo : lo + _UNIT_BLOCK], lengths) + within
        entries = np.repeat(map_offsets[block_maps], lengths) + within
        unit_origin = np.repeat(origins[lo : lo + _UNIT_BLOCK], lengths)
        starts[positions] = unit_origin + flat[entries, 0]
        ends[positions] = unit_origin + flat[entries, 1]


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")

#: Longest normalization unit: a character and 30 that attach to it. Longer runs of
#: combining marks are cut into units of this size, as Unicode's Stream-Safe Text Format
#: (UAX #15) does, because Python's NFKC takes quadratic time on them (100,000 marks:
#: minutes); real text never has more than a few marks on one character.
MAX_UNIT_LENGTH = 31


def _has_long_mark_run(text: str) -> bool:
    """True if ``text`` has more than ``MAX_UNIT_LENGTH - 1`` marks in a row."""
    return _long_mark_run().search(text) is not None


@lru_cache(maxsize=1)
def _long_mark_run() -> Any:
    import regex  # a runtime dependency; only non-ASCII text gets here

    return regex.compile(rf"\p{{M}}{{{MAX_UNIT_LENGTH},}}")


@lru_cache(maxsize=4096)
def _attaches(char: str) -> bool:
    """True if ``char`` may combine with the character before it under NFKC."""
    return unicodedata.combining(char) != 0 or char in _ATTACHING_STARTERS


def _fold_string(text: str, nfkc: bool, casefold: bool, numbers: bool) -> str:
    if nfkc:
        text = unicodedata.normalize("NFKC", text)
    if casefold:
        text = text.casefold()
        if nfkc:
            # Case-folding can produce sequences NFKC would compose differently (e.g. ǰ).
            text = unicodedata.normalize("NFKC", text)
    if numbers and not text.isascii():
        text = _fold_number_syntax(text)
    return text


def _fold_number_syntax(text: str) -> str:
    """Script digits to ASCII, the Arabic decimal and thousands separators to "." and ","."""
    text = _SCRIPT_DIGIT.sub(_ascii_digit_match, text)
    # (str.translate looks every character up: only when there is something to replace)
    if "\u066b" in text or "\u066c" in text:
        text = text.translate(_NUMBER_SEPARATORS)
    return text


def _ascii_digit_match(match: re.Match[str]) -> str:
    return str(unicodedata.decimal(match.group()))


# decimal digits of any script except ASCII (Python's \d is Unicode Nd)
_SCRIPT_DIGIT = re.compile(r"(?![0-9])\d")
# the Arabic decimal and thousands separators: number syntax, as "." and ","
_NUMBER_SEPARATORS = str.maketrans({"\u066b": ".", "\u066c": ","})


@lru_cache(maxsize=65536)
def _normalize_unit(
    unit: str, nfkc: bool, casefold: bool, numbers: bool
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Normalize one unit; return its text and, per output char, the unit-relative span."""
    folded = _fold_string(unit, nfkc, casefold, numbers)
    if len(unit) == 1:
        return folded, ((0, 1),) * len(folded)
    per_char = [_fold_string(char, nfkc, casefold, numbers) for char in unit]
    if "".join(per_char) == folded:
        spans: list[tuple[int, int]] = []
        for offset, char_folded in enumerate(per_char):
            spans.extend([(offset, offset + 1)] * len(char_folded))
        return folded, tuple(spans)
    return folded, ((0, len(unit)),) * len(folded)


# ----------------------------------------------------------------------------------------
# Symbol and number stage, on the Unicode-folded text

# (the comma comes first so that the regex engine can scan for it quickly)
_THOUSANDS_COMMA = r",(?<=[0-9],)(?=[0-9]{3}(?![0-9]))"
#: Removes thousands separators; shared with the tokenizer's ASCII fast path.
THOUSANDS_COMMA_RE = re.compile(_THOUSANDS_COMMA)


@lru_cache(maxsize=8)
def _symbol_pattern(numbers: bool, percent: bool, currency: bool) -> re.Pattern[str] | None:
    symbols = (PERCENT_SIGNS if percent else "") + ("".join(CURRENCY_WORDS) if currency else "")
    alternatives = []
    if numbers:
        alternatives.append(_THOUSANDS_COMMA)
    if symbols:
        alternatives.append("[" + re.escape(symbols) + "]")
    return re.compile("|".join(reversed(alternatives))) if alternatives else None


def symbol_word(symbol: str) -> str | None:
    """The word a percent or currency symbol folds to, or None.

    Examples
    --------
    >>> symbol_word("€"), symbol_word("%"), symbol_word("#")
    ('euro', 'percent', None)
    """
    if symbol in PERCENT_SIGNS:
        return PERCENT_WORD
    return CURRENCY_WORDS.get(symbol)


def _fold_symbols_and_numbers(
    text: str, starts: np.ndarray, ends: np.ndarray, config: NormalizerConfig
) -> tuple[str, np.ndarray, np.ndarray]:
    pattern = _symbol_pattern(
        config.normalize_numbers, config.normalize_percent, config.normalize_currency
    )
    if pattern is None:
        return text, starts, ends
    out_text: list[str] = []
    positions: list[int] = []  # folded chars that are replaced (or removed)
    lengths: list[int] = []  # by how many output chars
    previous = 0
    n_chars = len(text)
    for match in pattern.finditer(text):
        position = match.start()
        out_text.append(text[previous:position])
        symbol = match.group()
        word = ""  # a comma match is a thousands separator: removed
        if symbol != ",":
            word = symbol_word(symbol) or symbol
            if position > 0 and text[position - 1] not in _SPACE_CHARS:
                word = " " + word
            if position + 1 < n_chars and text[position + 1] not in _SPACE_CHARS:
                word = word + " "
        out_text.append(word)
        positions.append(position)
        lengths.append(len(word))
        previous = position + 1
    if not positions:
        return text, starts, ends
    out_text.append(text[previous:])
    # every output char maps to the folded char it comes from
    repeats = np.ones(n_chars, dtype=np.int64)
    repeats[positions] = lengths
    index = np.repeat(np.arange(n_chars, dtype=np.int64), repeats)
    return "".join(out_text), starts[index], ends[index]
