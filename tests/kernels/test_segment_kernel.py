"""The numba segmentation kernel against the regex reference (tests/naive.py), its
character table against Python's own ``str`` methods, and the array API."""

from __future__ import annotations

import re
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_segment

from citekit.kernels import _segment as kernel
from citekit._reading import segment_spans
from citekit.segment import DEFAULT_ABBREVIATIONS, SentenceSegmenter, segment_sentences

# ---------------------------------------------------------------------------------------
# text generators: arbitrary Unicode with the characters the rules look at mixed in

RULE_PIECES = [
    ".", ". ", "?", "!", "…", "...", "?!", "。", "！", "？", "।", "॥", "؟", "۔",
    '"', "'", "”", "’", "»", ")", "]", "}", "」", "』", "）", "›",
    "“", "‘", "«", "(", "[", "{",
    " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "\r\n\r\n", " \n \n", "\v", "\f", "\x1c",
    "\x85", "\u2028", "\u2029", "\xa0", "\u3000", "\u2009",
    "- ", "* ", "• ", "– ", "1. ", "12) ", "123. ", "1234. ", "(a) ", "b. ", "B) ", "A. ",
    "iv. ", "xii) ", "XIV. ", "IX) ", "ix. ", "xxxx. ", "vi. ", "(3) ", "٣. ", "(iv) ",
    "iiii. ", "viii) ", "VIIII. ", "xxxix. ", "ivx. ", "vv) ",
    "Dr", "dr", "Mr", "e.g", "i.e", "U.S", "Ph.D", "etc", "Inc", "ltd", "Co", "approx",
    "J", "K", "x", "A", "word", "Word", "five", "Next", "5.2", "1,200", "3", "€", "$",
    "é", "É", "straße", "İ", "İnc", "Σ", "ΟΔΟΣ", "σ", "ς", "Ά", "\u0301", "ʰ", "·",
    "利益", "本当", "नमस्ते", "هل", "😀", "𝐀", "\ud800", "\x00", "_", "²", "½", "五",
    # other scripts' terminators (in and above the BMP) and letters; Georgian's are lower
    # case yet start sentences
    "։", "။", "၊", "።", "፧", "។", "៕", "᠃", "‼", "⁉", "．", "﹒", "․", "\U00011047",
    "\U00016e98", "\U0001da88", "ა", "Ა", "ქართ", "ቢ", "ក", "\U00011005",
    "\ue000", "\ue001",  # (the naive reference reads terminators above the BMP as these)
    # reference markers and their near misses
    "[1]", "[^2]", "[2, 3]", "[4-6]", "[7\u20138]", "[1;2]", "[ 1]", "[1 ]", "[12345]",
    "[1,", "[^]", "[a]", "^", "1", ",", ";", "-", "\u2013", "[1]\n[2]", "[1,\t2]",
]

rule_text = st.lists(
    st.sampled_from(RULE_PIECES) | st.text(max_size=3), max_size=40
).map("".join)
any_text = st.text() | rule_text

ABBREVIATION_SETS = [
    None,  # the defaults
    ["xyz", "Zork.", "ΟΔΟΣ", "σοφ", "İnc", "straße", "é.g", "ʰa"],
    ["dr", "ς", "aς", "ασ"],
    [],
]


def spans_equal_reference(
    text, abbreviations=None, extra=(), split_on_newlines=True, rules="citekit"
):
    segmenter = SentenceSegmenter(
        abbreviations, extra_abbreviations=extra, split_on_newlines=split_on_newlines,
        rules=rules,
    )
    expected = naive_segment(text, abbreviations, extra, split_on_newlines, rules)
    assert segmenter.segment(text) == expected, text
    array = segmenter.segment_array(text)
    assert array.dtype == np.int64 and array.shape == (len(expected), 2)
    assert [tuple(row) for row in array.tolist()] == expected


# ---------------------------------------------------------------------------------------
# parity with the reference


@given(any_text, st.sampled_from(range(len(ABBREVIATION_SETS))), st.booleans())
def test_kernel_matches_reference(text, which, split_on_newlines):
    spans_equal_reference(text, ABBREVIATION_SETS[which], (), split_on_newlines)


@given(any_text, st.sampled_from(range(len(ABBREVIATION_SETS))), st.booleans())
def test_kernel_matches_reference_with_cite_right_rules(text, which, split_on_newlines):
    spans_equal_reference(text, ABBREVIATION_SETS[which], (), split_on_newlines, "cite-right")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a; b", ["a;", "b"]),
        ("a;b;", ["a;", "b;"]),
        (";", [";"]),
        ("x.[1;2] y; z", ["x.[1;2]", "y;", "z"]),  # (the marker goes with the run)
        ("x.[1;2]y; z", ["x.[1;2]y;", "z"]),
        ("approx. five. then six", ["approx. five.", "then six"]),
        ('"Really?" she asked; yes.', ['"Really?"', "she asked;", "yes."]),
        ("etc. and so", ["etc. and so"]),
        ("𑁇; a", ["𑁇", ";", "a"]),
    ],
)
def test_cite_right_rules_known_cases(text, expected):
    assert [text[a:b] for a, b in naive_segment(text, rules="cite-right")] == expected
    spans_equal_reference(text, rules="cite-right")
    spans_equal_reference(text, split_on_newlines=False, rules="cite-right")


@given(
    rule_text,
    st.lists(st.sampled_from(["Word", "five", "Σοφ", "xyz", "a.b"]), max_size=3),
    st.booleans(),
)
def test_kernel_matches_reference_with_extra_abbreviations(text, extra, split_on_newlines):
    spans_equal_reference(text, None, extra, split_on_newlines)


# words whose lower case tests the kernel's lowering: sigma in every context, İ (two code
# points), case-ignorable marks and apostrophes, uncased letters and digits
greek_word = st.text(
    alphabet=st.sampled_from("ΣσςΟΔΑάΆaAİi.\u0301\u0345'’ʰ·1²五_"), min_size=1, max_size=8
)


@given(greek_word, greek_word, st.sampled_from([" ", "\n", " x", " X", "", "” Y"]))
def test_lowered_abbreviation_keys_match_python(word, other, after):
    # the word's own lower case is an abbreviation: the kernel must find it exactly when
    # str.lower gives that key (final sigma, İ), and miss a near one
    text = f"Go {word}.{after} {other}. End"
    for keys in ([word], [other], [word.lower() + "x"], [word.upper()]):
        if all(key.strip().rstrip(".") for key in keys):
            spans_equal_reference(text, keys)


@pytest.mark.parametrize(
    "text",
    [
        # the docstring examples of citekit.segment
        "Dr. Smith paid $5.2 million, i.e. a lot. Was it? Yes!",
        "Costs fell 5.2% (approx. €3 million). Was it enough? 利益は増えた。",
        "One. Two. Three.",
        "Intro:\n- first item\n2. second one\n\nHe said “Stop.” Then left.",
        "Revenue grew 5.2% in the U.S. last year. 利益は増えた。本当？ Yes.",
        "Summary:\n- first point\n* second point\n• third\n1. one.\n2) two\n(a) three\n"
        "iv. four\nXII. five\nB) six\nA. B. Smith wrote\nmix. seven",
        "A wrapped\nsentence here. Next one.\n\nNew para",
        "a\r\nb\r\n\r\nc\n \n\td \r \r e\u2029\u2029f",
        "He works at Apple Inc. The firm grew. Apples, pears, etc. are fruit. Co. 1 Ltd.",
        "Bad \ud800 char. Null\x00 here. \udfff",
        "Emoji 😀. Next 😀 sentence! 𝐀. 𝐁 ends",
        "ΟΔΟΣ. Σ. ΣΣ. aΣ. Σa. İnc. İ. Inc.",
        " " * 70 + "x" * 70 + ". Next. " + "(" * 70 + "Dr. Who",
        "नमस्ते। आप कैसे हैं? هل أنت بخير؟ نعم۔ ok",
        "I. Roman\nII) two\nxxxix. forty\nxxxx. no\n  (12) twelve\n1234. no\n٣. three",
        "iii. three\niiii. no\nviii) eight\nviiii) no\nXXXVIII. ok\nvx. no\n\tIV) tab",
        # the 64 characters before a period: a longer word is cut, changing its shape
        "See 1" + "a" * 30 + "." + "a" * 32 + ". Next. x 1" + "a" * 31 + "." + "a" * 32 + ". End",
        "See (" + "a" * 30 + "." + "a" * 33 + ". Next. ((" + "a" * 63 + ". A.",
        "",
        "\n\n\n",
        ".",
        "...",
        "a.",
        # a reference marker right after the terminator belongs to the sentence
        "It grew.[1] Then it fell.[2, 3] More[4]. End.[5]",
        "Fig.[1] shows x. Done.[ 1] Next. Val.[12345] Next. 東京。[1]次 Q?[^2] A![3-4]\" B",
        "Up 5%.[1][2] Down.[1]x Left.[1]\nRight.[2\n] Mid.[1,\t 2 ] End.[1;] Last.[",
    ],
)
@pytest.mark.parametrize("split_on_newlines", [True, False])
def test_known_cases_match_reference(text, split_on_newlines):
    for abbreviations in ABBREVIATION_SETS:
        spans_equal_reference(text, abbreviations, (), split_on_newlines)


def test_benchmark_workload_documents_match_reference(workload):
    documents = workload.make_documents(200, seed=2)
    answers = [workload.make_answer(documents, seed=seed)["answer"] for seed in range(20)]
    for text in [document["text"] for document in documents] + answers:
        spans_equal_reference(text)
        spans_equal_reference(text, split_on_newlines=False)


@pytest.mark.parametrize(
    "text",
    [
        "a " * 50_000,
        "." * 100_000,
        " " * 3_000 + "x.",  # (the reference is quadratic here without line breaks)
        "\n" * 100_000,
        "\r\n \t" * 25_000,
        " \n" * 50_000,
        "Dr. " * 25_000,
        "x" * 100_000 + ". Y",
        "(" * 100_000 + "a. B",
        "ΣΣΣ. " * 20_000,
        "😀. " * 30_000,
        "- a\n" * 25_000,
    ],
    ids=lambda text: repr(text[:8]),
)
@pytest.mark.parametrize("split_on_newlines", [True, False])
def test_pathological_repetition_matches_reference(text, split_on_newlines):
    spans_equal_reference(text, split_on_newlines=split_on_newlines)


@pytest.mark.parametrize("split_on_newlines", [True, False])
def test_long_blank_runs_are_linear(split_on_newlines):
    # the regex reference takes about a minute on 100,000 spaces before a word in
    # blank-line mode (each start position rescans the run); the kernel skips the run
    text = " " * 1_000_000 + "Word. " + "\t " * 500_000 + "\n\n y"
    spans = SentenceSegmenter(split_on_newlines=split_on_newlines).segment(text)
    assert [text[start:end] for start, end in spans] == ["Word.", "y"]


def test_huge_text_matches_reference():
    text = "Dr. Smith grew revenue 5.2% in the U.S. last year. 利益は増えた。\n- Next €3.\n" * 3000
    spans_equal_reference(text)


# ---------------------------------------------------------------------------------------
# the character table


def test_character_table_matches_python_for_every_code_point():
    everything = np.arange(0x110000, dtype=np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    space = {match.start() for match in re.finditer(r"\s", everything)}
    decimal = {match.start() for match in re.finditer(r"\d", everything)}
    letter = {match.start() for match in re.finditer(r"[^\W\d_]", everything)}
    for code in range(0x110000):
        info = kernel.char_info(code)
        char = everything[code]
        assert bool(info & kernel._SPACE) == (code in space) == char.isspace()
        assert bool(info & kernel._DECIMAL) == (code in decimal)
        assert bool(info & kernel._WORD_LETTER) == (code in letter)
        assert bool(info & kernel._LOWER) == (char.islower() and not 0x10D0 <= code < 0x1100)
        assert bool(info & kernel._UPPER) == char.isupper()
        assert bool(info & kernel._ALPHA) == char.isalpha()
        count = (info >> kernel._LOWER_COUNT_SHIFT) & 3
        if code == kernel._CAPITAL_SIGMA:
            assert count == kernel._SIGMA_LOWER_COUNT
            continue
        lowered = [ord(part) for part in char.lower()]
        assert count == len(lowered)  # char_info raised if more than 2
        decoded = [(info >> kernel._LOWER_FIRST_SHIFT) & kernel._CODE_MASK]
        if count == 2:
            decoded.append((info >> kernel._LOWER_SECOND_SHIFT) & kernel._CODE_MASK)
        assert decoded == lowered


def test_rule_characters_are_marked_in_and_above_the_bmp():
    table = kernel._table()
    spaced = ".?!…\u2024‼‽⁇⁈⁉⸮⸼\u2e53\u2e54﹒．"
    unspaced = kernel._UNSPACED_TERMINATORS
    assert set("。！？।॥؟۔։။።፧។៕᠃\U00011047\U0001da88") <= set(unspaced)
    astral_codes, astral_info = table.astral
    terminators = [(spaced, kernel._SPACED_TERMINATOR), (unspaced, kernel._UNSPACED_TERMINATOR)]
    for chars, flag in terminators:
        marked = {int(code) for code, info in zip(astral_codes, astral_info) if info & flag}
        assert marked == {ord(char) for char in chars if ord(char) >= kernel._BMP}
    for chars, flag in [
        (spaced, kernel._SPACED_TERMINATOR),
        (unspaced, kernel._UNSPACED_TERMINATOR),
        ("”’»)]}」』】〉》〕）］｝›\"'", kernel._CLOSER),
        ("“‘«([{\"'", kernel._OPENER),
        ("-*+•‣◦▪▫–—·", kernel._BULLET),
        ("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029", kernel._LINE_BREAK),
        (";", kernel._CLAUSE_END),
    ]:
        marked = {code for code in range(kernel._BMP) if table.bmp[code] & flag}
        assert marked == {ord(char) for char in chars if ord(char) < kernel._BMP}


def test_unknown_characters_are_learned_and_results_do_not_depend_on_order():
    fresh = kernel._CharTable()
    text = "Ünïcödé ẞ. Ωmega. 😀 𝐀. Ⅻ. next"
    hashes, bounds, codes = kernel.abbreviation_tables(["ωmega"], [])
    points = kernel.code_points(text)
    original = kernel._TABLE
    try:
        kernel._TABLE = fresh
        first = kernel.segment_code_points(points, hashes, bounds, codes, True)
        assert not fresh.bmp[ord("Ω")] & kernel._UNKNOWN
        assert ord("😀") in fresh.astral[0].tolist() or ord("𝐀") in fresh.astral[0].tolist()
        again = kernel.segment_code_points(points, hashes, bounds, codes, True)
    finally:
        kernel._TABLE = original
    expected = naive_segment(text, ["ωmega"])
    assert [tuple(row) for row in first.tolist()] == expected
    assert again.tolist() == first.tolist()


def test_learning_a_text_learns_all_its_characters():
    fresh = kernel._CharTable()
    text = "Ωmega ψ 𝐀 😀 €. ok \ud800"
    fresh.learn(kernel.code_points(text))
    for char in set(text):
        code = ord(char)
        if code < kernel._BMP:
            assert not fresh.bmp[code] & kernel._UNKNOWN
            assert fresh.bmp[code] == kernel.char_info(code)
        else:
            index = fresh.astral[0].tolist().index(code)
            assert fresh.astral[1][index] == kernel.char_info(code)
    before = [array.copy() for array in fresh.astral]
    fresh.learn(kernel.code_points("😀 again"))  # nothing new: unchanged
    assert all(np.array_equal(a, b) for a, b in zip(before, fresh.astral))


def test_threads_learning_at_once_agree():
    texts = [
        f"Wort{chr(0x4E00 + i)}{chr(0x1F600 + i)}. Ende {chr(0x0400 + i)}. x" for i in range(64)
    ]
    expected = [naive_segment(text) for text in texts]
    results: dict[int, list] = {}

    def work(index: int) -> None:
        segmenter = SentenceSegmenter()
        results[index] = [segmenter.segment(text) for text in texts]

    original = kernel._TABLE
    kernel._TABLE = kernel._CharTable()  # every thread meets the same unknown characters
    try:
        threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        kernel._TABLE = original
    assert len(results) == 4
    assert all(result == expected for result in results.values())


def test_abbreviation_hash_collisions_are_confirmed():
    # every key given the hash of the word looked up: the kernel must compare code points
    hashes, bounds, codes = kernel.abbreviation_tables(["dr", "mr", "prof"], ["inc"])
    for probe, text in [("dr", "Hi Dr. Who went."), ("xr", "Hi Xr. Who went.")]:
        colliding = np.full_like(hashes, kernel.key_hash(map(ord, probe)))
        spans = kernel.segment_code_points(
            kernel.code_points(text), colliding, bounds, codes, True
        )
        expected = naive_segment(text, ["dr", "mr", "prof"])
        assert [tuple(row) for row in spans.tolist()] == expected
        assert len(expected) == (1 if probe == "dr" else 2)


def test_key_hash_is_fnv1a():
    assert kernel.key_hash([]) == 0xCBF29CE484222325
    assert kernel.key_hash(b"a") == 0xAF63DC4C8601EC8C  # FNV-1a 64 of "a"


@settings(max_examples=150)
@given(
    st.lists(any_text, max_size=5),
    st.sampled_from(range(len(ABBREVIATION_SETS))),
    st.booleans(),
)
def test_many_texts_in_one_call_match_reference(texts, which, split_on_newlines):
    for rules in ("citekit", "cite-right"):
        _many_match_reference(texts, which, split_on_newlines, rules)


def _many_match_reference(texts, which, split_on_newlines, rules):
    # one kernel call over the joined texts: each text's spans, relative to it, as alone
    abbreviations = ABBREVIATION_SETS[which]
    segmenter = SentenceSegmenter(
        abbreviations, split_on_newlines=split_on_newlines, rules=rules
    )
    spans, offsets = segmenter.segment_many(texts)
    assert spans.dtype == offsets.dtype == np.int64 and spans.shape == (offsets[-1], 2)
    expected = [
        naive_segment(text, abbreviations, (), split_on_newlines, rules) for text in texts
    ]
    assert np.diff(offsets).tolist() == [len(e) for e in expected]
    assert [tuple(row) for row in spans.tolist()] == [span for e in expected for span in e]


def test_many_texts_learn_unknown_characters_of_any_text():
    kernel._TABLE = None  # a fresh table: the astral and CJK characters are unknown
    texts = ["Plain. Text.", "", "ok 😀. 𝐀 b. 利益。ですね", "Ā Ā. Next."]
    spans, offsets = SentenceSegmenter().segment_many(texts)
    expected = [segment_sentences(text) for text in texts]
    assert np.diff(offsets).tolist() == [len(e) for e in expected]
    assert [tuple(row) for row in spans.tolist()] == [span for e in expected for span in e]


def test_segment_many_takes_any_sequence_of_str_and_joined_texts():
    from citekit._joined_texts import JoinedTexts

    texts = ("One. Two.", "", "Three.")
    expected = SentenceSegmenter().segment_many(list(texts))
    for given_texts in (texts, iter(texts), JoinedTexts(texts)):
        got = SentenceSegmenter().segment_many(given_texts)
        assert [a.tolist() for a in got] == [a.tolist() for a in expected]
    empty = SentenceSegmenter().segment_many([])
    assert empty[0].shape == (0, 2) and empty[1].tolist() == [0]
    for bad, message in (("One. Two.", "texts must be a sequence of str, got str"),
                         (["a", 5], r"texts\[1\] must be a str, got int"), (7, "texts")):
        with pytest.raises(TypeError, match=message):
            SentenceSegmenter().segment_many(bad)


def test_warmup_runs():
    kernel.warmup()


def test_code_points():
    ascii_codes = kernel.code_points("Hi.")
    assert ascii_codes.dtype == np.uint8 and ascii_codes.tolist() == [72, 105, 46]
    bmp = kernel.code_points("€\ud800.")  # in the BMP (lone surrogates too): 16 bits
    assert bmp.dtype == np.uint16 and bmp.tolist() == [0x20AC, 0xD800, 46]
    wide = kernel.code_points("€😀\ud800")
    assert wide.dtype == np.uint32 and wide.tolist() == [0x20AC, 0x1F600, 0xD800]
    assert not (ascii_codes.flags.writeable or bmp.flags.writeable or wide.flags.writeable)
    # 8-, 16- and 32-bit read-only inputs only: three compiled signatures of the kernel
    assert len(kernel._segment.signatures) <= 3


# ---------------------------------------------------------------------------------------
# the array API


def test_segment_array_basic():
    text = "One. Two? Three"
    spans = SentenceSegmenter().segment_array(text)
    assert spans.dtype == np.int64 and spans.shape == (3, 2)
    assert spans.flags.c_contiguous
    assert spans.tolist() == [[0, 4], [5, 9], [10, 15]]


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\u3000\t"])
def test_segment_array_empty(text):
    spans = SentenceSegmenter().segment_array(text)
    assert spans.shape == (0, 2) and spans.dtype == np.int64


@pytest.mark.parametrize("bad", [None, b"text", 3, ["a"]])
def test_segment_array_needs_str(bad):
    with pytest.raises(TypeError, match="text"):
        SentenceSegmenter().segment_array(bad)


def test_segment_returns_python_int_tuples():
    spans = SentenceSegmenter().segment("A b. C d.")
    assert spans == [(0, 4), (5, 9)]
    assert all(type(value) is int for span in spans for value in span)


@given(st.text())
@settings(max_examples=100)
def test_segment_array_spans_are_valid(text):
    spans = SentenceSegmenter().segment_array(text)
    previous_end = 0
    for start, end in spans.tolist():
        assert previous_end <= start < end <= len(text)
        assert text[start:end] == text[start:end].strip()
        previous_end = end


def test_replaced_abbreviations_are_used():
    segmenter = SentenceSegmenter()
    assert segmenter.segment("Call Zork. Now.") == [(0, 10), (11, 15)]
    segmenter.abbreviations = frozenset({"zork"})
    assert segmenter.segment("Call Zork. Now.") == [(0, 15)]


def test_segmenter_pickles():
    import pickle

    segmenter = SentenceSegmenter(extra_abbreviations=["zork"])
    segmenter.segment("warm the cache. Zork. X.")
    copy = pickle.loads(pickle.dumps(segmenter))
    assert copy.segment("Call Zork. Now.") == segmenter.segment("Call Zork. Now.") == [(0, 15)]


def test_default_abbreviations_unchanged():
    assert "dr" in DEFAULT_ABBREVIATIONS and "etc" not in DEFAULT_ABBREVIATIONS


# ---------------------------------------------------------------------------------------
# the pipeline stage helper


def test_segment_spans_uses_the_array_api():
    text = "One. Two. Three."
    segmenter = SentenceSegmenter()
    spans = segment_spans(segmenter, text)
    assert spans.tolist() == segmenter.segment_array(text).tolist() == [[0, 4], [5, 9], [10, 16]]


def test_segment_spans_respects_an_overridden_segment():
    class Whole(SentenceSegmenter):
        def segment(self, text):
            return [(0, len(text))]

    assert segment_spans(Whole(), "One. Two.").tolist() == [[0, 9]]


def test_segment_spans_validates_an_overridden_segment_array():
    class Broken(SentenceSegmenter):
        def segment_array(self, text):
            return np.array([[0, len(text) + 5]], dtype=np.int64)

    with pytest.raises(ValueError, match="segmenter"):
        segment_spans(Broken(), "One. Two.")


def test_segment_spans_custom_segmenter_unchanged():
    class Records:
        def segment(self, text):
            return [type("R", (), {"char_start": 0, "char_end": 3})()]

    assert segment_spans(Records(), "abc def").tolist() == [[0, 3]]


def test_segment_sentences_uses_kernel_results():
    text = "Dr. Who arrived. He left."
    assert segment_sentences(text) == naive_segment(text)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_reference_markers_after_a_terminator_stay_with_their_sentence():
    text = "Revenue grew.[1] Costs fell 3%.[2, 3] Profit rose.[^4]\" It ended.[5-6]"
    assert [text[a:b] for a, b in segment_sentences(text)] == [
        "Revenue grew.[1]",
        "Costs fell 3%.[2, 3]",
        'Profit rose.[^4]"',
        "It ended.[5-6]",
    ]
    # not a marker: letters, a space after the bracket, a line break inside
    for text in ["It grew.[a] Then", "It grew.[ 1] Then", "It grew.[1\n] Then"]:
        assert len(segment_sentences(text)) == (2 if "\n" in text else 1)
