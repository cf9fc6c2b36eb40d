"""Citations inside RAG frameworks: LangChain and LlamaIndex adapters.

:mod:`citekit.integrations.langchain` (``pip install 'citekit[langchain]'``) and
:mod:`citekit.integrations.llama_index` (``pip install 'citekit[llamaindex]'``) turn what a
framework's retriever returns into citekit sources, with chunk offsets in the parent
document, and attach citations to the framework's answer. Importing this package imports
neither framework; its names are resolved from those modules on first access, and a
missing framework raises an ``ImportError`` naming the extra to install.

Examples
--------
>>> import citekit.integrations
>>> "from_langchain_documents" in citekit.integrations.__all__
True
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> module that defines it (imported on first access)
_EXPORTS: dict[str, str] = {
    "from_langchain_documents": "citekit.integrations.langchain",
    "citation_runnable": "citekit.integrations.langchain",
    "from_llamaindex_nodes": "citekit.integrations.llama_index",
    "ResponseCiter": "citekit.integrations.llama_index",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'citekit.integrations' has no attribute {name!r}")
    return getattr(importlib.import_module(module_name), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
