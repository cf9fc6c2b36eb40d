"""The citekit command line: demo, align, highlight, evaluate; help and error handling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citekit.cli import main
from citekit.data import load_example_answers, load_example_sources
from citekit.results import SpanCitations
from test_evaluate import record_dict

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run ``python -m citekit.cli`` in a fresh process (as the ``citekit`` script does)."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "citekit.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture
def files(tmp_path):
    sources = tmp_path / "sources.jsonl"
    answers = tmp_path / "answers.jsonl"
    with open(sources, "w", encoding="utf-8") as handle:
        for source in load_example_sources():
            handle.write(
                json.dumps(
                    {"id": source.id, "text": source.text, "title": source.metadata["title"]},
                    ensure_ascii=False,
                )
                + "\n"
            )
    with open(answers, "w", encoding="utf-8") as handle:
        for record in load_example_answers():
            handle.write(
                json.dumps({"id": record["id"], "answer": record["answer"]}, ensure_ascii=False)
                + "\n"
            )
    return tmp_path, sources, answers


def _read_lines(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


# ----------------------------------------------------------------------------- demo


def test_demo_prints_a_readable_report(tmp_path):
    html_path = tmp_path / "demo.html"
    completed = run_cli("demo", "--html", str(html_path))
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    for record in load_example_answers():
        assert f"[{record['id']}]" in out
    assert "[supported]" in out and "[unsupported]" in out and "[partial]" in out
    assert "<- northwind-annual-report-2023 [" in out
    assert "sentences:" in out and "supported," in out
    page = html_path.read_text(encoding="utf-8")
    assert page.count('class="ck-root"') == len(load_example_answers())
    assert page.count('class="ck-legend"') == 1  # one legend for the page


def test_demo_quotes_are_exact_source_slices(capsys):
    assert main(["demo", "--answer", "council-library", "--width", "400"]) == 0
    out = capsys.readouterr().out
    text = {s.id: s.text for s in load_example_sources()}["harbor-city-council-2024-05-14"]
    quoted = [line for line in out.splitlines() if line.strip().startswith("<- ")]
    assert quoted
    for line in quoted:
        bracket = line[line.index("[") + 1 : line.index("]")]
        start, end = map(int, bracket.split(":"))
        quote = line[line.index(': "') + 3 : -1]
        assert " ".join(text[start:end].split()) == quote
    # the score says its scale: the default weights of alignment, answer coverage and
    # lexical overlap add up to 2.5 (the embedding's weight counts only with an embedder)
    assert "from 0 to 2.50 with this configuration" in out
    assert all(" score " in line and "/2.50: " in line for line in quoted)
    scores = [float(line.split(" score ")[1].split("/")[0]) for line in quoted]
    assert all(0 < score <= 2.5 for score in scores)


def test_demo_html_into_a_missing_directory_is_an_input_error(tmp_path, capsys):
    assert main(["demo", "--html", str(tmp_path / "no" / "report.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("citekit demo: error: output directory does not exist: ")
    assert main(["demo", "--html", str(tmp_path)]) == 2
    assert "--html is a directory" in capsys.readouterr().err


def test_demo_unknown_answer_and_bad_config(tmp_path, capsys):
    assert main(["demo", "--answer", "nope"]) == 2
    assert "no bundled answer with id 'nope'" in capsys.readouterr().err
    config = tmp_path / "c.json"
    config.write_text('{"top_k": 1,', encoding="utf-8")
    assert main(["demo", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"invalid config {config}: invalid JSON (" in err
    assert err.count(str(config)) == 1


# ----------------------------------------------------------------------------- align


def test_align_writes_one_result_line_per_answer(files, capsys):
    tmp_path, sources, answers = files
    out = tmp_path / "results.jsonl"
    code = main(
        [
            "align",
            "--answers",
            str(answers),
            "--sources",
            str(sources),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    lines = _read_lines(out)
    assert [line["id"] for line in lines] == [r["id"] for r in load_example_answers()]
    from citekit.pipeline import Pipeline

    pipeline = Pipeline()
    expected = pipeline.align_many(
        [r["answer"] for r in load_example_answers()], pipeline.prepare(load_example_sources())
    )
    for line, result in zip(lines, expected):
        assert [SpanCitations.from_dict(d) for d in line["results"]] == list(result)
    assert "wrote 12 lines" in capsys.readouterr().err


@pytest.mark.slow
def test_align_with_processes_and_config_gives_the_same_file(files):
    tmp_path, sources, answers = files
    config = tmp_path / "config.toml"
    config.write_text("top_k = 1\n[weights]\nlexical = 0.25\n", encoding="utf-8")
    serial, parallel = tmp_path / "serial.jsonl", tmp_path / "parallel.jsonl"
    common = ["--answers", str(answers), "--sources", str(sources), "--config", str(config)]
    assert run_cli("align", *common, "--out", str(serial)).returncode == 0
    completed = run_cli(
        "align", *common, "--out", str(parallel), "--jobs", "2", "--batch-size", "3"
    )
    assert completed.returncode == 0, completed.stderr
    assert serial.read_bytes() == parallel.read_bytes()
    assert all(
        len(span["citations"]) <= 1 for line in _read_lines(serial) for span in line["results"]
    )


def test_align_rows_with_utf16_offsets(tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text(
        json.dumps(
            {
                "id": "q",
                "answer": "Emoji 😀 cats purr loudly.",
                "sources": [{"id": "s", "text": "🐈 Emoji 😀 cats purr loudly."}],
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "rows.jsonl"
    assert (
        main(
            [
                "align",
                "--answers",
                str(answers),
                "--out",
                str(out),
                "--level",
                "citation",
                "--offsets",
                "utf16",
                "--no-progress",
            ]
        )
        == 0
    )
    row = _read_lines(out)[0]
    text = "🐈 Emoji 😀 cats purr loudly."
    units = text.encode("utf-16-le")
    assert row["record_id"] == "q"
    assert units[2 * row["char_start"] : 2 * row["char_end"]].decode("utf-16-le") == row["evidence"]


def test_align_reports_failing_records_and_keeps_the_others(files, monkeypatch, capsys):
    from citekit.pipeline import Pipeline

    original_align_many = Pipeline.align_many

    def align_many(self, answers, corpus):
        answers = list(answers)
        if any("Canadian" in answer for answer in answers):
            raise RuntimeError("simulated failure")
        return original_align_many(self, answers, corpus)

    # align() goes through align_many: the batch containing the bad answer fails, and
    # score_records retries its records one by one to isolate it
    monkeypatch.setattr(Pipeline, "align_many", align_many)
    tmp_path, sources, answers = files
    out = tmp_path / "results.jsonl"
    code = main(
        [
            "align",
            "--answers",
            str(answers),
            "--sources",
            str(sources),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 1
    lines = _read_lines(out)
    assert len(lines) == 12
    assert lines[0] == {"id": "northwind-revenue", "error": "RuntimeError: simulated failure"}
    assert all("results" in line for line in lines[1:])
    err = capsys.readouterr().err
    assert "record 'northwind-revenue' failed: RuntimeError: simulated failure" in err
    assert "scored 11 of 12" in err


@pytest.mark.parametrize(
    "answers_text, sources_text, message",
    [
        ('{"id": 1, "answer": "x"}\n{"id": 2, "answer": }\n', None, "line 2: invalid JSON"),
        ('{"id": 1, "answer": "x"}\n[1, 2]\n', None, "line 2: expected a JSON object"),
        ('{"id": 1, "text": "x"}\n', None, "line 1: each line needs a string 'answer'"),
        ('{"id": 1, "answer": "x", "sources": "abc"}\n', None, "'sources' must be a list"),
        (
            '{"id": 1, "answer": "x", "sources": [{"id": "s"}]}\n',
            None,
            "sources[0]: a source needs",
        ),
        (
            '{"id": 1, "answer": "x"}\n',
            '{"id": "a", "text": "t"}\n\n{"id": "b"}\n',
            "sources.jsonl, line 3: a source needs a string 'text'",
        ),
        (
            '{"id": 1, "answer": "x"}\n',
            '{"id": "a", "text": "t"}\n{"id": "a", "text": "u"}\n',
            "duplicate source id 'a' (first on line 1)",
        ),
        ('{"id": 1, "answer": "x"}\n', None, "carry no 'sources'"),
        ('{"id": 1, "answer": "x"}\n', "", "holds no sources (every line is blank)"),
        ('{"id": 1, "answer": "x"}\n', "\n  \n", "holds no sources"),
        ('{"id": NaN, "answer": "x"}\n', None, "line 1: invalid JSON (NaN is not standard JSON)"),
        ("[" * 100_000 + "]" * 100_000 + "\n", None, "line 1: JSON nested too deeply"),
    ],
)
def test_align_input_errors_name_file_and_line(
    tmp_path, capsys, answers_text, sources_text, message
):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(answers_text, encoding="utf-8")
    argv = ["align", "--answers", str(answers), "--out", str(tmp_path / "out.jsonl")]
    if sources_text is not None:
        sources = tmp_path / "sources.jsonl"
        sources.write_text(sources_text, encoding="utf-8")
        argv += ["--sources", str(sources)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("citekit align: error: ") and message in err
    assert not (tmp_path / "out.jsonl").exists()


def test_align_reads_non_utf8_input_naming_file_and_line(tmp_path, capsys):
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(b'{"id": 1, "answer": "x"}\n{"id": 2, "answer": "caf\xe9"}\n')
    argv = ["align", "--answers", str(answers), "--out", str(tmp_path / "out.jsonl")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"citekit align: error: {answers}, line 2: not UTF-8 (byte 0xe9 at byte 25 of " \
        "the line)\n"
    # a byte order mark is not an error
    answers.write_bytes(b'\xef\xbb\xbf{"id": 1, "answer": "x"}\n')
    assert main(argv) == 2  # (then: no sources)
    assert "carry no 'sources'" in capsys.readouterr().err


def test_highlight_names_the_line_of_non_utf8_text(tmp_path, capsys):
    chunk = tmp_path / "chunk.txt"
    chunk.write_bytes(b"Revenue grew.\nCosts \xff fell.\n")
    assert main(["highlight", "--answer", "Costs fell.", "--source-file", str(chunk)]) == 2
    err = capsys.readouterr().err
    assert err == f"citekit highlight: error: {chunk}, line 2: not UTF-8 (byte 0xff)\n"
    assert main(["highlight", "--answer", "x", "--source-file", str(tmp_path)]) == 2
    assert "source file is a directory" in capsys.readouterr().err


def test_align_bad_values_are_one_line_errors(files, capsys):
    tmp_path, sources, answers = files
    common = ["align", "--answers", str(answers), "--sources", str(sources)]
    for extra, message in (
        (["--out", str(tmp_path / "o.jsonl"), "--batch-size", "0"], "--batch-size must be >= 1"),
        (["--out", str(tmp_path / "o.jsonl"), "--jobs", "many"], "--jobs must be 'auto'"),
        (["--out", str(tmp_path / "o.jsonl"), "--jobs", "-2"], "--jobs must be 'auto'"),
        (["--out", str(tmp_path)], "--out is a directory, not a file"),
    ):
        assert main(common + extra) == 2
        err = capsys.readouterr().err
        assert err.startswith("citekit align: error: ") and message in err
        assert err.count("\n") == 1, err
    argv = ["align", "--answers", str(tmp_path), "--out", str(tmp_path / "o.jsonl")]
    assert main(argv) == 2
    assert "answers file is a directory" in capsys.readouterr().err


def test_align_says_once_why_there_is_no_progress_bar(monkeypatch, capsys):
    import importlib.util

    from citekit import _progress, cli

    monkeypatch.setattr(_progress, "is_terminal", lambda stream: True)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "tqdm" else real_find_spec(name)
    )
    cli._progress_hint(True)
    assert "tqdm is not installed (pip install tqdm)" in capsys.readouterr().err
    cli._progress_hint(False)  # --no-progress: nothing to explain
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_progress, "is_terminal", lambda stream: False)
    cli._progress_hint(True)  # no terminal: no bar would be drawn anyway
    assert capsys.readouterr().err == ""


def test_align_says_line_in_the_singular(tmp_path, capsys):
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"id": "q", "answer": "Revenue grew.", "sources": ["Revenue grew."]}\n')
    out = tmp_path / "out.jsonl"
    assert main(["align", "--answers", str(answers), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "scored 1 of 1 answer; wrote 1 line to" in err


def test_align_missing_files_and_bad_options(files, capsys):
    tmp_path, sources, answers = files
    out = str(tmp_path / "out.jsonl")
    assert main(["align", "--answers", str(tmp_path / "nope.jsonl"), "--out", out]) == 2
    assert "answers file not found" in capsys.readouterr().err
    assert (
        main(
            [
                "align",
                "--answers",
                str(answers),
                "--sources",
                str(tmp_path / "nope.jsonl"),
                "--out",
                out,
            ]
        )
        == 2
    )
    assert "sources file not found" in capsys.readouterr().err
    assert (
        main(
            [
                "align",
                "--answers",
                str(answers),
                "--sources",
                str(sources),
                "--out",
                str(tmp_path / "no" / "dir.jsonl"),
            ]
        )
        == 2
    )
    assert "output directory does not exist" in capsys.readouterr().err
    assert (
        main(
            [
                "align",
                "--answers",
                str(answers),
                "--sources",
                str(sources),
                "--out",
                out,
                "--jobs",
                "0",
            ]
        )
        == 2
    )
    assert "--jobs" in capsys.readouterr().err
    for content, suffix, message in (
        ('{"top_k": -1}', ".json", "top_k must be >= 0"),
        ('{"topk": 1}', ".json", "unknown keys"),
        ("top_k = ", ".toml", "invalid config"),
        ("{}", ".yaml", "must end with .json or .toml"),
    ):
        config = tmp_path / f"config{suffix}"
        config.write_text(content, encoding="utf-8")
        assert (
            main(
                [
                    "align",
                    "--answers",
                    str(answers),
                    "--sources",
                    str(sources),
                    "--out",
                    out,
                    "--config",
                    str(config),
                ]
            )
            == 2
        )
        assert message in capsys.readouterr().err
    assert (
        main(
            [
                "align",
                "--answers",
                str(answers),
                "--sources",
                str(sources),
                "--out",
                out,
                "--config",
                str(tmp_path / "missing.toml"),
            ]
        )
        == 2
    )
    assert "config file not found" in capsys.readouterr().err


# ----------------------------------------------------------------------------- highlight


def test_highlight_prints_spans(capsys):
    pytest.importorskip("citekit.highlight")
    source = "Shipping is extra.\nUnused items can be returned within 30 days for a refund.\nNo."
    assert (
        main(["highlight", "--answer", "Items can be returned within 30 days.", "--source", source])
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("[19:76] Unused items can be returned within 30 days for a refund.")
    assert (
        main(
            [
                "highlight",
                "--answer",
                "Items can be returned within 30 days.",
                "--source",
                source,
                "--json",
                "--no-expand",
            ]
        )
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    for span in payload["spans"]:
        assert source[span["start"] : span["end"]] == span["text"]
    assert main(["highlight", "--answer", "zebras", "--source", source]) == 0
    assert "no highlight" in capsys.readouterr().out


def test_highlight_files_and_utf16(tmp_path, capsys):
    pytest.importorskip("citekit.highlight")
    source = tmp_path / "chunk.txt"
    text = "🐠🐠 Fish counts were not part of this survey."
    source.write_text(text, encoding="utf-8")
    answer = tmp_path / "answer.txt"
    answer.write_text("Fish counts were not part of the survey.", encoding="utf-8")
    assert (
        main(
            [
                "highlight",
                "--answer-file",
                str(answer),
                "--source-file",
                str(source),
                "--json",
                "--offsets",
                "utf16",
            ]
        )
        == 0
    )
    span = json.loads(capsys.readouterr().out)["spans"][0]
    units = text.encode("utf-16-le")
    assert units[2 * span["start"] : 2 * span["end"]].decode("utf-16-le") == span["text"]
    assert main(["highlight", "--answer", "x", "--source-file", str(tmp_path / "no.txt")]) == 2
    assert "source file not found" in capsys.readouterr().err


# ----------------------------------------------------------------------------- help, evaluate


@pytest.mark.parametrize("command", [[], ["demo"], ["align"], ["highlight"], ["evaluate"]])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: citekit" in capsys.readouterr().out


def test_evaluate_is_delegated(capsys):
    pytest.importorskip("citekit.evaluate")
    assert main(["evaluate", "/nonexistent/records.jsonl"]) == 2
    assert "citekit evaluate" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--help"])
    assert exit_info.value.code == 0
    assert "evaluate" in capsys.readouterr().out


# an annotated record (tests/test_evaluate.py's): the first sentence is supported by source
# "a", the second is gold unsupported (source "b" says more than it)
EVAL_RECORD = record_dict()


def test_evaluate_reports_unreadable_input(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "missing.jsonl")]) == 2
    assert "citekit evaluate" in capsys.readouterr().err
    path = tmp_path / "toy.jsonl"
    path.write_text(json.dumps(EVAL_RECORD) + "\n", encoding="utf-8")
    assert main(["evaluate", str(path), "--limit", "-1"]) == 2
    assert main(["evaluate", str(path), "--config", str(tmp_path / "config.yaml")]) == 2
    assert main(["evaluate", "--no-such-option"]) == 2


def test_evaluate_error_lines_are_unchanged(tmp_path, capsys):
    # evaluate's own wording: "citekit evaluate: MESSAGE", and its usage line for options
    # it does not know
    path = tmp_path / "toy.jsonl"
    path.write_text(json.dumps(EVAL_RECORD) + "\n", encoding="utf-8")
    assert main(["evaluate", str(path), "--limit", "-1"]) == 2
    assert capsys.readouterr().err == "citekit evaluate: --limit must be >= 0\n"
    assert main(["evaluate", str(path), "--errors", "-1"]) == 2
    assert capsys.readouterr().err == "citekit evaluate: --errors must be >= 0\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    assert main(["evaluate", str(bad)]) == 2
    # (the one JSON Lines reader's wording, as for align's files)
    assert capsys.readouterr().err.startswith(f"citekit evaluate: {bad}, line 1: invalid JSON (")
    # (changed deliberately: an unknown option was reported under evaluate's usage block,
    # now in one line like every command-line error)
    assert main(["evaluate", str(path), "--no-such-option"]) == 2
    assert capsys.readouterr().err == (
        "citekit evaluate: error: unrecognized arguments: --no-such-option "
        "(see 'citekit evaluate --help')\n"
    )


def test_evaluate_runs_the_default_pipeline(tmp_path, capsys):
    path = tmp_path / "toy.jsonl"
    path.write_text(json.dumps(EVAL_RECORD) + "\n", encoding="utf-8")
    assert main(["evaluate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "label_accuracy" in out
    config = tmp_path / "config.json"
    config.write_text('{"top_k": 1}', encoding="utf-8")
    assert main(["evaluate", str(path), "--config", str(config), "--per-unit", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["records"] == 1
    # "Profits fell." is gold unsupported; the default pipeline cites the second source
    assert main(["evaluate", str(path), "--errors", "5"]) == 0
    err = capsys.readouterr().err
    assert "r1[1] unsupported -> " in err and "Profits fell." in err
    assert main(["evaluate", str(path), "--errors", "-1"]) == 2


def test_evaluate_needs_units_records_and_an_existing_file(tmp_path, capsys):
    missing = tmp_path / "missing.jsonl"
    assert main(["evaluate", str(missing)]) == 2
    assert capsys.readouterr().err == f"citekit evaluate: evaluation file not found: {missing}\n"
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"id": "r", "answer": "Hi.", "sources": []}) + "\n")
    assert main(["evaluate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"citekit evaluate: {path}: no record has annotated 'units' (answer ranges with a gold "
        "'label' and 'evidence'), so there is nothing to evaluate\n"
    )
    path.write_text("\n\n")
    assert main(["evaluate", str(path)]) == 2
    assert "holds no records" in capsys.readouterr().err
    path.write_text(json.dumps(EVAL_RECORD) + "\n", encoding="utf-8")
    assert main(["evaluate", str(path), "--limit", "0"]) == 2
    assert capsys.readouterr().err == "citekit evaluate: --limit 0 leaves no record to evaluate\n"
    path.write_text(json.dumps({"id": "r", "answer": "Hi.", "units": [{"start": 0, "end": 9}]}))
    assert main(["evaluate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"citekit evaluate: {path}, line 1: record 'r'.units[0]: need 0 <= ")


def test_evaluate_names_the_dataset_and_says_when_nothing_is_misclassified(tmp_path, capsys):
    path = tmp_path / "toy.jsonl"
    # only the supported first unit: predicted supported
    record = dict(EVAL_RECORD, units=EVAL_RECORD["units"][:1], unsupported_spans=[])
    record.pop("dataset", None)
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["evaluate", str(path), "--errors", "3"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("dataset: toy.jsonl\n")  # no dataset field: the file's name
    assert captured.err == "\nno misclassified units: all 1 labeled unit predicted as labeled\n"
    path.write_text(json.dumps(dict(record, dataset="wiki-qa")) + "\n", encoding="utf-8")
    assert main(["evaluate", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dataset"] == "wiki-qa"


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out
    assert main(["align"]) == 2  # required options missing
    assert capsys.readouterr().err == (
        "citekit align: error: the following arguments are required: --answers, --out "
        "(see 'citekit align --help')\n"
    )


@pytest.mark.parametrize(
    "argv, prog, message",
    [
        (["--no-such-option"], "citekit", "unrecognized arguments: --no-such-option"),
        (["nope"], "citekit", "argument COMMAND: invalid choice: 'nope'"),
        (["demo", "--top", "x"], "citekit demo", "argument --top: invalid int value: 'x'"),
        (["demo", "--width"], "citekit demo", "argument --width: expected one argument"),
        (["align", "--answers", "a.jsonl"], "citekit align",
         "the following arguments are required: --out"),
        (["align", "--answers", "a", "--out", "o", "--level", "row"], "citekit align",
         "argument --level: invalid choice: 'row'"),
        (["highlight", "--answer", "a"], "citekit highlight",
         "one of the arguments --source --source-file is required"),
        (["highlight", "--answer", "a", "--answer-file", "f", "--source", "b"],
         "citekit highlight", "argument --answer-file: not allowed with argument --answer"),
        (["highlight", "--answer", "a", "--source", "b", "--no-such-option"],
         "citekit highlight", "unrecognized arguments: --no-such-option"),
        (["evaluate"], "citekit evaluate", "the following arguments are required: file"),
    ],
)
def test_command_line_errors_are_one_line_and_exit_2(argv, prog, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and "usage:" not in err and "Traceback" not in err
    assert err.startswith(f"{prog}: error: {message}")
    assert err.endswith(f"(see '{prog} --help')\n")


def test_version(capsys):
    import citekit

    with pytest.raises(SystemExit):
        main(["--version"])
    assert citekit.__version__ in capsys.readouterr().out
