"""citekit.kernels against the references in tests/naive.py."""

import random

import numpy as np
import pytest

from citekit.kernels import (
    align_batch,
    align_pairs,
    lcs_length,
    matching_blocks,
    smith_waterman,
)
from naive import (
    naive_band,
    naive_lcs_length,
    naive_matching_blocks,
    naive_smith_waterman,
)

SCORINGS = [(2, -1, -1), (1, -1, -1), (3, -2, -1), (5, -1, -3)]


def random_tokens(rng, max_length, alphabet):
    return [rng.randrange(alphabet) for _ in range(rng.randrange(max_length + 1))]


def as_tuple(alignment):
    return (
        alignment.score, alignment.query_start, alignment.query_end,
        alignment.target_start, alignment.target_end, alignment.matches, alignment.blocks,
    )


def test_smith_waterman_equals_reference_on_random_inputs():
    rng = random.Random(1)
    for trial in range(1500):
        alphabet = rng.choice([2, 3, 5, 20])
        query = random_tokens(rng, 14, alphabet)
        target = random_tokens(rng, 18, alphabet)
        scoring = rng.choice(SCORINGS)
        expected = naive_smith_waterman(query, target, *scoring)[:7]
        got = smith_waterman(query, target, match_score=scoring[0], mismatch_score=scoring[1],
                             gap_score=scoring[2], return_blocks=True)
        assert as_tuple(got) == expected, (query, target, scoring)


def test_banded_equals_banded_reference():
    rng = random.Random(2)
    for trial in range(800):
        alphabet = rng.choice([2, 4, 30])
        query = random_tokens(rng, 12, alphabet)
        target = random_tokens(rng, 30, alphabet)
        width = rng.randrange(0, 5)
        band = naive_band(query, target, width)
        got = smith_waterman(query, target, band_width=width, return_blocks=True)
        if band is None:
            assert as_tuple(got) == (0, 0, 0, 0, 0, 0, ())
            continue
        expected = naive_smith_waterman(query, target, 2, -1, -1, *band)[:7]
        assert as_tuple(got) == expected, (query, target, width)


def test_lcs_length_equals_reference():
    rng = random.Random(3)
    for trial in range(600):
        alphabet = rng.choice([2, 3, 10, 1000])
        a = random_tokens(rng, rng.choice([10, 70, 200]), alphabet)
        b = random_tokens(rng, rng.choice([10, 70, 200]), alphabet)
        assert lcs_length(a, b) == naive_lcs_length(a, b), (a, b)


def test_matching_blocks_equal_difflib():
    rng = random.Random(4)
    for trial in range(1500):
        alphabet = rng.choice([1, 2, 3, 6, 50])
        a = random_tokens(rng, rng.choice([5, 30, 120]), alphabet)
        b = random_tokens(rng, rng.choice([5, 30, 120]), alphabet)
        assert matching_blocks(a, b) == naive_matching_blocks(a, b), (a, b)


def test_align_pairs_rows_equal_single_calls():
    rng = random.Random(5)
    queries = [random_tokens(rng, 10, 6) for _ in range(7)]
    targets = [random_tokens(rng, 25, 6) for _ in range(9)]
    query_offsets = np.cumsum([0] + [len(q) for q in queries])
    target_offsets = np.cumsum([0] + [len(t) for t in targets])
    pair_query = [rng.randrange(7) for _ in range(40)]
    pair_target = [rng.randrange(9) for _ in range(40)]
    result = align_pairs(sum(queries, []), query_offsets, sum(targets, []), target_offsets,
                         pair_query, pair_target, return_blocks=True)
    for p in range(40):
        single = smith_waterman(queries[pair_query[p]], targets[pair_target[p]], return_blocks=True)
        blocks = result.blocks[result.block_offsets[p]:result.block_offsets[p + 1]]
        row = (result.score[p], result.query_start[p], result.query_end[p],
               result.target_start[p], result.target_end[p], result.matches[p],
               tuple(map(tuple, blocks.tolist())))
        assert row == as_tuple(single)


def test_align_batch_equals_single_calls():
    rng = random.Random(6)
    query = random_tokens(rng, 10, 5)
    targets = [random_tokens(rng, 20, 5) for _ in range(12)]
    offsets = np.cumsum([0] + [len(t) for t in targets])
    result = align_batch(query, sum(targets, []), offsets)
    for k, target in enumerate(targets):
        assert result.score[k] == smith_waterman(query, target).score
