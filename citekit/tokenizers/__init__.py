"""Tokenizers: the protocol, :class:`TokenizedText`, and the built-in tokenizers.

``SimpleTokenizer`` is always available; ``HuggingFaceTokenizer`` and
``TiktokenTokenizer`` import their optional libraries only when constructed.
"""

from __future__ import annotations

import importlib
from typing import Any

from citekit.tokenizers.base import (
    TokenizedText,
    Tokenizer,
    tokenize_checked,
    tokenize_many_checked,
)

_LAZY = {
    "SimpleTokenizer": "citekit.tokenizers.simple",
    "TokenizerConfig": "citekit.tokenizers.simple",
    "HuggingFaceTokenizer": "citekit.tokenizers.huggingface",
    "TiktokenTokenizer": "citekit.tokenizers.tiktoken_tokenizer",
}

__all__ = ["Tokenizer", "TokenizedText", "tokenize_checked", "tokenize_many_checked", *_LAZY]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'citekit.tokenizers' has no attribute {name!r}")
    return getattr(importlib.import_module(module_name), name)
