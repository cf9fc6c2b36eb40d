"""Bad input to every public function of ``citekit.__all__``: a wrong type or value for
each argument raises TypeError or ValueError (FileNotFoundError or another OSError for
paths) whose message names the argument."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import citekit

NAN = math.nan
ANSWER = "Revenue grew 15% in 2024."
SOURCES = ["Revenue grew 15% in 2024. Costs fell."]


@pytest.fixture(scope="module")
def results():
    return citekit.align_citations(ANSWER, SOURCES)


def _ids():
    return [1, 2, 3]


# function name -> (valid positional arguments, valid keyword arguments); "RESULTS" stands
# for the result of aligning ANSWER against SOURCES
VALID = {
    "warmup": ((), {"processes": 1}),
    "normalize_text": (("Text",), {}),
    "segment_sentences": (("A b. C d.",), {}),
    "passage_window_array": (([(0, 4), (5, 9)],), {}),
    "passage_windows": (([(0, 4), (5, 9)],), {}),
    "chunk_text": (("a b c d", citekit.SimpleTokenizer(), 2), {"overlap_tokens": 0}),
    "smith_waterman": ((_ids(), _ids()), {}),
    "align_batch": ((_ids(), _ids(), [0, 3]), {}),
    "align_pairs": ((_ids(), [0, 3], _ids(), [0, 3], [0], [0]), {}),
    "lcs_length": ((_ids(), _ids()), {}),
    "matching_blocks": ((_ids(), _ids()), {}),
    "align_citations": ((ANSWER, SOURCES), {}),
    "from_dicts": (([{"id": "a", "text": "x"}],), {}),
    "verify_facts": ((ANSWER, SOURCES), {}),
    "verify_facts_many": (([ANSWER], SOURCES), {}),
    "find_answer_highlights": ((ANSWER, SOURCES[0]), {}),
    "highlight_sources": ((ANSWER, SOURCES), {}),
    "compute_hallucination_metrics": (("RESULTS",), {}),
    "is_grounded": ((ANSWER, SOURCES), {}),
    "is_hallucinated": ((ANSWER, SOURCES), {}),
    "check_groundedness": ((ANSWER, SOURCES), {}),
    "annotate_answer": ((ANSWER, SOURCES), {}),
    "format_with_citations": ((ANSWER, "RESULTS"), {}),
    "get_citation_summary": (("RESULTS",), {}),
    "load_records": (("PATH",), {}),
    "render_html": (("RESULTS", ANSWER, SOURCES), {}),
    "score_records": (([{"id": "r", "answer": ANSWER, "sources": SOURCES}],),
                      {"n_jobs": 1, "show_progress": False}),
    "score_dask": None,  # (needs dask: its own tests)
    "alignment_view": ((ANSWER, SOURCES[0]), {}),
    "explain_citation": (("RESULTS", 0), {}),
    "to_dataframe": None,  # (needs pandas: tested through to_records, its rows)
    "to_records": (("RESULTS",), {}),
}

STRING_BAD = [None, 5, ["a"]]
INT_BAD = ["1", 1.5, NAN, -1]
OPTIONAL_INT_BAD = ["1", 1.5, NAN, -1]
SEQUENCE_BAD = [None, 5]
# argument name -> bad values (an argument not listed takes these by its kind below)
BY_NAME = {
    "text": STRING_BAD, "answer": STRING_BAD, "chunk_text": STRING_BAD,
    "sentence": STRING_BAD, "evidence": STRING_BAD,
    "processes": INT_BAD, "max_tokens": INT_BAD, "overlap_tokens": INT_BAD,
    "window_size_sentences": INT_BAD, "window_stride_sentences": INT_BAD,
    "span_index": ["0", 1.5, NAN, -5, 99], "citation_index": ["0", 1.5, NAN, -5, 99],
    "limit": OPTIONAL_INT_BAD, "neighborhood_tokens": OPTIONAL_INT_BAD,
    "min_span_words": OPTIONAL_INT_BAD, "min_vocab_token_chars": OPTIONAL_INT_BAD,
    "max_source_chars": OPTIONAL_INT_BAD, "context_chars": INT_BAD,
    "batch_size": INT_BAD, "band_width": OPTIONAL_INT_BAD, "n_threads": ["1", 1.5, NAN],
    "match_score": ["2", 1.5, NAN], "mismatch_score": ["2", 1.5, NAN],
    "gap_score": ["2", 1.5, NAN],
    "threshold": ["0.5", NAN, -0.5, 1.5],
    "sources": SEQUENCE_BAD + [[5]], "documents": SEQUENCE_BAD + [[5]],
    "answers": SEQUENCE_BAD + [[5]], "records": SEQUENCE_BAD + [[5]],
    "span_citations": SEQUENCE_BAD + [[5]], "results": SEQUENCE_BAD + [[5]],
    "sentence_spans": SEQUENCE_BAD + [[5], [(-1, 2)], [(3, 1)]],
    "query_ids": SEQUENCE_BAD + [["a"]], "target_ids": SEQUENCE_BAD + [["a"]],
    "a": SEQUENCE_BAD + [["a"]], "b": SEQUENCE_BAD + [["a"]],
    "query_offsets": SEQUENCE_BAD + [[3, 0]], "target_offsets": SEQUENCE_BAD + [[3, 0]],
    "pair_query": SEQUENCE_BAD + [[-1]], "pair_target": SEQUENCE_BAD + [[-1]],
    "config": [5, "x"], "hallucination_config": [5, "x"], "options": [5, "x"],
    "pipeline": [5, "x"], "corpus": [5, "x"], "tokenizer": [5],
    "format": [None, 5, "latex"], "level": [None, 5, "word"], "offsets": [None, 5, "utf8"],
    "backend": [None, 5, "fortran"], "text_key": [None, 5], "id_key": [None, 5],
    "n_jobs": ["many", 1.5, NAN, 0], "mp_context": [None, 5, "teleport"],
    "path": [None, 5],
    "keep_longest_only": ["yes"], "include_unsupported": ["yes"], "legend": ["yes"],
    "show_progress": ["yes"], "return_blocks": ["yes"], "expand_spans": ["yes"],
    "stop_words": [5, "the"], "span_expansion_regex": [5],
}
# arguments that take any object by design (user callables and hooks)
SKIP = {"answer_segmenter", "source_segmenter", "aligner", "embedder", "on_metrics",
        "claim_decomposer", "align_options", "scheduler", "npartitions"}


def _cases():
    for name, valid in VALID.items():
        if valid is None:
            continue
        function = getattr(citekit, name)
        parameters = [
            p for p in inspect.signature(function).parameters.values()
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name not in SKIP
        ]
        for parameter in parameters:
            for bad in BY_NAME.get(parameter.name, ()):
                if bad is None and parameter.default is None:
                    continue  # (None is this argument's default)
                if name == "score_records" and parameter.name == "records" and bad == [5]:
                    continue  # (a bad record is reported in its RecordResult, by design)
                label = f"{name}-{parameter.name}-{bad!r}"
                yield pytest.param(name, parameter.name, bad, id=label)


def _resolve(value, results, tmp_path):
    if value == "RESULTS":
        return results
    if value == "PATH":
        path = tmp_path / "records.jsonl"
        path.write_text('{"id": "r", "answer": "A.", "sources": []}\n', encoding="utf-8")
        return str(path)
    return value


@pytest.mark.parametrize("name", [n for n, v in VALID.items() if v is not None])
def test_the_valid_call_works(name, results, tmp_path):
    args, kwargs = VALID[name]
    getattr(citekit, name)(*[_resolve(a, results, tmp_path) for a in args], **kwargs)


@pytest.mark.parametrize("name, argument, bad", list(_cases()))
def test_bad_argument_is_refused_naming_it(name, argument, bad, results, tmp_path):
    function = getattr(citekit, name)
    args, kwargs = VALID[name]
    args = [_resolve(a, results, tmp_path) for a in args]
    kwargs = dict(kwargs)
    parameter = inspect.signature(function).parameters[argument]
    position = list(inspect.signature(function).parameters).index(argument)
    if parameter.kind == parameter.KEYWORD_ONLY or position >= len(args):
        kwargs[argument] = bad
    else:
        args[position] = bad
    expected = (TypeError, ValueError, OSError) if argument == "path" else (TypeError, ValueError)
    with pytest.raises(expected) as error:
        function(*args, **kwargs)
    assert argument in str(error.value), str(error.value)


# ------------------------------------------------ errors that name their cause (issue 41)


class _NoneAligner:
    def align(self, query, target):
        return None


class _BrokenPairAligner:
    def align_pairs(self, *args, **kwargs):
        return None


@pytest.mark.parametrize("aligner", [_NoneAligner(), _BrokenPairAligner()])
def test_an_aligner_returning_none_is_named(aligner):
    with pytest.raises(TypeError, match=r"aligner\.align(_pairs)? must return .*got NoneType"):
        citekit.align_citations(ANSWER, SOURCES, aligner=aligner)


class _Embedder:
    def __init__(self, rows):
        self.rows = rows

    def encode(self, texts):
        return self.rows(texts)


@pytest.mark.parametrize(
    "rows",
    [
        lambda texts: ["a" for _ in texts],  # strings
        lambda texts: [[0.1] * (i + 1) for i, _ in enumerate(texts)],  # ragged rows
    ],
    ids=["strings", "ragged"],
)
def test_an_embedder_returning_no_matrix_is_named(rows):
    sources = SOURCES + ["Costs fell."]
    with pytest.raises(ValueError, match=r"embedder\.encode must return numbers.*got list"):
        citekit.align_citations(ANSWER, sources, embedder=_Embedder(rows))


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("c.toml", b"top_k = 2\ntop_k = [", r"c\.toml: invalid TOML \(.*line 2"),
        ("c.json", b'{\n "top_k": 2,\n bad}', r"c\.json: invalid JSON \(.*line 3 column 2"),
        ("c.json", b'{"top_k": "\xff"}', r"c\.json: not UTF-8 at line 1 \(byte 11\)"),
        ("c.toml", b'\ntop_k = "\xff"', r"c\.toml: not UTF-8 at line 2 \(byte 10\)"),
        ("c.json", b"[1]", r"c\.json: expected a JSON object, got list"),
    ],
)
def test_config_from_file_names_the_file_and_line(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=expected):
        citekit.CitationConfig.from_file(path)


def test_config_from_json_refuses_deep_nesting_and_nan():
    with pytest.raises(ValueError, match=r"from_json text: JSON nested too deeply"):
        citekit.CitationConfig.from_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=r"from_json text: invalid JSON \(NaN"):
        citekit.CitationConfig.from_json('{"min_score": NaN}')
    with pytest.raises(TypeError, match=r"text must be a str, got int"):
        citekit.CitationConfig.from_json(5)
    config = citekit.CitationConfig(top_k=2)
    assert citekit.CitationConfig.from_json(config.to_json()) == config
    assert citekit.CitationConfig.from_json(config.to_json().encode()) == config


def test_huggingface_from_pretrained_names_a_json_file_that_is_no_tokenizer(tmp_path):
    pytest.importorskip("tokenizers")
    path = tmp_path / "x.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.json' is not a tokenizers tokenizer\.json file"):
        citekit.HuggingFaceTokenizer.from_pretrained(str(path))


@pytest.mark.parametrize(
    "count, error, expected",
    [
        (None, TypeError, "must be an int, got NoneType"),
        (NAN, TypeError, "must be an int, got float"),
        (1.5, TypeError, "must be an int, got float"),
        (-1, ValueError, "must be >= 0, got -1"),
    ],
)
def test_chunk_text_refuses_a_token_count_that_is_no_count(count, error, expected):
    class Counter(citekit.SimpleTokenizer):
        def count_tokens(self, text):
            return count

    with pytest.raises(error, match=rf"count_tokens\(text\) {expected}"):
        citekit.chunk_text("one two three four five six", Counter(), 2)


def test_chunk_text_accepts_numpy_integer_counts():
    class Counter(citekit.SimpleTokenizer):
        def count_tokens(self, text):
            return np.int64(len(self.tokenize(text)[0]))

    plain = citekit.chunk_text("one two three four five six", citekit.SimpleTokenizer(), 2)
    assert citekit.chunk_text("one two three four five six", Counter(), 2) == plain


@pytest.mark.parametrize("argument", ["abbreviations", "extra_abbreviations"])
@pytest.mark.parametrize("bad", [5, "Approx", b"Approx"])
def test_sentence_segmenter_abbreviations_must_be_an_iterable_of_str(argument, bad):
    with pytest.raises(TypeError, match=rf"^{argument} must be an iterable of str"):
        citekit.SentenceSegmenter(**{argument: bad})
    assert "approx" in citekit.SentenceSegmenter(**{argument: ["Approx."]}).abbreviations


class _HugeSpans:
    def segment(self, text):
        return [(0, 2**70)]


@pytest.mark.parametrize("stage", ["answer_segmenter", "source_segmenter"])
def test_a_segmenter_offset_beyond_int64_is_named(stage):
    with pytest.raises(ValueError, match=rf"{stage}: a segmenter's span offset {2**70}"):
        citekit.align_citations(ANSWER, SOURCES, **{stage: _HugeSpans()})


@pytest.mark.parametrize("start", [2**53, 2**62, 2**64])
def test_a_source_chunk_offset_no_text_can_have_is_refused(start):
    bound = r"SourceChunk\.doc_char_end must be <= 9007199254740991 \(2\*\*53 - 1\)"
    with pytest.raises(ValueError, match=bound):
        citekit.SourceChunk("c", "abc", start, start + 3)
    with pytest.raises(ValueError, match=r"SourceChunk\.source_index must be in"):
        citekit.SourceChunk("c", "abc", 0, 3, source_index=start)
    largest = 2**53 - 1
    chunk = citekit.SourceChunk("c", "abc", largest - 3, largest)
    assert citekit.align_citations("abc", [chunk])[0].citations[0].char_start == largest - 3


def test_score_records_refuses_a_corpus_that_is_no_corpus_at_once():
    with pytest.raises(TypeError, match=r"^corpus must be"):
        list(citekit.score_records([{"answer": "a", "sources": ["a"]}], corpus=5))
