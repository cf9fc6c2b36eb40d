"""citekit.kernels._index against the plain-Python references in tests/naive.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._index import _ascending_order, corpus_arrays, index_arrays
from citekit.corpus import Corpus
from naive import naive_ascending_order, naive_corpus_passages, naive_index_arrays

I64 = np.iinfo(np.int64)


def i64(values):
    return np.array(values, dtype=np.int64)


def check_index(ids, starts, ends):
    vocabulary, first, rows, postings, frequency, ratio = index_arrays(
        i64(ids), i64(starts), i64(ends)
    )
    want_vocabulary, want_first, want_rows, want_postings = naive_index_arrays(ids, starts, ends)
    assert vocabulary.tolist() == want_vocabulary
    assert first.tolist() == want_first
    for (indptr, indices), want in ((rows, want_rows), (postings, want_postings)):
        assert indptr.tolist() == np.cumsum([0] + [len(r) for r in want]).tolist()
        assert indices.tolist() == [value for r in want for value in r]
    assert frequency.tolist() == [len(p) for p in want_postings]
    # bit for bit what numpy divides (the IDF is numpy's log of it)
    assert ratio.dtype == np.float64
    assert ratio.tolist() == ((len(starts) + 1.0) / (np.array(frequency) + 1.0)).tolist()
    for array in (vocabulary, first, *rows, postings[0], frequency):
        assert array.dtype == np.int64 and array.flags.c_contiguous
    # the passage numbers as the retrieval walk reads them (no copy when installed)
    assert postings[1].dtype == np.uint32 and postings[1].flags.c_contiguous


ranges = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=8)


@settings(max_examples=150)
@given(
    ids=st.lists(
        st.one_of(st.integers(-3, 3), st.integers(I64.min, I64.max)), max_size=40
    ),
    pairs=ranges,
)
def test_index_arrays_match_reference(ids, pairs):
    n = len(ids)
    starts = [min(a, b, n) for a, b in pairs]
    ends = [min(max(a, b), n) for a, b in pairs]
    check_index(ids, starts, ends)


@pytest.mark.parametrize("step", [1, 1 << 11, 1 << 53, 3 << 61])
def test_index_arrays_with_colliding_and_many_ids(step):
    # equal low or high bits probe the table hard; 5,000 distinct ids make it grow twice
    rng = np.random.default_rng(7)
    distinct = (np.arange(5000, dtype=np.int64) * step).tolist()
    ids = [distinct[i] for i in rng.integers(0, 5000, 12000).tolist()]
    starts = sorted(rng.integers(0, 12000, 50).tolist())
    ends = [min(s + int(w), 12000) for s, w in zip(starts, rng.integers(0, 900, 50).tolist())]
    check_index(ids, starts + [0], ends + [12000])


@settings(max_examples=150)
@given(
    values=st.lists(
        st.one_of(
            st.integers(-300, 300),
            st.integers(I64.min, I64.max),
            st.sampled_from([I64.min, -1, 0, 1, I64.max, 255, 256, -256, 1 << 40]),
        ),
        max_size=60,
    )
)
def test_ascending_order_is_a_stable_sort(values):
    order = _ascending_order(i64(values))
    assert order.dtype == np.int64
    assert order.tolist() == naive_ascending_order(values)


def test_index_arrays_empty():
    vocabulary, first, rows, postings, _, _ = index_arrays(i64([]), i64([]), i64([]))
    assert vocabulary.size == first.size == 0
    assert rows[0].tolist() == [0] and postings[0].tolist() == [0]
    vocabulary, first, rows, postings, _, _ = index_arrays(i64([5]), i64([0, 0]), i64([0, 1]))
    assert rows[0].tolist() == [0, 0, 1] and postings[1].tolist() == [1]


def test_postings_passage_type_and_its_int64_fallback():
    from citekit.kernels._index import _index_kernel, _passage_type

    assert _passage_type(0).dtype == np.uint32
    assert _passage_type(2**32 - 1).dtype == np.uint32
    assert _passage_type(2**32).dtype == np.int64
    # the kernel keeps passage numbers in the template's dtype, the rest int64 either way
    ids, starts, ends = i64([7, 8, 7, 9]), i64([0, 1, 3]), i64([3, 3, 4])
    small = _index_kernel(ids, starts, ends, _passage_type(3), -1)
    wide = _index_kernel(ids, starts, ends, np.zeros(0, dtype=np.int64), -1)
    assert small[5].dtype == np.uint32 and wide[5].dtype == np.int64
    for got, want in zip(small, wide):
        assert got.tolist() == want.tolist()
    want_postings = naive_index_arrays([7, 8, 7, 9], [0, 1, 3], [3, 3, 4])[3]
    assert wide[5].tolist() == [p for column in want_postings for p in column]


@st.composite
def spans(draw, length):
    """Ordered, non-overlapping, non-empty spans within ``[0, length]``."""
    cuts = sorted(set(draw(st.lists(st.integers(0, length), max_size=14))))
    out = []
    for start, end in zip(cuts[::2], cuts[1::2]):
        if end > start:
            out.append((start, end))
    return out


@st.composite
def sources(draw):
    out = []
    for _ in range(draw(st.integers(0, 5))):
        length = draw(st.integers(0, 30))
        out.append((draw(spans(length)), draw(spans(length))))
    return out


def flat(pairs, shape):
    return i64([value for pair in pairs for value in pair]).reshape(shape)


@settings(max_examples=200)
@given(
    sources=sources(),
    # (a window past every source's sentences sizes no scratch by itself)
    size=st.one_of(st.integers(1, 4), st.integers(25, 2**62)),
    stride=st.integers(1, 4),
    seed=st.integers(0, 9),
    n_threads=st.sampled_from([1, 2, 3, 8]),
)
def test_corpus_arrays_match_reference(sources, size, stride, seed, n_threads):
    from unittest import mock

    from citekit.kernels import _index as _corpus_kernel

    rng = np.random.default_rng(seed)
    token_spans = [span for tokens, _ in sources for span in tokens]
    ids = rng.integers(0, 6, len(token_spans)).astype(np.int64)
    token_counts = [len(tokens) for tokens, _ in sources]
    sentence_counts = [len(sentences) for _, sentences in sources]
    # any size is built in groups of sources on several threads (n_threads > 1)
    with mock.patch.object(_corpus_kernel, "_PARALLEL_MIN_TOKENS", 0):
        passages, index = corpus_arrays(
            ids,
            flat(token_spans, (-1, 2))[:, 0].copy(),
            flat(token_spans, (-1, 2))[:, 1].copy(),
            i64(np.cumsum([0] + token_counts)),
            flat([s for _, sentences in sources for s in sentences], (-1, 2)),
            i64(np.cumsum([0] + sentence_counts)),
            size,
            stride,
            n_threads=n_threads,
        )
    want = naive_corpus_passages(sources, size, stride)
    assert passages.shape == (7, len(want[0]))
    assert passages.tolist() == want
    vocabulary, first, rows, postings, frequency, ratio = index
    expected = index_arrays(ids, passages[1].copy(), passages[2].copy())
    assert vocabulary.tolist() == expected[0].tolist() and first.tolist() == expected[1].tolist()
    for got, reference in zip(rows + postings, expected[2] + expected[3]):
        assert got.tolist() == reference.tolist()
    assert frequency.tolist() == expected[4].tolist() and ratio.tolist() == expected[5].tolist()


@pytest.mark.parametrize("size, stride", [(1, 1), (2, 1), (3, 2), (2, 5)])
def test_corpus_arrays_in_groups_equal_one_thread(monkeypatch, workload, size, stride):
    import threading

    from citekit.kernels import _index as _corpus_kernel
    from citekit import _reading

    texts = [d["text"] for d in workload.make_documents(9, seed=11)]
    # sources without tokens or sentences between and at both ends, a one-word one
    texts[4:4] = ["", "  ", "Word"]
    texts = [""] + texts + ["", "東京で 5.2％ 上昇。次です。"]
    arrays = _reading.tokenize_and_segment(
        _reading.default_tokenizer(), _reading.default_segmenter(), texts
    )
    expected = corpus_arrays(*arrays, size, stride, n_threads=1)
    monkeypatch.setattr(_corpus_kernel, "_PARALLEL_MIN_TOKENS", 0)
    before = threading.active_count()
    calls = []
    real = _corpus_kernel._group_first_phase

    def counting(*args):
        calls.append(args[8:10])  # the group's sources
        return real(*args)

    monkeypatch.setattr(_corpus_kernel, "_group_first_phase", counting)
    for n_threads in (2, 3, 5, 64, None):
        calls.clear()
        passages, index = corpus_arrays(*arrays, size, stride, n_threads=n_threads)
        assert passages.tolist() == expected[0].tolist()
        got, want = index, expected[1]
        for a, b in zip([*got[:2], *got[2], *got[3], *got[4:]],
                        [*want[:2], *want[2], *want[3], *want[4:]]):
            assert a.dtype == b.dtype and a.tolist() == b.tolist()
        # groups of whole sources, in order, covering every source with tokens
        if n_threads != 1:
            bounds = sorted(calls)
            assert bounds[0][0] == 0 and bounds[-1][1] == len(texts)
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
            assert len(bounds) <= (n_threads or 64)
    assert threading.active_count() == before
    # one source, or one thread: one kernel call, no thread
    calls.clear()
    corpus_arrays(*arrays, size, stride, n_threads=1)
    one = _reading.tokenize_and_segment(
        _reading.default_tokenizer(), _reading.default_segmenter(), texts[1:2]
    )
    corpus_arrays(*one, size, stride, n_threads=4)
    assert calls == []


def test_corpus_arrays_with_strides_and_sizes_past_any_source():
    # (the number of windows is computed without overflow for any int64 stride)
    sources = [([(0, 1), (2, 3), (4, 5), (6, 7)], [(0, 1), (2, 3), (4, 5), (6, 7)])]
    token_spans = sources[0][0]
    for size, stride in [(1, 2**63 - 1), (2, 2**62), (2**63 - 1, 1), (2**63 - 1, 2**63 - 1)]:
        passages, _ = corpus_arrays(
            i64([1, 2, 3, 4]), flat(token_spans, (-1, 2))[:, 0].copy(),
            flat(token_spans, (-1, 2))[:, 1].copy(), i64([0, 4]), flat(sources[0][1], (-1, 2)),
            i64([0, 4]), size, stride,
        )
        assert passages.tolist() == naive_corpus_passages(sources, size, stride)


@settings(max_examples=150)
@given(
    values=st.lists(st.integers(0, 40), max_size=60),
    extra=st.integers(0, 3),
)
def test_numbering_of_columns_is_the_hash_tables(values, extra):
    # the index of column numbers (IdfIndex's constructor) numbers them through a table
    # with a slot per column: the numbers of the hash table, which numbers any ids
    from citekit.kernels._index import (
        _number_by_first_appearance,
        _number_columns_by_first_appearance,
    )

    array = i64(values)
    n_columns = (max(values) + 1 if values else 0) + extra
    found = [np.full(len(values), -1, dtype=np.int64) for _ in range(4)]
    distinct = _number_columns_by_first_appearance(array, found[0], found[1], n_columns)
    expected = _number_by_first_appearance(array, found[2], found[3])
    assert distinct.tolist() == expected.tolist() == list(dict.fromkeys(values))
    assert found[0].tolist() == found[2].tolist()
    assert found[1][: len(distinct)].tolist() == found[3][: len(distinct)].tolist()


def test_corpus_build_uses_the_kernel_windows_and_index():
    texts = ["One. Two. Three. Four. Five.", "", "Six seven. Eight.", "   "]
    corpus = Corpus.build(texts, window_size_sentences=2, window_stride_sentences=3)
    assert corpus.passage_source.tolist() == [0, 0, 2]
    assert corpus.passage_sentence_start.tolist() == [0, 3, 0]
    assert corpus.passage_sentence_end.tolist() == [2, 5, 2]
    assert [corpus.passage_text(p) for p in range(3)] == [
        "One. Two.",
        "Four. Five.",
        "Six seven. Eight.",
    ]
    np.testing.assert_array_equal(corpus.index.first_positions, [
        corpus.token_ids.tolist().index(v) for v in corpus.index.vocabulary.tolist()
    ])
    # the IDF as numpy computes it from the document frequencies
    df = corpus.index.document_frequency
    assert corpus.index.idf.tolist() == (np.log((3 + 1.0) / (df + 1.0)) + 1.0).tolist()
