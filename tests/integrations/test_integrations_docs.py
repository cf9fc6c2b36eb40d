"""The examples of the LangChain and LlamaIndex guide page run and print what they say."""

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "integrations.rst"


def code_blocks():
    """``(code, printed)`` of each ``.. code-block:: python`` of the page; ``printed`` is
    the trailing ``# ...`` comment lines (what the block prints)."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text):
        lines = [line[3:] for line in match.group(1).splitlines()]
        code = "\n".join(lines).strip("\n")
        printed = [line[2:] for line in lines if line.startswith("# ")]
        blocks.append((code, printed))
    return blocks


def test_the_page_has_one_example_per_framework():
    codes = [code for code, _ in code_blocks()]
    assert len(codes) == 2
    assert "citation_runnable" in codes[0] and "ResponseCiter" in codes[1]


@pytest.mark.parametrize("number, module", [(0, "langchain_text_splitters"),
                                            (1, "llama_index.core")])
def test_the_example_runs_and_prints_what_the_page_says(number, module):
    pytest.importorskip(module)
    code, printed = code_blocks()[number]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{PAGE.name} example {number}", "exec"), {"__name__": "example"})
    assert out.getvalue().splitlines()[-len(printed):] == printed
