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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "citekit"))


@pytest.fixture(scope="session")
def workload():
    """``benchmarks/workload.py`` (the seeded benchmark documents and answers), loaded by
    path: ``benchmarks/`` is not a package and holds scripts named like standard modules."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "benchmarks", "workload.py")
    spec = importlib.util.spec_from_file_location("citekit_test_workload", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module
