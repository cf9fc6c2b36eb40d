"""Shared test configuration."""

import importlib
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# JIT warm-up makes first examples slow: no deadlines. CI runs a fixed number of examples.
settings.register_profile(
    "citekit",
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
# HYPOTHESIS_PROFILE=stress: ten times the examples, new ones on every run (tests that set
# their own max_examples keep it)
settings.register_profile(
    "stress",
    deadline=None,
    max_examples=2000,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "citekit"))


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BENCHMARKS = os.path.join(_ROOT, "benchmarks")


def load_benchmark(filename):
    """The script ``benchmarks/<filename>`` as a module. ``benchmarks/`` is not a package:
    its scripts import each other by name (as they do when run), so it goes on
    ``sys.path``, last (no script is named like a module of the standard library or an
    installed package)."""
    if _BENCHMARKS not in sys.path:
        sys.path.append(_BENCHMARKS)
    return importlib.import_module(os.path.splitext(filename)[0])


@pytest.fixture(scope="session")
def workload():
    """``benchmarks/workload.py``: the seeded benchmark documents and answers."""
    return load_benchmark("workload.py")


@pytest.fixture(scope="session")
def benchmark_script():
    """Loads a script of ``benchmarks/`` by file name (:func:`load_benchmark`)."""
    return load_benchmark


@pytest.fixture
def retrieval_calls(workload):
    """``record(n_documents, corpus_seed, n_answers)``: the pipeline's own calls of
    ``citekit.kernels._retrieval.top_candidates`` (args, kwargs) while aligning ``n_answers``
    six-sentence workload answers against a prepared corpus of the workload's documents
    (IDF weights, content words ranking, k = max_candidates_lexical), for replay."""
    from citekit.kernels import _retrieval as _bag
    from citekit.pipeline import Pipeline

    def record(n_documents, corpus_seed, n_answers):
        documents = workload.make_documents(n_documents, seed=corpus_seed)
        pipe = Pipeline()
        corpus = pipe.prepare(documents)
        calls = []
        original = _bag.top_candidates

        def recording(*args, **kwargs):
            calls.append((args, kwargs))
            return original(*args, **kwargs)

        _bag.top_candidates = recording
        try:
            for seed in range(n_answers):
                answer = workload.make_answer(documents, seed=seed, n_sentences=6)["answer"]
                pipe.align(answer, corpus)
        finally:
            _bag.top_candidates = original
        assert calls
        return calls

    return record
