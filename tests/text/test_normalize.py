"""Tests of citekit.normalize: folding rules and the exactness of the offset maps."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from citekit.normalize import (
    CURRENCY_WORDS,
    MAX_UNIT_LENGTH,
    PERCENT_SIGNS,
    _ATTACHING_STARTERS,
    _attaches,
    _fold_one_to_one,
    _fold_string,
    _fold_units,
    NormalizedText,
    NormalizerConfig,
    normalize_text,
)

ONLY_UNICODE = NormalizerConfig(
    normalize_numbers=False, normalize_percent=False, normalize_currency=False
)


def original_of(nt: NormalizedText, needle: str) -> str:
    start = nt.text.index(needle)
    orig_start, orig_end = nt.to_original(start, start + len(needle))
    return nt.original[orig_start:orig_end]


# ---------------------------------------------------------------------------------------
# configuration and bad input


def test_config_defaults_all_on():
    config = NormalizerConfig()
    assert config.nfkc and config.casefold
    assert config.normalize_numbers and config.normalize_percent and config.normalize_currency


@pytest.mark.parametrize(
    "field", ["nfkc", "casefold", "normalize_numbers", "normalize_percent", "normalize_currency"]
)
def test_config_rejects_non_bool_naming_field(field):
    with pytest.raises(TypeError, match=field):
        NormalizerConfig(**{field: "yes"})


def test_config_is_frozen():
    with pytest.raises(AttributeError):
        NormalizerConfig().nfkc = False  # type: ignore[misc]


@pytest.mark.parametrize("bad", [None, b"bytes", 3, ["a"]])
def test_text_must_be_str(bad):
    with pytest.raises(TypeError, match="text"):
        normalize_text(bad)


def test_config_must_be_normalizer_config():
    with pytest.raises(TypeError, match="config"):
        normalize_text("a", config={"nfkc": True})


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_and_whitespace(text):
    nt = normalize_text(text)
    assert nt.text == text
    assert len(nt) == len(text)
    assert nt.orig_starts.dtype == np.int64 and nt.orig_ends.dtype == np.int64


def test_to_original_validates_span():
    nt = normalize_text("abc")
    with pytest.raises(ValueError, match="start"):
        nt.to_original(-1, 2)
    with pytest.raises(ValueError, match="end"):
        nt.to_original(2, 1)
    with pytest.raises(ValueError, match="end"):
        nt.to_original(0, 4)
    with pytest.raises(TypeError, match="start"):
        nt.to_original(0.5, 2)


def test_to_original_empty_spans():
    nt = normalize_text("a ﬁ b")
    assert nt.to_original(0, 0) == (0, 0)
    assert nt.to_original(len(nt), len(nt)) == (5, 5)
    assert normalize_text("").to_original(0, 0) == (0, 0)
    # a normalized text shorter than the original: the end maps to the original end
    shrunk = normalize_text("1,200")
    assert shrunk.text == "1200"
    assert shrunk.to_original(4, 4) == (5, 5)


def test_normalized_text_checks_map_lengths():
    with pytest.raises(ValueError, match="one entry per character"):
        NormalizedText("ab", "ab", [0], [1])


# ---------------------------------------------------------------------------------------
# Unicode rules


def test_ascii_lowercases_with_identity_map():
    nt = normalize_text("Revenue GREW")
    assert nt.text == "revenue grew"
    assert nt.orig_starts.tolist() == list(range(12))
    assert nt.orig_ends.tolist() == list(range(1, 13))


@pytest.mark.parametrize(
    "original, normalized",
    [
        ("ﬁ", "fi"),
        ("①", "1"),
        ("㎏", "kg"),
        ("ＲＥＶＥＮＵＥ", "revenue"),
        ("ß", "ss"),
        ("Ⅻ", "xii"),
    ],
)
def test_nfkc_and_casefold_expansions_map_back(original, normalized):
    text = f"x {original} y"
    nt = normalize_text(text)
    assert nt.text == f"x {normalized} y"
    assert original_of(nt, normalized) == original


def test_each_expanded_char_maps_to_its_source_char():
    nt = normalize_text("ﬁ")
    assert nt.text == "fi"
    assert nt.orig_starts.tolist() == [0, 0] and nt.orig_ends.tolist() == [1, 1]


def test_dotted_capital_i():
    nt = normalize_text("İstanbul")
    assert nt.text == "i̇stanbul"  # casefold: i + combining dot above
    assert nt.to_original(0, 2) == (0, 1)
    assert nt.to_original(2, 3) == (1, 2)


def test_combining_marks_compose_and_map_to_both_chars():
    text = "cafe\u0301 now"
    nt = normalize_text(text)
    assert nt.text == "café now"
    assert original_of(nt, "é") == "e\u0301"
    assert original_of(nt, "café") == "cafe\u0301"


def test_precomposed_and_decomposed_normalize_alike():
    assert normalize_text("Cafe\u0301").text == normalize_text("Café").text == "café"


def test_hangul_jamo_compose():
    nt = normalize_text("\u1100\u1161\u11a8!")
    assert nt.text == "각!"
    assert nt.to_original(0, 1) == (0, 3)


def test_halfwidth_voiced_mark_composes():
    nt = normalize_text("ｶﾞ")
    assert nt.text == "ガ"
    assert nt.to_original(0, 1) == (0, 2)


def test_switches_off():
    assert normalize_text("① ＡＢ", NormalizerConfig(nfkc=False)).text == "① ａｂ"
    assert normalize_text("ﬁ ＡＢ", NormalizerConfig(nfkc=False)).text == "fi ａｂ"  # casefold(ﬁ)
    assert normalize_text("ﬁ ＡＢ", NormalizerConfig(casefold=False)).text == "fi AB"
    assert normalize_text("Ünïcode", NormalizerConfig(nfkc=False, casefold=False)).text == "Ünïcode"


def test_attaching_starters_table_matches_unicode_database():
    # Re-derive the table from the running Python's Unicode data (see normalize.py).
    derived = set()
    for code_point in range(0x110000):
        char = chr(code_point)
        decomposition = unicodedata.decomposition(char)
        if decomposition and not decomposition.startswith("<"):
            parts = decomposition.split()
            if len(parts) == 2:
                second = chr(int(parts[1], 16))
                if unicodedata.combining(second) == 0:
                    derived.add(second)
        if unicodedata.combining(char) == 0:
            nfkc = unicodedata.normalize("NFKC", char)
            if nfkc and unicodedata.combining(nfkc[0]) != 0:
                derived.add(char)
    hangul = {chr(c) for c in range(0x1161, 0x1176)} | {chr(c) for c in range(0x11A8, 0x11C3)}
    assert derived | hangul == set(_ATTACHING_STARTERS)


# ---------------------------------------------------------------------------------------
# numbers, percent, currency


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1,200", "1200"),
        ("12,345,678.5", "12345678.5"),
        ("5.2", "5.2"),
        ("1,2", "1,2"),
        ("1,2345", "1,2345"),
        ("a, 200", "a, 200"),
        ("٣٤٥", "345"),
        ("１，２００", "1200"),
    ],
)
def test_number_folding(text, expected):
    assert normalize_text(text).text == expected


def test_number_folding_maps_across_removed_commas():
    nt = normalize_text("cost 1,200,000 now")
    assert nt.text == "cost 1200000 now"
    assert original_of(nt, "1200000") == "1,200,000"


def test_number_folding_off():
    assert normalize_text("1,200 ٣", NormalizerConfig(normalize_numbers=False)).text == "1,200 ٣"


def test_percent_folding_pads_and_maps_to_symbol():
    nt = normalize_text("15% growth")
    assert nt.text == "15 percent growth"
    assert original_of(nt, "percent") == "%"
    assert normalize_text("15 %").text == "15 percent"
    assert normalize_text("15％").text == "15 percent"  # full-width, via NFKC
    assert normalize_text("15%", NormalizerConfig(normalize_percent=False)).text == "15%"


@pytest.mark.parametrize(
    "symbol, word", [("$", "dollar"), ("€", "euro"), ("£", "pound"), ("¥", "yen"), ("₹", "rupee")]
)
def test_currency_folding(symbol, word):
    nt = normalize_text(f"cost {symbol}5")
    assert nt.text == f"cost {word} 5"
    assert original_of(nt, word) == symbol


def test_currency_folding_off():
    assert normalize_text("$5 €3", NormalizerConfig(normalize_currency=False)).text == "$5 €3"


def test_symbol_next_to_joiner_stays_separate():
    assert normalize_text("15%-owned").text == "15 percent -owned"


# ---------------------------------------------------------------------------------------
# properties over arbitrary Unicode


def check_maps(nt: NormalizedText) -> None:
    n_orig = len(nt.original)
    starts, ends = nt.orig_starts, nt.orig_ends
    assert starts.shape == ends.shape == (len(nt.text),)
    if len(nt.text):
        assert (starts >= 0).all() and (ends <= n_orig).all()
        assert (starts < ends).all()
        assert (np.diff(starts) >= 0).all() and (np.diff(ends) >= 0).all()


def groups(nt: NormalizedText):
    """Maximal runs of normalized chars mapped to one original span."""
    result = []
    i = 0
    while i < len(nt.text):
        j = i
        span = (int(nt.orig_starts[i]), int(nt.orig_ends[i]))
        while j < len(nt.text) and (int(nt.orig_starts[j]), int(nt.orig_ends[j])) == span:
            j += 1
        result.append((span, nt.text[i:j]))
        i = j
    return result


@given(st.text())
def test_maps_monotone_and_in_bounds(text):
    for config in (NormalizerConfig(), ONLY_UNICODE, NormalizerConfig(nfkc=False, casefold=False)):
        check_maps(normalize_text(text, config))


@given(st.text())
def test_maps_are_exact(text):
    """Every normalized piece is exactly the normalization of the original span it maps to,
    the pieces cover the original in order, and skipped original chars normalize to ''."""
    nt = normalize_text(text, ONLY_UNICODE)
    position = 0
    for (start, end), piece in groups(nt):
        assert start >= position  # spans of different pieces never overlap
        assert _fold_string(text[position:start], True, True, False) == ""
        assert _fold_string(text[start:end], True, True, False) == piece
        position = end
    assert _fold_string(text[position:], True, True, False) == ""


def fold_reference(original: str) -> str:
    """What a piece of original text normalizes to, ignoring the padding spaces."""
    folded = _fold_string(original, True, True, True)
    percent = [(sign, "percent") for sign in PERCENT_SIGNS]  # "%" and the Arabic "٪"
    for symbol, word in [*percent, *CURRENCY_WORDS.items()]:
        folded = folded.replace(symbol, word)
    return "".join(folded.split())


@given(st.text() | st.text(alphabet=st.sampled_from("%٪$€1,2 \u0301\u0327ﬁ"), max_size=12))
@example("٪")
@example("١٥٪ and 15%")
def test_full_folding_maps_are_exact(text):
    nt = normalize_text(text)
    check_maps(nt)
    for (start, end), piece in groups(nt):
        assert fold_reference(text[start:end]) == "".join(piece.split())


@given(st.text(), st.text())
def test_to_original_covers_and_round_trips(text, extra):
    nt = normalize_text(text)
    n = len(nt.text)
    for start in range(0, n, max(1, n // 7)):
        for end in range(start, n + 1, max(1, n // 5)):
            orig_start, orig_end = nt.to_original(start, end)
            assert 0 <= orig_start <= orig_end <= len(text)
            if end > start:
                assert orig_start == nt.orig_starts[start] and orig_end == nt.orig_ends[end - 1]


@given(st.text())
def test_normalizing_in_context_matches_alone(text):
    """A passage normalizes the same inside a larger text (so exact copies are found)."""
    assume(not text or not _attaches(text[0]))
    alone = normalize_text(text).text
    in_context = normalize_text("Intro " + text + " end").text
    assert in_context == "intro " + alone + " end"


SCRIPTS_TEXT = st.text(
    alphabet=st.sampled_from("aZ9 ÉéßİΣσςЖжأ٣क्षि東ガｶﾞ\u0301\u0345ǰＡ①๕") | st.characters(),
    max_size=30,
)


@given(SCRIPTS_TEXT, st.booleans(), st.booleans(), st.booleans())
def test_one_to_one_shortcut_matches_unit_by_unit(text, nfkc, casefold, numbers):
    config = NormalizerConfig(nfkc=nfkc, casefold=casefold, normalize_numbers=numbers)
    folded = _fold_one_to_one(text, config)
    assume(folded is not None)
    by_units, starts, ends = _fold_units(text, config)
    assert by_units == folded
    assert starts.tolist() == list(range(len(text))) and ends.tolist() == list(
        range(1, len(text) + 1)
    )


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_path_equals_unicode_path(text):
    # an appended non-ASCII char forces the general path for the same characters
    assert normalize_text(text + " é").text == normalize_text(text).text + " é"


def test_lone_surrogates_and_controls_do_not_crash():
    text = "a\ud800b\x00c\x1f\udfff\u0301"
    nt = normalize_text(text)
    check_maps(nt)
    assert "\ud800" in nt.text


def test_long_runs_of_combining_marks_are_cut_into_units():
    # Python's NFKC is quadratic on long mark runs; citekit cuts them into units of 31
    text = "x a" + "\u0301\u0327" * 50_000 + " y"
    nt = normalize_text(text)
    check_maps(nt)
    assert nt.text.startswith("x ") and nt.text.endswith(" y")
    assert len(nt.text) == len(text) - 1  # 'a' + acute composed in the first unit only
    for (start, end), piece in groups(nt):
        assert end - start <= MAX_UNIT_LENGTH
        assert _fold_string(text[start:end], True, True, True) == piece


def test_huge_text():
    text = ("Ｔｈｅ ﬁnal café costs $1,200 (15%). " * 20000) + "end"
    nt = normalize_text(text)
    check_maps(nt)
    assert nt.text.endswith("end")
    assert nt.text.count("dollar 1200") == 20000
