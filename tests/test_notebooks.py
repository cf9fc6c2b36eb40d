"""The notebooks in notebooks/ execute without error, and are committed without outputs.

Executed with nbclient (what nbmake runs underneath) in a fresh kernel, from the notebooks
folder, so ``python -m pytest`` covers them with no extra options. They can also be run with
``python -m pytest --nbmake notebooks/``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

nbformat = pytest.importorskip("nbformat")

# notebook -> modules it needs beyond the notebook extra
NEEDS = {
    "integrations.ipynb": ("langchain_core", "langchain_text_splitters", "llama_index"),
}


def test_the_two_notebooks_exist():
    assert {p.name for p in NOTEBOOKS} >= {"exploration.ipynb", "batch_scoring.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.notebooks
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    for module in NEEDS.get(path.name, ()):
        pytest.importorskip(module)
    # the kernel is a subprocess: make this checkout importable in it even when not installed
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - started
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors
    # a notebook that renders nothing would be a stub: check the rich outputs are there
    mime_types = {
        mime
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        for mime in output.get("data", {})
    }
    assert {"text/html", "image/png"} <= mime_types
    print(f"{path.name} executed in {elapsed:.1f} s")


def test_the_threshold_section_of_the_exploration_notebook_describes_its_table():
    # what the markdown of "Tune a threshold" says of the statuses its code cell tabulates
    notebook = nbformat.read(REPO / "notebooks" / "exploration.ipynb", as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    markdown = [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]
    namespace: dict = {}
    exec(code[0], namespace)  # the sources, the pipeline and the corpus
    exec(code[1].rstrip().removesuffix("result"), namespace)  # the answer and its result
    from citekit import CitationConfig, Pipeline

    def statuses(threshold):
        config = CitationConfig(supported_answer_coverage=threshold)
        return [s.status for s in Pipeline(config).align(namespace["answer"], namespace["corpus"])]

    coverage = [round(s.content_coverage or 0.0, 2) for s in namespace["result"]]
    [section] = [text for text in markdown if text.startswith("## Tune a threshold")]
    assert "cover 0.75-0.83" in section and "0.9 demotes all but the\ndividend" in section
    honest = [0, 2, 3]  # revenue, same-store sales, stores; 4 is the dividend
    assert min(coverage[i] for i in honest) == 0.75 and max(coverage[i] for i in honest) == 0.83
    assert coverage[4] == 1.0
    low = statuses(0.3)
    assert statuses(0.5) == statuses(0.7) == low
    assert low == ["supported", "partial", "supported", "supported", "supported", "unsupported"]
    assert statuses(0.9) == ["partial"] * 4 + ["supported", "unsupported"]
