"""Corpus: structure, windows, chunks, save/load (no pickle), bad inputs."""

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _version_1 import save_version_1

from citekit._corpus_files import ARRAY_NAMES
from citekit.corpus import Corpus, as_source_records, embed_texts
from citekit.results import SourceChunk, SourceDocument
from citekit.segment import SentenceSegmenter, passage_windows, segment_sentences
from citekit.tokenizers import SimpleTokenizer

TEXTS = [
    "Revenue grew 15% in 2024. Costs fell 3%. The CEO stayed.",
    "Straße und Brücke wurden 2019 gebaut. Die Kosten: 1,2 Mio. €.",
    "",
    "東京は日本の首都です。人口は多い。",
]


def test_structure_matches_segmentation_and_tokenization():
    corpus = Corpus.build(TEXTS)
    tokenizer = SimpleTokenizer()
    assert corpus.n_sources == 4
    expected_passages = sum(len(segment_sentences(t)) for t in TEXTS)
    assert corpus.n_passages == expected_passages
    for source, text in enumerate(TEXTS):
        lo, hi = corpus.source_token_offsets[source], corpus.source_token_offsets[source + 1]
        tokens = tokenizer.tokenize(text)
        np.testing.assert_array_equal(corpus.token_ids[lo:hi], tokens.token_ids)
        np.testing.assert_array_equal(corpus.token_starts[lo:hi], tokens.starts)
    for p in range(corpus.n_passages):
        source = corpus.passage_source[p]
        text = TEXTS[source]
        start, end = corpus.passage_char_start[p], corpus.passage_char_end[p]
        assert corpus.passage_text(p) == text[start:end]
        tok = slice(corpus.passage_token_start[p], corpus.passage_token_end[p])
        assert np.all(corpus.token_starts[tok] >= start) and np.all(corpus.token_ends[tok] <= end)
        assert corpus.passage_token_end[p] > corpus.passage_token_start[p]
    assert corpus.index.n_passages == corpus.n_passages
    assert "4 sources" in repr(corpus)


def test_windows_follow_passage_windows():
    text = "One is here. Two is here. Three is here. Four is here. Five is here."
    corpus = Corpus.build([text], window_size_sentences=3, window_stride_sentences=2)
    windows = passage_windows(segment_sentences(text), 3, 2)
    assert corpus.n_passages == len(windows)
    assert corpus.passage_char_start.tolist() == [w.char_start for w in windows]
    assert corpus.passage_sentence_end.tolist() == [w.sentence_end for w in windows]
    # overlapping windows share tokens without copies
    assert corpus.n_tokens == len(SimpleTokenizer().tokenize(text))


def test_chunks_keep_parent_offsets():
    document = "Preface. Revenue grew 15% in 2024."
    start = document.index("Revenue")
    chunk = SourceChunk(
        "doc", document[start:], start, len(document), document_text=document, source_index=3
    )
    corpus = Corpus.build([chunk])
    assert corpus.source_ids == ("doc",)
    assert corpus.source_indices.tolist() == [3]
    assert corpus.absolute(0, 0) == start
    assert corpus.passage_text(0) == "Revenue grew 15% in 2024."


def test_save_load_round_trip_without_pickle(tmp_path):
    sources = [
        SourceDocument("a", TEXTS[0], metadata={"url": "https://example.org", "year": 2024}),
        {"id": "b", "text": TEXTS[1]},
        SourceChunk("c", TEXTS[3], 10, 10 + len(TEXTS[3])),
    ]
    corpus = Corpus.build(sources, window_size_sentences=2)
    corpus.save(tmp_path / "saved")
    files = sorted(os.listdir(tmp_path / "saved"))
    assert "corpus.json" in files and all(f.endswith((".npy", ".json", ".bin")) for f in files)
    for name in files:
        if name.endswith(".npy"):
            np.load(tmp_path / "saved" / name, allow_pickle=False)  # no object arrays
    loaded = Corpus.load(str(tmp_path / "saved"))
    assert loaded.sources == corpus.sources
    assert loaded.window_size_sentences == 2
    assert loaded.tokenizer_signature == corpus.tokenizer_signature
    for name in (
        "token_ids",
        "token_starts",
        "passage_token_start",
        "passage_char_end",
        "base_offsets",
    ):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(corpus, name))
    np.testing.assert_array_equal(loaded.index.idf, corpus.index.idf)
    assert loaded.tokenizer is None


def test_save_load_with_embeddings(tmp_path):
    class Lengths:
        def encode(self, texts):
            return [[len(t), 1.0, t.count("e")] for t in texts]

    corpus = Corpus.build(TEXTS[:2], embedder=Lengths())
    assert corpus.embeddings.shape == (corpus.n_passages, 3)
    np.testing.assert_allclose(np.linalg.norm(corpus.embeddings, axis=1), 1.0, rtol=1e-6)
    corpus.save(tmp_path / "e")
    np.testing.assert_array_equal(Corpus.load(tmp_path / "e").embeddings, corpus.embeddings)


def test_load_rejects_foreign_directories(tmp_path):
    with pytest.raises(ValueError, match="corpus.json"):
        Corpus.load(tmp_path)
    (tmp_path / "corpus.json").write_text(json.dumps({"format": "other", "version": 1}))
    with pytest.raises(ValueError, match="format"):
        Corpus.load(tmp_path)
    with pytest.raises(TypeError, match="path"):
        Corpus.load(42)  # type: ignore[arg-type]


def test_load_names_the_damaged_file(tmp_path):
    corpus = Corpus.build(["Revenue grew 15% in 2024.", "Costs fell."])
    corpus.save(tmp_path / "c")
    names = sorted(os.listdir(tmp_path / "c"))
    assert "corpus.json" in names and "token_ids.npy" in names
    for name in names:
        target = tmp_path / name
        corpus.save(target)
        data = (target / name).read_bytes()
        if not data:  # (no metadata, no chunk's document text: nothing to cut)
            continue
        (target / name).write_bytes(data[: len(data) // 2])
        with pytest.raises(ValueError, match=f"{name}.*damaged"):
            Corpus.load(target)
    missing = tmp_path / "missing"
    corpus.save(missing)
    (missing / "token_ids.npy").unlink()
    with pytest.raises(FileNotFoundError, match="token_ids.npy"):
        Corpus.load(missing)
    listed = tmp_path / "listed"
    corpus.save(listed)
    (listed / "corpus.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        Corpus.load(listed)


# -- a saved corpus damaged or tampered with: ValueError naming the file ------------------

# the file of the sources' texts (format version 2)
TEXTS_FILE = "sources_text.bin"


class _Lengths:
    def encode(self, texts):
        return [[len(t) + 1.0, 1.0, t.count("e")] for t in texts]


def _saved(tmp_path, embedder=None, version=2):
    """A saved corpus of a document, an empty source, a chunk and another document (the
    first has 3 passages and more than 3 tokens), in format ``version`` (1: the sources
    in corpus.json)."""
    sources = [
        SourceDocument("a", TEXTS[0], metadata={"year": 2024}),
        "",
        SourceChunk("c", TEXTS[3], 10, 10 + len(TEXTS[3])),
        TEXTS[1],
    ]
    directory = tmp_path / "saved"
    corpus = Corpus.build(sources, embedder=embedder)
    if version == 1:
        save_version_1(corpus, directory)
    else:
        corpus.save(directory)
    return directory


def _edit_json(directory, edit):
    meta = json.loads((directory / "corpus.json").read_text(encoding="utf-8"))
    edit(meta)
    (directory / "corpus.json").write_text(json.dumps(meta), encoding="utf-8")


def _edit_array(directory, name, edit):
    path = directory / f"{name}.npy"
    array = np.load(path)
    array = edit(array)
    np.save(path, array, allow_pickle=False)


def _refused(directory, *files):
    """Corpus.load raises ValueError naming each of ``files`` (with its path)."""
    with pytest.raises(ValueError) as info:
        Corpus.load(directory)
    message = str(info.value)
    for name in files:
        assert repr(str(directory / name)) in message, message
    assert "damaged" in message
    return message


def test_load_refuses_a_text_shorter_than_its_offsets(tmp_path):
    # a shortened text loaded before, and gave citations whose evidence was no longer
    # text[char_start:char_end]
    for cut in (1, len(TEXTS[0]) // 2):  # the final "." (no token) or words too
        directory = _saved(tmp_path, version=1)

        def shorten(meta):
            meta["sources"][0]["text"] = meta["sources"][0]["text"][:-cut]

        _edit_json(directory, shorten)
        message = _refused(directory, "corpus.json")
        assert "beyond its source's text" in message


def _set(position, value):
    def edit(array):
        array = array.copy()
        array[position] = value
        return array

    return edit


@pytest.mark.parametrize(
    "name, edit, files, what",
    [
        ("token_starts", lambda a: a + 1000, ("token_starts.npy", "token_ends.npy"), "after"),
        ("token_ends", lambda a: a + 1000, ("token_ends.npy", TEXTS_FILE), "beyond"),
        ("token_starts", _set(0, -1), ("token_starts.npy",), "< 0"),
        # token 2 of source 0 starting before token 1 (within its own end)
        ("token_starts", _set(2, 0), ("token_starts.npy",), "before the token ahead"),
        ("token_ends", lambda a: a[:-1], ("token_ends.npy",), "token offsets for"),
        ("token_ids", lambda a: a[1:], ("token_ids.npy",), "token ids for"),
        ("source_token_offsets", _set(1, 10**6), ("source_token_offsets.npy",), "decrease"),
        ("source_token_offsets", lambda a: a[:-1], ("source_token_offsets.npy",), "sources"),
    ],
)
def test_load_refuses_token_offsets_that_do_not_fit(tmp_path, name, edit, files, what):
    directory = _saved(tmp_path)
    _edit_array(directory, name, edit)
    assert what in _refused(directory, *files)


@pytest.mark.parametrize(
    "name",
    ["token_ids", "token_starts", "source_token_offsets", "passage_source",
     "passage_char_end", "index_vocabulary", "index_indptr", "index_indices"],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, bool, "<U4"])
def test_load_refuses_arrays_that_do_not_hold_integers(tmp_path, name, dtype):
    # a float array was cast to int without a word (an object array np.load refuses
    # itself, without pickle: test_load_names_the_damaged_file's kind of damage)
    directory = _saved(tmp_path)
    _edit_array(directory, name, lambda a: a.astype(dtype))
    assert "not integers" in _refused(directory, f"{name}.npy")


@pytest.mark.parametrize("name", ["token_starts", "passage_source", "index_indices"])
def test_load_refuses_arrays_of_two_dimensions(tmp_path, name):
    directory = _saved(tmp_path)
    _edit_array(directory, name, lambda a: np.stack([a, a]))
    assert "2-D" in _refused(directory, f"{name}.npy")


@pytest.mark.parametrize(
    "name, edit, files, what",
    [
        ("passage_source", _set(-1, 4), ("passage_source.npy",), "not one of the 4"),
        ("passage_source", _set(0, -1), ("passage_source.npy",), "not one of the 4"),
        ("passage_source", _set(-1, 0), ("passage_source.npy",), "source after source"),
        ("passage_token_start", _set(1, -1), ("passage_token_start.npy",), "before 0"),
        ("passage_token_end", lambda a: a + 1000, ("passage_token_end.npy",),
         "end of tokens"),
        ("passage_token_start", lambda a: a + 1000, ("passage_token_start.npy",
                                                     "passage_token_end.npy"), "after its end"),
        ("passage_char_end", lambda a: a + 1000, ("passage_char_end.npy", TEXTS_FILE),
         "beyond its source's text"),
        ("passage_char_start", _set(0, -3), ("passage_char_start.npy",), "before 0"),
        ("passage_char_start", lambda a: a + 1000, ("passage_char_start.npy",
                                                    "passage_char_end.npy"), "after its end"),
        ("passage_sentence_start", _set(0, -1), ("passage_sentence_start.npy",), "before 0"),
        ("passage_char_end", lambda a: a[:-1], ("passage_char_end.npy",), "entries for"),
    ],
)
def test_load_refuses_passages_outside_their_sources(tmp_path, name, edit, files, what):
    # an out-of-range passage source or range raised IndexError (or gave wrong evidence)
    # when aligning
    directory = _saved(tmp_path)
    _edit_array(directory, name, edit)
    assert what in _refused(directory, *files)


def _put(*keys_and_value):
    *keys, value = keys_and_value

    def edit(meta):
        target = meta
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


def _drop(*keys):
    def edit(meta):
        target = meta
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return edit


@pytest.mark.parametrize(
    "edit, what",
    [
        # the window fields follow Corpus.build's (and CitationConfig's) rules
        (_put("window_size_sentences", 0), "window_size_sentences must be >= 1"),
        (_put("window_stride_sentences", -2), "window_stride_sentences must be >= 1"),
        (_put("window_size_sentences", 1.5), "window_size_sentences must be an int"),
        (_put("window_size_sentences", "2"), "window_size_sentences must be an int"),
        (_put("window_stride_sentences", True), "window_stride_sentences must be an int"),
        (_drop("window_size_sentences"), "no 'window_size_sentences'"),
        (_drop("sources"), "no 'sources'"),
        (_put("sources", {"a": 1}), "'sources' must be a list"),
        (_put("sources", "abc"), "'sources' must be a list"),
        (_put("sources", 0, "some text"), "sources[0] must be a JSON object"),
        (_drop("sources", 2, "kind"), "sources[2] has no 'kind'"),
        (_put("sources", 0, "kind", "paper"), "sources[0] has kind 'paper'"),
        (_put("sources", 0, "kind", None), "sources[0] has kind None"),
        (_drop("sources", 0, "text"), "sources[0]"),
        (_put("sources", 0, "text", 5), "sources[0]"),
        (_put("sources", 2, "doc_char_end", 3), "sources[2]"),
        (_put("sources", 2, "source_index", -1), "sources[2]"),
        (_put("sources", 0, "colour", "red"), "unknown keys"),
        # two sources of one id (saved before such sources were refused)
        (_put("sources", 3, "id", "a"), "sources[0] and sources[3] have the same id 'a'"),
        (_put("sources", 0, "id", "c"), "sources[0] and sources[2] have the same id 'c'"),
        (_drop("tokenizer_signature"), "no 'tokenizer_signature'"),
        (_put("tokenizer_signature", 5), "'tokenizer_signature' must be a str"),
        (_put("has_embeddings", "yes"), "'has_embeddings' must be a bool"),
        (_drop("has_embeddings"), "no 'has_embeddings'"),
    ],
)
def test_load_refuses_bad_values_in_corpus_json(tmp_path, edit, what):
    # these loaded (window 0, a string signature...) or raised KeyError / TypeError
    directory = _saved(tmp_path, version=1)
    _edit_json(directory, edit)
    assert what in _refused(directory, "corpus.json")


def test_load_refuses_a_source_list_of_another_length(tmp_path):
    directory = _saved(tmp_path, version=1)
    _edit_json(directory, lambda meta: meta["sources"].pop())
    assert "for 3 sources" in _refused(directory, "source_token_offsets.npy", "corpus.json")


def test_load_names_a_missing_embeddings_file(tmp_path):
    # corpus.json saying there are embeddings, none saved: FileNotFoundError, as for any
    # missing array file, naming it
    directory = _saved(tmp_path)
    _edit_json(directory, _put("has_embeddings", True))
    with pytest.raises(FileNotFoundError, match=r"missing \(embeddings\.npy\)") as info:
        Corpus.load(directory)
    assert info.value.filename == str(directory / "embeddings.npy")
    (directory / "token_ends.npy").unlink()
    with pytest.raises(FileNotFoundError, match=r"missing \(token_ends\.npy\)"):
        Corpus.load(directory)


@pytest.mark.parametrize(
    "edit, what",
    [
        (lambda a: a[:-1], "expected a row per passage"),
        (lambda a: a[:, 0], "expected a row per passage"),
        (lambda a: (a * 100).astype(np.int64), "not floats"),
        (_set((0, 1), np.nan), "non-finite"),
        (_set((1, 0), np.inf), "non-finite"),
    ],
)
def test_load_refuses_damaged_embeddings(tmp_path, edit, what):
    directory = _saved(tmp_path, embedder=_Lengths())
    _edit_array(directory, "embeddings", edit)
    assert what in _refused(directory, "embeddings.npy")


@pytest.mark.parametrize(
    "name, edit, files, what",
    [
        ("index_indptr", lambda a: a[:-1], ("index_indptr.npy",), "row offsets for"),
        ("index_indptr", lambda a: np.concatenate([a, a[-1:]]), ("index_indptr.npy",),
         "row offsets for"),
        ("index_indptr", _set(1, 10**6), ("index_indptr.npy", "index_indices.npy"),
         "never decrease"),
        ("index_indices", _set(0, 10**6), ("index_indices.npy",), "column numbers"),
        ("index_indices", _set(0, -1), ("index_indices.npy",), "column numbers"),
        ("index_vocabulary", lambda a: a[::-1], ("index_vocabulary.npy",), "sorted"),
        # (a mapped load's checks of the lengths find it)
        ("index_vocabulary", lambda a: a[:1], ("index_vocabulary.npy",), "for 1 terms"),
    ],
)
def test_load_refuses_an_index_that_does_not_fit(tmp_path, name, edit, files, what):
    directory = _saved(tmp_path)
    _edit_array(directory, name, edit)
    assert what in _refused(directory, *files)


def _swap_first_two_ids(ids):
    """token_ids with its first two distinct ids exchanged wherever they occur."""
    first, second = np.unique(ids)[:2]
    out = ids.copy()
    out[ids == first], out[ids == second] = second, first
    return out


@pytest.mark.parametrize(
    "name, edit, files, what",
    [
        # an id no passage had: the vocabulary is not the tokens'
        ("token_ids", _set(0, 12345), ("index_vocabulary.npy", "token_ids.npy"),
         "vocabulary"),
        # the same ids in other places: passages' rows differ
        ("token_ids", _swap_first_two_ids, ("index_indptr.npy", "token_ids.npy"),
         "row of passage"),
        ("token_ids", lambda a: a[::-1].copy(), ("index_indices.npy", "token_ids.npy"),
         "row of passage"),
    ],
)
def test_load_refuses_an_index_that_is_not_of_the_tokens(tmp_path, name, edit, files, what):
    directory = _saved(tmp_path)
    _edit_array(directory, name, edit)
    assert what in _refused(directory, *files)


def test_load_names_the_first_passage_whose_row_differs(tmp_path):
    directory = _saved(tmp_path)
    corpus = Corpus.load(directory)
    indptr, indices = corpus.index.rows
    # passage 1 keeps its length but holds another column
    p = 1
    lo, hi = int(indptr[p]), int(indptr[p + 1])
    row = indices[lo:hi].tolist()
    other = next(c for c in range(corpus.index.n_terms) if c not in row)
    edited = indices.copy()
    edited[lo:hi] = sorted(row[1:] + [other])
    np.save(directory / "index_indices.npy", edited, allow_pickle=False)
    assert "row of passage 1 " in _refused(directory, "index_indices.npy", "token_ids.npy")


def test_the_constructor_checks_what_load_checks():
    corpus = Corpus.build(TEXTS)
    arrays = {name: getattr(corpus, name) for name in (
        "token_ids", "token_starts", "token_ends", "source_token_offsets", "passage_source",
        "passage_token_start", "passage_token_end", "passage_char_start", "passage_char_end",
        "passage_sentence_start", "passage_sentence_end",
    )}
    options = dict(window_size_sentences=1, window_stride_sentences=1, tokenizer_signature="t")
    Corpus(corpus.sources, arrays, corpus.index, **options)
    shorter = (SourceDocument("0", TEXTS[0][:5]),) + corpus.sources[1:]
    with pytest.raises(ValueError, match=r"token_ends, the sources' texts\): token \d+ "):
        Corpus(shorter, arrays, corpus.index, **options)
    with pytest.raises(ValueError, match=r"\(passage_source\)"):
        Corpus(corpus.sources, {**arrays, "passage_source": arrays["passage_source"] + 9},
               corpus.index, **options)


@settings(max_examples=60)
@given(
    texts=st.lists(
        st.text(max_size=40)
        | st.sampled_from(TEXTS + ["a\U0001f600b. C d.", " \n ", "...", "One. Two. Three."]),
        max_size=6,
    ),
    chunked=st.lists(st.booleans(), min_size=6, max_size=6),
    size=st.integers(1, 3),
    stride=st.integers(1, 3),
    tokenizer=st.sampled_from([None, "words"]),
    embedded=st.booleans(),
)
def test_every_built_corpus_loads_as_saved(texts, chunked, size, stride, tokenizer, embedded):
    # the load checks refuse nothing a built corpus holds: documents, chunks, sources of
    # no token or sentence, other tokenizers and windows
    import re
    import tempfile

    class Words:
        def tokenize(self, text):
            spans = [m.span() for m in re.finditer(r"\w+", text)]
            return [len(text[s:e]) for s, e in spans], spans

    sources = [
        SourceChunk(f"c{i}", text, 7, 7 + len(text)) if chunked[i] else text
        for i, text in enumerate(texts)
    ]
    corpus = Corpus.build(
        sources,
        tokenizer=Words() if tokenizer else None,
        window_size_sentences=size,
        window_stride_sentences=stride,
        embedder=_Lengths() if embedded else None,
    )
    with tempfile.TemporaryDirectory() as directory:
        corpus.save(directory)
        loaded = Corpus.load(directory)
    _assert_same_corpus_arrays(loaded, corpus)
    assert loaded.sources == corpus.sources
    assert (loaded.window_size_sentences, loaded.window_stride_sentences) == (size, stride)
    if embedded:
        assert loaded.embeddings.dtype == np.float32
        np.testing.assert_array_equal(loaded.embeddings, corpus.embeddings)
    else:
        assert loaded.embeddings is None


def _assert_same_corpus_arrays(a, b):
    """The same arrays (int64) and index (a loaded corpus has no first positions)."""
    for name in ARRAY_NAMES:
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
        assert getattr(a, name).dtype == np.int64
    for x, y in zip(a.index.to_arrays().values(), b.index.to_arrays().values()):
        assert x.tolist() == y.tolist()
    assert a.index.idf.tolist() == b.index.idf.tolist()


def test_metadata_must_be_json_to_save(tmp_path):
    corpus = Corpus.build([SourceDocument("a", "Text.", metadata={"when": object()})])
    with pytest.raises(TypeError, match="metadata"):
        corpus.save(tmp_path / "x")


def test_bad_sources_and_arguments():
    with pytest.raises(TypeError, match="sources"):
        Corpus.build("just a string")
    with pytest.raises(TypeError, match="sources"):
        Corpus.build({"id": "a", "text": "b"})
    with pytest.raises(TypeError, match=r"sources\[1\]"):
        Corpus.build(["ok", None])
    with pytest.raises(TypeError, match=r"sources\[0\]\['text'\]"):
        Corpus.build([{"text": 5}])
    with pytest.raises(ValueError, match="window_size_sentences"):
        Corpus.build(["x"], window_size_sentences=0)
    with pytest.raises(TypeError, match="window_stride_sentences"):
        Corpus.build(["x"], window_stride_sentences=1.5)
    with pytest.raises(TypeError, match="tokenizer"):
        Corpus.build(["x"], tokenizer=object())

    class Overlapping:
        def segment(self, text):
            return [(0, 3), (2, 4)]

    with pytest.raises(ValueError, match="overlapping"):
        Corpus.build(["abcdef"], segmenter=Overlapping())


@pytest.mark.parametrize(
    "sources, positions, source_id",
    [
        (["a b", {"id": "0", "text": "c d"}], (0, 1), "0"),  # a str takes its position
        ([{"id": "x", "text": "a"}, "b", {"id": "x", "text": "c"}], (0, 2), "x"),
        ([{"id": 7, "text": "a"}, SourceDocument("7", "b")], (0, 1), "7"),
        ([SourceChunk("d", "ab", 0, 2), {"id": "d", "text": "q"}], (0, 1), "d"),
        ([SourceDocument("d", "q"), SourceChunk("d", "ab", 0, 2)], (0, 1), "d"),
    ],
)
def test_sources_sharing_an_id_are_refused(sources, positions, source_id):
    from citekit import align_citations
    from citekit.pipeline import Pipeline

    first, second = positions
    message = rf"sources\[{first}\] and sources\[{second}\] have the same id '{source_id}'"
    with pytest.raises(ValueError, match=message):
        as_source_records(sources)
    with pytest.raises(ValueError, match=message):
        Corpus.build(sources)
    with pytest.raises(ValueError, match=message):
        Pipeline().prepare(sources)
    with pytest.raises(ValueError, match=message):
        align_citations("a b", sources)
    built = Corpus.build([f"text {n}" for n in range(len(sources))])
    records = as_source_records([f"text {n}" for n in range(len(sources))])
    duplicated = (records[0], SourceDocument(records[0].id, records[1].text)) + records[2:]
    with pytest.raises(ValueError, match="have the same id"):
        Corpus(
            duplicated,
            {name: getattr(built, name) for name in ARRAY_NAMES},
            built.index,
            window_size_sentences=1,
            window_stride_sentences=1,
            tokenizer_signature=built.tokenizer_signature,
        )


def test_chunks_of_one_document_share_their_source_id():
    chunks = [SourceChunk("d", "Revenue grew.", 0, 13), SourceChunk("d", "Costs fell.", 14, 25)]
    assert [c.source_id for c in Corpus.build(chunks).sources] == ["d", "d"]


def test_as_source_records_ids():
    records = as_source_records(
        ["x", {"text": "y"}, {"id": 7, "text": "z"}, {"id": None, "text": "w"},
         {"id": np.int64(12), "text": "v"}]
    )
    assert [r.id for r in records] == ["0", "1", "7", "3", "12"]
    # an id of another type would become its repr (different in every process)
    for bad in (object(), 1.5, True, b"a", ["a"]):
        with pytest.raises(TypeError, match=r"sources\[1\]\['id'\] must be a str or an int"):
            as_source_records(["x", {"id": bad, "text": "y"}])
    # metadata: a mapping or None, nothing else passes for empty
    for bad in (0, [], "", 1.5):
        with pytest.raises(TypeError, match=r"sources\[0\]\['metadata'\] must be a mapping"):
            as_source_records([{"text": "y", "metadata": bad}])


def test_as_source_records_equal_checked_records():
    from types import MappingProxyType

    meta = {"url": "u"}
    chunk = SourceChunk("c", "xt", 2, 4)
    records = as_source_records(
        ["x", {"id": "a", "text": "y", "metadata": meta},
         {"text": "z", "metadata": MappingProxyType(meta)}, {"text": "w", "metadata": None},
         chunk]
    )
    assert records == (
        SourceDocument("0", "x"),
        SourceDocument("a", "y", metadata=meta),
        SourceDocument("2", "z", metadata=meta),
        SourceDocument("3", "w"),
        chunk,
    )
    assert type(records[2].metadata) is dict and records[1].metadata is not meta
    assert records[4] is chunk
    with pytest.raises(TypeError, match=r"sources\[1\]\['metadata'\] must be a mapping"):
        as_source_records(["x", {"text": "y", "metadata": ["url"]}])
    with pytest.raises(TypeError, match=r"sources\[0\]\['text'\] must be a str"):
        as_source_records([{"text": b"y"}])
    with pytest.raises(ValueError, match=r"sources\[0\] is a mapping without a 'text' key"):
        as_source_records([{"id": "y"}])
    with pytest.raises(TypeError, match=r"sources\[1\] must be a str"):
        as_source_records(["x", 3])


def test_embed_texts_validation():
    class Wrong:
        def encode(self, texts):
            return [1.0]

    with pytest.raises(ValueError, match="one row per text"):
        embed_texts(Wrong(), ["a", "b"])

    class NotFinite:
        def encode(self, texts):
            return [[float("nan")] for _ in texts]

    with pytest.raises(ValueError, match="non-finite"):
        embed_texts(NotFinite(), ["a"])
    with pytest.raises(TypeError, match="embedder"):
        embed_texts(object(), ["a"])


def test_empty_corpus():
    corpus = Corpus.build([])
    assert corpus.n_sources == 0 and corpus.n_passages == 0 and corpus.n_tokens == 0


def test_pickled_corpus_leaves_alignment_caches_behind():
    import pickle

    from citekit.pipeline import Pipeline
    from citekit.results import results_to_json

    pipe = Pipeline()
    corpus = pipe.prepare(
        ["Revenue grows fast. Costs fell 5% in 2023.", "Analysts expected growth."]
    )
    answer = "Revenue grew as analysts expected. Costs rose 5% in 2023."
    before = results_to_json(pipe.align(answer, corpus))
    assert {"surface_forms", "passage_directions"} <= set(corpus.caches)
    assert '"fell 5%"' in before  # (the second sentence's conflict)
    copy = pickle.loads(pickle.dumps(corpus))
    assert copy.caches == {} and corpus.caches
    assert results_to_json(pipe.align(answer, copy)) == before


def test_a_corpus_saved_under_another_id_scheme_is_refused(tmp_path):
    from citekit.pipeline import Pipeline

    corpus = Pipeline().prepare(["Revenue grew 5%."])
    assert "[ids: fnv1a-64]" in corpus.tokenizer_signature
    corpus.save(tmp_path / "corpus")
    meta_path = next(p for p in (tmp_path / "corpus").iterdir() if p.suffix == ".json")
    meta = json.loads(meta_path.read_text())
    # as a corpus saved before the id scheme was recorded (or under another one) looks
    meta["tokenizer_signature"] = meta["tokenizer_signature"].replace("[ids: fnv1a-64]", "")
    meta_path.write_text(json.dumps(meta))
    old = Corpus.load(tmp_path / "corpus")
    with pytest.raises(ValueError, match="tokenizer does not match"):
        Pipeline().align("Revenue grew 5%.", old)


class _OwnTokenize(SimpleTokenizer):
    """Same tokens, but an overridden ``tokenize``: read text by text, checked."""

    def tokenize(self, text):
        return super().tokenize(text)


class _OwnSegment(SentenceSegmenter):
    def segment(self, text):
        return super().segment(text)


def _assert_same_corpus(a, b):
    _assert_same_corpus_arrays(a, b)
    assert a.index.first_positions.tolist() == b.index.first_positions.tolist()


@settings(max_examples=100)
@given(
    texts=st.lists(
        st.text() | st.sampled_from(TEXTS + ["a\U0001f600b. C d.", " \n "]), max_size=5
    ),
    size=st.integers(1, 3),
    stride=st.integers(1, 3),
)
def test_sources_read_in_one_call_give_the_corpus_of_text_by_text(texts, size, stride):
    # citekit's own stages read all sources in one kernel call each; overriding a stage's
    # method makes Corpus.build call it text by text: the same corpus either way
    fast = Corpus.build(texts, window_size_sentences=size, window_stride_sentences=stride)
    for tokenizer, segmenter in ((_OwnTokenize(), None), (None, _OwnSegment())):
        slow = Corpus.build(
            texts,
            tokenizer=tokenizer,
            segmenter=segmenter,
            window_size_sentences=size,
            window_stride_sentences=stride,
        )
        _assert_same_corpus(fast, slow)


def test_tokenize_and_segment_checks_other_stages():
    from citekit._reading import tokenize_and_segment

    class BadSpans:
        def segment(self, text):
            return [(0, len(text) + 1)]

    with pytest.raises(ValueError, match="source_segmenter"):
        tokenize_and_segment(
            SimpleTokenizer(), BadSpans(), ["abc"], segmenter_name="source_segmenter"
        )
    with pytest.raises(TypeError, match="tokenizer"):
        tokenize_and_segment(object(), SentenceSegmenter(), ["abc"])
    empty = tokenize_and_segment(SimpleTokenizer(), SentenceSegmenter(), [])
    assert [a.shape for a in empty] == [(0,), (0,), (0,), (1,), (0, 2), (1,)]


class _ManyWords:
    """A protocol tokenizer of its own, with ``tokenize_many`` (counting its calls)."""

    calls = 0

    def tokenize(self, text):
        tokens = SimpleTokenizer().tokenize(text)
        return tokens.token_ids, tokens.spans

    def tokenize_many(self, texts):
        type(self).calls += 1
        ids, starts, ends, offsets = SimpleTokenizer().tokenize_many(list(texts))
        return ids.tolist(), starts.tolist(), ends.tolist(), offsets.tolist()


class _ManySentences:
    """A protocol segmenter of its own, with ``segment_many`` (empty spans included)."""

    calls = 0

    def segment(self, text):
        return [(0, 0)] + SentenceSegmenter().segment(text)

    def segment_many(self, texts):
        type(self).calls += 1
        spans = [(0, 0, number) for number in range(len(texts))]  # an empty span per text
        for number, text in enumerate(texts):
            spans += [(a, b, number) for a, b in SentenceSegmenter().segment(text)]
        spans.sort(key=lambda span: (span[2], span[0], span[1]))
        offsets = np.searchsorted([span[2] for span in spans], np.arange(len(texts) + 1))
        return [span[:2] for span in spans], offsets


def test_other_stages_offering_the_many_texts_methods_are_read_with_them():
    from citekit._reading import tokenize_and_segment

    texts = TEXTS + ["a\U0001f600b. C d.", "ŀa ŀb. Ĳ 1,200."]
    expected = tokenize_and_segment(SimpleTokenizer(), SentenceSegmenter(), texts)
    _ManyWords.calls = _ManySentences.calls = 0
    found = tokenize_and_segment(_ManyWords(), _ManySentences(), texts)
    assert _ManyWords.calls == _ManySentences.calls == 1  # (one batch)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected))  # empty spans dropped
    assert [a.dtype for a in found] == [np.int64] * 6
    # only one stage offering it: both read text by text
    for tokenizer, segmenter in ((_ManyWords(), _OwnSegment()), (_OwnTokenize(), _ManySentences())):
        _ManyWords.calls = _ManySentences.calls = 0
        found = tokenize_and_segment(tokenizer, segmenter, texts)
        assert _ManyWords.calls == _ManySentences.calls == 0
        assert all(np.array_equal(a, b) for a, b in zip(found, expected))
    _assert_same_corpus(
        Corpus.build(texts, tokenizer=_ManyWords(), segmenter=_ManySentences()),
        Corpus.build(texts),
    )


def test_many_texts_methods_are_used_when_they_know_the_one_text_methods():
    from citekit._reading import _reads_many

    class BothOverridden(_OwnTokenize):
        def tokenize_many(self, texts, *, out=None):
            return super().tokenize_many(texts, out=out)

    class Many(SentenceSegmenter):  # a subclass's own segment_many, the same segment
        def segment_many(self, texts):
            return super().segment_many(texts)

    class OwnArray(SentenceSegmenter):
        def segment_array(self, text):
            return super().segment_array(text)

    assert _reads_many(SimpleTokenizer(), SentenceSegmenter())
    assert _reads_many(BothOverridden(), Many())
    assert _reads_many(_ManyWords(), _ManySentences())
    # an inherited many-texts method does not know a subclass's own one-text method
    assert not _reads_many(_OwnTokenize(), SentenceSegmenter())
    assert not _reads_many(SimpleTokenizer(), _OwnSegment())
    assert not _reads_many(SimpleTokenizer(), OwnArray())
    assert not _reads_many(object(), SentenceSegmenter())


@pytest.mark.parametrize(
    "tokens, spans, error, message",
    [
        (None, ([(0, 99)], [0, 1, 1]), ValueError,
         r"source_segmenter.segment_many\(texts\[0\]\) returned a span outside \[0, 3\]"),
        (None, ([(0, 2), (1, 3)], [0, 2, 2]), ValueError, "unordered or overlapping spans"),
        (None, ([(2, 1)], [0, 1, 1]), ValueError, r"reversed span \(2, 1\) for sentence 0"),
        (None, ([(0, 3)], [0, 1]), ValueError, "offsets that are not 3 non-decreasing"),
        (None, ([(0.5, 3)], [0, 1, 1]), TypeError, "integer arrays"),
        (None, ([0, 3], [0, 1, 1]), ValueError, r"spans of shape \(2,\)"),
        (None, 7, TypeError, r"must return \(spans, offsets\)"),
        (([1], [0], [4], [0, 1, 1]), None, ValueError,
         r"tokenizer.tokenize_many\(texts\[0\]\) returned a span outside \[0, 3\]"),
    ],
)
def test_other_stages_many_texts_results_are_checked(tokens, spans, error, message):
    from citekit._reading import tokenize_and_segment

    class Tokens(_ManyWords):
        def tokenize_many(self, texts):
            return tokens if tokens is not None else super().tokenize_many(texts)

    class Spans(_ManySentences):
        def segment_many(self, texts):
            return spans if spans is not None else super().segment_many(texts)

    with pytest.raises(error, match=message):
        tokenize_and_segment(
            Tokens(), Spans(), ["abc", "de"], segmenter_name="source_segmenter"
        )


def test_sources_read_in_several_batches_give_the_same_corpus(monkeypatch, workload):
    from citekit import _reading

    texts = [d["text"] for d in workload.make_documents(12, seed=5)]
    texts[3:3] = ["", "東京で 5.2％ 上昇。次です。", "a\U0001f600b. C d."]
    one_call = Corpus.build(texts)
    df = one_call.index.document_frequency  # the IDF as numpy computes it
    expected_idf = np.log((one_call.n_passages + 1.0) / (df + 1.0)) + 1.0
    assert one_call.index.idf.tolist() == expected_idf.tolist()
    monkeypatch.setattr(_reading, "_BATCH_CHARS", 9000)  # a document or two per call
    assert len(_reading._batches(texts)) > 5
    _assert_same_corpus(Corpus.build(texts), one_call)
    _assert_same_corpus(Corpus.build(texts, tokenizer=_OwnTokenize()), one_call)


def test_sources_read_on_several_threads_give_the_same_corpus(monkeypatch, workload):
    import threading

    from citekit import _reading

    texts = [d["text"] for d in workload.make_documents(12, seed=6)]
    # texts the kernel reads in part (hybrid) or not at all, an empty one, emoji
    texts[2:2] = ["", "東京で 5.2％ 上昇。次です。", "a\U0001f600b. C d.", "ŀa ŀb. Ĳ 1,200."]
    one_thread = Corpus.build(texts, n_threads=1)
    expected = _reading.tokenize_and_segment(
        SimpleTokenizer(), SentenceSegmenter(), texts, n_threads=1
    )
    # every build here reads on threads, a document or two per batch
    monkeypatch.setattr(_reading, "_PARALLEL_MIN_CHARS", 1)
    monkeypatch.setattr(_reading, "_BATCH_CHARS", 9000)
    assert len(_reading._batches(texts)) > 5
    threads_before = threading.active_count()
    for n_threads in (2, 3, 16):
        found = _reading.tokenize_and_segment(
            SimpleTokenizer(), SentenceSegmenter(), texts, n_threads=n_threads
        )
        assert all(np.array_equal(a, b) for a, b in zip(found, expected))
        assert [a.dtype for a in found] == [a.dtype for a in expected]
    _assert_same_corpus(Corpus.build(texts, n_threads=2), one_thread)
    _assert_same_corpus(Corpus.build(texts), one_thread)  # numba's thread count
    assert threading.active_count() == threads_before  # no reading thread left running

    class Failing(SentenceSegmenter):
        threads: set = set()
        # both threads (the caller's and one started for the call) read batches at once
        both = threading.Barrier(2)

        def segment_many(self, batch):
            if threading.get_ident() not in self.threads:
                self.threads.add(threading.get_ident())
                self.both.wait(timeout=30)
            if "boom" in batch.joined:
                raise RuntimeError("boom")
            return super().segment_many(batch)

    found = _reading.tokenize_and_segment(SimpleTokenizer(), Failing(), texts, n_threads=2)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected))
    assert threading.get_ident() in Failing.threads and len(Failing.threads) == 2
    Failing.threads.clear()
    Failing.both.reset()

    # an error in a reading thread reaches the caller
    with pytest.raises(RuntimeError, match="boom"):
        _reading.tokenize_and_segment(
            SimpleTokenizer(), Failing(), texts + ["boom."] + texts, n_threads=2
        )
    assert threading.active_count() == threads_before


def test_reading_threads_follow_n_threads_and_size(monkeypatch):
    import numba

    from citekit import Pipeline, _reading

    assert _reading._reading_threads(None, ["short text"]) == 1
    big = ["x" * _reading._PARALLEL_MIN_CHARS]
    assert _reading._reading_threads(3, big) == 3
    assert _reading._reading_threads(None, big) == numba.get_num_threads()
    seen = []
    real = _reading._reading_threads

    def recording(n_threads, texts):
        seen.append(n_threads)
        return real(n_threads, texts)

    monkeypatch.setattr(_reading, "_reading_threads", recording)
    monkeypatch.setattr(_reading, "_BATCH_CHARS", 5)  # a batch per source
    Pipeline(n_threads=1).prepare(["One source.", "Two sentences."])
    Corpus.build(["A source.", "Another."])
    Corpus.build(["One batch only."])  # (never more than one thread)
    assert seen == [1, None]
    for bad, error in ((0, ValueError), (numba.config.NUMBA_NUM_THREADS + 1, ValueError),
                       (1.5, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="n_threads"):
            Corpus.build(["A source."], n_threads=bad)


def test_tokenizer_signatures_kept_only_for_configurations_that_cannot_change():
    from dataclasses import dataclass

    from citekit._reading import tokenizer_signature
    from citekit.tokenizers import TokenizerConfig

    first = tokenizer_signature(SimpleTokenizer())
    assert tokenizer_signature(SimpleTokenizer()) == first
    other = tokenizer_signature(SimpleTokenizer(TokenizerConfig(casefold=False)))
    assert other != first and "casefold=False" in other

    @dataclass
    class Options:  # not frozen: may change between calls
        lower: bool = True

    class Mutable:
        id_scheme = ["not", "hashable"]

        def __init__(self):
            self.config = Options()

        def tokenize(self, text):
            return [], []

    tokenizer = Mutable()
    before = tokenizer_signature(tokenizer)
    tokenizer.config.lower = False
    after = tokenizer_signature(tokenizer)
    assert "lower=True" in before and "lower=False" in after
    assert after.endswith("[ids: ['not', 'hashable']]")
