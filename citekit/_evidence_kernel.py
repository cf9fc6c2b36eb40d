"""Numba kernel behind the choice of a sentence's evidence set and shown citations.

A claim often fuses facts stated in two or three source sentences, while the best
citations by score are often near-copies of one sentence; so the pipeline chooses the
evidence of a sentence as a greedy set cover over its best candidates (see
``Pipeline._span_citations``). The arrays are tiny (a dozen candidates, a few dozen
tokens), so the cost was numpy's per-call overhead, a dozen calls per sentence: here it
is one compiled call.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

__all__ = ["evidence_set"]


@jit
def _evidence_set_kernel(
    covers,
    n_pool,
    weights,
    content,
    row_source,
    by_score_rows,
    top_k,
    max_per_source,
    uncovered_ok,
    selected,
    shown,
):
    n_rows, n_tokens = covers.shape
    # a row may become a citation when it covers a content token of the sentence (or is
    # allowed to without: an embedding-only candidate)
    showable = np.zeros(n_rows, dtype=np.bool_)
    for row in range(n_rows):
        showable[row] = uncovered_ok[row]
        for token in range(n_tokens):
            if content[token] and covers[row, token]:
                showable[row] = True
                break
    union = np.zeros(n_tokens, dtype=np.bool_)
    n_selected = 0
    if top_k > 0:
        # the best showable citation by score anchors the set (so citations[0] stays
        # the best)
        for row in range(n_pool):
            if showable[row]:
                selected[row] = True
                n_selected = 1
                for token in range(n_tokens):
                    union[token] = covers[row, token]
                break
    # then the pool pair adding the most weight of uncovered content tokens (the first
    # best: the better ranked), while some pair adds anything (weights are 1 and 2, or
    # 0.25 and 0: exact sums, so ties are real ties)
    while n_selected < top_k:
        best = -1
        best_gain = 0.0
        for row in range(n_pool):
            if selected[row] or not showable[row]:
                continue
            gain = 0.0
            for token in range(n_tokens):
                if content[token] and covers[row, token] and not union[token]:
                    gain += weights[token]
            if best < 0 or gain > best_gain:
                best = row
                best_gain = gain
        if best < 0 or best_gain <= 0.0:
            break
        selected[best] = True
        n_selected += 1
        for token in range(n_tokens):
            union[token] = union[token] or covers[best, token]
    # shown: the evidence set in pool order, then the best by score, at most
    # max_per_source per source and top_k in all
    n_shown = 0
    for step in range(n_pool + by_score_rows.shape[0]):
        if n_shown >= top_k:
            break
        if step < n_pool:
            row = step
            if not selected[row]:
                continue
        else:
            row = by_score_rows[step - n_pool]
            if not showable[row]:
                continue
        source_count = 0
        duplicate = False
        for i in range(n_shown):
            duplicate = duplicate or shown[i] == row
            if row_source[shown[i]] == row_source[row]:
                source_count += 1
        if not duplicate and source_count < max_per_source:
            shown[n_shown] = row
            n_shown += 1
    return n_shown


def evidence_set(
    covers: np.ndarray,
    n_pool: int,
    weights: np.ndarray,
    content: np.ndarray,
    row_source: np.ndarray,
    by_score_rows: np.ndarray,
    top_k: int,
    max_per_source: int,
    uncovered_ok: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The evidence set of a sentence and the citations shown for it.

    Rows are candidate citations: the evidence pool (rows ``0:n_pool``, best by score
    first), then any others ranked by score. Only rows covering a content token of the
    sentence can be chosen or shown (evidence that supports nothing of the sentence is
    no citation), and the rows of ``uncovered_ok`` without one. The evidence set starts
    with the first such pool row and greedily adds the pool row covering the largest
    ``weights`` of still uncovered content tokens (ties: the lower row), at most
    ``top_k`` rows, stopping when no row adds anything. Shown are the evidence set's
    rows in order, then the rows of ``by_score_rows``, skipping repeats, rows that
    cannot be shown and rows whose source already has ``max_per_source`` shown, at most
    ``top_k``.

    Parameters
    ----------
    covers : ndarray of bool, shape (n_rows, n_tokens)
        Which sentence tokens each row covers.
    n_pool : int
        Rows in the evidence pool (at most ``n_rows``).
    weights : ndarray of float64
        Each token's coverage weight.
    content : ndarray of bool
        Content tokens (only they count).
    row_source : ndarray of int64
        Source of each row.
    by_score_rows : ndarray of int64
        The rows of the best citations by score, best first.
    top_k, max_per_source : int
        The limits.
    uncovered_ok : ndarray of bool, optional
        Rows that may be chosen and shown although they cover no content token (the
        pipeline's embedding-only candidates). Default: none.

    Returns
    -------
    selected : ndarray of bool
        The evidence set (``n_rows`` flags).
    shown : ndarray of int64
        The shown rows, in order.

    Examples
    --------
    >>> import numpy as np
    >>> covers = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]], dtype=bool)
    >>> selected, shown = evidence_set(
    ...     covers, 3, np.ones(4), np.ones(4, dtype=bool), np.array([0, 0, 1]),
    ...     np.array([0, 1]), 3, 2)
    >>> selected.tolist(), shown.tolist()
    ([True, False, True], [0, 2, 1])
    """
    covers = np.ascontiguousarray(covers, dtype=np.bool_)
    if covers.ndim != 2:
        raise ValueError(f"covers must be 2-dimensional, got shape {covers.shape}")
    n_rows, n_tokens = covers.shape
    if not 0 <= n_pool <= n_rows:
        raise ValueError(f"n_pool must be between 0 and {n_rows}, got {n_pool}")
    uncovered_ok = np.ascontiguousarray(
        np.zeros(n_rows, dtype=np.bool_) if uncovered_ok is None else uncovered_ok,
        dtype=np.bool_,
    )
    if uncovered_ok.shape != (n_rows,):
        raise ValueError(
            f"uncovered_ok must hold one flag per row ({n_rows}), got shape "
            f"{uncovered_ok.shape}"
        )
    selected = np.zeros(n_rows, dtype=np.bool_)
    shown = np.zeros(max(int(top_k), 0), dtype=np.int64)
    n_shown = _evidence_set_kernel(
        covers,
        int(n_pool),
        np.ascontiguousarray(weights, dtype=np.float64).reshape(n_tokens),
        np.ascontiguousarray(content, dtype=np.bool_).reshape(n_tokens),
        np.ascontiguousarray(row_source, dtype=np.int64).reshape(n_rows),
        np.ascontiguousarray(by_score_rows, dtype=np.int64).reshape(-1),
        int(top_k),
        int(max_per_source),
        uncovered_ok,
        selected,
        shown,
    )
    return selected, shown[:n_shown]
