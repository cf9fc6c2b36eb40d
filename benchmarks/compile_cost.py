"""What citekit's first compile costs, kernel by kernel.

Usage::

    python benchmarks/compile_cost.py                    # both scenarios, about 3 minutes
    python benchmarks/compile_cost.py --scenario align --top 20
    python benchmarks/compile_cost.py --json compile_cost.json

Each scenario runs in a fresh Python process whose numba cache directory
(``NUMBA_CACHE_DIR``) is a new empty temporary directory, so every kernel it needs is
compiled, none loaded:

``align``
    ``import citekit`` and the first ``citekit.align_citations`` call on one short answer
    and one source (what a new user's first call pays).
``warmup``
    ``citekit.warmup()`` in one process (every kernel compiled here, so each is recorded),
    then, in a second fresh process with another empty cache, ``citekit.warmup(processes=2)``
    for its wall-clock time (the other process's compiles are not recorded).

Every compilation is recorded through numba's event API (``numba:compile`` events, one per
kernel and signature that is compiled rather than loaded from the cache). A kernel that
calls another kernel compiles its callee while typing itself, so its event encloses the
callee's: the table shows each signature's *own* time (its event minus the events nested in
it, which sum to the total) and its inclusive time. Printed: the scenario's wall and CPU
time, the number of kernels and signatures compiled, the sum of own times and the ``--top``
most expensive signatures. ``--json OUT`` writes every figure.

CPU time (user + system of the measuring process) is steadier than wall time on a shared
machine; compare figures of one run, or ratios of runs made close together.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs in the fresh process: records the numba:compile events of one scenario and prints
# them as JSON on its last line of stdout.
_CHILD = r"""
import json, resource, sys, time

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

started, started_cpu = time.perf_counter(), cpu()
import numba.core.event as ev
import citekit

scenario, processes = sys.argv[1], int(sys.argv[2])
with ev.install_recorder("numba:compile") as recorder:
    if scenario == "align":
        citekit.align_citations("Revenue grew 15% in 2024.", ["Revenue grew 15% in 2024."])
    else:
        citekit.warmup(processes=processes)
wall, cpu_time = time.perf_counter() - started, cpu() - started_cpu
try:
    from citekit._jit import kernel_name, type_spec
except ImportError:  # (a citekit from before the manifest: no "top" entries)
    kernel_name = type_spec = None

# pair the START and END events (they nest like parentheses)
stack, compiles = [], []
for stamp, event in recorder.buffer:
    if event.status == ev.EventStatus.START:
        stack.append({"start": stamp, "children": 0.0, "data": event.data})
        continue
    opened = stack.pop()
    inclusive = stamp - opened["start"]
    if stack:
        stack[-1]["children"] += inclusive
    dispatcher = opened["data"]["dispatcher"]
    function = dispatcher.py_func
    compiles.append({
        "kernel": f"{function.__module__}.{function.__qualname__}",
        "signature": "(" + ", ".join(str(a) for a in opened["data"]["args"]) + ")",
        "own": inclusive - opened["children"],
        "inclusive": inclusive,
        # (what a manifest of the kernels Python calls needs)
        "top": None if stack or kernel_name is None else [kernel_name(dispatcher),
        opened["start"], [type_spec(a) for a in opened["data"]["args"]]],
    })
print(json.dumps({"wall": wall, "cpu": cpu_time, "compiles": compiles}))
"""


def run_scenario(scenario: str, processes: int = 1) -> dict:
    """Run one scenario in a fresh process with an empty numba cache; its figures.

    ``processes``: for ``align``, the processes the first call may compile in
    (``CITEKIT_COMPILE_PROCESSES``); for ``warmup``, ``warmup(processes=...)``.
    """
    with tempfile.TemporaryDirectory(prefix="citekit_compile_cost_") as cache:
        env = dict(os.environ)
        env["NUMBA_CACHE_DIR"] = cache
        env.pop("CITEKIT_NUMBA_CACHE", None)
        env["CITEKIT_COMPILE_PROCESSES"] = str(processes if scenario == "align" else 1)
        env["PYTHONPATH"] = os.pathsep.join(
            [_ROOT, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        )
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, scenario, str(processes)],
            env=env, capture_output=True, text=True,
        )
        process_wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"compile_cost: the {scenario} scenario failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["process_wall"] = process_wall
    figures["processes"] = processes
    return figures


def summary(figures: dict, top: int) -> dict:
    """Totals and the ``top`` most expensive signatures (by own time) of one scenario."""
    compiles = sorted(figures["compiles"], key=lambda c: -c["own"])
    return {
        "wall_s": round(figures["wall"], 2),
        "cpu_s": round(figures["cpu"], 2),
        "process_wall_s": round(figures["process_wall"], 2),
        "processes": figures["processes"],
        "kernels": len({c["kernel"] for c in compiles}),
        "signatures": len(compiles),
        "compile_s": round(sum(c["own"] for c in compiles), 2),
        "top": [
            {"kernel": c["kernel"], "signature": c["signature"], "own_s": round(c["own"], 3),
             "inclusive_s": round(c["inclusive"], 3)}
            for c in compiles[:top]
        ],
    }


def print_summary(name: str, result: dict) -> None:
    print(
        f"{name}: wall {result['wall_s']:.1f} s, CPU {result['cpu_s']:.1f} s "
        f"({result['processes']} process{'es' if result['processes'] > 1 else ''}); "
        f"compiled {result['signatures']} signatures of {result['kernels']} kernels, "
        f"{result['compile_s']:.1f} s in all"
    )
    if result["top"]:
        print(f"  {'own s':>7} {'incl. s':>7}  kernel (signature)")
    for row in result["top"]:
        signature = row["signature"]
        if len(signature) > 70:
            signature = signature[:67] + "..."
        print(f"  {row['own_s']:7.2f} {row['inclusive_s']:7.2f}  {row['kernel']} {signature}")


_MANIFEST_HEAD = '''"""The kernels the first ``align_citations`` of a process compiles.

In the order it compiles them, with the argument types it calls them with:
``(share, kernel, types)``, where ``kernel`` is ``module:name`` and ``types`` are
:func:`citekit._jit.type_spec` texts. The calling process compiles them as it goes; a helper
process started at its first compilation (:func:`citekit._compiling.start_helper`) compiles those
of share 1 from the last backwards, each kernel by whichever of the two claims it first.
Written by ``python benchmarks/compile_cost.py --manifest citekit/_first_call.py``; a
stale entry costs time, never a result (the caller compiles what the helper did not), and
``tests/test_warm.py`` checks that the list matches the pipeline.
"""

KERNELS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
'''


def write_manifest(figures: dict, path: str) -> None:
    """Write ``citekit/_first_call.py`` from a one-process ``align`` scenario: the kernels
    Python called, in order; the first in share 0, the rest in share 1."""
    tops = sorted((c for c in figures["compiles"] if c["top"]), key=lambda c: c["top"][1])
    split = 1  # (the caller starts; the helper works backwards from the last stage)
    lines = [_MANIFEST_HEAD]
    for index, compiled in enumerate(tops):
        name, _, specs = compiled["top"]
        share = 0 if index < split else 1
        lines.append(f"    ({share}, {name!r}, (\n")
        lines.extend(f"        {spec!r},\n" for spec in specs)
        lines.append("    )),\n")
    lines.append(")\n")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    print(f"wrote {path}: {len(tops)} kernels, {split} compiled by the caller")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=["align", "warmup", "both"], default="both")
    parser.add_argument("--top", type=int, default=10, help="signatures listed (default 10)")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to OUT")
    parser.add_argument(
        "--manifest", metavar="OUT",
        help="write the kernels the first align_citations compiles (citekit/_first_call.py) "
        "to OUT instead",
    )
    args = parser.parse_args(argv)
    results = {}
    if args.manifest:
        write_manifest(run_scenario("align", 1), args.manifest)
        return 0
    if args.scenario in ("align", "both"):
        results["first_align_citations_1_process"] = summary(run_scenario("align", 1), args.top)
        print_summary("first align_citations, 1 process", results[
            "first_align_citations_1_process"])
        results["first_align_citations"] = summary(run_scenario("align", 2), args.top)
        print_summary("first align_citations (with its helper process)",
                      results["first_align_citations"])
    if args.scenario in ("warmup", "both"):
        results["warmup_1_process"] = summary(run_scenario("warmup", 1), args.top)
        print_summary("warmup(processes=1)", results["warmup_1_process"])
        results["warmup_2_processes"] = summary(run_scenario("warmup", 2), 0)
        print_summary("warmup(processes=2)", results["warmup_2_processes"])
    if args.json:
        record = {
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
            "python": platform.python_version(),
            "results": results,
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
