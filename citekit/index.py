"""IDF-weighted lexical index over passages, on ``scipy.sparse``.

:class:`IdfIndex` holds a binary passages x vocabulary CSR matrix (does passage ``p``
contain token ``t``?), its transpose (the inverted index) and an IDF vector. The
lexical score of an answer sentence against a passage is the IDF-weighted share of the
sentence's DISTINCT tokens that the passage contains::

    lexical(q, p) = sum(idf[t] for t in set(q) if t in p) / sum(idf[t] for t in set(q))

with ``idf[t] = log((n_passages + 1) / (df[t] + 1)) + 1`` (smoothed; a token no passage
contains gets ``log(n_passages + 1) + 1``, so it lowers every passage's score alike).
Scores of many queries against every passage come from one sparse product, so a query
costs the length of its tokens' posting lists, not the size of the corpus.

Token ids are arbitrary int64 values (e.g. 63-bit stable hashes); the index maps them to
column numbers through a sorted vocabulary built when the index is built.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

import numpy as np

from citekit._validation import check_int

__all__ = ["IdfIndex", "TopK", "TopKWithTerms", "top_k_rows"]


class TopK(NamedTuple):
    """Top-scoring passages of each query, packed CSR.

    The candidates of query ``i`` are ``passages[offsets[i]:offsets[i + 1]]`` with their
    ``scores`` at the same positions, best first (ties: lower passage index first).
    """

    offsets: np.ndarray
    passages: np.ndarray
    scores: np.ndarray


class TopKWithTerms(NamedTuple):
    """:meth:`IdfIndex.top_k_with_terms`: the best passages of each query, which of its
    query's terms each candidate's passage holds, and the index column of every query
    token."""

    top: TopK
    held: np.ndarray
    columns: np.ndarray


def _unseen_idf(n_passages: int) -> float:
    """The IDF of a token no passage holds."""
    return float(np.log(n_passages + 1.0) + 1.0)


def _as_int64_1d(value: Any, name: str) -> np.ndarray:
    if type(value) is np.ndarray and value.dtype == np.int64 and value.ndim == 1:
        # (the retrieval's own arrays, on every call: nothing to convert)
        return value if value.flags.c_contiguous else np.ascontiguousarray(value)
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got {array.ndim}-D")
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.int64)


def _check_ranges(starts: np.ndarray, ends: np.ndarray, size: int, what: str) -> None:
    if starts.shape != ends.shape:
        raise ValueError(f"{what}: starts and ends must have the same length")
    if starts.size and (np.any(starts < 0) or np.any(ends < starts) or np.any(ends > size)):
        raise ValueError(f"{what}: every range must satisfy 0 <= start <= end <= {size}")


def _check_offsets(offsets: np.ndarray, size: int, name: str) -> None:
    # (comparing neighbours, not np.diff: a third of the cost on every retrieval call, and
    # no difference of extreme values overflows)
    if (
        offsets.shape[0] == 0
        or offsets[0] != 0
        or offsets[-1] != size
        or (offsets[1:] < offsets[:-1]).any()
    ):
        raise ValueError(
            f"{name} must start at 0, never decrease and end at the number of tokens ({size})"
        )


def _checked_queries(
    query_ids: Any, query_offsets: Any, rank_tokens: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries packed CSR as contiguous int64 ``(ids, offsets)`` with valid offsets, and
    one bool rank flag per token (default: all set); errors name the argument."""
    ids = _as_int64_1d(query_ids, "query_ids")
    offsets = _as_int64_1d(query_offsets, "query_offsets")
    _check_offsets(offsets, ids.shape[0], "query_offsets")
    if rank_tokens is None:
        flags = np.ones(ids.shape[0], dtype=bool)
    else:
        flags = np.asarray(rank_tokens, dtype=bool).reshape(-1)
        if flags.shape != ids.shape:
            raise ValueError("rank_tokens must have one entry per query token")
    return ids, offsets, flags


def _checked_k_and_threads(k: Any, n_threads: Any) -> tuple[int, int | None]:
    """``k`` (an int >= 0) and ``n_threads`` (None, or a thread count the kernels have)."""
    k = int(check_int(k, "k", minimum=0))
    if n_threads is not None:
        from citekit._jit import check_threads

        n_threads = check_threads(n_threads)
    return k, n_threads


def gather_ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``concat(range(s, e) for s, e in zip(starts, ends))`` and the row of each.

    One compiled pass (the pipeline calls it on a few ranges at a time, where the seven
    numpy calls of a vectorized version cost more than the work). An end before its
    start raises ValueError.

    Examples
    --------
    >>> positions, rows = gather_ranges(np.array([0, 5]), np.array([2, 8]))
    >>> positions.tolist(), rows.tolist()
    ([0, 1, 5, 6, 7], [0, 0, 1, 1, 1])
    """
    from citekit.kernels._copy import gather_ranges_kernel

    return gather_ranges_kernel(  # type: ignore[no-any-return]
        np.ascontiguousarray(starts, dtype=np.int64), np.ascontiguousarray(ends, dtype=np.int64)
    )


def top_k_rows(score_matrix: Any, k: int) -> TopK:
    """The ``k`` best columns of every row of a CSR score matrix (zeros are never returned).

    Parameters
    ----------
    score_matrix : scipy.sparse.csr_matrix
        Queries x passages scores, e.g. from :meth:`IdfIndex.scores`.
    k : int
        How many per row (``0`` gives none).

    Returns
    -------
    TopK
        Best first; equal scores keep the lower passage index first.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.array([[0.1, 0.9, 0.5], [0.0, 0.0, 0.3]]))
    >>> top = top_k_rows(m, 2)
    >>> top.offsets.tolist(), top.passages.tolist()
    ([0, 2, 3], [1, 2, 2])
    """
    indptr = score_matrix.indptr
    indices = score_matrix.indices
    data = score_matrix.data
    n_rows = indptr.shape[0] - 1
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    chosen_passages = []
    chosen_scores = []
    for row in range(n_rows):
        start, end = int(indptr[row]), int(indptr[row + 1])
        row_scores = data[start:end]
        row_passages = indices[start:end]
        keep = row_scores > 0
        if not keep.all():
            row_scores = row_scores[keep]
            row_passages = row_passages[keep]
        if k <= 0 or row_scores.size == 0:
            offsets[row + 1] = offsets[row]
            continue
        if row_scores.size > k:
            # keep every passage tied with the k-th best so the tie-break is exact
            threshold = np.partition(row_scores, row_scores.size - k)[row_scores.size - k]
            near = row_scores >= threshold
            row_scores = row_scores[near]
            row_passages = row_passages[near]
        order = np.lexsort((row_passages, -row_scores))[:k]
        chosen_passages.append(row_passages[order])
        chosen_scores.append(row_scores[order])
        offsets[row + 1] = offsets[row] + order.shape[0]
    if chosen_passages:
        passages = np.concatenate(chosen_passages).astype(np.int64, copy=False)
        scores = np.concatenate(chosen_scores).astype(np.float64, copy=False)
    else:
        passages = np.zeros(0, dtype=np.int64)
        scores = np.zeros(0, dtype=np.float64)
    return TopK(offsets, passages, scores)


class IdfIndex:
    """Passages x vocabulary index with IDF weights and IDF-weighted overlap scores.

    Build it with :meth:`build` (passages given as token ranges of one id array) or
    :meth:`from_token_lists`; the constructor takes already computed arrays.

    Parameters
    ----------
    vocabulary : ndarray of int64
        Sorted distinct token ids; token ``vocabulary[j]`` is column ``j``.
    indptr, indices : ndarray of int64
        The CSR structure of the binary passages x vocabulary matrix (a row's columns
        in any order; a repeated column counts once).

    Examples
    --------
    >>> index = IdfIndex.from_token_lists([[1, 2, 3], [3, 4], [9]])
    >>> index.n_passages, index.n_terms
    (3, 5)
    >>> top = index.top_k([3, 4, 4], [0, 3], k=2)
    >>> top.passages.tolist()
    [1, 0]
    >>> round(float(top.scores[0]), 6)
    1.0
    """

    def __init__(self, vocabulary: Any, indptr: Any, indices: Any) -> None:
        from citekit.kernels._index import index_of_columns

        vocabulary = _as_int64_1d(vocabulary, "vocabulary")
        indptr = _as_int64_1d(indptr, "indptr")
        indices = _as_int64_1d(indices, "indices")
        if vocabulary.size > 1 and np.any(np.diff(vocabulary) <= 0):
            raise ValueError("vocabulary must be sorted and distinct")
        if indptr.size == 0:
            raise ValueError("indptr must have n_passages + 1 entries")
        _check_offsets(indptr, indices.shape[0], "indptr")
        n_terms = vocabulary.shape[0]
        if indices.size and (indices.min() < 0 or indices.max() >= n_terms):
            raise ValueError(f"indices must be column numbers in [0, {n_terms})")
        # rows as given may be unsorted or repeat a column: keep each column once, sorted
        self._set_rows(vocabulary, *index_of_columns(indices, indptr[:-1], indptr[1:], n_terms))

    #: For an index made by :meth:`build`: where each column's token first occurs in the
    #: ``token_ids`` it was built from (None otherwise).
    first_positions: np.ndarray | None = None

    def _set_rows(
        self,
        vocabulary: np.ndarray,
        rows: tuple[np.ndarray, np.ndarray],
        postings: tuple[np.ndarray, np.ndarray],
        document_frequency: np.ndarray,
        idf_ratio: np.ndarray,
    ) -> None:
        """Install the arrays of the index builder
        (:func:`citekit.kernels._index.index_arrays`): canonical rows (sorted, distinct
        columns), their transpose (the inverted index: term -> passages containing it,
        ascending), ``document_frequency`` (the postings' lengths) and ``idf_ratio``
        (``(n_passages + 1) / (document_frequency + 1)``, divided as numpy divides); derive
        the IDF."""
        from citekit.kernels._retrieval import walk_passages

        self.vocabulary = vocabulary
        self._rows = rows
        indptr = rows[0]
        n_passages = indptr.shape[0] - 1
        # (the passages as the retrieval walk reads them: 4 bytes each)
        self._walk_postings = (postings[0], walk_passages(postings[1], n_passages))
        self.document_frequency = document_frequency
        idf = np.log(idf_ratio)
        idf += 1.0
        self.idf = idf
        self.unseen_idf = _unseen_idf(n_passages)

    @property
    def matrix(self) -> Any:
        """The binary passages x vocabulary matrix (``scipy.sparse.csr_matrix``, built on
        first use)."""
        return self._cached_csr("_matrix", self._rows, (self.n_passages, self.n_terms))

    @property
    def _postings(self) -> Any:
        """The inverted index as a ``scipy.sparse.csr_matrix`` (built on first use)."""
        return self._cached_csr("_postings_matrix", self.postings, (self.n_terms, self.n_passages))

    def _cached_csr(
        self, name: str, structure: tuple[np.ndarray, np.ndarray], shape: tuple[int, int]
    ) -> Any:
        """A binary CSR matrix of ``(indptr, indices)`` (rows sorted), built once."""
        matrix = self.__dict__.get(name)
        if matrix is None:
            import scipy.sparse as sp

            indptr, indices = structure
            data = np.ones(indices.shape[0], dtype=np.float64)
            matrix = sp.csr_matrix((data, indices, indptr), shape=shape)
            matrix.has_sorted_indices = True
            self.__dict__[name] = matrix
        return matrix

    @property
    def _scratch(self) -> Any:
        """Scratch arrays of the retrieval kernel, kept between queries (not pickled)."""
        scratch = self.__dict__.get("_top_scratch")
        if scratch is None:
            from citekit.kernels._retrieval import _Scratch

            scratch = self.__dict__["_top_scratch"] = _Scratch()
        return scratch

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_top_scratch", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # an index pickled by citekit before 4-byte postings kept them as int64
        old = state.pop("_postings_int64", None)
        if old is not None and "_walk_postings" not in state:
            from citekit.kernels._retrieval import walk_passages

            n_passages = state["_rows"][0].shape[0] - 1
            state["_walk_postings"] = (old[0], walk_passages(old[1], n_passages))
        self.__dict__.update(state)

    # -- construction ---------------------------------------------------------------

    @classmethod
    def build(cls, token_ids: Any, passage_starts: Any, passage_ends: Any) -> "IdfIndex":
        """Index passages given as ranges of one token-id array.

        Passage ``p`` holds ``token_ids[passage_starts[p]:passage_ends[p]]``; ranges may
        overlap (sliding windows share tokens without copying them).

        Parameters
        ----------
        token_ids : array_like of int
            Token ids of all passages' texts.
        passage_starts, passage_ends : array_like of int
            Half-open token ranges, one per passage.

        Returns
        -------
        IdfIndex

        Raises
        ------
        TypeError
            If an argument does not hold integers.
        ValueError
            If a range is out of bounds or reversed.

        Examples
        --------
        >>> index = IdfIndex.build([5, 6, 7, 5], [0, 2], [3, 4])
        >>> index.n_passages, index.vocabulary.tolist()
        (2, [5, 6, 7])
        """
        ids = _as_int64_1d(token_ids, "token_ids")
        starts = _as_int64_1d(passage_starts, "passage_starts")
        ends = _as_int64_1d(passage_ends, "passage_ends")
        _check_ranges(starts, ends, ids.shape[0], "IdfIndex.build")
        return cls._build(ids, starts, ends)

    @classmethod
    def _build(cls, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> "IdfIndex":
        """:meth:`build` from int64 arrays already checked."""
        from citekit.kernels._index import index_arrays

        return cls._from_parts(*index_arrays(ids, starts, ends))

    @classmethod
    def _from_parts(
        cls,
        vocabulary: np.ndarray,
        first_positions: np.ndarray,
        rows: tuple[np.ndarray, np.ndarray],
        postings: tuple[np.ndarray, np.ndarray],
        document_frequency: np.ndarray,
        idf_ratio: np.ndarray,
    ) -> "IdfIndex":
        """An index from the arrays of :func:`citekit.kernels._index.index_arrays` (canonical
        by construction: nothing is checked)."""
        index = cls.__new__(cls)
        index._set_rows(vocabulary, rows, postings, document_frequency, idf_ratio)
        index.first_positions = first_positions
        return index

    @classmethod
    def from_token_lists(cls, passages: Any) -> "IdfIndex":
        """Index a sequence of token-id sequences (one per passage).

        Examples
        --------
        >>> IdfIndex.from_token_lists([[1], [1, 2]]).document_frequency.tolist()
        [2, 1]
        """
        if isinstance(passages, (str, bytes)) or not hasattr(passages, "__iter__"):
            raise TypeError(
                f"passages must be a sequence of token-id sequences, got {type(passages).__name__}"
            )
        arrays = [_as_int64_1d(p, "passages[i]") for p in passages]
        lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
        ends = np.cumsum(lengths)
        starts = ends - lengths
        ids = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
        return cls.build(ids, starts, ends)

    # -- properties -----------------------------------------------------------------

    @property
    def n_passages(self) -> int:
        """Number of indexed passages (rows)."""
        return int(self._rows[0].shape[0] - 1)

    @property
    def n_terms(self) -> int:
        """Number of distinct tokens (columns)."""
        return int(self.vocabulary.shape[0])

    def __repr__(self) -> str:
        return (
            f"IdfIndex({self.n_passages} passages, {self.n_terms} terms, "
            f"{self._rows[1].shape[0]} entries)"
        )

    def columns_of(self, token_ids: Any) -> np.ndarray:
        """Column of each token id, ``-1`` for ids not in the vocabulary.

        Examples
        --------
        >>> IdfIndex.from_token_lists([[10, 30]]).columns_of([30, 20]).tolist()
        [1, -1]
        """
        from citekit.kernels._index import columns_of_ids

        vocabulary = np.ascontiguousarray(self.vocabulary, dtype=np.int64)
        return columns_of_ids(vocabulary, _as_int64_1d(token_ids, "token_ids"))

    def idf_of(self, token_ids: Any) -> np.ndarray:
        """IDF of each token id (ids in no passage get :attr:`unseen_idf`).

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1], [1, 2]])
        >>> index.idf_of([1, 2, 3]).round(3).tolist()
        [1.0, 1.405, 2.099]
        """
        columns = self.columns_of(token_ids)
        out = np.full(columns.shape[0], self.unseen_idf, dtype=np.float64)
        seen = columns >= 0
        out[seen] = self.idf[columns[seen]]
        return out

    def contains(self, passages: Any, columns: Any) -> np.ndarray:
        """Whether passage ``passages[i]`` contains the token of column ``columns[i]``.

        Binary search in each passage's sorted CSR row (a small compiled kernel); a
        negative column (a token outside the vocabulary) is never contained.

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1, 2], [3]])
        >>> index.contains([0, 0, 1, 1], index.columns_of([2, 3, 3, 99])).tolist()
        [True, False, True, False]
        """
        rows = _as_int64_1d(passages, "passages")
        cols = _as_int64_1d(columns, "columns")
        if rows.shape != cols.shape:
            raise ValueError("passages and columns must have the same length")
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_passages):
            raise ValueError(f"passages must be in [0, {self.n_passages})")
        from citekit.kernels._overlap import row_contains

        row_pointers, row_columns = self.rows
        return row_contains(row_pointers, row_columns, rows, cols)

    @property
    def postings(self) -> tuple[np.ndarray, np.ndarray]:
        """The inverted index (vocabulary x passages CSR ``(indptr, indices)``, int64,
        passages ascending in each row); ``indices`` is a new array at each access (the
        index keeps the passage numbers in 4 bytes for its retrieval walks).

        Examples
        --------
        >>> indptr, indices = IdfIndex.from_token_lists([[5, 7], [7]]).postings
        >>> indptr.tolist(), indices.tolist(), indices.dtype.name
        ([0, 1, 3], [0, 0, 1], 'int64')
        """
        pointers, passages = self._walk_postings
        return pointers, passages.astype(np.int64)

    @property
    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The CSR ``(indptr, indices)`` of the passages x vocabulary matrix as int64
        (columns sorted and distinct within each row)."""
        return self._rows

    def _query_terms(
        self, query_ids: Any, query_offsets: Any, rank_tokens: Any = None
    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Distinct (query, token) terms: query row, column, IDF weight, rank flag; term
        offsets per query; and each query's denominator (IDF sum of its distinct tokens)."""
        return self._terms(*_checked_queries(query_ids, query_offsets, rank_tokens))

    def _terms(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        flags: np.ndarray,
        token_columns: np.ndarray | None = None,
    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_query_terms` of checked inputs: ``ids`` and ``offsets`` contiguous int64,
        valid CSR offsets, ``flags`` bool, one per id; ``token_columns`` (optional, int64,
        one per id) receives each id's column (:meth:`columns_of`)."""
        from citekit.kernels._retrieval import idf_query_terms

        rows, columns, weights, flags, term_offsets, denominators = idf_query_terms(
            ids, offsets, flags, *self._term_statistics(), token_columns
        )
        return offsets.shape[0] - 1, rows, columns, weights, flags, term_offsets, denominators

    def _term_statistics(self) -> tuple[np.ndarray, np.ndarray, float]:
        """The vocabulary, IDF and unseen-token IDF that weigh query terms (this index's;
        a shard of a sharded corpus weighs them with the whole corpus's)."""
        return self.vocabulary, self.idf, self.unseen_idf

    def _product(
        self, n_queries: int, rows: np.ndarray, columns: np.ndarray, weights: np.ndarray
    ) -> Any:
        """Sparse product of weighted query terms with the inverted index (unnormalized)."""
        import scipy.sparse as sp

        seen = columns >= 0
        query_matrix = sp.csr_matrix(
            (weights[seen], (rows[seen], columns[seen])), shape=(n_queries, self.n_terms)
        )
        return (query_matrix @ self._postings).tocsr()

    def scores(self, query_ids: Any, query_offsets: Any) -> Any:
        """Lexical score of every query against every passage, as a sparse matrix.

        Parameters
        ----------
        query_ids : array_like of int
            Token ids of all queries, concatenated.
        query_offsets : array_like of int
            CSR offsets: query ``i`` is ``query_ids[query_offsets[i]:query_offsets[i + 1]]``.

        Returns
        -------
        scipy.sparse.csr_matrix
            ``n_queries x n_passages``; entry ``(i, p)`` is the IDF-weighted share of query
            ``i``'s distinct tokens present in passage ``p`` (absent entries are 0).

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1, 2], [2, 3]])
        >>> index.scores([2, 2, 3], [0, 3]).toarray().round(3).tolist()
        [[0.416, 1.0]]
        """
        n_queries, rows, columns, weights, _, _, denominators = self._query_terms(
            query_ids, query_offsets
        )
        product = self._product(n_queries, rows, columns, weights)
        row_of_entry = np.repeat(np.arange(n_queries), np.diff(product.indptr))
        with np.errstate(divide="ignore", invalid="ignore"):
            product.data = product.data / denominators[row_of_entry]
        return product

    def pair_scores(
        self, query_ids: Any, query_offsets: Any, pair_query: Any, pair_passage: Any
    ) -> np.ndarray:
        """Lexical score of chosen (query, passage) pairs only.

        Costs one membership test per distinct query token per pair, independent of the
        corpus size.

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1, 2], [2, 3]])
        >>> index.pair_scores([2, 3], [0, 2], [0, 0], [1, 0]).round(3).tolist()
        [1.0, 0.416]
        """
        n_queries, rows, columns, weights, _, term_offsets, denominators = self._query_terms(
            query_ids, query_offsets
        )
        queries = _as_int64_1d(pair_query, "pair_query")
        passages = _as_int64_1d(pair_passage, "pair_passage")
        if queries.shape != passages.shape:
            raise ValueError("pair_query and pair_passage must have the same length")
        if queries.size and (queries.min() < 0 or queries.max() >= n_queries):
            raise ValueError(f"pair_query must be in [0, {n_queries})")
        return self._pair_sums(queries, passages, columns, weights, term_offsets) / np.where(
            denominators[queries] > 0, denominators[queries], 1.0
        )

    def _pair_sums(
        self,
        queries: np.ndarray,
        passages: np.ndarray,
        columns: np.ndarray,
        weights: np.ndarray,
        term_offsets: np.ndarray,
    ) -> np.ndarray:
        positions, pair_of = gather_ranges(term_offsets[queries], term_offsets[queries + 1])
        present = self.contains(passages[pair_of], columns[positions])
        return np.bincount(
            pair_of, weights=weights[positions] * present, minlength=queries.shape[0]
        )

    def top_k(
        self,
        query_ids: Any,
        query_offsets: Any,
        k: int,
        *,
        rank_tokens: Any = None,
        n_threads: int | None = None,
    ) -> TopK:
        """The ``k`` best passages for every query.

        Passages sharing no ranking token with a query are never returned; equal scores
        prefer the lower passage index. Queries are processed in blocks so that memory
        stays bounded for thousands of queries.

        Parameters
        ----------
        query_ids, query_offsets : array_like of int
            Queries packed CSR, as in :meth:`scores`.
        k : int
            Candidates per query (``>= 0``).
        rank_tokens : array_like of bool, optional
            One flag per query token. When given, passages are found and ranked by the
            flagged tokens only (e.g. the content words, so that the long posting lists of
            "the" or "of" are never walked); the returned ``scores`` are still the full
            lexical score of :meth:`scores`. Default: every token ranks.
        n_threads : int, optional
            Threads the queries are shared among (one query per thread at a time; the
            result never depends on it). Default: the kernels' current thread count when the
            queries' posting lists are long enough to pay for waking the threads, else
            one. At most the kernels' thread pool (``NUMBA_NUM_THREADS``).

        Returns
        -------
        TopK

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1, 2], [2, 3], [4]])
        >>> top = index.top_k([2, 3], [0, 2], k=5)
        >>> top.passages.tolist(), top.scores.round(3).tolist()
        ([1, 0], [1.0, 0.432])
        >>> index.top_k([2, 3], [0, 2], k=5, rank_tokens=[False, True]).passages.tolist()
        [1]
        >>> index.top_k([2, 3], [0, 2], k=5, n_threads=1).passages.tolist()
        [1, 0]
        """
        k, n_threads = _checked_k_and_threads(k, n_threads)
        ids, offsets, flags = _checked_queries(query_ids, query_offsets, rank_tokens)
        return self._top_k(ids, offsets, k, flags, n_threads=n_threads)

    def top_k_with_terms(
        self,
        query_ids: Any,
        query_offsets: Any,
        k: int,
        *,
        rank_tokens: Any = None,
        n_threads: int | None = None,
    ) -> TopKWithTerms:
        """:meth:`top_k`, with which terms each candidate's passage holds and the column
        of every query token.

        The terms of a query are its distinct tokens, ascending by id (those in no passage
        too). The retrieval walk knows which of them each candidate holds, and looks every
        token up in the vocabulary anyway: this returns both, so that a caller counting
        the tokens a candidate shares with its query need not read the passage's row or
        look the tokens up again.

        Parameters
        ----------
        query_ids, query_offsets, k, rank_tokens, n_threads
            As for :meth:`top_k`.

        Returns
        -------
        TopKWithTerms
            ``top``: the :class:`TopK` of :meth:`top_k`. ``held`` (int64, one per
            candidate): bit ``t`` set when the candidate's passage holds its query's
            ``t``-th term, every term of its query tested whether or not it ranks; -1 for
            the candidates of a query of more than 63 terms. ``columns`` (int64, one per
            query token): its index column, as :meth:`columns_of` gives it.

        Raises
        ------
        TypeError, ValueError
            As :meth:`top_k` (the message names the argument).

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1, 2], [2, 3], [4]])
        >>> top, held, columns = index.top_k_with_terms([3, 2, 9], [0, 3], k=5)
        >>> top.passages.tolist(), top.scores.round(3).tolist()
        ([1, 0], [0.555, 0.24])
        >>> # terms 2, 3, 9: passage 1 holds the first two, passage 0 the first
        >>> [bin(bits) for bits in held.tolist()], columns.tolist()
        (['0b11', '0b1'], [2, 1, -1])
        """
        k, n_threads = _checked_k_and_threads(k, n_threads)
        ids, offsets, flags = _checked_queries(query_ids, query_offsets, rank_tokens)
        columns = np.empty(ids.shape[0], dtype=np.int64)
        top, held = self._top_k(
            ids, offsets, k, flags, return_held=True, n_threads=n_threads,
            token_columns=columns,
        )
        return TopKWithTerms(top, held, columns)

    def _top_k(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        k: int,
        flags_all: np.ndarray,
        return_held: bool = False,
        n_threads: int | None = None,
        token_columns: np.ndarray | None = None,
    ) -> Any:
        """:meth:`top_k` and :meth:`top_k_with_terms` of checked inputs (unchecked here):
        ``ids`` and ``offsets`` contiguous int64, valid CSR offsets, ``k >= 0``,
        ``flags_all`` bool, one per id, ``n_threads`` None or checked.
        ``token_columns`` (optional, contiguous int64, one per id) receives each id's
        column. With ``return_held``, returns ``(top, held)``; how ``held`` is found, and
        how ``n_threads`` shares the queries among threads:
        :func:`citekit.kernels._retrieval.top_candidates`."""
        from citekit.kernels._retrieval import normalized_scores, top_candidates

        n_queries = offsets.shape[0] - 1
        block = 256
        parts = []
        helds = []
        for first in range(0, n_queries, block):
            last = min(n_queries, first + block)
            lo, hi = int(offsets[first]), int(offsets[last])
            block_offsets = offsets[first : last + 1] - lo
            _, rows, columns, weights, flags, term_offsets, denominators = self._terms(
                ids[lo:hi],
                block_offsets,
                flags_all[lo:hi],
                None if token_columns is None else token_columns[lo:hi],
            )
            posting_pointers, posting_passages = self._walk_postings
            offsets_out, passages_out, _, sums, *held = top_candidates(
                posting_pointers,
                posting_passages,
                self.n_passages,
                columns,
                weights,
                term_offsets,
                k,
                term_ranks=flags,
                rows=self.rows,
                scratch=self._scratch,
                return_held=return_held,
                n_threads=n_threads,
            )
            helds.extend(held)
            exact = normalized_scores(offsets_out, sums, denominators)
            top = TopK(offsets_out, passages_out, exact)
            parts.append(top)
        if not parts:
            top = TopK(np.zeros(1, dtype=np.int64), np.zeros(0, np.int64), np.zeros(0))
        elif len(parts) == 1:
            top = parts[0]
        else:
            out_offsets = [np.zeros(1, dtype=np.int64)]
            base = 0
            for part in parts:
                out_offsets.append(part.offsets[1:] + base)
                base += int(part.offsets[-1])
            top = TopK(
                np.concatenate(out_offsets),
                np.concatenate([p.passages for p in parts]),
                np.concatenate([p.scores for p in parts]),
            )
        if not return_held:
            return top
        return top, np.concatenate(helds) if helds else np.zeros(0, dtype=np.int64)

    # -- persistence ----------------------------------------------------------------

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays that define the index (for saving as ``.npy``).

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1, 2]])
        >>> sorted(index.to_arrays())
        ['indices', 'indptr', 'vocabulary']
        """
        return {
            "vocabulary": self.vocabulary,
            "indptr": self._rows[0],
            "indices": self._rows[1],
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, Any]) -> "IdfIndex":
        """Inverse of :meth:`to_arrays`.

        Examples
        --------
        >>> index = IdfIndex.from_token_lists([[1, 2], [2]])
        >>> IdfIndex.from_arrays(index.to_arrays()).idf.tolist() == index.idf.tolist()
        True
        """
        return cls(arrays["vocabulary"], arrays["indptr"], arrays["indices"])

    # every array of a built index, by the name a saved corpus gives its file
    # (``index_<name>.npy``): what :meth:`_from_saved` takes back without computing
    _SAVED_NAMES = (
        "vocabulary", "indptr", "indices", "postings_indptr", "postings_passages",
        "document_frequency", "idf", "first_positions",
    )

    def _saved_arrays(self) -> dict[str, np.ndarray]:
        """Every array of the index (:data:`_SAVED_NAMES`; ``first_positions`` only when
        known), so that a saved corpus can be memory-mapped with nothing computed."""
        arrays = {
            **self.to_arrays(),
            "postings_indptr": self._walk_postings[0],
            "postings_passages": self._walk_postings[1],
            "document_frequency": self.document_frequency,
            "idf": self.idf,
        }
        if self.first_positions is not None:
            arrays["first_positions"] = self.first_positions
        return arrays

    @classmethod
    def _from_saved(cls, arrays: Mapping[str, np.ndarray]) -> "IdfIndex":
        """Inverse of :meth:`_saved_arrays` (every name given), taking the arrays as they
        are: nothing checked, nothing computed (a memory-mapped corpus loads in constant
        time; ``Corpus.verify`` compares them with an index built again)."""
        index = cls.__new__(cls)
        index.vocabulary = arrays["vocabulary"]
        index._rows = (arrays["indptr"], arrays["indices"])
        index._walk_postings = (arrays["postings_indptr"], arrays["postings_passages"])
        index.document_frequency = arrays["document_frequency"]
        index.idf = arrays["idf"]
        index.unseen_idf = _unseen_idf(index.n_passages)
        index.first_positions = arrays["first_positions"]
        return index
