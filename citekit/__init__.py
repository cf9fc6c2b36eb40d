"""citekit: exact, fast character-level citations for generated answers.

For every sentence of a generated answer, citekit finds the characters of the sources
that support it, with offsets into the original strings, score components and a status
(``supported`` / ``partial`` / ``unsupported``).

Importing citekit is cheap: public names are resolved lazily on first access, the JIT
compiler is imported only when a kernel is first used, and nothing is compiled at import. Call
:func:`warmup` to pay the JIT cost up front.

Examples
--------
>>> import citekit
>>> isinstance(citekit.__version__, str)
True
"""

from __future__ import annotations

import importlib
from typing import Any

from citekit._version import __version__

# public name -> module that defines it (resolved on first attribute access)
_EXPORTS: dict[str, str] = {
    # text layer
    "NormalizedText": "citekit.normalize",
    "NormalizerConfig": "citekit.normalize",
    "normalize_text": "citekit.normalize",
    "Tokenizer": "citekit.tokenizers",
    "TokenizedText": "citekit.tokenizers",
    "SimpleTokenizer": "citekit.tokenizers",
    "TokenizerConfig": "citekit.tokenizers",
    "HuggingFaceTokenizer": "citekit.tokenizers",
    "TiktokenTokenizer": "citekit.tokenizers",
    "segment_sentences": "citekit.segment",
    "PassageWindow": "citekit.segment",
    "passage_window_array": "citekit.segment",
    "passage_windows": "citekit.segment",
    "SentenceSegmenter": "citekit.segment",
    "SimpleSegmenter": "citekit.segment",
    "Segment": "citekit.segment",
    "ChunkTokenizer": "citekit.chunk",
    "chunk_text": "citekit.chunk",
    # alignment core
    "LocalAlignment": "citekit.kernels",
    "smith_waterman": "citekit.kernels",
    "align_pairs": "citekit.kernels",
    "align_batch": "citekit.kernels",
    "PairAlignments": "citekit.kernels",
    "lcs_length": "citekit.kernels",
    "matching_blocks": "citekit.kernels",
    # citation pipeline
    "IdfIndex": "citekit.index",
    "Corpus": "citekit.corpus",
    "CitationConfig": "citekit.config",
    "CitationWeights": "citekit.config",
    "SourceDocument": "citekit.results",
    "SourceChunk": "citekit.results",
    "AnswerSpan": "citekit.results",
    "EvidenceSpan": "citekit.results",
    "Conflict": "citekit.results",
    "Citation": "citekit.results",
    "SpanCitations": "citekit.results",
    "RetrievalSupport": "citekit.results",
    "AlignmentResult": "citekit.results",
    "Pipeline": "citekit.pipeline",
    "Embedder": "citekit.pipeline",
    "align_citations": "citekit.pipeline",
    "AlignmentMetrics": "citekit.pipeline",
    "PreparedCitationCorpus": "citekit.prepared",
    "from_dicts": "citekit.sources",
    # fact verification
    "Claim": "citekit.claims",
    "ClaimDecomposer": "citekit.claims",
    "SimpleClaimDecomposer": "citekit.claims",
    "FactVerificationConfig": "citekit.facts",
    "ClaimVerification": "citekit.facts",
    "FactVerificationMetrics": "citekit.facts",
    "verify_facts": "citekit.facts",
    "verify_facts_many": "citekit.facts",
    # highlighting
    "find_answer_highlights": "citekit.highlight",
    "highlight_sources": "citekit.highlight",
    "HighlightOptions": "citekit.highlight",
    "DEFAULT_STOP_WORDS": "citekit.highlight",
    "DEFAULT_SPAN_EXPANSION_REGEX": "citekit.highlight",
    "SourceHighlights": "citekit.highlight",
    "TokenizerMode": "citekit.highlight",
    # quality
    "compute_hallucination_metrics": "citekit.metrics",
    "HallucinationMetrics": "citekit.metrics",
    "HallucinationConfig": "citekit.metrics",
    "SpanConfidence": "citekit.metrics",
    "is_grounded": "citekit.metrics",
    "is_hallucinated": "citekit.metrics",
    "check_groundedness": "citekit.metrics",
    "annotate_answer": "citekit.metrics",
    "format_with_citations": "citekit.metrics",
    "get_citation_summary": "citekit.metrics",
    "load_records": "citekit.evaluate",
    "EvaluationReport": "citekit.evaluate",
    # for users
    "render_html": "citekit.display",
    "score_records": "citekit.batch",
    "score_dask": "citekit.batch",
    "ShardedCorpus": "citekit.sharded",
    "RecordResult": "citekit.batch",
    "alignment_view": "citekit.display",
    "explain_citation": "citekit.display",
    "AlignmentView": "citekit.display",
    "to_dataframe": "citekit.batch",
    "to_records": "citekit.batch",
}

__all__ = ["__version__", "warmup", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'citekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def warmup(*, processes: int = 1) -> None:
    """Compile (or load from the on-disk cache) every kernel now.

    Kernels compile lazily on first use; call this once at start-up to move that cost
    out of the first real call. It runs the alignment, retrieval, index, segmentation,
    tokenizer and highlighting kernels on tiny inputs, then the pipeline once.

    Parameters
    ----------
    processes : int, default 1
        Compile in up to this many processes at once (at most 2 are used): another
        process compiles a share of the kernels into the on-disk cache while this one
        compiles the rest, then this one loads them. Only a cold cache gains (a fresh
        install on a 2-vCPU VM: about 129 s of compiler CPU time in one process; with
        two, this one's share is about 68 s; ``benchmarks/compile_cost.py``);
        with a warm cache the extra process only loads machine code, and without the
        on-disk cache (``CITEKIT_NUMBA_CACHE=0``) everything is compiled here. Results
        never depend on it.

    Raises
    ------
    TypeError, ValueError
        If ``processes`` is not an integer of at least 1.

    Examples
    --------
    >>> import citekit
    >>> citekit.warmup()
    """
    from citekit._validation import check_int
    from citekit._warm import warm

    warm(check_int(processes, "processes", minimum=1))
