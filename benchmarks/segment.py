"""Sentence segmentation speed: citekit's numba kernel against the regex implementation
it replaced (kept as the reference in ``tests/naive.py``), in one run.

Usage::

    python benchmarks/segment.py                    # 1,000 documents, 7 repeats
    python benchmarks/segment.py --docs 200 --repeats 5

Corpora (the same seed gives the same text every run):

- ``workload``: ``benchmarks/workload.py`` ``make_documents(n, seed=2)``, the documents of
  the end-to-end benchmark (report prose, about 7,400 characters each, with ``€``
  amounts, so the kernel reads UTF-32 code units);
- ``workload-ascii``: the same documents with ``€`` written ``EUR`` (the kernel reads
  bytes);
- ``multilingual``: as many documents of the same size built from sentences in English,
  German, French, Russian, Chinese, Japanese, Hindi and Arabic, with emoji, abbreviations,
  list items and line breaks.

Measured on every document of a corpus, one call per document as the corpus build does:

- ``reference (regex)``: ``naive_segment`` from ``tests/naive.py``, the implementation
  before the kernel (what ``SentenceSegmenter.segment`` ran until then);
- ``SentenceSegmenter.segment``: the kernel, spans as a list of tuples;
- ``SentenceSegmenter.segment_array``: the kernel, spans as an ``(n, 2)`` int64 array;
- ``segment_spans (corpus path)``: ``citekit._reading.segment_spans``, what
  ``Corpus.build`` and ``Pipeline.align`` call (the array API for a SentenceSegmenter).

Before timing, every implementation's spans are checked equal to the reference's. Repeats
are interleaved (each implementation once, then again) and time is the CPU time of this
process (``time.process_time``): the benchmark machine may be shared. The table gives the
median over repeats, throughput in million characters per CPU second, and the speed-up
over the reference.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import random
import statistics
import time
from typing import Callable

import workload

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NAIVE = os.path.join(_REPO, "tests", "naive.py")


def _load_naive():
    """``tests/naive.py`` (the reference implementations), loaded by file: ``tests/`` is not
    a package, and the script must not put it on ``sys.path``."""
    spec = importlib.util.spec_from_file_location("citekit_bench_naive", _NAIVE)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


MULTILINGUAL_SENTENCES = [
    "Revenue grew 15% to $1,200 million in 2024, i.e. faster than expected.",
    "Dr. Smith of the U.S. office said costs fell 5.2 percent.",
    "Der Umsatz stieg um 12 % auf 3,4 Mio. Euro, z. B. in der Straße am Markt.",
    "Le chiffre d'affaires a augmenté de 8 % à 310 €. C'était prévu.",
    "Выручка выросла на 7% до 2,1 млрд рублей. Это больше прогноза.",
    "公司收入增长了百分之十五。利润也有所提高！",
    "売上高は前年比で12%増加した。本当に？はい。",
    "कंपनी की आय में 15 प्रतिशत की वृद्धि हुई। लाभ भी बढ़ा।",
    "ارتفعت الإيرادات بنسبة 15٪ هذا العام. هل كان ذلك متوقعا؟ نعم۔",
    "The team 🎉 celebrated. Next quarter looks strong 📈!",
    "See Fig. 3 and Table 2 (approx. 40 items) for details.",
    "- first item of a list\n- second item\n1. numbered item",
]


def multilingual_documents(n_docs: int, chars_per_doc: int = 7_400) -> list[str]:
    rng = random.Random("segment-benchmark")
    documents = []
    for _ in range(n_docs):
        paragraphs, length = [], 0
        while length < chars_per_doc:
            sentences = [rng.choice(MULTILINGUAL_SENTENCES) for _ in range(rng.randint(3, 6))]
            paragraph = " ".join(sentences)
            paragraphs.append(paragraph)
            length += len(paragraph) + 2
        documents.append("\n\n".join(paragraphs))
    return documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    import numpy as np

    from citekit._reading import segment_spans
    from citekit.segment import SentenceSegmenter

    naive = _load_naive()

    documents = [document["text"] for document in workload.make_documents(args.docs, seed=2)]
    corpora = {
        "workload": documents,
        "workload-ascii": [text.replace("€", "EUR") for text in documents],
        "multilingual": multilingual_documents(args.docs),
    }
    segmenter = SentenceSegmenter()
    implementations: dict[str, Callable[[str], object]] = {
        "reference (regex)": naive.naive_segment,
        "SentenceSegmenter.segment": segmenter.segment,
        "SentenceSegmenter.segment_array": segmenter.segment_array,
        "segment_spans (corpus path)": lambda text: segment_spans(segmenter, text),
    }

    print(f"python {platform.python_version()}, {platform.machine()}, {_cpu_name()}")
    rows = []
    for corpus_name, texts in corpora.items():
        n_chars = sum(map(len, texts))
        n_bytes = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
        # same spans everywhere (this also compiles the kernel or loads it from the cache)
        expected = [naive.naive_segment(text) for text in texts]
        for name, function in implementations.items():
            for text, spans in zip(texts, expected):
                got = function(text)
                got = got.tolist() if isinstance(got, np.ndarray) else got
                if [tuple(span) for span in got] != spans:
                    raise SystemExit(f"{name} differs from the reference on {corpus_name}")
        times: dict[str, list[float]] = {name: [] for name in implementations}
        for _ in range(args.repeats):
            for name, function in implementations.items():
                start = time.process_time()
                for text in texts:
                    function(text)
                times[name].append(time.process_time() - start)
        reference = statistics.median(times["reference (regex)"])
        for name in implementations:
            median = statistics.median(times[name])
            rows.append(
                (
                    corpus_name,
                    f"{len(texts)} docs, {n_chars / 1e6:.1f}M chars, {n_bytes / 1e6:.1f} MB",
                    name,
                    f"{median * 1000:.1f}",
                    f"{n_chars / median / 1e6:.0f}",
                    f"{reference / median:.1f}x",
                )
            )
    header = ("corpus", "size", "implementation", "median ms", "Mchar/s", "vs reference")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} CPUs)"
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    main()
