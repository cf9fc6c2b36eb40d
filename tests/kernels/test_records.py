"""The batched records kernels (citekit.kernels._evidence.records_batch, contested_coverage)
against their references in naive.py."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._evidence import (
    FACT_BLOCK_HI,
    FACT_BLOCK_LO,
    FACT_CHAR_END,
    FACT_CHAR_START,
    FACT_SOURCE,
    FACT_TOKEN_HI,
    FACT_TOKEN_LO,
    N_FACTS,
    RECORD_CHECK_VALUES,
    RECORD_CANDIDATE,
    RECORD_SHOWN,
    _has_value_region,
    records_batch,
)
from citekit.kernels._coverage import contested_coverage
from naive import (
    naive_contested_coverage,
    naive_records,
    naive_value_regions,
)

# the corpus the fake passages lie in: token t spans characters [3t, 3t + 2)
N_CORPUS_TOKENS = 40
TOKEN_STARTS = np.arange(N_CORPUS_TOKENS, dtype=np.int64) * 3
TOKEN_ENDS = TOKEN_STARTS + 2


@st.composite
def alignment_blocks(draw, n_answer, n_source, min_length=1):
    """Ascending, non-overlapping (query_pos, target_pos, length) blocks."""
    blocks, q, t = [], 0, 0
    for _ in range(draw(st.integers(0, 4))):
        q += draw(st.integers(0, 2))
        t += draw(st.integers(0, 2))
        room = min(n_answer - q, n_source - t)
        if room < max(min_length, 1):
            break
        length = draw(st.integers(min_length, min(room, 3)))
        blocks.append((q, t, length))
        q, t = q + max(length, 1), t + max(length, 1)
    return blocks


@st.composite
def sentence_cases(draw):
    n_tokens = draw(st.integers(0, 8))
    n_rows = draw(st.integers(0, 6))
    starts, position = [], 0
    for _ in range(n_tokens):
        position += draw(st.integers(0, 3))
        starts.append(position)
        position += draw(st.integers(1, 4))
    ends = [s + 1 for s in starts]
    rows = []
    for _ in range(n_rows):
        token_lo = draw(st.integers(0, N_CORPUS_TOKENS - 1))
        n_source = draw(st.integers(1, N_CORPUS_TOKENS - token_lo))
        blocks = draw(alignment_blocks(n_tokens, n_source))
        whole = (draw(st.integers(0, 50)), draw(st.integers(50, 120)))
        rows.append((token_lo, n_source, blocks, whole))
    return {
        "covers": [draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
                   for _ in range(n_rows)],
        "n_pool": draw(st.integers(0, n_rows)),
        "chosen": draw(st.lists(st.integers(0, n_rows - 1), max_size=4)) if n_rows else [],
        "weights": draw(st.lists(st.sampled_from([0.0, 0.25, 1.0, 2.0]), min_size=n_tokens,
                                 max_size=n_tokens)),
        "content": draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens)),
        "values": draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens)),
        "starts": starts,
        "ends": ends,
        "source": draw(st.lists(st.integers(0, 3), min_size=n_rows, max_size=n_rows)),
        "uncovered_ok": draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)),
        "aligned_content": draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]),
                                         min_size=n_rows, max_size=n_rows)),
        "token_lo": [r[0] for r in rows],
        "n_source": [r[1] for r in rows],
        "blocks": [r[2] for r in rows],
        "whole": [r[3] for r in rows],
    }


def _kernel_inputs(sentences):
    """The batch's flat arrays, laid out as the pipeline lays them out."""
    covers, cover_offsets, judged_offsets, query_offsets = [], [], [0], [0]
    chosen, chosen_offsets, blocks, facts = [], [0], [], []
    flat = {name: [] for name in ("weights", "content", "values", "starts", "ends",
                                  "uncovered_ok", "aligned_content")}
    for s in sentences:
        cover_offsets.append(len(covers))
        for row in s["covers"]:
            covers.extend(row)
        judged_offsets.append(judged_offsets[-1] + len(s["covers"]))
        query_offsets.append(query_offsets[-1] + len(s["weights"]))
        chosen.extend(s["chosen"])
        chosen_offsets.append(len(chosen))
        for name in ("weights", "content", "values", "starts", "ends"):
            flat[name].extend(s[name])
        for r in range(len(s["covers"])):
            flat["uncovered_ok"].append(s["uncovered_ok"][r])
            flat["aligned_content"].append(s["aligned_content"][r])
            block_lo = len(blocks)
            blocks.extend(s["blocks"][r])
            token_lo = s["token_lo"][r]
            column = [0] * N_FACTS
            column[FACT_SOURCE] = s["source"][r]
            column[FACT_BLOCK_LO], column[FACT_BLOCK_HI] = block_lo, len(blocks)
            column[FACT_TOKEN_LO] = token_lo
            column[FACT_TOKEN_HI] = token_lo + s["n_source"][r]
            column[FACT_CHAR_START], column[FACT_CHAR_END] = s["whole"][r]
            facts.append(column)
    return (
        np.array(covers, dtype=np.bool_),
        np.array(cover_offsets, dtype=np.int64),
        np.array(judged_offsets, dtype=np.int64),
        np.array([s["n_pool"] for s in sentences], dtype=np.int64),
        np.array(chosen, dtype=np.int64),
        np.array(chosen_offsets, dtype=np.int64),
        np.array(query_offsets, dtype=np.int64),
        np.array(flat["starts"], dtype=np.int64),
        np.array(flat["ends"], dtype=np.int64),
        np.array(flat["weights"], dtype=np.float64),
        np.array(flat["content"], dtype=np.bool_),
        np.array(flat["values"], dtype=np.bool_),
        np.ascontiguousarray(np.array(facts, dtype=np.int64).reshape(-1, N_FACTS).T),
        np.array(flat["uncovered_ok"], dtype=np.bool_),
        np.array(flat["aligned_content"], dtype=np.float64),
        np.array(blocks, dtype=np.int64).reshape(-1, 3),
        TOKEN_STARTS,
        TOKEN_ENDS,
    )


def _records(sentences, top_k, max_per_source, multi_span, merge_gap, max_spans):
    """records_batch's outputs regrouped per sentence as naive_records gives them."""
    (rec_offsets, rec_rows, rec_flags, rec_answer, coverage, run_offsets, runs, span_offsets,
     spans) = records_batch(*_kernel_inputs(sentences), top_k, max_per_source, multi_span,
                            merge_gap, max_spans)
    out = []
    for q in range(len(sentences)):
        lo, hi = rec_offsets[q], rec_offsets[q + 1]
        out.append((
            rec_rows[lo:hi].tolist(),
            [bool(f & RECORD_SHOWN) for f in rec_flags[lo:hi]],
            [bool(f & RECORD_CHECK_VALUES) for f in rec_flags[lo:hi]],
            float(coverage[q]),
            [tuple(r) for r in runs[run_offsets[q]:run_offsets[q + 1]].tolist()],
            [[tuple(x) for x in spans[span_offsets[i]:span_offsets[i + 1]].tolist()]
             for i in range(lo, hi)],
            [bool(f & RECORD_CANDIDATE) for f in rec_flags[lo:hi]],
        ))
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(sentence_cases(), max_size=4),
    st.integers(0, 4),
    st.integers(1, 3),
    st.booleans(),
    st.integers(0, 6),
    st.integers(1, 3),
)
def test_records_batch_matches_reference(sentences, top_k, max_per_source, multi_span,
                                         merge_gap, max_spans):
    got = _records(sentences, top_k, max_per_source, multi_span, merge_gap, max_spans)
    expected = naive_records(sentences, top_k, max_per_source, multi_span, merge_gap,
                             max_spans, TOKEN_STARTS.tolist(), TOKEN_ENDS.tolist())
    assert got == expected


def _one_sentence(**changes):
    """A sentence of four tokens (the third a value) and two rows of one source."""
    sentence = {
        "covers": [[True, True, False, False], [False, False, True, True]],
        "n_pool": 2, "chosen": [0, 1],
        "weights": [1.0, 1.0, 2.0, 0.25], "content": [True, True, True, False],
        "values": [False, False, True, False],
        "starts": [0, 5, 10, 15], "ends": [4, 9, 14, 19],
        "source": [0, 1], "uncovered_ok": [False, False], "aligned_content": [2.0, 2.0],
        "token_lo": [0, 10], "n_source": [6, 6],
        "blocks": [[(0, 0, 2), (3, 3, 1)], [(2, 2, 2)]],
        "whole": [(0, 11), (30, 38)],
    }
    sentence.update(changes)
    return sentence


def test_records_batch_a_sentence_by_hand():
    [(rows, shown, check, coverage, runs, spans, _)] = _records(
        [_one_sentence()], top_k=3, max_per_source=2, multi_span=True, merge_gap=0,
        max_spans=3)
    assert rows == [0, 1] and shown == [True, True]
    # row 0 leaves the value (token 2) between its blocks: checked; row 1 matched it
    assert check == [True, False]
    assert coverage == 1.0 and runs == []
    # row 0's blocks are corpus tokens 0-1 and 3, 4 characters apart: two spans
    assert spans == [[(0, 5), (9, 11)], [(30, 38)]]


def test_records_batch_uncovered_runs_and_limits():
    # only row 0 (one source): the value and the stop word after it stay uncovered
    [(rows, shown, check, coverage, runs, spans, _)] = _records(
        [_one_sentence(source=[0, 0])], top_k=1, max_per_source=1, multi_span=True,
        merge_gap=5, max_spans=3)
    assert rows == [0] and shown == [True] and check == [True]
    assert coverage == 2.0 / 4.25
    assert runs == [(10, 14)]
    # blocks 4 characters apart merge with a gap of 4 or more, not 3
    assert spans == [[(0, 11)]]
    for gap, expected in ((3, [(0, 5), (9, 11)]), (4, [(0, 11)])):
        [(*_, spans, _)] = _records([_one_sentence()], 3, 2, True, gap, 3)
        assert spans[0] == expected
    # no multi-span evidence: the whole aligned range
    [(*_, spans, _)] = _records([_one_sentence()], 3, 2, False, 0, 3)
    assert spans == [[(0, 11)], [(30, 38)]]
    # more spans than allowed: the whole aligned range
    [(*_, spans, _)] = _records([_one_sentence()], 3, 2, True, 0, 1)
    assert spans[0] == [(0, 11)]


def test_records_batch_candidates_for_conflicts():
    # row 1 matched only what row 0 did: not shown, but a candidate (its conflicts may
    # show it) with its spans; the coverage is row 0's alone
    sentence = _one_sentence(
        covers=[[True, True, False, False], [True, True, False, False]],
        blocks=[[(0, 0, 2)], [(0, 2, 2)]], whole=[(0, 9), (30, 38)],
    )
    [(rows, shown, check, coverage, runs, spans, candidate)] = _records(
        [sentence], 3, 2, False, 0, 3)
    assert rows == [0, 1] and shown == [True, False] and candidate == [False, True]
    assert coverage == 2.0 / 4.25 and spans == [[(0, 9)], [(30, 38)]]
    # no free slot: no candidate; a row covering no content token is none either
    [(rows, _, _, _, _, _, candidate)] = _records([sentence], 1, 2, False, 0, 3)
    assert rows == [0] and candidate == [False]
    sentence["covers"][1] = [False, False, False, True]
    [(rows, *_)] = _records([sentence], 3, 2, False, 0, 3)
    assert rows == [0]
    # an embedding-only row is shown as such, never a candidate
    sentence["covers"][1] = [True, True, False, False]
    sentence["uncovered_ok"] = [False, True]
    [(rows, shown, *_, candidate)] = _records([sentence], 3, 2, False, 0, 3)
    assert rows == [0, 1] and shown == [True, True] and candidate == [False, False]


def test_records_batch_checks_only_real_alignments():
    # embedding-only rows and alignments matching fewer than two content tokens are
    # never read for conflicts
    [(_, _, check, *_)] = _records(
        [_one_sentence(uncovered_ok=[True, False], aligned_content=[2.0, 1.0])],
        3, 2, True, 0, 3)
    assert check == [False, False]


def test_records_batch_empty_batch_and_rowless_sentence():
    assert _records([], 3, 2, True, 0, 3) == []
    empty = _one_sentence(covers=[], n_pool=0, chosen=[], source=[], uncovered_ok=[],
                          aligned_content=[], token_lo=[], n_source=[], blocks=[], whole=[])
    [(rows, shown, check, coverage, runs, spans, _)] = _records([empty], 3, 2, True, 0, 3)
    assert rows == [] and coverage == 0.0 and spans == []
    assert runs == [(0, 14)]  # all content uncovered, in one run


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_has_value_region_matches_reference(data):
    n_answer = data.draw(st.integers(0, 8))
    n_source = data.draw(st.integers(0, 8))
    values = data.draw(st.lists(st.booleans(), min_size=n_answer, max_size=n_answer))
    # any blocks the aligner could give, zero-length ones too (they are skipped)
    blocks = data.draw(alignment_blocks(n_answer, n_source, min_length=0))
    offset = data.draw(st.integers(0, 3))
    padded = np.array([False] * offset + values, dtype=np.bool_)
    array = np.array(blocks, dtype=np.int64).reshape(-1, 3)
    got = _has_value_region(array, 0, array.shape[0], padded, offset, n_answer, n_source)
    assert got == bool(naive_value_regions(blocks, values, n_answer, n_source))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_contested_coverage_matches_reference(data):
    n_tokens = data.draw(st.integers(0, 8))
    n_rows = data.draw(st.integers(1, 5))
    covers = [data.draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
              for _ in range(n_rows)]
    rows = sorted(data.draw(st.sets(st.integers(0, n_rows - 1), min_size=1)))
    conflicts = [
        data.draw(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=2))
        for _ in rows
    ]
    starts = sorted(data.draw(st.lists(st.integers(0, 30), min_size=n_tokens,
                                       max_size=n_tokens)))
    ends = [s + data.draw(st.integers(1, 3)) for s in starts]
    content = data.draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
    weights = data.draw(st.lists(st.sampled_from([0.0, 0.25, 1.0, 2.0]), min_size=n_tokens,
                                 max_size=n_tokens))
    embedding_supported = data.draw(st.booleans())
    offsets = np.cumsum([0] + [len(c) for c in conflicts])
    coverage, unresolved, runs = contested_coverage(
        np.array(covers, dtype=np.bool_).reshape(n_rows, n_tokens),
        np.array(rows, dtype=np.int64),
        offsets.astype(np.int64),
        np.array([r for c in conflicts for r in c], dtype=np.int64).reshape(-1, 2),
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
        np.array(content, dtype=np.bool_),
        np.array(weights, dtype=np.float64),
        embedding_supported,
    )
    expected = naive_contested_coverage(covers, rows, conflicts, starts, ends, content,
                                        weights, embedding_supported)
    assert (coverage, unresolved, [tuple(r) for r in runs.tolist()]) == expected


def test_contested_coverage_a_contradicted_value():
    # "rose 15% to $2" against evidence stating 12%: the value is not covered, unless a
    # second, conflict-free row covers it
    covers = np.array([[True, True, True], [False, True, False]], dtype=np.bool_)
    starts, ends = np.array([0, 5, 9], dtype=np.int64), np.array([4, 8, 11], dtype=np.int64)
    content, weights = np.ones(3, dtype=np.bool_), np.array([1.0, 2.0, 1.0])
    args = (starts, ends, content, weights, False)
    coverage, unresolved, runs = contested_coverage(
        covers, np.array([0], dtype=np.int64), np.array([0, 1], dtype=np.int64),
        np.array([[5, 8]], dtype=np.int64), *args)
    assert (coverage, unresolved, runs.tolist()) == (0.5, True, [[5, 8]])
    coverage, unresolved, runs = contested_coverage(
        covers, np.array([0, 1], dtype=np.int64), np.array([0, 1, 1], dtype=np.int64),
        np.array([[5, 8]], dtype=np.int64), *args)
    assert (coverage, unresolved, runs.tolist()) == (1.0, False, [])
