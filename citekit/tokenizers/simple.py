"""``SimpleTokenizer``: rule-based words, numbers and symbols with offset-exact spans.

Tokens
------
- words: runs of letters, digits and combining marks; an apostrophe or hyphen between two
  such characters stays inside the word (``state-of-the-art``, ``company's``, and the
  typographic ``’`` / ``‐`` forms, which get the same id as the ASCII ones);
- numbers: a ``.`` or ``,`` between two digits stays inside the token (``5.2``, ``1,200``);
  with ``normalize_numbers`` thousands separators are ignored, so ``1,200`` and ``1200``
  get the same id, and the Arabic separators ``٫`` and ``٬`` act as ``.`` and ``,``
  (``٣٫٥`` is one token, with the id of ``3.5``);
- ``%`` (and the Arabic ``٪``) and currency symbols are tokens of their own. With
  ``normalize_percent`` / ``normalize_currency`` they get the id of the word they stand
  for: ``15%`` and ``15 percent`` give the same ids, ``$`` the id of ``dollar``. Plural
  currency words fold to the singular (``dollars`` -> ``dollar``), so ``$5`` and
  ``5 dollars`` share their tokens (in a different order);
- scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar):
  one token per grapheme cluster, so paraphrases can still partially match;
- emoji: one token per grapheme cluster (skin-tone modifiers and ZWJ sequences stay whole).

A token never splits a grapheme cluster (a letter with its combining marks, a Devanagari
consonant with its vowel signs). Other characters (punctuation, spaces, controls, lone
surrogates) separate tokens.

Ids are the 64-bit FNV-1a hash of the token's normalized form (its key) with the top bit
cleared, so they are the same in every process and on every machine, whatever was
tokenized before. FNV-1a is not cryptographic (keys crafted to collide can be found), but
for natural tokens a collision is about as likely as two random 63-bit numbers being
equal; the tests check a 30,000-word vocabulary and 400,000 generated keys.

Spans index the text AS PASSED. Text whose characters are ASCII, typographic quotes,
apostrophes, dashes and spaces (replaced one for one by ASCII characters with the same
effect on tokens), currency symbols and ``٪`` (tokens of their own, like ``$``) and the characters
:func:`_kernel_chars` chooses by rule goes through a numba kernel that finds tokens and
hashes their keys in one pass. Those are about 14,000 letters (precomposed Latin, Greek and
Cyrillic ``é``, ``ß``, ``œ``, ``ж``; Armenian, Hebrew, Arabic, Georgian; the letters of
Devanagari, Bengali and the other Indic scripts; Hangul syllables; full-width Latin and
ligatures ``Ａ``, ``ﬁ``), about 200 Indic vowel signs, viramas and nuktas (inside words
only, see below), 130 decimal digits of
scripts written with spaces (``٣``, ``३``, ``３``: digits to the number rules), 29,600
characters that are tokens of their own (Han, Hiragana, Katakana: ``東``, ``か``, ``ア``;
Thai ``ก``, ``เ``, ``ฯ``, extended by the Thai marks after them, see below; emoji of one
code point, ``😀``, ``🚀``, ``✅``, ``©``, which the text may hold outside the Basic
Multilingual Plane), and punctuation that only separates tokens (``、``, ``。``, ``「``,
``،``, ``؟``, ``।``, and full-width ``，``, ``％``, ``＄``, which read as ``,``, ``%``, ``$``
with NFKC). No offset map is needed: each of those characters is a normalization unit
and a grapheme cluster of its own next to any other the kernel reads, its fold (NFKC,
case-folding, script digits) depends on no neighbour, and the general path maps all of
its fold (``ß`` -> ``ss``, ``Ĳ`` -> ``ij``) back to it, so a token's span is that of its
characters and its key the concatenation of their folds, which the kernel's key table
holds as UTF-8 bytes. The Indic marks are the exception, read only inside a word: a vowel
sign, anusvara, visarga or virama (combining class 0 or 9, joining the cluster before it,
folding to itself, composing with nothing before it: not the second half of a two-part vowel
such as Bengali ``া``) right after a letter or another such mark, and a nukta (class 7)
right after a letter other than those whose fold it would compose with or be reordered
before (``न``, ``र``, ``ळ``: NFKC makes ``ऩ``); such a mark anywhere else (after a space, a
digit, punctuation) is a character the kernel cannot read. There it extends the cluster of
the letter before it and composes with nothing, so the token's span and key are still its
characters' (Hindi text takes the kernel alone). The Thai combining marks (vowel signs above
and below, tone marks, ``ั``, ``ุ``, ``่``) are read right after a Thai character or another
such mark: the general path gives each Thai character and mark a token, and snapping them to
grapheme clusters merges a character's token with its marks' (key: their folds, themselves,
joined by spaces), so the kernel extends the character's token by each mark (a space and the
mark in its key), but not by a mark NFKC would move before the mark it follows (a lower
combining class, neither 0: ``่`` 107 then ``ุ`` 103, ``ุ`` then ``ฺ`` 9). Such a mark, a
Thai mark anywhere else (after a space, a digit, a Latin letter), SARA AM ``ำ`` (NFKC: two
characters) and the Thai digits (ASCII digits with ``normalize_numbers``) are characters the
kernel cannot read (Thai text without them takes the kernel alone). What may join or change
a neighbour stays unreadable: other combining marks, Hangul jamo, variation selectors, ZWJ,
emoji modifiers (skin tones), regional indicators (flags), Lao, Khmer and Myanmar, and forms
whose fold is several tokens or joins words differently with and without NFKC (``ゟ``, ``①``,
``㎏``, ``ŀ``). The kernel reads the text as one code unit per character (its ASCII bytes,
else UTF-16 when every character is in the Basic Multilingual Plane, else UTF-32) and counts
the characters it cannot read, so the same pass tells whether the text needs more. Other
text goes through the general path: :func:`citekit.normalize.normalize_text`, a token
pattern on the normalized text, and the map back; spans are then widened to whole grapheme
clusters of the original text (when normalization moved a cluster boundary, as NFKC does to
Thai ``ำ``) and overlapping tokens merged.

Mixed text (a few ``ゟ``, emoji, combining marks or ``ŀ`` among kernel text) is cut so
that only the stretches around the characters the kernel cannot read take the general
path, with the same result as the general path on the whole text. A *cut point* is a
position ``p`` such that

- ``text[p - 1]`` is ASCII whitespace (space, tab, line feed, carriage return, form
  feed, vertical tab), but not a carriage return before a line feed at ``p`` (one
  grapheme cluster; kept whole although no token touches it), and
- ``text[p]`` cannot join the whitespace before it: it is not a combining mark or the
  second half of a canonical composition (``normalize._attaches``), nor a character that
  extends a grapheme cluster after whitespace (``_JOINS_SPACE``: a mark after a space
  belongs to the space, under NFKC and in grapheme clusters; a Hangul syllable or an
  Indic consonant joins a jamo or a virama before it, never whitespace).

No token, normalization unit, symbol padding (``€`` is padded only next to a non-space,
and the whitespace is the same on both sides of a cut), thousands separator or grapheme
cluster crosses a cut point, so the text between two cut points tokenizes alone as it
does in context. Each character the kernel cannot read (see above) marks the
piece between the cut points around it (its whitespace-delimited word, widened while the
next word starts with a joining character) for the general path. The pieces are joined
by spaces and tokenized in one general-path call (a joint is a cut point too: the piece
before it ends with ASCII whitespace, the one after it starts with a character that joins
no space). The kernel tokenizes the whole text with those characters read as spaces, and
its tokens inside the pieces are replaced by the general path's, shifted back to the
pieces' places. When the pieces cover more than half of the text, the general path takes
all of it. ``tests/test_tokenizer_simple.py`` checks the result against the general path
on the whole text.

A corpus (many texts, ``Pipeline.prepare``) is read by one kernel call for all texts, and
the pieces of all its texts go to one general-path call: a text's start is a cut point as
the start of a text alone, and the space joining the last piece of one text to the first
of the next is a cut point unless the first starts with a character that joins a space or
the last ends with a Prepend character (such a text gets a call of its own). Each text's
tokens are those of tokenizing it alone (tested).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from citekit._code_units import code_units
from citekit._validation import check_bool, check_str
from citekit.kernels._hash import fnv1a
from citekit.kernels._tokenize import (
    DIGIT,
    ID_MASK,
    LETTER,
    MARK,
    MAX_KEY_BYTES,
    NUKTA,
    NUKTA_BASE,
    OTHER,
    SINGLE,
    TABLE_UNITS,
    THAI,
    THAI_MARK,
    THAI_MARK_CLASSES,
)
from citekit.normalize import (
    CURRENCY_WORDS,
    PERCENT_SIGNS,
    THOUSANDS_COMMA_RE,
    NormalizerConfig,
    _ATTACHING_STARTERS,
    _NUMBER_SEPARATORS,
    _attaches,
    _fold_string,
    normalize_text,
    symbol_word,
)
from citekit.tokenizers.base import _VALID_BY_CONSTRUCTION, TokenizedText

__all__ = ["TokenizerConfig", "SimpleTokenizer", "token_id", "warmup"]


# Typographic apostrophes and hyphens fold to the ASCII ones inside a token's key.
_KEY_TRANSLATION = str.maketrans({"’": "'", "ʼ": "'", "‐": "-", "‑": "-"})

_PLURAL_CURRENCY = {
    word + "s": word for word in CURRENCY_WORDS.values() if word not in {"yen", "won", "dong"}
}


_NO_SPACE_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_SYMBOLS = PERCENT_SIGNS + "".join(CURRENCY_WORDS)
# Tokens are found on the normalized text with character classes (fast), then widened to
# whole grapheme clusters of the original text by _snap_to_clusters.
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
def _regexes() -> tuple[Any, tuple[Any, Any], Any, Any, Any, Any]:
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


class _NextSpace:
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


def _snap_to_clusters(
    text: str, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Widen token spans to whole grapheme clusters of ``text`` and merge overlaps.

    Tokens are found with character classes on the NORMALIZED text, so a mapped span can
    start or end inside a cluster of the original: after a combining mark was left out, or
    where normalization moved a boundary (Thai SARA AM ``ำ`` becomes NIKHAHIT + SARA AA, two
    clusters). Cluster boundaries are computed only if some span starts or ends where a
    boundary can be missing.
    """
    joins_previous, joins_next = _regexes()[1]
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
    cluster, prepend = _regexes()[2], _regexes()[3]
    boundary_list = [0]
    stretch_end = 0
    next_space = _NextSpace(text)
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


# Non-ASCII characters frequent in English prose (and the ideographic space), each replaced
# by an ASCII character that has the same effect on tokenization (with or without NFKC):
# the apostrophe and hyphens join words like their ASCII forms (and fold to them in keys),
# the rest only separate tokens. Tests check that the kernel and the general path agree on
# such text.
_TYPOGRAPHIC_TO_ASCII = {
    "’": "'",
    "‐": "-",
    "‑": "-",
    "‘": '"',
    "“": '"',
    "”": '"',
    "„": '"',
    "«": '"',
    "»": '"',
    "–": " ",
    "—": " ",
    "…": " ",
    "•": " ",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
    "\u3000": " ",
}
# Non-ASCII currency symbols and the Arabic percent sign are tokens of their own like "$"
# and "%" (and, like them, invariant under NFKC and case-folding): the kernel reads them as
# codes 128, 129, ..., whose ids it is given in its symbol table.
_KERNEL_SYMBOLS = [
    symbol for symbol in PERCENT_SIGNS + "".join(CURRENCY_WORDS) if not symbol.isascii()
]
_KERNEL_CODES = {char: ord(ascii) for char, ascii in _TYPOGRAPHIC_TO_ASCII.items()} | {
    symbol: 128 + index for index, symbol in enumerate(_KERNEL_SYMBOLS)
}
# The punctuation it reads that only separates tokens (、 。 「 」 ، ؟ ।): read as a space.
# So are the full-width and small forms of ASCII punctuation and currency symbols without
# NFKC; with NFKC they read as the character NFKC makes of them (``，`` as ``,``, ``％`` as
# ``%``, ``￥`` as ``¥``).
_SEPARATOR_CODE = ord(" ")
# Where the kernel looks for characters it can read beyond ASCII and the characters above
# (_kernel_chars decides, by rule, which ones it reads).
_KERNEL_CANDIDATES = (
    (0x00AA, 0x00AA),  # Latin-1 Supplement letters
    (0x00B5, 0x00B5),
    (0x00BA, 0x00BA),
    (0x00C0, 0x024F),  # ... and Latin Extended-A and -B
    (0x0370, 0x03FF),  # Greek
    (0x0400, 0x04FF),  # Cyrillic
    (0x0531, 0x058F),  # Armenian
    (0x05BE, 0x05F4),  # Hebrew (its points are combining marks)
    (0x0609, 0x06FF),  # Arabic
    (0x0900, 0x0DFF),  # Devanagari to Sinhala: letters, digits, dandas (not their signs)
    (0x0E01, 0x0E5B),  # Thai
    (0x10A0, 0x10FF),  # Georgian
    (0x1C90, 0x1CBF),
    (0x2D00, 0x2D2F),
    (0x1E00, 0x1EFF),  # Latin Extended Additional (Vietnamese)
    (0x2010, 0x205E),  # general punctuation
    (0x3001, 0x30FF),  # CJK punctuation, Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK ideographs
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFB00, 0xFB17),  # Latin and Armenian ligatures
    (0xFB50, 0xFDFF),  # Arabic presentation forms
    (0xFE70, 0xFEFC),
    (0xFE10, 0xFE19),  # vertical, CJK compatibility and small forms of punctuation
    (0xFE30, 0xFE6B),
    (0xFF01, 0xFF5A),  # full-width punctuation, digits and Latin letters
    (0xFF5B, 0xFF65),  # full-width and half-width punctuation
    (0xFF66, 0xFF9D),  # half-width katakana
    (0xFFE0, 0xFFEE),  # full-width currency symbols, half-width forms
)
# Where the emoji of one code point (Extended_Pictographic) are looked for, besides the
# candidates above (which yield none): ©, ®, arrows, technical symbols, geometric shapes,
# miscellaneous symbols and dingbats, 〰 and 〽, and the pictographs, emoticons and
# transport symbols of the Supplementary Multilingual Plane. Only emoji are taken from
# these ranges.
_EMOJI_CANDIDATES = (
    (0x00A9, 0x00AE), (0x2100, 0x2BFF), (0x3030, 0x303D), (0x1F000, 0x1FAFF)
)
# The grapheme cluster break properties of the characters the kernel reads besides ASCII:
# between two such characters (or one and ASCII) no rule of UAX #29 joins a cluster (the
# rules that join an LV or LVT syllable or an Indic consonant to a neighbour need a jamo or
# a virama there, which the kernel does not read).
_STANDS_ALONE = (
    r"[\p{Grapheme_Cluster_Break=Other}\p{Grapheme_Cluster_Break=LV}"
    r"\p{Grapheme_Cluster_Break=LVT}]"
)
# The combining marks the kernel may read: those of the Indic scripts from Devanagari to
# Sinhala that join the cluster before them (Extend or SpacingMark) and nothing after
# them but, for a virama, the consonant that follows (inside the same word).
_MARKS_FIRST, _MARKS_LAST = 0x0900, 0x0DFF
# The Thai block, whose marks the kernel reads after Thai characters (THAI).
_THAI_FIRST, _THAI_LAST = 0x0E00, 0x0E7F
# the canonical combining class of the Indic nuktas
_NUKTA_CLASS = 7
_JOINS_CLUSTER_BEFORE = (
    r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=SpacingMark}]"
)
# The switch settings that change a character's fold: (nfkc, casefold, normalize_numbers).
_FOLD_SETTINGS = tuple(itertools.product((True, False), repeat=3))


def _letter_key(char: str, nfkc: bool, casefold: bool, numbers: bool) -> str:
    """What ``char`` alone contributes to a token's key: its fold, with ``ʼ`` read as ``'``."""
    return _fold_string(char, nfkc, casefold, numbers).translate(_KEY_TRANSLATION)


class _KernelChars(NamedTuple):
    """The non-ASCII characters the kernel reads beyond ``_KERNEL_CODES``, by kind."""

    letters: tuple[str, ...]
    digits: tuple[str, ...]
    singles: tuple[str, ...]
    separators: tuple[str, ...]
    stand_ins: tuple[str, ...]
    marks: tuple[str, ...]
    nuktas: tuple[str, ...]
    nukta_bases: tuple[str, ...]
    thai: tuple[str, ...]
    thai_marks: tuple[str, ...]


@lru_cache(maxsize=1)
def _kernel_chars() -> _KernelChars:
    """The characters of ``_KERNEL_CANDIDATES`` the kernel reads, by kind, in code point order.

    A candidate is read if, alone, it is a normalization unit and a grapheme cluster of
    its own next to any character the kernel reads (no combining class, no composition
    with the character before it, a cluster break property of ``_STANDS_ALONE``), and if
    under every switch setting its fold (NFKC, case-folding, script digits, as the general
    path computes it for a unit of one character) makes it one of:

    - a letter: the fold is one or more letters, possibly with combining marks after the
      first, none of a script tokenized per character, with a key of at most
      ``MAX_KEY_BYTES`` UTF-8 bytes. The general path reads the letter's whole fold
      inside the word around it and maps it back to the letter alone, so the token's key
      is the concatenation of its characters' keys: what the kernel computes. ``ß``
      (``ss``), ``Ĳ`` (``IJ`` under NFKC), ``ŉ`` (``ʼn``), ``µ`` (Greek ``μ``), ``ſ``
      (``s``), ``ﬁ``, ``Ａ``, ``ب``, ``ﻻ`` (``لا`` under NFKC), ``क``, ``한`` are read; ``ŀ``
      is not (NFKC gives ``l·``, which ends a word);
    - a digit: the fold is one decimal digit (ASCII or of a script written with spaces),
      which the number rules (``5.2``, ``1,200``) treat as they treat ASCII digits
      (``٣``, ``३``, ``３``; not Thai digits, tokens of their own without
      ``normalize_numbers``);
    - a token of its own: the fold is one character of a script tokenized per character
      (``東``, ``か``, ``ア``, ``ｱ``; not ``ゟ``, whose NFKC form ``より`` is two tokens), or
      the character itself under every setting, an emoji (Extended_Pictographic: ``😀``,
      ``☕``, ``©``; not ``™``, whose NFKC form is ``TM``). A variation selector, ZWJ or
      skin tone after an emoji joins its cluster, and is a character the kernel cannot
      read;
    - a separator: punctuation that no token rule reads, and so is its fold (``、``,
      ``。``, ``「``, ``،``, ``؟``, ``।``, ``‼``; half-width ``｡``, NFKC ``。``);
    - a stand-in: a character that no token rule reads without NFKC, and that NFKC makes
      a character the kernel reads as punctuation or a symbol: ASCII punctuation (the
      full-width ``，``, which then joins digits as ``,`` does, ``％``, ``＄``, ``．``) or a
      currency symbol (``￥``). The kernel reads it as a separator without NFKC, and as
      that character with NFKC.

    Besides, the combining marks of the Indic scripts (U+0900 to U+0DFF) that the kernel
    reads inside words only (see the module doc), each a fold of its own under every
    setting and joining the cluster before it (Extend or SpacingMark):

    - a mark: combining class 0 or 9 (vowel signs, anusvara, visarga, viramas), and not
      the second half of a canonical composition (``normalize._ATTACHING_STARTERS``); read
      right after a letter or another mark;
    - a nukta: combining class 7; read right after a letter, but not after a *nukta base*:
      a letter one of whose NFKC folds ends with a character a nukta composes with (``न``,
      ``र``, ``ळ``) or with a mark of a higher class (``İ``), before which NFKC would move
      it. Nukta bases are letters in every other respect, with a code of their own.

    And Thai (U+0E00 to U+0E7F), a script tokenized per grapheme cluster:

    - a Thai character: a token of its own as above, of the Thai script, whose fold is
      itself under every setting (consonants, vowels written as letters such as the
      prepended ``เ``, and ``ฯ``, ``ๆ``, ``๏``, ``๚``, ``๛``; not the digits, which fold to
      ASCII ones with ``normalize_numbers``, nor SARA AM ``ำ``, a SpacingMark whose NFKC
      form is two characters);
    - a Thai mark: a combining mark of the Thai script joining the cluster before it
      (Extend), its fold itself under every setting, composing with nothing, of a
      combining class in ``THAI_MARK_CLASSES``; read right after a Thai character or
      another Thai mark (not after one of a higher class, non-zero: NFKC would swap them).
      The general path reads every Thai character as a token and merges the marks'
      tokens with the character's when it snaps them to its grapheme cluster, so the key
      is the characters joined by spaces: a mark's key in the key table is a space and
      the mark.
    """
    import unicodedata

    import regex

    token_pattern, no_space_script = _regexes()[0], _regexes()[4]
    stands_alone = regex.compile(_STANDS_ALONE)
    joins_before = regex.compile(_JOINS_CLUSTER_BEFORE)
    letters, digits, singles, separators, stand_ins, marks = [], [], [], [], [], []
    nuktas, nukta_bases = [], []
    thai, thai_marks = [], []
    is_thai = regex.compile(r"\p{Thai}")
    pictographic = regex.compile(r"\p{Extended_Pictographic}")
    for code_point in range(_THAI_FIRST, _THAI_LAST + 1):
        char = chr(code_point)
        if (
            unicodedata.category(char) == "Mn"
            and is_thai.match(char)
            and unicodedata.combining(char) in THAI_MARK_CLASSES
            and char not in _ATTACHING_STARTERS
            and joins_before.match(char)
            and all(_fold_string(char, *setting) == char for setting in _FOLD_SETTINGS)
            and len(char.encode("utf-8")) < MAX_KEY_BYTES
        ):
            thai_marks.append(char)
    for code_point in range(_MARKS_FIRST, _MARKS_LAST + 1):
        char = chr(code_point)
        if (
            unicodedata.category(char) == "Mn"
            and unicodedata.combining(char) == _NUKTA_CLASS
            and joins_before.match(char)
            and all(_fold_string(char, *setting) == char for setting in _FOLD_SETTINGS)
        ):
            nuktas.append(char)
    # the characters a nukta composes with (Devanagari न, र, ळ)
    composes_with_nukta = set()
    for code_point in range(0x10000):
        decomposition = unicodedata.decomposition(chr(code_point))
        if decomposition and not decomposition.startswith("<"):
            parts = [chr(int(part, 16)) for part in decomposition.split()]
            if (
                len(parts) == 2
                and parts[1] in nuktas
                and unicodedata.normalize("NFC", "".join(parts)) == chr(code_point)
            ):
                composes_with_nukta.add(parts[0])
    for first, last in _KERNEL_CANDIDATES:
        for code_point in range(first, last + 1):
            char = chr(code_point)
            category = unicodedata.category(char)
            if (
                _MARKS_FIRST <= code_point <= _MARKS_LAST
                and category in ("Mn", "Mc")
                and unicodedata.combining(char) in (0, 9)
                and char not in _ATTACHING_STARTERS
                and joins_before.match(char)
                and all(_fold_string(char, *setting) == char for setting in _FOLD_SETTINGS)
                and len(char.encode("utf-8")) <= MAX_KEY_BYTES
            ):
                marks.append(char)
                continue
            if (
                char in _KERNEL_CODES
                or category[0] not in "LNPS"
                or _attaches(char)
                or not stands_alone.match(char)
            ):
                continue
            if (
                category != "Nd"
                and unicodedata.normalize("NFKC", char) == char
                and char.casefold() == char
                and char.translate(_NUMBER_SEPARATORS) == char
            ):
                folds = [char]  # then so is every setting's fold (_fold_string)
            else:
                folds = [_fold_string(char, *setting) for setting in _FOLD_SETTINGS]
            if category[0] == "L" and all(
                folded
                and unicodedata.category(folded[0])[0] == "L"
                and all(unicodedata.category(c)[0] in "LM" for c in folded)
                and not no_space_script.search(folded)
                and len(folded.translate(_KEY_TRANSLATION).encode("utf-8")) <= MAX_KEY_BYTES
                for folded in folds
            ):
                # a nukta after it would compose with or be reordered before its NFKC fold
                nukta_base = any(
                    unicodedata.combining(folded[-1]) > _NUKTA_CLASS
                    or folded[-1] in composes_with_nukta
                    for folded, setting in zip(folds * len(_FOLD_SETTINGS), _FOLD_SETTINGS)
                    if setting[0]
                )
                (nukta_bases if nukta_base else letters).append(char)
            elif category == "Nd" and all(
                len(folded) == 1
                and unicodedata.category(folded) == "Nd"
                and not no_space_script.match(folded)
                for folded in folds
            ):
                digits.append(char)
            elif all(len(folded) == 1 and no_space_script.match(folded) for folded in folds):
                # (a Thai character folding to itself: the Thai marks after it extend it)
                thai_char = is_thai.match(char) and folds == [char] * len(folds)
                (thai if thai_char else singles).append(char)
            elif all(
                folded
                and all(unicodedata.category(c)[0] == "P" for c in folded)
                and not any(c in _TOKEN_JOINERS for c in folded)
                and not token_pattern.search(folded)
                for folded in folds
            ):
                separators.append(char)
            elif (
                not token_pattern.search(char)
                and char not in _TOKEN_JOINERS
                and all(
                    _fold_string(char, False, casefold, numbers) == char
                    for casefold in (True, False)
                    for numbers in (True, False)
                )
                and _stand_in_code(char) is not None
            ):
                stand_ins.append(char)
    for first, last in _EMOJI_CANDIDATES:
        for code_point in range(first, last + 1):
            char = chr(code_point)
            # an emoji of one code point that every setting leaves as it is: a token of
            # its own (the modifiers, ZWJ and variation selectors that extend its cluster
            # are characters the kernel cannot read)
            if (
                pictographic.match(char)
                and unicodedata.category(char)[0] in "LNPS"
                and char not in _KERNEL_CODES
                and not _attaches(char)
                and stands_alone.match(char)
                # (then so is every setting's fold, _fold_string)
                and unicodedata.normalize("NFKC", char) == char
                and char.casefold() == char
                and char.translate(_NUMBER_SEPARATORS) == char
            ):
                singles.append(char)
    return _KernelChars(
        *map(
            tuple,
            (
                letters, digits, singles, separators, stand_ins, marks, nuktas, nukta_bases,
                thai, thai_marks,
            ),
        )
    )


def _stand_in_code(char: str) -> int | None:
    """The kernel code of ``char``'s fold under NFKC when that is one character the kernel
    reads as ASCII punctuation or a symbol (under every other switch setting), else None."""
    folds = {
        _fold_string(char, True, *setting) for setting in itertools.product((True, False), repeat=2)
    }
    if len(folds) != 1:
        return None
    folded = folds.pop()
    if len(folded) != 1 or folded.isalnum():
        return None
    if folded.isascii():
        return ord(folded)
    return _KERNEL_CODES.get(folded)


def _thai_mark_code(char: str) -> int:
    """The kernel code of a Thai mark: ``THAI_MARK`` + the rank of its class."""
    import unicodedata

    return THAI_MARK + THAI_MARK_CLASSES.index(unicodedata.combining(char))


# The characters the token pattern reads inside a token, between two others.
_TOKEN_JOINERS = ".,'’ʼ‐‑-"


@lru_cache(maxsize=2)
def _unit_codes(nfkc: bool) -> np.ndarray:
    """The kernel code of each code point below ``TABLE_UNITS`` (``uint8``;
    ``OTHER`` if none) with or without NFKC (only the codes of stand-ins differ: the
    same characters are read)."""
    codes = np.full(TABLE_UNITS, OTHER, dtype=np.uint8)
    codes[:128] = np.arange(128, dtype=np.uint8)
    for char, code in _KERNEL_CODES.items():
        codes[ord(char)] = code
    kernel_chars = _kernel_chars()
    for chars, code in (
        (kernel_chars.letters, LETTER),
        (kernel_chars.digits, DIGIT),
        (kernel_chars.singles, SINGLE),
        (kernel_chars.separators, _SEPARATOR_CODE),
        (kernel_chars.marks, MARK),
        (kernel_chars.nuktas, NUKTA),
        (kernel_chars.nukta_bases, NUKTA_BASE),
        (kernel_chars.thai, THAI),
    ):
        codes[[ord(char) for char in chars]] = code
    for char in kernel_chars.thai_marks:
        codes[ord(char)] = _thai_mark_code(char)
    for char in kernel_chars.stand_ins:
        codes[ord(char)] = _stand_in_code(char) if nfkc else _SEPARATOR_CODE
    return codes


# One kernel scratch buffer per thread (the kernel releases the GIL) for the tokens of a
# text while they are found, so that a text of up to this many tokens needs no fresh
# memory but its result (first-touch page faults cost as much as a tenth of the kernel's
# time). 3 x 8 bytes per token; pages are only resident once used.
_SCRATCH_TOKENS = 1 << 15
_scratch = threading.local()


# Above this share of the text in general-path pieces, the whole text takes the general path.
_GENERAL_SHARE = 0.5


@lru_cache(maxsize=4096)
def _joins_space(char: str) -> bool:
    """True if ``char`` may join ASCII whitespace before it (normalization or cluster)."""
    return _attaches(char) or _regexes()[5].match(char) is not None


def _table_index(code_points: np.ndarray) -> np.ndarray:
    """Where the kernel's tables hold each code point: itself, or U+FFFF (no character)
    for those above the tables."""
    return np.where(code_points < TABLE_UNITS, code_points, 0xFFFF)


def _general_pieces(text: str, code_points: np.ndarray) -> np.ndarray | None:
    """``(start, end)`` rows of the pieces that need the general path (see the module doc).

    ``code_points`` are :func:`~citekit._code_units.code_units`'s. None when the pieces
    would cover more than ``_GENERAL_SHARE`` of the text.
    """
    return _general_pieces_many(text, code_points, np.array([0, len(text)], dtype=np.int64))[0]


def _general_pieces_many(
    joined: str, code_points: np.ndarray, text_starts: np.ndarray
) -> list[np.ndarray | None]:
    """:func:`_general_pieces` of every text ``joined[text_starts[t]:text_starts[t + 1]]``
    (offsets relative to the text), from numpy passes over the whole of ``joined``: the
    start of every text is a cut, as the start of a text alone."""
    n_chars = len(joined)
    if code_points.dtype == np.uint8:  # (ASCII: no piece; the look-ups below are 16-bit)
        code_points = code_points.astype(np.uint16)
    high = np.flatnonzero(code_points > 127)
    # (the kernel reads the same characters with or without NFKC)
    unit_codes = _unit_codes(True)
    high_codes = unit_codes[_table_index(code_points[high])]
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
        before_codes = unit_codes[_table_index(before)]
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
        before_codes = unit_codes[_table_index(code_points[np.maximum(marks - 1, 0)])]
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
    check_codes = unit_codes[_table_index(after_cut[check])]
    check = check[
        (check_codes == OTHER)
        | (check_codes == MARK)
        | (check_codes == NUKTA)
        | ((check_codes >= THAI_MARK) & (check_codes < THAI))
    ]
    joining = [index for index in check.tolist() if _joins_space(joined[cuts[index]])]
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
        if int((ends[lo:hi] - starts[lo:hi]).sum()) > _GENERAL_SHARE * (firsts[text + 1] - base):
            out.append(None)
        else:
            out.append(np.stack([starts[lo:hi] - base, ends[lo:hi] - base], axis=1))
    return out


_TRUE = np.ones(1, dtype=bool)


def _merge_pieces(
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


def token_id(key: str) -> int:
    """The stable 63-bit id of a normalized token string.

    Parameters
    ----------
    key : str
        A token's normalized form (what :meth:`SimpleTokenizer.token_key` returns).

    Returns
    -------
    int
        The 64-bit FNV-1a hash of ``key``'s UTF-8 bytes with the top bit cleared: the
        same in every process and on every machine, in ``[0, 2**63)``.

    Examples
    --------
    >>> hex(token_id("a"))  # FNV-1a("a") = 0xaf63dc4c8601ec8c, top bit cleared
    '0x2f63dc4c8601ec8c'
    >>> token_id("revenue") == int(SimpleTokenizer().token_ids("Revenue")[0])
    True
    """
    check_str(key, "key")
    return fnv1a(key.encode("utf-8", "surrogatepass")) & ID_MASK


@dataclass(frozen=True)
class TokenizerConfig:
    """Normalization settings of :class:`SimpleTokenizer`.

    Parameters
    ----------
    normalize_numbers : bool, default True
        ``1,200`` and ``1200`` get the same id; script digits count as ASCII digits.
    normalize_percent : bool, default True
        ``%`` gets the id of ``percent``.
    normalize_currency : bool, default True
        Currency symbols get the id of their word (``$`` -> ``dollar``), and plural
        currency words that of the singular.
    nfkc : bool, default True
        Unicode NFKC before tokenizing (``ﬁ``, full-width letters, ``①``).
    casefold : bool, default True
        Case-insensitive ids (``REVENUE``, ``Revenue`` and ``revenue`` are one token).

    Examples
    --------
    >>> TokenizerConfig(normalize_currency=False).normalize_currency
    False
    """

    normalize_numbers: bool = True
    normalize_percent: bool = True
    normalize_currency: bool = True
    nfkc: bool = True
    casefold: bool = True

    def __post_init__(self) -> None:
        for field in fields(self):
            check_bool(getattr(self, field.name), field.name)

    def normalizer_config(self) -> NormalizerConfig:
        """The :class:`~citekit.normalize.NormalizerConfig` with the same switches.

        Examples
        --------
        >>> TokenizerConfig(casefold=False).normalizer_config().casefold
        False
        """
        return NormalizerConfig(
            nfkc=self.nfkc,
            casefold=self.casefold,
            normalize_numbers=self.normalize_numbers,
            normalize_percent=self.normalize_percent,
            normalize_currency=self.normalize_currency,
        )


class SimpleTokenizer:
    """Rule-based tokenizer with stable ids and spans into the text as passed.

    Parameters
    ----------
    config : TokenizerConfig, optional
        Normalization switches; all on by default.

    Examples
    --------
    >>> tokenizer = SimpleTokenizer()
    >>> tokenized = tokenizer.tokenize("Revenue rose 15% to $1,200.")
    >>> tokenized.tokens
    ['Revenue', 'rose', '15', '%', 'to', '$', '1,200']
    >>> [tokenizer.token_key(t) for t in ["%", "$", "1,200", "dollars"]]
    ['percent', 'dollar', '1200', 'dollar']
    >>> ids, spans = tokenizer.tokenize("ＲＥＶＥＮＵＥ")
    >>> int(ids[0]) == int(tokenized.token_ids[0]), spans
    (True, [(0, 7)])
    """

    #: How ids are made from token keys; part of the signature a prepared corpus records,
    #: so that a corpus saved under another scheme is refused, not silently misaligned.
    id_scheme = "fnv1a-64"

    def __init__(self, config: TokenizerConfig | None = None) -> None:
        if config is None:
            config = TokenizerConfig()
        elif not isinstance(config, TokenizerConfig):
            raise TypeError(f"config must be a TokenizerConfig, got {type(config).__name__}")
        self.config = config
        self._normalizer_config = config.normalizer_config()
        # surface form (as found in the normalized text) -> id, so each is hashed once
        self._id_cache: dict[str, int] = {}
        # the kernel and its tables for this config (_kernel), looked up on first use
        self._kernel: tuple[Any, np.ndarray, np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        return f"SimpleTokenizer(config={self.config!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SimpleTokenizer):
            return NotImplemented
        return self.config == other.config

    def __hash__(self) -> int:
        return hash((SimpleTokenizer, self.config))

    # ------------------------------------------------------------------------------------
    def token_key(self, surface: str) -> str:
        """The normalized form of one token, from which its id is computed.

        Parameters
        ----------
        surface : str
            A token as it appears in the (case-folded / NFKC) text.

        Returns
        -------
        str
            The key: typographic apostrophes/hyphens to ASCII, thousands separators
            dropped, symbols and plural currency words to their word, per the config.

        Examples
        --------
        >>> SimpleTokenizer().token_key("dollars"), SimpleTokenizer().token_key("1,200")
        ('dollar', '1200')
        """
        check_str(surface, "surface")
        config = self.config
        key = surface.translate(_KEY_TRANSLATION)
        if config.normalize_numbers and "," in key:
            key = THOUSANDS_COMMA_RE.sub("", key)
        if len(key) == 1:
            word = symbol_word(key)
            if word is not None:
                enabled = (
                    config.normalize_percent if key in PERCENT_SIGNS else config.normalize_currency
                )
                if enabled:
                    key = word
        if config.normalize_currency:
            key = _PLURAL_CURRENCY.get(key, key)
        return key

    def _ids(self, surfaces: list[str]) -> np.ndarray:
        """Ids of token surfaces found in normalized text (each distinct one hashed once)."""
        cache = self._id_cache
        try:
            return np.fromiter(
                map(cache.__getitem__, surfaces), dtype=np.int64, count=len(surfaces)
            )
        except KeyError:
            pass
        for surface in set(surfaces).difference(cache):
            cache[surface] = token_id(self.token_key(surface))
        return np.fromiter(map(cache.__getitem__, surfaces), dtype=np.int64, count=len(surfaces))

    def tokenize(self, text: str) -> TokenizedText:
        """Split ``text`` into tokens with stable ids and spans into ``text``.

        Parameters
        ----------
        text : str
            Any string.

        Returns
        -------
        TokenizedText
            Unpacks as ``(token_ids, spans)``; ids are ``int64``.

        Raises
        ------
        TypeError
            If ``text`` is not a ``str``.

        Examples
        --------
        >>> SimpleTokenizer().tokenize("東京で 5.2％ 上昇").tokens
        ['東', '京', 'で', '5.2', '％', '上', '昇']
        >>> SimpleTokenizer().tokenize("state-of-the-art company’s").tokens
        ['state-of-the-art', 'company’s']
        """
        check_str(text, "text")
        # ASCII, and English with typographic punctuation whose characters have the same
        # effect on tokens as ASCII stand-ins, one character for one: the kernel alone;
        # with other characters, the general path for the pieces around them (module doc)
        code_points = code_units(text)
        ids, starts, ends, n_other = self._kernel_tokens(code_points)
        if n_other == 0:
            return TokenizedText(text, ids, starts, ends)
        pieces = _general_pieces(text, code_points)
        if pieces is None:
            return self._tokenize_unicode(text)
        return self._tokenize_hybrid(text, ids, starts, ends, pieces)

    def token_ids(self, text: str) -> np.ndarray:
        """Only the ids of :meth:`tokenize` (``int64`` array).

        Examples
        --------
        >>> tokenizer = SimpleTokenizer()
        >>> bool((tokenizer.token_ids("15%") == tokenizer.token_ids("15 percent")).all())
        True
        """
        return self.tokenize(text).token_ids

    # ------------------------------------------------------------------------------------
    def _kernel_tokens(
        self, code_points: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Ids, starts and ends of the kernel's tokens, and how many characters it cannot read.

        ``code_points`` are :func:`~citekit._code_units.code_units`'s; the characters the
        kernel cannot read separate tokens.
        """
        if self._kernel is None:
            self._kernel = _kernel(self.config)
        kernel_tokens, table, ids, letter_keys = self._kernel
        scratch = getattr(_scratch, "tokens", None)
        if scratch is None:
            scratch = _scratch.tokens = np.empty(3 * _SCRATCH_TOKENS, dtype=np.int64)
        return kernel_tokens(code_points, table, ids, letter_keys, scratch)

    def _tokenize_many(
        self,
        texts: list[str],
        joined: str,
        text_starts: np.ndarray,
        *,
        buffer: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The tokens :meth:`tokenize` gives each of ``texts``, from one kernel call.

        ``joined`` is ``"".join(texts)``, text ``t`` being
        ``joined[text_starts[t]:text_starts[t + 1]]`` (``int64``). Returns the ids, starts
        and ends of every text's tokens, concatenated (offsets relative to their own text),
        and the token offsets (text ``t`` has tokens ``offsets[t]:offsets[t + 1]``). The
        pieces of the texts with characters the kernel cannot read go to one general-path
        call (see the module doc), the texts mostly made of them to one call each, as
        alone. A ``buffer`` (int64, three regions of ``len(buffer) // 3`` tokens; a larger
        one is allocated if the texts have more tokens) is written instead of the thread's
        scratch, and the kernel's arrays are views of it: a caller that joins several
        results allocates their memory itself (reading threads' allocations stay in their
        own arenas of the C allocator, which the caller's next arrays cannot reuse; see
        :func:`~citekit.kernels._tokenize.kernel_tokens_many`).
        """
        from citekit.kernels._tokenize import kernel_tokens_many

        if self._kernel is None:
            self._kernel = _kernel(self.config)
        _, table, kernel_ids, letter_keys = self._kernel
        scratch = buffer
        if scratch is None:
            scratch = getattr(_scratch, "tokens", None)
            if scratch is None:
                scratch = _scratch.tokens = np.empty(3 * _SCRATCH_TOKENS, dtype=np.int64)
        units = code_units(joined)
        ids, starts, ends, offsets, n_other = kernel_tokens_many(
            units, text_starts, table, kernel_ids, letter_keys, scratch, buffer is not None
        )
        if not np.count_nonzero(n_other):
            return ids, starts, ends, offsets
        parts: list[Any] = []
        hybrid: list[int] = []  # the texts read by the kernel and the general path
        items: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        needing = np.flatnonzero(n_other).tolist()
        if len(needing) == len(texts):
            found = _general_pieces_many(joined, units, text_starts)
        else:
            # (the units of these texts copied: code_units keeps the joined text's array
            # for the segmenter)
            bounds = text_starts.tolist()
            found = _general_pieces_many(
                "".join([texts[number] for number in needing]),
                np.concatenate([units[bounds[n] : bounds[n + 1]] for n in needing]),
                np.cumsum([0] + [len(texts[number]) for number in needing], dtype=np.int64),
            )
        pieces_of = dict(zip(needing, found))
        for number, text in enumerate(texts):
            lo, hi = offsets[number], offsets[number + 1]
            kernel = (ids[lo:hi], starts[lo:hi], ends[lo:hi])
            pieces = pieces_of.get(number)
            if not n_other[number]:
                parts.append(kernel)
            elif pieces is None:
                tokens = self._tokenize_unicode(text)
                parts.append((tokens.token_ids, tokens.starts, tokens.ends))
            else:
                parts.append(None)
                hybrid.append(number)
                items.append((text, *kernel, pieces))
        # the general path's pieces of all these texts in as few calls as can be
        for number, tokens in zip(hybrid, self._hybrid_many(items)):
            parts[number] = tokens
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(part[0]) for part in parts], out=offsets[1:])
        ids, starts, ends = (np.concatenate([part[k] for part in parts]) for k in range(3))
        return ids, starts, ends, offsets

    def _tokenize_hybrid(
        self, text: str, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray, pieces: np.ndarray
    ) -> TokenizedText:
        """Kernel tokens outside ``pieces``, general-path tokens inside them.

        ``ids``, ``starts`` and ``ends`` are the kernel's tokens of the whole text.
        """
        return TokenizedText(text, *self._hybrid_group([(text, ids, starts, ends, pieces)])[0])

    def _hybrid_many(
        self, items: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`_tokenize_hybrid`'s ``(ids, starts, ends)`` for each ``(text, ids, starts,
        ends, pieces)`` of ``items``, the pieces of all texts in one general-path call.

        Within a text, pieces are joined as :meth:`_hybrid_group` explains. Between texts,
        a text's first piece may start at its first character and its last piece end at
        its last: a space before the first character is a cut point unless the character
        joins a space (a combining mark), and after the last one unless it is a Prepend
        character (which joins what follows, UAX #29 GB9b). A text with either gets a call
        of its own.
        """
        prepend = _regexes()[3]
        shared = []
        alone = []
        for number, (text, *_, pieces) in enumerate(items):
            n_pieces = pieces.shape[0]
            at_start = n_pieces and pieces[0, 0] == 0 and _joins_space(text[0])
            at_end = (
                n_pieces and pieces[-1, 1] == len(text) and prepend.match(text, len(text) - 1)
            )
            (alone if at_start or at_end else shared).append(number)
        results: list[Any] = [None] * len(items)
        groups = [shared] if shared else []
        groups.extend([number] for number in alone)
        for group in groups:
            for number, tokens in zip(group, self._hybrid_group([items[n] for n in group])):
                results[number] = tokens
        return results

    def _hybrid_group(
        self, items: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """One general-path call for the pieces of every text of ``items`` (see
        :meth:`_hybrid_many`), then each text's kernel tokens outside its pieces merged
        with the general tokens inside them."""
        # One general-path call for all pieces, joined by spaces: each piece ends with ASCII
        # whitespace (or the text) and starts with a character that joins no space, so the
        # joints are cut points too and each piece tokenizes as it does in the text.
        piece_list: list[str] = []
        for text, *_, pieces in items:
            piece_list.extend(
                text[start:end] for start, end in zip(pieces[:, 0].tolist(), pieces[:, 1].tolist())
            )
        general = self._tokenize_unicode(" ".join(piece_list))
        piece_starts = np.concatenate([item[4][:, 0] for item in items])
        piece_ends = np.concatenate([item[4][:, 1] for item in items])
        joined_starts = np.zeros(len(piece_list), dtype=np.int64)
        np.cumsum(piece_ends[:-1] - piece_starts[:-1] + 1, out=joined_starts[1:])
        piece = np.searchsorted(joined_starts, general.starts, side="right") - 1
        shifts = piece_starts[piece] - joined_starts[piece]
        general_ids = general.token_ids
        general_starts, general_ends = general.starts + shifts, general.ends + shifts
        # the general tokens of each text (pieces, hence tokens, come text after text)
        piece_bounds = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum([item[4].shape[0] for item in items], out=piece_bounds[1:])
        token_bounds = np.searchsorted(piece, piece_bounds).tolist()
        results = []
        for number, (_, ids, starts, ends, pieces) in enumerate(items):
            lo, hi = token_bounds[number], token_bounds[number + 1]
            results.append(
                _merge_pieces(
                    ids, starts, ends, pieces,
                    general_ids[lo:hi], general_starts[lo:hi], general_ends[lo:hi],
                )
            )
        return results

    def _make_ascii_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids the kernel cannot hash itself: symbols (by kernel code), plural currency words."""
        symbol_ids = np.zeros(256, dtype=np.int64)
        for symbol in ["$", "%", *_KERNEL_SYMBOLS]:
            code = _KERNEL_CODES.get(symbol, ord(symbol))
            symbol_ids[code] = token_id(self.token_key(symbol))
        plurals = [p for p in _PLURAL_CURRENCY if self.token_key(p) != p]
        plural_ids = np.array([token_id(p) for p in plurals], dtype=np.int64)
        singular_ids = np.array([token_id(self.token_key(p)) for p in plurals], dtype=np.int64)
        return symbol_ids, plural_ids, singular_ids

    def _tokenize_unicode(self, text: str) -> TokenizedText:
        """The general path on the whole of ``text``."""
        normalized = normalize_text(text, self._normalizer_config)
        folded = normalized.text
        spans = [match.span() for match in _regexes()[0].finditer(folded)]
        if not spans:
            return TokenizedText(text, [], [], [])
        norm_spans = np.array(spans, dtype=np.int64)
        norm_starts, norm_ends = norm_spans[:, 0], norm_spans[:, 1]
        orig_starts = normalized.orig_starts[norm_starts]
        orig_ends = normalized.orig_ends[norm_ends - 1]
        orig_starts, orig_ends = _snap_to_clusters(text, orig_starts, orig_ends)
        surfaces = [folded[start:end] for start, end in spans]
        # One original character can expand into several tokens (½ -> 1⁄2, ㏂ -> a.m.),
        # and snapping can widen a token over its neighbour: merge overlapping tokens (the
        # spans are monotone, so comparing neighbours finds every overlap). A merged token's
        # key joins its parts with a space, which no single token contains.
        overlaps = orig_starts[1:] < orig_ends[:-1]
        if overlaps.any():
            first = np.flatnonzero(np.concatenate([[True], ~overlaps]))
            orig_starts = orig_starts[first]
            orig_ends = np.maximum.reduceat(orig_ends, first)
            group_ends = np.append(first[1:], len(surfaces))
            surfaces = [
                " ".join(surfaces[group_start:group_end])
                for group_start, group_end in zip(first.tolist(), group_ends.tolist())
            ]
        ids = self._ids(surfaces)
        return TokenizedText(text, ids, orig_starts, orig_ends)


@lru_cache(maxsize=None)  # one entry per config used (32 at most)
def _kernel(config: TokenizerConfig) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel function, its code unit, id and letter key tables for ``config``.

    The tables are read-only and shared by every tokenizer with this config; importing
    the kernel imports numba.
    """
    from citekit.kernels._tokenize import id_table, kernel_tokens, letter_key_table, unit_table

    symbol_ids, plural_ids, singular_ids = SimpleTokenizer(config)._make_ascii_tables()
    kernel_chars = _kernel_chars()
    setting = (config.nfkc, config.casefold, config.normalize_numbers)
    letter_keys = {
        ord(char): _letter_key(char, *setting).encode("utf-8")
        for char in (
            kernel_chars.letters
            + kernel_chars.digits
            + kernel_chars.singles
            + kernel_chars.marks
            + kernel_chars.nuktas
            + kernel_chars.nukta_bases
            + kernel_chars.thai
        )
    }
    # (a Thai mark's token is merged with the character's: the key joins them by a space)
    letter_keys.update(
        (ord(char), (" " + _letter_key(char, *setting)).encode("utf-8"))
        for char in kernel_chars.thai_marks
    )
    table = unit_table(
        _unit_codes(config.nfkc), symbol_ids, config.casefold, config.normalize_numbers
    )
    ids = id_table(symbol_ids, plural_ids, singular_ids)
    keys = letter_key_table(letter_keys)
    table.flags.writeable = ids.flags.writeable = keys.flags.writeable = False
    return kernel_tokens, table, ids, keys


# spans in bounds, non-empty, ordered (tests/test_tokenizer_simple.py, hypothesis)
_VALID_BY_CONSTRUCTION.add(SimpleTokenizer.tokenize)


def warmup() -> None:
    """Compile (or load from numba's on-disk cache) the tokenizer kernels for all three
    unit types.

    ASCII text reaches the kernels as ``uint8``, other text in the Basic Multilingual
    Plane as ``uint16``, text with characters beyond it as ``uint32``: one compiled
    signature each (of the kernels
    :func:`~citekit.kernels._tokenize.kernel_tokens` and ``kernel_tokens_many``).

    Examples
    --------
    >>> warmup()
    """
    tokenizer = SimpleTokenizer()
    for text in ("a", "a\u2019", "a\U0001f600"):
        tokenizer._kernel_tokens(code_units(text))
        tokenizer._tokenize_many([text], text, np.array([0, len(text)], dtype=np.int64))
