"""Seeded workload generator for the citation benchmarks.

Usage::

    python benchmarks/workload.py --docs 100 --answers 20 --out workload.json

Produces realistic report-style prose: sentences about organisations, places and
quantities with numbers (``1,200``, ``5.2``), percentages (``15%``), currency
(``$2.4 million``, ``€310``), years and hyphenated words (``cost-effective``), about
7,400 characters per document (so five documents are about 37,000 characters, the size
of a typical retrieval-augmented generation call). Answers mix four kinds of sentences:

- ``copy``: a source sentence verbatim;
- ``paraphrase``: a source sentence with clauses reordered, a word dropped and numbers
  reformatted (``1,200`` -> ``1200``, ``15%`` -> ``15 percent``);
- ``fuse``: the first half of a sentence of one document joined to the second half of a
  sentence of another;
- ``invent``: a new sentence from the same vocabulary, supported by nothing.

Everything is drawn from ``random.Random(seed)``: the same arguments give the same
texts on every machine and Python version.

The other scripts of ``benchmarks/`` import this module (``import workload``: a script's
own folder is on ``sys.path``). It also holds the one rule for finding the peers'
interpreter (:func:`add_peer_python_option`, :func:`peer_python`): ``--peer-python PATH``,
else the environment variable ``CITEKIT_PEER_PYTHON``; there is no default path.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from typing import Any

__all__ = [
    "make_documents",
    "make_answer",
    "make_workload",
    "ANSWER_KINDS",
    "PEER_PYTHON_VARIABLE",
    "add_peer_python_option",
    "peer_python",
]

ANSWER_KINDS = ("copy", "paraphrase", "fuse", "invent")

_ORGS = [
    "Northwind Energy",
    "Contoso Health",
    "Fabrikam Logistics",
    "Tailspin Airways",
    "Litware Labs",
    "Adatum Finance",
    "Proseware Foods",
    "Wingtip Retail",
    "Lucerne Publishing",
    "Coho Vineyard",
    "Blue Yonder Freight",
    "Alpine Ski House",
    "Margie's Travel",
    "Humongous Insurance",
    "Trey Research",
]
_PLACES = [
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Toronto",
    "Lyon",
    "Hamburg",
    "Denver",
    "Bangalore",
    "Santiago",
    "Krakow",
    "Brisbane",
    "Tallinn",
    "Austin",
    "Seville",
    "Hanoi",
]
_SUBJECTS = [
    "quarterly revenue",
    "operating margin",
    "customer retention",
    "water consumption",
    "carbon emissions",
    "employee headcount",
    "freight volume",
    "average ticket price",
    "research spending",
    "warehouse capacity",
    "net profit",
    "market share",
    "delivery time",
    "energy output",
    "patient admissions",
]
_VERBS_UP = ["rose", "increased", "grew", "climbed", "expanded"]
_VERBS_DOWN = ["fell", "decreased", "dropped", "declined", "shrank"]
_REASONS = [
    "after a cost-effective upgrade of the main plant",
    "because of strong demand in the region",
    "following a long-term agreement with suppliers",
    "as the company reorganised its sales teams",
    "despite higher interest rates and a weak currency",
    "thanks to a state-of-the-art logistics system",
    "after regulators approved the new pricing model",
    "while competitors struggled with supply shortages",
]
_CONNECTIVES = ["In", "During", "By the end of", "Throughout"]
_QUARTERS = [
    "the first quarter",
    "the second quarter",
    "the third quarter",
    "the fourth quarter",
    "the fiscal year",
]
_EXTRAS = [
    "Analysts had expected a smaller change.",
    "The board described the result as encouraging.",
    "Management plans to publish a detailed breakdown next month.",
    "The figures were audited by an independent firm.",
    "Local officials welcomed the announcement.",
    "Several investors asked for a clearer long-term strategy.",
]


def _number(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return f"{rng.randint(1_000, 99_000):,}"
    if kind < 0.7:
        return f"{rng.randint(1, 99)}.{rng.randint(1, 9)}"
    return str(rng.randint(2, 950))


def _sentence(rng: random.Random) -> str:
    org, place, subject = rng.choice(_ORGS), rng.choice(_PLACES), rng.choice(_SUBJECTS)
    when = f"{rng.choice(_CONNECTIVES)} {rng.choice(_QUARTERS)} of {rng.randint(2015, 2025)}"
    up = rng.random() < 0.6
    verb = rng.choice(_VERBS_UP if up else _VERBS_DOWN)
    template = rng.randrange(5)
    if template == 0:
        return (
            f"{when}, {subject} at {org} in {place} {verb} {rng.randint(1, 40)}% "
            f"{rng.choice(_REASONS)}."
        )
    if template == 1:
        amount = f"${_number(rng)} million" if rng.random() < 0.5 else f"€{rng.randint(10, 990)}"
        return f"{org} reported that {subject} {verb} to {amount} {rng.choice(_REASONS)}."
    if template == 2:
        return (
            f"The {place} site of {org} handled {_number(rng)} units, and its {subject} "
            f"{verb} by {rng.randint(1, 60)} percent compared with {rng.randint(2014, 2024)}."
        )
    if template == 3:
        return (
            f"According to the annual report, {org} spent ${_number(rng)} on a "
            f"{rng.choice(['two', 'three', 'five'])}-year "
            f"programme in {place}, and {subject} {verb} {rng.randint(1, 25)}.{rng.randint(0, 9)}%."
        )
    return rng.choice(_EXTRAS)


_INVENTED_TOPICS = [
    "medieval glassware",
    "migratory birds",
    "jazz recordings",
    "volcanic soil",
    "chess openings",
]
_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def _invented(rng: random.Random) -> str:
    """A claim no generated document makes (its words are not in the documents' vocabulary)."""
    return (
        f"The mayor of {rng.choice(_PLACES)} unveiled a "
        f"{rng.choice(['small', 'bold', 'quiet'])} museum "
        f"about {rng.choice(_INVENTED_TOPICS)} on {rng.choice(_WEEKDAYS)}, attracting "
        f"{rng.randint(2, 90)}0 visitors."
    )


def make_documents(
    n_docs: int, *, seed: int = 0, chars_per_doc: int = 7_400
) -> list[dict[str, str]]:
    """``n_docs`` documents of about ``chars_per_doc`` characters: ``{"id", "text"}`` dicts.

    Sentences are grouped in paragraphs of three to six, separated by blank lines.
    """
    rng = random.Random(f"documents-{seed}")
    documents = []
    for number in range(n_docs):
        paragraphs: list[str] = []
        length = 0
        while length < chars_per_doc:
            paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(3, 6)))
            paragraphs.append(paragraph)
            length += len(paragraph) + 2
        documents.append({"id": f"doc-{number:05d}", "text": "\n\n".join(paragraphs)})
    return documents


def _sentences_of(text: str) -> list[str]:
    # the generator ends every sentence with ". " or a paragraph break
    out = []
    for paragraph in text.split("\n\n"):
        parts = paragraph.split(". ")
        out.extend(part if part.endswith(".") else part + "." for part in parts if part)
    return out


def _paraphrase(sentence: str, rng: random.Random) -> str:
    words = sentence.rstrip(".").split(" ")
    if ", " in sentence and rng.random() < 0.7:
        head, tail = sentence.rstrip(".").split(", ", 1)
        words = (tail[:1].upper() + tail[1:] + " " + head[:1].lower() + head[1:]).split(" ")
    if len(words) > 6:
        del words[rng.randrange(1, len(words) - 1)]
    text = " ".join(words) + "."
    text = text.replace("%", " percent")
    out = []
    for word in text.split(" "):
        digits = word.replace(",", "")
        out.append(digits if digits.isdigit() and "," in word else word)
    return " ".join(out)


def make_answer(
    documents: list[dict[str, str]],
    *,
    n_sentences: int = 5,
    seed: int = 0,
    kinds: tuple[str, ...] = ANSWER_KINDS,
) -> dict[str, Any]:
    """An answer of ``n_sentences`` sentences over ``documents`` and what each sentence is.

    Returns ``{"answer": str, "kinds": [...], "sources": [[doc index, ...], ...]}``.
    """
    rng = random.Random(f"answer-{seed}")
    sentences, labels, origins = [], [], []
    for _ in range(n_sentences):
        kind = rng.choice(kinds)
        first = rng.randrange(len(documents))
        candidates = _sentences_of(documents[first]["text"])
        sentence = rng.choice(candidates)
        if kind == "copy":
            origin = [first]
        elif kind == "paraphrase":
            sentence = _paraphrase(sentence, rng)
            origin = [first]
        elif kind == "fuse":
            second = rng.randrange(len(documents))
            other = rng.choice(_sentences_of(documents[second]["text"]))
            left = sentence.rstrip(".").split(" ")
            right = other.rstrip(".").split(" ")
            sentence = (
                " ".join(left[: max(3, len(left) // 2)])
                + " and "
                + " ".join(right[len(right) // 2 :])
                + "."
            )
            origin = [first, second]
        else:
            sentence = _invented(rng)
            origin = []
        sentences.append(sentence)
        labels.append(kind)
        origins.append(origin)
    return {"answer": " ".join(sentences), "kinds": labels, "sources": origins}


def make_workload(
    n_docs: int, n_answers: int, *, seed: int = 0, n_sentences: int = 5
) -> dict[str, Any]:
    """Documents plus ``n_answers`` answers over them."""
    documents = make_documents(n_docs, seed=seed)
    answers = [
        make_answer(documents, n_sentences=n_sentences, seed=seed * 10_000 + i)
        for i in range(n_answers)
    ]
    return {"documents": documents, "answers": answers}


PEER_PYTHON_VARIABLE = "CITEKIT_PEER_PYTHON"
_PEER_PYTHON_HINT = (
    f"pass --peer-python PATH or set {PEER_PYTHON_VARIABLE} to the python of the peers' venv, "
    "see benchmarks/README.rst"
)


def add_peer_python_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--peer-python PATH`` to ``parser`` (read it with :func:`peer_python`)."""
    parser.add_argument(
        "--peer-python",
        metavar="PATH",
        help=f"python of the peers' venv (default: ${PEER_PYTHON_VARIABLE}; '' skips the peers)",
    )


def peer_python(
    parser: argparse.ArgumentParser, given: str | None, *, required: bool
) -> str | None:
    """The peers' interpreter: ``given`` (``--peer-python``), else ``$CITEKIT_PEER_PYTHON``.

    Returns the path when it exists. Otherwise (neither set, an empty value, or a path that
    does not exist) a script that can run citekit alone (``required=False``) gets None and
    one line on stderr saying the peers are skipped; a script that cannot
    (``required=True``) exits with status 2 and one line saying how to pass the path.
    """
    path = given if given is not None else os.environ.get(PEER_PYTHON_VARIABLE)
    if path is None:
        reason = "no peer interpreter given"
    elif not path:
        reason = "empty peer interpreter"
    elif not os.path.exists(path):
        reason = f"peer interpreter {path} not found"
    else:
        return path
    if required:
        parser.exit(2, f"{parser.prog}: {reason}: {_PEER_PYTHON_HINT}\n")
    print(f"{reason}: citekit only (to add the peers, {_PEER_PYTHON_HINT})", file=sys.stderr)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--answers", type=int, default=20)
    parser.add_argument("--sentences", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="-")
    args = parser.parse_args(argv)
    workload = make_workload(args.docs, args.answers, seed=args.seed, n_sentences=args.sentences)
    text = json.dumps(workload, ensure_ascii=False)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
