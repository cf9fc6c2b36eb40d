"""Shared test configuration."""

import importlib.util
import os

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


def load_benchmark(filename):
    """The script ``benchmarks/<filename>`` as a module, loaded by path: ``benchmarks/`` is
    not a package and holds scripts named like standard modules."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "benchmarks", filename)
    name = "citekit_test_" + os.path.splitext(filename)[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


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
