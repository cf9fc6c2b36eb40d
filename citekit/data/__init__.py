"""Example data bundled with citekit, written for the project.

``sources.jsonl`` holds seven short source documents (an annual report, a clinical-trial
summary, council minutes, a returns policy, a reef survey, a German library FAQ and a
Japanese tea-house notice) as lines ``{"id", "title", "text"}``. ``answers.jsonl`` holds
twelve generated-style answers as lines ``{"id", "question", "answer"}`` that copy,
paraphrase and fuse source sentences, change a number, or invent a claim, so that every
status (supported, partial, unsupported) occurs. All of it is fictional.

``citekit demo``, the examples and the notebooks use it.

Examples
--------
>>> from citekit.data import load_example_answers, load_example_sources
>>> sources = load_example_sources()
>>> sources[0].id, sources[0].metadata["title"][:19]
('northwind-annual-report-2023', 'Northwind Outfitter')
>>> answers = load_example_answers()
>>> sorted(answers[0])
['answer', 'id', 'question']
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["load_example_sources", "load_example_answers", "example_path"]


def example_path(name: str) -> str:
    """The filesystem path of a bundled file: ``"sources.jsonl"`` or ``"answers.jsonl"``.

    Examples
    --------
    >>> example_path("answers.jsonl").endswith("answers.jsonl")
    True
    """
    if name not in ("sources.jsonl", "answers.jsonl"):
        raise ValueError(f"name must be 'sources.jsonl' or 'answers.jsonl', got {name!r}")
    return str(resources.files(__name__).joinpath(name))


def _read_lines(name: str) -> list[dict[str, Any]]:
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_example_sources() -> list[Any]:
    """The bundled source documents as :class:`citekit.SourceDocument` (title in ``metadata``).

    Examples
    --------
    >>> [s.id for s in load_example_sources()][:2]
    ['northwind-annual-report-2023', 'lumora-trial-summary']
    """
    from citekit.results import SourceDocument

    return [
        SourceDocument(id=row["id"], text=row["text"], metadata={"title": row["title"]})
        for row in _read_lines("sources.jsonl")
    ]


def load_example_answers() -> list[dict[str, Any]]:
    """The bundled answers as dicts ``{"id", "question", "answer"}``.

    Examples
    --------
    >>> len(load_example_answers()) >= 10
    True
    """
    return _read_lines("answers.jsonl")
