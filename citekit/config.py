"""Configuration of the citation pipeline: :class:`CitationConfig` and :class:`CitationWeights`.

Both are frozen dataclasses validated in ``__post_init__``: a wrong type raises
``TypeError`` and an out-of-range value raises ``ValueError``, each naming the field.
Every field and default of the specification is kept, so configurations written for
it work unchanged. citekit adds ``band_width`` (the alignment kernel's band), and it
applies the coverage thresholds to the answer's *content* tokens, so that stop words
and punctuation never make a sentence supported. Assigning to a field raises
``FrozenFieldError`` (a ``ValueError`` and a ``dataclasses.FrozenInstanceError``), and
``model_dump()`` is the same as ``to_dict()``, as with cite-right's configuration models.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from citekit._frozen import refuse_assignment
from citekit._validation import check_bool, check_float, check_int

__all__ = ["CitationConfig", "CitationWeights", "MAX_INT_FIELD", "MAX_WEIGHT"]


@refuse_assignment
@dataclass(frozen=True)
class CitationWeights:
    """How the score components add up to a citation's final score.

    The weights are summed directly (not normalized), so their absolute values matter:
    ``score = alignment * normalized_alignment + answer_coverage * answer_coverage +
    evidence_coverage * evidence_coverage + lexical * lexical_score + embedding *
    max(0, embedding_score)``.

    Parameters
    ----------
    alignment : float, default 1.0
        Weight of the Smith-Waterman score divided by ``match_score * answer tokens``.
    answer_coverage : float, default 1.0
        Weight of the share of answer tokens the alignment matched.
    evidence_coverage : float, default 0.0
        Weight of the share of evidence tokens the alignment matched.
    lexical : float, default 0.5
        Weight of the IDF-weighted overlap of distinct tokens (:class:`~citekit.index.IdfIndex`).
    embedding : float, default 0.5
        Weight of the embedding cosine similarity (0 without an embedder).

    Each weight is a finite number from 0 to :data:`MAX_WEIGHT` (1e12).

    Examples
    --------
    >>> CitationWeights(lexical=0.3).lexical
    0.3
    >>> CitationWeights(alignment=-1)
    Traceback (most recent call last):
    ...
    ValueError: CitationWeights.alignment must be >= 0.0, got -1.0
    """

    alignment: float = 1.0
    answer_coverage: float = 1.0
    evidence_coverage: float = 0.0
    lexical: float = 0.5
    embedding: float = 0.5

    def __post_init__(self) -> None:
        for item in fields(self):
            value = check_float(
                getattr(self, item.name), f"CitationWeights.{item.name}", minimum=0.0,
                maximum=MAX_WEIGHT,
            )
            object.__setattr__(self, item.name, value)

    def to_dict(self) -> dict[str, float]:
        """Return the weights as a plain dict.

        Examples
        --------
        >>> CitationWeights().to_dict()["lexical"]
        0.5
        """
        return asdict(self)

    def model_dump(self) -> dict[str, float]:
        """The same as :meth:`to_dict` (cite-right's name).

        Examples
        --------
        >>> CitationWeights().model_dump()["embedding"]
        0.5
        """
        return self.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CitationWeights":
        """Build weights from a mapping; unknown keys raise ``ValueError``.

        Examples
        --------
        >>> CitationWeights.from_dict({"embedding": 0.0}).embedding
        0.0
        """
        return cls(**_known_keys(cls, data, "CitationWeights"))


def _known_keys(cls: type, data: Any, name: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise TypeError(f"{name}.from_dict expects a mapping, got {type(data).__name__}")
    names = {item.name for item in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{name}.from_dict got unknown keys: {unknown}")
    return dict(data)


# the largest count or length a field may hold: far beyond any corpus, and small enough
# that the kernels' 64-bit arithmetic on it never overflows
MAX_INT_FIELD = 2**31 - 1
# the largest weight: a weighted sum of the components (each at most a few units) stays
# finite, and so does every score written to JSON
MAX_WEIGHT = 1e12

# field name -> (minimum, maximum); None means unbounded on that side
_INT_RANGES: dict[str, tuple[int | None, int | None]] = {
    "top_k": (0, MAX_INT_FIELD),
    "min_alignment_score": (0, MAX_INT_FIELD),
    "max_citations_per_source": (1, MAX_INT_FIELD),
    "max_retrieval_support": (0, MAX_INT_FIELD),
    "window_size_sentences": (1, MAX_INT_FIELD),
    "window_stride_sentences": (1, MAX_INT_FIELD),
    "max_candidates_lexical": (0, MAX_INT_FIELD),
    "max_candidates_embedding": (0, MAX_INT_FIELD),
    "max_candidates_total": (0, MAX_INT_FIELD),
    # the alignment kernel's limits (citekit.kernels.MAX_SCORE_MAGNITUDE)
    "match_score": (1, 1000),
    "mismatch_score": (-1000, -1),
    "gap_score": (-1000, -1),
    "multi_span_merge_gap_chars": (0, MAX_INT_FIELD),
    "multi_span_max_spans": (1, MAX_INT_FIELD),
}
_FLOAT_RANGES: dict[str, tuple[float | None, float | None]] = {
    "min_final_score": (None, None),
    "min_answer_coverage": (0.0, 1.0),
    "supported_answer_coverage": (0.0, 1.0),
    "min_embedding_similarity": (-1.0, 1.0),
    "supported_embedding_similarity": (-1.0, 1.0),
}
_BOOL_FIELDS = (
    "allow_embedding_only",
    "prefer_source_order",
    "multi_span_evidence",
    "require_all_answer_tokens_in_evidence",
)


@refuse_assignment
@dataclass(frozen=True)
class CitationConfig:
    """Every parameter of the citation pipeline (frozen, validated).

    Parameters
    ----------
    top_k : int, default 3
        Maximum citations returned per answer span (0 returns no citations at all).
    min_final_score : float, default 0.0
        Minimum weighted score (see :class:`CitationWeights`) for a citation.
    min_alignment_score : int, default 0
        Minimum raw Smith-Waterman score for alignment evidence to be used.
    min_answer_coverage : float, default 0.2
        Minimum share of the answer span's tokens the alignment must match, counted on
        content tokens (stop words and punctuation alone never make a citation).
    supported_answer_coverage : float, default 0.6
        Share of the span's content tokens that the accepted, conflict-free citations
        must cover for the span to be ``supported``; below it the span is ``partial``.
    allow_embedding_only : bool, default False
        Accept citations resting on embedding similarity alone (the evidence is then the
        whole passage window). Needs an embedder.
    min_embedding_similarity : float, default 0.3
        Minimum cosine similarity for an embedding-only citation.
    supported_embedding_similarity : float, default 0.6
        Cosine similarity at which an embedding-only citation makes the span ``supported``.
    max_citations_per_source : int, default 2
        Maximum citations from one source per answer span.
    max_retrieval_support : int, default 0
        How many candidate passages that gave no citation each answer span reports in
        ``SpanCitations.retrieval_support`` (:class:`~citekit.results.RetrievalSupport`,
        cite-right's retrieval-only signal); 0 computes none. cite-right's default is 3.
    prefer_source_order : bool, default True
        Tie-break equal scores by earlier source, then earlier position, then longer
        evidence; when False by earlier position first.
    window_size_sentences, window_stride_sentences : int, default 1
        Passage windows: how many source sentences each holds and how far they move.
        They apply where the pipeline builds the corpus (``Pipeline.prepare``, or
        sources given to ``align``); a prepared :class:`~citekit.corpus.Corpus` keeps
        the windows it was built with (``Corpus.window_size_sentences``).
    max_candidates_lexical, max_candidates_embedding, max_candidates_total : int
        Candidate passages per answer span from the IDF index (200), from embeddings
        (200), and in total after merging (400; ranked by the stronger of the two scores).
    match_score, mismatch_score, gap_score : int, default 2, -1, -1
        Smith-Waterman scores (``match_score`` in 1..1000, the penalties in -1000..-1).
    band_width : int or None, default None
        Band of the alignment kernel in diagonals around the seeded diagonal; ``None``
        lets the kernel choose (full dynamic programming while it fits its cell budget).
    weights : CitationWeights
        Weights of the score components.
    multi_span_evidence : bool, default False
        Report non-contiguous evidence (one span per matched block) in ``evidence_spans``.
    multi_span_merge_gap_chars : int, default 16
        Merge evidence spans separated by at most this many characters.
    multi_span_max_spans : int, default 5
        More spans than this after merging fall back to one contiguous span.
    require_all_answer_tokens_in_evidence : bool, default False
        Keep a citation only when its evidence holds every token of the answer span
        (as many times as the span has it; reference markers such as ``[1]`` aside); a
        span left without citations is ``unsupported``. cite-right's strict switch.

    Every integer field is at most :data:`MAX_INT_FIELD` (2**31 - 1).

    Examples
    --------
    >>> config = CitationConfig(top_k=1, min_answer_coverage=0.4)
    >>> config.top_k, config.weights.alignment
    (1, 1.0)
    >>> CitationConfig.from_dict(config.to_dict()) == config
    True
    >>> CitationConfig(top_k=-1)
    Traceback (most recent call last):
    ...
    ValueError: CitationConfig.top_k must be >= 0, got -1
    """

    top_k: int = 3
    min_final_score: float = 0.0
    min_alignment_score: int = 0
    min_answer_coverage: float = 0.2
    supported_answer_coverage: float = 0.6
    allow_embedding_only: bool = False
    min_embedding_similarity: float = 0.3
    supported_embedding_similarity: float = 0.6
    max_citations_per_source: int = 2
    max_retrieval_support: int = 0
    prefer_source_order: bool = True
    window_size_sentences: int = 1
    window_stride_sentences: int = 1
    max_candidates_lexical: int = 200
    max_candidates_embedding: int = 200
    max_candidates_total: int = 400
    match_score: int = 2
    mismatch_score: int = -1
    gap_score: int = -1
    band_width: int | None = None
    weights: CitationWeights = field(default_factory=CitationWeights)
    multi_span_evidence: bool = False
    multi_span_merge_gap_chars: int = 16
    multi_span_max_spans: int = 5
    require_all_answer_tokens_in_evidence: bool = False

    def __post_init__(self) -> None:
        for name, (low, high) in _INT_RANGES.items():
            value = check_int(
                getattr(self, name), f"CitationConfig.{name}", minimum=low, maximum=high
            )
            object.__setattr__(self, name, value)
        for name, (low, high) in _FLOAT_RANGES.items():
            value = check_float(
                getattr(self, name), f"CitationConfig.{name}", minimum=low, maximum=high
            )
            object.__setattr__(self, name, value)
        for name in _BOOL_FIELDS:
            check_bool(getattr(self, name), f"CitationConfig.{name}")
        band = check_int(
            self.band_width, "CitationConfig.band_width", minimum=1, maximum=MAX_INT_FIELD,
            allow_none=True,
        )
        object.__setattr__(self, "band_width", band)
        weights = self.weights
        if isinstance(weights, Mapping):
            weights = CitationWeights.from_dict(weights)
        if not isinstance(weights, CitationWeights):
            raise TypeError(
                "CitationConfig.weights must be a CitationWeights, " f"got {type(weights).__name__}"
            )
        object.__setattr__(self, "weights", weights)

    # -- presets -------------------------------------------------------------------

    @classmethod
    def balanced(cls) -> "CitationConfig":
        """The default configuration, named for readability.

        Examples
        --------
        >>> CitationConfig.balanced() == CitationConfig()
        True
        """
        return cls()

    @classmethod
    def strict(cls) -> "CitationConfig":
        """High precision: fewer, stronger citations and a higher bar for ``supported``.

        Examples
        --------
        >>> CitationConfig.strict().supported_answer_coverage
        0.8
        """
        return cls(
            top_k=2,
            min_final_score=0.3,
            min_answer_coverage=0.4,
            supported_answer_coverage=0.8,
            max_citations_per_source=1,
        )

    @classmethod
    def permissive(cls) -> "CitationConfig":
        """High recall for paraphrased or summarized answers.

        Examples
        --------
        >>> CitationConfig.permissive().top_k
        5
        """
        return cls(
            top_k=5,
            min_answer_coverage=0.15,
            supported_answer_coverage=0.4,
            min_embedding_similarity=0.25,
            max_citations_per_source=3,
            window_size_sentences=2,
        )

    @classmethod
    def fast(cls) -> "CitationConfig":
        """Fewer candidates per span and one citation: for bulk scoring.

        Examples
        --------
        >>> CitationConfig.fast().max_candidates_total
        100
        """
        return cls(
            top_k=1,
            max_candidates_lexical=50,
            max_candidates_embedding=50,
            max_candidates_total=100,
            max_citations_per_source=1,
        )

    # -- (de)serialization ---------------------------------------------------------

    def replace(self, **changes: Any) -> "CitationConfig":
        """Return a copy with some fields changed (validated again).

        Examples
        --------
        >>> CitationConfig().replace(top_k=1).top_k
        1
        """
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON-compatible data (``weights`` becomes a dict).

        Examples
        --------
        >>> CitationConfig().to_dict()["weights"]["alignment"]
        1.0
        """
        data = {item.name: getattr(self, item.name) for item in fields(self)}
        data["weights"] = self.weights.to_dict()
        return data

    def model_dump(self) -> dict[str, Any]:
        """The same as :meth:`to_dict` (cite-right's name).

        Examples
        --------
        >>> CitationConfig(top_k=1).model_dump()["top_k"]
        1
        """
        return self.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CitationConfig":
        """Build a configuration from a mapping (e.g. parsed JSON or TOML).

        Missing keys take their defaults; unknown keys raise ``ValueError`` so that a
        misspelt option is never silently ignored. ``weights`` may be a nested mapping.

        Examples
        --------
        >>> CitationConfig.from_dict({"top_k": 1, "weights": {"lexical": 0.0}}).weights.lexical
        0.0
        >>> CitationConfig.from_dict({"topk": 1})
        Traceback (most recent call last):
        ...
        ValueError: CitationConfig.from_dict got unknown keys: ['topk']
        """
        return cls(**_known_keys(cls, data, "CitationConfig"))

    def to_json(self, **kwargs: Any) -> str:
        """Serialize with :func:`json.dumps`.

        Examples
        --------
        >>> CitationConfig.from_json(CitationConfig(top_k=2).to_json()).top_k
        2
        """
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> "CitationConfig":
        """Inverse of :meth:`to_json`.

        Raises
        ------
        ValueError
            If ``text`` is not a JSON object (invalid, nested too deeply, ``NaN``) or an
            option is invalid.
        """
        from citekit._rows import parse_json_object  # (lazy: _rows imports the results)

        if not isinstance(text, (str, bytes, bytearray)):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not isinstance(text, str):
            text = _decode_utf8(bytes(text), "text")
        return cls.from_dict(parse_json_object(text, "CitationConfig.from_json text"))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> "CitationConfig":
        """Load a configuration from a ``.json`` or ``.toml`` file.

        A TOML file may hold the options at top level or under a ``[citation]`` table
        (with ``[citation.weights]``).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "config.toml"
        >>> _ = path.write_text("top_k = 1\\n[weights]\\nlexical = 0.25\\n")
        >>> CitationConfig.from_file(path).weights.lexical
        0.25
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        path = str(os.fspath(path))
        with open(path, "rb") as handle:
            raw = handle.read()
        if path.lower().endswith(".toml"):
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                from citekit._optional import import_optional

                tomllib = import_optional("tomli", "toml", purpose="reading TOML configuration")
            text = _decode_utf8(raw, path)
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as error:
                # (its message names the line and column, but not the end of the document's)
                where = str(error).replace(
                    "at end of document", f"at end of document, line {text.count(chr(10)) + 1}"
                )
                raise ValueError(f"{path}: invalid TOML ({where})") from None
            except RecursionError:
                raise ValueError(f"{path}: TOML nested too deeply") from None
            if "citation" in data and isinstance(data["citation"], Mapping):
                data = data["citation"]
        elif path.lower().endswith(".json"):
            from citekit._rows import parse_json_object

            data = parse_json_object(_decode_utf8(raw, path), path)
        else:
            raise ValueError(f"path must end with .json or .toml, got {path!r}")
        return cls.from_dict(data)


def _decode_utf8(raw: bytes, where: str) -> str:
    """``raw`` as UTF-8; a ``ValueError`` names ``where`` and the line of a bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise ValueError(
            f"{where}: not UTF-8 at line {line} (byte {error.start}): {error.reason}"
        ) from None
