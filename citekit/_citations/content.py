"""Which answer tokens carry content, how they fold for "same word" tests, and how much
each weighs in the share of a sentence that its evidence covers.

A token is content unless its case-folded text is a function word of :data:`STOP_WORDS`
or it has no letter, digit or symbol (punctuation; a currency or percent sign only
qualifies the number beside it); negations are content. Coverage weights
(:func:`coverage_weights`): a value weighs :data:`VALUE_WEIGHT` = 2 (a number cannot be
paraphrased), another content word 1, a function word :data:`FUNCTION_WORD_WEIGHT` = 1/4,
punctuation 0. Letters of scripts tokenized one character at a time are content but not
words (:func:`letter_token_mask`); a Han ideograph counts as covered only beside its
neighbour (:func:`ideograph_token_mask`). See the user guide's status rules
(docs/guide/status.rst).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

import numpy as np

from citekit._citations.values import _has_digit, _is_value, value_key

__all__ = [
    "STOP_WORDS",
    "is_content_token",
    "content_mask",
    "letter_token_mask",
    "ideograph_token_mask",
    "citation_marker_mask",
    "fold_surface",
    "coverage_weights",
    "VALUE_WEIGHT",
    "FUNCTION_WORD_WEIGHT",
    "token_facts",
    "surface_facts",
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
    the e (``using`` = ``use``). Values compare by
    :func:`~citekit._citations.values.value_key` (``7th`` = ``7``).

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
    and whether it is a value (:func:`~citekit._citations.values.value_mask`), in one
    cached look-up.

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
    (:func:`coverage_weights`), and whether it is a value
    (:func:`~citekit._citations.values.value_mask`).

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
