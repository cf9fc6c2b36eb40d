"""The characters :class:`~citekit.tokenizers.simple.SimpleTokenizer`'s kernel reads,
their kernel codes and keys, and the kernel's tables for a configuration.

Beyond ASCII the kernel reads characters chosen by rule (:func:`kernel_chars`): each is a
normalization unit and a grapheme cluster of its own next to any other it reads, and its
fold depends on no neighbour, so a token's span is that of its characters and its key the
concatenation of their folds. The codes are those of ``citekit.kernels._tokenize``.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from citekit.kernels._tokenize import (
    DIGIT,
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
    _ATTACHING_STARTERS,
    _NUMBER_SEPARATORS,
    _attaches,
    _fold_string,
)
from citekit.tokenizers._general import TOKEN_JOINERS, regexes
from citekit.tokenizers._keys import KEY_TRANSLATION, PLURAL_CURRENCY, key_id, token_key

__all__ = [
    "FOLD_SETTINGS",
    "KERNEL_CODES",
    "KERNEL_SYMBOLS",
    "SEPARATOR_CODE",
    "KernelChars",
    "kernel_chars",
    "kernel_tables",
    "letter_key",
    "stand_in_code",
    "symbol_tables",
    "table_index",
    "thai_mark_code",
    "unit_codes",
]


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
KERNEL_SYMBOLS = [
    symbol for symbol in PERCENT_SIGNS + "".join(CURRENCY_WORDS) if not symbol.isascii()
]
KERNEL_CODES = {char: ord(ascii) for char, ascii in _TYPOGRAPHIC_TO_ASCII.items()} | {
    symbol: 128 + index for index, symbol in enumerate(KERNEL_SYMBOLS)
}
# The punctuation it reads that only separates tokens (、 。 「 」 ، ؟ ।): read as a space.
# So are the full-width and small forms of ASCII punctuation and currency symbols without
# NFKC; with NFKC they read as the character NFKC makes of them (``，`` as ``,``, ``％`` as
# ``%``, ``￥`` as ``¥``).
SEPARATOR_CODE = ord(" ")
# Where the kernel looks for characters it can read beyond ASCII and the characters above
# (kernel_chars decides, by rule, which ones it reads).
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
FOLD_SETTINGS = tuple(itertools.product((True, False), repeat=3))


def letter_key(char: str, nfkc: bool, casefold: bool, numbers: bool) -> str:
    """What ``char`` alone contributes to a token's key: its fold, with ``ʼ`` read as ``'``."""
    return _fold_string(char, nfkc, casefold, numbers).translate(KEY_TRANSLATION)


class KernelChars(NamedTuple):
    """The non-ASCII characters the kernel reads beyond ``KERNEL_CODES``, by kind."""

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
def kernel_chars() -> KernelChars:
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
    reads inside words only (elsewhere such a mark joins the cluster before it: a
    character the kernel cannot read), each a fold of its own under every
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

    token_pattern, no_space_script = regexes()[0], regexes()[4]
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
            and all(_fold_string(char, *setting) == char for setting in FOLD_SETTINGS)
            and len(char.encode("utf-8")) < MAX_KEY_BYTES
        ):
            thai_marks.append(char)
    for code_point in range(_MARKS_FIRST, _MARKS_LAST + 1):
        char = chr(code_point)
        if (
            unicodedata.category(char) == "Mn"
            and unicodedata.combining(char) == _NUKTA_CLASS
            and joins_before.match(char)
            and all(_fold_string(char, *setting) == char for setting in FOLD_SETTINGS)
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
                and all(_fold_string(char, *setting) == char for setting in FOLD_SETTINGS)
                and len(char.encode("utf-8")) <= MAX_KEY_BYTES
            ):
                marks.append(char)
                continue
            if (
                char in KERNEL_CODES
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
                folds = [_fold_string(char, *setting) for setting in FOLD_SETTINGS]
            if category[0] == "L" and all(
                folded
                and unicodedata.category(folded[0])[0] == "L"
                and all(unicodedata.category(c)[0] in "LM" for c in folded)
                and not no_space_script.search(folded)
                and len(folded.translate(KEY_TRANSLATION).encode("utf-8")) <= MAX_KEY_BYTES
                for folded in folds
            ):
                # a nukta after it would compose with or be reordered before its NFKC fold
                nukta_base = any(
                    unicodedata.combining(folded[-1]) > _NUKTA_CLASS
                    or folded[-1] in composes_with_nukta
                    for folded, setting in zip(folds * len(FOLD_SETTINGS), FOLD_SETTINGS)
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
                and not any(c in TOKEN_JOINERS for c in folded)
                and not token_pattern.search(folded)
                for folded in folds
            ):
                separators.append(char)
            elif (
                not token_pattern.search(char)
                and char not in TOKEN_JOINERS
                and all(
                    _fold_string(char, False, casefold, numbers) == char
                    for casefold in (True, False)
                    for numbers in (True, False)
                )
                and stand_in_code(char) is not None
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
                and char not in KERNEL_CODES
                and not _attaches(char)
                and stands_alone.match(char)
                # (then so is every setting's fold, _fold_string)
                and unicodedata.normalize("NFKC", char) == char
                and char.casefold() == char
                and char.translate(_NUMBER_SEPARATORS) == char
            ):
                singles.append(char)
    return KernelChars(
        *map(
            tuple,
            (
                letters, digits, singles, separators, stand_ins, marks, nuktas, nukta_bases,
                thai, thai_marks,
            ),
        )
    )


def stand_in_code(char: str) -> int | None:
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
    return KERNEL_CODES.get(folded)


def thai_mark_code(char: str) -> int:
    """The kernel code of a Thai mark: ``THAI_MARK`` + the rank of its class."""
    import unicodedata

    return THAI_MARK + THAI_MARK_CLASSES.index(unicodedata.combining(char))


@lru_cache(maxsize=2)
def unit_codes(nfkc: bool) -> np.ndarray:
    """The kernel code of each code point below ``TABLE_UNITS`` (``uint8``;
    ``OTHER`` if none) with or without NFKC (only the codes of stand-ins differ: the
    same characters are read)."""
    codes = np.full(TABLE_UNITS, OTHER, dtype=np.uint8)
    codes[:128] = np.arange(128, dtype=np.uint8)
    for char, code in KERNEL_CODES.items():
        codes[ord(char)] = code
    chars = kernel_chars()
    for members, code in (
        (chars.letters, LETTER),
        (chars.digits, DIGIT),
        (chars.singles, SINGLE),
        (chars.separators, SEPARATOR_CODE),
        (chars.marks, MARK),
        (chars.nuktas, NUKTA),
        (chars.nukta_bases, NUKTA_BASE),
        (chars.thai, THAI),
    ):
        codes[[ord(char) for char in members]] = code
    for char in chars.thai_marks:
        codes[ord(char)] = thai_mark_code(char)
    for char in chars.stand_ins:
        codes[ord(char)] = stand_in_code(char) if nfkc else SEPARATOR_CODE
    return codes


def table_index(code_points: np.ndarray) -> np.ndarray:
    """Where the kernel's tables hold each code point: itself, or U+FFFF (no character)
    for those above the tables."""
    return np.where(code_points < TABLE_UNITS, code_points, 0xFFFF)


def symbol_tables(config: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ids the kernel cannot hash itself under ``config`` (a ``TokenizerConfig``): those
    of the symbols (by kernel code), and of the plural currency words and their singulars.
    """
    switches = (config.normalize_numbers, config.normalize_percent, config.normalize_currency)
    symbol_ids = np.zeros(256, dtype=np.int64)
    for symbol in ["$", "%", *KERNEL_SYMBOLS]:
        code = KERNEL_CODES.get(symbol, ord(symbol))
        symbol_ids[code] = key_id(token_key(symbol, *switches))
    plurals = [p for p in PLURAL_CURRENCY if token_key(p, *switches) != p]
    plural_ids = np.array([key_id(p) for p in plurals], dtype=np.int64)
    singular_ids = np.array([key_id(token_key(p, *switches)) for p in plurals], dtype=np.int64)
    return symbol_ids, plural_ids, singular_ids


@lru_cache(maxsize=None)  # one entry per config used (32 at most)
def kernel_tables(config: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel function, its code unit, id and letter key tables for ``config`` (a
    ``TokenizerConfig``).

    The tables are read-only and shared by every tokenizer with this config; importing
    the kernel imports the JIT compiler.
    """
    from citekit.kernels._tokenize import id_table, kernel_tokens, letter_key_table, unit_table

    symbol_ids, plural_ids, singular_ids = symbol_tables(config)
    chars = kernel_chars()
    setting = (config.nfkc, config.casefold, config.normalize_numbers)
    letter_keys = {
        ord(char): letter_key(char, *setting).encode("utf-8")
        for char in (
            chars.letters
            + chars.digits
            + chars.singles
            + chars.marks
            + chars.nuktas
            + chars.nukta_bases
            + chars.thai
        )
    }
    # (a Thai mark's token is merged with the character's: the key joins them by a space)
    letter_keys.update(
        (ord(char), (" " + letter_key(char, *setting)).encode("utf-8"))
        for char in chars.thai_marks
    )
    table = unit_table(
        unit_codes(config.nfkc), symbol_ids, config.casefold, config.normalize_numbers
    )
    ids = id_table(symbol_ids, plural_ids, singular_ids)
    keys = letter_key_table(letter_keys)
    table.flags.writeable = ids.flags.writeable = keys.flags.writeable = False
    return kernel_tokens, table, ids, keys
