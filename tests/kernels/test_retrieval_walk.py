"""The variants of the retrieval walk (citekit.kernels._retrieval_walk): the one
top_candidates picks holds every path its call may take, and each variant that holds
more gives the same arrays bit for bit (serial and threaded); a call on a few documents
compiles none of the bitmask walk, the pruned walk or the selection of the k best."""

import json
import subprocess
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit import _compiling
from citekit._jit import entry
from citekit.kernels import _retrieval as bag
from citekit.kernels import _retrieval_walk as walk_variants
from citekit.kernels._retrieval import top_candidates
from citekit.kernels._retrieval_masks import _MIN_MASK_ENTRIES
from naive import naive_top_candidates_in_order
from test_retrieval_prune import _arrays, _assert_same, retrieval_cases

# each variant holds the paths of the ones before it
CHAIN = ["few", "summed", "masked", "pruned"]


def test_the_variants_are_a_chain_of_switches():
    flags = {
        "few": (False, False, False),
        "summed": (False, False, True),
        "masked": (True, False, True),
        "pruned": (True, True, True),
    }
    assert list(walk_variants.VARIANTS) == CHAIN
    for name, (serial, threaded) in walk_variants.VARIANTS.items():
        # (module-level names: numba's cache files and the first-call manifest)
        assert getattr(walk_variants, serial.py_func.__qualname__) is serial
        assert getattr(walk_variants, threaded.py_func.__qualname__) is threaded
        masks, pruning, selection = flags[name]
        cells = dict(zip(serial.py_func.__code__.co_freevars,
                         (c.cell_contents for c in serial.py_func.__closure__)))
        assert cells == {
            "with_masks": masks, "with_pruning": pruning, "with_selection": selection
        }
    for earlier, later in zip(CHAIN, CHAIN[1:]):
        assert all(a <= b for a, b in zip(flags[earlier], flags[later]))


K, N = 200, 68_000


@pytest.mark.parametrize(
    "masks, prune, have_rows, k, n_passages, largest, expected",
    [
        (None, False, True, K, 3, 5, "few"),  # a first call: a few short sources
        (None, False, True, K, 3, 2000, "few"),  # (no more passages than k)
        (None, False, True, K, N, K, "few"),  # (no list holds more than k entries)
        (None, False, True, K, N, K + 1, "summed"),
        (None, False, True, K, N, _MIN_MASK_ENTRIES - 1, "summed"),
        (None, False, True, K, N, _MIN_MASK_ENTRIES, "masked"),
        (True, False, True, K, 3, 5, "masked"),  # (forced: also when the lists are short)
        (False, False, True, K, N, 10**6, "summed"),
        (None, True, True, K, N, K + 1, "pruned"),
        (False, True, True, K, N, 10**6, "pruned"),
        (None, True, True, K, N, K, "few"),  # (nothing to prune: no more than k entries)
        (None, True, True, 1, 1, 2, "pruned"),  # (pruned by entries, not passages)
        (None, True, False, K, N, 10**6, "masked"),  # (no rows: no pruning)
        (None, False, True, 0, N, 0, "few"),
    ],
)
def test_the_variant_holds_the_paths_a_call_may_take(
    masks, prune, have_rows, k, n_passages, largest, expected
):
    assert walk_variants.kernel_variant(
        masks, prune, have_rows, k, n_passages, largest
    ) == expected


def _force(monkeypatch, name):
    monkeypatch.setattr(bag, "kernel_variant", lambda *args: name)


THREADS = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]


@settings(max_examples=60, deadline=None)
@given(
    case=retrieval_cases(),
    masks=st.sampled_from([None, True, False]),
    prune=st.booleans(),
    walk=st.sampled_from(["auto", "listed", "scan"]),
)
def test_every_variant_holding_a_calls_paths_gives_its_arrays(case, masks, prune, walk):
    passage_sets, queries, k, _ = case
    index, columns, weights, ranks, offsets = _arrays(passage_sets, queries)
    n_passages = len(passage_sets)
    expected = naive_top_candidates_in_order(
        *index.postings, index.rows, n_passages, columns, weights, ranks, offsets, k
    )
    chosen = []
    real = bag.kernel_variant
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(
            bag, "kernel_variant", lambda *args: chosen.append(real(*args)) or chosen[-1]
        )
        got = top_candidates(
            *index.postings, n_passages, columns, weights, offsets, k, term_ranks=ranks,
            rows=index.rows, masks=masks, prune=prune, walk=walk, check_cost=0.0,
        )
    _assert_same(got, expected)
    if not chosen:  # (no query, or k = 0: no kernel called)
        return
    for name in CHAIN[CHAIN.index(chosen[0]):]:
        for n_threads in THREADS:
            with pytest.MonkeyPatch.context() as monkeypatch:
                _force(monkeypatch, name)
                got = top_candidates(
                    *index.postings, n_passages, columns, weights, offsets, k,
                    term_ranks=ranks, rows=index.rows, masks=masks, prune=prune,
                    walk=walk, check_cost=0.0, return_held=True, n_threads=n_threads,
                )
            _assert_same(got[:4], expected)


def test_a_call_on_a_few_documents_takes_the_smallest_variant(monkeypatch):
    index, columns, weights, ranks, offsets = _arrays(
        [{0, 1}, {1, 2}, {0, 2, 3}], [[(0, 1.0, True), (2, 2.0, True), (5, 1.0, False)]]
    )
    chosen = []
    real = bag.kernel_variant
    monkeypatch.setattr(
        bag, "kernel_variant", lambda *args: chosen.append(real(*args)) or chosen[-1]
    )
    top_candidates(*index.postings, 3, columns, weights, offsets, 200, term_ranks=ranks,
                   rows=index.rows)
    top_candidates(*index.postings, 3, columns, weights, offsets, 1, term_ranks=ranks,
                   rows=index.rows)
    top_candidates(*index.postings, 3, columns, weights, offsets, 1, term_ranks=ranks,
                   rows=index.rows, masks=True)
    top_candidates(*index.postings, 3, columns, weights, offsets, 1, term_ranks=ranks,
                   rows=index.rows, prune=True)
    assert chosen == CHAIN


_FIRST_CALL_SCRIPT = r"""
import json
from citekit.pipeline import align_citations
from citekit.kernels import _retrieval_masks, _retrieval_select, _retrieval_walk

align_citations("Revenue grew 15% in 2024.", ["Revenue grew 15% in 2024."])
kernels = {
    "few": _retrieval_walk._top_candidates_few,
    "summed": _retrieval_walk._top_candidates_summed,
    "masked": _retrieval_walk._top_candidates_masked,
    "pruned": _retrieval_walk._top_candidates_pruned,
    "summed walk with selection": _retrieval_walk._summed_candidates,
    "pruned summed walk": _retrieval_walk._summed_pruned,
    "bitmask walk": _retrieval_masks._mask_candidates,
    "k-th best": _retrieval_select._kth_best,
    "heaviest first": _retrieval_select.heaviest_first,
}
# (a kernel's own signatures and those of its entry twin, which Python calls)
from citekit._jit import entry
print(json.dumps({
    name: len(set(kernel.signatures) | set(entry(kernel).signatures))
    for name, kernel in kernels.items()
}))
"""


def test_the_first_call_compiles_no_bitmask_pruning_or_selection_kernel():
    # a fresh process (this one's kernels may have compiled every variant); with a warm
    # disk cache the few variant loads, and a loaded kernel compiles no callee
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_CALL_SCRIPT], env=_compiling.child_environment(),
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert compiled.pop("few") == 1
    assert compiled == dict.fromkeys(compiled, 0)


def test_warmup_compiles_every_variant():
    bag.warmup()
    for serial, threaded in walk_variants.VARIANTS.values():
        assert entry(serial).signatures
        if numba.config.NUMBA_NUM_THREADS >= 2:
            assert entry(threaded).signatures  # (what Python calls: its entry twin)


def test_ranking_lists_of_terms_in_no_passage_and_of_no_term():
    pointers = np.zeros(1, dtype=np.int64)  # (an index of no column)
    n_terms, entries = walk_variants.ranking_lists(
        pointers, np.array([-1, -1], dtype=np.int64), np.array([True, False]),
        np.array([0, 2, 2], dtype=np.int64),
    )
    assert n_terms.tolist() == [0, 0] and entries.tolist() == [0, 0]
    assert n_terms.dtype == entries.dtype == np.int64
