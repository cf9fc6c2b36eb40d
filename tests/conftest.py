"""Shared test configuration."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

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
