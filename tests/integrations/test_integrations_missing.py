"""Without the frameworks: importing stays cheap, and using an adapter names the extra."""

import subprocess
import sys

import pytest


def hide(monkeypatch, top):
    """Make ``top`` and its submodules unimportable (as if not installed)."""
    for name in list(sys.modules):
        if name == top or name.startswith(top + "."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, top, None)


def test_importing_the_integrations_imports_no_framework():
    code = (
        "import sys, citekit.integrations, citekit.integrations.langchain, "
        "citekit.integrations.llama_index; "
        "print([m for m in ('langchain_core', 'llama_index') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_langchain_missing_names_the_extra(monkeypatch):
    from citekit.integrations import langchain

    hide(monkeypatch, "langchain_core")
    with pytest.raises(ImportError, match=r"pip install 'citekit\[langchain\]'"):
        langchain.from_langchain_documents([])
    with pytest.raises(ImportError, match=r"'langchain_core.runnables' is required .*LangChain"):
        langchain.citation_runnable()


def test_llama_index_missing_names_the_extra(monkeypatch):
    from citekit.integrations import llama_index

    hide(monkeypatch, "llama_index")
    with pytest.raises(ImportError, match=r"pip install 'citekit\[llamaindex\]'"):
        llama_index.from_llamaindex_nodes([])
    with pytest.raises(ImportError, match=r"citekit\[llamaindex\]"):
        llama_index.ResponseCiter()


def test_the_package_resolves_its_names_lazily(monkeypatch):
    import citekit.integrations as integrations

    assert set(integrations.__all__) <= set(dir(integrations))
    with pytest.raises(AttributeError, match="no_such_adapter"):
        integrations.no_such_adapter  # noqa: B018
    hide(monkeypatch, "langchain_core")
    with pytest.raises(ImportError, match=r"citekit\[langchain\]"):
        integrations.from_langchain_documents([])
