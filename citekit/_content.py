"""Which answer tokens carry content, and which values conflict with the evidence.

Status and unsupported spans are decided on CONTENT tokens: a sentence is not supported
because its stop words ("the", "is", "of"; Russian "является", Arabic "هي", Hindi "है",
Chinese "的", "是", "了") or punctuation appear in a source. A token is
content unless its text (case-folded) is a function word of :data:`STOP_WORDS` or it has
no letter, digit or symbol such as an emoji: punctuation, and currency or percent signs
(which only qualify the number beside them, the content token), are not content.
Negations ("not", "no", "never") are content: they change what a sentence claims.

Coverage weights (:func:`coverage_weights`): when the share of a sentence that its
evidence covers is measured, a value (a token with a digit, or a number word) weighs
:data:`VALUE_WEIGHT` = 2, another content word 1, and a function word
:data:`FUNCTION_WORD_WEIGHT` = 1/4 (punctuation 0). A number cannot be paraphrased, so
a value the evidence lacks is the clearest sign of an unsupported fact, while a content
word the evidence lacks may be a paraphrase; a function word the evidence lacks ("all",
"only", "I", "you") says a little about the claim too, but never enough to support it.

Letters of scripts written without spaces and tokenized one character (or grapheme cluster)
at a time -- Thai, Lao, Myanmar, Khmer, Hiragana, Katakana -- are content tokens, but not
words: a passage of such text holds most of a small alphabet, so the share of a sentence's
distinct tokens that a passage holds says nothing for them (:func:`letter_token_mask`; Han
characters, each a morpheme of a large set, count as words there, but a passage covers one
only next to its neighbour, :func:`ideograph_token_mask`).

Value conflicts: where the alignment of an answer sentence with its evidence leaves a
number, percentage, amount or date of the answer facing a DIFFERENT one in the evidence
(``grew 9%`` against ``grew 15%``), the pair is reported as a
:class:`~citekit.results.Conflict`; so is a value matched token for token whose sign,
leading decimal point or scale differs (``-40`` against ``40``, ``.5`` against ``5``,
``$2.4 million`` against ``$2.4 billion``: the tokenizers keep tokens alphanumeric, so the
sign is read from the text before the token, :func:`_value_prefix`, and the scale word
from the text after it, :func:`_value_scale`). Values are compared with their scales
(``$1.5bn`` = ``$1.5 billion`` = ``$1,500 million``); a matched value without one is
not contradicted by the same number with one (``$2.4`` against ``$2.4 million``: its
context may give the scale). A value described as a fall (``fell 3%``, ``a decline of 3%``)
equals its negative; the same value described as a rise in one text and as a fall in the
other is a conflict (``rose 3%`` against ``fell 3%``, ``a profit of $3m`` against ``a
loss of $3m``, ``a 3% increase`` against ``a 3% decrease``: the word before the value, else
the one after it), whose texts then take the words that say so (words of English, German,
French, Spanish and Russian: ``stieg um 3 %``, ``baisse de 3 %``, ``cayó un 3 %``, ``упал на
3%``); so is the same level reached by a rise in one and by a fall in the other (``rose to
3%`` against ``fell to 3%``, ``rose from 7% to 5%`` against ``fell from 7% to 5%``), which
is never compared with a change.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from citekit.normalize import _NUMBER_SEPARATORS, _SCRIPT_DIGIT, _ascii_digit_match
from citekit.results import Conflict

__all__ = [
    "STOP_WORDS",
    "is_content_token",
    "content_mask",
    "letter_token_mask",
    "ideograph_token_mask",
    "fold_surface",
    "coverage_weights",
    "VALUE_WEIGHT",
    "FUNCTION_WORD_WEIGHT",
    "citation_marker_mask",
    "value_key",
    "value_kind",
    "value_class",
    "find_conflicts",
    "directions_in",
]

# Function words of English, plus the most frequent ones of German, French, Spanish,
# Russian, Arabic and Hindi, and Chinese function characters. Not the negations (they
# change what a sentence claims).
STOP_WORDS: frozenset[str] = frozenset("""
    a an the and or but if then else when while at by for with about against between into
    through during before after above below to from up down in out on off over under again
    further once here there where why how all any both each few more most other some such
    only own same so than too very can could will would shall should may might must just
    now of as is are was were be been being have has had having do does did doing this that
    these those i you he she it we they me him her us them my your his its our their mine
    yours ours theirs what which who whom whose also per via
    der die das den dem des ein eine einer eines einem einen und oder aber im am zum zur
    ist sind war waren wird werden wurde wurden hat haben mit von zu auf für bei aus nach
    le la les un une des du de et ou mais est sont était été au aux en dans sur pour par
    avec que qui ce cette ces il elle ils elles
    el los las una unos unas y o pero es son fue era del al con por para que en se lo
    и в во на с со по к ко у о об из за от до для что это этот эта эти как а но или же ли
    бы то так также который которая которое которые является являются был была было были
    быть он она оно они мы вы я его ее её их ему ей им при под над между через
    في من إلى على عن مع هو هي هم أن إن كان كانت التي الذي الذين هذا هذه ذلك تلك أو ثم قد
    का की के को में से पर और है हैं था थी थे यह वह ये वे भी तो कि
    """.split()) | frozenset(
    # Chinese function characters (particles, pronouns, the copula, a measure word),
    # tokens of their own: in any passage of Chinese, whatever it says. Not the negations
    # (不, 没), nor the numerals, nor characters that are words of their own too (都 as in
    # 首都, 地 as in 土地, 得, 将, 对, 为).
    "的了是在和与及或这那个之其也就而着被把从于们我你他她它很吗呢吧啊已并但则有"
)

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


@lru_cache(maxsize=1 << 16)
def is_content_token(surface: str) -> bool:
    """Whether a token's text carries content (not a stop word, not pure punctuation).

    Examples
    --------
    >>> [is_content_token(t) for t in ["Revenue", "the", ",", "%", "$", "not", "15", "🎉"]]
    [True, False, False, False, False, True, True, True]
    """
    if surface.casefold() in STOP_WORDS:
        return False
    for char in surface:
        if char.isalnum():
            return True
        category = unicodedata.category(char)
        # emoji and other symbols carry meaning; a currency or percent sign only
        # qualifies the number next to it, which is the content token
        if category in ("So", "Sm", "Sk", "Mn"):
            return True
    return False


_SUFFIXES = ("ing", "ed", "es", "s")
_VOWELS = frozenset("aeiouy")
# number words fold to their digits, so that "twelve-bar" covers "12 bar"
_NUMBER_WORDS = {
    word: str(number)
    for number, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS.update(
    (word, str(10 * tens))
    for tens, word in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), 3)
)


def _stem(word: str) -> str:
    """Remove a light inflection from a lower-case alphabetic word (see fold_surface)."""
    for suffix in ("ies", "ied"):  # countries / country, studied / study
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)] + "y"
    # -eed is the root's, not a past tense: need / needs / needed all fold to "need"
    # (and "seed", "feed" stay apart from "see", "fee")
    if word.endswith("eed"):
        return word
    # a vowel and a consonant before -ing: the verb lost its final e (using / use)
    if len(word) == 5 and word.endswith("ing") and word[0] in _VOWELS and word[1] not in _VOWELS:
        return word[:2] + "e"
    stem = word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            stem = word[: -len(suffix)]
            break
    else:
        if word.endswith("ed") and len(word) >= 4:  # used / use
            return word[:-1]
    if stem.endswith("e") and len(stem) >= 4:  # make / making, state / stated
        return stem[:-1]
    if (  # stopped / stop, planned / plan (but falls / fall, passes / pass)
        stem is not word
        and len(stem) >= 4
        and stem[-1] == stem[-2]
        and stem[-1] not in _VOWELS
        and stem[-1] not in "lsz"
    ):
        return stem[:-1]
    return stem


def _has_digit(text: str) -> bool:
    """``any(char.isdigit() for char in text)``, without the loop for plain words."""
    return not text.isalpha() and any(char.isdigit() for char in text)


def _has_alnum(text: str) -> bool:
    """``any(char.isalnum() for char in text)``, without the loop for plain words."""
    return text.isalnum() or any(char.isalnum() for char in text)


@lru_cache(maxsize=1 << 16)
def fold_surface(surface: str) -> str:
    """A token's text folded for "same word" tests: NFKC, case-folded, a possessive
    ('s) removed, number words as digits (``twelve`` = ``12``), and for alphabetic words
    a light inflection removed: -ies/-ied become -y, then -ing, -ed, -es or -s go when at
    least three letters remain, and a final e or a doubled final consonant is dropped
    (``making`` = ``make``, ``stopped`` = ``stop``); a final -eed is kept (``needed`` =
    ``need``, ``seed`` is not ``see``), and -ing after a vowel and a consonant restores
    the e (``using`` = ``use``). Values compare by :func:`value_key` (``7th`` = ``7``).

    Used only to decide whether evidence covers an answer word (``grows`` / ``growing``,
    ``analysts`` / ``analyst``); alignment and the index use the tokenizer's ids.

    Examples
    --------
    >>> words = ["Analysts", "growing", "ended", "uses", "1990s", "ﬁnal", "Energy's"]
    >>> [fold_surface(w) for w in words]
    ['analyst', 'grow', 'end', 'use', '1990s', 'final', 'energy']
    >>> [fold_surface(w) for w in ["countries", "country", "making", "make", "stopped", "used"]]
    ['country', 'country', 'mak', 'mak', 'stop', 'use']
    >>> fold_surface("Twelve"), fold_surface("falls")
    ('12', 'fall')
    >>> [fold_surface(w) for w in ["need", "needed", "using", "used"]]
    ['need', 'need', 'use', 'use']
    """
    if _has_digit(surface):
        return value_key(surface)
    folded = unicodedata.normalize("NFKC", surface).casefold()
    for possessive in ("'s", "\u2019s"):
        if folded.endswith(possessive) and len(folded) > 3:
            folded = folded[:-2]
            break
    number = _NUMBER_WORDS.get(folded)
    if number is not None:
        return number
    if folded.isalpha():
        return _stem(folded)
    return folded


# weights of a token when the share of a sentence covered by evidence is measured
VALUE_WEIGHT = 2.0
FUNCTION_WORD_WEIGHT = 0.25


def coverage_weights(folded: Any, content: np.ndarray) -> np.ndarray:
    """Weight of each token in the covered share of a sentence (see the module doc).

    Parameters
    ----------
    folded : sequence of str
        The tokens' texts folded by :func:`fold_surface`.
    content : ndarray of bool
        Which tokens are content tokens.

    Returns
    -------
    ndarray of float64
        :data:`VALUE_WEIGHT` for content tokens holding a digit (numbers, dates, number
        words), 1 for other content tokens, :data:`FUNCTION_WORD_WEIGHT` for other
        tokens with a letter, 0 for punctuation.

    Examples
    --------
    >>> folded = [fold_surface(w) for w in ["Revenue", "grew", "fifteen", "percent", "in", ","]]
    >>> coverage_weights(folded, np.array([True, True, True, True, False, False])).tolist()
    [1.0, 1.0, 2.0, 1.0, 0.25, 0.0]
    """
    return np.array(
        [
            _token_weight(text, is_content)
            for text, is_content in zip(folded, np.asarray(content).tolist())
        ],
        dtype=np.float64,
    ).reshape(-1)


@lru_cache(maxsize=1 << 16)
def _token_weight(folded: str, is_content: bool) -> float:
    """One token's weight in :func:`coverage_weights` (tokens repeat: cached)."""
    if is_content:
        return VALUE_WEIGHT if _has_digit(folded) else 1.0
    return FUNCTION_WORD_WEIGHT if _has_alnum(folded) else 0.0


@lru_cache(maxsize=1 << 16)
def token_facts(surface: str, is_content: bool) -> tuple[str, float, bool]:
    """A token's folded text (:func:`fold_surface`), its weight (:func:`coverage_weights`)
    and whether it is a value (:func:`value_mask`), in one cached look-up.

    Examples
    --------
    >>> token_facts("Twelve", True), token_facts("the", False)
    (('12', 2.0, False), ('the', 0.25, False))
    """
    folded = fold_surface(surface)
    return folded, _token_weight(folded, is_content), _is_value(surface)


@lru_cache(maxsize=1 << 16)
def surface_facts(surface: str) -> tuple[bool, str, float, float, bool]:
    """What the pipeline needs of an answer token's text, in one cached look-up: whether
    it is a content token (:func:`is_content_token`), its folded text
    (:func:`fold_surface`), its coverage weight as a content token and as another token
    (:func:`coverage_weights`), and whether it is a value (:func:`value_mask`).

    Examples
    --------
    >>> surface_facts("Twelve"), surface_facts("the")
    ((True, '12', 2.0, 0.25, False), (False, 'the', 1.0, 0.25, False))
    """
    folded = fold_surface(surface)
    return (
        is_content_token(surface),
        folded,
        _token_weight(folded, True),
        _token_weight(folded, False),
        _is_value(surface),
    )


# reference markers that generated answers carry: [1], [2, 3], [4-6], [^1], 【3†source】
CITATION_MARKER = re.compile(
    r"\[\^?\d{1,4}(?:\s*[,;\u2013-]\s*\^?\d{1,4})*\]|\[\^[\w-]{1,20}\]|【[^】\n]{0,40}】"
)


def citation_marker_mask(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens lying inside a reference marker such as ``[1]`` or ``[2, 3]``.

    Markers point at sources; they are not claims, so the pipeline neither aligns nor
    reports them.

    Examples
    --------
    >>> text = "Revenue grew 15% [1][2, 3]."
    >>> starts, ends = np.array([0, 8, 13, 15, 18, 21, 24]), np.array([7, 12, 15, 16, 19, 22, 25])
    >>> citation_marker_mask(text, starts, ends).tolist()
    [False, False, False, False, True, True, True]
    """
    mask = np.zeros(starts.shape[0], dtype=bool)
    if "[" not in text and "【" not in text:
        return mask
    for match in CITATION_MARKER.finditer(text):
        mask |= (starts >= match.start()) & (ends <= match.end())
    return mask


def content_mask(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Boolean mask of the content tokens among tokens ``text[starts[i]:ends[i]]``.

    Examples
    --------
    >>> text = "The cat sat."
    >>> content_mask(text, np.array([0, 4, 8]), np.array([3, 7, 11])).tolist()
    [False, True, True]
    """
    surfaces = map(text.__getitem__, map(slice, starts.tolist(), ends.tolist()))
    return np.fromiter(map(is_content_token, surfaces), dtype=bool, count=starts.shape[0])


# Letters of the scripts written without spaces whose tokens are single characters or
# grapheme clusters of a small alphabet: Thai, Lao, Myanmar, Khmer, Hiragana, Katakana
# (with the phonetic extensions and the half-width forms)
_LETTER_SCRIPTS = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9d"
)
_LETTER_SCRIPT = re.compile(f"[{_LETTER_SCRIPTS}]")


def letter_token_mask(text: str, starts: Any, ends: Any) -> np.ndarray:
    """Which tokens ``text[starts[i]:ends[i]]`` begin with a letter of a script tokenized
    letter by letter (Thai, Lao, Myanmar, Khmer, Hiragana, Katakana).

    Such tokens carry content, but a bag of them is not a bag of words: a passage in Thai
    holds most Thai letters, whatever it says. The pipeline leaves them out of the share
    of a sentence's distinct tokens that a passage holds (the alternative to an
    alignment's coverage for accepting a reordered sentence), counts them among an
    alignment's matches only in a block of three tokens or more, and takes one as covered
    only inside a run of three sentence tokens that the passage holds in a row.

    Examples
    --------
    >>> from citekit.tokenizers import SimpleTokenizer
    >>> text = "iPhone ขาย 15 ล้าน 東京です"
    >>> tokens = SimpleTokenizer().tokenize(text)
    >>> tokens.tokens
    ['iPhone', 'ข', 'า', 'ย', '15', 'ล้', 'า', 'น', '東', '京', 'で', 'す']
    >>> letter_token_mask(text, tokens.starts, tokens.ends).astype(int).tolist()
    [0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1]
    """
    return _tokens_starting_with(_LETTER_SCRIPT, text, starts, ends)


# Han ideographs (CJK Unified Ideographs, extension A, compatibility ideographs, the
# supplementary planes' extensions)
_IDEOGRAPH = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


def ideograph_token_mask(text: str, starts: Any, ends: Any) -> np.ndarray:
    """Which tokens ``text[starts[i]:ends[i]]`` begin with a Han ideograph.

    Each is a token of its own, and a morpheme: most words are two or more of them, and
    the common ones recur in any passage of Chinese or Japanese. The pipeline counts one
    as covered by a passage only when the passage also holds a token beside it in the
    sentence, next to it (a word of two, ``城市``, not ``城`` and ``市`` anywhere).

    Examples
    --------
    >>> text = "北京 is 首都です"
    >>> ideograph_token_mask(text, [0, 1, 3, 6, 7, 8], [1, 2, 5, 7, 8, 9]).astype(int).tolist()
    [1, 1, 0, 1, 1, 0]
    """
    return _tokens_starting_with(_IDEOGRAPH, text, starts, ends)


def _tokens_starting_with(
    pattern: re.Pattern[str], text: str, starts: Any, ends: Any
) -> np.ndarray:
    """Which tokens ``text[starts[i]:ends[i]]`` (non-empty) begin with a character that
    ``pattern`` (one character) matches."""
    starts_array = np.asarray(starts, dtype=np.int64)
    ends_array = np.asarray(ends, dtype=np.int64)
    if (
        starts_array.ndim == 1
        and starts_array.shape == ends_array.shape
        and not pattern.search(text)
    ):  # (most texts: none of those characters)
        return np.zeros(starts_array.shape[0], dtype=bool)
    starts_list = starts_array.tolist()
    ends_list = ends_array.tolist()
    if len(starts_list) != len(ends_list):
        raise ValueError(
            f"starts and ends must have equal lengths, got {len(starts_list)} and "
            f"{len(ends_list)}"
        )
    out = np.zeros(len(starts_list), dtype=bool)
    if not pattern.search(text):
        return out
    match = pattern.match
    for i, (start, end) in enumerate(zip(starts_list, ends_list)):
        out[i] = start < end and match(text, start) is not None
    return out


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


# Scale words: "2.4 million" is 2400000, "$1.5bn" is "$1.5 billion"; "2.4 million" and
# "2.4 billion" differ although their tokens "2.4" match. A scale word follows the number
# (after at most one white-space character), or "bn", "mn" or "tn" ends its token.
_SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12, "bn": 9, "mn": 6, "tn": 12}
_SCALE_AFTER = re.compile(r"\s?(thousand|million|billion|trillion|bn|mn|tn)\b", re.IGNORECASE)
_SCALED_KEY = re.compile(r"(\d+(?:\.\d+)?)(bn|mn|tn)")
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _scale_word(text: str, start: int, end: int) -> re.Match[str] | None:
    """The scale word after the number ``text[start:end]`` (by :func:`value_key`, digits
    with at most a decimal point: "2,400" is one), with the white space before it."""
    if 0 <= start < end <= len(text) and _PLAIN_NUMBER.fullmatch(value_key(text[start:end])):
        return _SCALE_AFTER.match(text, end)
    return None


def _value_scale(text: str, start: int, end: int) -> int:
    """The power of ten that a scale word after the number ``text[start:end]`` gives it
    (:func:`_scale_word`): 6 for "2.4 million", 0 when none follows."""
    match = _scale_word(text, start, end)
    return 0 if match is None else _SCALES[match.group(1).casefold()]


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
        number, power = match.group(1), _SCALES[match.group(2)]
    elif _PLAIN_NUMBER.fullmatch(key):
        power = _value_scale(text, start, end)
    if not power:
        return key
    return format(Decimal(number).scaleb(power), "f")


def _contexts_agree(text: str, start: int, end: int, other_text: str, other_start: int,
                    other_end: int) -> bool:
    """Whether the text around two values of the same token adds the same to both: the
    same sign and leading point (:func:`_value_prefix`), the same scale unless one
    has none (:func:`_value_scale`: "$33.2" is not contradicted by "$33.2 million",
    whose scale it may leave to its context; "2.4 million" is by "2.4 billion"), and not
    a rise for one and a fall for the other (:func:`_opposite_directions`: "rose 3%"
    against "fell 3%")."""
    if _value_prefix(text, start, end)[0] != _value_prefix(other_text, other_start, other_end)[0]:
        return False
    scale = _value_scale(text, start, end)
    other_scale = _value_scale(other_text, other_start, other_end)
    if scale != other_scale and scale and other_scale:
        return False
    return not _opposite_directions(text, start, end, other_text, other_start, other_end)


# words saying that the value after them is a fall ("fell 3%", "a decline of 3%"; also in
# German, French, Spanish and Russian: "sank um 3%", "baisse de 3%", "cayó un 3%", "упал на
# 3%"): a value so described faces its negative without conflict ("fell 3%" states "-3%")
_FALL_WORDS = frozenset("""
    fell fall falls falling drop drops dropped dropping decline declines declined declining
    decrease decreases decreased decreasing down lower lowered lost lose loses losing loss
    losses minus negative shrank shrink shrinks shrinking shrunk contracted contraction
    slid slide slides slipped slip slips plunged plunge plummeted sank sink deficit cut
    cuts reduced reduction
    sanken gesunken sinkt fiel fielen gefallen fällt rückgang verringerte verringert
    verringerung abnahme verlust schrumpfte geschrumpft
    baissé baisse baissent diminué diminue diminution recul reculé chute chuté perte pertes
    repli déficit
    cayó cayeron caída bajó bajaron bajada descenso descendió disminuyó disminuyeron
    disminución pérdida pérdidas retroceso retrocedió
    упал упала упало упали снизился снизилась снизилось снизились сократился сократилась
    сократилось сократились падение снижение сокращение убыток
    """.split())
# words saying that the value after them is a rise ("rose 3%", "an increase of 3%"): a value
# so described is contradicted by the same value described as a fall ("rose 3%" against
# "fell 3%")
_RISE_WORDS = frozenset("""
    rose rise rises rising risen grew grow grows growing grown growth increase increases
    increased increasing up higher raised raise raises gained gain gains climbed climb
    climbs jumped jump jumps surged surge surges soared soar soars rallied rally added
    expanded expand expands expansion advanced boosted plus positive profit profits surplus
    stieg stiegen gestiegen steigt anstieg wuchs wuchsen gewachsen wächst wachstum zuwachs
    erhöhte erhöht erhöhung zunahme gewinn kletterte
    augmenté augmente augmentent augmentation hausse progressé progresse progression
    croissance grimpé bondi bénéfice
    aumentó aumentaron aumento creció crecieron crecimiento subió subieron subida alza
    incremento incrementó ganancia ganancias
    вырос выросла выросло выросли увеличился увеличилась увеличилось увеличились рост
    прирост повысился повысилась прибыль
    """.split())
# words that may stand between a rise or fall word and its value ("fell by 3%", "a decline
# of 3%", "stieg um 3%", "hausse de 3%", "aumentó un 3%", "вырос на 3%")
_DIRECTION_LINKS = frozenset("by of um von de du del un una el en на".split())
# words saying that the value after them is the level a rise or a fall ended at ("rose to
# 3%", "sank auf 3 %", "a chuté à 3 %", "bajó al 3 %", "выросла до 3%"): it is compared
# only with another level ("fell to 3%"), never with a change ("fell 3%")
_LEVEL_LINKS = frozenset("to auf à al до".split())
# rise and fall words that say no direction before a level link: "up to 3%" is at most 3%,
# "growth to 3%" may have slowed, "lost to 3 rivals" is no fall
_NOT_LEVEL_WORDS = frozenset("""
    up plus minus positive negative growth gain gains profit profits surplus loss losses
    deficit expansion contraction cuts lose loses losing lost
    gewinn verlust wachstum zuwachs bénéfice perte pertes déficit croissance
    ganancia ganancias pérdida pérdidas crecimiento прибыль убыток
    """.split())
# words that may stand between a rise or fall word and the level it started from, before a
# level link ("rose from 3% to 5%", "stieg von 3 auf 5 %", "вырос с 3% до 5%"): the rise
# word says the direction of the level 5% too
_FROM_LINKS = frozenset("from von с".split())
_FALL_WINDOW = 30
_WORD = re.compile(r"\w+")
_WORD_CHAR = re.compile(r"\w")
# what may stand between the words of "from 3% to", "from $1.2 billion to": no line break
# and no end of a sentence (a point only as a decimal point: "1.2")
_FROM_GAP = re.compile(r"[^\n\r.!?;]*|\.")


def _past_starting_level(segment: str, words: list[re.Match[str]], link_start: int) -> None:
    """Drop from ``words`` (the words before the level link at ``segment[link_start]``) a
    starting level ("from 3%", "from $1.2 billion", "von 3", "с 3"): its numbers and unit
    or scale words (:data:`_AFTER_UNITS`), then the word of :data:`_FROM_LINKS` before
    them, when no line break or end of a sentence stands between the words."""
    i = len(words)
    while i > 0 and (
        words[i - 1].group().isdecimal() or words[i - 1].group().casefold() in _AFTER_UNITS
    ):
        i -= 1
    if i == len(words) or i == 0 or words[i - 1].group().casefold() not in _FROM_LINKS:
        return
    ends = [word.end() for word in words[i - 1 :]]
    starts = [word.start() for word in words[i:]] + [link_start]
    if all(_FROM_GAP.fullmatch(segment, end, start) for end, start in zip(ends, starts)):
        del words[i - 1 :]


def _direction_in(segment: str, lead: int = 0, glued: bool = False) -> tuple[int, int]:
    """``(direction, position)`` of the last whole word of ``segment[lead:]`` (past the
    words of :data:`_DIRECTION_LINKS`): -1 when it is one of :data:`_FALL_WORDS`, 1 when one of
    :data:`_RISE_WORDS`, else 0 -- or -2 and 2 when a word of :data:`_LEVEL_LINKS` ends the
    segment and the word before it, or before the starting level it names
    (:func:`_past_starting_level`: "fell from 5% to"), is a fall or a rise word not in
    :data:`_NOT_LEVEL_WORDS` ("fell to"); and where that word starts in ``segment[lead:]``
    (-1 when it is neither). ``lead`` (0 or 1): ``segment[0]`` is the character before the
    window, read only to tell whether the window starts inside a word (whose tail is then
    not read: a word is read whole or not at all); ``glued``: the value starts inside the
    word that ends the segment ("increase0"), which is then not read either."""
    words = list(_WORD.finditer(segment, lead))
    if glued and words and words[-1].end() == len(segment):
        words.pop()
    if (
        lead
        and words
        and words[0].start() == lead
        and _WORD_CHAR.match(segment, 0) is not None
    ):
        words.pop(0)
    kind = 1  # a change; 2: a level
    if words and words[-1].group().casefold() in _LEVEL_LINKS:
        link = words.pop()
        kind = 2
        _past_starting_level(segment, words, link.start())
    else:
        while words and words[-1].group().casefold() in _DIRECTION_LINKS:
            words.pop()
    if words:
        word = words[-1].group().casefold()
        if kind == 2 and word in _NOT_LEVEL_WORDS:
            return 0, -1
        if word in _FALL_WORDS:
            return -kind, words[-1].start() - lead
        if word in _RISE_WORDS:
            return kind, words[-1].start() - lead
    return 0, -1


def _direction_before(text: str, first: int) -> tuple[int, int]:
    """``(direction, start)``: whether the value starting at ``text[first]`` is described
    as a fall (-1: "fell 3%", "a decline of 3%"), a rise (1: "rose 3%", "up 3%"), the level
    a fall or a rise ended at (-2: "fell to 3%", 2: "rose to 3%") or none of these (0), by
    the last whole word of the 30 characters before it (English, German, French, Spanish
    or Russian, past the words of :data:`_DIRECTION_LINKS`, or one of
    :data:`_LEVEL_LINKS` and the level it started from; :func:`_direction_in`); and where
    the word that says so starts in ``text`` (-1 when none does)."""
    window_start = max(0, first - _FALL_WINDOW)
    lead = 1 if window_start > 0 else 0
    glued = (
        0 < first < len(text)
        and _WORD_CHAR.match(text, first - 1) is not None
        and _WORD_CHAR.match(text, first) is not None
    )
    direction, position = _direction_in(
        text[window_start - lead : max(0, first)], lead, glued
    )
    return direction, (window_start + position if direction else -1)


# the word after a value that may say it is a rise or a fall ("a 3% increase", "3 percent
# lower", "a $2 million loss"): past white space (not a line break), hyphens, a percent
# sign, and up to three unit or scale words; it must end within _AFTER_WINDOW characters
_AFTER_WINDOW = 40
_AFTER_UNITS = (
    "percent", "per", "cent", "pct", "percentage", "points", "point", "thousand", "million",
    "billion", "trillion", "bn", "mn", "tn",
)
_AFTER_SEPARATOR = r"(?:[^\S\n\r]|[%\uff05\u066a\u2010-\u2013-])*"
_AFTER_WORD = re.compile(
    _AFTER_SEPARATOR
    + r"(?:(?:" + "|".join(_AFTER_UNITS) + r")(?!\w)" + _AFTER_SEPARATOR + r"){0,3}"
    + r"(\w+)",
    re.IGNORECASE,
)


def _direction_after(text: str, end: int) -> tuple[int, int]:
    """``(direction, end)``: whether the word after the value ending at ``text[end]``
    (:data:`_AFTER_WORD`) says it is a fall (-1: "3% lower", "a 3% decrease") or a rise
    (1: "a 3% increase"), else 0; and where that word ends (-1 when it says neither). A
    word cut by the window's end is not read, nor one that goes on from the value
    ("3increase")."""
    limit = min(len(text), end + _AFTER_WINDOW)
    glued = end > 0 and _WORD_CHAR.match(text, end - 1) is not None
    match = _AFTER_WORD.match(text, end, limit) if 0 <= end < limit else None
    if (
        match is None
        or (match.end(1) == limit and _WORD_CHAR.match(text, limit) is not None)
        or (glued and match.start(1) == end)  # the value's own word ("3increase")
    ):
        return 0, -1
    word = match.group(1).casefold()
    if word in _FALL_WORDS:
        return -1, match.end(1)
    if word in _RISE_WORDS:
        return 1, match.end(1)
    return 0, -1


def _value_direction(text: str, start: int, end: int) -> tuple[int, int, int]:
    """``(direction, start, end)`` of the value ``text[start:end]``: -1 when it is
    described as a fall, 1 as a rise, -2 and 2 as the level one ended at, 0 none of these
    -- by the word before it (:func:`_direction_before`: "fell 3%", "rose to 3%"), else by
    the word after it (:func:`_direction_after`: "a 3% decrease"); and the span widened to
    that word.

    Both read at most 31 characters before the value and 41 after it: a value met again
    in the same neighbourhood (a sentence checked against many passages, a passage cited
    for many sentences) is looked up."""
    if not 0 <= start <= end <= len(text):
        return _read_direction(text, start, end)
    lo = max(0, start - _FALL_WINDOW - 1)
    hi = min(len(text), end + _AFTER_WINDOW + 1)
    direction, word_start, word_end = _local_direction(text[lo:hi], start - lo, end - lo)
    return direction, word_start + lo, word_end + lo


@lru_cache(maxsize=1 << 12)
def _local_direction(neighbourhood: str, start: int, end: int) -> tuple[int, int, int]:
    """:func:`_read_direction` of a value's neighbourhood (offsets in it)."""
    return _read_direction(neighbourhood, start, end)


def _read_direction(text: str, start: int, end: int) -> tuple[int, int, int]:
    """:func:`_value_direction`, read."""
    direction, word_start = _direction_before(text, start)
    if direction:
        return direction, word_start, end
    direction, word_end = _direction_after(text, end)
    if direction:
        return direction, start, word_end
    return 0, start, end


def directions_in(text: str, start: int, end: int) -> int:
    """Which kinds of direction words ``text[start:end]`` holds, with the 42 characters
    before it and the 52 after it: bit 1 a fall word (:data:`_FALL_WORDS`), bit 2 a rise
    word (:data:`_RISE_WORDS`), whole words only. Every value of the range that
    :func:`find_conflicts` reads as described as a fall or a rise, or as the level one
    ended at (:func:`_value_direction` at the token or at its span, which a sign or a
    currency sign widens by up to 12 characters on each side) sets its bit: a range whose
    bits and another's are not 1 and 2, in either order, holds no value of one described
    as a rise and of the other as a fall.

    Examples
    --------
    >>> directions_in("Sales rose 3%.", 0, 14)
    2
    >>> directions_in("Sales rose 3% while costs fell 2%.", 0, 13)  # (and the words after)
    3
    """
    lo = max(0, start - _FALL_WINDOW - _NEIGHBOURHOOD)
    while lo > 0 and _WORD_CHAR.match(text, lo - 1) is not None:
        lo -= 1
    hi = min(len(text), max(lo, end) + _AFTER_WINDOW + _NEIGHBOURHOOD)
    while hi < len(text) and _WORD_CHAR.match(text, hi) is not None:
        hi += 1
    return _direction_bits(text[lo:hi])


@lru_cache(maxsize=1 << 12)
def _direction_bits(segment: str) -> int:
    """:func:`directions_in` of the whole words of ``segment`` (passages checked for
    several sentences are looked up)."""
    words = set(map(str.casefold, _WORD.findall(segment)))
    return (0 if _FALL_WORDS.isdisjoint(words) else 1) | (0 if _RISE_WORDS.isdisjoint(words) else 2)


def _falls(text: str, start: int, end: int) -> bool:
    """Whether the value ``text[start:end]`` is described as a fall (:func:`_value_direction`;
    "fell 3%" states "-3%", "fell to 3%" does not)."""
    return _value_direction(text, start, end)[0] == -1


def _opposite_directions(text: str, start: int, end: int, other_text: str, other_start: int,
                         other_end: int) -> bool:
    """Whether one of two values is described as a rise and the other as a fall ("rose 3%"
    and "fell 3%", "a 3% increase" and "a 3% decrease"), or one as the level a rise ended
    at and the other as the level a fall ended at ("rose to 3%" and "fell to 3%";
    :func:`_value_direction`)."""
    return _opposed_directions(
        _value_direction(text, start, end)[0],
        _value_direction(other_text, other_start, other_end)[0],
    )


def _opposed_directions(direction: int, other: int) -> bool:
    """Whether two directions of :func:`_value_direction` are a rise and a fall of the same
    kind: two changes (1 and -1) or two levels (2 and -2)."""
    return direction != 0 and direction == -other


# what find_conflicts learns of a value that is one end of a range: nothing to compare
_PART_OF_RANGE: tuple[None, str, int, int, str, int, bool] = (None, "", 0, 0, "", -1, False)
# (key, class, widen_left, widen_right, kind, scale word end, attached scale): _value_facts
_ValueFacts = tuple[str | None, str, int, int, str, int, bool]


# (4,096 neighbourhoods: about 1.4 MB when full)
@lru_cache(maxsize=1 << 12)
def _value_facts(neighbourhood: str, start: int, end: int) -> _ValueFacts:
    """What :func:`find_conflicts` needs of the value ``neighbourhood[start:end]``, where
    ``neighbourhood`` holds up to 12 characters of text on each side of it (all that the
    tests read): its key (None when it is one end of a range), its class, by how many
    characters its span widens to the left and to the right (a currency sign before it, a
    percent sign after it: 0 or 1), its kind, how far past its end the scale word after
    it ends (:func:`_scale_word`, with its white space: 8 for " million"; -1 when none
    follows) and whether the number carries its scale (:func:`_attached_scale`: "2.4bn").
    The scale word fits the neighbourhood: its pattern reads at most 10 characters.

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


def find_conflicts(
    answer_text: str,
    answer_ids: np.ndarray,
    answer_starts: np.ndarray,
    answer_ends: np.ndarray,
    source_text: str,
    source_ids: np.ndarray,
    source_starts: np.ndarray,
    source_ends: np.ndarray,
    blocks: Any,
    source_offset: int = 0,
    answer_values: Sequence[bool] | None = None,
    answer_cache: dict[int, Any] | None = None,
) -> list[Conflict]:
    """Values of the answer that face a different value at the aligned evidence position.

    Parameters
    ----------
    answer_text : str
        The whole answer (offsets in ``answer_starts``/``answer_ends`` index it).
    answer_ids, answer_starts, answer_ends : ndarray
        Tokens of the answer sentence that was aligned (the query).
    source_text : str
        The text the source tokens index (a chunk's own text).
    source_ids, source_starts, source_ends : ndarray
        Tokens of the passage that was aligned (the target).
    blocks : sequence of (query_pos, target_pos, length)
        Matched blocks of the alignment, positions relative to the two token arrays.
    source_offset : int
        Added to evidence offsets (a chunk's ``doc_char_start``).
    answer_values : sequence of bool, optional
        Which answer tokens are values (:func:`value_mask`), when the caller already knows
        (one sentence is checked against many passages).
    answer_cache : dict, optional
        Filled with what is learnt about the answer's values; pass the same dict for every
        passage a sentence is checked against (keys are positions in ``answer_ids``).

    Returns
    -------
    list of Conflict
        Between consecutive blocks, and one token beyond the first and last block, the
        i-th value token of the answer side is paired with the i-th value token of the
        evidence side; a pair is a conflict when both values are of the same class
        (:func:`value_class`), neither is a range, and they differ by :func:`value_key`
        with their signs, leading points and scales (:func:`_value_prefix`,
        :func:`_scaled_key`: ``-40`` is not ``40``, ``.5`` is ``0.5``, ``2.4 million``
        is ``2400000``), unless they differ only by the sign and either is described
        as a fall (``fell 3%``, ``fell by 3%``, ``a decline of 3%``: it states
        ``-3%``), and equal keys are not the same value when one is described as a rise
        and the other as a fall (``rose 3%``, ``up 3%``, ``an increase of 3%`` against
        ``fell 3%``: the last word before the value, past "by", "of" and their German,
        French, Spanish and Russian counterparts, in those languages too; ``rose to 3%``
        and ``fell to 3%``, the levels a rise and a fall ended at, are not the same
        value either (nor ``rose from 7% to 5%`` and ``fell from 7% to 5%``), but neither
        is compared with a change; else the first word after it, past a percent sign and
        up to three unit or scale words: ``a 3% increase``, ``3 percent lower``). Then,
        inside the blocks, a value token matched with one of equal :func:`value_key` is a
        conflict when their signs or leading points differ, both have scale words that
        differ (``2.4 million``, ``2.4 billion``), or one is a rise and the other a fall,
        on the same terms. A conflict's texts hold the sign, the point, a currency sign
        and a percent sign of its values, their scale words when both values state a
        scale (by a word or in the number: ``2.4bn``), and the words before or after them
        when those say a rise and a fall (``rose 3%`` against ``fell 3%``, ``3% higher``
        against ``3% lower``).

    Examples
    --------
    >>> import numpy as np
    >>> ans, src = "Sales grew 9% in 2020.", "Sales grew 15% in 2020."
    >>> a = [np.array(v) for v in ([1, 2, 9, 5, 6, 7], [0, 6, 11, 12, 14, 17],
    ...                             [5, 10, 12, 13, 16, 21])]
    >>> s = [np.array(v) for v in ([1, 2, 15, 5, 6, 7], [0, 6, 11, 13, 15, 18],
    ...                             [5, 10, 13, 14, 17, 22])]
    >>> found = find_conflicts(ans, *a, src, *s, [(0, 0, 2), (3, 3, 3)])
    >>> [(c.kind, c.answer_text, c.evidence_text) for c in found]
    [('percent', '9%', '15%')]

    A sign is part of the value even where the tokens match:

    >>> ids, spans = np.array([1, 40]), (np.array([0, 8]), np.array([7, 10]))
    >>> found = find_conflicts("fell to 40", ids, *spans, "fell to -40", ids,
    ...                        np.array([0, 9]), np.array([7, 11]), [(0, 0, 2)])
    >>> [(c.answer_text, c.evidence_text) for c in found]
    [('40', '-40')]

    So is a rise against a fall:

    >>> ids, spans = np.array([1, 3, 4]), (np.array([0, 5, 6]), np.array([4, 6, 7]))
    >>> found = find_conflicts("rose 3%", ids, *spans, "fell 3%", ids, *spans, [(1, 1, 2)])
    >>> [(c.answer_text, c.evidence_text) for c in found]
    [('rose 3%', 'fell 3%')]
    """
    rows = np.asarray(blocks, dtype=np.int64).tolist()
    if answer_values is None:
        if not any(length > 0 for _, _, length in rows):
            return []
        answer_values = value_mask(answer_text, answer_starts, answer_ends).tolist()
    # the gaps between blocks (of positive length), and one token before the first block
    # and after the last, as (query_lo, query_hi, target_lo, target_hi); only those holding
    # a value of the answer: most alignments have none, and there is nothing else to look at
    regions: list[tuple[int, int, int, int]] = []
    q_lo = t_lo = -1
    first = True
    for q_hi, t_hi, length in rows:
        if length <= 0:
            continue
        if first:
            q_lo, t_lo, first = max(0, q_hi - 1), max(0, t_hi - 1), False
        if q_lo < q_hi and t_lo < t_hi and any(answer_values[q_lo:q_hi]):
            regions.append((q_lo, q_hi, t_lo, t_hi))
        q_lo, t_lo = q_hi + length, t_hi + length
    if first:
        return []
    if q_lo < answer_ids.shape[0] and t_lo < source_ids.shape[0]:
        if any(answer_values[q_lo : q_lo + 1]):
            regions.append((q_lo, q_lo + 1, t_lo, t_lo + 1))
    conflicts: list[Conflict] = []
    seen: set[tuple[int, int]] = set()
    for q_lo, q_hi, t_lo, t_hi in regions:
        region_values = [i for i in range(q_lo, q_hi) if answer_values[i]]
        # Python ints once (indexing numpy arrays per token is slow)
        starts = np.asarray(source_starts[t_lo:t_hi]).tolist()
        ends = np.asarray(source_ends[t_lo:t_hi]).tolist()
        # the i-th value of the answer faces the i-th value of the evidence: the evidence's
        # tokens are read up to its last value that faces one
        k, n_tokens = 0, min(len(starts), len(ends))
        for i in region_values:
            while k < n_tokens and not _is_value(source_text[starts[k] : ends[k]]):
                k += 1
            if k == n_tokens:
                break
            j, k = t_lo + k, k + 1
            if (i, j) in seen:
                continue
            if answer_ids[i] == source_ids[j] and _contexts_agree(
                answer_text, int(answer_starts[i]), int(answer_ends[i]),
                source_text, int(starts[k - 1]), int(ends[k - 1]),
            ):
                continue
            conflict = _facing_conflict(
                answer_text, answer_starts, answer_ends, i, answer_cache,
                source_text, int(starts[k - 1]), int(ends[k - 1]), source_offset,
            )
            if conflict is not None:
                seen.add((i, j))
                conflicts.append(conflict)
    # matched values (the same token) whose signs, leading points or scales differ: "-40"
    # and "40", "2.4 million" and "2.4 billion"
    for q_hi, t_hi, length in rows:
        if length <= 0 or not any(answer_values[q_hi : q_hi + length]):
            continue
        for i in range(q_hi, q_hi + length):
            j = t_hi + i - q_hi
            if not answer_values[i] or (i, j) in seen:
                continue
            a_start, a_end = int(answer_starts[i]), int(answer_ends[i])
            source_start, source_end = int(source_starts[j]), int(source_ends[j])
            if (
                _contexts_agree(
                    answer_text, a_start, a_end, source_text, source_start, source_end
                )
                or value_key(answer_text[a_start:a_end])
                != value_key(source_text[source_start:source_end])
            ):
                continue
            conflict = _facing_conflict(
                answer_text, answer_starts, answer_ends, i, answer_cache,
                source_text, source_start, source_end, source_offset,
            )
            if conflict is not None:
                seen.add((i, j))
                conflicts.append(conflict)
    return conflicts


def _facing_conflict(
    answer_text: str,
    answer_starts: np.ndarray,
    answer_ends: np.ndarray,
    i: int,
    answer_cache: dict[int, Any] | None,
    source_text: str,
    source_start: int,
    source_end: int,
    source_offset: int,
) -> Conflict | None:
    """The conflict of answer token ``i``'s value with the source's value
    ``source_text[source_start:source_end]``, or None: when either is part of a range
    ("2018-2019", "80 to 85" are not one value to contradict), they are of other classes,
    or they state the same value (see :func:`find_conflicts`)."""
    key, answer_class, a_start, a_end, kind, a_word_end, a_attached = _answer_value(
        answer_text, answer_starts, answer_ends, i, answer_cache
    )
    if key is None:
        return None
    source_key, source_class, widen_left, widen_right, _, s_word, s_attached = _value_facts_at(
        source_text, source_start, source_end
    )
    if source_key is None or answer_class != source_class:
        return None
    s_start, s_end = source_start - widen_left, source_end + widen_right
    # the same value: equal keys, unless one is said to rise and the other to fall
    # ("rose 3%", "fell 3%"; or to have risen and fallen to it: "rose to 3%", "fell to
    # 3%"), or keys differing only by a sign where either is said to fall ("fell 3%", "-3%")
    a_direction, a_said_start, a_said_end = _value_direction(answer_text, a_start, a_end)
    s_direction, s_said_start, s_said_end = (
        _value_direction(source_text, s_start, s_end) if a_direction else (0, s_start, s_end)
    )
    opposed = _opposed_directions(a_direction, s_direction)
    if key == source_key:
        if not opposed:
            return None
    elif key.removeprefix("-") == source_key.removeprefix("-"):
        source_falls = (
            s_direction == -1 if a_direction else _falls(source_text, s_start, s_end)
        )
        if a_direction == -1 or source_falls:
            return None
    if opposed:
        # one value said to rise, the other to fall: the spans take the words that say so
        # ("rose 3%" against "fell 3%", "3% higher" against "3% lower", "rose to 3%"
        # against "fell to 3%")
        a_start, a_end, s_start, s_end = a_said_start, a_said_end, s_said_start, s_said_end
    # both values state a scale, by a word or in the number ("2.4 million" against "2.4
    # billion" or "2.4bn"): the spans take their scale words
    if (a_word_end >= 0 or a_attached) and (s_word >= 0 or s_attached):
        a_end = max(a_end, a_word_end)
        if s_word >= 0:
            s_end = max(s_end, source_end + s_word)
    return _conflict(
        kind, answer_text, a_start, a_end, source_text, s_start, s_end, source_offset
    )


def _attached_scale(text: str, start: int, end: int) -> bool:
    """Whether the number ``text[start:end]`` carries its scale ("2.4bn", "$3mn")."""
    return _SCALED_KEY.fullmatch(value_key(text[start:end])) is not None


def _answer_value(
    answer_text: str,
    answer_starts: np.ndarray,
    answer_ends: np.ndarray,
    i: int,
    answer_cache: dict[int, Any] | None,
) -> tuple[str | None, str, int, int, str, int, bool]:
    """``(key, class, start, end, kind, scale_word_end, attached_scale)`` of answer token
    ``i`` as :func:`find_conflicts` compares it (:func:`_value_facts_at`, its span
    widened; the end of the scale word after it in ``answer_text``, -1 when none), from
    ``answer_cache`` when it holds it (and kept there)."""
    answer = None if answer_cache is None else answer_cache.get(i)
    if answer is None:
        a_start, a_end = int(answer_starts[i]), int(answer_ends[i])
        key, answer_class, widen_left, widen_right, kind, word, attached = _value_facts_at(
            answer_text, a_start, a_end
        )
        answer = (
            key, answer_class, a_start - widen_left, a_end + widen_right, kind,
            -1 if word < 0 else a_end + word, attached,
        )
        if answer_cache is not None:
            answer_cache[i] = answer
    return answer


def _conflict(
    kind: str,
    answer_text: str,
    a_start: int,
    a_end: int,
    source_text: str,
    s_start: int,
    s_end: int,
    source_offset: int,
) -> Conflict:
    """The :class:`~citekit.results.Conflict` of two values' spans (Python ints, ordered)."""
    # every field is a str or a Python int, the range is ordered: built as
    # results._unchecked builds a record (every field, in field order), without its checks
    record = object.__new__(Conflict)
    record.__dict__.update(
        kind=kind,
        answer_text=answer_text[a_start:a_end],
        answer_char_start=a_start,
        answer_char_end=a_end,
        evidence_text=source_text[s_start:s_end],
        evidence_char_start=s_start + source_offset,
        evidence_char_end=s_end + source_offset,
    )
    return record
