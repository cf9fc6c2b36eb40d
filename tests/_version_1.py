"""A saved corpus in format version 1 (the sources in ``corpus.json``), as citekit wrote
corpora before format 2: what the tests of loading such saves load (``tests/data/corpus_v1``
is one written by that citekit)."""

import json
import os

from citekit import _corpus_files
from citekit.results import SourceChunk


def save_version_1(corpus, directory):
    """Save ``corpus`` to ``directory`` as format version 1 wrote it."""
    corpus.save(directory)
    meta = json.loads((directory / "corpus.json").read_bytes().decode("utf-8", "surrogatepass"))
    entries = []
    for record in corpus.sources:
        entry = record.to_dict()
        entry["kind"] = "chunk" if isinstance(record, SourceChunk) else "document"
        entries.append(entry)
    old = {
        "format": _corpus_files.FORMAT,
        "version": 1,
        **{key: meta[key] for key in (
            "window_size_sentences", "window_stride_sentences", "tokenizer_signature",
            "has_embeddings",
        )},
        "sources": entries,
    }
    (directory / "corpus.json").write_bytes(
        json.dumps(old, ensure_ascii=False).encode("utf-8", "surrogatepass")
    )
    kept = {"corpus.json", "embeddings.npy"}
    kept.update(f"{name}.npy" for name in _corpus_files.ARRAY_NAMES)
    kept.update(f"index_{name}.npy" for name in _corpus_files.INDEX_ARRAY_NAMES)
    for name in os.listdir(directory):
        if name not in kept:
            os.unlink(directory / name)
