"""Progress bars: a tqdm bar where someone can see one, nothing elsewhere.

One rule for every long-running entry point (batch scoring, corpus builds, the first
compile): a bar only when tqdm is installed and stderr is a terminal or the code runs in
a notebook, so that logs and pipes stay clean. When a bar would have been drawn but tqdm
is missing, the reason is logged once per process (logger ``citekit``, level INFO; the
command line says it on stderr itself).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from typing import Any

__all__ = ["in_notebook", "is_terminal", "progress_bar"]

# whether the missing tqdm has been explained in this process
_NO_TQDM_SAID: list[bool] = []


def in_notebook() -> bool:
    """Whether the code runs in a Jupyter kernel.

    Examples
    --------
    >>> in_notebook()
    False
    """
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ipython = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (an IPython that is not set up: not a notebook)
        return False
    return ipython is not None and type(ipython).__name__ == "ZMQInteractiveShell"


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is an open terminal.

    Examples
    --------
    >>> import io
    >>> is_terminal(io.StringIO())
    False
    """
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def progress_bar(
    total: int | None,
    enabled: bool,
    *,
    unit: str = "record",
    what: str = "score_records",
    description: str = "citekit",
) -> Any:
    """A tqdm bar of ``total`` steps (None: unknown) counted in ``unit``, labelled
    ``description``, when ``enabled``, tqdm is installed and someone can see it (a
    terminal or a notebook); else None (also when tqdm fails to make one: a bar is a
    nicety, never a reason for a build or a compilation to fail).

    ``what`` names the caller in the one log line that explains a missing tqdm.

    Examples
    --------
    >>> progress_bar(10, False) is None
    True
    """
    if not enabled:
        return None
    notebook = in_notebook()
    if not notebook and not is_terminal(sys.stderr):
        return None
    if importlib.util.find_spec("tqdm") is None:
        # a bar would have been drawn: say why there is none, once
        if not _NO_TQDM_SAID:
            _NO_TQDM_SAID.append(True)
            logging.getLogger("citekit").info(
                "%s: no progress bar: tqdm is not installed (pip install tqdm)", what
            )
        return None
    # the widget bar needs ipywidgets; the text bar renders fine in a notebook too
    widgets = notebook and importlib.util.find_spec("ipywidgets") is not None
    try:
        module = importlib.import_module("tqdm.notebook" if widgets else "tqdm")
        return module.tqdm(total=total, unit=unit, desc=description, dynamic_ncols=True)
    except Exception:  # noqa: BLE001 (no tqdm module, or one that cannot draw here)
        return None
