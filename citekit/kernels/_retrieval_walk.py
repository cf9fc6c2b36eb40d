"""The walk of the retrieval kernels, in variants that compile only the paths a call may
take (:func:`citekit.kernels._retrieval.top_candidates` picks one per call).

A kernel compiles every kernel it calls, even in a branch that never runs: one walk
holding the bitmask path, the pruned walk and the selection of the k best cost their
compile on every first call, though a call on a few documents takes none of them. So the
walk is made by factories whose switches are closure constants (numba prunes the
branches they close before typing, so their callees are not compiled):

``with_masks``
    queries may be walked as per-passage words (:mod:`citekit.kernels._retrieval_masks`);
``with_pruning``
    queries may be pruned heaviest term first, their passages then scored again in
    query order;
``with_selection``
    a query's lists may hold more than ``k`` entries, so the ``k`` best must be chosen
    (without it, every touched passage is kept: there are at most ``k``).

Four variants cover the calls (:data:`VARIANTS`, by name; :func:`kernel_variant` picks
one from what the caller knows before the walk): ``few`` (none: a call on a few
documents, e.g. the first ``align_citations``), ``summed`` (selection), ``masked`` (masks
and selection: the default on larger corpora) and ``pruned`` (all three). Each has a
serial kernel and a driver sharing the queries among threads, which calls that serial
kernel. A switch only removes paths that a call's inputs rule out, so every variant
gives, bit for bit, what the others would for the same call.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from citekit._jit import jit, jit_parallel, prange
from citekit.kernels._copy import copy_range
from citekit.kernels._overlap import _row_holds
from citekit.kernels._retrieval_masks import (
    _MASK_BITS,
    _MIN_MASK_ENTRIES,
    _TABLE_BITS,
    _add_unranked,
    _held_from_rows,
    _held_from_words,
    _mask_candidates,
    _reset_words,
)
from citekit.kernels._retrieval_select import (
    _add_all,
    _add_new,
    _add_to_kept,
    _emit_best,
    _keep_reachable,
    _kth_at_least,
    _kth_best,
    _list_touched,
    _row_terms,
    _sort_best,
    heaviest_first,
)
from citekit.kernels._sort import stable_argsort

# Queries with fewer ranking terms are walked in query order without pruning: there is
# nothing to skip.
_MIN_PRUNED_TERMS = 3


# queries of at most this many terms get the bits of the terms each candidate holds
_HELD_BITS = 63


def _named(function: Callable, name: str) -> Callable:
    """``function`` under the module-level ``name`` it is bound to: numba's cache files
    and the first-call manifest (:func:`citekit._jit.kernel_name`, resolved by
    ``getattr`` on the module) tell the variants apart by it."""
    function.__name__ = function.__qualname__ = name
    return function


def _make_summed_candidates(with_pruning: bool, with_selection: bool, name: str) -> Any:
    """The summed walk (float weights into dense scores) with the pruned walk and the
    selection of the k best compiled in or out."""

    def summed_candidates(
        posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
        term_weights, terms, n_entries, k, pruning, walk, check_cost, search_cost, scores,
        touched, hits, values, buckets,
    ):
        """The passages that can be among the ``k`` best by rank score, summing the term
        weights into the dense ``scores`` (all zero, left all zero), in query order or,
        when ``pruning``, heaviest term first (MaxScore). Returns how many are in
        ``hits`` (their walk scores in ``values``), a threshold to give
        :func:`_emit_best` (0.0: none), and whether the walk's order differed from the
        query's (then the hits are every passage that may tie or beat the k-th best with
        rounding, to be scored again)."""
        n_terms = terms.shape[0]
        n_passages = scores.shape[0]
        order = terms
        if with_pruning and pruning:
            order = terms[heaviest_first(terms, term_columns, term_weights, posting_pointers)]
        # rest[j]: summed weight of the terms from the j-th walked on
        rest = np.zeros(n_terms + 1)
        for j in range(n_terms - 1, -1, -1):
            rest[j] = term_weights[order[j]] + rest[j + 1]
        # Rounding: a sum of at most n_terms positive weights, in any order, lies within
        # a relative n_terms * 2**-53 of the exact sum; upper bounds times ``up`` compared
        # with lower bounds times ``down`` can only keep more passages, never fewer.
        margin = (n_terms + 2) * 2.0**-50
        up = 1.0 + margin
        down = 1.0 - margin
        # Long lists touch much of the corpus: add without looking, then list the touched
        # passages in one sequential scan; short ones: list each passage when touched.
        scan = walk == 1 or (walk < 0 and not pruning and 2 * n_entries > n_passages)
        listed = not scan
        n_touched = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
        admitting = True
        theta = 0.0  # a lower bound of the k-th best rank score, once known
        known = False
        share = 1.0
        walked = 0
        for j in range(n_terms):
            term = order[j]
            column = term_columns[term]
            weight = term_weights[term]
            lo = posting_pointers[column]
            hi = posting_pointers[column + 1]
            if with_pruning:
                if (
                    pruning
                    and admitting
                    and j > 0
                    and n_entries - walked > check_cost * (n_touched if listed else walked)
                    and (rest[0] - rest[j]) * share * down > rest[j] * up
                ):
                    # The k-th best score so far may exceed the weight of the lists left:
                    # find it (a bound that only rises as lists are added). It is at most
                    # the weight walked; a k-th best found below that predicts, by the
                    # same share of the weight walked, when the next one may be worth
                    # finding.
                    if not listed:
                        n_touched = _list_touched(scores, touched)
                        listed = True
                    if n_touched >= k:
                        _, theta = _kth_best(
                            touched, n_touched, scores, k, 0.0, rest[n_terms - 1] * down,
                            rest[0] * up, 1.0, 1.0, buckets, hits, values,
                        )
                        known = True
                        share = theta / (rest[0] - rest[j])
                if admitting and known and theta * down > rest[j] * up:
                    # k passages score more than the lists left weigh: no passage not
                    # touched yet can reach the k-th best, so stop admitting passages
                    admitting = False
            if with_pruning and not admitting:
                length = hi - lo
                if n_touched > k and length > search_cost * k and length > n_touched:
                    # a long list: the k-th best can only have risen, and this list's
                    # weight and the rest are all that is left to add; drop the passages
                    # that can no longer reach it, so that the few left may be searched
                    theta = _kth_at_least(touched, n_touched, scores, k, theta, values)
                    n_touched = _keep_reachable(
                        touched, n_touched, scores, rest[j], up, theta * down
                    )
                # only the passages still in the running gain: one binary search per
                # passage, or one walk of the list, whichever costs less
                if n_touched * search_cost < length:
                    for i in range(n_touched):
                        passage = touched[i]
                        if _row_holds(row_pointers, row_columns, passage, column):
                            scores[passage] += weight
                else:
                    _add_to_kept(posting_passages, lo, hi, weight, scores)
            elif listed:
                n_touched = _add_new(
                    posting_passages, lo, hi, weight, scores, touched, n_touched
                )
            else:
                _add_all(posting_passages, lo, hi, weight, scores)
            walked += hi - lo
        # the passages that can be among the k best, with their walk scores (every
        # touched score reset to zero), and the k-th largest walk score
        lightest = rest[n_terms - 1] if pruning else term_weights[terms[0]]
        if not pruning:
            for i in range(1, n_terms):
                lightest = min(lightest, term_weights[terms[i]])
        if not listed:
            n_touched = _list_touched(scores, touched)
        # the walk's sums are rounded differently from the query-order ones when the
        # order changed: then keep every passage that may tie or beat the k-th best
        reordered = False
        if with_pruning:
            for i in range(n_terms):
                reordered |= order[i] != terms[i]
        if with_selection and n_touched > k:
            n_hits, theta = _kth_best(
                touched, n_touched, scores, k, theta if known else 0.0, lightest * down,
                rest[0] * up, up if reordered else 1.0, down if reordered else 1.0,
                buckets, hits, values,
            )
        else:
            n_hits = n_touched
            theta = 0.0
            for i in range(n_touched):
                hits[i] = touched[i]
                values[i] = scores[touched[i]]
        for i in range(n_touched):
            scores[touched[i]] = 0.0
        if reordered and theta > 0.0:
            bar = theta * down
            n_kept = 0
            for i in range(n_hits):
                if values[i] * up >= bar:
                    hits[n_kept] = hits[i]
                    n_kept += 1
            n_hits = n_kept
            theta = 0.0
        elif theta > 0.0:
            n_kept = 0
            for i in range(n_hits):
                if values[i] >= theta:
                    hits[n_kept] = hits[i]
                    values[n_kept] = values[i]
                    n_kept += 1
            n_hits = n_kept
        return n_hits, theta, reordered

    return jit(_named(summed_candidates, name))


# the summed walks of the variants: few (no pruning, no selection), summed and masked
# (selection), pruned (both)
_summed_few = _make_summed_candidates(False, False, "_summed_few")
_summed_candidates = _make_summed_candidates(False, True, "_summed_candidates")
_summed_pruned = _make_summed_candidates(True, True, "_summed_pruned")


def _make_top_candidates(
    with_masks: bool, with_pruning: bool, with_selection: bool, name: str
) -> Any:
    """The serial kernel of a variant (see the module's docstring)."""

    def top_candidates_kernel(
        posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
        term_weights, term_ranks, term_offsets, k, prune, walk, use_masks, check_cost,
        search_cost, scan_block, scores, touched, hits, values, words, slots,
        frequent_bits, bit_of_column, buckets, queries, slot, out_counts, out_passages,
        out_rank_scores, out_scores, want_held, out_held,
    ):
        """The candidates of the queries ``queries`` (any order): query ``q``'s go to
        entries ``q * slot:q * slot + out_counts[q]`` of the output arrays (``slot >=
        min(k, number of passages)``). One worker's scratch arrays (``scores`` and
        ``words`` all zero, left all zero)."""
        n_passages = scores.shape[0]
        have_rows = row_pointers.shape[0] == n_passages + 1
        tables = np.empty((_MASK_BITS // _TABLE_BITS, 256))
        for position in range(queries.shape[0]):
            query = queries[position]
            n_out = query * slot
            out_counts[query] = 0
            first = term_offsets[query]
            last = term_offsets[query + 1]
            n_terms = 0
            n_found = 0
            # (an int64 from the start: a literal 0 would compile the summed walk for
            # Literal[int](0) too, as numba types the loop's first pass)
            n_entries = np.int64(0)
            for term in range(first, last):
                column = term_columns[term]
                if column >= 0:
                    n_found += 1
                    if term_ranks[term]:
                        n_terms += 1
                        n_entries += posting_pointers[column + 1] - posting_pointers[column]
            if n_terms == 0 or k <= 0:
                continue
            # the ranking terms found in the corpus (query order: the order of every rank
            # score's additions), and every found term
            terms = np.empty(n_terms, dtype=np.int64)
            found = np.empty(n_found, dtype=np.int64)
            n_terms = 0
            n_found = 0
            positive = True
            total = 0.0
            for term in range(first, last):
                if term_columns[term] >= 0:
                    found[n_found] = term
                    n_found += 1
                    if term_ranks[term]:
                        terms[n_terms] = term
                        n_terms += 1
                        weight = term_weights[term]
                        positive &= weight > 0.0
                        total += weight
            # Pruning walks the terms from the heaviest down (MaxScore order): the scores
            # it accumulates are sums in another order than the query's, so the passages
            # that can be among the k best are scored again, in query order, from their
            # rows.
            pruning = (
                with_pruning and prune and have_rows and n_entries > k
                and n_terms >= _MIN_PRUNED_TERMS
            )
            reordered = False
            masked = False
            scan = False
            n_touched = 0
            theta = 0.0
            # (the integer weights scale the weights by about 2**16 / total: finite)
            if (
                with_masks
                and (use_masks > 0 or (use_masks < 0 and n_entries >= _MIN_MASK_ENTRIES))
                and positive and total < np.inf and 2.0**32 / total < np.inf
                and not pruning and n_terms <= _MASK_BITS
            ):
                scan = walk == 1 or (walk < 0 and 2 * n_entries > n_passages)
                n_hits, n_touched = _mask_candidates(
                    posting_pointers, posting_passages, term_columns, term_weights, terms,
                    k, scan, scan_block, words, tables, touched, hits, values,
                )
                masked = True
            elif with_pruning:
                n_hits, theta, reordered = _summed_pruned(
                    posting_pointers, posting_passages, row_pointers, row_columns,
                    term_columns, term_weights, terms, n_entries, k, pruning, walk,
                    check_cost, search_cost, scores, touched, hits, values, buckets,
                )
            elif with_selection:
                n_hits, theta, reordered = _summed_candidates(
                    posting_pointers, posting_passages, row_pointers, row_columns,
                    term_columns, term_weights, terms, n_entries, k, pruning, walk,
                    check_cost, search_cost, scores, touched, hits, values, buckets,
                )
            else:
                n_hits, theta, reordered = _summed_few(
                    posting_pointers, posting_passages, row_pointers, row_columns,
                    term_columns, term_weights, terms, n_entries, k, pruning, walk,
                    check_cost, search_cost, scores, touched, hits, values, buckets,
                )
            if with_pruning and reordered:
                # their rank scores in query order, from their rows merged with the found
                # terms by column
                by_column = found[stable_argsort(term_columns[found])]
                held = np.zeros(last - first, dtype=np.bool_)
                local_by_column = by_column - first
                local_columns = term_columns[first:last]
                for i in range(n_hits):
                    _row_terms(
                        row_pointers, row_columns, hits[i], local_by_column, local_columns,
                        held,
                    )
                    total = 0.0
                    for term in terms:
                        if held[term - first]:
                            total += term_weights[term]
                    values[i] = total
            if with_selection:
                take = _emit_best(
                    hits, values, n_hits, k, theta, out_passages, out_rank_scores, n_out
                )
            else:
                # (no query's lists hold more than k entries: every hit is kept)
                take = n_hits
                _sort_best(hits, values, n_hits, out_passages, out_rank_scores, n_out)
            # which of the query's terms each kept passage holds: the ranking ones from
            # the words of the walk (no row read), else every found one from the rows
            held_bits = want_held and last - first <= _HELD_BITS
            if want_held and not held_bits:
                out_held[n_out:n_out + take] = -1
            if with_masks and held_bits and masked:
                _held_from_words(words, terms, first, out_passages, n_out, take, out_held)
            elif held_bits:
                _held_from_rows(
                    row_pointers, row_columns, term_columns, first, last, out_passages,
                    n_out, take, slots, out_held,
                )
            if with_masks and masked:
                _reset_words(words, scan, touched, n_touched)
            # the full score adds the weights of the terms that do not rank
            if n_found > n_terms:
                _add_unranked(
                    row_pointers, row_columns, term_columns, term_weights, term_ranks,
                    first, last, out_passages, out_rank_scores, out_scores, n_out, take,
                    slots, frequent_bits, bit_of_column, held_bits and masked, out_held,
                )
            else:
                copy_range(out_scores, n_out, out_rank_scores, n_out, take)
            out_counts[query] = take

    return jit(_named(top_candidates_kernel, name), entry=True)  # (Python and the drivers call it)


_top_candidates_few = _make_top_candidates(False, False, False, "_top_candidates_few")
_top_candidates_summed = _make_top_candidates(False, False, True, "_top_candidates_summed")
_top_candidates_masked = _make_top_candidates(True, False, True, "_top_candidates_masked")
_top_candidates_pruned = _make_top_candidates(True, True, True, "_top_candidates_pruned")


def _make_top_candidates_parallel(
    with_masks: bool, with_pruning: bool, with_selection: bool, name: str
) -> Any:
    """The threaded driver of a variant: it calls that variant's serial kernel."""

    def top_candidates_parallel(
        n_workers, worker_offsets, worker_queries, posting_pointers, posting_passages,
        row_pointers, row_columns, term_columns, term_weights, term_ranks, term_offsets, k,
        prune, walk, use_masks, check_cost, search_cost, scan_block, scores, touched, hits,
        values, words, slots, frequent_bits, bit_of_column, buckets, slot, out_counts,
        out_passages, out_rank_scores, out_scores, want_held, out_held,
    ):
        """The variant's serial kernel on ``n_workers`` threads: worker ``w`` takes the
        queries ``worker_queries[worker_offsets[w]:worker_offsets[w + 1]]`` with the
        scratch rows ``w`` (queries are independent: the result does not depend on the
        dealing)."""
        for worker in prange(n_workers):
            mine = worker_queries[worker_offsets[worker]:worker_offsets[worker + 1]]
            # (one call per variant, each a module-level kernel: a kernel held in a
            # closure would key numba's disk cache by its per-process id)
            if with_pruning:
                _top_candidates_pruned(
                    posting_pointers, posting_passages, row_pointers, row_columns,
                    term_columns, term_weights, term_ranks, term_offsets, k, prune, walk,
                    use_masks, check_cost, search_cost, scan_block, scores[worker],
                    touched[worker], hits[worker], values[worker], words[worker],
                    slots[worker], frequent_bits, bit_of_column, buckets[worker], mine,
                    slot, out_counts, out_passages, out_rank_scores, out_scores,
                    want_held, out_held,
                )
            elif with_masks:
                _top_candidates_masked(
                    posting_pointers, posting_passages, row_pointers, row_columns,
                    term_columns, term_weights, term_ranks, term_offsets, k, prune, walk,
                    use_masks, check_cost, search_cost, scan_block, scores[worker],
                    touched[worker], hits[worker], values[worker], words[worker],
                    slots[worker], frequent_bits, bit_of_column, buckets[worker], mine,
                    slot, out_counts, out_passages, out_rank_scores, out_scores,
                    want_held, out_held,
                )
            elif with_selection:
                _top_candidates_summed(
                    posting_pointers, posting_passages, row_pointers, row_columns,
                    term_columns, term_weights, term_ranks, term_offsets, k, prune, walk,
                    use_masks, check_cost, search_cost, scan_block, scores[worker],
                    touched[worker], hits[worker], values[worker], words[worker],
                    slots[worker], frequent_bits, bit_of_column, buckets[worker], mine,
                    slot, out_counts, out_passages, out_rank_scores, out_scores,
                    want_held, out_held,
                )
            else:
                _top_candidates_few(
                    posting_pointers, posting_passages, row_pointers, row_columns,
                    term_columns, term_weights, term_ranks, term_offsets, k, prune, walk,
                    use_masks, check_cost, search_cost, scan_block, scores[worker],
                    touched[worker], hits[worker], values[worker], words[worker],
                    slots[worker], frequent_bits, bit_of_column, buckets[worker], mine,
                    slot, out_counts, out_passages, out_rank_scores, out_scores,
                    want_held, out_held,
                )

    return jit_parallel(_named(top_candidates_parallel, name))


_top_candidates_parallel_few = _make_top_candidates_parallel(
    False, False, False, "_top_candidates_parallel_few"
)
_top_candidates_parallel_summed = _make_top_candidates_parallel(
    False, False, True, "_top_candidates_parallel_summed"
)
_top_candidates_parallel_masked = _make_top_candidates_parallel(
    True, False, True, "_top_candidates_parallel_masked"
)
_top_candidates_parallel_pruned = _make_top_candidates_parallel(
    True, True, True, "_top_candidates_parallel_pruned"
)


# variant name: (serial kernel, threaded driver)
VARIANTS: dict[str, tuple[Any, Any]] = {
    "few": (_top_candidates_few, _top_candidates_parallel_few),
    "summed": (_top_candidates_summed, _top_candidates_parallel_summed),
    "masked": (_top_candidates_masked, _top_candidates_parallel_masked),
    "pruned": (_top_candidates_pruned, _top_candidates_parallel_pruned),
}


def ranking_lists(
    posting_pointers: np.ndarray,
    term_columns: np.ndarray,
    term_ranks: np.ndarray,
    term_offsets: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per query (terms ``term_offsets[q]:term_offsets[q + 1]``): how many of its terms
    rank and are found in the corpus (column >= 0), and how many entries their posting
    lists hold in all: what its walk reads (int64 arrays).

    Examples
    --------
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> pointers = i64(0, 3, 5, 6)  # column lengths 3, 2, 1
    >>> ranks = np.array([True, True, False, True])
    >>> n_terms, entries = ranking_lists(pointers, i64(0, 1, 2, -1), ranks, i64(0, 3, 4))
    >>> n_terms.tolist(), entries.tolist()
    ([2, 0], [5, 0])
    """
    found = (term_columns >= 0) & term_ranks
    columns = term_columns[found]
    lengths = np.zeros(term_columns.shape[0], dtype=np.int64)
    lengths[found] = posting_pointers[columns + 1] - posting_pointers[columns]
    counted = np.concatenate(([0], np.cumsum(found, dtype=np.int64)))
    summed = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    n_terms = counted[term_offsets[1:]] - counted[term_offsets[:-1]]
    entries = summed[term_offsets[1:]] - summed[term_offsets[:-1]]
    return n_terms, entries


def kernel_variant(
    masks: bool | None, prune: bool, have_rows: bool, k: int, n_passages: int,
    largest: int,
) -> str:
    """The name of the variant (:data:`VARIANTS`) that holds every path a call may take:
    ``masks`` and ``prune`` as :func:`citekit.kernels._retrieval.top_candidates` takes
    them, whether it has the index's rows, ``k``, the corpus's passages and the most
    entries the ranking lists of any one of its queries hold.

    A query is walked as words only with ``masks`` True, or by default when its lists
    hold ``_MIN_MASK_ENTRIES`` (2,048) entries or more; pruned only with ``prune``, rows
    and more than ``k`` entries; and it touches at most as many passages as its lists
    hold entries, and as the corpus has: when that is at most ``k``, no selection is
    needed.

    Examples
    --------
    >>> kernel_variant(None, False, True, 200, 3, 5)  # (a few short sources)
    'few'
    >>> kernel_variant(None, False, True, 200, 68_000, 40_000)
    'masked'
    >>> kernel_variant(False, True, True, 200, 68_000, 40_000)
    'pruned'
    """
    if prune and have_rows and largest > k:
        return "pruned"
    if masks or (masks is None and largest >= _MIN_MASK_ENTRIES):
        return "masked"
    return "summed" if min(largest, n_passages) > k else "few"
