"""Tests of the evaluation harness (citekit.evaluate) on hand-made records with known answers."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.evaluate import (
    EvalRecord,
    EvalUnit,
    EvaluationReport,
    GoldEvidence,
    evaluate,
    load_records,
    roc_auc,
    run_pipeline,
    score_predictions,
)
from citekit.results import AnswerSpan, Citation, EvidenceSpan, SourceDocument, SpanCitations

EVAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "eval"
HAS_PIPELINE = importlib.util.find_spec("citekit.pipeline") is not None


def cite(source_id, start, end, text, *, coverage=1.0, answer=(0, 0), spans=None, source_index=0):
    evidence_spans = tuple(EvidenceSpan(s, e, text[s:e]) for s, e in spans) if spans else ()
    return Citation(
        score=coverage,
        source_id=source_id,
        source_index=source_index,
        candidate_index=0,
        char_start=start,
        char_end=end,
        evidence=text[start:end],
        evidence_spans=evidence_spans,
        components={"answer_coverage": coverage},
        answer_char_start=answer[0],
        answer_char_end=answer[1],
    )


def span(answer, start, end, status, citations=(), unsupported=()):
    return SpanCitations(
        AnswerSpan(answer[start:end], start, end), tuple(citations), status, tuple(unsupported)
    )


def record_dict(**overrides):
    data = {
        "dataset": "toy",
        "id": "r1",
        "answer": "Revenue grew 15%. Profits fell.",
        "sources": [
            {"id": "a", "text": "In 2024 revenue grew 15%."},
            {"id": "b", "text": "Profits fell 3%."},
        ],
        "units": [
            {
                "start": 0,
                "end": 17,
                "text": "Revenue grew 15%.",
                "label": "supported",
                "evidence": [{"source_id": "a", "start": 8, "end": 25}],
            },
            {
                "start": 18,
                "end": 31,
                "text": "Profits fell.",
                "label": "unsupported",
                "evidence": [],
            },
        ],
        "unsupported_spans": [],
    }
    data.update(overrides)
    return data


# ------------------------------------------------------------------------------ loading


def test_record_from_dict_reads_schema():
    record = EvalRecord.from_dict(record_dict())
    assert record.id == "r1" and record.dataset == "toy"
    assert [s.id for s in record.sources] == ["a", "b"]
    assert record.units[0].text == "Revenue grew 15%."
    assert record.units[0].evidence_sets == ((GoldEvidence("a", 8, 25),),)
    assert record.units[1].has_evidence is False


def test_record_keeps_alternatives_and_drops_empty_sets():
    data = record_dict()
    data["units"][1]["evidence_alternatives"] = [[], [{"source_id": "b", "start": 0, "end": 12}]]
    record = EvalRecord.from_dict(data)
    assert record.units[1].evidence_sets == ((GoldEvidence("b", 0, 12),),)


@pytest.mark.parametrize(
    "change, error, message",
    [
        (lambda d: d["units"][0].update(end=99), ValueError, "units\\[0\\]"),
        (lambda d: d["units"][0].update(label="maybe"), ValueError, "label"),
        (lambda d: d["units"][0]["evidence"][0].update(source_id="zzz"), ValueError,
         "unknown source_id"),
        (lambda d: d["units"][0]["evidence"][0].update(end=1000), ValueError, "evidence"),
        (lambda d: d.update(unsupported_spans=[{"start": 5, "end": 2}]), ValueError,
         "unsupported_spans"),
        (lambda d: d.pop("answer"), ValueError, "answer"),
        (lambda d: d["units"][0].pop("end"), ValueError, r"units\[0\] is missing the key 'end'"),
        # a list where an object belongs (once a bare "list indices must be integers")
        (lambda d: d.update(unsupported_spans=[[26, 50]]), TypeError, r"spans\[0\] must be a JSON"),
        (lambda d: d["units"].__setitem__(0, [0, 5]), TypeError, r"units\[0\] must be a JSON"),
        (lambda d: d["units"][0].__setitem__("evidence", [["a", 0, 3]]), TypeError,
         "evidence must be"),
        (lambda d: d["sources"].__setitem__(0, "text"), TypeError, r"sources\[0\] must be a JSON"),
    ],
)
def test_record_rejects_bad_offsets_and_fields(change, error, message):
    data = record_dict()
    change(data)
    with pytest.raises(error, match=message):
        EvalRecord.from_dict(data)


def test_record_type_errors_name_the_field():
    with pytest.raises(TypeError, match="data"):
        EvalRecord.from_dict(["not", "a", "mapping"])
    with pytest.raises(TypeError, match="answer"):
        EvalRecord.from_dict(record_dict(answer=5))
    with pytest.raises(TypeError, match="start"):
        data = record_dict()
        data["units"][0]["start"] = "0"
        EvalRecord.from_dict(data)


def test_the_readme_sample_record_evaluates(tmp_path):
    readme = (Path(__file__).resolve().parents[1] / "README.rst").read_text(encoding="utf-8")
    start = readme.index('        {"id": "r1"')
    block = readme[start : readme.index("\n\n", start)]
    record = json.loads(" ".join(line.strip() for line in block.splitlines()))
    path = tmp_path / "sample.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = evaluate(load_records(path))
    assert report.metrics["label_accuracy"] == 1.0
    assert report.metrics["evidence_char_f1"] == 1.0
    assert report.counts["records"] == 1 and report.counts["units"] == 2


def test_load_records_limit_blank_lines_and_errors(tmp_path):
    path = tmp_path / "toy.jsonl"
    lines = [json.dumps(record_dict(id=str(i))) for i in range(3)]
    path.write_text(lines[0] + "\n\n" + lines[1] + "\n" + lines[2] + "\n", encoding="utf-8")
    assert [r.id for r in load_records(path)] == ["0", "1", "2"]
    assert [r.id for r in load_records(str(path), limit=2)] == ["0", "1"]
    assert load_records(path, limit=0) == []
    with pytest.raises(ValueError, match="limit"):
        load_records(path, limit=-1)
    with pytest.raises(TypeError, match="path"):
        load_records(3)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n{oops\n", encoding="utf-8")
    # the one JSON Lines reader's wording: file, line, what is wrong
    with pytest.raises(ValueError, match=r"bad.jsonl, line 2: invalid JSON \(Expecting"):
        load_records(bad)
    bad.write_text(lines[0] + "\n\n[1]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl, line 3: expected a JSON object, got list"):
        load_records(bad)
    bad.write_bytes(lines[0].encode() + b"\n\xff\n")
    with pytest.raises(ValueError, match="bad.jsonl, line 2: not UTF-8"):
        load_records(bad)
    # a record that breaks the schema: the line, then the field
    bad.write_text(lines[0] + "\n" + json.dumps(record_dict(id="x", answer=5)) + "\n")
    with pytest.raises(TypeError, match=r"bad.jsonl, line 2: record 'x'.answer must be a str"):
        load_records(bad)
    bad.write_text(json.dumps(record_dict(units=[{"start": 0, "end": 99}])) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl, line 1: record 'r1'.units\[0\]: need"):
        load_records(bad)
    with pytest.raises(FileNotFoundError):
        load_records(tmp_path / "missing.jsonl")
    # the limit stops reading: a bad line after it is never read
    bad.write_text(lines[0] + "\n{oops\n", encoding="utf-8")
    assert [r.id for r in load_records(bad, limit=1)] == ["0"]


# ------------------------------------------------------------------------------ AUROC


def brute_force_auc(scores, positives):
    pairs = [
        (p, n)
        for p, n in itertools.product(
            [s for s, y in zip(scores, positives) if y],
            [s for s, y in zip(scores, positives) if not y],
        )
    ]
    return sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in pairs) / len(pairs)


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.1]), st.booleans()),
        min_size=2,
        max_size=30,
    )
)
def test_roc_auc_equals_pair_counting(pairs):
    scores, positives = [s for s, _ in pairs], [y for _, y in pairs]
    if all(positives) or not any(positives):
        assert math.isnan(roc_auc(scores, positives))
    else:
        assert roc_auc(scores, positives) == pytest.approx(brute_force_auc(scores, positives))


def test_roc_auc_known_values_and_errors():
    assert roc_auc([3, 2, 1], [True, True, False]) == 1.0
    assert roc_auc([1, 2, 3], [True, True, False]) == 0.0
    assert roc_auc([1, 1, 1, 1], [True, False, True, False]) == 0.5
    assert math.isnan(roc_auc([], []))
    with pytest.raises(ValueError, match="equal length"):
        roc_auc([1, 2], [True])
    with pytest.raises(ValueError, match="finite"):
        roc_auc([float("nan"), 1], [True, False])


# ------------------------------------------------------------------------------ scoring


def test_labels_evidence_and_sources_of_a_known_prediction():
    record = EvalRecord.from_dict(record_dict())
    source_a = record.sources[0].text
    # sentence 1 supported with exactly the gold evidence; sentence 2 wrongly partial
    prediction = [
        span(record.answer, 0, 17, "supported", [cite("a", 8, 25, source_a, coverage=1.0)]),
        span(
            record.answer,
            18,
            31,
            "partial",
            [cite("b", 0, 7, record.sources[1].text, coverage=0.5, source_index=1)],
        ),
    ]
    report = score_predictions([record], [prediction])
    m = report.metrics
    assert m["label_accuracy"] == 0.5
    # classes present in gold: supported (F1 1) and unsupported (F1 0)
    assert m["label_macro_f1"] == 0.5
    assert (m["supported_precision"], m["supported_recall"], m["supported_f1"]) == (1.0, 1.0, 1.0)
    assert m["support_auroc"] == 1.0
    assert m["evidence_span_f1"] == 1.0 and m["evidence_char_f1"] == 1.0
    assert m["evidence_top_coverage"] == 1.0 and m["evidence_top_covered"] == 1.0
    assert m["source_accuracy"] == 1.0
    assert report.counts == {
        "records": 1,
        "units": 2,
        "units_labeled": 2,
        "units_with_evidence": 1,
        "units_with_source": 1,
    }
    assert [u.predicted_status for u in report.units] == ["supported", "partial"]
    assert "unsupported_char_f1" not in m  # the record annotates no unsupported spans


def test_char_and_span_evidence_counts():
    text = "0123456789" * 5
    record = EvalRecord(
        "r",
        "Claim.",
        (SourceDocument("s", text),),
        (
            EvalUnit(
                0,
                6,
                "Claim.",
                "supported",
                ((GoldEvidence("s", 10, 20), GoldEvidence("s", 30, 40)),),
            ),
        ),
    )
    # predicted: [15, 25) overlaps the first gold span by 5 chars, [45, 50) hits nothing
    citation = cite("s", 15, 50, text, spans=[(15, 25), (45, 50)])
    m = score_predictions([record], [[span("Claim.", 0, 6, "supported", [citation])]]).metrics
    assert m["evidence_span_precision"] == 0.5 and m["evidence_span_recall"] == 0.5
    assert m["evidence_char_precision"] == pytest.approx(5 / 15)
    assert m["evidence_char_recall"] == pytest.approx(5 / 20)
    assert m["evidence_top_coverage"] == pytest.approx(0.25) and m["evidence_top_covered"] == 0.0


def test_evidence_alternatives_pick_the_best_gold_set():
    text = "abcdefghijklmnopqrstuvwxyz"
    unit = EvalUnit(
        0, 3, "Hi.", "supported", ((GoldEvidence("s", 0, 5),), (GoldEvidence("s", 10, 15),))
    )
    record = EvalRecord("r", "Hi.", (SourceDocument("s", text),), (unit,))
    m = score_predictions(
        [record], [[span("Hi.", 0, 3, "supported", [cite("s", 10, 15, text)])]]
    ).metrics
    assert (
        m["evidence_char_f1"] == 1.0
        and m["evidence_span_f1"] == 1.0
        and m["evidence_top_covered"] == 1.0
    )


def test_spans_disagreeing_on_a_unit_make_it_partial_and_tiny_overlaps_do_not_count():
    answer = "Alpha beta. Gamma delta. Epsilon."
    unit = EvalUnit(0, 24, answer[:24], "partial")
    record = EvalRecord("r", answer, (SourceDocument("s", "Alpha beta."),), (unit,))
    citation = cite("s", 0, 11, "Alpha beta.", coverage=1.0)
    both = [span(answer, 0, 11, "supported", [citation]), span(answer, 12, 24, "unsupported")]
    outcome = score_predictions([record], [both]).units[0]
    assert outcome.predicted_status == "partial"
    assert outcome.support_score == pytest.approx(11 / 23)
    # a span that only grazes the unit (1 of its 22 characters) does not speak for it
    grazing = [span(answer, 0, 11, "supported", [citation]), span(answer, 10, 33, "unsupported")]
    small = EvalRecord("r", answer, record.sources, (EvalUnit(0, 11, answer[:11], "supported"),))
    assert score_predictions([small], [grazing]).units[0].predicted_status == "supported"


def test_unit_without_overlapping_prediction_is_unsupported():
    record = EvalRecord("r", "Hi. Yo.", (), (EvalUnit(4, 7, "Yo.", "supported"),))
    outcome = score_predictions(
        [record], [[span("Hi. Yo.", 0, 3, "supported", [cite("s", 0, 1, "x")])]]
    ).units[0]
    assert (outcome.predicted_status, outcome.support_score, outcome.top_citation) == (
        "unsupported",
        0.0,
        None,
    )


def test_top_citation_prefers_the_one_aligned_to_the_unit():
    answer = "Cats purr [1] and dogs bark [2]."
    sources = (SourceDocument("1", "Cats purr."), SourceDocument("2", "Dogs bark."))
    units = (
        EvalUnit(0, 9, "Cats purr", "supported", ((GoldEvidence("1", 0, 9),),)),
        EvalUnit(18, 27, "dogs bark", "supported", ((GoldEvidence("2", 0, 9),),)),
    )
    record = EvalRecord("r", answer, sources, units)
    citations = [
        cite("2", 0, 9, "Dogs bark.", answer=(18, 27), source_index=1),
        cite("1", 0, 9, "Cats purr.", answer=(0, 9)),
    ]
    report = score_predictions([record], [[span(answer, 0, len(answer), "supported", citations)]])
    assert [u.top_citation.source_id for u in report.units] == ["1", "2"]
    assert report.metrics["source_accuracy"] == 1.0
    assert report.metrics["evidence_char_precision"] == 1.0  # each unit keeps only its own citation


def test_unsupported_character_metrics_ignore_white_space():
    answer = "Paris is big and old."
    record = EvalRecord(
        "r", answer, (), (EvalUnit(0, 21, answer, "partial"),), unsupported_spans=((9, 20),)
    )  # "big and old"
    prediction = [
        span(answer, 0, 21, "partial", [cite("s", 0, 5, "Paris")], unsupported=[(9, 12), (17, 20)])
    ]
    m = score_predictions([record], [prediction]).metrics
    assert m["unsupported_char_precision"] == 1.0
    assert m["unsupported_char_recall"] == pytest.approx(6 / 9)
    # an unsupported span without explicit ranges flags all of its characters
    m = score_predictions([record], [[span(answer, 0, 21, "unsupported")]]).metrics
    assert m["unsupported_char_recall"] == 1.0
    assert m["unsupported_char_precision"] == pytest.approx(9 / 17)


def test_seconds_and_argument_errors():
    record = EvalRecord("r", "Hi.", (), (EvalUnit(0, 3, "Hi.", "supported"),))
    m = score_predictions([record], [[]], seconds=[0.5]).metrics
    assert m["seconds_per_record_mean"] == 0.5 and m["seconds_per_record_median"] == 0.5
    with pytest.raises(ValueError, match="seconds"):
        score_predictions([record], [[]], seconds=[])
    with pytest.raises(ValueError, match="predictions"):
        score_predictions([record], [])
    with pytest.raises(TypeError, match="predictions"):
        score_predictions([record], [["not a span"]])
    with pytest.raises(TypeError, match="predictions"):
        score_predictions([record], None)
    with pytest.raises(TypeError, match="records"):
        score_predictions(["not a record"], [[]])
    with pytest.raises(TypeError, match="records"):
        score_predictions("records", [])


def test_empty_inputs_give_an_empty_report():
    report = score_predictions([], [])
    assert report.metrics == {} and report.counts["records"] == 0
    record = EvalRecord("r", "", (), ())
    assert score_predictions([record], [[]]).metrics == {}


def test_report_table_and_dict():
    record = EvalRecord.from_dict(record_dict())
    report = score_predictions([record], [[]])
    table = report.to_table()
    assert table.splitlines()[0] == "dataset: toy"
    assert "label_accuracy" in table and "0.0000" in table
    assert report.to_dict()["counts"]["units"] == 2
    assert isinstance(report, EvaluationReport)


# ------------------------------------------------------------------------------ running


class EchoPipeline:
    """Calls every input one supported sentence citing the first source's start."""

    def __init__(self):
        self.calls = []

    def align(self, answer, sources):
        self.calls.append(answer)
        if not sources:
            return [SpanCitations(AnswerSpan(answer, 0, len(answer)), (), "unsupported")]
        first = sources[0].text
        return [
            SpanCitations(
                AnswerSpan(answer, 0, len(answer)),
                (cite(sources[0].id, 0, min(3, len(first)), first, answer=(0, len(answer))),),
                "supported",
                ((0, 1),),
            )
        ]


def test_run_pipeline_whole_answer_and_per_unit():
    record = EvalRecord.from_dict(record_dict())
    pipeline = EchoPipeline()
    predictions, seconds = run_pipeline([record], pipeline)
    assert pipeline.calls == [record.answer] and len(seconds) == 1 and seconds[0] >= 0
    assert predictions[0][0].answer_span.char_end == len(record.answer)

    pipeline = EchoPipeline()
    predictions, _ = run_pipeline([record], pipeline, per_unit=True)
    assert pipeline.calls == [u.text for u in record.units]
    second = predictions[0][1]
    assert (second.answer_span.char_start, second.answer_span.char_end) == (18, 31)
    assert (
        record.answer[second.answer_span.char_start : second.answer_span.char_end]
        == second.answer_span.text
    )
    assert (second.citations[0].answer_char_start, second.citations[0].answer_char_end) == (18, 31)
    assert second.unsupported_spans == ((18, 19),)

    report = evaluate([record], EchoPipeline(), per_unit=True)
    assert report.metrics["label_accuracy"] == 0.5
    assert "seconds_per_record_mean" in report.metrics


def test_run_pipeline_argument_errors():
    record = EvalRecord.from_dict(record_dict())
    with pytest.raises(TypeError, match="pipeline"):
        run_pipeline([record], object())
    with pytest.raises(TypeError, match="per_unit"):
        run_pipeline([record], EchoPipeline(), per_unit=1)


# ------------------------------------------------------------------ property: an oracle scores 1


@st.composite
def annotated_records(draw):
    answer = draw(st.text(min_size=1, max_size=40))
    source_text = draw(st.text(min_size=1, max_size=60))
    cuts = sorted(draw(st.lists(st.integers(0, len(answer)), min_size=2, max_size=6, unique=True)))
    units = []
    for start, end in zip(cuts, cuts[1:]):
        ev_start = draw(st.integers(0, len(source_text) - 1))
        ev_end = draw(st.integers(ev_start + 1, len(source_text)))
        label = draw(st.sampled_from(["supported", "partial", "unsupported"]))
        evidence = ((GoldEvidence("s", ev_start, ev_end),),) if label != "unsupported" else ()
        units.append(EvalUnit(start, end, answer[start:end], label, evidence))
    unsupported = tuple((u.start, u.end) for u in units if u.label == "unsupported")
    return EvalRecord("r", answer, (SourceDocument("s", source_text),), tuple(units), unsupported)


def oracle(record):
    """Predictions that copy the gold annotation (one span per unit)."""
    spans = []
    for unit in record.units:
        if unit.label == "unsupported":
            spans.append(
                SpanCitations(AnswerSpan(unit.text, unit.start, unit.end), (), "unsupported")
            )
            continue
        ev = unit.evidence_sets[0][0]
        text = record.sources[0].text
        citation = cite(
            "s",
            ev.start,
            ev.end,
            text,
            coverage=1.0 if unit.label == "supported" else 0.5,
            answer=(unit.start, unit.end),
        )
        spans.append(
            SpanCitations(AnswerSpan(unit.text, unit.start, unit.end), (citation,), unit.label)
        )
    return spans


@settings(max_examples=60)
@given(st.lists(annotated_records(), min_size=1, max_size=4))
def test_an_oracle_scores_perfectly_on_arbitrary_unicode(records):
    report = score_predictions(records, [oracle(r) for r in records])
    m = report.metrics
    assert m["label_accuracy"] == 1.0 and m["label_macro_f1"] == 1.0
    for key in ("evidence_span_f1", "evidence_char_f1", "evidence_top_covered"):
        if key in m:
            assert m[key] == 1.0
    if "support_auroc" in m:
        assert m["support_auroc"] == 1.0
    if "unsupported_char_f1" in m and report.counts["unsupported_gold_chars"]:
        assert m["unsupported_char_f1"] == 1.0
    assert all(0.0 <= value <= 1.0 for value in m.values())


# ------------------------------------------------------------------------------ real annotated data


needs_eval = pytest.mark.skipif(not EVAL_DIR.is_dir(), reason="../shared/eval not present")


@needs_eval
def test_every_eval_file_loads_and_an_oracle_scores_one():
    for path in sorted(EVAL_DIR.glob("*.jsonl")):
        records = load_records(path, limit=40)
        assert records, path
        for record in records:
            for unit in record.units:
                assert record.answer[unit.start : unit.end] == unit.text
        predictions = []
        for record in records:
            spans = []
            for unit in record.units:
                evidence = unit.evidence_sets[0] if unit.evidence_sets else ()
                texts = {s.id: s.text for s in record.sources}
                citations = tuple(
                    cite(
                        ev.source_id,
                        ev.start,
                        ev.end,
                        texts[ev.source_id],
                        answer=(unit.start, unit.end),
                    )
                    for ev in evidence
                )
                # every gold evidence span is cited (an "unsupported" unit with gold evidence,
                # e.g. an ExpertQA claim and its cited passage, becomes partial so it can cite)
                status = "partial" if unit.label in (None, "unsupported") else unit.label
                if not citations:
                    status = "unsupported"
                spans.append(
                    SpanCitations(
                        AnswerSpan(unit.text, unit.start, unit.end),
                        citations,
                        status,
                        tuple(
                            (s, e)
                            for s, e in record.unsupported_spans
                            if unit.start <= s and e <= unit.end
                        ),
                    )
                )
            predictions.append(spans)
        metrics = score_predictions(records, predictions).metrics
        for key in (
            "evidence_char_recall",
            "evidence_char_precision",
            "evidence_span_f1",
            "unsupported_char_f1",
        ):
            if key in metrics:
                assert metrics[key] == 1.0, (path.name, key)


@needs_eval
@pytest.mark.skipif(not HAS_PIPELINE, reason="citekit.pipeline not available")
def test_default_pipeline_on_real_records_gives_valid_metrics():
    records = load_records(EVAL_DIR / "wice_dev.jsonl", limit=5)
    report = evaluate(records)
    assert report.counts["records"] == 5
    assert all(0.0 <= v <= 1.0 for k, v in report.metrics.items() if not k.startswith("seconds"))
