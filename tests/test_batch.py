"""citekit.batch: rows and DataFrames, UTF-16 offsets, JSON Lines, score_records, Dask."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.batch import (
    RecordResult,
    iter_score_records,
    read_jsonl,
    score_dask,
    score_records,
    to_dataframe,
    to_records,
    utf16_offsets,
    write_jsonl,
)
from citekit.results import (
    AlignmentResult,
    AnswerSpan,
    Citation,
    Conflict,
    EvidenceSpan,
    SourceChunk,
    SpanCitations,
)

# ----------------------------------------------------------------------------- hand-made results

SOURCE = "Intro 🐠. Live coral cover averaged 23%, down from 31% in 2017 𝔘."
ANSWER = "Coral 😀 cover averaged 25%, down from 31%. Fish 🐟 were counted."


def _js_slice(text: str, start: int, end: int) -> str:
    """What JavaScript's text.slice(start, end) returns (UTF-16 code units)."""
    units = text.encode("utf-16-le")
    return units[2 * start : 2 * end].decode("utf-16-le")


@pytest.fixture
def result():
    evidence = "coral cover averaged 23%, down from 31%"
    start = SOURCE.index(evidence)
    first_end = start + len("coral cover averaged 23%")
    second = SOURCE.index("down from 31%")
    citation = Citation(
        score=1.8,
        source_id="reef",
        source_index=0,
        candidate_index=2,
        char_start=start,
        char_end=start + len(evidence),
        evidence=evidence,
        evidence_spans=(
            EvidenceSpan(start, first_end, SOURCE[start:first_end]),
            EvidenceSpan(second, second + 13, SOURCE[second : second + 13]),
        ),
        components={"alignment_score": 12.0, "answer_coverage": 0.8, "score": 99.0},
        answer_char_start=0,
        answer_char_end=ANSWER.index("."),
        conflicts=(
            Conflict(
                "percent",
                "25%",
                ANSWER.index("25%"),
                ANSWER.index("25%") + 3,
                "23%",
                SOURCE.index("23%"),
                SOURCE.index("23%") + 3,
            ),
        ),
    )
    first = ANSWER[: ANSWER.index(".") + 1]
    second_sentence = ANSWER[len(first) + 1 :]
    spans = [
        SpanCitations(
            AnswerSpan(first, 0, len(first)),
            (citation,),
            "partial",
            ((ANSWER.index("😀"), ANSWER.index("😀") + 1),),
        ),
        SpanCitations(
            AnswerSpan(second_sentence, len(first) + 1, len(ANSWER)),
            (),
            "unsupported",
            ((len(first) + 1, len(ANSWER)),),
        ),
    ]
    return AlignmentResult(spans, answer=ANSWER, sources=[SOURCE])


def test_citation_rows(result):
    rows = to_records(result, level="citation")
    assert len(rows) == 1
    row = rows[0]
    assert row["span_index"] == 0 and row["rank"] == 0 and row["status"] == "partial"
    assert SOURCE[row["char_start"] : row["char_end"]] == row["evidence"]
    assert [SOURCE[s:e] for s, e in row["evidence_spans"]] == [
        "coral cover averaged 23%",
        "down from 31%",
    ]
    assert row["alignment_score"] == 12.0 and row["answer_coverage"] == 0.8
    # a component that collides with a base column is prefixed, never overwrites it
    assert row["score"] == 1.8 and row["component_score"] == 99.0
    assert row["conflicts"][0]["answer_text"] == "25%"
    assert "record_id" not in row
    json.dumps(rows)  # plain data


def test_sentence_rows(result):
    rows = to_records(result, level="sentence")
    assert [r["status"] for r in rows] == ["partial", "unsupported"]
    assert rows[0]["n_citations"] == 1 and rows[0]["source_id"] == "reef"
    assert rows[0]["n_conflicts"] == 1 and rows[0]["alignment_score"] == 12.0
    assert rows[1]["n_citations"] == 0 and rows[1]["score"] is None
    assert ANSWER[rows[1]["sentence_start"] : rows[1]["sentence_end"]] == rows[1]["sentence"]
    assert rows[1]["unsupported_spans"] == [[rows[1]["sentence_start"], len(ANSWER)]]


def test_utf16_offsets_slice_like_javascript(result):
    for level in ("citation", "sentence"):
        for row in to_records(result, level=level, offsets="utf16"):
            assert _js_slice(ANSWER, row["sentence_start"], row["sentence_end"]) == row["sentence"]
            if row["evidence"] is not None:
                assert _js_slice(SOURCE, row["char_start"], row["char_end"]) == row["evidence"]
                for (s, e), span in zip(
                    row["evidence_spans"], ("coral cover averaged 23%", "down from 31%")
                ):
                    assert _js_slice(SOURCE, s, e) == span
                conflict = row["conflicts"][0]
                assert (
                    _js_slice(ANSWER, conflict["answer_char_start"], conflict["answer_char_end"])
                    == "25%"
                )
                assert (
                    _js_slice(
                        SOURCE, conflict["evidence_char_start"], conflict["evidence_char_end"]
                    )
                    == "23%"
                )
            for s, e in row.get("unsupported_spans", []):
                assert (
                    _js_slice(ANSWER, s, e)
                    == ANSWER[
                        result[row["span_index"]]
                        .unsupported_spans[0][0] : result[row["span_index"]]
                        .unsupported_spans[0][1]
                    ]
                )
    python_rows = to_records(result, offsets="python")
    utf16_rows = to_records(result, offsets="utf16")
    assert utf16_rows[0]["char_start"] == python_rows[0]["char_start"] + 1  # one astral before


def test_utf16_rows_convert_the_passage_offsets_of_the_components():
    # every offset a row carries is in the unit asked for, score components included
    source = "𝔘𝔘 intro. Revenue grew 15% 📈 in 2024. Costs fell."
    answer = "Revenue grew 15% 📈 in 2024."
    evidence = "Revenue grew 15% 📈 in 2024"
    start = source.index(evidence)
    passage_start, passage_end = source.index("intro"), len(source)
    cite = Citation(
        score=2.0, source_id="s", source_index=0, candidate_index=0,
        char_start=start, char_end=start + len(evidence), evidence=evidence,
        components={"passage_char_start": float(passage_start),
                    "passage_char_end": float(passage_end),
                    "evidence_chars_total": float(len(evidence)), "matches": 5.0},
    )
    spans = [SpanCitations(AnswerSpan(answer, 0, len(answer)), (cite,), "supported")]
    result = AlignmentResult(spans, answer=answer, sources=[source])
    for level in ("sentence", "citation"):
        (python_row,) = to_records(result, level=level)
        (row,) = to_records(result, level=level, offsets="utf16")
        assert (python_row["passage_char_start"], python_row["passage_char_end"]) == (
            passage_start, passage_end)
        assert row["passage_char_start"] == passage_start + 2  # two astral letters before
        assert row["passage_char_end"] == passage_end + 3
        assert _js_slice(source, int(row["passage_char_start"]), int(row["passage_char_end"])) \
            == source[passage_start:passage_end]
        assert isinstance(row["passage_char_start"], float)  # like every component
        assert python_row["evidence_chars_total"] == len(evidence)
        assert row["evidence_chars_total"] == len(evidence) + 1  # in UTF-16 code units
        assert row["matches"] == 5.0  # not an offset: unchanged
    # an offset outside the text (results of other sources) is an error, not a wrap-around
    bad = Citation(score=2.0, source_id="s", source_index=0, candidate_index=0, char_start=0,
                   char_end=2, evidence=source[:2], components={"passage_char_end": 500.0})
    spans = [SpanCitations(AnswerSpan(answer, 0, len(answer)), (bad,), "supported")]
    with pytest.raises(ValueError, match="offset 500 lies outside the text"):
        to_records(AlignmentResult(spans, answer=answer, sources=[source]), offsets="utf16")


def test_utf16_rows_of_the_pipeline_slice_passages_like_javascript():
    from citekit import align_citations

    source = "😀 " * 40 + "Intro. Revenue grew 15% in 2024. 𝔘 Costs fell 3% in 2024."
    result = align_citations("Revenue grew 15% in 2024. Costs fell 3%.", [source])
    rows = to_records(result, level="citation", offsets="utf16")
    python_rows = to_records(result, level="citation")
    assert rows
    for row, python_row in zip(rows, python_rows):
        start, end = int(python_row["passage_char_start"]), int(python_row["passage_char_end"])
        assert _js_slice(source, int(row["passage_char_start"]), int(row["passage_char_end"])) \
            == source[start:end]
        assert row["evidence_chars_total"] == sum(e - s for s, e in row["evidence_spans"])


def test_utf16_needs_texts_for_plain_lists(result):
    spans = list(result)
    with pytest.raises(ValueError, match="answer"):
        to_records(spans, offsets="utf16", sources=[SOURCE])
    with pytest.raises(ValueError, match="source"):
        to_records(spans, offsets="utf16", answer=ANSWER)
    rows = to_records(spans, offsets="utf16", answer=ANSWER, sources=[SOURCE])
    assert rows == to_records(result, offsets="utf16")
    assert to_records(spans) == to_records(result)  # python offsets need no texts


def test_utf16_with_source_chunks():
    document = "😀 preface. Revenue grew 15%."
    start = document.index("Revenue")
    chunk = document[start:]
    citation = Citation(
        score=1.0,
        source_id="d",
        source_index=0,
        candidate_index=0,
        char_start=start,
        char_end=start + 16,
        evidence="Revenue grew 15%",
    )
    spans = [SpanCitations(AnswerSpan("Revenue grew 15%.", 0, 17), (citation,), "supported")]
    with_parent = SourceChunk("d", chunk, start, len(document), document_text=document)
    row = to_records(spans, offsets="utf16", answer="Revenue grew 15%.", sources=[with_parent])[0]
    assert _js_slice(document, row["char_start"], row["char_end"]) == "Revenue grew 15%"
    without_parent = SourceChunk("d", chunk, start, len(document))
    with pytest.raises(ValueError, match="document_text"):
        to_records(spans, offsets="utf16", answer="Revenue grew 15%.", sources=[without_parent])
    # python offsets are absolute already and need nothing
    assert to_records(spans, sources=[without_parent])[0]["char_start"] == start


@settings(max_examples=200)
@given(st.text(), st.data())
def test_utf16_offsets_property(text, data):
    positions = data.draw(st.lists(st.integers(0, len(text)), max_size=10))
    converted = utf16_offsets(text, positions)
    for position, unit in zip(positions, converted):
        assert unit == len(text[:position].encode("utf-16-le", "surrogatepass")) // 2
        assert _js_slice(text, 0, unit) == text[:position]


def test_utf16_offsets_bad_input():
    with pytest.raises(TypeError, match="text"):
        utf16_offsets(b"x", [0])
    with pytest.raises(ValueError, match="positions"):
        utf16_offsets("ab", [3])
    assert utf16_offsets("", []) == []


def test_rows_from_record_results_carry_record_ids(result):
    outcomes = [
        RecordResult("a", result),
        RecordResult("b", None, "ValueError: boom"),
        RecordResult("c", AlignmentResult([], answer="", sources=[])),
    ]
    rows = to_records(outcomes, level="sentence")
    assert [r["record_id"] for r in rows] == ["a", "a"]
    assert to_records(outcomes[0])[0]["record_id"] == "a"
    assert to_records(outcomes) == rows  # one row per sentence is the default


def test_to_records_bad_arguments(result):
    with pytest.raises(ValueError, match="level"):
        to_records(result, level="word")
    with pytest.raises(ValueError, match="offsets"):
        to_records(result, offsets="bytes")
    with pytest.raises(TypeError, match="results"):
        to_records("text")
    with pytest.raises(TypeError, match=r"results\[1\]"):
        to_records([result[0], RecordResult("x", None, "E: e")])
    with pytest.raises(TypeError, match="answer"):
        to_records(result, answer=3)
    assert to_records([]) == []


def test_to_dataframe(result):
    pandas = pytest.importorskip("pandas")
    frame = to_dataframe(result, level="sentence")
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["status"]) == ["partial", "unsupported"]
    assert frame["score"].isna().tolist() == [False, True]
    citations = to_dataframe(result, level="citation")
    assert {"char_start", "char_end", "evidence", "alignment_score"} <= set(citations.columns)
    assert list(citations["span_index"]) == [0]  # the unsupported sentence has no citation
    empty = to_dataframe([])
    assert len(empty) == 0


def test_to_dataframe_keeps_every_sentence_by_default():
    # the case: five sentences, the first with two citations, the last with none;
    # the default frame has one row per sentence, so status rates are rates over sentences
    pytest.importorskip("pandas")
    source = "Alpha rose. Beta fell. Gamma held. Delta grew."
    sentences = ["Alpha rose.", "Beta fell.", "Gamma held.", "Delta grew.", "Omega vanished."]
    answer = " ".join(sentences)
    spans, start = [], 0
    for index, sentence in enumerate(sentences):
        citations = ()
        found = source.find(sentence)
        if found >= 0:
            cite = Citation(score=2.0, source_id="s", source_index=0, candidate_index=0,
                            char_start=found, char_end=found + len(sentence), evidence=sentence)
            citations = (cite, cite) if index == 0 else (cite,)
        status = "supported" if citations else "unsupported"
        spans.append(SpanCitations(AnswerSpan(sentence, start, start + len(sentence)),
                                   citations, status))
        start += len(sentence) + 1
    result = AlignmentResult(spans, answer=answer, sources=[source])
    frame = to_dataframe(result)
    assert list(frame["span_index"]) == [0, 1, 2, 3, 4]
    assert (frame["status"] == "unsupported").mean() == 0.2
    assert list(frame["n_citations"]) == [2, 1, 1, 1, 0]
    by_citation = to_dataframe(result, level="citation")
    assert list(by_citation["span_index"]) == [0, 0, 1, 2, 3]


def test_to_dataframe_without_pandas_names_the_extra(result, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"citekit\[pandas\]"):
        to_dataframe(result)


def test_the_rows_are_importable_from_citekit_batch():
    # the conversion lives in its own module; citekit.batch stays its public path
    import citekit
    import citekit._rows
    import citekit.batch
    import citekit.results

    for name in ("to_records", "to_dataframe", "utf16_offsets", "read_jsonl", "write_jsonl"):
        assert getattr(citekit.batch, name) is getattr(citekit._rows, name), name
        assert name in citekit.batch.__all__
    assert citekit.batch.RecordResult is citekit.results.RecordResult
    assert citekit.RecordResult is RecordResult and citekit.to_records is to_records
    # and it lies below the scoring and the renderer: it imports neither
    code = (
        "import sys, citekit._rows; "
        "print([m for m in ('citekit.batch', 'citekit.display') if m in sys.modules])"
    )
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo
    )
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- JSON Lines


def test_jsonl_round_trip_and_errors(tmp_path, result):
    path = tmp_path / "rows.jsonl"
    rows = to_records(result, level="sentence")
    assert write_jsonl(rows, path) == 2
    assert list(read_jsonl(path)) == rows
    outcome_path = tmp_path / "results.jsonl"
    write_jsonl([RecordResult("a", result), RecordResult("b", None, "ValueError: x")], outcome_path)
    lines = list(read_jsonl(outcome_path))
    assert [SpanCitations.from_dict(d) for d in lines[0]["results"]] == list(result)
    assert lines[1] == {"id": "b", "error": "ValueError: x"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n\n{"id": 2,,}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl, line 3: invalid JSON"):
        list(read_jsonl(bad))
    for content, message in (
        (b'{"id": 1}\n{"id": "\xff"}\n', "line 2: not UTF-8 (byte 0xff at byte 9 of the line)"),
        (b'{"id": Infinity}\n', "line 1: invalid JSON (Infinity is not standard JSON)"),
        (b"[" * 50_000 + b"]" * 50_000, "line 1: JSON nested too deeply"),
    ):
        bad.write_bytes(content)
        with pytest.raises(ValueError, match=re.escape(f"bad.jsonl, {message}")):
            list(read_jsonl(bad))
    bad.write_bytes(b'\xef\xbb\xbf{"id": 1}\n')  # a byte order mark is skipped
    assert list(read_jsonl(bad)) == [{"id": 1}]
    with pytest.raises(FileNotFoundError):
        list(read_jsonl(tmp_path / "missing.jsonl"))
    with pytest.raises(TypeError, match="path"):
        read_jsonl(3)
    with pytest.raises(TypeError, match="path_or_file"):
        write_jsonl([], 3)
    buffer = io.StringIO()
    write_jsonl([{"t": "😀"}], buffer)
    assert buffer.getvalue() == '{"t": "😀"}\n'
    # standard JSON only: a non-finite number is written as null
    buffer = io.StringIO()
    assert write_jsonl([{"id": float("nan"), "x": [float("-inf"), 1.0]}], buffer) == 1
    assert buffer.getvalue() == '{"id": null, "x": [null, 1.0]}\n'
    strict = json.loads(buffer.getvalue(), parse_constant=pytest.fail)
    assert strict == {"id": None, "x": [None, 1.0]}


# ----------------------------------------------------------------------------- score_records


class EchoPipeline:
    """A picklable stand-in pipeline: one unsupported span per answer; fails on request."""

    def prepare(self, sources):
        return ("prepared", tuple(sources))

    def align(self, answer, sources):
        if "FAIL" in answer:
            raise RuntimeError(f"cannot align {answer!r}")
        spans = (
            [SpanCitations(AnswerSpan(answer, 0, len(answer)), (), "unsupported")] if answer else []
        )
        return AlignmentResult(
            spans,
            answer=answer,
            sources=sources[1] if sources and sources[0] == "prepared" else sources,
        )


def _records(n, fail_every=0):
    return [
        {
            "id": f"r{i}",
            "answer": f"answer {i}" + (" FAIL" if fail_every and i % fail_every == 0 else ""),
            "sources": [f"source {i}"],
        }
        for i in range(n)
    ]


def test_score_records_in_order_with_failures_reported():
    records = _records(10, fail_every=4)
    records.append({"id": "no-answer", "sources": []})
    records.append({"answer": 5})
    records.append("not a dict")
    out = score_records(records, pipeline=EchoPipeline(), show_progress=False, batch_size=3)
    assert [r.id for r in out] == [f"r{i}" for i in range(10)] + ["no-answer", 11, 12]
    failed = {r.id: r.error for r in out if not r.ok}
    assert set(failed) == {"r0", "r4", "r8", "no-answer", 11, 12}
    assert failed["r4"].startswith("RuntimeError: cannot align")
    assert "'answer'" in failed["no-answer"] and "answer" in failed[11]
    assert all(
        r.result[0].answer_span.text == f"answer {i}" for i, r in enumerate(out[:10]) if r.ok
    )


def test_shared_corpus_and_missing_sources():
    records = [{"id": 1, "answer": "a"}, {"id": 2, "answer": "b", "sources": ["own"]}]
    out = score_records(records, pipeline=EchoPipeline(), corpus=["shared"], show_progress=False)
    assert out[0].result.sources == ("shared",) and out[1].result.sources == ("own",)
    no_corpus = score_records(records[:1], pipeline=EchoPipeline(), show_progress=False)
    assert "no 'sources'" in no_corpus[0].error


def test_processes_give_identical_results_to_serial():
    records = _records(23, fail_every=5)
    serial = score_records(records, pipeline=EchoPipeline(), show_progress=False, batch_size=4)
    parallel = score_records(
        records, pipeline=EchoPipeline(), n_jobs=2, show_progress=False, batch_size=4
    )
    assert parallel == serial
    assert [r.result.sources for r in parallel if r.ok] == [
        r.result.sources for r in serial if r.ok
    ]


class ThreadCountPipeline(EchoPipeline):
    """Reports the numba thread count it runs with as the span's status text."""

    def align(self, answer, sources):
        import numba

        return AlignmentResult(
            [SpanCitations(AnswerSpan(answer, 0, len(answer)), (), "unsupported")],
            answer=answer,
            sources=(str(numba.get_num_threads()),),
        )


def test_worker_processes_run_the_kernels_on_one_thread():
    import numba

    before = numba.get_num_threads()
    records = _records(6)
    out = score_records(records, pipeline=ThreadCountPipeline(), n_jobs=2,
                        show_progress=False, batch_size=2)
    assert {r.result.sources for r in out} == {("1",)}
    serial = score_records(records, pipeline=ThreadCountPipeline(), show_progress=False)
    assert {r.result.sources for r in serial} == {(str(before),)}
    assert numba.get_num_threads() == before


def test_iter_score_records_streams_generators():
    def generate():
        for record in _records(5):
            yield record

    out = iter_score_records(generate(), pipeline=EchoPipeline(), show_progress=False)
    assert next(out).id == "r0"
    assert [r.id for r in out] == ["r1", "r2", "r3", "r4"]


def test_progress_bar_only_when_visible(monkeypatch):
    pytest.importorskip("tqdm")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    not_a_terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", not_a_terminal)
    score_records(_records(3), pipeline=EchoPipeline(), show_progress=True)
    assert not_a_terminal.getvalue() == ""  # e.g. a log file or a pipe: silent
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    assert len(score_records(_records(3), pipeline=EchoPipeline(), show_progress=True)) == 3

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    score_records(_records(3), pipeline=EchoPipeline(), show_progress=True)
    assert "3/3" in terminal.getvalue()
    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    score_records(_records(3), pipeline=EchoPipeline(), show_progress=False)
    assert quiet.getvalue() == ""
    monkeypatch.setitem(sys.modules, "tqdm", None)  # not installed: silent, still works
    assert len(score_records(_records(3), pipeline=EchoPipeline(), show_progress=True)) == 3
    assert quiet.getvalue() == ""


def test_a_missing_tqdm_is_explained_once_through_logging(monkeypatch, caplog):
    import logging

    import citekit._progress as progress_module

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(progress_module, "_NO_TQDM_SAID", [])
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(sys, "stderr", Terminal())
    with caplog.at_level(logging.INFO, logger="citekit"):
        for _ in range(2):
            score_records(_records(2), pipeline=EchoPipeline(), show_progress=True)
    said = [r.getMessage() for r in caplog.records if "tqdm" in r.getMessage()]
    assert said == ["score_records: no progress bar: tqdm is not installed (pip install tqdm)"]
    assert sys.stderr.getvalue() == ""  # the library does not write to stderr itself


class PidPipeline(EchoPipeline):
    """Records which process scored each answer (in the result's sources)."""

    def align(self, answer, sources):
        return AlignmentResult([], answer=answer, sources=[str(os.getpid())])


def _scoring_pids(outcomes):
    return [outcome.result.sources[0] for outcome in outcomes]


@pytest.fixture
def auto_at_once(monkeypatch):
    """n_jobs="auto" judging every run long enough for processes, on two CPUs."""
    import citekit.batch as batch_module

    monkeypatch.setattr(batch_module, "_AUTO_MIN_SECONDS", 0.0)
    monkeypatch.setattr(batch_module, "_AUTO_MEASURE_SECONDS", 0.0)
    monkeypatch.setattr(batch_module, "_usable_cpus", lambda: 2)
    monkeypatch.setattr(batch_module, "_main_module_is_guarded", lambda: True)
    return batch_module


def test_auto_scores_short_runs_in_this_process():
    # the default: a run estimated well under a minute never starts worker processes
    outcomes = score_records(_records(40), pipeline=PidPipeline(), show_progress=False)
    assert set(_scoring_pids(outcomes)) == {str(os.getpid())}
    assert [o.id for o in outcomes] == [f"r{i}" for i in range(40)]


@pytest.mark.parametrize("as_generator", [False, True])
def test_auto_moves_a_long_run_to_processes_after_timing_the_first_batch(
    auto_at_once, as_generator
):
    records = _records(12)
    given = (record for record in records) if as_generator else records
    outcomes = score_records(given, pipeline=PidPipeline(), show_progress=False, batch_size=4)
    pids = _scoring_pids(outcomes)
    assert [o.id for o in outcomes] == [r["id"] for r in records]
    assert pids[:4] == [str(os.getpid())] * 4  # the timed first batch
    assert str(os.getpid()) not in pids[4:]  # the rest in the workers
    serial = score_records(records, pipeline=EchoPipeline(), n_jobs=1, show_progress=False)
    assert score_records(records, pipeline=EchoPipeline(), show_progress=False) == serial


def test_auto_stays_in_this_process_when_workers_would_rerun_the_script(
    auto_at_once, monkeypatch
):
    monkeypatch.setattr(auto_at_once, "_main_module_is_guarded", lambda: False)
    outcomes = score_records(_records(12), pipeline=PidPipeline(), show_progress=False,
                             batch_size=4)
    assert set(_scoring_pids(outcomes)) == {str(os.getpid())}


def test_auto_stays_in_this_process_when_workers_cannot_start(auto_at_once, monkeypatch):
    def cannot_start(*args):
        raise RuntimeError("no processes here")

    monkeypatch.setattr(auto_at_once, "_start_pool", cannot_start)
    outcomes = score_records(_records(12), pipeline=PidPipeline(), show_progress=False,
                             batch_size=4)
    assert set(_scoring_pids(outcomes)) == {str(os.getpid())} and len(outcomes) == 12


def test_auto_starts_no_pool_for_a_run_that_has_ended(auto_at_once, monkeypatch):
    def must_not_start(*args):
        raise AssertionError("a pool was started with no records left")

    monkeypatch.setattr(auto_at_once, "_start_pool", must_not_start)
    for records in (_records(4), (record for record in _records(4))):
        outcomes = score_records(records, pipeline=PidPipeline(), show_progress=False,
                                 batch_size=4)
        assert set(_scoring_pids(outcomes)) == {str(os.getpid())} and len(outcomes) == 4


def test_auto_never_uses_processes_on_one_cpu(auto_at_once, monkeypatch):
    monkeypatch.setattr(auto_at_once, "_usable_cpus", lambda: 1)
    outcomes = score_records(_records(12), pipeline=PidPipeline(), show_progress=False,
                             batch_size=4)
    assert set(_scoring_pids(outcomes)) == {str(os.getpid())}


def test_auto_estimate_of_the_time_left():
    from citekit.batch import _worth_processes

    # 2,000 records at 1.3 ms each (the benchmark's shared corpus): about 3 s, in this process
    assert not _worth_processes(0.65, 500, 2_000, cpus=2)
    # 100,000 such records: about two minutes left, worth two workers
    assert _worth_processes(0.65, 500, 100_000, cpus=2)
    # not measured long enough yet, or a single CPU: no decision for processes
    assert not _worth_processes(0.1, 10, 10**9, cpus=2)
    assert not _worth_processes(100.0, 10, 10**9, cpus=1)
    # unknown length: a run that has lasted a minute is taken to last as long again
    assert not _worth_processes(30.0, 1000, None, cpus=4)
    assert _worth_processes(61.0, 1000, None, cpus=4)


def test_main_module_guard_detection(tmp_path, monkeypatch):
    import types

    from citekit.batch import _main_module_is_guarded

    for code, guarded in (
        ('import citekit\nif __name__ == "__main__":\n    main()\n', True),
        ("if '__main__' == __name__:\n    main()\n", True),
        ("from citekit import score_records\nscore_records([])\n", False),
        ("def f(:\n", False),  # unreadable: assume the worst
    ):
        script = tmp_path / "script.py"
        script.write_text(code)
        monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace(__file__=str(script)))
        assert _main_module_is_guarded() is guarded, code
    # a notebook or the REPL: nothing to re-run
    monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace())
    assert _main_module_is_guarded() is True


def test_score_records_bad_arguments():
    pipe = EchoPipeline()
    with pytest.raises(ValueError, match="n_jobs"):
        score_records([], pipeline=pipe, n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs must be 'auto', an int >= 1 or -1, got '2'"):
        score_records([], pipeline=pipe, n_jobs="2")
    with pytest.raises(ValueError, match=r"n_jobs must be 'auto', an int >= 1, or -1 .*got -3$"):
        score_records([], pipeline=pipe, n_jobs=-3)
    with pytest.raises(TypeError, match="n_jobs must be 'auto' or an int, got float"):
        score_records([], pipeline=pipe, n_jobs=2.0)
    with pytest.raises(TypeError, match="n_jobs"):
        score_records([], pipeline=pipe, n_jobs=True)
    with pytest.raises(ValueError, match="batch_size"):
        score_records([], pipeline=pipe, batch_size=0)
    with pytest.raises(TypeError, match="show_progress"):
        score_records([], pipeline=pipe, show_progress="yes")
    with pytest.raises(TypeError, match="records"):
        score_records("answer", pipeline=pipe)
    with pytest.raises(TypeError, match="pipeline"):
        score_records([], pipeline=object())
    with pytest.raises(ValueError, match="mp_context"):
        score_records([], pipeline=pipe, mp_context="threads")
    assert score_records([], pipeline=pipe) == []


# ----------------------------------------------------------------------------- real pipeline


@pytest.fixture(scope="module")
def example_data():
    pytest.importorskip("citekit.pipeline")
    from citekit.data import load_example_answers, load_example_sources

    return load_example_sources(), load_example_answers()


@pytest.mark.slow
def test_real_pipeline_serial_processes_and_dask_agree(example_data):
    from citekit.pipeline import Pipeline

    sources, answers = example_data
    pipeline = Pipeline()
    corpus = pipeline.prepare(sources)
    records = [{"id": a["id"], "answer": a["answer"]} for a in answers]
    records.append(
        {
            "id": "own-sources",
            "answer": "Cats purr. Dogs bark.",
            "sources": ["Cats purr when content.", "Dogs bark at night."],
        }
    )
    records.append({"id": "broken", "answer": None})
    serial = score_records(
        records, pipeline=pipeline, corpus=corpus, show_progress=False, batch_size=5
    )
    assert [r.id for r in serial] == [r["id"] for r in records]
    assert [r.error for r in serial][:-1] == [None] * (len(records) - 1)
    assert not serial[-1].ok
    assert serial[0].result.sources == corpus.sources
    direct = pipeline.align_many([a["answer"] for a in answers], corpus)
    assert [r.result for r in serial[: len(answers)]] == direct
    parallel = score_records(
        records, pipeline=pipeline, corpus=corpus, n_jobs=2, show_progress=False, batch_size=5
    )
    assert parallel == serial
    for a, b in zip(parallel, serial):
        if a.ok:
            assert a.result.sources == b.result.sources and a.result.answer == b.result.answer

    distributed = pytest.importorskip("distributed")
    # threads in this process, but real TCP on loopback between client, scheduler and worker
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
    )
    with cluster, distributed.Client(cluster):
        on_dask = score_dask(records, pipeline=pipeline, corpus=corpus, npartitions=3, batch_size=5)
    assert on_dask == serial
    assert on_dask[0].result.sources == corpus.sources
    frame_rows = to_records(serial, level="sentence")
    assert len(frame_rows) == sum(len(r.result) for r in serial if r.ok)


def test_dask_partitions_run_the_kernels_on_one_thread():
    pytest.importorskip("dask")
    import numba

    before = numba.get_num_threads()
    out = score_dask(_records(4), pipeline=ThreadCountPipeline(), npartitions=2,
                     scheduler="sync")
    assert {r.result.sources for r in out} == {("1",)}
    assert numba.get_num_threads() == before


def test_score_dask_with_the_synchronous_scheduler():
    pytest.importorskip("dask")
    records = _records(9, fail_every=4)
    serial = score_records(records, pipeline=EchoPipeline(), show_progress=False)
    assert score_dask(records, pipeline=EchoPipeline(), npartitions=4, scheduler="sync") == serial
    assert score_dask([], pipeline=EchoPipeline()) == []
    with pytest.raises(TypeError, match="npartitions"):
        score_dask(records, pipeline=EchoPipeline(), npartitions=1.5)


def test_score_records_default_pipeline_on_real_data(example_data):
    sources, answers = example_data
    records = [{"id": a["id"], "answer": a["answer"], "sources": sources} for a in answers[:2]]
    out = score_records(records, show_progress=False)
    assert all(r.ok for r in out)
    for outcome in out:
        for item in outcome.result:
            for citation in item.citations:
                text = sources[citation.source_index].text
                assert text[citation.char_start : citation.char_end] == citation.evidence


@st.composite
def _texts_with_citation_rows(draw):
    source = draw(st.text(max_size=50))
    answer = draw(st.text(max_size=30))
    cuts = sorted(draw(st.lists(st.integers(0, len(source)), min_size=2, max_size=2)))
    answer_cuts = sorted(draw(st.lists(st.integers(0, len(answer)), min_size=2, max_size=2)))
    citation = Citation(
        score=1.0,
        source_id="s",
        source_index=0,
        candidate_index=0,
        char_start=cuts[0],
        char_end=cuts[1],
        evidence=source[cuts[0] : cuts[1]],
        answer_char_start=answer_cuts[0],
        answer_char_end=answer_cuts[1],
    )
    span = AnswerSpan(answer[answer_cuts[0] : answer_cuts[1]], answer_cuts[0], answer_cuts[1])
    return source, answer, [SpanCitations(span, (citation,), "supported", (tuple(answer_cuts),))]


@settings(max_examples=150)
@given(_texts_with_citation_rows())
def test_property_utf16_rows_slice_like_javascript(case):
    source, answer, spans = case
    result = AlignmentResult(spans, answer=answer, sources=[source])
    (citation_row,) = to_records(result, offsets="utf16")
    (sentence_row,) = to_records(result, level="sentence", offsets="utf16")
    for row in (citation_row, sentence_row):
        assert _js_slice(source, row["char_start"], row["char_end"]) == row["evidence"]
        assert _js_slice(answer, row["sentence_start"], row["sentence_end"]) == row["sentence"]
        assert (
            _js_slice(answer, row["answer_char_start"], row["answer_char_end"])
            == answer[
                spans[0].citations[0].answer_char_start : spans[0].citations[0].answer_char_end
            ]
        )
    (gap,) = sentence_row["unsupported_spans"]
    assert _js_slice(answer, *gap) == spans[0].answer_span.text


class RefusesEmptyAnswers(EchoPipeline):
    def align(self, answer, sources):
        if not answer:
            raise ValueError("empty answer")
        return super().align(answer, sources)


def test_pipelines_that_refuse_empty_answers_still_run_in_parallel():
    records = [{"id": i, "answer": f"a{i}"} for i in range(6)]
    serial = score_records(
        records,
        pipeline=RefusesEmptyAnswers(),
        corpus=["shared"],
        show_progress=False,
        batch_size=2,
    )
    parallel = score_records(
        records,
        pipeline=RefusesEmptyAnswers(),
        corpus=["shared"],
        n_jobs=2,
        show_progress=False,
        batch_size=2,
    )
    assert parallel == serial and all(r.ok for r in parallel)
    assert all(r.result.sources == ("shared",) for r in parallel)
    on_dask = score_dask(
        records, pipeline=RefusesEmptyAnswers(), corpus=["shared"], npartitions=2, scheduler="sync"
    )
    assert on_dask == serial and all(r.result.sources == ("shared",) for r in on_dask)


_UNGUARDED_SCRIPT = """
from citekit import score_records

# no 'if __name__ == "__main__":' guard: every spawned worker runs this again
outcomes = score_records(
    [{"id": "a", "answer": "Water boils.", "sources": ["Water boils at 100 degrees."]}],
    n_jobs=2, show_progress=False,
)
print("scored", [o.ok for o in outcomes])
"""


@pytest.mark.slow
def test_a_pool_that_cannot_start_raises_instead_of_failing_every_record(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED_SCRIPT)
    import citekit._compiling as compiling

    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600,
        env=compiling.child_environment(), cwd=tmp_path,
    )
    assert done.returncode != 0
    assert "scored" not in done.stdout
    assert "RuntimeError: score_records could not start its worker processes" in done.stderr
    assert "if __name__ == " in done.stderr.splitlines()[-1]
    assert ".." not in done.stderr.splitlines()[-1]  # one full stop after the pool's reason


class CrashingPipeline(EchoPipeline):
    """Kills its worker process on request (a segfault in native code looks like this)."""

    def align(self, answer, sources):
        if "CRASH" in answer:
            import os

            os._exit(3)
        return super().align(answer, sources)


@pytest.mark.slow
def test_a_dying_worker_costs_only_the_records_it_took_down():
    records = _records(8)
    records[5]["answer"] += " CRASH"
    out = score_records(
        records, pipeline=CrashingPipeline(), n_jobs=2, show_progress=False, batch_size=2
    )
    assert [r.id for r in out] == [r["id"] for r in records]
    assert not out[5].ok
    for outcome in out:
        assert outcome.ok or "BrokenProcessPool" in outcome.error or "terminated" in outcome.error
    # stopping early does not hang and leaves no work behind
    stream = iter_score_records(
        _records(40), pipeline=EchoPipeline(), n_jobs=2, show_progress=False, batch_size=2
    )
    assert next(stream).id == "r0"
    stream.close()


def test_record_result_renders_in_notebooks(result):
    page = RecordResult("q<1>", result)._repr_html_()
    assert "record &#x27;q&lt;1&gt;&#x27;" in page and 'class="ck-root"' in page
    failed = RecordResult("q2", None, "ValueError: <bad>")._repr_html_()
    assert "ValueError: &lt;bad&gt;" in failed
