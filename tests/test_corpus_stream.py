"""Corpus.build from a stream: iterables read once, JSON Lines paths, batches, progress,
bounded memory; identical to building from a list."""

import gc
import gzip
import io
import json
import os
import pathlib
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit._corpus_build as corpus_build
from citekit._corpus_files import ARRAY_NAMES
from citekit.corpus import Corpus
from citekit.pipeline import Pipeline
from citekit.results import SourceChunk, SourceDocument

TEXTS = [
    "Revenue grew 15% in 2024. Costs fell 3%.",
    "The plant opened in Lyon. It employs 1,200 people.",
    "",
    "Ünïcödé 😀 text. ﬁne ① ｆｕｌｌ. 中文句子。",
    "Last one.\r\nWith CRLF.",
]


def _index_arrays(corpus):
    index = corpus.index
    return {
        **index.to_arrays(),
        "document_frequency": index.document_frequency,
        "idf": index.idf,
        "postings_indptr": index._walk_postings[0],
        "postings": index._walk_postings[1],
    }


def assert_same_corpus(built, expected):
    assert built.sources == expected.sources
    for name in ARRAY_NAMES:
        got, want = getattr(built, name), getattr(expected, name)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert np.array_equal(got, want), name
    got_index, want_index = _index_arrays(built), _index_arrays(expected)
    assert got_index.keys() == want_index.keys()
    for name, want in want_index.items():
        assert got_index[name].dtype == want.dtype, name
        assert np.array_equal(got_index[name], want), name
    assert built.index.unseen_idf == expected.index.unseen_idf
    assert built.tokenizer_signature == expected.tokenizer_signature
    assert (built.window_size_sentences, built.window_stride_sentences) == (
        expected.window_size_sentences,
        expected.window_stride_sentences,
    )


def _write_jsonl(path, rows, *, compress=False):
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    path = pathlib.Path(path)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


# ----------------------------------------------------------------------------- identity


@settings(max_examples=60)
@given(
    texts=st.lists(st.text(max_size=60), max_size=8),
    batch_size=st.integers(min_value=1, max_value=200),
    window=st.tuples(st.integers(1, 3), st.integers(1, 3)),
)
def test_a_stream_in_any_batches_builds_the_corpus_of_the_list(texts, batch_size, window):
    size, stride = window
    expected = Corpus.build(texts, window_size_sentences=size, window_stride_sentences=stride)
    built = Corpus.build(
        (text for text in texts),
        batch_size=batch_size,
        window_size_sentences=size,
        window_stride_sentences=stride,
    )
    assert_same_corpus(built, expected)
    # every offset indexes its own source's text (the constructor's checks)
    Corpus(
        built.sources,
        {name: getattr(built, name) for name in ARRAY_NAMES},
        built.index,
        window_size_sentences=size,
        window_stride_sentences=stride,
        tokenizer_signature=built.tokenizer_signature,
    )
    for token in range(built.n_tokens):
        source = int(np.searchsorted(built.source_token_offsets, token, side="right")) - 1
        start, end = int(built.token_starts[token]), int(built.token_ends[token])
        assert 0 <= start < end <= len(texts[source])


@pytest.mark.parametrize("batch_size", [1, 7, 45, 1 << 22])
def test_batches_of_a_list_and_of_a_generator_agree(batch_size):
    records = [SourceDocument(f"d{k}", text, metadata={"k": k}) for k, text in enumerate(TEXTS)]
    records.append(SourceChunk("parent", "A chunk. Of a parent.", 10, 31))
    expected = Corpus.build(records)
    assert_same_corpus(Corpus.build(records, batch_size=batch_size), expected)
    assert_same_corpus(Corpus.build(iter(records), batch_size=batch_size), expected)
    assert_same_corpus(Corpus.build(tuple(records), batch_size=batch_size), expected)


def test_a_stream_aligns_as_the_list_does():
    pipeline = Pipeline()
    from_list = pipeline.prepare(TEXTS)
    from_stream = pipeline.prepare(iter(TEXTS), batch_size=10)
    answer = "Revenue grew 15% in 2024. The plant employs 1,200 people."
    assert [r.to_dict() for r in pipeline.align(answer, from_stream)] == [
        r.to_dict() for r in pipeline.align(answer, from_list)
    ]


def test_custom_stages_read_text_by_text_in_batches_too():
    class Words:
        def tokenize(self, text):
            import re

            spans = [m.span() for m in re.finditer(r"\w+", text)]
            return [len(text[s:e]) for s, e in spans], spans

    class Lines:
        def segment(self, text):
            return [(0, len(text))]

    options = {"tokenizer": Words(), "segmenter": Lines()}
    expected = Corpus.build(TEXTS, **options)
    assert_same_corpus(Corpus.build(iter(TEXTS), batch_size=3, **options), expected)


# ----------------------------------------------------------------------------- edge cases


def test_empty_and_single_sources():
    empty = Corpus.build([])
    assert_same_corpus(Corpus.build(iter([])), empty)
    assert (empty.n_sources, empty.n_passages, empty.n_tokens) == (0, 0, 0)
    one = Corpus.build(["Only one. Two sentences."])
    assert_same_corpus(Corpus.build(iter(["Only one. Two sentences."]), batch_size=1), one)
    assert one.n_passages == 2


def test_a_long_source_is_a_batch_alone():
    batches = list(corpus_build._batches([SourceDocument(str(k), t) for k, t in
                                          enumerate(["ab", "c" * 50, "d", "e", "f" * 3])], 4))
    assert [[record.text[:1] for record in batch] for batch in batches] == [
        ["a"], ["c"], ["d", "e"], ["f"]]


def test_a_stream_that_fails_midway_leaves_nothing(monkeypatch):
    bars = []

    class Bar:
        def __init__(self):
            self.count, self.closed = 0, False
            bars.append(self)

        def update(self, count):
            self.count += count

        def close(self):
            self.closed = True

    monkeypatch.setattr(corpus_build, "_progress_bar", lambda total: Bar())

    def failing():
        yield from TEXTS[:3]
        raise RuntimeError("the source database went away")

    with pytest.raises(RuntimeError, match="went away"):
        Corpus.build(failing(), batch_size=1)
    assert len(bars) == 1 and bars[0].closed  # (no bar left drawn)
    # a bad item midway: the error names its position, the build stops there
    with pytest.raises(TypeError, match=r"sources\[2\] must be a str"):
        Corpus.build(iter(["a", "b", 3, "d"]), batch_size=1)
    with pytest.raises(ValueError, match=r"sources\[0\] and sources\[3\] have the same id"):
        Corpus.build(iter([{"id": "x", "text": "a"}, "b", "c", {"id": "x", "text": "d"}]))
    # the stages are left as they were: the next build is a fresh one's
    assert_same_corpus(Corpus.build(iter(TEXTS), batch_size=1), Corpus.build(TEXTS))


def test_the_progress_bar_counts_documents_from_the_second_batch(monkeypatch):
    made = []

    class Bar:
        def __init__(self, total):
            self.total, self.count, self.closed = total, 0, False
            made.append(self)

        def update(self, count):
            self.count += count

        def close(self):
            self.closed = True

    monkeypatch.setattr(corpus_build, "_progress_bar", Bar)
    Corpus.build(TEXTS)  # one batch: over before a bar would say anything
    Corpus.build(TEXTS, batch_size=10, show_progress=False)
    assert made == []
    Corpus.build(TEXTS, batch_size=10)
    Corpus.build(iter(TEXTS), batch_size=10)
    assert [(bar.total, bar.count, bar.closed) for bar in made] == [
        (len(TEXTS), len(TEXTS), True), (None, len(TEXTS), True)]


def test_the_progress_bar_is_tqdm_where_it_can_be_seen(monkeypatch):
    pytest.importorskip("tqdm")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    Corpus.build(iter(TEXTS), batch_size=10)
    assert "citekit: preparing" in terminal.getvalue() and "5document" in terminal.getvalue()
    pipe = io.StringIO()  # not a terminal: silent
    monkeypatch.setattr(sys, "stderr", pipe)
    Corpus.build(iter(TEXTS), batch_size=10)
    assert pipe.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # not installed: builds, silently
    before = terminal.getvalue()
    assert Corpus.build(iter(TEXTS), batch_size=10).n_sources == len(TEXTS)
    assert terminal.getvalue() == before


# ----------------------------------------------------------------------------- JSON Lines


ROWS = [
    {"id": "a", "text": TEXTS[0], "url": "https://example.org/a"},
    {"id": 7, "text": TEXTS[3]},
    {"id": "c", "text": TEXTS[4], "tags": ["x"]},
]


def test_a_jsonl_path_builds_the_corpus_of_its_lines(tmp_path):
    expected = Corpus.build(
        [SourceDocument(str(row["id"]), row["text"],
                        metadata={k: v for k, v in row.items() if k not in ("id", "text")})
         for row in ROWS]
    )
    path = _write_jsonl(tmp_path / "sources.jsonl", ROWS)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\n\n", 1))  # blank lines are skipped
    packed = _write_jsonl(tmp_path / "sources.JSONL.gz", ROWS, compress=True)
    for given_path in (path, str(path), packed, str(packed)):
        assert_same_corpus(Corpus.build(given_path, batch_size=20), expected)
    other = _write_jsonl(tmp_path / "sources.txt", ROWS)
    assert_same_corpus(Corpus.build(other), expected)  # any name, as an os.PathLike
    assert_same_corpus(Pipeline().prepare(str(path)), Pipeline().prepare(expected.sources))


@settings(max_examples=40)
@given(
    texts=st.lists(st.text(st.characters(exclude_categories=()), max_size=40), max_size=6),
    batch_size=st.integers(min_value=1, max_value=100),
)
def test_any_texts_of_a_jsonl_file_build_the_corpus_of_the_list(tmp_path_factory, texts,
                                                                batch_size):
    # (lone surrogates included: JSON escapes them, and a corpus keeps every str as it is)
    path = tmp_path_factory.mktemp("lines") / "sources.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"d{k}", "text": text}) + "\n" for k, text in enumerate(texts)),
        encoding="ascii",
    )
    expected = Corpus.build([{"id": f"d{k}", "text": text} for k, text in enumerate(texts)])
    assert_same_corpus(Corpus.build(path, batch_size=batch_size), expected)


def test_jsonl_errors_name_the_file_and_the_line(tmp_path):
    cases = [
        ({"id": "a", "text": 3}, r"line 2: a source needs a string 'text' \(got int\)"),
        ({"id": "a"}, r"line 2: a source needs a string 'text' \(got none\)"),
        ({"text": "x"}, r"line 2: a source needs an 'id'"),
        ({"id": True, "text": "x"}, r"line 2: a source needs an 'id'"),
        ({"id": "first", "text": "again"},
         r"line 2: duplicate source id 'first' \(first on line 1\)"),
    ]
    for number, (row, message) in enumerate(cases):
        path = _write_jsonl(tmp_path / f"bad{number}.jsonl", [{"id": "first", "text": "x"}, row])
        with pytest.raises(ValueError, match=rf"bad{number}\.jsonl, {message}"):
            Corpus.build(path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "text": "x"}\n{"id": \n')
    with pytest.raises(ValueError, match=r"broken\.jsonl, line 2: invalid JSON"):
        Corpus.build(broken)
    listed = tmp_path / "listed.jsonl"
    listed.write_text('["a", "b"]\n')
    with pytest.raises(ValueError, match=r"listed\.jsonl, line 1: expected a JSON object"):
        Corpus.build(listed)
    cut = tmp_path / "cut.jsonl.gz"
    lines = "".join(f'{{"id": "{k}", "text": "x"}}\n' for k in range(2000))
    cut.write_bytes(gzip.compress(lines.encode())[:400])
    with pytest.raises(ValueError, match=r"cut\.jsonl\.gz: not a complete gzip file"):
        Corpus.build(cut)
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_text('{"id": "a", "text": "x"}\n')
    with pytest.raises(ValueError, match=r"plain\.jsonl\.gz: not a complete gzip file"):
        Corpus.build(plain)


def test_paths_that_are_not_sources_files(tmp_path):
    missing = tmp_path / "missing.jsonl"
    for given_path in (missing, str(missing), str(tmp_path / "missing.jsonl.gz")):
        with pytest.raises(FileNotFoundError, match="sources file not found: .*missing"):
            Corpus.build(given_path)
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with pytest.raises(ValueError, match="sources file is a directory"):
        Corpus.build(folder)
    # a str is a path only when it ends with .jsonl or .jsonl.gz: never a text read as one
    for text in ("Revenue grew 15%.", str(tmp_path / "notes.txt"), "a\nb.jsonl", ""):
        with pytest.raises(TypeError, match="sources must be a sequence.*ends with .jsonl"):
            Corpus.build(text)
    with pytest.raises(TypeError, match="sources: a path must be a str path, got bytes"):
        Corpus.build(_BytesPath())


class _BytesPath(os.PathLike):
    def __fspath__(self):
        return b"sources.jsonl"


# ----------------------------------------------------------------------------- bad input


def test_bad_batch_size_and_show_progress():
    for bad in (0, -5):
        with pytest.raises(ValueError, match="batch_size must be >= 1"):
            Corpus.build(TEXTS, batch_size=bad)
    for bad in (1.5, "10", True, None):
        with pytest.raises(TypeError, match="batch_size must be an int"):
            Corpus.build(TEXTS, batch_size=bad)
    for bad in (1, "yes", None):
        with pytest.raises(TypeError, match="show_progress must be a bool"):
            Corpus.build(TEXTS, show_progress=bad)
    for bad in (None, 3, {"text": "a"}, b"bytes"):
        with pytest.raises(TypeError, match="sources must be a sequence"):
            Corpus.build(bad)


# ----------------------------------------------------------------------------- memory


def _held_bytes(corpus):
    """What the corpus keeps: the memory of every array it (and its index) holds, and its
    texts."""
    owners = {}

    def visit(value):
        if isinstance(value, np.ndarray):
            while isinstance(value.base, np.ndarray):
                value = value.base
            owners[id(value)] = value.nbytes
        elif isinstance(value, tuple) and len(value) < 16:
            for item in value:
                visit(item)

    for holder in (corpus, corpus.index):
        for value in vars(holder).values():
            visit(value)
    return sum(owners.values()) + sum(sys.getsizeof(s.text) for s in corpus.sources)


def _documents(n_documents, words_per_document):
    """Documents made one at a time (the words of a small vocabulary with numbers)."""
    vocabulary = [f"word{k}" for k in range(3000)]
    for number in range(n_documents):
        words = [
            vocabulary[(number * 7919 + k * k) % len(vocabulary)] + ("." if k % 12 == 11 else "")
            for k in range(words_per_document)
        ]
        yield {"id": f"doc{number}", "text": " ".join(words)}


def _traced_build(sources, batch_size):
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        corpus = Corpus.build(sources, batch_size=batch_size, show_progress=False)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return corpus, peak


def test_building_from_a_stream_peaks_near_the_corpus_plus_one_batch():
    # tracemalloc sees numpy's arrays, the kernels' and Python's objects. Above the corpus
    # itself a build needs one batch's reading memory (bytes per character of the batch)
    # and, at the end, the index kernel's working memory (20 bytes per token with the
    # default windows: what the build cannot go below without changing that kernel)
    Corpus.build(TEXTS)  # (the kernels loaded before measuring)
    batch_size = 1 << 16
    corpus, peak = _traced_build(_documents(400, 1000), batch_size)
    held = _held_bytes(corpus)
    assert held > 100 * batch_size  # (the corpus is many batches)
    bound = held + 28 * corpus.n_tokens + 16 * batch_size
    assert peak < bound, (peak, held, corpus.n_tokens)
    # all in one batch: the reading memory of every text at once goes beyond that bound
    _, peak_at_once = _traced_build(_documents(400, 1000), 1 << 30)
    assert peak_at_once > bound, (peak_at_once, bound)
