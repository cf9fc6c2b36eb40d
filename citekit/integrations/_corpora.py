"""Prepared corpora of retrieved sources, kept for the next call that retrieves the same.

A retriever over a fixed store returns the same documents for the same (or a similar)
question again and again: preparing them (segmenting, tokenizing, indexing) once and
reusing the :class:`~citekit.corpus.Corpus` saves that work on every repeat. The adapters'
callables hold one :class:`CorpusCache` each.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Sequence

from citekit._validation import check_int
from citekit.pipeline import Pipeline
from citekit.results import AlignmentResult, SourceChunk, SourceDocument

__all__ = ["CorpusCache", "check_pipeline", "cited_positions"]


def check_pipeline(pipeline: Any) -> Pipeline:
    """``pipeline``, or a default :class:`~citekit.pipeline.Pipeline` when None.

    Raises
    ------
    TypeError
        If ``pipeline`` is anything else.

    Examples
    --------
    >>> type(check_pipeline(None)).__name__
    'Pipeline'
    """
    if pipeline is None:
        return Pipeline()
    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"pipeline must be a citekit Pipeline, got {type(pipeline).__name__}")
    return pipeline


def _source_key(source: SourceDocument | SourceChunk) -> tuple[Any, ...]:
    # (the metadata is compared after the look-up: its values need not be hashable)
    if isinstance(source, SourceDocument):
        return ("document", source.id, source.text)
    return (
        "chunk", source.source_id, source.text, source.doc_char_start, source.source_index,
        source.document_text,
    )


class CorpusCache:
    """Aligns answers with a pipeline, keeping the corpora of the last ``size`` source lists.

    The key is every source's kind, id, text and offsets, in order; a hit whose sources
    differ in metadata is prepared again. Calls are serialized (a corpus learns while it
    is aligned against), so one cache is safe to share among threads.

    Parameters
    ----------
    pipeline : Pipeline
        Prepares and aligns.
    size : int
        Corpora kept (least recently used dropped first); 0 keeps none.

    Examples
    --------
    >>> cache = CorpusCache(Pipeline(), 4)
    >>> sources = [SourceDocument("a", "Water boils at 100 degrees.")]
    >>> cache.align("Water boils at 100 degrees.", sources)[0].status
    'supported'
    >>> cache.align("Water boils.", list(sources)) and cache.hits
    1
    """

    def __init__(self, pipeline: Pipeline, size: int) -> None:
        self.pipeline = pipeline
        self.size = check_int(size, "cache_size", minimum=0)
        self.hits = 0
        self._corpora: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def align(
        self, answer: str, sources: Sequence[SourceDocument | SourceChunk]
    ) -> AlignmentResult:
        """The citations of ``answer`` in ``sources`` (their corpus reused when kept)."""
        sources = tuple(sources)
        with self._lock:
            if self.size == 0:
                return self.pipeline.align(answer, sources)
            key = tuple(_source_key(source) for source in sources)
            corpus = self._corpora.get(key)
            if corpus is not None and _same_sources(corpus.sources, sources):
                self.hits += 1
                self._corpora.move_to_end(key)
            else:
                corpus = self.pipeline.prepare(sources)
                self._corpora[key] = corpus
                self._corpora.move_to_end(key)
                while len(self._corpora) > self.size:
                    self._corpora.popitem(last=False)
            return self.pipeline.align(answer, corpus)


def _same_sources(kept: Sequence[Any], sources: Sequence[Any]) -> bool:
    try:
        return bool(tuple(kept) == tuple(sources))
    except (TypeError, ValueError):  # (metadata whose values do not compare to a bool)
        return False


def cited_positions(result: AlignmentResult) -> list[int]:
    """The positions (``Citation.source_index``) of the sources ``result`` cites, ascending.

    Examples
    --------
    >>> from citekit import align_citations
    >>> result = align_citations("The sky is blue.", ["Grass is green.", "The sky is blue."])
    >>> cited_positions(result)
    [1]
    """
    return sorted({citation.source_index for span in result for citation in span.citations})
