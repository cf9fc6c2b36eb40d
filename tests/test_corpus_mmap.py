"""Corpus.load(path, mmap=True): the results of the corpus in memory, a load that does not
grow with the corpus, memory that grows with what queries touch, pickling as a path, and
corpora saved in format version 1."""

import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _version_1 import save_version_1

import citekit
from citekit import _mapped_sources
from citekit._corpus_files import ARRAY_NAMES
from citekit._mapped_sources import MappedSources
from citekit.corpus import Corpus
from citekit.results import AlignmentResult, SourceChunk, SourceDocument

V1_FIXTURE = Path(__file__).parent / "data" / "corpus_v1"
PER_SOURCE = ("source_indices", "base_offsets", "source_documents")


def _results(pipeline, corpus, answers):
    return [[span.to_dict() for span in result] for result in pipeline.align_many(answers, corpus)]


def _words(seed, n_documents, words_per_document):
    """Deterministic English-like documents of numbered words and figures."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{k}" for k in range(3000)] + ["grew", "fell", "revenue", "costs"]
    documents = []
    for _ in range(n_documents):
        picks = rng.integers(0, len(vocabulary), words_per_document)
        sentences = [
            " ".join(vocabulary[p] for p in picks[i : i + 12]) + f" {rng.integers(1, 99)}%."
            for i in range(0, words_per_document, 12)
        ]
        documents.append(" ".join(sentences))
    return documents


def _own_words(n_documents, sentences_per_document):
    """Documents of function words and words of their own (as names, figures and rare
    terms make most of a real document's content words rare)."""
    function_words = ["the", "of", "and", "to", "in", "was", "for", "on", "with", "is"]
    documents = []
    for document in range(n_documents):
        sentences = []
        for sentence in range(sentences_per_document):
            words = []
            for k in range(6):
                words += [function_words[(sentence + k) % 10], f"t{document}s{sentence}w{k}"]
            sentences.append(" ".join(words).capitalize() + f" {sentence % 90 + 2}%.")
        documents.append(" ".join(sentences))
    return documents


def _same_corpus(mapped, corpus):
    assert isinstance(mapped.sources, MappedSources)
    assert mapped.sources == corpus.sources and corpus.sources == mapped.sources
    assert tuple(mapped.sources) == corpus.sources
    assert mapped.source_ids == corpus.source_ids and tuple(mapped.source_ids) == corpus.source_ids
    for name in (*ARRAY_NAMES, *PER_SOURCE):
        np.testing.assert_array_equal(getattr(mapped, name), getattr(corpus, name))
    assert mapped.chunks_share_documents == corpus.chunks_share_documents
    np.testing.assert_array_equal(mapped.index.idf, corpus.index.idf)
    for source in range(corpus.n_sources):
        assert mapped.source_text(source) == corpus.source_text(source)
    for passage in range(corpus.n_passages):
        assert mapped.passage_text(passage) == corpus.passage_text(passage)


# every code point, lone surrogates (category Cs, which st.characters leaves out) included
_ANY_STRING = st.text(
    st.characters() | st.characters(categories=["Cs"]) | st.sampled_from(". \n"), max_size=30
)
_SENTENCES = st.lists(
    st.sampled_from(["Revenue grew 15%.", "Costs fell 3%.", "Ice melts at 0 degrees.", " "]),
    max_size=3,
).map(" ".join)


@st.composite
def _sources(draw):
    """Documents and chunks (with or without document text and source_index; chunks of one
    document share its id) of any text, id and metadata."""
    n = draw(st.integers(1, 5))
    ids = draw(st.lists(_ANY_STRING, min_size=n, max_size=n, unique=True))
    records = []
    for position in range(n):
        text = draw(_ANY_STRING | _SENTENCES)
        metadata = draw(st.dictionaries(_ANY_STRING, _ANY_STRING | st.integers(), max_size=2))
        kind = draw(st.sampled_from(["document", "chunk", "chunk of the first"]))
        if kind == "document" or (kind == "chunk of the first" and position == 0):
            records.append(SourceDocument(ids[position], text, metadata=metadata))
            continue
        source_id = ids[0] if kind == "chunk of the first" else ids[position]
        if kind == "chunk of the first" and isinstance(records[0], SourceDocument):
            source_id = ids[position]  # (a document and chunks never share an id)
        prefix = draw(_ANY_STRING)
        whole = draw(st.booleans())
        records.append(
            SourceChunk(
                source_id, text, len(prefix), len(prefix) + len(text), metadata=metadata,
                document_text=prefix + text if whole else None,
                source_index=draw(st.none() | st.integers(0, 2**53 - 1)),
            )
        )
    return records


@settings(max_examples=30, deadline=None)
@given(sources=_sources(), answer=_ANY_STRING | _SENTENCES)
def test_a_mapped_corpus_gives_the_results_of_the_corpus_in_memory(sources, answer):
    pipeline = citekit.Pipeline()
    corpus = pipeline.prepare(sources)
    answers = [answer, *(record.text for record in sources[:2])]
    with tempfile.TemporaryDirectory() as folder:
        corpus.save(folder)
        mapped = Corpus.load(folder, mmap=True)
        _same_corpus(mapped, corpus)
        assert _results(pipeline, mapped, answers) == _results(pipeline, corpus, answers)
        verified = Corpus.load(folder, mmap=True, verify=True)
        assert verified.sources == corpus.sources
        loaded = Corpus.load(folder)
        assert loaded.sources == corpus.sources and isinstance(loaded.sources, tuple)
        for result in pipeline.align_many(answers, mapped):
            for span in result:
                for citation in span.citations:  # (offsets in the original strings)
                    position = citation.source_index
                    record = mapped.sources[position] if position < len(sources) else None
                    if isinstance(record, SourceDocument) and record.id == citation.source_id:
                        text = record.text
                        assert text[citation.char_start : citation.char_end] == citation.evidence


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A corpus of documents and chunks, in memory and saved."""
    document = "Preface.\r\nRevenue grew 15% in 2024 \U0001f600. Costs fell\udc00 3%."
    start = document.index("Revenue")
    sources = [
        SourceDocument("a", "Revenue grew 15% in 2024. Costs fell 3%.", {"year": 2024}),
        "",
        SourceChunk("d", document[start:], start, len(document), document_text=document),
        SourceChunk("d", "Ice melts at 0 degrees.", 200, 223, source_index=9),
        "Water boils at 100 degrees. Ice melts at 0 degrees.",
    ]
    pipeline = citekit.Pipeline()
    corpus = pipeline.prepare(sources)
    directory = tmp_path_factory.mktemp("mapped") / "c"
    corpus.save(directory)
    return pipeline, corpus, directory


def test_the_sources_of_a_mapped_corpus_are_a_read_only_sequence(saved):
    _, corpus, directory = saved
    sources = Corpus.load(directory, mmap=True).sources
    expected = corpus.sources
    assert len(sources) == 5
    assert [sources[i] for i in range(5)] == list(expected)
    assert sources[-1] == expected[-1] and sources[np.int64(2)] == expected[2]
    assert sources[1:4] == expected[1:4] and isinstance(sources[1:4], tuple)
    assert sources[::-2] == expected[::-2] and sources[7:] == ()
    assert list(iter(sources)) == list(expected)
    assert sources == expected and expected == sources and not sources != expected
    assert sources != expected[:-1] and sources != expected[::-1]
    assert sources != list(expected)  # (as a tuple is not a list)
    assert sources.index(expected[3]) == 3 and expected[2] in sources
    assert "5 sources" in repr(sources)
    for bad in (5, -6):
        with pytest.raises(IndexError):
            sources[bad]
    with pytest.raises(TypeError, match="str"):
        sources["1"]
    with pytest.raises(TypeError):
        hash(sources)
    with pytest.raises(TypeError):
        sources[0] = expected[0]
    assert sources.text(2) == expected[2].text and sources.text(-1) == expected[-1].text


def test_a_mapped_load_reads_no_source(saved, monkeypatch):
    _, corpus, directory = saved

    def refused(*args, **kwargs):
        raise AssertionError("a source was decoded while loading")

    monkeypatch.setattr(_mapped_sources.SourceFiles, "record", refused)
    monkeypatch.setattr(_mapped_sources.SourceFiles, "string", refused)
    mapped = Corpus.load(directory, mmap=True)
    assert mapped.n_sources == corpus.n_sources and mapped.n_passages == corpus.n_passages


def test_the_arrays_are_mapped_and_reach_the_kernels_without_a_copy(saved):
    _, _, directory = saved
    mapped = Corpus.load(directory, mmap=True)
    arrays = [getattr(mapped, name) for name in (*ARRAY_NAMES, *PER_SOURCE)]
    arrays += [mapped.index.vocabulary, mapped.index.idf, *mapped.index.rows,
               *mapped.index._walk_postings]
    for array in arrays:
        assert type(array) is np.ndarray and isinstance(array.base, np.memmap)
        assert array.flags.writeable and array.flags.c_contiguous and array.flags.aligned
        # (what the kernels' wrappers do to their arrays)
        assert np.ascontiguousarray(array, dtype=array.dtype) is array
    for name in ARRAY_NAMES:
        array = getattr(mapped, name)
        assert np.shares_memory(np.ascontiguousarray(array, dtype=np.int64), array)
    from citekit.kernels._retrieval import walk_passages

    postings = mapped.index._walk_postings[1]
    assert walk_passages(postings, mapped.n_passages) is postings


def test_aligning_against_a_mapped_corpus_compiles_nothing(saved):
    from numba.core import event

    pipeline, corpus, directory = saved
    answers = ["Revenue grew 15% in 2024.", "Ice melts at 0 degrees. Costs fell 3%."]
    expected = _results(pipeline, corpus, answers)  # (compiled or loaded from the cache)
    mapped = Corpus.load(directory, mmap=True)
    with event.install_recorder("numba:compile") as recorder:
        assert _results(pipeline, mapped, answers) == expected
    assert recorder.buffer == []


def test_a_result_keeps_the_mapped_sources_and_a_query_decodes_few(tmp_path, monkeypatch):
    pipeline = citekit.Pipeline()
    documents = _words(1, 400, 60)
    corpus = pipeline.prepare(documents)
    corpus.save(tmp_path / "c")
    mapped = Corpus.load(tmp_path / "c", mmap=True)
    decoded = []
    string = _mapped_sources.SourceFiles.string

    def counting(files, blob, entry):
        decoded.append((blob, entry))
        return string(files, blob, entry)

    monkeypatch.setattr(_mapped_sources.SourceFiles, "string", counting)
    answer = documents[7][:80].rsplit(" ", 1)[0] + "."
    result = pipeline.align(answer, mapped)
    assert isinstance(result, AlignmentResult) and result.sources is mapped.sources
    sources = {entry for blob, entry in decoded if blob == "text"}
    assert 7 in sources and len(sources) < len(documents) // 4, len(sources)
    monkeypatch.undo()
    assert [span.to_dict() for span in result] == _results(pipeline, corpus, [answer])[0]


def test_showing_and_exporting_a_result_read_only_the_cited_sources(tmp_path, monkeypatch):
    # a result against a large mapped corpus is rendered and exported to UTF-16 rows by
    # decoding the sources it cites (and the labels the HTML names), not every source
    from citekit.batch import to_records
    from citekit.display import UNCITED_NAMED, render_html

    pipeline = citekit.Pipeline()
    documents = _words(2, 1500, 24)
    pipeline.prepare(documents).save(tmp_path / "c")
    mapped = Corpus.load(tmp_path / "c", mmap=True)
    answer = documents[1200][:70].rsplit(" ", 1)[0] + "."
    result = pipeline.align(answer, mapped)
    cited = {c.source_index for span in result for c in span.citations}
    assert 1200 in cited
    decoded = []
    string = _mapped_sources.SourceFiles.string

    def counting(files, blob, entry):
        decoded.append((blob, entry))
        return string(files, blob, entry)

    monkeypatch.setattr(_mapped_sources.SourceFiles, "string", counting)
    page = render_html(list(result), answer, mapped.sources)
    rows = to_records(list(result), offsets="utf16", answer=answer, sources=mapped.sources)
    # the cited sources, and the first uncited ones the HTML names (read as records)
    texts = {entry for blob, entry in decoded if blob == "text"}
    named = set(range(UNCITED_NAMED + len(cited)))
    assert cited <= texts <= cited | named, (texts, cited)
    n_more = len(documents) - len(cited) - UNCITED_NAMED
    assert f"and {n_more:,} more" in page
    monkeypatch.undo()
    in_memory = tuple(mapped.sources)  # (every source decoded)
    assert rows == to_records(list(result), offsets="utf16", answer=answer, sources=in_memory)


def _best_of(runs, function):
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def test_a_mapped_load_does_not_grow_with_the_corpus(tmp_path):
    # 100 times the documents: a load reading or checking every source takes 100 times
    # as long (a 20,000-document in-memory load: about 1 s here), a mapped one as long
    for n in (200, 20_000):
        Corpus.build([f"Document {k} says {k % 97} grew." for k in range(n)]).save(
            tmp_path / str(n)
        )
    small = _best_of(5, lambda: Corpus.load(tmp_path / "200", mmap=True))
    large = _best_of(5, lambda: Corpus.load(tmp_path / "20000", mmap=True))
    assert large < 3 * small + 0.02, (small, large)
    full = _best_of(1, lambda: Corpus.load(tmp_path / "20000"))
    assert large < full / 5, (large, full)


def _resident_bytes(directory, field="Rss:"):
    """Bytes of the files of ``directory`` that this process has resident (its mappings'
    ``field`` in /proc/self/smaps)."""
    total, counting = 0, False
    prefix = str(directory) + os.sep
    with open("/proc/self/smaps") as handle:
        for line in handle:
            fields = line.split()
            if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header
                counting = len(fields) >= 6 and fields[5].startswith(prefix)
            elif counting and fields[0] == field:
                total += int(fields[1]) * 1024
    return total


def _read_page_by_page(directory, corpus):
    """Make the system read the files of a mapped corpus a page at a time: out of the page
    cache, and no read-ahead (else every page fault brings and maps its neighbours, up to
    128 KB: a test corpus of a few tens of MB would look resident after a few dozen)."""
    import mmap

    for entry in os.scandir(directory):
        descriptor = os.open(entry.path, os.O_RDONLY)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(descriptor)
    files = corpus.sources.files
    arrays = [*vars(corpus).values(), *vars(corpus.index).values(), *files.arrays.values(),
              *files.offsets.values()]
    maps = [blob for blob in files.blobs.values() if isinstance(blob, mmap.mmap)]
    for value in arrays:
        for array in value if isinstance(value, tuple) else (value,):
            if isinstance(array, np.ndarray) and isinstance(array.base, np.memmap):
                maps.append(array.base._mmap)
    for mapping in maps:
        mapping.madvise(mmap.MADV_RANDOM)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_resident_memory_grows_with_what_queries_touch(tmp_path):
    pipeline = citekit.Pipeline()
    documents = _own_words(1500, 30)
    corpus = pipeline.prepare(documents)
    directory = tmp_path / "c"
    corpus.save(directory)
    del corpus
    saved_bytes = sum(entry.stat().st_size for entry in directory.iterdir())
    assert saved_bytes > 30_000_000
    mapped = Corpus.load(directory, mmap=True)
    _read_page_by_page(directory, mapped)
    after_load = _resident_bytes(directory)
    assert after_load < saved_bytes / 50, (after_load, saved_bytes)
    # the first query also makes the retrieval's per-corpus scratch (the passages of the
    # most frequent words: those lists are read whole once)
    first = pipeline.align(documents[5].split("%.")[2] + "%.", mapped)
    assert first[0].citations[0].source_id == "5"
    after_first = _resident_bytes(directory)
    assert after_first < saved_bytes / 4, (after_first, saved_bytes)
    answers = [documents[k].split("%.")[5] + "%." for k in (3, 700, 1400)]
    results = pipeline.align_many(answers, mapped)
    assert [result[0].citations[0].source_id for result in results] == ["3", "700", "1400"]
    grown = _resident_bytes(directory) - after_first
    assert 0 < grown < saved_bytes / 40, (grown, saved_bytes)
    # read, never written: no page of the files was copied
    assert _resident_bytes(directory, "Private_Dirty:") == 0


def test_a_mapped_corpus_pickles_as_its_path(saved, tmp_path):
    pipeline, corpus, directory = saved
    copy = tmp_path / "c"
    shutil.copytree(directory, copy)
    mapped = Corpus.load(copy, mmap=True)
    answers = ["Revenue grew 15% in 2024.", "Ice melts at 0 degrees."]
    data = pickle.dumps(mapped)
    assert len(data) < 2000 < len(pickle.dumps(corpus))
    again = pickle.loads(data)
    assert again.mapped_from == str(copy) and isinstance(again.sources, MappedSources)
    _same_corpus(again, corpus)
    assert _results(pipeline, again, answers) == _results(pipeline, corpus, answers)
    sources = pickle.loads(pickle.dumps(mapped.sources))
    assert sources == corpus.sources and len(pickle.dumps(mapped.sources)) < 1000
    # what was set after mapping travels by value
    mapped.embeddings = np.ones((mapped.n_passages, 2), dtype=np.float32)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(mapped)).embeddings,
                                  mapped.embeddings)
    # another save at the path: not the corpus that was pickled
    Corpus.build(["Other text."]).save(copy)
    with pytest.raises(ValueError, match="replaced since it was memory-mapped"):
        pickle.loads(data)
    shutil.rmtree(copy)
    with pytest.raises(FileNotFoundError):
        pickle.loads(data)


def test_batch_scoring_in_worker_processes_maps_the_corpus_again(saved):
    from citekit.batch import score_records

    pipeline, corpus, directory = saved
    mapped = Corpus.load(directory, mmap=True)
    records = [{"id": k, "answer": a} for k, a in enumerate(
        ["Revenue grew 15% in 2024.", "Ice melts at 0 degrees.", "Costs fell 3%."])]
    serial = score_records(
        records, pipeline=pipeline, corpus=corpus, n_jobs=1, show_progress=False
    )
    parallel = score_records(
        records, pipeline=pipeline, corpus=mapped, n_jobs=2, show_progress=False
    )
    assert [[s.to_dict() for s in r.result] for r in parallel] == [
        [s.to_dict() for s in r.result] for r in serial
    ]
    assert all(r.result.sources is mapped.sources for r in parallel)


# -- format version 1 -----------------------------------------------------------------


def _fixture_sources():
    """The sources tests/data/corpus_v1 was saved from (by citekit's format version 1)."""
    document = "Preface.\r\nRevenue grew 15% in 2024 \U0001f600. Costs fell\udc00 3%."
    start = document.index("Revenue")
    return [
        SourceDocument("report", "Revenue grew 15% in 2024. Costs fell 3% ﬁnally.",
                       metadata={"year": 2024, "tags": ["a", "\ud800"]}),
        "",
        SourceChunk("doc", document[start:], start, len(document), document_text=document,
                    source_index=7),
        "Water boils at 100 degrees. Ice melts at 0 degrees.",
    ]


def test_a_corpus_saved_in_format_version_1_still_loads(tmp_path):
    pipeline = citekit.Pipeline()
    corpus = pipeline.prepare(_fixture_sources())
    loaded = Corpus.load(V1_FIXTURE)
    assert loaded.sources == corpus.sources
    for name in ARRAY_NAMES:
        np.testing.assert_array_equal(getattr(loaded, name), getattr(corpus, name))
    answers = ["Revenue grew 15% in 2024.", "Costs fell\udc00 3%.", "Ice melts at 0 degrees."]
    assert _results(pipeline, loaded, answers) == _results(pipeline, corpus, answers)
    with pytest.raises(ValueError, match="version 1.*cannot be memory-mapped"):
        Corpus.load(V1_FIXTURE, mmap=True)
    # loaded and saved again: the current format, which maps
    loaded.save(tmp_path / "again")
    _same_corpus(Corpus.load(tmp_path / "again", mmap=True), corpus)
    # (the test helper writes what that citekit wrote)
    save_version_1(corpus, tmp_path / "v1")
    assert sorted(os.listdir(tmp_path / "v1")) == sorted(os.listdir(V1_FIXTURE))
    assert Corpus.load(tmp_path / "v1").sources == corpus.sources


# -- damaged files --------------------------------------------------------------------


def _copy(saved, tmp_path):
    directory = tmp_path / "c"
    shutil.copytree(saved[2], directory)
    return directory


def _set_json(directory, **values):
    import json

    path = directory / "corpus.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    for key, value in values.items():
        if value is None:
            del meta[key]
        else:
            meta[key] = value
    path.write_text(json.dumps(meta), encoding="utf-8")


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize(
    "values, what",
    [
        ({"n_sources": 4}, "source_kinds.npy"),
        ({"n_sources": -1}, "n_sources must be >= 0"),
        ({"n_sources": None}, "no 'n_sources'"),
        ({"n_document_texts": 2}, "source_document_text_bytes.npy"),
        ({"save_id": 5}, "'save_id' must be a str"),
        ({"chunks_share_documents": "no"}, "'chunks_share_documents' must be a bool"),
        ({"version": 3}, "version 1 or 2"),
    ],
)
def test_a_load_names_what_is_wrong_in_corpus_json(saved, tmp_path, values, what, mmap):
    directory = _copy(saved, tmp_path)
    _set_json(directory, **values)
    with pytest.raises(ValueError) as info:
        Corpus.load(directory, mmap=mmap)
    assert what in str(info.value)


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize("blob", ["text", "id", "metadata", "document_text"])
def test_a_load_names_a_cut_or_missing_source_file(saved, tmp_path, blob, mmap):
    directory = _copy(saved, tmp_path)
    path = directory / f"sources_{blob}.bin"
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match=rf"sources_{blob}\.bin.*damaged.*file's size"):
        Corpus.load(directory, mmap=mmap)
    path.unlink()
    with pytest.raises(FileNotFoundError, match=rf"sources_{blob}\.bin") as info:
        Corpus.load(directory, mmap=mmap)
    assert info.value.filename == str(path)


def test_damage_only_a_full_check_finds_is_found_by_verify(saved, tmp_path):
    pipeline, corpus, directory = saved
    directory = _copy(saved, tmp_path)
    texts = directory / "sources_text.bin"
    data = texts.read_bytes()
    # a text of as many bytes but fewer characters: its tokens end beyond it
    cut = data.replace("in 2024.".encode(), "\U0001f600 24.".encode()[:8], 1)
    assert len(cut) == len(data)
    texts.write_bytes(cut)
    mapped = Corpus.load(directory, mmap=True)  # (not decoded: not found)
    assert mapped.sources[1] == corpus.sources[1]
    with pytest.raises(ValueError, match=r"token_ends\.npy.*sources_text\.bin.*beyond"):
        Corpus.load(directory, mmap=True, verify=True)
    with pytest.raises(ValueError, match=r"sources_text\.bin.*beyond"):
        Corpus.load(directory)
    # bytes that are not UTF-8: named when the source is read
    texts.write_bytes(b"\xff" + data[1:])
    mapped = Corpus.load(directory, mmap=True)
    with pytest.raises(ValueError, match=r"sources_text\.bin.*damaged: entry 0 is not UTF-8"):
        mapped.sources[0]
    with pytest.raises(ValueError, match=r"sources_text\.bin.*entry 0 is not UTF-8"):
        Corpus.load(directory, mmap=True, verify=True)


@pytest.mark.parametrize(
    "name, position, value, what",
    [
        ("source_base_offsets", 2, 2**62, "doc_char_end"),
        ("source_indices", 0, 3, "source 0 has 3, not 0"),
        ("source_documents", 3, 3, "source 3 has 3, not 2"),
        ("source_kinds", 0, 4, "source 0 has kind 4"),
        ("source_document_text", 0, 0, "source 0, a document, has a document text"),
        ("source_document_text", 2, 5, "document text 5"),
        ("index_idf", 0, 7.5, "built again and compared"),
        ("index_postings_passages", 0, 3, "built again and compared"),
        ("index_first_positions", 1, 0, "built again and compared"),
    ],
)
def test_verify_finds_saved_arrays_that_are_not_the_sources(
    saved, tmp_path, name, position, value, what
):
    directory = _copy(saved, tmp_path)
    path = directory / f"{name}.npy"
    array = np.load(path)
    array[position] = value
    np.save(path, array)
    Corpus.load(directory, mmap=True)  # (header checks only)
    for mmap in (False, True):
        load = (lambda: Corpus.load(directory, mmap=mmap, verify=True))
        with pytest.raises(ValueError) as info:
            load()
        assert f"{name}.npy" in str(info.value) and what in str(info.value), str(info.value)


def test_a_mapped_array_of_another_integer_type_is_refused(saved, tmp_path):
    # (it would be copied to int64, and the kernels compiled again for it)
    directory = _copy(saved, tmp_path)
    np.save(directory / "token_ids.npy", np.load(directory / "token_ids.npy").astype(np.int32))
    with pytest.raises(ValueError, match=r"token_ids\.npy.*holds int32 values, not int64"):
        Corpus.load(directory, mmap=True)


def test_load_checks_its_arguments(saved):
    directory = saved[2]
    with pytest.raises(TypeError, match="mmap must be a bool"):
        Corpus.load(directory, mmap=1)
    with pytest.raises(TypeError, match="verify must be a bool"):
        Corpus.load(directory, verify="yes")
    loaded = Corpus.load(directory, verify=False)
    assert loaded.sources == saved[1].sources and loaded.mapped_from is None


def test_empty_corpora_map(tmp_path):
    for sources in ([], ["", " "]):
        directory = tmp_path / str(len(sources))
        corpus = Corpus.build(sources)
        corpus.save(directory)
        mapped = Corpus.load(directory, mmap=True, verify=True)
        assert mapped.n_tokens == 0 and mapped.n_passages == 0
        assert mapped.sources == corpus.sources and list(mapped.sources) == list(corpus.sources)
        result = citekit.Pipeline().align("Revenue grew.", mapped)
        assert [span.status for span in result] == ["unsupported"]


class _Letters:
    """An embedder: letter counts."""

    def encode(self, texts):
        return [[text.count(letter) + 0.5 for letter in "aeiost"] for text in texts]


def test_mapped_embeddings_give_the_results_of_the_corpus_in_memory(tmp_path):
    pipeline = citekit.Pipeline(embedder=_Letters())
    sources = ["Revenue grew 15% in 2024. Costs fell 3%.", "Ice melts at 0 degrees."]
    corpus = pipeline.prepare(sources)
    corpus.save(tmp_path / "c")
    mapped = Corpus.load(tmp_path / "c", mmap=True)
    assert isinstance(mapped.embeddings.base, np.memmap)
    np.testing.assert_array_equal(mapped.embeddings, corpus.embeddings)
    answers = ["Costs fell by 3%.", "Ice melts at zero degrees."]
    assert _results(pipeline, mapped, answers) == _results(pipeline, corpus, answers)
    assert isinstance(pickle.loads(pickle.dumps(mapped)).embeddings.base, np.memmap)
