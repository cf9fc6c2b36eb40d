"""What a value of a text reads as: which tokens are values, their kind and class, the key
they are compared by, and what the text around them adds (a sign, a leading point, a scale
word, being one end of a range).

A value is a token with a digit, or a month name (:func:`value_mask`); its kind is percent,
currency, date or number (:func:`value_kind`), read from up to 12 characters on each side;
:func:`value_class` splits dates so that only like values are compared; :func:`value_key`
folds how it is written. The tokenizers keep tokens alphanumeric, so the sign of ``-40``,
the point of ``.5`` and the scale word of ``2.4 million`` are read from the text around the
token (:func:`_value_prefix`, :func:`_value_scale`). :data:`SCALES` is the one list of
scale words, which :func:`may_be_scaled` (a sentence's prefilter) reads too. How values
are paired and when they conflict: :mod:`citekit._citations.conflicts`, and the user
guide's status rules (docs/guide/status.rst).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from functools import lru_cache
from typing import Any

import numpy as np

from citekit.normalize import _NUMBER_SEPARATORS, _SCRIPT_DIGIT, _ascii_digit_match

__all__ = [
    "SCALES",
    "PREFIXED_VALUE",
    "value_mask",
    "value_key",
    "value_kind",
    "value_class",
    "may_be_prefixed",
    "may_be_scaled",
]

# a percent sign after a value (ASCII, full-width, Arabic) belongs to it
_PERCENT_CHARS = "%％\u066a"
# what makes a value a percentage when it follows it
_PERCENT_AFTER = (*_PERCENT_CHARS, "percent", "per cent", "pct")
_CURRENCY_WORDS = frozenset(
    {"dollar", "dollars", "usd", "euro", "euros", "eur", "pound", "pounds", "gbp", "yen", "jpy"}
)
_MONTHS = frozenset("""
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split())
_DATE_SHAPE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$")


def _has_digit(text: str) -> bool:
    """``any(char.isdigit() for char in text)``, without the loop for plain words."""
    return not text.isalpha() and any(char.isdigit() for char in text)


@lru_cache(maxsize=1 << 16)
def _is_value(surface: str) -> bool:
    folded = surface.casefold()
    if folded == "may":  # the month, not the verb
        return surface == "May"
    return _has_digit(surface) or folded in _MONTHS


def value_mask(text: str, starts: Any, ends: Any) -> np.ndarray:
    """Which tokens ``text[starts[i]:ends[i]]`` are values: a digit, or a month name.

    Examples
    --------
    >>> text = "Sales grew 9% in May 2020, may rise"
    >>> value_mask(text, [0, 11, 17, 21, 31], [5, 12, 20, 25, 34]).tolist()
    [False, True, True, True, False]
    """
    spans = zip(np.asarray(starts).tolist(), np.asarray(ends).tolist())
    return np.fromiter((_is_value(text[s:e]) for s, e in spans), dtype=bool, count=len(starts))


# what classifies a value: the characters around it, up to this many on each side
_NEIGHBOURHOOD = 12


def value_kind(text: str, start: int, end: int) -> str:
    """Classify the value ``text[start:end]``: percent, currency, date or number.

    Examples
    --------
    >>> s = "grew 9% to $2.1 million in March 2020"
    >>> [value_kind(s, *span) for span in [(5, 6), (12, 15), (27, 32), (33, 37)]]
    ['percent', 'currency', 'date', 'date']
    """
    return _kind_between(
        text[max(0, start - _NEIGHBOURHOOD) : start],
        text[start:end],
        text[end : end + _NEIGHBOURHOOD],
    )


def _kind_between(before: str, surface: str, after: str) -> str:
    """:func:`value_kind` of a value ``surface`` that the texts ``before`` and ``after``
    (its neighbourhood: up to 12 characters each) surround."""
    # digits alone are no month name, and hold no separator: never a full date
    if not surface.isdigit() and (surface.casefold() in _MONTHS or _DATE_SHAPE.match(surface)):
        return "date"
    after_stripped = after.casefold().lstrip()
    if after_stripped.startswith(_PERCENT_AFTER):
        return "percent"
    before_stripped = before.casefold().rstrip()
    if before_stripped and unicodedata.category(before_stripped[-1]) == "Sc":
        return "currency"
    if after_stripped and unicodedata.category(after_stripped[0]) == "Sc":
        return "currency"
    first_word_after = after_stripped.split(" ", 1)[0].strip(".,;:") if after_stripped else ""
    if first_word_after in _CURRENCY_WORDS:
        return "currency"
    last_word_before = before_stripped.rsplit(" ", 1)[-1] if before_stripped else ""
    if last_word_before in _MONTHS or first_word_after in _MONTHS:
        return "date"
    if _year_number(surface):
        if first_word_after not in {"dollars", "euros", "people", "units"}:
            return "date"
    return "number"


def _year_number(surface: str) -> bool:
    """Whether the digits ``surface`` read as a year from 1000 to 2999 (also when written
    with digits that only NFKC makes decimal, such as superscripts: ``²⁰²⁰``)."""
    if not surface.isdigit():
        return False
    if not surface.isdecimal():
        surface = unicodedata.normalize("NFKC", surface)
    return len(surface) == 4 and surface.isdecimal() and 1000 <= int(surface) <= 2999


_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)$")
_RANGE = re.compile(r"\d\s*[-\u2013\u2014/]\s*\d")


def value_class(text: str, start: int, end: int) -> str:
    """:func:`value_kind`, with dates split into month, year, day and full date, so that
    only like values are compared (a year never conflicts with a month or a day).

    Examples
    --------
    >>> s = "on 27 July 2018, 2020-01-05"
    >>> [value_class(s, *span) for span in [(3, 5), (6, 10), (11, 15), (17, 27)]]
    ['day', 'month', 'year', 'date']
    """
    return _class_of_kind(value_kind(text, start, end), text[start:end])


def _class_of_kind(kind: str, surface: str) -> str:
    """:func:`value_class` of a value ``surface`` whose :func:`value_kind` is ``kind``."""
    if kind != "date":
        return kind
    if surface.casefold() in _MONTHS:
        return "month"
    if surface.isdigit():  # digits alone hold no separator: never a full date
        return "year" if len(surface) == 4 else "day"
    if _DATE_SHAPE.match(surface):
        return "date"
    return "day"


_MONTH_NUMBER = {
    name: number
    for number, names in enumerate(
        [
            "january jan janv jän",
            "february feb febr fév févr",
            "march mar mär mars",
            "april apr avr",
            "may mai",
            "june jun juin",
            "july jul juil",
            "august aug août",
            "september sep sept",
            "october oct okt",
            "november nov",
            "december dec dez déc",
        ],
        start=1,
    )
    for name in names.split()
}
_RANGE_BEFORE = re.compile(r"\d\s*(?:to|-|\u2013|\u2014)\s*$")
_RANGE_AFTER = re.compile(r"^\s*(?:to|-|\u2013|\u2014)\s*\d")
# what the range test reads: up to this many characters on each side of a value
_RANGE_WINDOW = 8


def _in_range(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]`` is one end of a range ("80 to 85")."""
    return _range_around(
        text[max(0, start - _RANGE_WINDOW) : start], text[end : end + _RANGE_WINDOW]
    )


# the last character before a range's second end ("to", a dash), the first after its first
_RANGE_LAST = frozenset("o-\u2013\u2014")
_RANGE_FIRST = frozenset("t-\u2013\u2014")


def _range_around(before: str, after: str) -> bool:
    """:func:`_in_range` of a value that the texts ``before`` and ``after`` surround (of
    which the range test reads 8 characters on each side)."""
    # both patterns need "to" or a dash next to the value (past white space): most values
    # have neither, and the regexes are not run
    return bool(
        (before.rstrip()[-1:] in _RANGE_LAST and _RANGE_BEFORE.search(before[-_RANGE_WINDOW:]))
        or (after.lstrip()[:1] in _RANGE_FIRST and _RANGE_AFTER.match(after[:_RANGE_WINDOW]))
    )


def _is_range(surface: str) -> bool:
    """Whether the value ``surface`` is a range itself ("2018-2019", "80/85")."""
    # digits alone hold no dash or slash: the regex is not run
    return (
        not surface.isdigit()
        and ("-" in surface or "/" in surface or "\u2013" in surface or "\u2014" in surface)
        and _RANGE.search(surface) is not None
    )


# a separator between digits that starts a group of exactly three digits, or of two
# digits followed by more groups (the Indian 1,00,000): "1,200" is 1200, "1,00,000" is
# 100000, but "2,5" (a decimal comma) and "1,2,3" (a list) keep their commas
_DIGIT_SEPARATOR = r"[,\s_'\u2009\u202f]"
_DIGIT_GROUP = re.compile(
    rf"(?<=\d){_DIGIT_SEPARATOR}(?=(?:\d\d{_DIGIT_SEPARATOR})*\d{{3}}(?!\d))"
)


@lru_cache(maxsize=1 << 16)
def value_key(surface: str) -> str:
    """How a value is compared: NFKC, case-folded, digits of every script as ASCII ones
    and the Arabic separators as ``.`` and ``,``, without digit-group separators and
    ordinal suffixes (``7th`` = ``7``, ``1,200`` = ``1200`` = ``١٬٢٠٠`` = ``1 200``,
    ``1,00,000`` = ``100000``); month names by number (``Nov.`` = ``November``). A
    separator is a digit-group one only where it starts a group of three digits (or of
    two followed by more groups, as in ``1,00,000``), the tokenizers' rule for commas
    (which reads only the groups of three): the comma of ``2,5`` (a decimal comma) or
    ``1,2,3`` (a list) is kept, so neither equals ``25`` or ``123``.

    Examples
    --------
    >>> [value_key(v) for v in ["7th", "7", "1,200", "1 200", "Nov.", "November", "2.5"]]
    ['7', '7', '1200', '1200', 'month 11', 'month 11', '2.5']
    >>> [value_key(v) for v in ["2,5", "1,2,3", "3,14159", "1,00,000", "1,234.5"]]
    ['2,5', '1,2,3', '3,14159', '100000', '1234.5']
    >>> value_key("١٬٢٠٠"), value_key("٣٫٥")
    ('1200', '3.5')
    """
    folded = unicodedata.normalize("NFKC", surface).casefold()
    month = _MONTH_NUMBER.get(folded.rstrip("."))
    if month is not None:
        return f"month {month}"
    if not folded.isascii():
        folded = _SCRIPT_DIGIT.sub(_ascii_digit_match, folded).translate(_NUMBER_SEPARATORS)
    folded = _DIGIT_GROUP.sub("", folded)
    return _ORDINAL.sub("", folded)


def _value_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a value token to an adjacent currency sign before or percent sign after."""
    if start > 0 and unicodedata.category(text[start - 1]) == "Sc":
        start -= 1
    if end < len(text) and text[end] in _PERCENT_CHARS:
        end += 1
    return start, end


# A value's sign and leading decimal point: the tokenizers keep tokens alphanumeric, so the
# "-" of "-40" and the "." of ".5" are no part of the token "40" or "5"; find_conflicts
# reads them from the text. A minus sign (ASCII hyphen-minus, the minus sign, the small
# and the full-width hyphen-minus) belongs to the number after it (past one currency sign:
# "-$5", "$-5") when white space, the start of the text, a currency sign or an opening
# bracket, quote, "=", ":", ",", ";" or "/" comes before it: not in "COVID-19" or
# "2018-2019" (one token each), "x-5" or "pp. 3-5". A decimal point belongs to the
# number after it when white space, the start, a currency sign, a minus sign or an opening
# bracket or quote comes before it (".5", "$.5", "-.5"): not after a word or a closing
# bracket (".2" in "pneumothorax).2" is a footnote).
_MINUS_CHARS = "-\u2212\ufe63\uff0d"
_BEFORE_SIGN = frozenset("([{\"'\u201c\u2018\u00ab=:,;/")
_BEFORE_POINT = frozenset("([{\"'\u201c\u2018\u00ab" + _MINUS_CHARS)
# where a sign or a leading point may stand before a value: a quick test that finds every
# such place (and a few others), so that texts without one are not read token by token
# (the character before the sign is tested after the sign is found: four times faster
# than a look-behind at every position)
PREFIXED_VALUE = re.compile(r"[-\u2212\ufe63\uff0d.](?<![^\W_].)\S?[^\W_]")


def _opens_value(char: str, allowed: frozenset[str]) -> bool:
    """Whether ``char`` may stand before a sign or a leading point of a value."""
    return char.isspace() or char in allowed or unicodedata.category(char) == "Sc"


def _value_prefix(text: str, start: int, end: int) -> tuple[str, int]:
    """``(prefix, first)`` of the value ``text[start:end]``: its sign and leading point
    as they prefix its :func:`value_key` (``"-"``, ``"0."``, ``"-0."`` or ``""``) and
    where they start (``start`` when there is none). Only a value starting with a digit
    has one, and only inside the text.

    Examples
    --------
    >>> [_value_prefix(t, t.index("5"), t.index("5") + 1) for t in ["to -5", "at .5", "-$5", "x-5"]]
    [('-', 3), ('0.', 3), ('-', 0), ('', 2)]
    """
    if not 0 < start < end <= len(text) or not text[start].isdigit():
        return "", start
    at, point = start, ""
    if text[at - 1] == "." and (at == 1 or _opens_value(text[at - 2], _BEFORE_POINT)):
        at, point = at - 1, "0."
    sign = at
    if sign > 0 and unicodedata.category(text[sign - 1]) == "Sc":  # "-$5"
        sign -= 1
    if (
        sign > 0
        and text[sign - 1] in _MINUS_CHARS
        and (sign == 1 or _opens_value(text[sign - 2], _BEFORE_SIGN))
    ):
        return "-" + point, sign - 1
    return point, at


def may_be_prefixed(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` may hold a value that a sign or a leading point before
    it changes where its tokens match (:data:`PREFIXED_VALUE`, read from three characters
    before ``start``); false alarms only cost a comparison.

    Examples
    --------
    >>> [may_be_prefixed(t, 0, len(t)) for t in ["fell to -40", "at .5", "COVID-19", "5"]]
    [True, True, False, False]
    >>> may_be_prefixed("rate -5", 6, 7)  # the sign stands before the range
    True
    """
    return PREFIXED_VALUE.search(text, max(0, start - 3), end) is not None


# Scale words: "2.4 million" is 2400000, "$1.5bn" is "$1.5 billion"; "2.4 million" and
# "2.4 billion" differ although their tokens "2.4" match. A scale word follows the number
# (after at most one white-space character), or an abbreviation ends its token ("2.4bn").
# The one list of them, with the power of ten each gives: every reader of scale words (the
# patterns below, may_be_scaled, the unit words the direction readers skip) is built from it
_SCALE_ABBREVIATIONS = {"bn": 9, "mn": 6, "tn": 12}  # these may also end the number's token
SCALES: dict[str, int] = {
    "thousand": 3, "million": 6, "billion": 9, "trillion": 12, **_SCALE_ABBREVIATIONS
}
_SCALE_AFTER = re.compile(
    r"\s?(" + "|".join(map(re.escape, SCALES)) + r")\b", re.IGNORECASE
)
_SCALED_KEY = re.compile(
    r"(\d+(?:\.\d+)?)(" + "|".join(map(re.escape, _SCALE_ABBREVIATIONS)) + ")"
)
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# any scale word anywhere, in any casing (the same case-insensitive matching as
# _SCALE_AFTER's), attached to its number or not: may_be_scaled's prefilter. That search
# is several times slower than one of the lower-cased text, which finds the same words
# unless a non-ASCII character of the text matches a letter of one case-insensitively
# (the dotless i of "mıllion", the long s of "thouſand"; with ASCII scale words): only
# then is it run
_ANY_SCALE = re.compile("|".join(map(re.escape, SCALES)), re.IGNORECASE)
_ANY_LOWER_SCALE = re.compile("|".join(re.escape(word.lower()) for word in SCALES))
_ASCII_SCALES = all(word.isascii() for word in SCALES)
_SCALE_LETTER_VARIANT = re.compile(
    r"[^\x00-\x7f](?<=(?i:[" + re.escape("".join(sorted(set("".join(SCALES))))) + "]))"
)


def _scale_word(text: str, start: int, end: int) -> re.Match[str] | None:
    """The scale word after the number ``text[start:end]`` (by :func:`value_key`, digits
    with at most a decimal point: "2,400" is one), with the white space before it."""
    if 0 <= start < end <= len(text) and _PLAIN_NUMBER.fullmatch(value_key(text[start:end])):
        return _SCALE_AFTER.match(text, end)
    return None


def _scale_power(word: str) -> int:
    """The power of ten of a scale word as :data:`_SCALE_AFTER` matches it, in any casing
    it accepts: case-insensitive matching also takes the dotless i and the long s ("mıllıon",
    "thouſand"), which case-folding leaves as they are.

    Examples
    --------
    >>> _scale_power("Million"), _scale_power("m\u0131ll\u0131on"), _scale_power("BN")
    (6, 6, 9)
    """
    power = SCALES.get(word.casefold())
    if power is None:
        power = next(
            power for scale, power in SCALES.items()
            if re.fullmatch(re.escape(scale), word, re.IGNORECASE)
        )
    return power


def _value_scale(text: str, start: int, end: int) -> int:
    """The power of ten that a scale word after the number ``text[start:end]`` gives it
    (:func:`_scale_word`): 6 for "2.4 million", 0 when none follows."""
    match = _scale_word(text, start, end)
    return 0 if match is None else _scale_power(match.group(1))


def _scaled_key(key: str, text: str, start: int, end: int) -> str:
    """``key`` (:func:`value_key` of ``text[start:end]``) as the plain number it states
    with its scale: "2400000" for "2.4 million" or "2.4mn"; ``key`` when it has none.

    Examples
    --------
    >>> t = "2.4 million, $1.5bn, 7 thousands"
    >>> _scaled_key("2.4", t, 0, 3), _scaled_key("1.5bn", t, 14, 19), _scaled_key("7", t, 21, 22)
    ('2400000', '1500000000', '7')
    """
    number, power = key, 0
    match = _SCALED_KEY.fullmatch(key)
    if match is not None:
        number, power = match.group(1), SCALES[match.group(2)]
    elif _PLAIN_NUMBER.fullmatch(key):
        power = _value_scale(text, start, end)
    if not power:
        return key
    return format(Decimal(number).scaleb(power), "f")


def _attached_scale(text: str, start: int, end: int) -> bool:
    """Whether the number ``text[start:end]`` carries its scale ("2.4bn", "$3mn")."""
    return _SCALED_KEY.fullmatch(value_key(text[start:end])) is not None


def may_be_scaled(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` may hold a scale word of :data:`SCALES` (apart from its
    number or attached to it, in any casing); false alarms only cost a comparison.

    A prefilter: a sentence in which this finds none has no value whose scale word
    (:func:`_value_scale`) could contradict a matched one, whatever the source says (a
    number without a scale is not contradicted by the same number with one).

    Examples
    --------
    >>> [may_be_scaled(t, 0, len(t)) for t in ["$2.4 BILLION", "2.4bn", "Sales grew 9%"]]
    [True, True, False]
    >>> may_be_scaled("3 million", 0, 2)
    False
    """
    sentence = text[start:end]
    if not _ASCII_SCALES:
        return _ANY_SCALE.search(sentence) is not None
    if _ANY_LOWER_SCALE.search(sentence.lower()) is not None:
        return True
    return (
        not sentence.isascii()
        and _SCALE_LETTER_VARIANT.search(sentence) is not None
        and _ANY_SCALE.search(sentence) is not None
    )


# what find_conflicts learns of a value that is one end of a range: nothing to compare
_PART_OF_RANGE: tuple[None, str, int, int, str, int, bool] = (None, "", 0, 0, "", -1, False)
# (key, class, widen_left, widen_right, kind, scale word end, attached scale): _value_facts
_ValueFacts = tuple[str | None, str, int, int, str, int, bool]


# (4,096 neighbourhoods: about 1.4 MB when full)
@lru_cache(maxsize=1 << 12)
def _value_facts(neighbourhood: str, start: int, end: int) -> _ValueFacts:
    """What :func:`~citekit._citations.conflicts.find_conflicts` needs of the value
    ``neighbourhood[start:end]``, where ``neighbourhood`` holds up to 12 characters of
    text on each side of it (all that the tests read): its key (None when it is one end of
    a range), its class, by how many characters its span widens to the left and to the
    right (a currency sign before it, a percent sign after it: 0 or 1), its kind, how far
    past its end the scale word after it ends (:func:`_scale_word`, with its white space:
    8 for " million"; -1 when none follows) and whether the number carries its scale
    (:func:`_attached_scale`: "2.4bn"). The scale word fits the neighbourhood: its pattern
    reads at most 10 characters.

    A value met again in the same neighbourhood (a passage checked for several sentences,
    overlapping passages) is then looked up, not analysed again."""
    before, surface, after = neighbourhood[:start], neighbourhood[start:end], neighbourhood[end:]
    if _is_range(surface) or _range_around(before, after):
        return _PART_OF_RANGE
    kind = _kind_between(before, surface, after)
    widen_left = 1 if before and unicodedata.category(before[-1]) == "Sc" else 0
    widen_right = 1 if after[:1] and after[0] in _PERCENT_CHARS else 0
    key = _scaled_key(value_key(surface), neighbourhood, start, end)
    prefix, first = _value_prefix(neighbourhood, start, end)
    if prefix:  # "-40", ".5", "-$5", "$-5": the span takes the sign, point and currency
        widen_left = start - first + (
            1 if first > 0 and unicodedata.category(neighbourhood[first - 1]) == "Sc" else 0
        )
        key = prefix + key
    scale_word = _scale_word(neighbourhood, start, end)
    return (
        key, _class_of_kind(kind, surface), widen_left, widen_right, kind,
        -1 if scale_word is None else scale_word.end() - end,
        _attached_scale(neighbourhood, start, end),
    )


def _value_facts_at(text: str, start: int, end: int) -> _ValueFacts:
    """:func:`_value_facts` of the value ``text[start:end]``."""
    if 0 <= start <= end <= len(text):
        # a value inside the text: the windows that the tests read (12 characters on each
        # side for value_kind, 8 for the range test, 1 for the span) are pieces of its
        # neighbourhood
        first = max(0, start - _NEIGHBOURHOOD)
        return _value_facts(
            text[first : end + _NEIGHBOURHOOD], start - first, end - first
        )
    # offsets outside the text, or reversed: every test reads its own window, as written
    surface = text[start:end]
    if _is_range(surface) or _in_range(text, start, end):
        return _PART_OF_RANGE
    wide_start, wide_end = _value_span(text, start, end)
    kind = value_kind(text, start, end)
    widen_left, widen_right = start - wide_start, wide_end - end
    key = _scaled_key(value_key(surface), text, start, end)
    scale_word = _scale_word(text, start, end)
    return (
        key, _class_of_kind(kind, surface), widen_left, widen_right, kind,
        -1 if scale_word is None else scale_word.end() - end, _attached_scale(text, start, end),
    )
