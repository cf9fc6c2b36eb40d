"""Lazy import of optional dependencies with an error that names the pip extra."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["import_optional"]


def import_optional(module: str, extra: str, *, purpose: str = "") -> ModuleType:
    """Import ``module`` or raise ``ImportError`` telling which citekit extra provides it.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"pandas"``.
    extra : str
        The citekit extra that installs it, e.g. ``"pandas"`` for ``citekit[pandas]``.
    purpose : str, optional
        What the module is needed for, included in the message.

    Examples
    --------
    >>> import_optional("json", "none").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        why = f" for {purpose}" if purpose else ""
        raise ImportError(
            f"{module!r} is required{why} but is not installed; "
            f"install it with: pip install 'citekit[{extra}]'"
        ) from exc
