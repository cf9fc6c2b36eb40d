"""Where the time of a prepared call goes: the stages of citekit's ``Pipeline.align``
against a prepared corpus, next to cite-right 0.4.0's prepared call on the same answers.

Usage::

    python benchmarks/prepared_stages.py [--docs {100,1000}] [--answers 20] [--rounds 3]
                                         [--target 30] [--peer-python PATH] [--json OUT]

``--peer-python`` (or the environment variable ``CITEKIT_PEER_PYTHON``) is the python of
a venv with cite-right 0.4.0 (see ``benchmarks/README.rst``). Without it, or when the path
does not exist, the script says so on stderr and times citekit's stages alone (no
cite-right figure, no budget line).

The documents and answers are ``benchmarks/end_to_end.py``'s (built by its code: 100 or
1,000 documents from ``benchmarks/workload.py``, answers of five sentences). citekit
prepares the corpus once and aligns every answer once to warm up; cite-right builds its
``PreparedCitationCorpus`` and warms up the same way in a subprocess of the peer
interpreter, before any round. Then, in alternating rounds:

- citekit, plain: each answer aligned, time per answer sentence (call time divided by the
  sentences returned: ``end_to_end.py``'s "per sentence, prepared");
- citekit, staged: each answer aligned again with a timer around each stage (the
  citation stages' functions, wrapped in this process only; the wrappers add about
  a microsecond per wrapped call, about fifteen per five-sentence answer);
- cite-right: each answer aligned against its prepared corpus, time per answer sentence.

Stages, in ms per call (mean over calls; they add up to the whole call):

- ``answer``: reading the answers (tokenizing, segmenting, their tokens' content flags):
  the call minus its aligned chunk;
- ``retrieval``: the lexical candidates (``find_candidates``: the retrieval
  kernel and its set-up);
- ``bag counts``: the sentence tokens each candidate's passage holds (``bag_statistics``);
- ``alignment``: planning and the Smith-Waterman kernels (``run_aligner``);
- ``ranking``: evidence characters, ranking and choosing the pairs (``evidence_char_ranges``,
  ``choose_citations``, and ``rank`` in best-first rounds);
- ``coverage``: the sentence tokens each judged candidate covers (``judged_covers``);
- ``judged facts``: what the records need of the judged pairs (``judged_facts``);
- ``records``: each sentence's evidence set, conflicts, coverage, status and result
  records (``batch_records``: one kernel call for the batch, then each sentence's
  conflicts and objects);
- ``rest``: the chunk's other steps (packing the sentences, feasibility, scoring, the
  alignments' bookkeeping, the tokens' folded forms).

The summary gives the time per sentence that ``--target`` times cite-right's speed allows
(cite-right's median divided by the target), next to citekit's median per sentence and the
mean time per sentence of the retrieval and alignment stages. Medians are over every
answer of every round; compare within one run.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from typing import Any, Callable

import end_to_end
from workload import add_peer_python_option, peer_python

PEER_SCRIPT = r"""
import json, sys, time
from cite_right import SourceDocument, PreparedCitationCorpus

data = json.load(open(sys.argv[1]))
sources = [SourceDocument(id=d["id"], text=d["text"]) for d in data["documents"]]
corpus = PreparedCitationCorpus.from_sources(sources)
answers = data["answers"]
for answer in answers:
    corpus.align(answer)  # warm up
print("ready", flush=True)
for line in sys.stdin:  # one line per round: "round", answered with the round's times
    per_sentence = []
    for answer in answers:
        t0 = time.perf_counter()
        result = corpus.align(answer)
        per_sentence.append((time.perf_counter() - t0) * 1000 / max(1, len(result)))
    print(json.dumps(per_sentence), flush=True)
"""

STAGES = (
    "answer", "retrieval", "bag counts", "alignment", "ranking", "coverage", "judged facts",
    "records", "rest",
)
# timed stages inside the aligned chunk
_INNER = tuple(stage for stage in STAGES if stage not in ("answer", "rest"))


def _timed(times: dict[str, float], key: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            times[key] += time.perf_counter() - start

    return wrapper


class _StageTimers:
    """Timers around the pipeline's stage methods, installed while staged."""

    def __init__(self) -> None:
        import citekit._citations.align as align_module
        import citekit._citations.rounds as rounds_module
        import citekit.pipeline as pipeline_module

        self.times: dict[str, float] = collections.defaultdict(float)
        self.keys = {
            (pipeline_module, "align_batch"): "chunk",
            (align_module, "find_candidates"): "retrieval",
            (align_module, "bag_statistics"): "bag counts",
            (rounds_module, "run_aligner"): "alignment",
            (align_module, "evidence_char_ranges"): "ranking",
            (rounds_module, "evidence_char_ranges"): "ranking",
            (rounds_module, "rank"): "ranking",
            (align_module, "choose_citations"): "ranking",
            (align_module, "judged_covers"): "coverage",
            (align_module, "judged_facts"): "judged facts",
            (align_module, "batch_records"): "records",
        }
        self.originals = {key: getattr(*key) for key in self.keys}

    def __enter__(self) -> dict[str, float]:
        for (owner, name), function in self.originals.items():
            setattr(owner, name, _timed(self.times, self.keys[owner, name], function))
        return self.times

    def __exit__(self, *exc: Any) -> None:
        for (owner, name), function in self.originals.items():
            setattr(owner, name, function)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--docs", type=int, default=1000, choices=(100, 1000), help="documents in the corpus"
    )
    parser.add_argument(
        "--answers", type=int, default=20, help="answers of five sentences (at most 20)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds")
    parser.add_argument("--target", type=float, default=30.0, help="ratio to budget for")
    add_peer_python_option(parser)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if not 1 <= args.answers <= 20:
        parser.error("--answers must be from 1 to 20")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not args.target > 0:
        parser.error("--target must be positive")
    peer_interpreter = peer_python(parser, args.peer_python, required=False)

    # end_to_end.py's documents and answers, built by its own code
    data = end_to_end.build_data(quick=False)
    documents = data[f"docs{args.docs}"]
    answers = [item["answer"] for item in data[f"answers{args.docs}"][: args.answers]]

    import citekit
    from citekit.pipeline import Pipeline

    citekit.warmup()
    pipe = Pipeline()
    corpus = pipe.prepare(documents)
    for answer in answers:
        pipe.align(answer, corpus)

    peer = None
    if peer_interpreter:
        handle, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"documents": documents, "answers": answers}, out)
        peer = subprocess.Popen(
            [peer_interpreter, "-c", PEER_SCRIPT, path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    ours: list[float] = []
    theirs: list[float] = []
    timers = _StageTimers()
    n_calls = 0
    n_sentences = 0
    try:
        if peer is not None:
            assert peer.stdout is not None
            if peer.stdout.readline().strip() != "ready":  # (built before any round starts)
                raise RuntimeError("the cite-right subprocess failed to prepare its corpus")
        for _ in range(args.rounds):
            for answer in answers:
                start = time.perf_counter()
                result = pipe.align(answer, corpus)
                ours.append((time.perf_counter() - start) * 1000 / max(1, len(result)))
            with timers as times:
                for answer in answers:
                    start = time.perf_counter()
                    result = pipe.align(answer, corpus)
                    times["call"] += time.perf_counter() - start
                    n_calls += 1
                    n_sentences += len(result)
            if peer is not None:
                assert peer.stdin is not None and peer.stdout is not None
                peer.stdin.write("round\n")
                peer.stdin.flush()
                line = peer.stdout.readline()
                if not line:
                    raise RuntimeError("the cite-right subprocess stopped")
                theirs.extend(json.loads(line))
    finally:
        if peer is not None:
            assert peer.stdin is not None
            peer.stdin.close()
            peer.wait()
            os.unlink(path)
    times = timers.times
    seconds = {stage: times[stage] for stage in _INNER}
    seconds["answer"] = times["call"] - times["chunk"]
    seconds["rest"] = times["chunk"] - sum(times[stage] for stage in _INNER)
    per_call = {stage: seconds[stage] * 1000 / n_calls for stage in STAGES}
    call_ms = times["call"] * 1000 / n_calls

    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; {args.docs} documents, {len(answers)} answers, "
        f"{args.rounds} rounds"
    )
    print(f"{'stage':14s} {'ms per call':>12s} {'share':>7s}")
    for stage in STAGES:
        print(f"{stage:14s} {per_call[stage]:12.3f} {per_call[stage] / call_ms:7.1%}")
    print(f"{'call':14s} {call_ms:12.3f} {1:7.1%}")
    out: dict[str, Any] = {"stages_ms_per_call": per_call, "call_ms": call_ms}
    ours_ms = statistics.median(ours)
    # the two kernel stages per sentence (mean over the staged calls)
    kernels_ms = (per_call["retrieval"] + per_call["alignment"]) * n_calls / max(n_sentences, 1)
    out.update(citekit_per_sentence_ms=ours_ms, kernel_stages_per_sentence_ms=kernels_ms)
    print(f"citekit per sentence (median, unwrapped calls): {ours_ms:.3f} ms")
    print(f"retrieval and alignment stages per sentence (mean): {kernels_ms:.3f} ms")
    if theirs:
        theirs_ms = statistics.median(theirs)
        budget = theirs_ms / args.target
        out.update(cite_right_per_sentence_ms=theirs_ms, budget_ms=budget)
        print(
            f"cite-right per sentence (median): {theirs_ms:.3f} ms; ratio "
            f"{theirs_ms / ours_ms:.1f}x; {args.target:g}x allows {budget:.3f} ms per "
            f"sentence ({budget / ours_ms:.2f}x citekit's time)"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(out, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
