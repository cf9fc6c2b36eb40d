"""Bad input to every public function of ``citekit.__all__``: a wrong type or value for
each argument raises TypeError or ValueError (FileNotFoundError or another OSError for
paths) whose message names the argument."""

from __future__ import annotations

import inspect
import math

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
