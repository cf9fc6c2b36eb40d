"""``citekit prepare`` (a sources file built batch by batch and saved) and
``citekit align --corpus`` (answers aligned against a saved corpus)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from citekit.cli import main
from citekit.corpus import Corpus
from citekit.data import load_example_answers, load_example_sources
from citekit.pipeline import Pipeline

SOURCES = [
    {"id": source.id, "text": source.text, "title": source.metadata["title"]}
    for source in load_example_sources()
]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                    encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    sources = _write_jsonl(tmp_path / "sources.jsonl", SOURCES)
    answers = _write_jsonl(
        tmp_path / "answers.jsonl",
        [{"id": record["id"], "answer": record["answer"]} for record in load_example_answers()],
    )
    return tmp_path, sources, answers


def _one_error_line(capsys, command):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"citekit {command}: error: "), err
    return err


def test_prepare_saves_the_corpus_of_the_sources_file(files, capsys):
    tmp_path, sources, _ = files
    out = tmp_path / "corpus"
    assert main(["prepare", "--sources", str(sources), "--out", str(out),
                 "--batch-size", "5000", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"citekit prepare: {len(SOURCES)} sources, ") and str(out) in err
    loaded = Corpus.load(out)
    expected = Pipeline().prepare(loaded.sources)  # (the file's lines as records)
    assert [s.metadata for s in loaded.sources] == [{"title": row["title"]} for row in SOURCES]
    assert [s.id for s in loaded.sources] == [row["id"] for row in SOURCES]
    for name in ("token_ids", "token_starts", "passage_char_start", "passage_sentence_end"):
        assert np.array_equal(getattr(loaded, name), getattr(expected, name)), name


def test_align_against_a_prepared_corpus_writes_what_align_with_sources_does(files, capsys):
    tmp_path, sources, answers = files
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"window_size_sentences": 2, "top_k": 2}))
    corpus_dir = tmp_path / "corpus"
    # a gzip sources file, in batches of about one source
    packed = tmp_path / "sources.jsonl.gz"
    packed.write_bytes(gzip.compress(sources.read_bytes()))
    assert main(["prepare", "--sources", str(packed), "--out", str(corpus_dir),
                 "--config", str(config), "--batch-size", "1", "--no-progress"]) == 0
    assert Corpus.load(corpus_dir).window_size_sentences == 2
    common = ["align", "--answers", str(answers), "--config", str(config), "--no-progress"]
    assert main([*common, "--corpus", str(corpus_dir), "--out", str(tmp_path / "a.jsonl")]) == 0
    assert main([*common, "--sources", str(sources), "--out", str(tmp_path / "b.jsonl")]) == 0
    assert main([*common, "--corpus", str(corpus_dir), "--mmap",
                 "--out", str(tmp_path / "c.jsonl")]) == 0
    with_corpus = (tmp_path / "a.jsonl").read_text(encoding="utf-8")
    assert with_corpus == (tmp_path / "b.jsonl").read_text(encoding="utf-8")
    assert with_corpus == (tmp_path / "c.jsonl").read_text(encoding="utf-8")  # mapped
    assert len(with_corpus.splitlines()) == len(load_example_answers())
    assert '"citations": [{' in with_corpus


def test_prepare_bad_input_is_one_line_and_saves_nothing(files, capsys):
    tmp_path, sources, _ = files
    out = tmp_path / "corpus"

    def refused(*arguments, message):
        assert main(["prepare", *arguments]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not out.exists()

    refused("--sources", str(tmp_path / "missing.jsonl"), "--out", str(out),
            message="citekit prepare: error: sources file not found: ")
    refused("--sources", str(tmp_path), "--out", str(out),
            message="sources file is a directory")
    bad = _write_jsonl(tmp_path / "bad.jsonl", [SOURCES[0], {"id": "x", "text": 3}])
    refused("--sources", str(bad), "--out", str(out),
            message=f"{bad}, line 2: a source needs a string 'text' (got int)")
    twice = _write_jsonl(tmp_path / "twice.jsonl", [SOURCES[0], SOURCES[1], SOURCES[0]])
    refused("--sources", str(twice), "--out", str(out),
            message=f"{twice}, line 3: duplicate source id {SOURCES[0]['id']!r} (first on line 1)")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "text": "x"}\n{"id": \n')
    refused("--sources", str(broken), "--out", str(out), message=f"{broken}, line 2: invalid JSON")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n")
    refused("--sources", str(blank), "--out", str(out),
            message="holds no sources (every line is blank)")
    refused("--sources", str(sources), "--out", str(out), "--batch-size", "0",
            message="--batch-size must be >= 1, got 0")
    refused("--sources", str(sources), "--out", str(out), "--config",
            str(tmp_path / "none.toml"), message="config file not found")
    refused("--sources", str(sources), "--out", str(out), "--batch-size", "many",
            message="citekit prepare: error: argument --batch-size: invalid int value")
    refused("--sources", str(sources), message="the following arguments are required: --out")
    # --out: not a file, not a directory of other files (checked before the build)
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me")
    assert main(["prepare", "--sources", str(sources), "--out", str(a_file)]) == 2
    assert "--out: path" in _one_error_line(capsys, "prepare")
    assert a_file.read_text() == "keep me"
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.txt").write_text("mine")
    assert main(["prepare", "--sources", str(sources), "--out", str(tmp_path / "folder")]) == 2
    assert "holds files that are not a saved corpus's ('notes.txt')" in _one_error_line(
        capsys, "prepare")


def test_prepare_replaces_a_corpus_saved_before(files, capsys):
    tmp_path, sources, _ = files
    out = tmp_path / "corpus"
    assert main(["prepare", "--sources", str(sources), "--out", str(out), "--no-progress"]) == 0
    fewer = _write_jsonl(tmp_path / "fewer.jsonl", SOURCES[:2])
    assert main(["prepare", "--sources", str(fewer), "--out", str(out), "--no-progress"]) == 0
    assert Corpus.load(out).n_sources == 2


def test_align_corpus_misuse_is_one_line(files, capsys, tmp_path):
    _, sources, answers = files
    out = str(tmp_path / "r.jsonl")
    assert main(["align", "--answers", str(answers), "--sources", str(sources), "--corpus",
                 str(tmp_path), "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "citekit align: error: argument --corpus: not allowed with argument --sources" in err
    assert main(["align", "--answers", str(answers), "--sources", str(sources), "--mmap",
                 "--out", out]) == 2
    assert "--mmap maps a saved corpus: give it with --corpus DIR" in _one_error_line(
        capsys, "align"
    )
    assert main(["align", "--answers", str(answers), "--corpus", str(tmp_path / "none"),
                 "--out", out]) == 2
    assert "corpus directory not found: " in _one_error_line(capsys, "align")
    assert main(["align", "--answers", str(answers), "--corpus", str(sources),
                 "--out", out]) == 2
    assert f"--corpus {sources}: " in _one_error_line(capsys, "align")
    # a corpus missing one of its files: the file is named
    corpus_dir = tmp_path / "corpus"
    Corpus.build([row["text"] for row in SOURCES]).save(corpus_dir)
    (corpus_dir / "token_ids.npy").unlink()
    assert main(["align", "--answers", str(answers), "--corpus", str(corpus_dir),
                 "--out", out]) == 2
    assert "token_ids.npy" in _one_error_line(capsys, "align")
    # a corpus tokenized otherwise than the configuration's pipeline would tokenize answers
    from citekit.tokenizers import SimpleTokenizer, TokenizerConfig

    other = tmp_path / "other"
    Corpus.build([row["text"] for row in SOURCES],
                 tokenizer=SimpleTokenizer(TokenizerConfig(casefold=False))).save(other)
    assert main(["align", "--answers", str(answers), "--corpus", str(other), "--out", out]) == 2
    assert "tokenizer does not match the corpus" in _one_error_line(capsys, "align")
    assert not Path(out).exists()


def test_prepare_says_why_there_is_no_progress_bar(files, monkeypatch, capsys):
    import citekit._progress as progress

    tmp_path, sources, _ = files

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(progress, "is_terminal", lambda stream: True)
    assert main(["prepare", "--sources", str(sources), "--out", str(tmp_path / "c")]) == 0
    err = capsys.readouterr().err
    assert "citekit prepare: no progress bar: tqdm is not installed" in err
    assert main(["prepare", "--sources", str(sources), "--out", str(tmp_path / "d"),
                 "--no-progress"]) == 0
    assert "tqdm" not in capsys.readouterr().err


def test_gzip_files_are_read_wherever_json_lines_are(files, capsys):
    from citekit.batch import read_jsonl

    tmp_path, sources, answers = files
    packed_sources = tmp_path / "s.jsonl.gz"
    packed_sources.write_bytes(gzip.compress(sources.read_bytes()))
    packed_answers = tmp_path / "a.jsonl.gz"
    packed_answers.write_bytes(gzip.compress(answers.read_bytes()))
    assert list(read_jsonl(packed_sources)) == SOURCES
    out = tmp_path / "r.jsonl"
    assert main(["align", "--answers", str(packed_answers), "--sources", str(packed_sources),
                 "--out", str(out), "--no-progress"]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(load_example_answers())
    capsys.readouterr()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed_answers.read_bytes()[:-20])
    assert main(["align", "--answers", str(cut), "--sources", str(sources),
                 "--out", str(out)]) == 2
    assert f"{cut}: not a complete gzip file" in _one_error_line(capsys, "align")
    not_packed = tmp_path / "plain.jsonl.gz"
    not_packed.write_bytes(answers.read_bytes())
    with pytest.raises(ValueError, match=r"plain\.jsonl\.gz: not a complete gzip file"):
        list(read_jsonl(not_packed))
