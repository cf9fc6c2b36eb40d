"""citekit.sharded: shards built on Dask workers, searched scatter-gather, give exactly the
results of the single corpus built from the same documents."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

distributed = pytest.importorskip("distributed")

from citekit import _shard_tasks  # noqa: E402
from citekit.config import CitationConfig  # noqa: E402
from citekit.corpus import Corpus, as_source_records  # noqa: E402
from citekit.pipeline import Pipeline  # noqa: E402
from citekit.results import SourceChunk, SourceDocument  # noqa: E402
from citekit.sharded import ShardedCorpus, shard_bounds  # noqa: E402
from citekit.tokenizers import SimpleTokenizer, TokenizerConfig  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # threads of this process: the workers share its compiled kernels (worker processes
    # would load them again; one test below does)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    )
    with cluster, distributed.Client(cluster) as dask_client:
        yield dask_client


def _spans(results):
    """Every span of ``results`` as sorted-key JSON: equal lists mean equal results, every
    float bit for bit (JSON writes the shortest repr that reads back the same float)."""
    return [json.dumps(span.to_dict(), sort_keys=True) for result in results for span in result]


def _same(single, sharded):
    assert _spans(sharded) == _spans(single)
    assert [r.answer for r in sharded] == [r.answer for r in single]
    assert [r.sources for r in sharded] == [r.sources for r in single]


@pytest.fixture(scope="module")
def documents(workload):
    return workload.make_documents(60, seed=7)


@pytest.fixture(scope="module")
def answers(workload, documents):
    return [workload.make_answer(documents, seed=300 + i)["answer"] for i in range(6)]


# ------------------------------------------------------------------------------ identity


@pytest.mark.parametrize(
    "config",
    [
        CitationConfig(),
        # few candidates: the merge's cut decides which passages are aligned at all
        CitationConfig(top_k=1, max_candidates_lexical=3, max_candidates_total=2),
        CitationConfig(max_citations_per_source=1, top_k=5, max_retrieval_support=3),
        CitationConfig(window_size_sentences=2, window_stride_sentences=1,
                       prefer_source_order=False, multi_span_evidence=True),
        CitationConfig(require_all_answer_tokens_in_evidence=True, top_k=0),
    ],
    ids=["default", "few-candidates", "per-source-cap", "windows", "no-citations"],
)
def test_sharded_results_equal_the_single_corpus(client, documents, answers, config):
    pipeline = Pipeline(config)
    corpus = pipeline.prepare(documents)
    single = pipeline.align_many(answers, corpus)
    for n_shards in (1, 3):
        sharded = ShardedCorpus.build(documents, n_shards, client=client, pipeline=pipeline)
        assert sharded.n_shards == n_shards
        assert (sharded.n_sources, sharded.n_passages) == (corpus.n_sources, corpus.n_passages)
        _same(single, sharded.align_many(answers))
        # one answer at a time: the same as in one call
        _same(single[:2], [sharded.align(answer) for answer in answers[:2]])


_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(),  # any code point: astral, combining marks, RTL, CJK, controls
        st.sampled_from(list("abc xyz 12% $3. \n\u0301\ufb01\u2460\U0001d518\u4e2d\u0928")),
    ),
    max_size=60,
)


@settings(max_examples=25)
@given(
    texts=st.lists(_TEXT, min_size=1, max_size=6),
    picks=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 60), st.integers(0, 60)),
                   min_size=1, max_size=3),
    noise=_TEXT,
    n_shards=st.integers(1, 4),
)
def test_any_unicode_gives_the_single_corpus_results(client, texts, picks, noise, n_shards):
    # answers quoting pieces of the sources, and text of their own
    pieces = [texts[i % len(texts)][lo : lo + size] for i, lo, size in picks]
    answers = [" ".join(pieces) + noise, noise]
    pipeline = Pipeline(CitationConfig(top_k=4, max_retrieval_support=2))
    single = pipeline.align_many(answers, pipeline.prepare(texts))
    sharded = ShardedCorpus.build(texts, n_shards, client=client, pipeline=pipeline)
    got = sharded.align_many(answers)
    _same(single, got)
    for result in got:
        for span in result:
            for c in span.citations:
                assert texts[c.source_index][c.char_start : c.char_end] == c.evidence


def test_another_pipeline_aligns_against_the_same_shards(client, documents, answers):
    sharded = ShardedCorpus.build(documents, 3, client=client)
    for config in (CitationConfig(top_k=1, max_candidates_lexical=4),
                   CitationConfig(max_citations_per_source=1, min_answer_coverage=0.5)):
        other = Pipeline(config)
        single = other.align_many(answers[:3], other.prepare(documents))
        _same(single, sharded.align_many(answers[:3], pipeline=other))
        _same(single[:1], [sharded.align(answers[0], pipeline=other)])
    with pytest.raises(TypeError, match="pipeline"):
        sharded.align_many(answers, pipeline=CitationConfig())


def test_a_stream_is_sharded_as_it_is_read(client, documents, answers, tmp_path):
    pipeline = Pipeline(CitationConfig(top_k=2))
    single = pipeline.align_many(answers, pipeline.prepare(documents))
    read = []

    def stream():
        for number, document in enumerate(documents):
            read.append(number)
            yield document

    sharded = ShardedCorpus.build(stream(), documents_per_shard=25, client=client,
                                  pipeline=pipeline)
    assert sharded.bounds == [(0, 25), (25, 50), (50, 60)] and read == list(range(60))
    assert sharded._sources is None  # (no source kept here: fetched when read)
    _same(single, sharded.align_many(answers))
    assert sharded.sources == tuple(pipeline.prepare(documents).sources)
    # a JSON Lines file, each worker mapping the shard it saved: the same results
    lines = tmp_path / "sources.jsonl"
    lines.write_text(
        "".join(json.dumps(document) + "\n" for document in documents),
        encoding="utf-8",
    )
    mapped = ShardedCorpus.build(lines, documents_per_shard=40, client=client,
                                 pipeline=pipeline, path=tmp_path / "kb", mmap=True)
    assert sorted(os.listdir(tmp_path / "kb")) == ["shard-00000", "shard-00001", "shards.json"]
    _same(single, mapped.align_many(answers))
    _same(single, ShardedCorpus.load(tmp_path / "kb", client=client, pipeline=pipeline)
          .align_many(answers))


def test_a_stream_keeps_the_chunks_of_a_document_in_one_shard(client):
    chunks = [
        SourceChunk(source_id="a", text="Ice melts.", doc_char_start=0, doc_char_end=10),
        SourceChunk(source_id="a", text=" Snow falls.", doc_char_start=10, doc_char_end=22),
        SourceDocument(id="b", text="Rain falls."),
        SourceChunk(source_id="c", text="Hail falls.", doc_char_start=0, doc_char_end=11),
    ]
    sharded = ShardedCorpus.build(iter(chunks), documents_per_shard=1, client=client)
    assert sharded.bounds == [(0, 2), (2, 3), (3, 4)]
    apart = [chunks[0], chunks[2], chunks[1]]
    with pytest.raises(ValueError, match=r"sources\[2\] is a chunk of document 'a'"):
        ShardedCorpus.build(iter(apart), documents_per_shard=2, client=client)
    empty = ShardedCorpus.build(iter([]), documents_per_shard=3, client=client)
    assert empty.bounds == [(0, 0)] and empty.align("Ice melts.")[0].citations == []


@pytest.mark.parametrize(
    "arguments, error, match",
    [
        ({}, TypeError, "one of n_shards and documents_per_shard"),
        ({"n_shards": 2, "documents_per_shard": 2}, TypeError, "one of n_shards"),
        ({"documents_per_shard": 0}, ValueError, "documents_per_shard"),
        ({"documents_per_shard": 2, "mmap": True}, ValueError, "give path"),
        ({"documents_per_shard": 2, "mmap": 1}, TypeError, "mmap must be a bool"),
    ],
)
def test_streamed_build_arguments(client, arguments, error, match):
    with pytest.raises(error, match=match):
        ShardedCorpus.build(["Ice melts."], client=client, **arguments)


def test_n_shards_needs_a_sequence(client, tmp_path):
    with pytest.raises(ValueError, match="give documents_per_shard"):
        ShardedCorpus.build(iter(["Ice melts."]), 2, client=client)
    lines = tmp_path / "s.jsonl"
    lines.write_text('{"id": "a", "text": "Ice melts."}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="give documents_per_shard"):
        ShardedCorpus.build(lines, 2, client=client)
    with pytest.raises(FileNotFoundError, match="sources file not found"):
        ShardedCorpus.build(tmp_path / "none.jsonl", documents_per_shard=2, client=client)


def test_a_corpus_without_words(client):
    # no word in any shard (found by the Unicode property on a fresh install): the query
    # words map to no column instead of indexing an empty table
    pipeline = Pipeline()
    single = pipeline.align_many([":", "0 :"], pipeline.prepare([":", "."]))
    for n_shards in (1, 2):
        sharded = ShardedCorpus.build([":", "."], n_shards, client=client, pipeline=pipeline)
        _same(single, sharded.align_many([":", "0 :"]))


def test_sentences_of_more_than_63_terms(client, documents):
    # (a candidate's held terms are then counted from its passage's row, not from bits)
    words = " ".join(d["text"] for d in documents[:3]).replace(".", " ").split()
    answer = " ".join(words[:150]) + ". " + " ".join(words[400:480]) + "."
    pipeline = Pipeline(CitationConfig(top_k=4))
    single = pipeline.align_many([answer], pipeline.prepare(documents))
    assert max(len(set(words[:150])), len(set(words[400:480]))) > 63
    _same(single, ShardedCorpus.build(documents, 3, client=client,
                                      pipeline=pipeline).align_many([answer]))


def test_global_statistics_are_the_single_index(client, documents):
    pipeline = Pipeline()
    index = pipeline.prepare(documents).index
    sharded = ShardedCorpus.build(documents, 4, client=client, pipeline=pipeline)
    np.testing.assert_array_equal(sharded.vocabulary, index.vocabulary)
    np.testing.assert_array_equal(sharded.document_frequency, index.document_frequency)
    # bit for bit, not approximately
    assert sharded.idf.tobytes() == index.idf.tobytes()


def test_ties_across_shards_keep_the_single_corpus_order(client):
    # the same text under several ids, in different shards: every copy scores alike and
    # the single corpus prefers the lowest passage, which the merge must too
    text = "The reactor produced 40 megawatts in March. Output fell to 12 megawatts in May."
    other = "Rainfall in the valley doubled in 2020. The harvest grew by a third."
    sources = [text, other, text, other, text, text]
    answer = "The reactor produced 40 megawatts in March. Rainfall doubled in 2020."
    for config in (
        CitationConfig(top_k=3, max_candidates_lexical=2, max_candidates_total=2),
        CitationConfig(top_k=4, max_citations_per_source=1, max_retrieval_support=3,
                       max_candidates_lexical=3),
    ):
        pipeline = Pipeline(config)
        single = pipeline.align_many([answer], pipeline.prepare(sources))
        sharded = ShardedCorpus.build(sources, 3, client=client, pipeline=pipeline)
        assert sharded.bounds == [(0, 2), (2, 4), (4, 6)]
        got = sharded.align_many([answer])
        _same(single, got)
    # of the four equal copies the three lowest passages were candidates, two of them in
    # other shards (global passage numbers 4 and 8); the fourth copy (source 5) was cut
    support = [(s.source_index, s.candidate_index) for s in got[0][0].retrieval_support]
    assert [(c.source_index, c.candidate_index) for c in got[0][0].citations] == [(0, 0)]
    assert support == [(2, 4), (4, 8)]


def _chunks(document_id, text, size):
    return [
        SourceChunk(source_id=document_id, text=text[lo : lo + size], doc_char_start=lo,
                    doc_char_end=min(len(text), lo + size))
        for lo in range(0, len(text), size)
    ]


def test_chunks_of_a_document_stay_in_one_shard_and_cap_per_document(client, workload):
    texts = [d["text"] for d in workload.make_documents(6, seed=11)]
    sources = []
    for number, text in enumerate(texts):
        if number % 2:
            sources.append(SourceDocument(id=f"whole-{number}", text=text))
        else:
            sources.extend(_chunks(f"doc-{number}", text, 700))
    bounds = shard_bounds(as_source_records(sources), 4)
    ids = [
        {s.source_id for s in sources[lo:hi] if isinstance(s, SourceChunk)} for lo, hi in bounds
    ]
    for a in range(len(ids)):
        for b in range(a + 1, len(ids)):
            assert not ids[a] & ids[b]
    answer = " ".join(t.split(". ")[0] + "." for t in texts)
    for cap in (1, 2):
        pipeline = Pipeline(CitationConfig(max_citations_per_source=cap, top_k=4))
        single = pipeline.align_many([answer], pipeline.prepare(sources))
        sharded = ShardedCorpus.build(sources, 4, client=client, pipeline=pipeline)
        assert sharded.bounds == bounds
        _same(single, sharded.align_many([answer]))


def test_shard_bounds_never_split_interleaved_chunks():
    def chunk(doc, at):
        return SourceChunk(source_id=doc, text="x", doc_char_start=at, doc_char_end=at + 1)

    # a1 b1 a2 | c1 | b2 would split b: the only cut is before d
    records = [chunk("a", 0), chunk("b", 0), chunk("a", 5), chunk("b", 5),
               SourceDocument(id="d", text="y"), SourceDocument(id="e", text="z")]
    assert shard_bounds(records, 3) == [(0, 4), (4, 5), (5, 6)]
    assert shard_bounds(records, 1) == [(0, 6)]
    assert shard_bounds(records[:4], 2) == [(0, 4)]
    assert shard_bounds([], 3) == [(0, 0)]
    docs = as_source_records(["a", "b", "c"])
    assert shard_bounds(docs, 10) == [(0, 1), (1, 2), (2, 3)]


def test_a_subset_of_a_shard_is_the_corpus_of_its_sources(documents):
    pipeline = Pipeline(CitationConfig(window_size_sentences=3, window_stride_sentences=2))
    corpus = pipeline.prepare(documents[:12])
    picked = np.array([1, 4, 5, 11], dtype=np.int64)
    subset = _shard_tasks.shard_subset(corpus, picked)
    alone = pipeline.prepare([corpus.sources[i] for i in picked.tolist()])
    for name, values in subset.arrays.items():
        np.testing.assert_array_equal(values, getattr(alone, name), err_msg=name)
    assert subset.records == alone.sources
    assert np.isin(corpus.passage_source[subset.passages], picked).all()
    assert subset.passages.shape[0] == alone.n_passages


def test_empty_answers_and_no_candidates(client, documents):
    pipeline = Pipeline()
    corpus = pipeline.prepare(documents)
    sharded = ShardedCorpus.build(documents, 2, client=client, pipeline=pipeline)
    answers = ["", "Zyxwv qrstu.", "   "]
    _same(pipeline.align_many(answers, corpus), sharded.align_many(answers))
    assert sharded.align_many([]) == []
    empty = ShardedCorpus.build([], 3, client=client)
    assert (empty.n_shards, empty.n_sources, empty.n_passages) == (1, 0, 0)
    assert empty.align("Water boils.")[0].status == "unsupported"


def test_score_records_on_the_shards(client, documents, answers):
    from citekit.batch import score_records

    pipeline = Pipeline()
    corpus = pipeline.prepare(documents)
    records = [{"id": i, "answer": a} for i, a in enumerate(answers)]
    records.append({"id": "own", "answer": "Ice melts.", "sources": ["Ice melts."]})
    records.append({"id": "bad", "answer": 3})
    expected = score_records(records, pipeline=pipeline, corpus=corpus, n_jobs=1,
                             show_progress=False, batch_size=4)
    sharded = ShardedCorpus.build(documents, 3, client=client, pipeline=pipeline)
    got = sharded.score_records(records, batch_size=4, show_progress=False)
    assert [(r.id, r.error) for r in got] == [(r.id, r.error) for r in expected]
    _same([r.result for r in expected if r.ok], [r.result for r in got if r.ok])


# ------------------------------------------------------------------------- saved shards


def test_saved_shards_load_with_the_same_results(client, documents, answers, tmp_path):
    pipeline = Pipeline(CitationConfig(top_k=2))
    single = pipeline.align_many(answers, pipeline.prepare(documents))
    built = ShardedCorpus.build(documents, 3, client=client, pipeline=pipeline,
                                path=tmp_path / "kb")
    names = sorted(os.listdir(tmp_path / "kb"))
    assert names == ["shard-00000", "shard-00001", "shard-00002", "shards.json"]
    # each shard is a normal saved corpus
    shard = Corpus.load(tmp_path / "kb" / "shard-00001")
    assert shard.sources == built.sources[built.bounds[1][0] : built.bounds[1][1]]
    loaded = ShardedCorpus.load(tmp_path / "kb", client=client, pipeline=pipeline)
    assert loaded.bounds == built.bounds
    got = loaded.align_many(answers)
    # the loaded corpus's sources are fetched as they are read, not on load or align
    assert loaded.sources._fetched == {}
    assert loaded.sources[4] == built.sources[4] and loaded.sources[-1] == built.sources[-1]
    assert loaded.sources[1:3] == built.sources[1:3]
    assert len(loaded.sources._fetched) == 4
    with pytest.raises(IndexError):
        loaded.sources[len(documents)]
    _same(single, got)
    assert loaded.sources == built.sources and built.sources == loaded.sources
    import pickle

    assert pickle.loads(pickle.dumps(got[0])).sources == built.sources
    # each worker can map its shard instead of reading it: the same results
    mapped = ShardedCorpus.load(tmp_path / "kb", client=client, pipeline=pipeline, mmap=True)
    _same(single, mapped.align_many(answers))
    with pytest.raises(TypeError, match="mmap must be a bool"):
        ShardedCorpus.load(tmp_path / "kb", client=client, mmap="yes")


def test_worker_processes_give_the_same_results(documents, answers, tmp_path):
    # real worker processes: the shards and the query batches travel pickled
    pipeline = Pipeline()
    single = pipeline.align_many(answers[:2], pipeline.prepare(documents))
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with cluster, distributed.Client(cluster) as process_client:
        sharded = ShardedCorpus.build(documents, 2, client=process_client, pipeline=pipeline,
                                      path=tmp_path / "kb")
        _same(single, sharded.align_many(answers[:2]))


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("n_shards", [0, -1])
def test_n_shards_below_one(client, n_shards):
    with pytest.raises(ValueError, match="n_shards"):
        ShardedCorpus.build(["a"], n_shards, client=client)


@pytest.mark.parametrize("n_shards", ["2", 2.0, None])
def test_n_shards_not_an_int(client, n_shards):
    with pytest.raises(TypeError, match="n_shards"):
        ShardedCorpus.build(["a"], n_shards, client=client)


def test_bad_arguments(client, tmp_path):
    with pytest.raises(TypeError, match="client"):
        ShardedCorpus.build(["a"], 1, client="tcp://scheduler:8786")
    with pytest.raises(TypeError, match="pipeline"):
        ShardedCorpus.build(["a"], 1, client=client, pipeline=CitationConfig())
    with pytest.raises(TypeError, match="sources"):
        ShardedCorpus.build("a text", 1, client=client)
    with pytest.raises(TypeError, match="path"):
        ShardedCorpus.build(["a"], 1, client=client, path=3)

    class Embedder:
        def encode(self, texts):
            return [[1.0] for _ in texts]

    with pytest.raises(ValueError, match="embedder"):
        ShardedCorpus.build(["a"], 1, client=client, pipeline=Pipeline(embedder=Embedder()))
    with pytest.raises(TypeError):
        ShardedCorpus()
    sharded = ShardedCorpus.build(["Ice melts."], 1, client=client)
    with pytest.raises(TypeError, match="answers"):
        sharded.align_many("Ice melts.")
    with pytest.raises(TypeError, match=r"answers\[1\]"):
        sharded.align_many(["Ice melts.", 3])
    with pytest.raises(TypeError, match="answer"):
        sharded.align(None)


def test_no_active_client(monkeypatch):
    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "default_client", no_client)
    with pytest.raises(ValueError, match="client"):
        ShardedCorpus.build(["a"], 1)


def test_missing_extra_names_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"citekit\[dask\]"):
        ShardedCorpus.build(["a"], 1)


def test_mismatched_tokenizers_between_shards(client, tmp_path):
    one = Corpus.build(["Ice melts."])
    other = Corpus.build(["Water boils."],
                         tokenizer=SimpleTokenizer(TokenizerConfig(casefold=False)))
    one.save(tmp_path / "kb" / "shard-00000")
    other.save(tmp_path / "kb" / "shard-00001")
    (tmp_path / "kb" / "shards.json").write_text(json.dumps(
        {"format": "citekit-sharded-corpus", "version": 1,
         "shards": ["shard-00000", "shard-00001"]}))
    with pytest.raises(ValueError, match="shard-00001.*tokenizer_signature"):
        ShardedCorpus.load(tmp_path / "kb", client=client)


def test_pipeline_tokenizer_must_match_the_shards(client, tmp_path):
    ShardedCorpus.build(["Ice melts."], 1, client=client, path=tmp_path / "kb")
    other = Pipeline(tokenizer=SimpleTokenizer(TokenizerConfig(casefold=False)))
    loaded = ShardedCorpus.load(tmp_path / "kb", client=client, pipeline=other)
    with pytest.raises(ValueError, match="tokenizer does not match"):
        loaded.align("Ice melts.")


def test_damaged_or_missing_manifest(client, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such directory"):
        ShardedCorpus.load(tmp_path / "nothing", client=client)
    (tmp_path / "kb").mkdir()
    with pytest.raises(FileNotFoundError, match="shards.json"):
        ShardedCorpus.load(tmp_path / "kb", client=client)
    manifest = tmp_path / "kb" / "shards.json"
    for text, what in [
        ("{", "unreadable"),
        ('{"format": "other"}', "format"),
        ('{"format": "citekit-sharded-corpus", "version": 9}', "version"),
        ('{"format": "citekit-sharded-corpus", "version": 1, "shards": ["../x"]}', "shards"),
        ('{"format": "citekit-sharded-corpus", "version": 1, "shards": []}', "shards"),
    ]:
        manifest.write_text(text)
        with pytest.raises(ValueError, match=what):
            ShardedCorpus.load(tmp_path / "kb", client=client)
    manifest.write_text(
        '{"format": "citekit-sharded-corpus", "version": 1, "shards": ["shard-00000"]}'
    )
    with pytest.raises(FileNotFoundError):
        ShardedCorpus.load(tmp_path / "kb", client=client)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        ShardedCorpus.build(["a"], 1, client=client, path=tmp_path / "file")


def test_batches_searched_side_by_side_on_one_worker(workload):
    # more than one batch of sentences (1,024 each): a worker with two threads searches
    # a shard for two batches at once, each thread with its own scratch arrays
    documents = workload.make_documents(15, seed=21)
    answers = [workload.make_answer(documents, seed=i)["answer"] for i in range(40)] * 6
    pipeline = Pipeline(CitationConfig(max_candidates_lexical=20))
    single = pipeline.align_many(answers, pipeline.prepare(documents))
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    )
    with cluster, distributed.Client(cluster) as threaded:
        sharded = ShardedCorpus.build(documents, 2, client=threaded, pipeline=pipeline)
        got = sharded.align_many(answers)
    assert sum(len(r) for r in got) > 1024
    _same(single, got)
