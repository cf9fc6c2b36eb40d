"""Corpus.save is atomic and lossless; Corpus.load names a missing path and damaged files."""

import json
import os
import stat
import sys
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _version_1 import save_version_1

import citekit
from citekit import _corpus_files
from citekit.corpus import Corpus
from citekit.results import SourceChunk, SourceDocument

GOOD = ["Revenue grew 15% in 2024."]
SURROGATE = ["Revenue grew 15%.\udc00 Costs fell 3%."]


def _results(pipeline, corpus, answers):
    return [[span.to_dict() for span in result] for result in pipeline.align_many(answers, corpus)]


def _leftovers(parent, name):
    """Hidden staging or aside directories a save left beside ``name``."""
    return [entry for entry in os.listdir(parent) if entry.startswith(f".{name}.")]


def test_a_save_that_used_to_fail_replaces_the_corpus(tmp_path):
    # the reported case: the second save raised UnicodeEncodeError and destroyed the first
    pipeline = citekit.Pipeline()
    directory = tmp_path / "d"
    pipeline.prepare(GOOD).save(directory)
    corpus = pipeline.prepare(SURROGATE)
    corpus.save(directory)
    loaded = Corpus.load(directory)
    assert loaded.sources == corpus.sources
    assert loaded.source_text(0) == SURROGATE[0]
    answers = ["Revenue grew 15%.", "Costs fell 3%.", "Costs fell\udc00 3%."]
    assert _results(pipeline, loaded, answers) == _results(pipeline, corpus, answers)
    assert _leftovers(tmp_path, "d") == []


def test_the_texts_are_utf8_when_no_surrogate_is_saved(tmp_path):
    Corpus.build([SourceDocument("東京", "Straße 東京 \U0001f600.", {"é": "\U0001f600"})]).save(
        tmp_path / "c"
    )
    assert (tmp_path / "c" / "sources_text.bin").read_bytes().decode("utf-8") == (
        "Straße 東京 \U0001f600."
    )
    assert (tmp_path / "c" / "sources_id.bin").read_bytes().decode("utf-8") == "東京"
    metadata = (tmp_path / "c" / "sources_metadata.bin").read_bytes().decode("utf-8")
    assert metadata == '{"é": "\U0001f600"}'  # (not escaped)
    (tmp_path / "c" / "corpus.json").read_bytes().decode("utf-8")


def test_a_surrogate_pair_loads_as_two_code_points_not_one(tmp_path):
    # JSON's escapes would join "\ud83d\ude00" into the one character U+1F600
    pair = "a\ud83d\ude00b."
    corpus = Corpus.build([SourceDocument("\ud800id", pair, metadata={"\udfff": ["\ud83d"]})])
    corpus.save(tmp_path / "c")
    loaded = Corpus.load(tmp_path / "c")
    assert loaded.source_text(0) == pair and len(loaded.source_text(0)) == 5
    assert loaded.sources == corpus.sources
    assert loaded.sources[0].metadata == {"\udfff": ["\ud83d"]}


# every code point, lone surrogates (category Cs, which st.characters leaves out) included
_ANY_STRING = st.text(
    st.characters() | st.characters(categories=["Cs"]) | st.sampled_from(". \n"), max_size=30
)


@settings(max_examples=40, deadline=None)
@given(
    texts=st.lists(_ANY_STRING, min_size=1, max_size=4),
    ids=st.lists(_ANY_STRING, min_size=4, max_size=4, unique=True),
    key=_ANY_STRING,
    chunked=st.booleans(),
)
def test_every_str_saves_and_loads_identically(texts, ids, key, chunked):
    sources = [
        SourceChunk(ids[i], text, 3, 3 + len(text), metadata={key: text})
        if chunked else SourceDocument(ids[i], text, metadata={key: [text, i]})
        for i, text in enumerate(texts)
    ]
    pipeline = citekit.Pipeline()
    corpus = pipeline.prepare(sources)
    with tempfile.TemporaryDirectory() as folder:
        corpus.save(folder)
        loaded = Corpus.load(folder)
    assert loaded.sources == corpus.sources
    assert [record.text for record in loaded.sources] == texts
    answers = [text for text in texts if text.strip()][:2]
    assert _results(pipeline, loaded, answers) == _results(pipeline, corpus, answers)


class FullDisk:
    """A file whose writing fails after a few bytes, as on a full disk (the error names no
    file)."""

    def __init__(self, path, mode):
        self.file = open(path, mode)

    def write(self, data):
        self.file.write(bytes(data)[:10])
        raise OSError(28, "No space left on device")

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.file.close()


def test_a_failed_save_leaves_the_saved_corpus(tmp_path, monkeypatch):
    pipeline = citekit.Pipeline()
    directory = tmp_path / "d"
    old = pipeline.prepare(GOOD)
    old.save(directory)
    before = sorted(os.listdir(directory))
    new = pipeline.prepare(["Costs fell 3%. Margins rose."])
    for failing in ("token_starts.npy", "index_indices.npy", "corpus.json"):
        def failing_open(path, mode, failing=failing):
            if "w" in mode and os.path.basename(path) == failing:
                return FullDisk(path, mode)
            return open(path, mode)

        monkeypatch.setattr(_corpus_files, "open", failing_open, raising=False)
        with pytest.raises(OSError, match="No space left") as info:
            new.save(directory)
        assert os.path.basename(info.value.filename) == failing  # (the save names it)
        assert sorted(os.listdir(directory)) == before
        assert Corpus.load(directory).sources == old.sources
        assert _leftovers(tmp_path, "d") == []
        monkeypatch.delattr(_corpus_files, "open")
    new.save(directory)
    assert Corpus.load(directory).sources == new.sources


def test_a_failed_rename_puts_the_old_corpus_back(tmp_path, monkeypatch):
    directory = tmp_path / "d"
    old = Corpus.build(GOOD)
    old.save(directory)
    rename = os.rename

    def failing_rename(source, destination):
        if ".saving-" in os.path.basename(source):
            raise OSError(5, "Input/output error", source)
        rename(source, destination)

    monkeypatch.setattr(_corpus_files.os, "rename", failing_rename)
    with pytest.raises(OSError, match="Input/output"):
        Corpus.build(["Other text."]).save(directory)
    monkeypatch.setattr(_corpus_files.os, "rename", rename)
    assert Corpus.load(directory).sources == old.sources
    assert _leftovers(tmp_path, "d") == []


def test_unserializable_metadata_writes_nothing(tmp_path):
    directory = tmp_path / "d"
    Corpus.build(GOOD).save(directory)
    corpus = Corpus.build([SourceDocument("a", "Text.", metadata={"when": object()})])
    with pytest.raises(TypeError, match="metadata"):
        corpus.save(directory)
    circular: dict = {}
    circular["self"] = circular
    corpus = Corpus.build([SourceDocument("a", "Text.", metadata=circular)])
    with pytest.raises(ValueError, match="metadata"):
        corpus.save(directory)
    assert Corpus.load(directory).source_text(0) == GOOD[0]
    assert _leftovers(tmp_path, "d") == []


def test_a_save_never_deletes_files_it_did_not_write(tmp_path):
    corpus = Corpus.build(GOOD)
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"not a saved corpus's \('notes\.txt'\)"):
        corpus.save(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]  # (nothing beside it either)
    with pytest.raises(ValueError, match="is a file"):
        corpus.save(tmp_path / "notes.txt")
    browsed = tmp_path / "browsed"  # (a corpus folder a file browser has looked at)
    corpus.save(browsed)
    (browsed / ".DS_Store").write_bytes(b"\0")
    corpus.save(browsed)
    assert not (browsed / ".DS_Store").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    corpus.save(empty)  # an empty directory is taken
    assert Corpus.load(empty).sources == corpus.sources
    nested = tmp_path / "a" / "b" / "c"
    corpus.save(nested)  # parents are created
    assert Corpus.load(nested).sources == corpus.sources


def test_a_replaced_corpus_keeps_its_files_set_and_permissions(tmp_path):
    class Lengths:
        def encode(self, texts):
            return [[len(t), 1.0] for t in texts]

    directory = tmp_path / "d"
    Corpus.build(GOOD, embedder=Lengths()).save(directory)
    assert (directory / "embeddings.npy").exists()
    if sys.platform != "win32":
        os.chmod(directory, 0o750)
    Corpus.build(["Costs fell."]).save(directory)
    # the old corpus's embeddings do not linger beside a corpus that has none
    assert not (directory / "embeddings.npy").exists()
    assert sorted(os.listdir(directory)) == sorted(_corpus_files.corpus_file_names(False))
    if sys.platform != "win32":
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o750
    assert Corpus.load(directory).source_text(0) == "Costs fell."


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_a_symbolic_link_keeps_naming_the_saved_corpus(tmp_path):
    real = tmp_path / "real"
    Corpus.build(GOOD).save(real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    Corpus.build(["Costs fell."]).save(link)
    assert link.is_symlink()
    assert Corpus.load(real).source_text(0) == "Costs fell."


# -- loading: a missing path, a file, damaged corpus.json --------------------------------


def test_load_of_a_missing_directory_raises_file_not_found(tmp_path):
    missing = tmp_path / "no-such-dir"
    with pytest.raises(FileNotFoundError, match="no-such-dir") as info:
        Corpus.load(missing)
    assert info.value.filename == str(missing)
    with pytest.raises(FileNotFoundError, match="no-such-dir"):
        Corpus.load(str(missing))
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        Corpus.load(tmp_path / "file")
    if sys.platform != "win32":
        (tmp_path / "dangling").symlink_to(missing)
        with pytest.raises(FileNotFoundError, match="dangling"):
            Corpus.load(tmp_path / "dangling")


def _saved(tmp_path):
    directory = tmp_path / "c"
    Corpus.build(["Revenue grew.", "Costs fell."]).save(directory)
    return directory


def test_load_names_the_line_of_bad_json(tmp_path):
    directory = _saved(tmp_path)
    (directory / "corpus.json").write_text('{\n"format": "citekit-corpus",\n"version": 1,,\n}')
    with pytest.raises(ValueError, match=r"corpus\.json.*damaged.*line 3 column"):
        Corpus.load(directory)


def test_load_names_the_line_of_bytes_that_are_not_utf8(tmp_path):
    directory = _saved(tmp_path)
    (directory / "corpus.json").write_bytes(b'{\n\n"format": "\xff"}')
    with pytest.raises(ValueError, match=r"corpus\.json.*damaged: not UTF-8 at line 3"):
        Corpus.load(directory)


def test_load_refuses_deeply_nested_json(tmp_path):
    directory = _saved(tmp_path)
    meta = json.loads((directory / "corpus.json").read_text(encoding="utf-8"))
    nested = "[" * 100_000 + "]" * 100_000
    text = json.dumps(meta)[:-1] + ', "extra": ' + nested + "}"
    (directory / "corpus.json").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"corpus\.json.*damaged.*nested"):
        Corpus.load(directory)


def test_load_refuses_chunk_offsets_no_text_can_have(tmp_path):
    # (format version 1; version 2: test_corpus_mmap.py)
    directory = tmp_path / "c"
    save_version_1(Corpus.build([SourceChunk("c", "Revenue grew.", 5, 18)]), directory)
    meta = json.loads((directory / "corpus.json").read_text(encoding="utf-8"))
    for start in (2**62, sys.maxsize - 5, 2**64):
        meta["sources"][0].update(doc_char_start=start, doc_char_end=start + 13)
        (directory / "corpus.json").write_text(json.dumps(meta), encoding="utf-8")
        with pytest.raises(ValueError, match=r"corpus\.json.*sources\[0\].*doc_char_end"):
            Corpus.load(directory)
    meta["sources"][0].update(doc_char_start=1e30, doc_char_end=1e30 + 13)
    (directory / "corpus.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match=r"corpus\.json.*sources\[0\].*doc_char_start"):
        Corpus.load(directory)


def test_a_process_killed_while_saving_leaves_the_saved_corpus(tmp_path):
    import subprocess
    from pathlib import Path

    directory = tmp_path / "d"
    Corpus.build(GOOD).save(directory)
    # the process dies (no exception, no clean-up) after writing three of the new files
    code = (
        "import os, sys\n"
        "from citekit import _corpus_files\n"
        "from citekit.corpus import Corpus\n"
        "write, written = _corpus_files._write_file, []\n"
        "def dying(path, content):\n"
        "    write(path, content)\n"
        "    written.append(path)\n"
        "    if len(written) == 3:\n"
        "        os._exit(9)\n"
        "_corpus_files._write_file = dying\n"
        "Corpus.build(['Costs fell 3%.']).save(sys.argv[1])\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code, str(directory)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 9, completed.stderr
    assert Corpus.load(directory).source_text(0) == GOOD[0]
    # (what it was writing stays beside, hidden, as the save's documentation says)
    assert [name.split("-")[0] for name in _leftovers(tmp_path, "d")] == [".d.saving"]


class _LengthEmbedder:
    def encode(self, texts):
        return [[len(text), 1.0] for text in texts]


def _damages():
    import numpy as np

    yield "truncated", lambda path, array: path.write_bytes(path.read_bytes()[:20])
    yield "missing", lambda path, array: path.unlink()
    yield "shorter", lambda path, array: np.save(path, array[:-1])
    yield "longer", lambda path, array: np.save(path, np.concatenate([array, array[-1:]]))
    yield "empty", lambda path, array: np.save(path, array[:0])
    yield "2-D", lambda path, array: np.save(path, array.reshape(1, -1))
    yield "strings", lambda path, array: np.save(path, array.astype(str))


@pytest.fixture(scope="module")
def saved_with_embeddings(tmp_path_factory):
    directory = tmp_path_factory.mktemp("saved") / "c"
    sources = ["Revenue grew 15% in 2024. Costs fell sharply. Profit rose.", "Costs fell 3%."]
    Corpus.build(sources, embedder=_LengthEmbedder()).save(directory)
    return directory


@pytest.mark.parametrize("mmap", [False, True], ids=["in-memory", "mapped"])
@pytest.mark.parametrize("kind, damage", list(_damages()), ids=[k for k, _ in _damages()])
def test_load_names_the_damaged_array_file(saved_with_embeddings, tmp_path, kind, damage, mmap):
    # (a mapped load finds all of these with the checks of headers and end entries)
    import shutil

    import numpy as np

    names = sorted(n for n in os.listdir(saved_with_embeddings) if n.endswith(".npy"))
    assert len(names) == 29
    for name in names:
        directory = tmp_path / name / "c"
        shutil.copytree(saved_with_embeddings, directory)
        path = directory / name
        damage(path, np.load(path))
        with pytest.raises((ValueError, FileNotFoundError)) as error:
            Corpus.load(directory, mmap=mmap)
        assert name in str(error.value), (name, kind, str(error.value))


def test_load_blames_the_passage_token_ranges_the_index_was_not_built_from(
    saved_with_embeddings, tmp_path
):
    import shutil

    import numpy as np

    directory = tmp_path / "c"
    shutil.copytree(saved_with_embeddings, directory)
    path = directory / "passage_token_start.npy"
    np.save(path, np.load(path) + 1)
    with pytest.raises(ValueError, match=r"passage_token_start\.npy.*is damaged"):
        Corpus.load(directory)
