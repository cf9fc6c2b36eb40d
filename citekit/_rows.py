"""Results as rows: plain dicts, pandas DataFrames, JSON Lines, UTF-16 offsets.

:func:`to_records` flattens results to one dict per sentence (the default: no sentence is
left out) or per citation (offsets in Python code points, or UTF-16 code units for
JavaScript front ends); :func:`to_dataframe` makes a pandas DataFrame of the same rows.
:func:`read_jsonl` / :func:`write_jsonl` read and write standard JSON Lines, through the
one reader of JSON Lines (:func:`numbered_jsonl`, also used by the command line and the
evaluation) with the file and the line number in every error. The public path of every
public name here is :mod:`citekit.batch`.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import zlib
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from citekit.results import AlignmentResult, RecordResult, SourceChunk, SpanCitations, source_views

__all__ = [
    "to_records",
    "to_dataframe",
    "utf16_offsets",
    "read_jsonl",
    "write_jsonl",
    "numbered_jsonl",
    "parse_json_object",
    "strict_json",
]


# ----------------------------------------------------------------------------- offsets


def utf16_offsets(text: str, positions: Iterable[int]) -> list[int]:
    """Convert code-point offsets into ``text`` to UTF-16 code-unit offsets.

    JavaScript strings index UTF-16 code units: every character outside the Basic
    Multilingual Plane (most emoji, rare CJK, mathematical letters) counts as two.

    Parameters
    ----------
    text : str
        The string the offsets index.
    positions : iterable of int
        Offsets in ``range(0, len(text) + 1)``.

    Returns
    -------
    list of int

    Examples
    --------
    >>> text = "a😀b"
    >>> utf16_offsets(text, [0, 1, 2, 3])
    [0, 1, 3, 4]
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    wanted = np.asarray(list(positions), dtype=np.int64)
    if wanted.size and (wanted.min() < 0 or wanted.max() > len(text)):
        raise ValueError(f"positions must lie in [0, {len(text)}]")
    return (wanted + _astral_prefix(text)[wanted]).tolist()


def _astral_prefix(text: str) -> np.ndarray:
    """``prefix[i]`` = number of astral characters in ``text[:i]``."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    prefix = np.zeros(len(text) + 1, dtype=np.int64)
    np.cumsum(codes > 0xFFFF, out=prefix[1:])
    return prefix


class _OffsetMapper:
    """Maps offsets of one text to the requested unit (identity for ``"python"``)."""

    def __init__(self, text: str | None, utf16: bool, what: str) -> None:
        self._prefix = _astral_prefix(text) if (utf16 and text is not None) else None
        self.utf16 = utf16
        self._what = what

    def __call__(self, position: int) -> int:
        if not self.utf16:
            return position
        if self._prefix is None:
            raise ValueError(f"offsets='utf16' needs {self._what}")
        if not 0 <= position < len(self._prefix):
            raise ValueError(
                f"offset {position} lies outside the text ({len(self._prefix) - 1} "
                "characters): pass the answer and sources the results came from"
            )
        return position + int(self._prefix[position])


# the mapper of Python offsets (the identity)
_PYTHON_OFFSETS = _OffsetMapper(None, False, "")

# ----------------------------------------------------------------------------- rows


_LEVELS = ("citation", "sentence")


_Group = tuple[Any, Sequence[SpanCitations], "str | None", Any]


def _collect(results: Any) -> tuple[list[_Group], bool]:
    """Normalize the accepted inputs to ``(record_id, spans, answer, sources)`` tuples,
    and say whether they came from records (rows then carry ``record_id``)."""
    if isinstance(results, RecordResult):
        results = [results]
    if isinstance(results, AlignmentResult):
        return [(None, results, results.answer, results.sources)], False
    if isinstance(results, (str, bytes, Mapping)) or not isinstance(results, Iterable):
        raise TypeError(
            "results must be an AlignmentResult, a list of SpanCitations or an iterable of "
            f"RecordResult, got {type(results).__name__}"
        )
    items = list(results)
    if all(isinstance(item, SpanCitations) for item in items):
        return [(None, items, None, None)], False
    if all(isinstance(item, RecordResult) for item in items):
        return [
            (item.id, item.result, item.result.answer, item.result.sources)
            for item in items
            if item.result is not None
        ], True
    first_kind = SpanCitations if isinstance(items[0], SpanCitations) else RecordResult
    bad = next(i for i, item in enumerate(items) if not isinstance(item, first_kind))
    raise TypeError(
        f"results[{bad}] must be a SpanCitations or a RecordResult (not mixed), "
        f"got {type(items[bad]).__name__}"
    )


class _SourceMappers:
    """The UTF-16 offset mapper of each source, made when a row first needs it (a result
    against a large corpus maps only the sources it cites)."""

    def __init__(self, sources: Any) -> None:
        self._raw = getattr(sources, "sources", sources)
        self._views = source_views(self._raw) if self._raw is not None else []
        self._mappers: dict[int, _OffsetMapper] = {}

    def get(self, index: int) -> _OffsetMapper | None:
        if not 0 <= index < len(self._views):
            return None
        mapper = self._mappers.get(index)
        if mapper is None:
            view = self._views[index]
            if view.base and isinstance(self._raw[index], SourceChunk):
                mapper = _OffsetMapper(
                    None,
                    True,
                    f"the parent document of SourceChunk {view.label!r} (set document_text)",
                )
            else:
                mapper = _OffsetMapper(view.text, True, "")
            self._mappers[index] = mapper
        return mapper


def to_records(
    results: Any,
    *,
    level: str = "sentence",
    offsets: str = "python",
    answer: str | None = None,
    sources: Any = None,
) -> list[dict[str, Any]]:
    """Flatten results into plain dicts: one per citation or one per answer sentence.

    Parameters
    ----------
    results : AlignmentResult, list of SpanCitations, or iterable of RecordResult
        One answer's results, or the output of :func:`score_records` (rows then start
        with ``record_id``; failed records give no rows).
    level : {"sentence", "citation"}, optional
        ``"sentence"`` (the default): one row per answer span, every span of the answer
        included, with its status, number of citations, ``content_coverage`` (what the
        status is decided on), uncovered ranges, and the best citation's source,
        offsets, score and components (``None`` for a span without citations). Rates of
        statuses computed from these rows are rates over sentences.
        ``"citation"``: one row per citation, with its rank, source, offsets, evidence,
        score and every score component; a sentence with no citation (every
        ``unsupported`` one) has no row here, and a sentence with three citations has
        three.
    offsets : {"python", "utf16"}, optional
        Unit of every offset: Python ``str`` indices, or UTF-16 code units (what
        JavaScript's ``String.prototype.slice`` expects). With ``"utf16"``, every offset
        a row carries is converted: the sentence, citation, evidence-span, conflict and
        uncovered ranges, and the score components ``passage_char_start`` /
        ``passage_char_end``; the component ``evidence_chars_total`` then counts UTF-16
        code units. ``"utf16"`` needs the answer and source texts: an
        ``AlignmentResult`` carries them, otherwise pass ``answer`` and ``sources``.
    answer : str, optional
        The answer, when ``results`` is a plain list and ``offsets="utf16"``.
    sources : sequence, optional
        The sources, when ``results`` is a plain list and ``offsets="utf16"``.

    Returns
    -------
    list of dict
        JSON-serializable rows.

    Examples
    --------
    >>> from citekit.results import AnswerSpan, Citation, SpanCitations
    >>> answer, source = "Cats 😺 purr.", "Yes: cats 😺 purr."
    >>> cite = Citation(score=2.0, source_id="s", source_index=0, candidate_index=0,
    ...                 char_start=5, char_end=16, evidence="cats 😺 purr",
    ...                 components={"answer_coverage": 1.0})
    >>> spans = [SpanCitations(AnswerSpan(answer, 0, 12), (cite,), "supported")]
    >>> row = to_records(spans)[0]
    >>> row["status"], row["n_citations"], row["char_start"], row["answer_coverage"]
    ('supported', 1, 5, 1.0)
    >>> row = to_records(spans, level="citation")[0]
    >>> row["rank"], row["char_start"], row["char_end"]
    (0, 5, 16)
    >>> row = to_records(spans, offsets="utf16", answer=answer, sources=[source])[0]
    >>> row["char_start"], row["char_end"], row["sentence_end"]
    (5, 17, 13)
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be 'citation' or 'sentence', got {level!r}")
    if offsets not in ("python", "utf16"):
        raise ValueError(f"offsets must be 'python' or 'utf16', got {offsets!r}")
    if answer is not None and not isinstance(answer, str):
        raise TypeError(f"answer must be a str, got {type(answer).__name__}")
    if sources is not None:
        # (checked when given, not only when offsets='utf16' reads them)
        source_views(getattr(sources, "sources", sources))
    utf16 = offsets == "utf16"
    groups, with_record_id = _collect(results)
    rows: list[dict[str, Any]] = []
    for record_id, spans, group_answer, group_sources in groups:
        answer_text = group_answer if group_answer is not None else answer
        map_answer = _OffsetMapper(answer_text, utf16, "the answer text (pass answer=...)")
        source_maps = (
            _SourceMappers(group_sources if group_sources is not None else sources)
            if utf16
            else None
        )

        def map_source(index: int) -> Any:
            if source_maps is None:
                return _PYTHON_OFFSETS
            mapper = source_maps.get(index)
            if mapper is None:
                raise ValueError("offsets='utf16' needs the source texts (pass sources=...)")
            return mapper

        for span_index, item in enumerate(spans):
            base = {"record_id": record_id} if with_record_id else {}
            base.update(
                span_index=span_index,
                sentence_start=map_answer(item.answer_span.char_start),
                sentence_end=map_answer(item.answer_span.char_end),
                sentence=item.answer_span.text,
                status=item.status,
            )
            if level == "sentence":
                row = dict(base)
                row["n_citations"] = len(item.citations)
                # share of content tokens covered without conflicts (what decides status)
                row["content_coverage"] = getattr(item, "content_coverage", None)
                row["unsupported_spans"] = [
                    [map_answer(s), map_answer(e)] for s, e in item.unsupported_spans
                ]
                # the best citation's, as for the other citation columns of a sentence row
                row["n_conflicts"] = len(item.citations[0].conflicts) if item.citations else 0
                best = item.citations[0] if item.citations else None
                row.update(
                    _citation_columns(
                        best, map_answer, map_source(best.source_index) if best else None
                    )
                )
                rows.append(row)
                continue
            for rank, citation in enumerate(item.citations):
                row = dict(base)
                row["rank"] = rank
                row.update(
                    _citation_columns(citation, map_answer, map_source(citation.source_index))
                )
                rows.append(row)
    return rows


_CITATION_COLUMNS = (
    "source_id",
    "source_index",
    "candidate_index",
    "char_start",
    "char_end",
    "evidence",
    "score",
    "evidence_spans",
    "answer_char_start",
    "answer_char_end",
    "conflicts",
)


def _citation_columns(citation: Any, map_answer: Any, map_source: Any) -> dict[str, Any]:
    if citation is None:
        return {name: None for name in _CITATION_COLUMNS}
    row: dict[str, Any] = {
        "source_id": citation.source_id,
        "source_index": citation.source_index,
        "candidate_index": citation.candidate_index,
        "char_start": map_source(citation.char_start),
        "char_end": map_source(citation.char_end),
        "evidence": citation.evidence,
        "score": citation.score,
        "evidence_spans": [
            [map_source(span.char_start), map_source(span.char_end)]
            for span in citation.evidence_spans
        ],
        "answer_char_start": map_answer(citation.answer_char_start),
        "answer_char_end": map_answer(citation.answer_char_end),
        "conflicts": [
            {
                "kind": c.kind,
                "answer_text": c.answer_text,
                "answer_char_start": map_answer(c.answer_char_start),
                "answer_char_end": map_answer(c.answer_char_end),
                "evidence_text": c.evidence_text,
                "evidence_char_start": map_source(c.evidence_char_start),
                "evidence_char_end": map_source(c.evidence_char_end),
            }
            for c in citation.conflicts
        ],
    }
    for name, value in citation.components.items():
        if name in _COMPONENT_OFFSETS:
            # source offsets, as the citation's own (stored as floats like every component)
            value = float(map_source(int(value)))
        elif name == "evidence_chars_total" and map_source.utf16:
            # the length of the evidence spans, in the unit of their offsets
            value = float(sum(end - start for start, end in row["evidence_spans"]))
        row[name if name not in row and name not in _BASE_COLUMNS else f"component_{name}"] = value
    return row


# score components that are offsets into the source (converted with the other offsets)
_COMPONENT_OFFSETS = frozenset(("passage_char_start", "passage_char_end"))


_BASE_COLUMNS = frozenset(
    (
        "record_id",
        "span_index",
        "sentence_start",
        "sentence_end",
        "sentence",
        "status",
        "rank",
        "n_citations",
        "content_coverage",
        "unsupported_spans",
        "n_conflicts",
    )
)


def to_dataframe(
    results: Any,
    *,
    level: str = "sentence",
    offsets: str = "python",
    answer: str | None = None,
    sources: Any = None,
) -> Any:
    """The rows of :func:`to_records` as a pandas DataFrame (needs ``citekit[pandas]``).

    By default one row per answer sentence, every sentence included (``unsupported`` ones
    too), with its status and best citation; ``level="citation"`` gives one row per
    citation (a sentence without citations then has no row). The arguments are those of
    :func:`to_records`.

    Examples
    --------
    >>> from citekit.results import AnswerSpan, SpanCitations
    >>> spans = [SpanCitations(AnswerSpan("Hi.", 0, 3), (), "unsupported")]
    >>> to_dataframe(spans)[["sentence", "status", "n_citations"]]
      sentence       status  n_citations
    0      Hi.  unsupported            0
    """
    from citekit._optional import import_optional

    pandas = import_optional("pandas", "pandas", purpose="to_dataframe")
    rows = to_records(results, level=level, offsets=offsets, answer=answer, sources=sources)
    return pandas.DataFrame.from_records(rows)


# ----------------------------------------------------------------------------- JSON Lines


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Yield the JSON object on each non-blank line of a file.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        ``"<path>, line N: ..."`` for a line that is not UTF-8, not valid JSON or not an
        object (as :func:`numbered_jsonl`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.jsonl"
    >>> _ = path.write_text('{"id": 1}\\n\\n{"id": 2}\\n[3]\\n')
    >>> next(read_jsonl(path))
    {'id': 1}
    >>> list(read_jsonl(path))
    Traceback (most recent call last):
    ...
    ValueError: ...a.jsonl, line 4: expected a JSON object, got list
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    return (value for _, value in numbered_jsonl(path))


def numbered_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines file.

    The one reader of JSON Lines in citekit (:func:`read_jsonl`, the command line and
    :func:`citekit.evaluate.load_records` read through it), so that every error is worded
    alike: ``"<path>, line N: ..."``. Lines must be UTF-8 and standard JSON objects
    (``NaN`` and ``Infinity`` are not standard JSON and are refused). A file whose name
    ends with ``.gz`` is read as gzip.

    Raises
    ------
    TypeError
        If ``path`` is not a path.
    FileNotFoundError
        If the file does not exist.
    ValueError
        ``"<path>, line N: ..."`` for a line that is not UTF-8, not valid JSON, nested
        too deeply, or not an object; ``"<path>: ..."`` for a damaged gzip file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.jsonl"
    >>> _ = path.write_text('{"id": 1}\\n\\n{"id": 2}\\n')
    >>> list(numbered_jsonl(path))
    [(1, {'id': 1}), (3, {'id': 2})]
    >>> _ = path.write_text('{"id": NaN}\\n')
    >>> list(numbered_jsonl(path))
    Traceback (most recent call last):
    ...
    ValueError: ...a.jsonl, line 1: invalid JSON (NaN is not standard JSON)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    name = os.fspath(path)
    # (a compressed file is read as it is decompressed, line by line)
    opener: Any = gzip.open if name.lower().endswith(".gz") else open
    with opener(path, "rb") as handle:
        for number, raw in enumerate(_lines(handle, name), start=1):
            where = f"{name}, line {number}"
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a byte order mark (some Windows editors write one)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{where}: not UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} "
                    "of the line)"
                ) from None
            if not line.strip():
                continue
            yield number, parse_json_object(line, where)


def _lines(handle: Any, name: str) -> Iterator[bytes]:
    """The lines of an open file; a damaged gzip file's error (whose own message names
    neither the file nor what it is) as a ``ValueError`` naming the file."""
    try:
        yield from handle
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ValueError(f"{name}: not a complete gzip file ({exc})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not standard JSON")


def parse_json_object(text: str, where: str) -> dict[str, Any]:
    """Parse one JSON object; a ``ValueError`` starting with ``where`` says what is wrong.

    Examples
    --------
    >>> parse_json_object('{"a": 1}', "x.jsonl, line 1")
    {'a': 1}
    >>> parse_json_object('[1]', "x.jsonl, line 1")
    Traceback (most recent call last):
    ...
    ValueError: x.jsonl, line 1: expected a JSON object, got list
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        # (one JSONL record is one line: its line number is the caller's, in ``where``)
        at = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        raise ValueError(f"{where}: invalid JSON ({exc.msg} at {at})") from None
    except ValueError as exc:  # a refused constant
        raise ValueError(f"{where}: invalid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{where}: JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def strict_json(value: Any, *, indent: int | None = None) -> str:
    """``value`` as standard JSON (UTF-8 text, not ASCII-escaped; on one line unless
    ``indent`` is given).

    ``json.dumps`` writes a non-finite float as ``NaN`` or ``Infinity``, which is not
    JSON and which strict readers (JavaScript's ``JSON.parse``, ``jq``) refuse: such
    numbers are written as ``null``. Everything citekit writes as JSON goes through it.

    Examples
    --------
    >>> strict_json({"id": float("nan"), "score": [1.5, float("inf")], "text": "café"})
    '{"id": null, "score": [1.5, null], "text": "café"}'
    """
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError:  # a non-finite float somewhere: rare, so only then walk the value
        return json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, indent=indent)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def write_jsonl(rows: Iterable[Any], path_or_file: Any) -> int:
    """Write one JSON object per line (UTF-8, not ASCII-escaped); return the line count.

    Lines are standard JSON (:func:`strict_json`: a non-finite number is written as
    ``null``).

    ``rows`` may hold dicts or objects with ``to_dict()`` (e.g. :class:`RecordResult`).

    Examples
    --------
    >>> import io
    >>> buffer = io.StringIO()
    >>> write_jsonl([{"id": 1, "text": "café"}], buffer)
    1
    >>> buffer.getvalue()
    '{"id": 1, "text": "café"}\\n'
    """
    if isinstance(path_or_file, (str, os.PathLike)):
        with open(path_or_file, "w", encoding="utf-8") as handle:
            return write_jsonl(rows, handle)
    if not isinstance(path_or_file, io.IOBase) and not hasattr(path_or_file, "write"):
        raise TypeError(
            f"path_or_file must be a path or a text file, got {type(path_or_file).__name__}"
        )
    count = 0
    for row in rows:
        data = row.to_dict() if hasattr(row, "to_dict") else row
        path_or_file.write(strict_json(data) + "\n")
        count += 1
    return count
