"""The ``citekit`` command line.

::

    citekit demo                      align the bundled example answers and print a report
    citekit align --answers A.jsonl --sources S.jsonl --out R.jsonl [--config C] [--jobs N]
    citekit prepare --sources S.jsonl --out CORPUS_DIR [--config C] [--batch-size N]
    citekit align --answers A.jsonl --corpus CORPUS_DIR --out R.jsonl    (a prepared corpus)
    citekit highlight --answer TEXT --source-file CHUNK.txt
    citekit evaluate FILE.jsonl [--config C] [--per-unit] [--limit N] [--json] [--errors N]
    citekit warmup [--processes N]    compile every kernel now (once, after installing)

Every subcommand has ``--help``. Problems with the input (a missing file, a bad JSON line,
an invalid configuration) are reported in one line naming the file and line, and problems
with the command line (an unknown or missing option, a bad value) in one line naming the
option, with exit status 2; ``align`` exits with 1 when some records could not be scored
(their errors are in the output file).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING, Any, NoReturn, Sequence, TextIO

if TYPE_CHECKING:
    from citekit.evaluate import EvalRecord, EvaluationReport

__all__ = ["main"]

_STATUS_MARK = {
    "supported": "[supported]  ",
    "partial": "[partial]    ",
    "unsupported": "[unsupported]",
}


class _InputError(Exception):
    """A problem with the user's files or options: reported in one line, exit status 2."""


class _UsageError(Exception):
    """A command line argparse refused (an unknown or missing option, a bad value): ``prog``
    is the (sub)command it belongs to."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, exit status 2 (:func:`main` prints
    them), not the usage block argparse prints before them."""

    def error(self, message: str) -> NoReturn:  # (argparse's hook for every parse error)
        raise _UsageError(self.prog, message)


def _load_config(path: str | None) -> Any:
    from citekit.config import CitationConfig

    if path is None:
        return CitationConfig()
    if not os.path.exists(path):
        raise _InputError(f"config file not found: {path}")
    try:
        return CitationConfig.from_file(path)
    except (ValueError, TypeError) as exc:
        # (an unreadable file's error starts with its name and line; a bad option's not)
        message = str(exc) if str(exc).startswith(path) else f"{path}: {exc}"
        raise _InputError(f"invalid config {message}") from None
    except (OSError, ImportError) as exc:
        raise _InputError(f"cannot read config {path}: {exc}") from None


def _numbered_lines(path: str, what: str) -> list[tuple[int, dict[str, Any]]]:
    from citekit._rows import numbered_jsonl

    _check_input_file(path, what)
    try:
        return list(numbered_jsonl(path))
    except ValueError as exc:  # names the file and the line
        raise _InputError(str(exc)) from None
    except OSError as exc:
        raise _InputError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None


def _check_source(value: Any, where: str) -> Any:
    from citekit._source_records import source_from_json

    try:
        return source_from_json(value, where)
    except ValueError as exc:  # (names the file, the line and what is wrong)
        raise _InputError(str(exc)) from None


def _load_sources(path: str) -> list[Any]:
    from citekit._source_records import jsonl_sources

    _check_input_file(path, "sources")
    try:
        sources = list(jsonl_sources(path))
    except ValueError as exc:  # names the file and the line
        raise _InputError(str(exc)) from None
    except OSError as exc:
        raise _InputError(f"cannot read sources file {path}: {exc.strerror or exc}") from None
    if not sources:
        # every sentence would come out unsupported, which looks like a result
        raise _InputError(f"sources file {path} holds no sources (every line is blank)")
    return sources


def _check_input_file(path: str, what: str) -> None:
    if not os.path.exists(path):
        raise _InputError(f"{what} file not found: {path}")
    if os.path.isdir(path):
        raise _InputError(f"{what} file is a directory: {path}")


def _load_answers(path: str) -> list[dict[str, Any]]:
    records = []
    for number, row in _numbered_lines(path, "answers"):
        where = f"{path}, line {number}"
        if not isinstance(row.get("answer"), str):
            raise _InputError(f"{where}: each line needs a string 'answer'")
        record: dict[str, Any] = {"id": row.get("id", number), "answer": row["answer"]}
        if "sources" in row:
            if not isinstance(row["sources"], list):
                raise _InputError(f"{where}: 'sources' must be a list")
            record["sources"] = [
                _check_source(item, f"{where}, sources[{k}]")
                for k, item in enumerate(row["sources"])
            ]
        records.append(record)
    return records


# ----------------------------------------------------------------------------- demo


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _plural(count: int, word: str) -> str:
    """``"1 line"``, ``"2 lines"``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def _score_scale(config: Any, embedder: Any) -> float:
    """The highest score a citation can get: each weighted score component is at most 1,
    and the embedding similarity is 0 without an embedder."""
    weights = config.weights.to_dict()
    if embedder is None:
        weights.pop("embedding")
    return float(sum(weights.values()))


def _write_report(
    out: TextIO,
    question: str,
    answer_id: Any,
    result: Any,
    width: int,
    top: int,
    scale: float,
) -> None:
    heading = f"[{answer_id}]" + (f" {question}" if question else "")
    out.write(heading + "\n")
    for item in result:
        out.write(f"  {_STATUS_MARK[item.status]} {_shorten(item.answer_span.text, width)}\n")
        for citation in item.citations[:top]:
            out.write(
                f"      <- {citation.source_id} [{citation.char_start}:{citation.char_end}] "
                f"score {citation.score:.2f}/{scale:.2f}: "
                f'"{_shorten(citation.evidence_display, width - 20)}"\n'
            )
            for conflict in citation.conflicts:
                out.write(
                    f"         ! {conflict.kind} differs: answer {conflict.answer_text!r}, "
                    f"source {conflict.evidence_text!r}\n"
                )
        uncovered = [
            result.answer[start:end]
            for start, end in item.unsupported_spans
            if item.status != "unsupported" and result.answer[start:end].strip()
        ]
        if uncovered:
            out.write(f"      not in any source: {'; '.join(_shorten(u, 60) for u in uncovered)}\n")
    out.write("\n")


def _timing_note(compiled: bool, cached: bool) -> str:
    """What the demo's timed calls include besides the work: nothing when the kernels
    were compiled in the run itself, before them; else loading (or, without the disk
    cache, compiling) the kernels."""
    if compiled:
        return ""
    if cached:
        return (
            " (the first calls of a process also load the compiled kernels from their "
            "disk cache, about a second)"
        )
    return " (with the disk cache off, the first calls of a process also compile the kernels)"


def _cmd_demo(args: argparse.Namespace) -> int:
    config = _load_config(args.config)
    if args.html is not None:
        _check_output_path(args.html, "--html")
    from citekit.data import load_example_answers, load_example_sources
    from citekit.pipeline import Pipeline

    sources = load_example_sources()
    answers = load_example_answers()
    if args.answer is not None:
        answers = [a for a in answers if a["id"] == args.answer]
        if not answers:
            known = ", ".join(a["id"] for a in load_example_answers())
            raise _InputError(f"no bundled answer with id {args.answer!r}; known ids: {known}")
    pipeline = Pipeline(config=config)
    # the very first run compiles the kernels (cached on disk afterwards): say so,
    # or a newcomer may take the pause for a hang, and use two cores for it
    from citekit._jit import CACHE
    from citekit._warm import cache_is_cold, warm

    compiled = cache_is_cold()  # (then compiled here, before the timed part)
    if compiled:  # (the compiler's first kernel logs the notice on stderr)
        warm(min(2, os.cpu_count() or 1))
    sys.stderr.write("citekit demo: aligning...\n")
    sys.stderr.flush()
    started = time.perf_counter()
    corpus = pipeline.prepare(sources)
    prepared = time.perf_counter()
    results = pipeline.align_many([a["answer"] for a in answers], corpus)
    aligned = time.perf_counter()

    out = sys.stdout
    scale = _score_scale(config, pipeline.embedder)
    out.write(
        f"citekit demo: {_plural(len(answers), 'answer')} aligned against "
        f"{len(sources)} bundled sources "
        "(fictional documents written for citekit)\n"
        "A citation's score is the weighted sum of its score components (alignment, "
        f"coverage, lexical overlap): from 0 to {scale:.2f} with this configuration, shown "
        "as score/maximum.\n\n"
    )
    counts = {"supported": 0, "partial": 0, "unsupported": 0}
    for record, result in zip(answers, results):
        _write_report(
            out, record.get("question", ""), record["id"], result, args.width, args.top, scale
        )
        for item in result:
            counts[item.status] += 1
    total = sum(counts.values())
    out.write(
        f"{total} sentences: {counts['supported']} supported, {counts['partial']} partial, "
        f"{counts['unsupported']} unsupported.\n"
        f"Prepared the corpus in {prepared - started:.2f} s and aligned the answers in "
        f"{aligned - prepared:.2f} s{_timing_note(compiled, CACHE)}.\n"
    )
    if args.html:
        from citekit.display import render_html

        # one legend, above the first answer, for the whole page
        blocks = [
            f"<h3>{_html_escape(str(record['id']))}: {_html_escape(record.get('question', ''))}"
            f"</h3>{render_html(result, record['answer'], result.sources, legend=index == 0)}"
            for index, (record, result) in enumerate(zip(answers, results))
        ]
        page = (
            '<!DOCTYPE html><html><head><meta charset="utf-8"><title>citekit demo</title>'
            '</head><body style="font-family:sans-serif;margin:24px">'
            + "".join(blocks)
            + "</body></html>\n"
        )
        try:
            with open(args.html, "w", encoding="utf-8") as handle:
                handle.write(page)
        except OSError as exc:
            raise _InputError(f"cannot write {args.html}: {exc.strerror or exc}") from None
        out.write(f"Wrote {args.html}\n")
    return 0


def _check_output_path(path: str, option: str) -> None:
    """An output file must not be a directory, and its directory must exist."""
    if os.path.isdir(path):
        raise _InputError(f"{option} is a directory, not a file: {path}")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise _InputError(f"output directory does not exist: {directory}")


def _html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


# ----------------------------------------------------------------------------- align


def _jobs(value: str) -> int | str:
    """The ``--jobs`` value: ``auto``, ``-1`` or a positive number."""
    if value == "auto":
        return value
    message = f"--jobs must be 'auto', a positive number or -1, got {value!r}"
    try:
        number = int(value)
    except ValueError:
        raise _InputError(message) from None
    if number == 0 or number < -1:
        raise _InputError(message)
    return number


def _progress_hint(show_progress: bool, command: str = "align") -> None:
    """Say once why there is no progress bar, when one would have been drawn."""
    import importlib.util

    from citekit._progress import is_terminal

    if show_progress and is_terminal(sys.stderr) and importlib.util.find_spec("tqdm") is None:
        sys.stderr.write(
            f"citekit {command}: no progress bar: tqdm is not installed (pip install tqdm)\n"
        )


def _cmd_align(args: argparse.Namespace) -> int:
    jobs = _jobs(args.jobs)
    if args.batch_size < 1:
        raise _InputError(f"--batch-size must be >= 1, got {args.batch_size}")
    if args.mmap and args.corpus is None:
        raise _InputError("--mmap maps a saved corpus: give it with --corpus DIR")
    config = _load_config(args.config)
    records = _load_answers(args.answers)
    sources = _load_sources(args.sources) if args.sources else None
    if sources is None and args.corpus is None:
        missing = [r["id"] for r in records if "sources" not in r]
        if missing:
            raise _InputError(
                f"{len(missing)} answers carry no 'sources' (first: {missing[0]!r}); "
                "pass --sources S.jsonl or --corpus DIR"
            )
    _check_output_path(args.out, "--out")
    from citekit._rows import strict_json
    from citekit.batch import iter_score_records, to_records
    from citekit.pipeline import Pipeline

    pipeline = Pipeline(config=config)
    if args.corpus is not None:
        corpus = _load_corpus(args.corpus, pipeline, args.mmap)
    else:
        corpus = pipeline.prepare(sources) if sources is not None else None
    failed = 0
    written = 0
    _progress_hint(not args.no_progress)
    try:
        with open(args.out, "w", encoding="utf-8") as handle:
            for outcome in iter_score_records(
                records,
                pipeline=pipeline,
                corpus=corpus,
                n_jobs=jobs,
                show_progress=not args.no_progress,
                batch_size=args.batch_size,
            ):
                if not outcome.ok:
                    failed += 1
                    sys.stderr.write(
                        f"citekit align: record {outcome.id!r} failed: {outcome.error}\n"
                    )
                if args.level == "results" or not outcome.ok:
                    lines = [outcome.to_dict()]
                else:
                    lines = to_records([outcome], level=args.level, offsets=args.offsets)
                for line in lines:
                    handle.write(strict_json(line) + "\n")
                    written += 1
    except OSError as exc:
        raise _InputError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    sys.stderr.write(
        f"citekit align: scored {len(records) - failed} of {_plural(len(records), 'answer')}; "
        f"wrote {_plural(written, 'line')} to {args.out}\n"
    )
    return 1 if failed else 0


def _load_corpus(path: str, pipeline: Any, mmap: bool = False) -> Any:
    """The corpus ``citekit prepare`` (or ``Corpus.save``) wrote at ``path`` (mapped when
    ``mmap``), checked against the pipeline's tokenizer once rather than failing answer by
    answer."""
    from citekit.corpus import Corpus

    if not os.path.exists(path):
        raise _InputError(f"corpus directory not found: {path}")
    try:
        corpus = Corpus.load(path, mmap=mmap)
    except FileNotFoundError as exc:  # (a file of the corpus is missing: named)
        raise _InputError(f"--corpus {path}: {exc}") from None
    except ValueError as exc:  # names the damaged file
        raise _InputError(f"--corpus {path}: {exc}") from None
    except OSError as exc:
        raise _InputError(f"cannot read corpus {path}: {exc.strerror or exc}") from None
    try:
        corpus.check_tokenizer(pipeline._tokenizer_for(corpus))
    except ValueError as exc:
        raise _InputError(f"--corpus {path}: {exc}") from None
    return corpus


# ----------------------------------------------------------------------------- prepare


def _cmd_prepare(args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        raise _InputError(f"--batch-size must be >= 1, got {args.batch_size}")
    config = _load_config(args.config)
    _check_input_file(args.sources, "sources")
    _check_corpus_target(args.out)
    from citekit.pipeline import Pipeline

    pipeline = Pipeline(config=config)
    _progress_hint(not args.no_progress, "prepare")
    started = time.perf_counter()
    try:
        # (the pipeline's build without prepare's folding of every word: the folds are
        # not saved, and a process that aligns learns them as it needs them)
        corpus = pipeline._build(
            _as_path(args.sources),
            batch_size=args.batch_size,
            show_progress=not args.no_progress,
        )
    except ValueError as exc:  # a line of the file: names the file and the line
        raise _InputError(str(exc)) from None
    except OSError as exc:
        raise _InputError(
            f"cannot read sources file {args.sources}: {exc.strerror or exc}"
        ) from None
    if not corpus.n_sources:
        raise _InputError(f"sources file {args.sources} holds no sources (every line is blank)")
    built = time.perf_counter()
    try:
        corpus.save(args.out)
    except (TypeError, ValueError) as exc:
        raise _InputError(f"cannot save the corpus to {args.out}: {exc}") from None
    except OSError as exc:
        raise _InputError(f"cannot save the corpus to {args.out}: {exc.strerror or exc}") from None
    saved = time.perf_counter()
    sys.stderr.write(
        f"citekit prepare: {_plural(corpus.n_sources, 'source')}, "
        f"{_plural(corpus.n_passages, 'passage')}, {_plural(corpus.n_tokens, 'token')}: "
        f"built in {built - started:.1f} s, saved to {args.out} in {saved - built:.1f} s\n"
    )
    return 0


def _as_path(path: str) -> Any:
    """``path`` as an :class:`os.PathLike`: a sources file of any name (``Corpus.build``
    reads a ``str`` as a path only when it ends with ``.jsonl`` or ``.jsonl.gz``)."""
    import pathlib

    return pathlib.Path(path)


def _check_corpus_target(path: str) -> None:
    """Refuse, before a long build, an ``--out`` that ``Corpus.save`` would refuse after
    it: a file, or a directory holding files a saved corpus does not."""
    from citekit._corpus_files import _check_target

    try:
        _check_target(path, os.path.realpath(path))
    except ValueError as exc:
        raise _InputError(f"--out: {exc}") from None


# ----------------------------------------------------------------------------- highlight


def _read_text_option(text: str | None, path: str | None, what: str) -> str:
    if path is not None:
        if not os.path.exists(path):
            raise _InputError(f"{what} file not found: {path}")
        if os.path.isdir(path):
            raise _InputError(f"{what} file is a directory: {path}")
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise _InputError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise _InputError(
                f"{path}, line {line}: not UTF-8 (byte 0x{data[exc.start]:02x})"
            ) from None
    assert text is not None
    return text


def _cmd_highlight(args: argparse.Namespace) -> int:
    from citekit._rows import strict_json
    from citekit.batch import utf16_offsets
    from citekit.highlight import find_answer_highlights

    answer = _read_text_option(args.answer, args.answer_file, "answer")
    source = _read_text_option(args.source, args.source_file, "source")
    options: dict[str, Any] = {"keep_longest_only": not args.all}
    if args.tokenizer is not None:
        options["tokenizer"] = args.tokenizer
    if args.no_expand:
        options["expand_spans"] = False
    try:
        spans = find_answer_highlights(answer, source, **options)
    except (TypeError, ValueError) as exc:
        raise _InputError(str(exc)) from None
    if args.offsets == "utf16":
        flat = utf16_offsets(source, [p for span in spans for p in span])
        shown = [(flat[2 * k], flat[2 * k + 1]) for k in range(len(spans))]
    else:
        shown = [(int(s), int(e)) for s, e in spans]
    if args.json:
        payload = {
            "offsets": args.offsets,
            "spans": [
                {"start": start, "end": end, "text": source[s:e]}
                for (start, end), (s, e) in zip(shown, spans)
            ],
        }
        sys.stdout.write(strict_json(payload) + "\n")
        return 0
    if not spans:
        sys.stdout.write("no highlight: the source does not support the answer lexically\n")
        return 0
    for (start, end), (s, e) in zip(shown, spans):
        sys.stdout.write(f"[{start}:{end}] {source[s:e]}\n")
    return 0


# ----------------------------------------------------------------------------- evaluate


def _error_lines(report: EvaluationReport, records: Sequence[EvalRecord], limit: int) -> list[str]:
    """One line per misclassified unit: record, gold -> predicted, score, unit text."""
    by_id = {record.id: record for record in records}
    lines = []
    for outcome in report.units:
        if len(lines) >= limit:
            break
        if outcome.gold_label is None or outcome.correct:
            continue
        text = by_id[outcome.record_id].units[outcome.unit_index].text
        text = " ".join(text.split())
        if len(text) > 100:
            text = text[:97] + "..."
        lines.append(
            f"{outcome.record_id}[{outcome.unit_index}] {outcome.gold_label} -> "
            f"{outcome.predicted_status} (score {outcome.support_score:.2f}): {text}"
        )
    return lines


def _cmd_evaluate(args: argparse.Namespace) -> int:
    # evaluate reports a problem as "citekit evaluate: MESSAGE" (no "error:"), as it always
    # has, so that scripts reading its error lines keep working
    try:
        return _evaluate(args)
    except _InputError as exc:
        sys.stderr.write(f"citekit evaluate: {exc}\n")
        return 2


def _evaluate(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise _InputError("--limit must be >= 0")
    if args.errors < 0:
        raise _InputError("--errors must be >= 0")
    from citekit.evaluate import evaluate, load_records

    if not os.path.exists(args.file):
        raise _InputError(f"evaluation file not found: {args.file}")
    if os.path.isdir(args.file):
        raise _InputError(f"evaluation file is a directory: {args.file}")
    try:
        records = load_records(args.file, limit=args.limit)
    except (ValueError, TypeError) as exc:  # naming the file and the line
        raise _InputError(str(exc)) from None
    except OSError as exc:
        raise _InputError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    if not records:
        if args.limit == 0:
            raise _InputError("--limit 0 leaves no record to evaluate")
        raise _InputError(f"{args.file} holds no records (every line is blank)")
    if not any(record.units for record in records):
        # without units there is nothing to score: "units 0" would look like a result
        raise _InputError(
            f"{args.file}: no record has annotated 'units' (answer ranges with a gold "
            "'label' and 'evidence'), so there is nothing to evaluate"
        )
    config = _load_config(args.config) if args.config else None
    from citekit.pipeline import Pipeline

    pipeline = Pipeline(config=config) if config is not None else Pipeline()
    report = evaluate(records, pipeline, per_unit=args.per_unit)
    if not report.dataset:
        # records without a "dataset" field: the file names the data
        report.dataset = os.path.basename(args.file)
    if args.json:
        from citekit._rows import strict_json

        sys.stdout.write(strict_json(report.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(report.to_table() + "\n")
    if args.errors:
        for line in _errors_report(report, records, args.errors):
            sys.stderr.write(line + "\n")
    return 0


def _errors_report(
    report: EvaluationReport, records: Sequence[EvalRecord], limit: int
) -> list[str]:
    """The ``--errors`` block: a heading saying how many units are listed, then one
    line per misclassified unit."""
    lines = _error_lines(report, records, limit)
    labeled = sum(outcome.gold_label is not None for outcome in report.units)
    if not labeled:
        return ["", "no unit has a gold label, so none can be misclassified"]
    if not lines:
        return ["", f"no misclassified units: all {_plural(labeled, 'labeled unit')} predicted "
                "as labeled"]
    wrong = sum(o.gold_label is not None and not o.correct for o in report.units)
    if wrong > len(lines):
        heading = f"first {len(lines)} of {wrong} misclassified units (gold -> predicted):"
    else:
        heading = f"{_plural(wrong, 'misclassified unit')} (gold -> predicted):"
    return ["", heading, *lines]


# ----------------------------------------------------------------------------- parser


def _build_parser() -> argparse.ArgumentParser:
    from citekit._corpus_build import DEFAULT_BATCH_CHARS
    from citekit._version import __version__

    parser = _Parser(
        prog="citekit",
        description="Exact, fast character-level citations for generated answers.",
    )
    parser.add_argument("--version", action="version", version=f"citekit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="align the bundled example answers and print a report",
        description="Align the bundled example answers (fictional documents written for "
        "citekit) against their sources and print, for every sentence, its status and the "
        "exact evidence with character offsets.",
    )
    demo.add_argument("--config", metavar="FILE", help="CitationConfig as .json or .toml")
    demo.add_argument("--answer", metavar="ID", help="only this bundled answer")
    demo.add_argument("--html", metavar="FILE", help="also write an HTML report to FILE")
    demo.add_argument(
        "--top",
        type=int,
        default=1,
        metavar="N",
        help="show at most N citations per sentence (default 1, the best)",
    )
    demo.add_argument("--width", type=int, default=100, help="truncate quotes to this width")
    demo.set_defaults(run=_cmd_demo)

    align = commands.add_parser(
        "align",
        help="align a JSONL file of answers against a JSONL file of sources",
        description="Align every answer of a JSON Lines file. Answers are lines "
        '{"id", "answer"} optionally carrying their own "sources"; sources are lines '
        '{"id", "text"} (other keys become metadata). Writes one line per answer: '
        '{"id", "results": [...]} or {"id", "error"}.',
    )
    align.add_argument("--answers", required=True, metavar="A.jsonl", help="answers file")
    shared = align.add_mutually_exclusive_group()
    shared.add_argument(
        "--sources", metavar="S.jsonl", help="sources shared by answers without their own"
    )
    shared.add_argument(
        "--corpus",
        metavar="DIR",
        help="a corpus saved by 'citekit prepare', shared by answers without their own "
        "sources (instead of --sources)",
    )
    align.add_argument(
        "--mmap",
        action="store_true",
        help="with --corpus: map the saved corpus instead of reading it (loads at once "
        "at any size; memory grows with what the answers touch)",
    )
    align.add_argument("--out", required=True, metavar="R.jsonl", help="output file")
    align.add_argument("--config", metavar="FILE", help="CitationConfig as .json or .toml")
    align.add_argument(
        "--jobs",
        default="auto",
        metavar="N",
        help="worker processes: 'auto' (the default: processes only for a run long enough to "
        "repay their start, about a minute of work), 1 (none), N, or -1 (one per CPU)",
    )
    align.add_argument(
        "--batch-size",
        type=int,
        default=16,
        metavar="N",
        help="answers aligned together (default 16)",
    )
    align.add_argument(
        "--level",
        choices=("results", "sentence", "citation"),
        default="results",
        help="write full results per answer (default), or one row per " "sentence or per citation",
    )
    align.add_argument(
        "--offsets",
        choices=("python", "utf16"),
        default="python",
        help="offset unit of sentence/citation rows (utf16 for JavaScript)",
    )
    align.add_argument("--no-progress", action="store_true", help="no progress bar")
    align.set_defaults(run=_cmd_align)

    prepare = commands.add_parser(
        "prepare",
        help="prepare a JSONL file of sources once and save the corpus",
        description="Segment, window, tokenize and index the sources of a JSON Lines file "
        '(lines {"id", "text"}; other keys become metadata; .gz files are read as gzip) '
        "batch by batch, with the configuration's windows, and save the corpus to a "
        "directory for 'citekit align --corpus DIR'.",
    )
    prepare.add_argument("--sources", required=True, metavar="S.jsonl", help="sources file")
    prepare.add_argument(
        "--out", required=True, metavar="CORPUS_DIR", help="directory to save the corpus to"
    )
    prepare.add_argument("--config", metavar="FILE", help="CitationConfig as .json or .toml")
    prepare.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_CHARS,
        metavar="N",
        help=f"characters of source text read per batch (default {DEFAULT_BATCH_CHARS:,}; "
        "the corpus does not depend on it)",
    )
    prepare.add_argument("--no-progress", action="store_true", help="no progress bar")
    prepare.set_defaults(run=_cmd_prepare)

    highlight = commands.add_parser(
        "highlight",
        help="highlight the passages of a source chunk that support an answer",
        description="Print the character spans of a source chunk that support an answer "
        "(find_answer_highlights).",
    )
    answer_group = highlight.add_mutually_exclusive_group(required=True)
    answer_group.add_argument("--answer", metavar="TEXT", help="the answer text")
    answer_group.add_argument("--answer-file", metavar="FILE", help="read the answer from FILE")
    source_group = highlight.add_mutually_exclusive_group(required=True)
    source_group.add_argument("--source", metavar="TEXT", help="the source chunk text")
    source_group.add_argument("--source-file", metavar="FILE", help="read the chunk from FILE")
    highlight.add_argument(
        "--all", action="store_true", help="every supporting passage, not only the longest"
    )
    highlight.add_argument(
        "--no-expand", action="store_true", help="exact token spans instead of whole lines"
    )
    highlight.add_argument(
        "--tokenizer",
        choices=("unicode_word", "char"),
        help="'char' for scripts without spaces (Chinese, Japanese, Thai)",
    )
    highlight.add_argument(
        "--offsets",
        choices=("python", "utf16"),
        default="python",
        help="offset unit (utf16 for JavaScript)",
    )
    highlight.add_argument("--json", action="store_true", help="print JSON")
    highlight.set_defaults(run=_cmd_highlight)

    evaluate = commands.add_parser(
        "evaluate",
        help="evaluate on annotated JSONL data (see 'citekit evaluate --help')",
        description="Align every record of an annotated JSON Lines file and print citation "
        "quality metrics (status accuracy / F1, AUROC, evidence and unsupported-span F1).",
    )
    evaluate.add_argument("file", help="evaluation records (.jsonl)")
    evaluate.add_argument("--config", help="CitationConfig as .json or .toml (default: defaults)")
    evaluate.add_argument(
        "--per-unit", action="store_true", help="align each annotated unit on its own"
    )
    evaluate.add_argument(
        "--limit", type=int, default=None, help="evaluate only the first N records"
    )
    evaluate.add_argument("--json", action="store_true", help="print the metrics as JSON")
    evaluate.add_argument(
        "--errors",
        type=int,
        default=0,
        metavar="N",
        help="also list the first N units whose predicted status differs from the gold label",
    )
    evaluate.set_defaults(run=_cmd_evaluate)

    from citekit._warm import add_command

    add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``citekit`` command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Examples
    --------
    >>> main(["align", "--answers", "no-such-file.jsonl", "--out", "out.jsonl"])
    2
    >>> main(["evaluate", "no-such-file.jsonl"])
    2
    >>> main(["align", "--no-such-option"])  # one line on stderr, no usage block
    2
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    try:
        args, unknown = parser.parse_known_args(args_list)
        if unknown:
            prog = f"citekit {args.command}" if args.command else "citekit"
            raise _UsageError(prog, f"unrecognized arguments: {' '.join(unknown)}")
    except _UsageError as exc:
        sys.stderr.write(f"{exc.prog}: error: {exc} (see '{exc.prog} --help')\n")
        return 2
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.run(args))
    except _InputError as exc:
        sys.stderr.write(f"citekit {args.command}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"citekit {args.command}: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
