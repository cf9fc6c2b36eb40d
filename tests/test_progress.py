"""The one progress-bar rule (citekit._progress): a bar only where someone sees it."""

import io
import logging
import sys

import pytest

from citekit import _progress
from citekit._progress import in_notebook, is_terminal, progress_bar


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_no_bar_when_disabled_or_unseen(monkeypatch):
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress_bar(3, False) is None
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe or a log file
    assert progress_bar(3, True) is None


def test_a_bar_counts_in_its_unit_on_a_terminal(monkeypatch):
    pytest.importorskip("tqdm")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = progress_bar(4, True, unit="document")
    bar.update(4)
    bar.close()
    assert "4/4" in terminal.getvalue() and "document" in terminal.getvalue()


def test_a_missing_tqdm_is_named_once_with_the_caller(monkeypatch, caplog):
    monkeypatch.setattr(_progress, "_NO_TQDM_SAID", [])
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(sys, "stderr", Terminal())
    with caplog.at_level(logging.INFO, logger="citekit"):
        assert progress_bar(2, True, what="Corpus.build") is None
        assert progress_bar(2, True, what="Corpus.build") is None
    said = [r.getMessage() for r in caplog.records]
    assert said == ["Corpus.build: no progress bar: tqdm is not installed (pip install tqdm)"]


def test_terminal_and_notebook_detection():
    closed = io.StringIO()
    closed.close()
    assert not is_terminal(closed) and not is_terminal(object()) and is_terminal(Terminal())
    assert in_notebook() is False


def test_a_bar_tqdm_cannot_draw_is_none(monkeypatch):
    tqdm = pytest.importorskip("tqdm")

    def broken(*args, **kwargs):
        raise RuntimeError("no display")

    monkeypatch.setattr(tqdm, "tqdm", broken)
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress_bar(3, True, description="citekit: compiling") is None


def test_a_bar_carries_its_description(monkeypatch):
    pytest.importorskip("tqdm")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = progress_bar(2, True, unit="kernel", description="citekit: compiling")
    bar.update(2)
    bar.close()
    assert "citekit: compiling" in terminal.getvalue()
