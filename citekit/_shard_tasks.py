"""The work a shard of a :class:`~citekit.sharded.ShardedCorpus` does on its Dask worker:
build (or load) the shard's corpus, report its index statistics, find its best passages
for a batch of sentences with the IDF of the whole corpus, and hand over the arrays of a
few of its sources.

Every function here takes and returns plain data (a :class:`~citekit.corpus.Corpus`,
numpy arrays, named tuples), so that it runs in any worker process; nothing imports Dask.

Why global IDF makes a shard's scores exact: a lexical score is a sum, in query-term
order, of the IDF weights of the query's terms that a passage holds, divided by the sum
of all its terms' weights (:mod:`citekit.index`). Only the weights depend on the rest of
the corpus (document frequencies, the passage count); given the weights of the whole
corpus, a shard adds the same floats in the same order as the whole corpus's index would.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

import numpy as np

from citekit.corpus import Corpus
from citekit.index import IdfIndex, gather_ranges

__all__ = [
    "GlobalStatistics",
    "ShardFound",
    "ShardStatistics",
    "ShardSubset",
    "build_shard",
    "load_shard",
    "search_shard",
    "shard_statistics",
    "shard_subset",
]


class ShardStatistics(NamedTuple):
    """What the client needs of a shard to merge the statistics of the whole corpus."""

    vocabulary: np.ndarray
    document_frequency: np.ndarray
    n_passages: int
    n_sources: int
    tokenizer_signature: str
    window_size_sentences: int
    window_stride_sentences: int
    chunks_share_documents: bool
    has_embeddings: bool


class GlobalStatistics(NamedTuple):
    """The IDF of the whole corpus: the sorted vocabulary of every shard, each term's IDF
    and the IDF of a token no passage holds; ``token`` names this merge (shards cache the
    view of their index it gives under it)."""

    vocabulary: np.ndarray
    idf: np.ndarray
    unseen_idf: float
    token: str


class ShardFound(NamedTuple):
    """A shard's best passages for a batch of sentences (local passage numbers), packed
    CSR as :class:`~citekit.index.TopK`, with their rank scores (the ranking terms'
    weights summed), full lexical scores, ``held`` bits
    (:meth:`~citekit.index.IdfIndex.top_k_with_terms`) and the source of each."""

    offsets: np.ndarray
    passages: np.ndarray
    rank_scores: np.ndarray
    scores: np.ndarray
    held: np.ndarray
    sources: np.ndarray


class ShardSubset(NamedTuple):
    """Some sources of a shard with their tokens and passages, as arrays of a corpus of
    those sources alone (``arrays``: :data:`citekit._corpus_files.ARRAY_NAMES`), the
    shard's passage numbers of those passages (``passages``) and the shard's
    ``source_documents`` of the sources."""

    records: tuple[Any, ...]
    arrays: dict[str, np.ndarray]
    passages: np.ndarray
    source_documents: np.ndarray


def _local_columns(local: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The shard's columns of whole-corpus ``columns`` (-1: not in the corpus; ``local``:
    the shard's column of each whole-corpus one, -1 where the shard lacks it). Read only
    where found: with no word in the whole corpus, ``local`` is empty."""
    found = columns >= 0
    mapped = np.full(columns.shape[0], -1, dtype=np.int64)
    mapped[found] = local[columns[found]]
    return mapped


def build_shard(
    records: list[Any], pipeline: Any, path: str | None, mmap: bool = False
) -> Corpus:
    """The corpus of ``records`` built with ``pipeline``'s stages (saved to ``path`` when
    given, and then mapped from it instead of kept in memory when ``mmap``); kernels on
    the pipeline's ``n_threads`` (one by default: a worker's threads already share the
    cores)."""
    from citekit._jit import run_on_threads

    corpus = run_on_threads(pipeline.n_threads or 1, pipeline._build, records)
    if path is not None:
        corpus.save(path)
        if mmap:
            return Corpus.load(path, mmap=True)
    return corpus  # type: ignore[no-any-return]


def load_shard(path: str, mmap: bool = False) -> Corpus:
    """The corpus saved at ``path`` (:meth:`Corpus.load`; mapped when ``mmap``)."""
    return Corpus.load(path, mmap=mmap)


def shard_statistics(corpus: Corpus) -> ShardStatistics:
    """The :class:`ShardStatistics` of a shard."""
    return ShardStatistics(
        corpus.index.vocabulary,
        corpus.index.document_frequency,
        corpus.n_passages,
        corpus.n_sources,
        corpus.tokenizer_signature,
        corpus.window_size_sentences,
        corpus.window_stride_sentences,
        bool(corpus.chunks_share_documents),
        corpus.embeddings is not None,
    )


class _GlobalIdfIndex(IdfIndex):
    """A shard's index that weighs query terms with the IDF of the whole corpus: its
    postings and rows are the shard's (shared, not copied); a term the whole corpus holds
    but this shard does not weighs its global IDF (not the IDF of an unseen token), so
    that each query's denominator is the whole corpus's."""

    _statistics: GlobalStatistics
    _local_column: np.ndarray  # (the shard's column of each global column; -1: none)

    @classmethod
    def of(cls, index: IdfIndex, statistics: GlobalStatistics) -> "_GlobalIdfIndex":
        view = cls.__new__(cls)
        state = {
            name: value
            for name, value in index.__dict__.items()
            if name not in ("_top_scratch", "_matrix", "_postings_matrix")
        }
        view.__dict__.update(state)
        local = np.full(statistics.vocabulary.shape[0], -1, dtype=np.int64)
        global_columns = np.searchsorted(statistics.vocabulary, index.vocabulary)
        local[global_columns] = np.arange(index.vocabulary.shape[0], dtype=np.int64)
        view._local_column = local
        view._statistics = statistics
        view.idf = statistics.idf[global_columns]
        view.unseen_idf = statistics.unseen_idf
        return view

    def _term_statistics(self) -> tuple[np.ndarray, np.ndarray, float]:
        statistics = self._statistics
        return statistics.vocabulary, statistics.idf, statistics.unseen_idf

    def _terms(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        flags: np.ndarray,
        token_columns: np.ndarray | None = None,
    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # the terms weighed and numbered in the whole corpus, then numbered in this shard
        n_queries, rows, columns, *rest = super()._terms(ids, offsets, flags, token_columns)
        if token_columns is not None:
            token_columns[:] = _local_columns(self._local_column, token_columns)
        return (n_queries, rows, _local_columns(self._local_column, columns), *rest)


def _global_index(corpus: Corpus, statistics: GlobalStatistics) -> _GlobalIdfIndex:
    """The shard's index weighed by ``statistics``, made once per merge and worker thread
    and kept in the shard's caches: each thread its own (the retrieval's scratch arrays,
    kept on an index between calls, are not to be shared by two calls at once)."""
    key = ("sharded_index", threading.get_ident())
    cached = corpus.caches.get(key)
    if cached is None or cached[0] != statistics.token:
        cached = corpus.caches[key] = (
            statistics.token, _GlobalIdfIndex.of(corpus.index, statistics)
        )
    return cached[1]  # type: ignore[no-any-return]


def search_shard(
    corpus: Corpus,
    statistics: GlobalStatistics,
    query_ids: np.ndarray,
    query_offsets: np.ndarray,
    rank_tokens: np.ndarray,
    k: int,
    n_threads: int | None,
) -> ShardFound:
    """The ``k`` best passages of the shard for every query (ranked as the whole corpus's
    :meth:`~citekit.index.IdfIndex.top_k_with_terms` ranks them), with their rank scores.

    The rank score of a candidate is summed again here, from its passage's row: the
    weights of the ranking terms it holds added in term order (zeros for the others,
    which change no sum), as the retrieval kernel adds them; the client merges the
    shards' candidates by it.
    """
    index = _global_index(corpus, statistics)
    n_queries = query_offsets.shape[0] - 1
    if corpus.n_passages == 0:
        empty = np.zeros(0, dtype=np.int64)
        return ShardFound(
            np.zeros(n_queries + 1, dtype=np.int64), empty, np.zeros(0), np.zeros(0), empty,
            empty,
        )
    # (one thread by default: a worker's threads already share the cores)
    top, held, _ = index.top_k_with_terms(
        query_ids, query_offsets, k, rank_tokens=rank_tokens, n_threads=n_threads or 1
    )
    _, _, columns, weights, flags, term_offsets, _ = index._terms(
        query_ids, query_offsets, np.asarray(rank_tokens, dtype=bool)
    )
    pair_query = np.repeat(np.arange(n_queries, dtype=np.int64), np.diff(top.offsets))
    positions, pair_of = gather_ranges(term_offsets[pair_query], term_offsets[pair_query + 1])
    present = index.contains(top.passages[pair_of], columns[positions])
    rank_scores = np.bincount(
        pair_of, weights=weights[positions] * (present & flags[positions]),
        minlength=pair_query.shape[0],
    )
    return ShardFound(
        top.offsets, top.passages, rank_scores, top.scores, held,
        corpus.passage_source[top.passages],
    )


def shard_subset(corpus: Corpus, sources: np.ndarray) -> ShardSubset:
    """Sources ``sources`` (ascending shard source numbers) of the shard as a
    :class:`ShardSubset`: the arrays of the corpus those sources alone would make."""
    token_offsets = corpus.source_token_offsets
    token_first, token_last = token_offsets[sources], token_offsets[sources + 1]
    token_positions, _ = gather_ranges(token_first, token_last)
    lengths = token_last - token_first
    new_token_offsets = np.zeros(sources.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_token_offsets[1:])
    # the passages come source after source: each source's are one run
    passage_bounds = np.searchsorted(corpus.passage_source, np.stack((sources, sources + 1)))
    passages, passage_owner = gather_ranges(passage_bounds[0], passage_bounds[1])
    token_shift = token_first - new_token_offsets[:-1]  # (per source: old start - new)
    arrays = {
        "token_ids": corpus.token_ids[token_positions],
        "token_starts": corpus.token_starts[token_positions],
        "token_ends": corpus.token_ends[token_positions],
        "source_token_offsets": new_token_offsets,
        "passage_source": passage_owner,
        "passage_token_start": corpus.passage_token_start[passages] - token_shift[passage_owner],
        "passage_token_end": corpus.passage_token_end[passages] - token_shift[passage_owner],
        "passage_char_start": corpus.passage_char_start[passages],
        "passage_char_end": corpus.passage_char_end[passages],
        "passage_sentence_start": corpus.passage_sentence_start[passages],
        "passage_sentence_end": corpus.passage_sentence_end[passages],
    }
    return ShardSubset(
        tuple(corpus.sources[s] for s in sources.tolist()),
        arrays,
        passages,
        corpus.source_documents[sources],
    )
