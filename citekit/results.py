"""Result and input records: sources, answer spans, citations.

The records are frozen dataclasses with ``to_dict()`` / ``from_dict()`` and JSON
round-trip; :class:`AlignmentResult` is the list of one answer's span results and
``RecordResult`` the outcome of scoring one record of a batch. Every character offset is
a half-open index in Python ``str`` (code point) units into the string the caller passed:
for a citation, ``source_text[citation.char_start:citation.char_end] == citation.evidence``.
:func:`source_views` gives the text and offset base of every kind of source to the layers
that show or convert results.
"""

from __future__ import annotations

import json
import math
import numbers
from collections import abc
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Callable, Iterable, Mapping, Sequence

# The largest offset a record may carry: no text is that long, and every offset up to it
# stays exact as a float64 (score components) and in JSON read by JavaScript (2**53 - 1).
MAX_OFFSET = 2**53 - 1

__all__ = [
    "STATUSES",
    "SourceDocument",
    "SourceChunk",
    "AnswerSpan",
    "EvidenceSpan",
    "Conflict",
    "Citation",
    "RetrievalSupport",
    "SpanCitations",
    "AlignmentResult",
    "FrozenList",
    "results_to_json",
    "results_from_json",
]

STATUSES = ("supported", "partial", "unsupported")


class FrozenList(tuple):
    """An immutable sequence of a record's items that compares equal to a list.

    cite-right documents its sequence fields (``SpanCitations.citations``,
    ``Citation.evidence_spans``, the metric collections) as lists, so cite-right code
    writes ``result[0].citations == []``. citekit's records are frozen and keep their
    items in a tuple, which would compare unequal to any list: this tuple subclass also
    equals a list holding equal items, in the same order. Everything else is a tuple's
    (hashing, pickling, ``repr``, concatenation with tuples).

    Examples
    --------
    >>> FrozenList() == [], FrozenList((1, 2)) == [1, 2], [1, 2] == FrozenList((1, 2))
    (True, True, True)
    >>> FrozenList((1, 2)) == (1, 2), FrozenList((1, 2)) != [2, 1]
    (True, True)
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    # (equal to a list, which is unhashable, so the tuple's hash stays consistent)
    __hash__ = tuple.__hash__


def _check_type(obj: Any, name: str, kinds: Any, *, allow_none: bool = False) -> None:
    value = getattr(obj, name)
    if value is None and allow_none:
        return
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, bool) and bool not in allowed:
        raise TypeError(f"{type(obj).__name__}.{name} must be {_names(allowed)}, got bool")
    if not isinstance(value, kinds):
        # numpy's integers and floats (an offset read from an array) as Python numbers
        if int in allowed and isinstance(value, numbers.Integral):
            object.__setattr__(obj, name, int(value))
            return
        if float in allowed and isinstance(value, numbers.Real):
            object.__setattr__(obj, name, float(value))
            return
        raise TypeError(
            f"{type(obj).__name__}.{name} must be {_names(allowed)}, got {type(value).__name__}"
        )


def _names(kinds: tuple[type, ...]) -> str:
    return " or ".join(kind.__name__ for kind in kinds)


def _check_length(obj: Any, start: str, end: str, text: str) -> None:
    """``len(text) == end - start``: the text is the characters the offsets give."""
    s, e, value = getattr(obj, start), getattr(obj, end), getattr(obj, text)
    if len(value) != e - s:
        raise ValueError(
            f"{type(obj).__name__}: {text} must hold {end} - {start} = {e - s} characters, "
            f"got {len(value)}"
        )


def _check_range(obj: Any, start: str, end: str) -> None:
    s, e = getattr(obj, start), getattr(obj, end)
    _check_type(obj, start, int)
    _check_type(obj, end, int)
    if s < 0 or e < s:
        raise ValueError(
            f"{type(obj).__name__}: need 0 <= {start} <= {end}, got {start}={s}, {end}={e}"
        )
    if e > MAX_OFFSET:
        raise ValueError(
            f"{type(obj).__name__}.{end} must be <= {MAX_OFFSET} (2**53 - 1), got {e}"
        )


def _freeze_mapping(obj: Any, name: str) -> None:
    value = getattr(obj, name)
    if value is None:
        value = {}
    # (collections.abc's class: typing's alias checks through a slower hook, per record)
    if type(value) is not dict and not isinstance(value, abc.Mapping):
        raise TypeError(
            f"{type(obj).__name__}.{name} must be a mapping, got {type(value).__name__}"
        )
    object.__setattr__(obj, name, dict(value))


def _freeze_tuple(obj: Any, name: str, item_type: type | None = None) -> None:
    value = getattr(obj, name)
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{type(obj).__name__}.{name} must be a sequence, got {type(value).__name__}"
        )
    items = tuple(value)
    if item_type is not None:
        converted = []
        for item in items:
            if isinstance(item, Mapping) and hasattr(item_type, "from_dict"):
                item = item_type.from_dict(item)
            if not isinstance(item, item_type):
                raise TypeError(
                    f"{type(obj).__name__}.{name} must hold {item_type.__name__} items, "
                    f"got {type(item).__name__}"
                )
            converted.append(item)
        items = tuple(converted)
    object.__setattr__(obj, name, FrozenList(items))


# per record class: the function building its records without their checks
_BUILDERS: dict[type, Callable[..., Any]] = {}
_NO_VALUE = object()  # (a field with a default factory that was not given)


def _unchecked_builder(cls: type) -> Callable[..., Any]:
    """The function building ``cls`` records from values already in the form
    ``__post_init__`` would leave them in (exact types, tuples, a fresh dict), without
    running its checks: the pipeline's own records, thousands per call.

    It takes every field by keyword (omitted ones take their defaults, a default
    factory a fresh value) and sets them all in one update of the instance dict, in
    field order (a frozen dataclass keeps its fields there): one call more than writing
    that update by hand, while Python's own argument binding refuses unknown and missing
    fields. Made once per class (as :mod:`dataclasses` makes ``__init__``).

    Examples
    --------
    >>> new_span = _unchecked_builder(EvidenceSpan)
    >>> new_span(char_start=1, char_end=3, evidence="ab")
    EvidenceSpan(char_start=1, char_end=3, evidence='ab')
    """
    builder = _BUILDERS.get(cls)
    if builder is not None:
        return builder
    namespace: dict[str, Any] = {"cls": cls, "new": object.__new__, "NO_VALUE": _NO_VALUE}
    parameters, factories = [], []
    for position, record_field in enumerate(fields(cls)):
        name = record_field.name
        if record_field.default is not MISSING:
            namespace[f"default_{position}"] = record_field.default
            parameters.append(f"{name}=default_{position}")
        elif record_field.default_factory is not MISSING:
            namespace[f"factory_{position}"] = record_field.default_factory
            parameters.append(f"{name}=NO_VALUE")
            factories.append(f"    if {name} is NO_VALUE:\n        {name} = factory_{position}()\n")
        else:
            parameters.append(name)
    names = [record_field.name for record_field in fields(cls)]
    # the sequence fields as FrozenList (the pipeline hands tuples; one check per record)
    sequences = "".join(
        f"    if type({f.name}) is not FrozenList:\n        {f.name} = FrozenList({f.name})\n"
        for f in fields(cls)
        if str(f.type).startswith("tuple[")
    )
    namespace["FrozenList"] = FrozenList
    source = (
        f"def {cls.__name__}(*, {', '.join(parameters)}):\n"
        + "".join(factories)
        + sequences
        + "    record = new(cls)\n"
        + f"    record.__dict__.update({', '.join(f'{n}={n}' for n in names)})\n"
        + "    return record\n"
    )
    exec(source, namespace)  # (field names are identifiers: nothing else is compiled in)
    builder = _BUILDERS[cls] = namespace[cls.__name__]
    return builder


def _unchecked(cls: type, /, **values: Any) -> Any:
    """A ``cls`` record built from ``values`` without its checks, as
    :func:`_unchecked_builder` builds it (code building many binds the builder once).

    Examples
    --------
    >>> _unchecked(EvidenceSpan, char_start=1, char_end=3, evidence="ab").evidence
    'ab'
    """
    builder = _BUILDERS.get(cls) or _unchecked_builder(cls)
    try:
        return builder(**values)
    except TypeError:
        # (said in the records' terms)
        unknown = sorted(set(values) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"{cls.__name__}: unknown field {unknown[0]!r}") from None
        missing = [
            f.name
            for f in fields(cls)
            if f.default is MISSING and f.default_factory is MISSING and f.name not in values
        ]
        if missing:
            raise TypeError(f"{cls.__name__}: missing field {missing[0]!r}") from None
        raise


class _Record:
    """Shared ``to_dict`` / ``from_dict`` / JSON behaviour of the records."""

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON-compatible data (nested records become dicts)."""
        record_fields = fields(self)  # type: ignore[arg-type]
        return {f.name: _plain(getattr(self, f.name)) for f in record_fields}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """Build the record from :meth:`to_dict` output (unknown keys are rejected)."""
        if not isinstance(data, Mapping):
            raise TypeError(
                f"{cls.__name__}.from_dict expects a mapping, got {type(data).__name__}"
            )
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"{cls.__name__}.from_dict got unknown keys: {sorted(unknown)}")
        return cls(**dict(data))

    def to_json(self, **kwargs: Any) -> str:
        """Serialize with :func:`json.dumps` (keyword arguments are passed through)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Any:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


def _plain(value: Any) -> Any:
    if isinstance(value, _Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class SourceDocument(_Record):
    """A complete source document.

    Examples
    --------
    >>> SourceDocument(id="report", text="Revenue grew 15%.").id
    'report'
    """

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_type(self, "id", str)
        _check_type(self, "text", str)
        _freeze_mapping(self, "metadata")


@dataclass(frozen=True)
class SourceChunk(_Record):
    """An excerpt of a larger document; citation offsets are reported in the parent.

    ``doc_char_start``/``doc_char_end`` locate ``text`` in the parent document (at most
    ``2**53 - 1``, which every offset stays exact under as a float and in JSON). When
    ``document_text`` is given it must satisfy
    ``document_text[doc_char_start:doc_char_end] == text``.

    Examples
    --------
    >>> doc = "Intro. Revenue grew 15%."
    >>> chunk = SourceChunk(source_id="d", text="Revenue grew 15%.", doc_char_start=7,
    ...                     doc_char_end=24, document_text=doc)
    >>> doc[chunk.doc_char_start:chunk.doc_char_end] == chunk.text
    True
    """

    source_id: str
    text: str
    doc_char_start: int
    doc_char_end: int
    metadata: Mapping[str, Any] = field(default_factory=dict)
    document_text: str | None = None
    source_index: int | None = None

    def __post_init__(self) -> None:
        _check_type(self, "source_id", str)
        _check_type(self, "text", str)
        _check_range(self, "doc_char_start", "doc_char_end")
        _check_type(self, "document_text", str, allow_none=True)
        _check_type(self, "source_index", int, allow_none=True)
        _freeze_mapping(self, "metadata")
        if self.doc_char_end - self.doc_char_start != len(self.text):
            raise ValueError(
                "SourceChunk: doc_char_end - doc_char_start must equal len(text) "
                f"({self.doc_char_end} - {self.doc_char_start} != {len(self.text)})"
            )
        if self.document_text is not None:
            if self.document_text[self.doc_char_start : self.doc_char_end] != self.text:
                raise ValueError(
                    "SourceChunk: document_text[doc_char_start:doc_char_end] must equal text"
                )
        if self.source_index is not None and not 0 <= self.source_index <= MAX_OFFSET:
            raise ValueError(
                f"SourceChunk.source_index must be in [0, {MAX_OFFSET}], got {self.source_index}"
            )


@dataclass(frozen=True)
class SourceView:
    """A source as the layers above see it: ``text`` covers citation offsets
    ``[base, base + len(text))``.

    ``label`` is the source's id (its position for a plain string), ``title`` its
    ``metadata["title"]`` (or ``""``). For a :class:`SourceChunk` without
    ``document_text``, ``text`` is the chunk and ``base`` its ``doc_char_start``;
    otherwise ``text`` is the whole document and ``base`` is 0.
    """

    label: str
    title: str
    text: str
    base: int


#: sources beyond this many are read through :class:`SourceViews` as they are used
#: (checked when read), not all at once
EAGER_VIEWS = 1024


def _view_of(index: int, source: Any) -> SourceView:
    """The :class:`SourceView` of ``sources[index]`` (a TypeError naming it otherwise)."""
    if isinstance(source, str):
        return SourceView(str(index), "", source, 0)
    if isinstance(source, SourceDocument):
        return SourceView(source.id, str(source.metadata.get("title", "")), source.text, 0)
    if isinstance(source, SourceChunk):
        title = str(source.metadata.get("title", ""))
        if source.document_text is not None:
            return SourceView(source.source_id, title, source.document_text, 0)
        return SourceView(source.source_id, title, source.text, source.doc_char_start)
    if isinstance(source, Mapping) and isinstance(source.get("text"), str):
        title = str(source.get("title", "") or "")
        return SourceView(str(source.get("id", index)), title, source["text"], 0)
    raise TypeError(
        f"sources[{index}] must be a str, SourceDocument, SourceChunk or a dict with "
        f"'text', got {type(source).__name__}"
    )


class SourceViews(abc.Sequence):
    """The :class:`SourceView` of each of many sources, made when first read (and kept):
    what :func:`source_views` gives for more than :data:`EAGER_VIEWS` sources, so that a
    result against a corpus of a million sources (a memory-mapped one decodes a source
    when it is read) is shown or exported by reading only the sources it cites. A view
    may be replaced (``views[i] = view``), as in a list.

    Examples
    --------
    >>> views = SourceViews(["Hi.", "Bye."])
    >>> len(views), views[1].text, views[-1].label
    (2, 'Bye.', '1')
    """

    def __init__(self, sources: Sequence[Any]) -> None:
        self._sources = sources
        self._views: dict[int, SourceView] = {}

    def __len__(self) -> int:
        return len(self._sources)

    def _position(self, index: Any) -> int:
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TypeError(f"source views are indexed by int, got {type(index).__name__}")
        position = int(index) + (len(self) if index < 0 else 0)
        if not 0 <= position < len(self):
            raise IndexError(f"source index {index} out of range for {len(self)} sources")
        return position

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = self._position(index)
        view = self._views.get(position)
        if view is None:
            view = self._views[position] = _view_of(position, self._sources[position])
        return view

    def __setitem__(self, index: int, view: SourceView) -> None:
        self._views[self._position(index)] = view


def source_views(sources: Any) -> Sequence[SourceView]:
    """One :class:`SourceView` per source: the id, title and text of each kind of source
    (``str``, :class:`SourceDocument`, :class:`SourceChunk`, a dict with ``"text"``) and
    where its text lies in the offsets citations report.

    The HTML renderer (:mod:`citekit.display`) and the UTF-16 rows (:mod:`citekit.batch`)
    read sources through it. A prepared corpus is accepted wherever a list of sources is
    (its ``sources`` are used). Up to :data:`EAGER_VIEWS` sources give a list, every
    source checked now; more give a :class:`SourceViews`, each source read and checked
    when its view is first read.

    Raises
    ------
    TypeError
        If ``sources`` is not a sequence of sources (naming the bad item).

    Examples
    --------
    >>> chunk = SourceChunk(source_id="d", text="grew 15%.", doc_char_start=8, doc_char_end=17)
    >>> [(v.label, v.text, v.base) for v in source_views(["Hi.", chunk])]
    [('0', 'Hi.', 0), ('d', 'grew 15%.', 8)]
    """
    # A prepared corpus carries its sources; accept it wherever a list of sources is.
    sources = getattr(sources, "sources", sources)
    if isinstance(sources, (str, bytes, Mapping)) or not isinstance(sources, Iterable):
        raise TypeError(
            f"sources must be a sequence of sources (str, SourceDocument, SourceChunk or dict), "
            f"got {type(sources).__name__}"
        )
    if isinstance(sources, abc.Sequence) and len(sources) > EAGER_VIEWS:
        return SourceViews(sources)
    return [_view_of(index, source) for index, source in enumerate(sources)]


@dataclass(frozen=True)
class AnswerSpan(_Record):
    """A segment of the answer: ``answer[char_start:char_end] == text``.

    Examples
    --------
    >>> AnswerSpan(text="Hi.", char_start=0, char_end=3).kind
    'sentence'
    """

    text: str
    char_start: int
    char_end: int
    kind: str = "sentence"
    paragraph_index: int | None = None
    sentence_index: int | None = None

    def __post_init__(self) -> None:
        _check_type(self, "text", str)
        _check_range(self, "char_start", "char_end")
        _check_length(self, "char_start", "char_end", "text")
        if self.kind not in ("sentence", "clause", "paragraph"):
            raise ValueError(
                f"AnswerSpan.kind must be 'sentence', 'clause' or 'paragraph', got {self.kind!r}"
            )
        _check_type(self, "paragraph_index", int, allow_none=True)
        _check_type(self, "sentence_index", int, allow_none=True)


@dataclass(frozen=True)
class EvidenceSpan(_Record):
    """One contiguous piece of evidence: ``source_text[char_start:char_end] == evidence``.

    Examples
    --------
    >>> EvidenceSpan(char_start=0, char_end=7, evidence="Revenue").evidence
    'Revenue'
    """

    char_start: int
    char_end: int
    evidence: str

    def __post_init__(self) -> None:
        _check_range(self, "char_start", "char_end")
        _check_type(self, "evidence", str)
        _check_length(self, "char_start", "char_end", "evidence")


@dataclass(frozen=True)
class Conflict(_Record):
    """A value in the answer that differs from the value at the aligned evidence position.

    ``kind`` is one of ``"number"``, ``"percent"``, ``"currency"``, ``"date"``, or
    ``"negation"``: a negator in the scope of the aligned content on one side only, whose
    texts are each side's aligned range widened to its negator. Answer
    offsets index the answer string; evidence offsets index the source text. The texts
    hold the values with their signs, currency and percent signs, their scale words when
    both state a scale, and the words before or after them when one says a rise and the
    other a fall (``"rose 3%"`` against ``"fell 3%"``, ``"3% higher"`` against
    ``"3% lower"``, ``"rose to 3%"`` against ``"fell to 3%"``).

    Examples
    --------
    >>> c = Conflict("percent", "9%", 10, 12, "15%", 30, 33)
    >>> c.answer_text, c.evidence_text
    ('9%', '15%')
    """

    kind: str
    answer_text: str
    answer_char_start: int
    answer_char_end: int
    evidence_text: str
    evidence_char_start: int
    evidence_char_end: int

    def __post_init__(self) -> None:
        _check_type(self, "kind", str)
        _check_type(self, "answer_text", str)
        _check_type(self, "evidence_text", str)
        _check_range(self, "answer_char_start", "answer_char_end")
        _check_range(self, "evidence_char_start", "evidence_char_end")
        _check_length(self, "answer_char_start", "answer_char_end", "answer_text")
        _check_length(self, "evidence_char_start", "evidence_char_end", "evidence_text")


@dataclass(frozen=True)
class Citation(_Record):
    """Evidence in one source for one answer span.

    Attributes
    ----------
    score : float
        Weighted sum of the score components (see ``CitationWeights``).
    source_id, source_index : str, int
        Which source (``SourceDocument.id`` / ``SourceChunk.source_id``) and its
        position in the sources passed.
    candidate_index : int
        Index of the passage window the evidence came from.
    char_start, char_end, evidence : int, int, str
        The contiguous evidence: ``source_text[char_start:char_end] == evidence``,
        absolute in the parent document for a ``SourceChunk``.
    evidence_spans : tuple of EvidenceSpan
        The evidence as separate spans (multi-span mode), else one span equal to
        ``(char_start, char_end)``.
    components : mapping of str to float
        Score components: ``alignment_score``, ``normalized_alignment``, ``matches``,
        ``answer_coverage``, ``evidence_coverage``, ``lexical_score``,
        ``embedding_score``, ``num_evidence_spans``, ``evidence_chars_total``,
        ``passage_char_start``, ``passage_char_end`` and any the pipeline adds.
    answer_char_start, answer_char_end : int
        The part of the answer string the alignment covered.
    conflicts : tuple of Conflict
        Values (numbers, percentages, amounts, dates) that differ between the answer and
        the evidence at aligned positions.

    Examples
    --------
    >>> c = Citation(score=2.5, source_id="s", source_index=0, candidate_index=0,
    ...              char_start=0, char_end=7, evidence="Revenue")
    >>> c.evidence_texts
    ('Revenue',)
    """

    score: float
    source_id: str
    source_index: int
    candidate_index: int
    char_start: int
    char_end: int
    evidence: str
    evidence_spans: tuple[EvidenceSpan, ...] = ()
    components: Mapping[str, float] = field(default_factory=dict)
    answer_char_start: int = 0
    answer_char_end: int = 0
    conflicts: tuple[Conflict, ...] = ()

    def __post_init__(self) -> None:
        _check_type(self, "score", (int, float))
        if isinstance(self.score, bool) or not math.isfinite(self.score):
            raise ValueError(f"Citation.score must be a finite number, got {self.score!r}")
        object.__setattr__(self, "score", float(self.score))
        _check_type(self, "source_id", str)
        _check_type(self, "source_index", int)
        _check_type(self, "candidate_index", int)
        _check_range(self, "char_start", "char_end")
        _check_type(self, "evidence", str)
        _check_length(self, "char_start", "char_end", "evidence")
        _check_range(self, "answer_char_start", "answer_char_end")
        _freeze_tuple(self, "evidence_spans", EvidenceSpan)
        _freeze_tuple(self, "conflicts", Conflict)
        _freeze_mapping(self, "components")
        if not self.evidence_spans:
            object.__setattr__(
                self,
                "evidence_spans",
                (EvidenceSpan(self.char_start, self.char_end, self.evidence),),
            )

    @property
    def evidence_texts(self) -> tuple[str, ...]:
        """The exact source text of each evidence span, in source order.

        Every item is a slice of the source: for the spans in source order,
        ``evidence_texts[i] == source_text[span.char_start:span.char_end]``. One item
        unless the citation has multi-span evidence
        (``CitationConfig(multi_span_evidence=True)``). Nothing is added between the
        pieces: use this, not :attr:`exact_evidence`, to compare, search or store the
        evidence.

        Examples
        --------
        >>> source = "Revenue grew by 9% in 2023."
        >>> c = Citation(score=2.0, source_id="s", source_index=0, candidate_index=0,
        ...              char_start=0, char_end=18, evidence=source[:18],
        ...              evidence_spans=[EvidenceSpan(0, 12, source[:12]),
        ...                              EvidenceSpan(16, 18, source[16:18])])
        >>> c.evidence_texts
        ('Revenue grew', '9%')
        """
        return tuple(span.evidence for span in self._spans_in_order())

    @property
    def evidence_display(self) -> str:
        """The evidence spans as one string for display: the pieces of
        :attr:`evidence_texts` joined with ``" ... "``, so that the source text left out
        between two spans is visible. Equal to ``evidence`` for single-span evidence.

        Not a slice of the source when there are several spans (the ``" ... "`` are not
        in it); :attr:`evidence_texts` gives the exact pieces.

        Examples
        --------
        >>> source = "Revenue grew by 9% in 2023."
        >>> c = Citation(score=2.0, source_id="s", source_index=0, candidate_index=0,
        ...              char_start=0, char_end=18, evidence=source[:18],
        ...              evidence_spans=[EvidenceSpan(0, 12, source[:12]),
        ...                              EvidenceSpan(16, 18, source[16:18])])
        >>> c.evidence_display
        'Revenue grew ... 9%'
        """
        return " ... ".join(self.evidence_texts)

    @property
    def exact_evidence(self) -> str:
        """cite-right's name for :attr:`evidence_display`, kept with cite-right's meaning.

        cite-right documents ``exact_evidence`` as the matched regions (the spans of
        ``evidence_spans``, without the source text between them) joined with
        ``" ... "``: "exact" there means *only the matched regions*, not *a slice of the
        source*. With multi-span evidence it is therefore not a substring of the source;
        the exact strings are :attr:`evidence_texts`. For single-span evidence (the
        default) it equals ``evidence``.

        Examples
        --------
        >>> c = Citation(score=2.5, source_id="s", source_index=0, candidate_index=0,
        ...              char_start=0, char_end=7, evidence="Revenue")
        >>> c.exact_evidence
        'Revenue'
        """
        return self.evidence_display

    def _spans_in_order(self) -> list[EvidenceSpan]:
        return sorted(self.evidence_spans, key=lambda s: (s.char_start, s.char_end))


@dataclass(frozen=True)
class RetrievalSupport(_Record):
    """A candidate passage of an answer span that gave no citation (cite-right's
    retrieval-only support signal: no localized evidence).

    The candidate search found the passage (lexically, or by embedding similarity at
    least ``min_embedding_similarity``), but no citation of the span rests on it.
    ``passage_char_start`` / ``passage_char_end`` index the source document as citation
    offsets do: ``passage_text`` is the document's characters between them.

    Attributes
    ----------
    retrieval_score : float
        The retrieval part of the citation score: ``weights.lexical * lexical_score +
        weights.embedding * max(0, embedding_score)`` (the alignment components are not
        computed for a passage that gives no citation).
    source_id : str
    source_index : int
    candidate_index : int
        The passage window's number in the prepared corpus.
    passage_char_start, passage_char_end : int
    passage_text : str
    embedding_score : float
        Cosine similarity of span and passage (0.0 without an embedder).
    lexical_score : float
        The IDF index's score of the passage for the span's content tokens.

    Examples
    --------
    >>> RetrievalSupport(0.4, "s", 0, 2, 10, 14, "Rome", 0.0, 0.4).passage_text
    'Rome'
    """

    retrieval_score: float
    source_id: str
    source_index: int
    candidate_index: int
    passage_char_start: int
    passage_char_end: int
    passage_text: str
    embedding_score: float
    lexical_score: float

    def __post_init__(self) -> None:
        for name in ("retrieval_score", "embedding_score", "lexical_score"):
            _check_type(self, name, float)
            value = getattr(self, name)
            if not math.isfinite(value):
                raise ValueError(f"RetrievalSupport.{name} must be finite, got {value!r}")
        _check_type(self, "source_id", str)
        _check_type(self, "passage_text", str)
        for name in ("source_index", "candidate_index"):
            _check_type(self, name, int)
            if getattr(self, name) < 0:
                raise ValueError(f"RetrievalSupport.{name} must be >= 0, got {getattr(self, name)}")
        _check_range(self, "passage_char_start", "passage_char_end")
        _check_length(self, "passage_char_start", "passage_char_end", "passage_text")


@dataclass(frozen=True)
class SpanCitations(_Record):
    """Citations and status of one answer span.

    ``status`` is ``"supported"``, ``"partial"`` or ``"unsupported"``; an unsupported span
    has no citations and a supported or partial one has at least one.
    ``unsupported_spans`` holds the ``(char_start, char_end)`` ranges of the answer (absolute
    offsets into the answer string) whose content no accepted citation covers.
    ``content_coverage`` is the weighted share of the span that its evidence covers, the
    quantity the status is decided on (``None`` when unknown, e.g. for records built by
    hand); see the status rules in the user guide (docs/guide/status.rst).
    ``retrieval_support`` lists candidate passages no citation rests on
    (:class:`RetrievalSupport`; empty unless ``CitationConfig.max_retrieval_support`` > 0).
    The sequence fields are :class:`FrozenList` s: tuples that also equal lists.

    Examples
    --------
    >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
    >>> SpanCitations(answer_span=span, citations=(), status="unsupported").status
    'unsupported'

    The ``repr`` is one line: status, the sentence (abbreviated) and the best citation.

    >>> cite = Citation(score=2.2, source_id="s", source_index=0, candidate_index=0,
    ...                 char_start=0, char_end=2, evidence="Hi")
    >>> SpanCitations(span, (cite,), "supported")
    SpanCitations(supported, answer[0:3] 'Hi.', 1 citation; best 's'[0:2] score 2.20)
    """

    answer_span: AnswerSpan
    citations: tuple[Citation, ...]
    status: str
    unsupported_spans: tuple[tuple[int, int], ...] = ()
    content_coverage: float | None = None
    retrieval_support: tuple[RetrievalSupport, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.answer_span, Mapping):
            object.__setattr__(self, "answer_span", AnswerSpan.from_dict(self.answer_span))
        _check_type(self, "answer_span", AnswerSpan)
        _freeze_tuple(self, "citations", Citation)
        _freeze_tuple(self, "retrieval_support", RetrievalSupport)
        if self.status not in STATUSES:
            raise ValueError(f"SpanCitations.status must be one of {STATUSES}, got {self.status!r}")
        if self.status == "unsupported" and self.citations:
            raise ValueError("SpanCitations: status 'unsupported' requires no citations")
        if self.status != "unsupported" and not self.citations:
            raise ValueError(f"SpanCitations: status {self.status!r} requires citations")
        ranges = []
        for item in self.unsupported_spans:
            start, end = (int(v) for v in item)
            if start < 0 or end < start:
                raise ValueError(f"SpanCitations.unsupported_spans has an invalid range {item!r}")
            ranges.append((start, end))
        object.__setattr__(self, "unsupported_spans", FrozenList(ranges))
        if self.content_coverage is not None:
            _check_type(self, "content_coverage", (int, float))
            value = float(self.content_coverage)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"SpanCitations.content_coverage must be in [0, 1], got {value!r}")
            object.__setattr__(self, "content_coverage", value)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-compatible data; ``retrieval_support`` only when it holds entries
        (it is off by default: ``CitationConfig.max_retrieval_support``).

        Examples
        --------
        >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
        >>> sorted(SpanCitations(span, (), "unsupported").to_dict())
        ['answer_span', 'citations', 'content_coverage', 'status', 'unsupported_spans']
        """
        data = super().to_dict()
        if not self.retrieval_support:
            del data["retrieval_support"]
        return data

    def __repr__(self) -> str:
        # one line: the dataclass repr lists every component of every citation (a wall
        # of over a thousand characters); the fields stay in to_dict() and the attributes
        span = self.answer_span
        text = f"SpanCitations({self.status}, answer[{span.char_start}:{span.char_end}] "
        text += _abbreviated(span.text, 60)
        if not self.citations:
            return text + ", no citations)"
        best = self.citations[0]
        count = len(self.citations)
        return (
            f"{text}, {count} citation{'s' if count != 1 else ''}; best {best.source_id!r}"
            f"[{best.char_start}:{best.char_end}] score {best.score:.2f})"
        )


def _abbreviated(text: str, limit: int) -> str:
    """``repr`` of ``text`` with its runs of white space as one space, cut to about
    ``limit`` characters at a word boundary (with an ellipsis when cut)."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        cut = flat.rfind(" ", 0, limit)
        flat = flat[: cut if cut > limit // 2 else limit].rstrip() + "\u2026"
    return repr(flat)


# spans listed in an AlignmentResult's repr before "... N more"
_REPR_SPANS = 3


class AlignmentResult(list):
    """The citations of one answer: a ``list`` of :class:`SpanCitations`, one per span.

    It is a plain list (indexing, iteration, ``len``, equality with a list all work) that
    also remembers the ``answer`` and ``sources`` it was computed from, so that it can
    render itself in Jupyter (``_repr_html_``, see :mod:`citekit.display`).

    Examples
    --------
    >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
    >>> result = AlignmentResult([SpanCitations(span, (), "unsupported")], answer="Hi.")
    >>> len(result), result.answer, result[0].status
    (1, 'Hi.', 'unsupported')
    >>> result
    AlignmentResult(1 spans: 0 supported, 0 partial, 1 unsupported)
      [0] unsupported 'Hi.'
    """

    def __init__(
        self, spans: Iterable[SpanCitations] = (), *, answer: str = "", sources: Sequence[Any] = ()
    ) -> None:
        super().__init__(spans)
        self.answer = answer
        # a memory-mapped corpus's sources (citekit._mapped_sources.MappedSources) are
        # read-only and decode a source when it is read: kept, not copied (a tuple of
        # them would decode every source of the corpus for every answer)
        self.sources = (
            sources if getattr(type(sources), "_read_only_sequence", False) else tuple(sources)
        )

    def _repr_html_(self) -> str:
        # The one upward import of this module, and the only import between it and
        # citekit.display: the renderer reads these records (display imports results), so
        # a record that draws itself in Jupyter must import it here, when drawn, not at
        # module level (that would be an import circle). Everything else that renders a
        # result (RecordResult below) goes through this method.
        from citekit.display import render_html

        return render_html(self, self.answer, self.sources)

    def __repr__(self) -> str:
        counts = {status: 0 for status in STATUSES}
        for item in self:
            counts[item.status] = counts.get(item.status, 0) + 1
        summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
        lines = [f"AlignmentResult({len(self)} spans: {summary})"]
        for index, item in enumerate(self[:_REPR_SPANS]):
            count = len(item.citations)
            cited = f" ({count} citation{'s' if count != 1 else ''})" if count else ""
            lines.append(f"  [{index}] {item.status:<11} {_abbreviated(item.answer_span.text, 60)}"
                         f"{cited}")
        if len(self) > _REPR_SPANS:
            lines.append(f"  ... {len(self) - _REPR_SPANS} more")
        return "\n".join(lines)


@dataclass(frozen=True)
class RecordResult:
    """The outcome of scoring one record: its results, or the error it raised.

    :func:`citekit.batch.score_records` and :func:`citekit.batch.score_dask` return one
    per record; its public home is :mod:`citekit.batch` (it lives here, below both the
    scoring and the conversion of results to rows, which both use it).

    Attributes
    ----------
    id : object
        The record's ``"id"`` (its position in the input when it has none).
    result : AlignmentResult or None
        The citations of the record's answer; ``None`` when scoring failed.
    error : str or None
        ``"ExceptionType: message"`` when scoring failed, else ``None``.

    Examples
    --------
    >>> RecordResult("q7", None, "ValueError: answer must be a str").ok
    False
    """

    id: Any
    result: AlignmentResult | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """``True`` when the record was scored."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready dict: ``{"id", "results": [...]}`` or ``{"id", "error"}``.

        ``results`` holds each :class:`~citekit.SpanCitations` as ``to_dict()``, so
        ``SpanCitations.from_dict`` reads it back.

        Examples
        --------
        >>> RecordResult("q7", None, "ValueError: bad").to_dict()
        {'id': 'q7', 'error': 'ValueError: bad'}
        """
        if self.error is not None or self.result is None:
            return {"id": self.id, "error": self.error}
        return {"id": self.id, "results": [item.to_dict() for item in self.result]}

    def _repr_html_(self) -> str:
        import html

        heading = f"<div><b>record {html.escape(repr(self.id))}</b></div>"
        if self.result is None:
            return heading + f'<pre style="color:#a40e26">{html.escape(str(self.error))}</pre>'
        # the result draws itself (AlignmentResult._repr_html_, the one hook into display)
        return heading + self.result._repr_html_()


def results_to_json(results: Sequence[SpanCitations], **kwargs: Any) -> str:
    """Serialize a list of :class:`SpanCitations` to a JSON array.

    Examples
    --------
    >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
    >>> r = [SpanCitations(answer_span=span, citations=(), status="unsupported")]
    >>> results_from_json(results_to_json(r)) == r
    True
    """
    return json.dumps([r.to_dict() for r in results], ensure_ascii=False, **kwargs)


def results_from_json(text: str) -> list[SpanCitations]:
    """Inverse of :func:`results_to_json`."""
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError("results_from_json expects a JSON array")
    return [SpanCitations.from_dict(item) for item in data]
