"""The variants of the pair drivers (citekit.kernels._batch.WORKERS, PAIRS_KERNELS).

The plan picks the variant a call needs (lane groups; band seeding or two-word keys); a
variant compiles only the paths its switches allow. Every variant that covers a plan must
give exactly the rows and blocks of the full one and of the reference, and a variant that
does not cover it must refuse rather than align differently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from citekit.kernels import AUTO_BAND_WIDTH, FULL_DP_CELL_BUDGET, _align_pairs_checked, _driver
from citekit.kernels._batch import (
    PAIRS_KERNELS,
    SINGLE,
    WITH_BAND,
    WITH_LANES,
    WORKERS,
    compact_blocks,
    prepare_pairs,
)
from citekit.kernels._sw import MAX_KEY_BITS, needs_band_or_wide_keys
from naive import naive_band, naive_needs_band_or_wide_keys, naive_smith_waterman

SCORES = (2, -1, -1)


def pack(sequences):
    ids = np.array([token for sequence in sequences for token in sequence], dtype=np.int64)
    offsets = np.zeros(len(sequences) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(sequence) for sequence in sequences])
    return ids, offsets


def plan(queries, targets, pair_query, pair_target, band_width=None,
         key_bits_limit=MAX_KEY_BITS):
    """The packed inputs and the plan of prepare_pairs."""
    query_ids, query_offsets = pack(queries)
    target_ids, target_offsets = pack(targets)
    pair_query = np.array(pair_query, dtype=np.int64)
    pair_target = np.array(pair_target, dtype=np.int64)
    band = -1 if band_width is None else band_width
    (error, _, _, scratch_offsets, order, item_offsets, item_kind,
     variant) = prepare_pairs(
        query_offsets, len(query_ids), target_offsets, len(target_ids), pair_query,
        pair_target, band, FULL_DP_CELL_BUDGET, AUTO_BAND_WIDTH, SCORES[0],
        max(-SCORES[1], -SCORES[2]), key_bits_limit,
    )
    assert error == 0
    inputs = (query_ids, query_offsets, target_ids, target_offsets, pair_query, pair_target,
              band, scratch_offsets, order, item_offsets, item_kind, key_bits_limit)
    return inputs, variant


def run_variant(inputs, variant, parallel=False):
    """Rows and blocks of every pair aligned by driver ``variant`` (serial, or the
    parallel kernel on two workers)."""
    (query_ids, query_offsets, target_ids, target_offsets, pair_query, pair_target, band,
     scratch_offsets, order, item_offsets, item_kind, key_bits_limit) = inputs
    n_pairs = len(pair_query)
    rows = np.zeros((6, n_pairs), dtype=np.int64)
    block_counts = np.zeros(n_pairs, dtype=np.int64)
    block_scratch = np.empty((scratch_offsets[-1], 3), dtype=np.int64)
    arguments = (
        order, item_offsets, item_kind, query_ids, query_offsets, target_ids,
        target_offsets[:-1], target_offsets[1:], pair_query, pair_target, band,
        FULL_DP_CELL_BUDGET, AUTO_BAND_WIDTH, *SCORES, scratch_offsets, rows, block_counts,
        block_scratch, True, key_bits_limit,
    )
    if parallel:
        PAIRS_KERNELS[variant](2, *arguments)
    else:
        WORKERS[variant](0, 1, *arguments)
    block_offsets, blocks = compact_blocks(scratch_offsets, block_counts, block_scratch)
    return rows.tolist(), [
        [tuple(block) for block in blocks[block_offsets[p]:block_offsets[p + 1]].tolist()]
        for p in range(n_pairs)
    ]


def covering(variant):
    """The variants that include every path of ``variant``."""
    return [v for v in range(len(WORKERS)) if v & variant == variant]


def reference(queries, targets, pair_query, pair_target, band_width=None):
    rows = [[] for _ in range(6)]
    blocks = []
    for q, t in zip(pair_query, pair_target):
        query, target = queries[q], targets[t]
        band = None if band_width is None else naive_band(query, target, band_width)
        if band_width is not None and (band is None or not query or not target):
            result = (0, 0, 0, 0, 0, 0, ())
        else:
            result = naive_smith_waterman(query, target, *SCORES, *(band or ()))
        for c, value in enumerate(result[:6]):
            rows[c].append(value)
        blocks.append(list(result[6]))
    return rows, blocks


def random_case(rng, n_queries, n_targets, max_length, alphabet=4):
    queries = [rng.integers(0, alphabet, rng.integers(0, max_length)).tolist()
               for _ in range(n_queries)]
    targets = [rng.integers(0, alphabet, rng.integers(0, max_length)).tolist()
               for _ in range(n_targets)]
    pair_query = rng.integers(0, n_queries, 3 * n_queries).tolist()
    pair_target = rng.integers(0, n_targets, 3 * n_queries).tolist()
    return queries, targets, pair_query, pair_target


def test_the_variant_names_and_bits_agree():
    # (a band takes the variant with lanes too: three variants)
    assert [kernel.__name__ for kernel in WORKERS] == [
        "align_worker", "align_worker_lanes", "align_worker_lanes_band",
        "align_worker_lanes_band"]
    assert [kernel.__name__ for kernel in PAIRS_KERNELS] == [
        "align_pairs_kernel", "align_pairs_kernel_lanes", "align_pairs_kernel_lanes_band",
        "align_pairs_kernel_lanes_band"]
    assert WORKERS[WITH_LANES].__name__ == "align_worker_lanes"
    assert WORKERS[WITH_BAND] is WORKERS[WITH_LANES | WITH_BAND]


@pytest.mark.parametrize(
    "pairs, options, expected",
    [
        (([0], [0]), {}, 0),  # one short pair: full DP, 64-bit keys
        (([0, 0], [0, 1]), {}, WITH_LANES),  # two small pairs of one query: a lane group
        (([0], [0]), {"band_width": 1}, WITH_BAND),
        (([0], [0]), {"key_bits_limit": 4}, WITH_BAND),  # keys of two words
        (([0, 0, 1], [0, 1, 0]), {"key_bits_limit": 4}, WITH_LANES | WITH_BAND),
        (([], []), {}, 0),
    ],
)
def test_the_plan_names_the_variant_its_pairs_need(pairs, options, expected):
    queries = [[1, 2, 3], [4, 1, 2, 3]]
    targets = [[1, 2, 3, 4], [3, 1, 2, 3]]
    _, variant = plan(queries, targets, *pairs, **options)
    assert variant == expected


def test_needs_band_or_wide_keys_equals_the_reference():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        n, m = (int(x) for x in rng.integers(0, 3000, 2))
        if rng.random() < 0.1:
            n = 0
        band_width = int(rng.choice([-1, -1, 0, 5]))
        budget = int(rng.choice([FULL_DP_CELL_BUDGET, 1 << 10, 0]))
        match_score = int(rng.integers(1, 1001))
        max_penalty = int(rng.integers(1, 1001))
        limit = int(rng.choice([MAX_KEY_BITS, 30, 20, 0]))
        expected = naive_needs_band_or_wide_keys(n, m, band_width, budget, match_score,
                                                 max_penalty, limit)
        got = needs_band_or_wide_keys(n, m, band_width, budget, AUTO_BAND_WIDTH,
                                      match_score, max_penalty, limit)
        assert got == expected, (n, m, band_width, budget, match_score, max_penalty, limit)


def test_empty_pairs_need_no_band_even_with_an_explicit_band():
    _, variant = plan([[], [1, 2]], [[1, 2], []], [0, 1], [0, 1], band_width=2)
    assert variant == 0


def test_a_pair_above_the_cell_budget_needs_the_band_variant():
    long_target = list(range(3000))
    _, variant = plan([list(range(2000))], [long_target], [0], [0])
    assert variant == WITH_BAND


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "options",
    [{}, {"band_width": 2}, {"key_bits_limit": 0}, {"band_width": 3, "key_bits_limit": 0}],
    ids=["full-dp", "band", "two-word-keys", "band-and-two-word-keys"],
)
def test_every_covering_variant_gives_the_reference_alignments(seed, options):
    rng = np.random.default_rng(seed)
    queries, targets, pair_query, pair_target = random_case(rng, 6, 8, 24)
    inputs, variant = plan(queries, targets, pair_query, pair_target, **options)
    expected = reference(queries, targets, pair_query, pair_target,
                         band_width=options.get("band_width"))
    for chosen in covering(variant):
        for parallel in (False, True):
            assert run_variant(inputs, chosen, parallel) == expected, (chosen, parallel)


def test_lane_groups_of_both_key_types_give_the_reference_in_every_lane_variant():
    rng = np.random.default_rng(7)
    # short pairs fit float32 lane keys; 50 x 100 pairs need int64 keys, still lane-sized
    queries = [rng.integers(0, 5, 12).tolist(), rng.integers(0, 5, 50).tolist()]
    targets = [rng.integers(0, 5, length).tolist() for length in (20, 25, 30, 100, 90, 95)]
    pair_query = [0, 0, 0, 1, 1, 1]
    pair_target = [0, 1, 2, 3, 4, 5]
    inputs, variant = plan(queries, targets, pair_query, pair_target)
    assert variant == WITH_LANES
    assert len({int(kind) for kind in inputs[10]} - {SINGLE}) == 2  # both lane kinds
    expected = reference(queries, targets, pair_query, pair_target)
    for chosen in covering(variant):
        assert run_variant(inputs, chosen) == expected


@pytest.mark.parametrize(
    "pairs, options, lacking",
    [
        (([0, 0], [0, 1]), {}, [0]),
        (([0], [0]), {"band_width": 1}, [0, WITH_LANES]),
        (([0], [0]), {"key_bits_limit": 4}, [0, WITH_LANES]),
    ],
)
def test_a_variant_without_a_needed_path_refuses(pairs, options, lacking):
    inputs, variant = plan([[1, 2, 3]], [[1, 2, 3, 4], [3, 1, 2, 3]], *pairs, **options)
    for chosen in lacking:
        assert WORKERS[chosen] is not WORKERS[variant]
        with pytest.raises(RuntimeError, match="internal error"):
            run_variant(inputs, chosen)


def test_the_public_driver_uses_the_plan_variant_on_every_path():
    # align_pairs (through _align_pairs_checked) on inputs of each variant, serial and on
    # threads, equals the reference
    rng = np.random.default_rng(11)
    queries, targets, pair_query, pair_target = random_case(rng, 5, 6, 20)
    for band_width, key_bits_limit in ((None, MAX_KEY_BITS), (2, MAX_KEY_BITS), (None, 0)):
        expected = reference(queries, targets, pair_query, pair_target, band_width)
        for serial in (True, False):
            result = _align_pairs_checked(
                *pack(queries), *pack(targets), np.array(pair_query, dtype=np.int64),
                np.array(pair_target, dtype=np.int64), *SCORES, band_width, True,
                serial=serial, key_bits_limit=key_bits_limit,
            )
            rows = [result.score, result.query_start, result.query_end, result.target_start,
                    result.target_end, result.matches]
            assert [row.tolist() for row in rows] == expected[0]
            blocks = [
                [tuple(b) for b in result.blocks[result.block_offsets[p]:
                                                 result.block_offsets[p + 1]].tolist()]
                for p in range(len(pair_query))
            ]
            assert blocks == expected[1]


_COMPILED_SCRIPT = r"""
import json
import numba.core.event as ev
from citekit.kernels import align_pairs, smith_waterman

def compiled(call):
    with ev.install_recorder("numba:compile") as recorder:
        call()
    return sorted({event.data["dispatcher"].py_func.__qualname__
                   for _, event in recorder.buffer if event.status == ev.EventStatus.START})

single = compiled(lambda: smith_waterman([1, 2, 3], [3, 1, 2, 3], return_blocks=True))
lanes = compiled(lambda: align_pairs([1, 2, 3], [0, 3], [1, 2, 3, 3, 1, 2], [0, 3, 6],
                                     [0, 0], [0, 1], return_blocks=True, n_threads=1))
print(json.dumps([single, lanes]))
"""


@pytest.mark.slow
def test_a_variant_compiles_only_the_paths_it_includes(tmp_path):
    # in a fresh process with an empty cache: a single short pair compiles neither the lane
    # kernels nor band seeding nor two-word keys; a lane group then compiles the lane
    # kernels, still without band seeding or two-word keys
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    env["CITEKIT_COMPILE_PROCESSES"] = "1"
    env.pop("CITEKIT_NUMBA_CACHE", None)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", _COMPILED_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=900, check=True)
    single, lanes = json.loads(done.stdout.strip().splitlines()[-1])
    lane_kernels = {"_make_align_lanes.<locals>.align_lanes", "_make_lane_rows.<locals>.lane_rows"}
    band_kernels = {"seeded_band", "_diagonal_counts", "align_region_wide", "align_one"}
    assert "align_worker" in single and "align_one_full_dp" in single
    assert not (lane_kernels | band_kernels) & set(single)
    assert "align_worker_lanes" in lanes and lane_kernels <= set(lanes)
    assert not band_kernels & set(lanes)


class _Kernel:
    """A stand-in for a numba dispatcher: its compiled (or loaded) signatures."""

    def __init__(self, *signatures):
        self.signatures = list(signatures)


def test_the_driver_reuses_a_compiled_variant_that_covers_the_plan():
    plain, lanes, full = _Kernel(), _Kernel("sig"), _Kernel()
    kernels = (plain, lanes, full, full)
    assert _driver(kernels, 0) is lanes  # (plain not compiled: the compiled lanes cover it)
    assert _driver(kernels, WITH_LANES) is lanes
    assert _driver(kernels, WITH_BAND) is full  # (nothing compiled covers it: compile it)
    plain.signatures.append("sig")
    assert _driver(kernels, 0) is plain  # (its own variant first)
    assert _driver(kernels, 0, exact_variant=True) is plain
    plain.signatures.clear()
    assert _driver(kernels, 0, exact_variant=True) is plain  # (the warm-up's choice)
    assert _driver((len, len), 1) is len  # (plain functions under NUMBA_DISABLE_JIT)


_WARMUP_SCRIPT = r"""
import json
import numba
from citekit.kernels import smith_waterman, warmup
from citekit.kernels._batch import PAIRS_KERNELS, WORKERS
# (a call that takes the variant with every path first: later calls may reuse it, the
# warm-up must not)
smith_waterman([1, 2, 3], [3, 1, 2, 3], band_width=1)
warmup()
# (on one thread the parallel drivers never run, so the warm-up leaves them alone)
kernels = WORKERS + (PAIRS_KERNELS if numba.get_num_threads() > 1 else ())
from citekit._jit import entry
print(json.dumps(sorted({kernel.__name__ for kernel in kernels if not entry(kernel).signatures})))
"""


def test_warmup_compiles_or_loads_every_variant():
    # in a fresh process (the variants' cache shared with the other tests): whatever order
    # warmup runs them in, none is left for a later call to compile
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    env["CITEKIT_COMPILE_PROCESSES"] = "1"
    done = subprocess.run([sys.executable, "-c", _WARMUP_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=900, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
