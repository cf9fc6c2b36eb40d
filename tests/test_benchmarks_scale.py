"""``benchmarks/scale.py``: it runs at a tiny size and its figures are what they say.
No timing is asserted."""

import json

import numpy as np
import pytest


@pytest.fixture(scope="module")
def scale(benchmark_script):
    return benchmark_script("scale.py")


def test_runs_at_a_tiny_size_and_reports_every_figure(scale, workload, tmp_path, capsys):
    out = tmp_path / "scale.json"
    code = scale.main(
        ["--sizes", "30", "--queries", "8", "--sentences", "4", "--staged", "2",
         "--threads", "1", "--json", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["machine"]["numba"] and report["machine"]["python"]
    [row] = report["sizes"]
    build = row["build"]
    documents = workload.make_documents(30, seed=0)
    assert build["documents"] == 30
    assert build["text_chars"] == sum(len(document["text"]) for document in documents)
    assert build["build_s"] > 0 and build["build_peak_mb"] > 0
    # bytes per character: the counted arrays over the characters, split per array
    summary = row["summary"]
    assert summary["bytes_per_char"] == pytest.approx(
        sum(build["array_bytes"].values()) / build["text_chars"]
    )
    split = summary["bytes_per_char_by_array"]
    assert sum(split.values()) == pytest.approx(summary["all_bytes_per_char"])
    assert {"token_ids", "index_indices", "index_vocabulary"} <= set(split)
    assert build["saved_bytes"] == sum(build["saved_files"].values())
    assert build["saved_text_bytes"] >= build["text_chars"]  # (the UTF-8 text blob)
    queries = row["plain"]
    assert "error" not in queries
    assert queries["numba_threads"] == 1  # (--threads reaches the children)
    assert queries["sentences_timed"] >= 8 and queries["answers_timed"] >= 2
    assert queries["p90_ms"] >= queries["median_ms"] > 0
    assert queries["postings_median"] > 0
    assert queries["postings_all_terms_median"] >= queries["postings_median"]
    stages = queries["stage_ms_per_sentence"]
    assert stages["retrieval"] > 0 and stages["alignment"] > 0 and stages["records"] > 0
    # (the stages split the staged calls: they add up to their mean)
    assert sum(stages.values()) == pytest.approx(queries["staged_mean_ms"])
    assert build["save_peak_mb"] >= build["build_peak_mb"]
    assert ("mmap" in row) == report["mmap_load"] == scale.mmap_supported()
    printed = capsys.readouterr()
    assert "B/char" in printed.out and "postings" in printed.out
    assert "30 documents: building" in printed.err


def test_postings_walked_matches_counting_the_passages(scale):
    from citekit.index import IdfIndex

    rng = np.random.default_rng(5)
    passages = [rng.integers(0, 40, size=rng.integers(0, 12)).tolist() for _ in range(30)]
    index = IdfIndex.from_token_lists(passages)
    lengths = rng.integers(0, 9, size=12)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 50, size=int(offsets[-1]))  # (ids 40-49: in no passage)
    content = rng.random(ids.shape[0]) < 0.6
    ranking, every = scale.postings_walked(index, ids, offsets, content)

    def holding(token):
        return sum(token in passage for passage in passages)

    for query in range(len(lengths)):
        tokens = ids[offsets[query] : offsets[query + 1]].tolist()
        flags = content[offsets[query] : offsets[query + 1]].tolist()
        ranked = {token for token, flag in zip(tokens, flags) if flag}
        assert ranking[query] == sum(holding(token) for token in ranked)
        assert every[query] == sum(holding(token) for token in set(tokens))


def test_corpus_array_bytes_counts_every_array_once(scale):
    from citekit._corpus_files import ARRAY_NAMES
    from citekit.pipeline import Pipeline

    corpus = Pipeline().prepare(["Revenue grew 15% in 2024. Costs fell.", "Ice melts."])
    counted, derived = scale.corpus_array_bytes(corpus)
    for name in ARRAY_NAMES:
        assert counted[name] == getattr(corpus, name).nbytes
    for name, array in corpus.index.to_arrays().items():
        assert counted[f"index_{name}"] == array.nbytes
    assert "embeddings" not in counted  # (none without an embedder)
    # the index's rows are its saved arrays: not counted again as derived
    assert not any(name.startswith("index_rows") for name in derived)
    assert derived["index_idf"] == corpus.index.idf.nbytes
    assert not set(counted) & set(derived)


def test_a_size_larger_than_the_memory_is_skipped(scale, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(scale, "_available_bytes", lambda: 10**6)
    monkeypatch.setattr(scale, "run_size", lambda *args: pytest.fail("a child was started"))
    out = tmp_path / "scale.json"
    assert scale.main(["--sizes", "1000", "--json", str(out)]) == 0
    [row] = json.loads(out.read_text())["sizes"]
    assert "needed" in row["skipped"] and "--force" in row["skipped"]
    assert "1,000 documents: skipped" in capsys.readouterr().out


def test_percentile_interpolates_as_numpy(scale):
    values = [5.0, 1.0, 3.0, 10.0, 2.5, 7.0]
    for share in (0.0, 0.5, 0.9, 1.0):
        assert scale._percentile(values, share) == pytest.approx(
            np.percentile(values, share * 100)
        )


def test_needed_bytes_scales_with_the_documents(scale):
    assert scale.needed_bytes(100_000) == 100 * scale.needed_bytes(1_000)
    assert 15e9 < scale.needed_bytes(100_000) < 17e9  # (7.9 GB measured at 50,000)


@pytest.mark.parametrize(
    "argv, name",
    [
        (["--sizes", "0"], "--sizes"),
        (["--sizes", "10,ten"], "--sizes"),
        (["--sizes", "200000"], "--long"),
        (["--queries", "0"], "--queries"),
        (["--sentences", "0"], "--sentences"),
        (["--staged", "0"], "--staged"),
        (["--timeout", "0"], "--timeout"),
        (["--threads", "0"], "--threads"),
    ],
)
def test_bad_arguments_are_named(scale, capsys, argv, name):
    with pytest.raises(SystemExit):
        scale.main(argv)
    assert name in capsys.readouterr().err


def test_the_mapped_load_is_called_when_load_takes_mmap(scale, workload, tmp_path, monkeypatch):
    # (the children run the query stage; here it runs in this process, against a load
    # that takes ``mmap`` and records how it was called)
    from citekit.corpus import Corpus
    from citekit.pipeline import Pipeline

    documents = workload.make_documents(5, seed=3)
    Pipeline().prepare(documents).save(tmp_path / "corpus")
    answers = [workload.make_answer(documents, n_sentences=3, seed=k)["answer"] for k in range(4)]
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    calls = []
    plain_load = Corpus.load.__func__

    def load(cls, path, mmap=False):
        calls.append(mmap)
        return plain_load(cls, path)

    monkeypatch.setattr(Corpus, "load", classmethod(load))
    assert scale.mmap_supported()
    figures = scale._child_query([str(tmp_path), "mmap", "4", "1"])
    assert calls == [True] and figures["mapped"] is True
    assert figures["sentences_timed"] >= 4 and figures["staged_answers"] == 1
    figures = scale._child_query([str(tmp_path), "plain", "3", "1"])
    assert calls == [True, False] and figures["mapped"] is False
