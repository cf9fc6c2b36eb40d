"""The candidate passages of every sentence of a batch: the IDF index's top-K through the
sentence's content tokens, plus (with an embedder) the passages most similar to it; and
embedding the passages of a corpus once.

Lexical candidates are found and ranked through the sentence's CONTENT tokens: a passage
sharing only stop words with it can never become a citation, and the posting lists of
"the" or "of" (most of the corpus) are never walked.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from citekit._citations.queries import QueryBatch
from citekit.config import CitationConfig
from citekit.corpus import Corpus, embed_texts

__all__ = ["Candidates", "ensure_embeddings", "find_candidates"]


class Candidates(NamedTuple):
    """Every candidate (sentence, passage) pair of a batch, grouped by sentence, strongest
    first."""

    pair_query: np.ndarray
    pair_passage: np.ndarray
    lexical: np.ndarray  # (the full lexical score of the specification)
    embedding: np.ndarray  # (cosine similarity; zeros without embedding candidates)
    # which of its query's distinct tokens each pair's passage holds, as
    # IdfIndex.top_k_with_terms gives them (None when embedding candidates joined)
    held: np.ndarray | None
    # the index column of every query token (IdfIndex.columns_of; the retrieval looks
    # them up anyway)
    columns: np.ndarray


def ensure_embeddings(corpus: Corpus, embedder: Any) -> None:
    """Embed the passages of a corpus that has no vectors yet (kept on the corpus, with
    the embedder that made them), or make sure that its vectors are ``embedder``'s."""
    if corpus.embeddings is None:
        corpus.embeddings = embed_texts(
            embedder, [corpus.passage_text(p) for p in range(corpus.n_passages)]
        )
        corpus.embedder = embedder
    elif corpus.embedder is not None and not (
        corpus.embedder is embedder or corpus.embedder == embedder
    ):
        raise ValueError(
            "embedder does not match the corpus: its passages were embedded by "
            f"{type(corpus.embedder).__name__} object {corpus.embedder!r}, not by this "
            "pipeline's embedder; prepare the corpus with this pipeline (or align "
            "with the embedder that prepared it)"
        )


def find_candidates(
    corpus: Corpus,
    batch: QueryBatch,
    query_texts: list[str],
    config: CitationConfig,
    embedder: Any,
    n_threads: int | None,
) -> Candidates:
    """The :class:`Candidates` of the sentences of ``batch`` (texts ``query_texts``, read
    only to embed them); none at ``top_k=0``."""
    query_ids, query_offsets = batch.ids, batch.offsets
    n_queries = query_offsets.shape[0] - 1
    if config.top_k == 0:
        return Candidates(
            np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), None,
            corpus.index.columns_of(query_ids),
        )
    if corpus.n_passages == 0 or n_queries == 0:
        empty = np.zeros(0, np.int64)
        return Candidates(
            empty, empty, np.zeros(0), np.zeros(0), None, corpus.index.columns_of(query_ids)
        )
    lexical_top, held, columns = corpus.index.top_k_with_terms(
        query_ids, query_offsets, config.max_candidates_lexical, rank_tokens=batch.content,
        n_threads=n_threads,
    )
    pair_query = np.repeat(np.arange(n_queries, dtype=np.int64), np.diff(lexical_top.offsets))
    pair_passage = lexical_top.passages
    use_embeddings = (
        corpus.embeddings is not None
        and embedder is not None
        and config.max_candidates_embedding > 0
    )
    if not use_embeddings:
        if config.max_candidates_total >= config.max_candidates_lexical:
            # no query has more candidates than may be kept
            return Candidates(
                pair_query,
                pair_passage,
                lexical_top.scores,
                np.zeros(pair_query.shape[0]),
                held,
                columns,
            )
        rank = np.arange(pair_query.shape[0]) - lexical_top.offsets[pair_query]
        keep = rank < config.max_candidates_total
        return Candidates(
            pair_query[keep],
            pair_passage[keep],
            lexical_top.scores[keep],
            np.zeros(int(keep.sum())),
            held[keep],
            columns,
        )

    query_vectors = embed_texts(embedder, query_texts)
    if query_vectors.shape[1] != corpus.embeddings.shape[1]:
        raise ValueError(
            f"embedder gives vectors of {query_vectors.shape[1]} dimensions, the "
            f"corpus's passage embeddings have {corpus.embeddings.shape[1]}: they "
            "come from another embedder"
        )
    similarity = _similarities(query_vectors, corpus.embeddings)
    k = min(config.max_candidates_embedding, corpus.n_passages)
    embed_query = np.repeat(np.arange(n_queries, dtype=np.int64), k)
    embed_passage = np.concatenate([_most_similar(row, k) for row in similarity])
    pair_query = np.concatenate([pair_query, embed_query])
    pair_passage = np.concatenate([pair_passage, embed_passage])
    keys = np.unique(pair_query * corpus.n_passages + pair_passage)
    pair_query, pair_passage = keys // corpus.n_passages, keys % corpus.n_passages
    lexical = corpus.index.pair_scores(query_ids, query_offsets, pair_query, pair_passage)
    embedding = similarity[pair_query, pair_passage].astype(np.float64)
    strength = np.maximum(lexical, embedding)
    source_index = corpus.source_indices[corpus.passage_source[pair_passage]]
    order = np.lexsort((pair_passage, source_index, -strength, pair_query))
    pair_query, pair_passage = pair_query[order], pair_passage[order]
    lexical, embedding = lexical[order], embedding[order]
    starts = np.searchsorted(pair_query, np.arange(n_queries))
    rank = np.arange(pair_query.shape[0]) - starts[pair_query]
    keep = rank < config.max_candidates_total
    return Candidates(
        pair_query[keep], pair_passage[keep], lexical[keep], embedding[keep], None, columns
    )


def _similarities(query_vectors: np.ndarray, embeddings: np.ndarray) -> np.ndarray:
    """Cosine similarity of every query vector with every passage embedding (rows
    L2-normalized), one matrix-vector product per query: a sentence's similarities do
    not depend on the other sentences aligned with it (a matrix product's rounding
    depends on the batch's shape)."""
    similarity = np.empty((query_vectors.shape[0], embeddings.shape[0]), dtype=np.float32)
    for row, vector in enumerate(query_vectors):
        np.matmul(embeddings, vector, out=similarity[row])
    return similarity


def _most_similar(similarity: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` passages (``0 < k <= similarity.size``) of largest similarity; of those
    tied with the k-th largest, the lowest passages."""
    n = similarity.shape[0]
    kth = np.partition(similarity, n - k)[n - k]
    above = np.flatnonzero(similarity > kth)
    tied = np.flatnonzero(similarity == kth)[: k - above.shape[0]]
    return np.concatenate([above, tied]).astype(np.int64)
