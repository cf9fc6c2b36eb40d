"""citekit.kernels against the plain-Python references in tests/naive.py."""

import difflib
import random

import numpy as np
import pytest

import citekit.kernels as kernels
from citekit.kernels import (
    LocalAlignment,
    align_batch,
    align_pairs,
    lcs_length,
    matching_blocks,
    smith_waterman,
)
from citekit.kernels._batch import FLOAT_LANES_GROUP, INT_LANES, plan_ranges
from naive import (
    naive_band,
    naive_lcs_length,
    naive_matching_blocks,
    naive_smith_waterman,
)

SCORINGS = [(2, -1, -1), (1, -1, -1), (3, -2, -1), (5, -1, -3), (1, -1000, -1000)]
EMPTY = (0, 0, 0, 0, 0, 0, ())


def random_tokens(rng, max_length, alphabet, min_length=0):
    return [rng.randrange(alphabet) for _ in range(rng.randint(min_length, max_length))]


def as_tuple(alignment):
    return (
        alignment.score, alignment.query_start, alignment.query_end,
        alignment.target_start, alignment.target_end, alignment.matches, alignment.blocks,
    )


def pair_row(result, p):
    blocks = result.blocks[result.block_offsets[p]:result.block_offsets[p + 1]]
    return (
        int(result.score[p]), int(result.query_start[p]), int(result.query_end[p]),
        int(result.target_start[p]), int(result.target_end[p]), int(result.matches[p]),
        tuple(map(tuple, blocks.tolist())),
    )


def pack(sequences):
    ids = [token for sequence in sequences for token in sequence]
    offsets = np.cumsum([0] + [len(sequence) for sequence in sequences])
    return ids, offsets


def sw(query, target, scoring=(2, -1, -1), **options):
    return smith_waterman(query, target, match_score=scoring[0], mismatch_score=scoring[1],
                          gap_score=scoring[2], return_blocks=True, **options)


# --- Smith-Waterman: single pairs -------------------------------------------------------

def test_smith_waterman_equals_reference_on_random_inputs():
    rng = random.Random(1)
    for _ in range(1500):
        alphabet = rng.choice([1, 2, 3, 5, 20])
        query = random_tokens(rng, 14, alphabet)
        target = random_tokens(rng, 18, alphabet)
        scoring = rng.choice(SCORINGS)
        expected = naive_smith_waterman(query, target, *scoring)[:7]
        assert as_tuple(sw(query, target, scoring)) == expected, (query, target, scoring)


def test_long_inputs_use_score_pass_and_rectangle_traceback():
    # (n + m + 1) * (min + 1) > STORE_CELLS: a storage-free pass, then the rectangle
    rng = random.Random(11)
    for trial in range(6):
        alphabet = [2, 4, 50][trial % 3]
        query = random_tokens(rng, 190, alphabet, min_length=150)
        target = random_tokens(rng, 220, alphabet, min_length=150)
        if trial >= 3:  # plant a noisy copy so the alignment is long
            copy = [t if rng.random() > 0.1 else alphabet + 1 for t in query[20:140]]
            target[30:30 + len(copy)] = copy
        assert (len(query) + len(target) + 1) * (len(query) + 1) > kernels._sw.STORE_CELLS
        expected = naive_smith_waterman(query, target)[:7]
        assert as_tuple(sw(query, target)) == expected


def wide(query, target, scoring=(2, -1, -1), band_width=None, serial=True):
    """Alignment forced onto the two-word keys (the 64-bit limit lowered to 0)."""
    query = np.asarray(query, dtype=np.int64)
    target = np.asarray(target, dtype=np.int64)
    result = kernels._align_pairs_checked(
        query, np.array([0, len(query)]), target, np.array([0, len(target)]),
        np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), *scoring, band_width,
        True, serial=serial, key_bits_limit=0,
    )
    return pair_row(result, 0)


def test_two_word_keys_equal_the_reference_on_random_inputs():
    rng = random.Random(21)
    for _ in range(600):
        alphabet = rng.choice([1, 2, 3, 5, 20])
        query = random_tokens(rng, 12, alphabet)
        target = random_tokens(rng, 16, alphabet)
        scoring = rng.choice(SCORINGS)
        width = len(query) + len(target)  # a band holding every cell: the full DP
        expected = naive_smith_waterman(query, target, *scoring)[:7]
        assert wide(query, target, scoring, band_width=width) == expected, (query, target)
        assert wide(query, target, scoring, band_width=width, serial=False) == expected


def test_two_word_keys_equal_the_banded_reference():
    rng = random.Random(22)
    for _ in range(400):
        alphabet = rng.choice([2, 4, 30])
        query = random_tokens(rng, 12, alphabet)
        target = random_tokens(rng, 30, alphabet)
        width = rng.randrange(0, 5)
        band = naive_band(query, target, width)
        expected = EMPTY if band is None else naive_smith_waterman(
            query, target, 2, -1, -1, *band)[:7]
        assert wide(query, target, band_width=width) == expected
        assert wide(query, target, band_width=width) == as_tuple(sw(query, target,
                                                                    band_width=width))


def test_two_word_keys_equal_the_one_word_rectangle_traceback():
    # beyond STORE_CELLS the 64-bit kernel traces back on the optimal rectangle only
    rng = random.Random(23)
    for trial in range(4):
        alphabet = [2, 50][trial % 2]
        query = random_tokens(rng, 190, alphabet, min_length=150)
        target = random_tokens(rng, 220, alphabet, min_length=150)
        copy = [t if rng.random() > 0.1 else alphabet + 1 for t in query[20:140]]
        target[30:30 + len(copy)] = copy
        assert wide(query, target, band_width=500) == as_tuple(sw(query, target))


def test_inputs_too_long_for_one_word_keys_are_aligned_with_two():
    # 40,000 equal tokens need 65 bits in one word: once a ValueError
    long = np.zeros(40_000, dtype=np.int64)
    for band_width in (None, 50):
        got = smith_waterman(long, long, band_width=band_width, return_blocks=True)
        assert got == LocalAlignment(80_000, 0, 40_000, 0, 40_000, 40_000,
                                     ((0, 0, 40_000),))


def test_explicit_band_equals_banded_reference():
    rng = random.Random(2)
    for _ in range(800):
        alphabet = rng.choice([2, 4, 30])
        query = random_tokens(rng, 12, alphabet)
        target = random_tokens(rng, 30, alphabet)
        width = rng.randrange(0, 5)
        band = naive_band(query, target, width)
        got = sw(query, target, band_width=width)
        if band is None:
            assert as_tuple(got) == EMPTY
            continue
        assert as_tuple(got) == naive_smith_waterman(query, target, 2, -1, -1, *band)[:7]


def test_seeded_band_on_periodic_and_run_inputs_equals_the_reference():
    # positions taken as arithmetic progressions and runs: trapezoids of pairs
    from citekit.kernels._band import seeded_band

    rng = random.Random(24)
    for trial in range(600):
        period = rng.randint(1, 11)
        base = [rng.randrange(4) for _ in range(period)]
        query = (base * 12)[rng.randint(0, 3):rng.randint(4, 40)]
        target = (base * 12)[rng.randint(0, 5):rng.randint(6, 70)]
        for _ in range(rng.randint(0, 3)):
            query[rng.randrange(len(query))] = 9
            target[rng.randrange(len(target))] = rng.choice([9, 8])
        width = rng.randrange(0, 4)
        has_shared, diag_lo, diag_hi = seeded_band(np.array(query, dtype=np.int64),
                                                   np.array(target, dtype=np.int64), width)
        expected = naive_band(query, target, width)
        assert (bool(has_shared), (int(diag_lo), int(diag_hi))) == (
            expected is not None, expected or (0, 0)), (query, target, width)


def test_band_equals_full_dp_when_the_optimal_path_lies_inside():
    rng = random.Random(3)
    checked = 0
    for _ in range(600):
        alphabet = rng.choice([3, 10])
        query = random_tokens(rng, 10, alphabet, min_length=1)
        target = random_tokens(rng, 40, alphabet, min_length=1)
        width = rng.randrange(0, 4)
        band = naive_band(query, target, width)
        full = naive_smith_waterman(query, target)
        if band is None or not full[7]:
            continue
        if all(band[0] <= j - i <= band[1] for i, j in full[7]):
            checked += 1
            assert as_tuple(sw(query, target, band_width=width)) == full[:7]
    assert checked > 200


def test_automatic_band_above_the_cell_budget(monkeypatch):
    monkeypatch.setattr(kernels, "FULL_DP_CELL_BUDGET", 50)
    monkeypatch.setattr(kernels, "AUTO_BAND_WIDTH", 2)
    rng = random.Random(4)
    for _ in range(300):
        query = random_tokens(rng, 10, 4, min_length=3)
        target = random_tokens(rng, 30, 4, min_length=10)
        band = naive_band(query, target, 2)
        got = sw(query, target)
        expected = EMPTY if band is None else naive_smith_waterman(query, target, 2, -1, -1,
                                                                   *band)[:7]
        assert as_tuple(got) == expected


def test_exact_copy_is_found_at_its_first_occurrence():
    rng = np.random.default_rng(5)
    target = rng.integers(0, 1000, 5000)
    query = target[3000:3040].copy()
    target[4000:4040] = query  # a second, later copy
    got = smith_waterman(query, target, return_blocks=True)
    assert got == LocalAlignment(80, 0, 40, 3000, 3040, 40, ((0, 3000, 40),))


def test_long_target_full_and_banded_agree_on_a_planted_copy():
    rng = np.random.default_rng(6)
    query = rng.integers(0, 5000, 200)
    target = rng.integers(0, 5000, 20000)
    noisy = query.copy()
    noisy[5::17] = -1
    target[7000:7200] = noisy
    full = smith_waterman(query, target, return_blocks=True)
    banded = smith_waterman(query, target, band_width=8, return_blocks=True)
    assert full == banded
    assert (full.target_start, full.target_end) == (7000, 7200)
    assert full.matches == 200 - len(range(5, 200, 17))


def test_repetitive_input_above_the_budget_is_banded_and_exact():
    tokens = [7] * 2500
    got = smith_waterman(tokens, tokens, return_blocks=True)
    assert got == LocalAlignment(5000, 0, 2500, 0, 2500, 2500, ((0, 0, 2500),))


def test_empty_and_disjoint_inputs_give_the_empty_alignment():
    for query, target in [([], []), ([], [1]), ([1], []), ([1, 2], [3, 4])]:
        assert sw(query, target) == LocalAlignment(0, 0, 0, 0, 0, 0, ())
        assert smith_waterman(query, target).blocks is None


def test_accepted_input_types():
    expected = smith_waterman([1, 2, 3, 4], [0, 1, 2, 3, 4])
    for convert in (np.int32, np.int64, np.uint16, np.int8):
        assert smith_waterman(np.array([1, 2, 3, 4], dtype=convert),
                              np.array([0, 1, 2, 3, 4], dtype=convert)) == expected
    strided = np.array([1, 9, 2, 9, 3, 9, 4, 9])[::2]
    assert smith_waterman(strided, (0, 1, 2, 3, 4)) == expected
    extremes = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0]
    assert smith_waterman(extremes, extremes).matches == 3


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"query_ids": [1.0, 2.0]}, TypeError, "query_ids"),
        ({"target_ids": ["a", "b"]}, TypeError, "target_ids"),
        ({"query_ids": "abc"}, TypeError, "query_ids"),
        ({"query_ids": [[1, 2]]}, ValueError, "query_ids"),
        ({"query_ids": [True, False]}, TypeError, "query_ids"),
        ({"query_ids": [1, None]}, TypeError, "query_ids"),
        ({"query_ids": [2 ** 70]}, TypeError, "query_ids"),
        ({"band_width": -1}, ValueError, "band_width"),
        ({"band_width": 2.0}, TypeError, "band_width"),
        ({"band_width": True}, TypeError, "band_width"),
        ({"match_score": 0}, ValueError, "match_score"),
        ({"mismatch_score": 0}, ValueError, "mismatch_score"),
        ({"gap_score": 1}, ValueError, "gap_score"),
        ({"gap_score": -1001}, ValueError, "gap_score"),
        ({"return_blocks": 1}, TypeError, "return_blocks"),
    ],
)
def test_smith_waterman_rejects_bad_arguments(kwargs, error, name):
    arguments = {"query_ids": [1, 2], "target_ids": [1, 2], **kwargs}
    with pytest.raises(error, match=name):
        smith_waterman(**arguments)


def test_only_regions_beyond_two_words_are_refused():
    from citekit.kernels._sw_wide import wide_key_bits

    assert wide_key_bits(1 << 21, 1 << 21, 2, 1) <= kernels._sw.MAX_KEY_BITS
    assert wide_key_bits(1 << 31, 1 << 31, 1000, 1) > kernels._sw.MAX_KEY_BITS
    with pytest.raises(ValueError, match="even in two 64-bit words"):
        kernels._check_key_bits(wide_key_bits(1 << 31, 1 << 31, 1000, 1), "the inputs")


# --- batch drivers ------------------------------------------------------------------------

def test_align_pairs_equals_reference_across_lanes_and_single_pairs():
    rng = random.Random(7)
    queries = [random_tokens(rng, 12, 6) for _ in range(9)]
    targets = [random_tokens(rng, 30, 6) for _ in range(25)]
    targets.append([])
    query_ids, query_offsets = pack(queries)
    target_ids, target_offsets = pack(targets)
    pair_query = [rng.randrange(len(queries)) for _ in range(150)]
    pair_target = [rng.randrange(len(targets)) for _ in range(150)]
    for scoring in SCORINGS[:3]:
        result = align_pairs(query_ids, query_offsets, target_ids, target_offsets, pair_query,
                             pair_target, match_score=scoring[0], mismatch_score=scoring[1],
                             gap_score=scoring[2], return_blocks=True)
        for p in range(150):
            expected = naive_smith_waterman(queries[pair_query[p]], targets[pair_target[p]],
                                            *scoring)[:7]
            assert pair_row(result, p) == expected


@pytest.mark.parametrize(
    ("query_length", "target_length", "kind"),
    [(12, 30, FLOAT_LANES_GROUP), (60, 120, INT_LANES)],
)
def test_align_pairs_compares_whole_64_bit_ids_in_lanes(query_length, target_length, kind):
    # the lane kernels compare ids as two 32-bit halves: ids sharing one half (and the
    # int64 extremes, which move the padding token) must still match only when equal
    highs = [0, 1, -1, 0x7FFFFFFF, -0x80000000]
    lows = [0, 1, 0xFFFFFFFF, 0x80000000]
    pool = [int(np.uint64(((high << 32) | low) & 0xFFFFFFFFFFFFFFFF).astype(np.int64))
            for high in highs for low in lows]
    pool += [int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)]
    rng = random.Random(11)
    queries = [[rng.choice(pool) for _ in range(rng.randint(query_length // 2, query_length))]
               for _ in range(3)]
    targets = [[rng.choice(pool) for _ in range(rng.randint(1, target_length))]
               for _ in range(20)]
    targets += [list(query) for query in queries]  # exact copies
    query_ids, query_offsets = pack(queries)
    target_ids, target_offsets = pack(targets)
    pair_query = [q for q in range(len(queries)) for _ in range(len(targets))]
    pair_target = list(range(len(targets))) * len(queries)
    scoring = SCORINGS[0]
    _, _, kinds = plan_ranges(
        np.asarray(query_offsets), np.asarray(target_offsets[:-1]),
        np.asarray(target_offsets[1:]), np.asarray(pair_query), np.asarray(pair_target), -1,
        scoring[0], max(-scoring[1], -scoring[2]),
    )
    assert (kinds == kind).sum() >= len(queries)  # the lane kernel under test is used
    result = align_pairs(query_ids, query_offsets, target_ids, target_offsets, pair_query,
                         pair_target, match_score=scoring[0], mismatch_score=scoring[1],
                         gap_score=scoring[2], return_blocks=True)
    for p, (q, t) in enumerate(zip(pair_query, pair_target)):
        expected = naive_smith_waterman(queries[q], targets[t], *scoring)[:7]
        assert pair_row(result, p) == expected, (q, t)


def test_align_pairs_mixes_lane_groups_with_long_and_banded_pairs():
    rng = random.Random(8)
    queries = [random_tokens(rng, 40, 5, min_length=20), random_tokens(rng, 8, 5)]
    targets = [random_tokens(rng, 300, 5, min_length=200)] + [
        random_tokens(rng, 20, 5) for _ in range(11)
    ]
    query_ids, query_offsets = pack(queries)
    target_ids, target_offsets = pack(targets)
    pair_query = [0] * 12 + [1] * 12
    pair_target = list(range(12)) * 2
    result = align_pairs(query_ids, query_offsets, target_ids, target_offsets, pair_query,
                         pair_target, return_blocks=True)
    for p in range(24):
        single = sw(queries[pair_query[p]], targets[pair_target[p]])
        assert pair_row(result, p) == as_tuple(single)
    for width in (0, 3):
        banded = align_pairs(query_ids, query_offsets, target_ids, target_offsets, pair_query,
                             pair_target, band_width=width, return_blocks=True)
        for p in range(24):
            single = sw(queries[pair_query[p]], targets[pair_target[p]], band_width=width)
            assert pair_row(banded, p) == as_tuple(single)


def test_align_pairs_is_identical_on_one_and_two_threads():
    rng = np.random.default_rng(9)
    query_ids = rng.integers(0, 30, 600)
    query_offsets = np.arange(0, 601, 30)
    target_ids = rng.integers(0, 30, 4000)
    target_offsets = np.concatenate([[0], np.sort(rng.choice(np.arange(1, 4000), 99,
                                                             replace=False)), [4000]])
    pair_query = rng.integers(0, 20, 500)
    pair_target = rng.integers(0, 100, 500)
    arguments = (query_ids, query_offsets, target_ids, target_offsets, pair_query, pair_target)
    one = align_pairs(*arguments, return_blocks=True, n_threads=1)
    two = align_pairs(*arguments, return_blocks=True, n_threads=2)
    default = align_pairs(*arguments, return_blocks=True)
    for field in one._fields:
        assert np.array_equal(getattr(one, field), getattr(two, field)), field
        assert np.array_equal(getattr(one, field), getattr(default, field)), field


def test_align_pairs_output_shapes_and_dtypes():
    result = align_pairs([1, 2], [0, 2], [1, 2, 3], [0, 3], [0, 0], [0, 0])
    for field in result._fields[:6]:
        assert getattr(result, field).dtype == np.int64
        assert getattr(result, field).shape == (2,)
    assert result.block_offsets.shape == (0,) and result.blocks.shape == (0, 3)
    with_blocks = align_pairs([1, 2], [0, 2], [1, 2, 3], [0, 3], [0, 0], [0, 0],
                              return_blocks=True)
    assert with_blocks.block_offsets.tolist() == [0, 1, 2]
    assert with_blocks.blocks.tolist() == [[0, 0, 2], [0, 0, 2]]
    none = align_pairs([], [0], [], [0], [], [], return_blocks=True)
    assert none.score.shape == (0,) and none.block_offsets.tolist() == [0]


def test_align_batch_equals_single_calls():
    rng = random.Random(10)
    query = random_tokens(rng, 10, 5)
    targets = [random_tokens(rng, 20, 5) for _ in range(30)]
    target_ids, offsets = pack(targets)
    result = align_batch(query, target_ids, offsets, return_blocks=True)
    for k, target in enumerate(targets):
        assert pair_row(result, k) == as_tuple(sw(query, target))


@pytest.mark.parametrize(
    ("change", "error", "name"),
    [
        ({"query_offsets": [0, 3]}, ValueError, "query_offsets"),
        ({"query_offsets": [1, 2]}, ValueError, "query_offsets"),
        ({"query_offsets": []}, ValueError, "query_offsets"),
        ({"target_offsets": [0, 3, 2, 3]}, ValueError, "target_offsets"),
        ({"pair_query": [1]}, ValueError, "pair_query"),
        ({"pair_target": [-1]}, ValueError, "pair_target"),
        ({"pair_target": [0, 0]}, ValueError, "pair_query and pair_target"),
        ({"pair_query": [0.0]}, TypeError, "pair_query"),
        ({"n_threads": 0}, ValueError, "n_threads"),
        ({"n_threads": 10 ** 6}, ValueError, "n_threads"),
        ({"n_threads": 1.5}, TypeError, "n_threads"),
    ],
)
def test_align_pairs_rejects_bad_arguments(change, error, name):
    arguments = {
        "query_ids": [1, 2], "query_offsets": [0, 2], "target_ids": [1, 2, 3],
        "target_offsets": [0, 3], "pair_query": [0], "pair_target": [0], **change,
    }
    with pytest.raises(error, match=name):
        align_pairs(**arguments)


def test_align_batch_rejects_bad_offsets():
    with pytest.raises(ValueError, match="target_offsets"):
        align_batch([1], [1, 2], [0, 1])


# --- LCS and matching blocks --------------------------------------------------------------

def test_lcs_length_equals_reference():
    rng = random.Random(12)
    for _ in range(600):
        alphabet = rng.choice([1, 2, 3, 10, 1000])
        a = random_tokens(rng, rng.choice([10, 70, 200]), alphabet)
        b = random_tokens(rng, rng.choice([10, 70, 200]), alphabet)
        assert lcs_length(a, b) == naive_lcs_length(a, b), (a, b)


def test_lcs_length_equals_rapidfuzz_on_long_inputs():
    lcs_seq = pytest.importorskip("rapidfuzz.distance").LCSseq
    rng = np.random.default_rng(13)
    for size_a, size_b, alphabet in [(1000, 1300, 20), (3000, 2000, 500), (64, 5000, 3),
                                     (128, 128, 2), (65, 63, 2)]:
        a = rng.integers(-5, alphabet, size_a).tolist()
        b = rng.integers(-5, alphabet, size_b).tolist()
        assert lcs_length(a, b) == lcs_seq.similarity(a, b)


def test_matching_blocks_equal_difflib():
    rng = random.Random(14)
    for _ in range(1500):
        alphabet = rng.choice([1, 2, 3, 6, 50])
        a = random_tokens(rng, rng.choice([5, 30, 120]), alphabet)
        b = random_tokens(rng, rng.choice([5, 30, 120]), alphabet)
        assert matching_blocks(a, b) == naive_matching_blocks(a, b), (a, b)


def test_matching_blocks_equal_difflib_on_long_edited_copies():
    rng = np.random.default_rng(15)
    for alphabet in (5, 300, 100000):
        a = rng.integers(0, alphabet, 3000)
        b = a.copy()
        edits = rng.integers(0, 3000, 60)
        b[edits] = rng.integers(0, alphabet, 60)
        b = np.concatenate([b[:1000], rng.integers(0, alphabet, 50), b[1200:]])
        assert matching_blocks(a, b) == naive_matching_blocks(a.tolist(), b.tolist())


def test_longest_match_automaton_equals_difflib_on_random_ranges():
    from citekit.kernels._lcs import longest_match_automaton

    rng = random.Random(31)
    for _ in range(1500):
        alphabet = rng.choice([1, 2, 3, 5, 30])
        a = random_tokens(rng, 25, alphabet)
        b = random_tokens(rng, 25, alphabet)
        a_lo = rng.randint(0, len(a))
        a_hi = rng.randint(a_lo, len(a))
        b_lo = rng.randint(0, len(b))
        b_hi = rng.randint(b_lo, len(b))
        expected = difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(
            a_lo, a_hi, b_lo, b_hi)
        got = longest_match_automaton(np.array(a, dtype=np.int64), a_lo, a_hi,
                                      np.array(b, dtype=np.int64), b_lo, b_hi)
        assert tuple(map(int, got)) == tuple(expected), (a, b, a_lo, a_hi, b_lo, b_hi)


def test_matching_blocks_take_the_automaton_on_repetitive_inputs_and_equal_difflib():
    # a range whose pairs of equal tokens far outnumber its length takes the automaton
    rng = random.Random(32)
    for _ in range(6):
        period = rng.randint(1, 3)
        a = [k % period for k in range(rng.randint(200, 400))]
        b = [k % period for k in range(rng.randint(3000, 5000))]
        for _ in range(rng.randint(0, 8)):
            a[rng.randrange(len(a))] = 7
            b[rng.randrange(len(b))] = 7
        assert len(a) * len(b) // period > 8 * (len(a) + len(b)) + 4096
        assert matching_blocks(a, b) == naive_matching_blocks(a, b)


def test_lcs_and_matching_blocks_of_empty_inputs():
    assert lcs_length([], []) == 0 and lcs_length([1], []) == 0
    assert matching_blocks([], []) == [(0, 0, 0)]
    assert matching_blocks([1, 2], []) == [(2, 0, 0)]


@pytest.mark.parametrize("function", [lcs_length, matching_blocks])
def test_lcs_functions_reject_bad_arguments(function):
    with pytest.raises(TypeError, match="a must"):
        function([0.5], [1])
    with pytest.raises(ValueError, match="b must be one-dimensional"):
        function([1], np.zeros((2, 2), dtype=np.int64))


def test_warmup_runs():
    kernels.warmup()


def test_without_blocks_the_key_alone_gives_the_same_alignment():
    # return_blocks=False skips the traceback: start, end and matches come from the key
    rng = random.Random(16)
    queries = [random_tokens(rng, 12, 4) for _ in range(5)] + [random_tokens(rng, 150, 4, 120)]
    targets = [random_tokens(rng, 25, 4) for _ in range(20)] + [random_tokens(rng, 400, 4, 300)]
    query_ids, query_offsets = pack(queries)
    target_ids, target_offsets = pack(targets)
    pair_query = [rng.randrange(len(queries)) for _ in range(80)] + [5, 5]
    pair_target = [rng.randrange(len(targets)) for _ in range(80)] + [20, 3]
    for width in (None, 2):
        arguments = (query_ids, query_offsets, target_ids, target_offsets, pair_query,
                     pair_target)
        with_blocks = align_pairs(*arguments, band_width=width, return_blocks=True)
        without = align_pairs(*arguments, band_width=width)
        for field in with_blocks._fields[:6]:
            assert np.array_equal(getattr(with_blocks, field), getattr(without, field))
        for query, target in [(queries[5], targets[20]), (queries[0], targets[0])]:
            alignment = smith_waterman(query, target, band_width=width)
            assert alignment == sw(query, target, band_width=width)._replace(blocks=None)


def test_stable_argsort_equals_numpy_stable_argsort():
    from citekit.kernels._sort import stable_argsort

    rng = np.random.default_rng(17)
    for size in (0, 1, 2, 15, 16, 17, 33, 400, 5000):
        for high in (2, 1 << 40):
            values = rng.integers(-high, high, size)
            assert np.array_equal(stable_argsort(values), np.argsort(values, kind="stable"))


def test_int64_and_float32_lane_groups_both_equal_the_reference():
    from citekit.kernels._batch import FLOAT_LANES_GROUP, INT_LANES, SINGLE, plan_ranges

    rng = random.Random(18)
    # short pairs fit float32 keys; 50 x 100 pairs need int64 keys but are still lane-sized
    queries = [random_tokens(rng, 10, 5, 5), random_tokens(rng, 55, 5, 45),
               random_tokens(rng, 10, 5, 5)]
    targets = [random_tokens(rng, 20, 5, 5) for _ in range(20)] + [
        random_tokens(rng, 110, 5, 90) for _ in range(10)
    ]
    query_ids, query_offsets = pack(queries)
    target_ids, target_offsets = pack(targets)
    pair_query = [0] * 20 + [1] * 10 + [2]  # query 2 has a single pair
    pair_target = list(range(20)) + list(range(20, 30)) + [25]
    arrays = [np.asarray(a, dtype=np.int64) for a in (query_offsets, target_offsets,
                                                      pair_query, pair_target)]
    query_offsets_a, target_offsets_a, pair_query_a, pair_target_a = arrays
    kinds = set(plan_ranges(query_offsets_a, target_offsets_a[:-1], target_offsets_a[1:],
                            pair_query_a, pair_target_a, -1, 2, 1)[2].tolist())
    assert {FLOAT_LANES_GROUP, INT_LANES, SINGLE} <= kinds
    result = align_pairs(query_ids, query_offsets, target_ids, target_offsets, pair_query,
                         pair_target, return_blocks=True)
    for p in range(len(pair_query)):
        expected = naive_smith_waterman(queries[pair_query[p]], targets[pair_target[p]])[:7]
        assert pair_row(result, p) == expected
