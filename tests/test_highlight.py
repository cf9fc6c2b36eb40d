"""citekit.highlight: API, options, bad input, offsets over arbitrary Unicode, normalization,
many sources at once. Parity with citeglow is in test_highlight_parity.py, with the
plain-Python reference in kernels/test_highlight_kernels.py."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from citekit.highlight import (
    DEFAULT_SPAN_EXPANSION_REGEX,
    DEFAULT_STOP_WORDS,
    HighlightOptions,
    SourceHighlights,
    find_answer_highlights,
    highlight_sources,
)
from citekit.results import SourceChunk, SourceDocument

GOLDEN = Path(__file__).parent / "data" / "highlight_golden.json.gz"
SOURCE = (
    "Shipping is calculated at checkout.\n"
    "Unused items can be returned within 30 days of delivery for a refund.\n"
    "Opened software licenses are not refundable."
)
ANSWER = "The refund window is 30 days for unused items."
REFUND_LINE = (36, 105)


def _texts(text, spans):
    return [text[start:end] for start, end in spans]


# ----------------------------------------------------------------------------- options


def test_options_have_citeglow_fields_and_defaults():
    citeglow = json.loads(gzip.decompress(GOLDEN.read_bytes()))["citeglow_option_defaults"]
    ours = {f.name: f.default for f in dataclasses.fields(HighlightOptions)}
    assert ours.pop("normalize") is False  # the one citekit extension
    assert sorted(ours.pop("stop_words")) == citeglow.pop("stop_words")
    assert ours == citeglow
    assert sorted(DEFAULT_STOP_WORDS) == sorted(HighlightOptions().stop_words)
    assert {"the", "and", "là", "và", "của", "nên"} <= DEFAULT_STOP_WORDS
    assert DEFAULT_SPAN_EXPANSION_REGEX == r"[^\r\n]+"


def test_options_are_frozen_hashable_and_lowercase_stop_words():
    options = HighlightOptions(stop_words=["The", "OF", "the"])
    assert options.stop_words == frozenset({"the", "of"})
    assert hash(options) == hash(HighlightOptions(stop_words={"of", "the"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.min_span_words = 3  # type: ignore[misc]


def test_keyword_overrides_win_over_options():
    strict = HighlightOptions(min_span_words=50)
    assert find_answer_highlights(ANSWER, SOURCE, options=strict) == []
    assert find_answer_highlights(ANSWER, SOURCE, options=strict, min_span_words=2) == [
        REFUND_LINE
    ]


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("neighborhood_tokens", -1, ValueError, "neighborhood_tokens must be >= 0"),
        ("min_span_words", 0, ValueError, "min_span_words must be >= 1"),
        ("min_vocab_token_chars", 0, ValueError, "min_vocab_token_chars must be >= 1"),
        ("lcs_merge_gap_tokens", -2, ValueError, "lcs_merge_gap_tokens must be >= 0"),
        ("lcs_min_run_tokens", 0, ValueError, "lcs_min_run_tokens must be >= 1"),
        ("lcs_min_single_token_chars", 0, ValueError, "lcs_min_single_token_chars must be >= 1"),
        ("max_highlight_ratio", 0.0, ValueError, "max_highlight_ratio must be > 0"),
        ("max_highlight_ratio", -1, ValueError, "max_highlight_ratio must be > 0"),
        ("max_highlight_ratio", float("nan"), ValueError, "max_highlight_ratio must be finite"),
        ("max_highlight_ratio", "0.5", TypeError, "max_highlight_ratio must be a number"),
        ("neighborhood_tokens", 2.5, TypeError, "neighborhood_tokens must be an int"),
        ("min_span_words", True, TypeError, "min_span_words must be an int"),
        ("tokenizer", "word", ValueError, "tokenizer must be 'unicode_word' or 'char'"),
        ("tokenizer", None, ValueError, "tokenizer must be"),
        ("expand_spans", 1, TypeError, "expand_spans must be a bool"),
        ("span_expansion_regex", "(", ValueError, "span_expansion_regex is not a valid regex"),
        ("span_expansion_regex", "", ValueError, "span_expansion_regex must not be empty"),
        ("span_expansion_regex", 5, TypeError, "span_expansion_regex must be a str"),
        ("span_expansion_regex", re.compile(b"x"), TypeError, "span_expansion_regex must be a str"),
        ("stop_words", "the", TypeError, "stop_words must be an iterable of str"),
        ("stop_words", None, TypeError, "stop_words must be an iterable of str"),
        ("stop_words", ["the", 1], TypeError, "stop_words must hold str items"),
        ("normalize", "yes", TypeError, "normalize must be a bool"),
    ],
)
def test_bad_options_name_the_field(field, value, error, message):
    with pytest.raises(error, match=re.escape(message)):
        HighlightOptions(**{field: value})


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"neighborhood_tokens": -1}, ValueError, "neighborhood_tokens"),
        ({"min_span_words": 0}, ValueError, "min_span_words"),
        ({"min_vocab_token_chars": -3}, ValueError, "min_vocab_token_chars"),
        ({"stop_words": "the"}, TypeError, "stop_words"),
        ({"tokenizer": "whitespace"}, ValueError, "tokenizer"),
        ({"expand_spans": "no"}, TypeError, "expand_spans"),
        ({"span_expansion_regex": "[a-"}, ValueError, "span_expansion_regex"),
        ({"keep_longest_only": None}, TypeError, "keep_longest_only"),
        ({"options": {"min_span_words": 1}}, TypeError, "options must be a HighlightOptions"),
    ],
)
def test_bad_keyword_arguments_raise_even_for_empty_texts(kwargs, error, message):
    # deliberate: citeglow skips validation when a text is empty; citekit always validates
    for answer, chunk in ((ANSWER, SOURCE), ("", SOURCE), (ANSWER, "")):
        with pytest.raises(error, match=message):
            find_answer_highlights(answer, chunk, **kwargs)


@pytest.mark.parametrize("answer, chunk, name", [(1, "x", "answer"), ("x", None, "chunk_text"),
                                                 (b"a", "a", "answer"), ("a", ["a"], "chunk_text")])
def test_non_str_texts_raise_type_error(answer, chunk, name):
    with pytest.raises(TypeError, match=f"{name} must be a str"):
        find_answer_highlights(answer, chunk)


@pytest.mark.parametrize(
    "answer, chunk",
    [("", ""), ("", SOURCE), (ANSWER, ""), ("  \n ", SOURCE), ("...!?", SOURCE), (ANSWER, " \n\t"),
     (ANSWER, "... --- !!!"), ("\u0301\u0301", "\u0301")],
)
def test_empty_or_tokenless_texts_give_no_spans(answer, chunk):
    assert find_answer_highlights(answer, chunk) == []
    assert find_answer_highlights(answer, chunk, tokenizer="char") == []


def test_huge_integer_options_behave_like_large_ones():
    huge = find_answer_highlights(ANSWER, SOURCE, neighborhood_tokens=10**30)
    assert huge == find_answer_highlights(ANSWER, SOURCE, neighborhood_tokens=10**6)
    assert find_answer_highlights(ANSWER, SOURCE, min_span_words=10**30) == []


# ----------------------------------------------------------------------------- behaviour


def test_expand_spans_false_gives_token_aligned_evidence():
    spans = find_answer_highlights(ANSWER, SOURCE, expand_spans=False)
    # "refund" joins from the neighbourhood; the line's final "." is outside every token
    assert _texts(SOURCE, spans) == [
        "Unused items can be returned within 30 days of delivery for a refund"
    ]


def test_keep_longest_only_false_returns_every_passage():
    source = (
        "Alpha bravo charlie delta echo.\n"
        "Foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo.\n"
        "Uniform victor whiskey xray yankee zulu.\n"
        "Filler words keep the highlighted share of this chunk small enough for the valve."
    )
    answer = "alpha bravo charlie and then uniform victor whiskey"
    both = find_answer_highlights(answer, source, keep_longest_only=False)
    assert _texts(source, both) == [
        "Alpha bravo charlie delta echo.", "Uniform victor whiskey xray yankee zulu."
    ]
    assert len(find_answer_highlights(answer, source)) == 1


def test_adjacent_highlighted_lines_merge_into_one_block():
    source = "- alpha bravo charlie\r\n- delta echo foxtrot\n\nunrelated words here and more words"
    spans = find_answer_highlights(
        "alpha bravo charlie delta echo foxtrot", source, keep_longest_only=False,
    )
    assert _texts(source, spans) == ["- alpha bravo charlie\r\n- delta echo foxtrot"]


def test_sentence_break_stops_merging():
    # two matching blocks one token apart merge, unless a sentence ends between them
    source = "alpha bravo zulu. charlie delta"
    answer = "alpha bravo charlie delta"
    spans = find_answer_highlights(answer, source, expand_spans=False, keep_longest_only=False,
                                   options=HighlightOptions(max_highlight_ratio=2.0))
    assert _texts(source, spans) == ["alpha bravo", "charlie delta"]
    joined = find_answer_highlights(answer, "alpha bravo zulu, charlie delta", expand_spans=False)
    assert joined == [(0, 31)]


def test_max_highlight_ratio_keeps_only_the_longest():
    source = "alpha bravo.\nfiller words here.\ncharlie delta echo"
    answer = "alpha bravo charlie delta echo"
    assert _texts(source, find_answer_highlights(answer, source, keep_longest_only=False)) == [
        "charlie delta echo"
    ]
    loose = HighlightOptions(max_highlight_ratio=0.9)
    assert _texts(
        source, find_answer_highlights(answer, source, keep_longest_only=False, options=loose)
    ) == ["alpha bravo.", "charlie delta echo"]


def test_compiled_expansion_regex_and_no_unit_fallback():
    pattern = re.compile(r"<cite>.*?</cite>", re.IGNORECASE)
    source = "x <CITE>alpha beta gamma</CITE> y"
    assert _texts(source, find_answer_highlights("alpha beta", source,
                                                 span_expansion_regex=pattern)) == [
        "<CITE>alpha beta gamma</CITE>"
    ]
    # when the regex matches nothing, spans stay token-aligned
    assert _texts(source, find_answer_highlights("alpha beta", source,
                                                 span_expansion_regex="zzz")) == ["alpha beta"]


def test_irregular_lower_casing_matches_like_str_lower():
    # final sigma: "ΚΟΣΜΟΣ".lower() == "κοσμος" with a final ς
    source = "Άλλο θέμα.\nο κοσμος σοφος εδω\nτέλος"
    assert _texts(source, find_answer_highlights("ΚΟΣΜΟΣ ΣΟΦΟΣ", source)) == [
        "ο κοσμος σοφος εδω"
    ]
    assert find_answer_highlights("κοσμοσ σοφοσ", source) == []  # medial sigma differs
    # U+0130 lower-cases to two characters
    source = "Other line.\nFlights İSTANBUL İZMİR daily\nEnd."
    assert _texts(source, find_answer_highlights("istanbul izmir", source)) == []
    assert _texts(source, find_answer_highlights("İstanbul İZMİR", source)) == [
        "Flights İSTANBUL İZMİR daily"
    ]


def test_one_megabyte_chunk():
    filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.\n"
    middle = "The warranty covers manufacturing defects for twenty four months.\n"
    repeats = 1_000_000 // len(filler) // 2
    chunk = filler * repeats + middle + filler * repeats
    assert len(chunk) > 1_000_000
    spans = find_answer_highlights("warranty covers manufacturing defects for 24 months", chunk)
    assert _texts(chunk, spans) == [middle.rstrip("\n")]
    # an answer made of the filler's words matches everywhere: the valve keeps one line
    spans = find_answer_highlights(filler * 3, chunk, keep_longest_only=False)
    assert len(spans) == 1


def test_deterministic_and_independent_of_call_order():
    first = find_answer_highlights(ANSWER, SOURCE)
    highlight_sources("something else entirely", [SOURCE, "ΚΟΣΜΟΣ"], tokenizer="char")
    assert find_answer_highlights(ANSWER, SOURCE) == first == [REFUND_LINE]


def test_importing_highlight_does_not_import_numba():
    code = "import sys, citekit.highlight; print('numba' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=Path(__file__).parent.parent).stdout
    assert output.strip() == "False"


# ----------------------------------------------------------------------------- properties

OPTION_SETS = st.sampled_from([
    HighlightOptions(),
    HighlightOptions(tokenizer="char"),
    HighlightOptions(expand_spans=False, min_span_words=1, min_vocab_token_chars=1),
    HighlightOptions(normalize=True),
    HighlightOptions(normalize=True, expand_spans=False, tokenizer="char", min_span_words=1),
    HighlightOptions(span_expansion_regex=r"\S+", max_highlight_ratio=5.0),
])


@settings(max_examples=150)
@given(answer=st.text(), chunk=st.text(), options=OPTION_SETS, keep=st.booleans())
def test_spans_sorted_disjoint_in_bounds(answer, chunk, options, keep):
    spans = find_answer_highlights(answer, chunk, options=options, keep_longest_only=keep)
    assert all(isinstance(s, int) and isinstance(e, int) for s, e in spans)
    assert all(0 <= start < end <= len(chunk) for start, end in spans)
    assert all(previous[1] <= current[0] for previous, current in zip(spans, spans[1:]))
    if keep and not options.expand_spans:
        assert len(spans) <= 1


@settings(max_examples=150)
@given(
    data=st.data(),
    lines=st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\r\n")), min_size=1, max_size=6
    ),
    options=OPTION_SETS,
)
def test_exact_copy_of_a_line_is_highlighted(data, lines, options):
    index = data.draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    words = [m.group().lower() for m in re.finditer(r"\w+", line)]
    tokens = set(words)
    content = [t for t in tokens if t not in DEFAULT_STOP_WORDS]
    # enough evidence by the documented rules: two words (min_span_words) with content
    assume(len(words) >= 2 and (len(content) >= 2 or any(len(t) >= 5 for t in content)))
    # the line's words appear nowhere else, so the only evidence is the line itself
    others = " ".join(lines[:index] + lines[index + 1:])
    assume(not tokens & {m.group().lower() for m in re.finditer(r"\w+", others)})
    if options.tokenizer == "char" or options.normalize:
        options = HighlightOptions()
    chunk = "\n".join(lines)
    start = sum(len(previous) + 1 for previous in lines[:index])
    spans = find_answer_highlights(line, chunk, options=options)
    assert len(spans) == 1
    span_start, span_end = spans[0]
    first_word = re.search(r"\w", line).start()
    last_word = max(m.end() for m in re.finditer(r"\w+", line))
    # the highlight covers the copied words and stays on the copied line
    assert span_start <= start + first_word and start + last_word <= span_end
    assert start <= span_start and span_end <= start + len(line)


LONG_WORD = st.from_regex(r"[A-Za-zÀ-ÿĀ-ſ一-鿿_0-9]{5,9}", fullmatch=True)


@settings(max_examples=80)
@given(pieces=st.lists(st.one_of(st.text(), LONG_WORD), min_size=2),
       options=st.sampled_from([HighlightOptions(), HighlightOptions(expand_spans=False),
                                HighlightOptions(span_expansion_regex=r"\S+")]))
def test_whole_chunk_as_answer_lights_something_when_it_has_content(pieces, options):
    chunk = " ".join(pieces)
    words = [m.group().lower() for m in re.finditer(r"\w+", chunk)]
    assume(len(words) >= 2 and any(len(w) >= 5 and w not in DEFAULT_STOP_WORDS for w in words))
    assert find_answer_highlights(chunk, chunk, options=options)


# ----------------------------------------------------------------------------- normalize


def test_normalize_matches_full_width_percent_to_words():
    chunk = "Costs fell slightly.\nRevenue grew 15 percent in the third quarter.\nEnd."
    answer = "ＲＥＶＥＮＵＥ ＧＲＥＷ １５％"
    assert find_answer_highlights(answer, chunk) == []
    spans = find_answer_highlights(answer, chunk, options=HighlightOptions(normalize=True))
    assert _texts(chunk, spans) == ["Revenue grew 15 percent in the third quarter."]


def test_normalize_offsets_index_the_original_chunk():
    chunk = "Intro line.\nＲｅｖｅｎｕｅ ｇｒｅｗ １５％ ﬁnally!\nEnd."
    options = HighlightOptions(normalize=True, expand_spans=False)
    spans = find_answer_highlights("revenue grew 15 percent finally", chunk, options=options)
    assert _texts(chunk, spans) == ["Ｒｅｖｅｎｕｅ ｇｒｅｗ １５％ ﬁnally"]
    expanded = find_answer_highlights("revenue grew 15 percent finally", chunk,
                                      options=HighlightOptions(normalize=True))
    assert _texts(chunk, expanded) == ["Ｒｅｖｅｎｕｅ ｇｒｅｗ １５％ ﬁnally!"]


def test_normalize_keeps_spans_disjoint_when_tokens_share_a_character():
    # "㏂" normalizes to "a.m.": tokens "a" and "m" both come from that one character and a
    # sentence break separates them, so the two runs map to overlapping original spans
    chunk = "meeting starts 9 ㏂ sharp today"
    options = HighlightOptions(normalize=True, expand_spans=False, min_span_words=1,
                               max_highlight_ratio=5.0)
    spans = find_answer_highlights("meeting starts 9 a m sharp today", chunk, options=options,
                                   keep_longest_only=False)
    assert spans == [(0, len(chunk))]


# ----------------------------------------------------------------------------- many sources


def test_highlight_sources_ranks_by_evidence_and_matches_single_calls():
    sources = [
        "Opening hours are Monday to Friday.",
        "Refunds: unused items can be returned.",
        "Unused items can be returned within 30 days of delivery for a refund.",
        "",
    ]
    answer = "Unused items can be returned within 30 days for a refund."
    ranked = highlight_sources(answer, sources)
    assert [record.source_index for record in ranked] == [2, 1]
    assert ranked[0].evidence > ranked[1].evidence > 0
    for record in ranked:
        text = sources[record.source_index]
        assert list(record.spans) == find_answer_highlights(answer, text)
        assert record.texts == tuple(_texts(text, record.spans))
        assert record.source_id is None


def test_highlight_sources_evidence_counts_answer_content_words():
    ranked = highlight_sources("alpha bravo charlie", ["x alpha bravo charlie alpha y"],
                               expand_spans=False)
    # alpha, bravo, charlie, alpha inside the span; x and y lie outside it
    assert ranked[0].texts == ("alpha bravo charlie alpha",)
    assert ranked[0].evidence == 4


def test_highlight_sources_ties_keep_source_order():
    source = "alpha bravo charlie"
    ranked = highlight_sources("alpha bravo charlie", [source, "nothing", source])
    assert [record.source_index for record in ranked] == [0, 2]


def test_highlight_sources_documents_and_chunks():
    document = "Intro.\nUnused items can be returned within 30 days.\nEnd."
    chunk = SourceChunk(source_id="doc", text=document[7:], doc_char_start=7,
                        doc_char_end=len(document), document_text=document)
    ranked = highlight_sources(
        "unused items returned within 30 days",
        [SourceDocument(id="doc", text=document), chunk],
    )
    assert [(r.source_index, r.source_id) for r in ranked] == [(0, "doc"), (1, "doc")]
    assert ranked[0].spans == ranked[1].spans  # chunk offsets are in the parent document
    start, end = ranked[1].spans[0]
    expected = "Unused items can be returned within 30 days."
    assert document[start:end] == ranked[1].texts[0] == expected


@pytest.mark.parametrize(
    ("sources", "message"),
    [("a text", "sources must be a sequence"), (None, "sources must be a sequence"),
     (["ok", 3], r"sources\[1\] must be a str, SourceDocument or SourceChunk")],
)
def test_highlight_sources_bad_input(sources, message):
    with pytest.raises(TypeError, match=message):
        highlight_sources("answer words", sources)
    with pytest.raises(TypeError, match="answer must be a str"):
        highlight_sources(None, ["text"])
    with pytest.raises(ValueError, match="min_span_words"):
        highlight_sources("answer", ["text"], min_span_words=0)


def test_highlight_sources_empty_inputs():
    assert highlight_sources("", ["alpha bravo"]) == []
    assert highlight_sources("alpha bravo", []) == []
    assert highlight_sources("alpha bravo", ("",)) == []
    assert isinstance(highlight_sources("alpha bravo", ["alpha bravo"])[0], SourceHighlights)


@settings(max_examples=80)
@given(answer=st.text(min_size=1), data=st.data(), options=OPTION_SETS)
def test_highlight_sources_agrees_with_single_calls(answer, data, options):
    # sources mix random text with pieces of the answer, so some of them light up
    words = answer.split() or [answer]
    piece = st.lists(st.sampled_from(words), max_size=8).map(" ".join)
    sources = data.draw(st.lists(
        st.lists(st.one_of(st.text(max_size=8), piece), max_size=4).map("\n".join), max_size=5
    ))
    ranked = highlight_sources(answer, sources, options=options)
    by_index = {record.source_index: record for record in ranked}
    assert len(by_index) == len(ranked)
    for index, text in enumerate(sources):
        spans = find_answer_highlights(answer, text, options=options)
        if spans:
            assert list(by_index[index].spans) == spans
            assert by_index[index].texts == tuple(_texts(text, spans))
        else:
            assert index not in by_index
    keys = [(-record.evidence, record.source_index) for record in ranked]
    assert keys == sorted(keys)
