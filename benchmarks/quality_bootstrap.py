"""Paired bootstrap of citekit against each peer on the headline metrics of the Quality table.

Runs citekit's default configuration over every evaluation file (as
``benchmarks/quality.py`` does), reads the peers' cached predictions
(``benchmarks/results/peer_*.json``; run ``benchmarks/quality.py`` first), then resamples
RECORDS with replacement (the same resample for all systems, so the comparison is paired)
and reports, per headline metric, citekit's value, the peer's, and the 2.5th and 97.5th
percentiles of the difference citekit - peer. A lead is *clear* when that interval
excludes 0.

Usage::

    python benchmarks/quality_bootstrap.py [--resamples 1000] [--seed 0] [--eval-dir DIR]

Writes ``benchmarks/results/quality_bootstrap.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import quality

from citekit.evaluate import load_records, run_pipeline, score_predictions

# issue 7's headline metrics per file
HEADLINE = {
    "wice_dev": ["label_macro_f1", "support_auroc"],
    "wice_nst_train_dev": ["unsupported_char_f1"],
    "expertqa_val": ["label_macro_f1", "supported_f1"],
    "quotesum_dev": ["source_accuracy", "evidence_char_f1"],
    "xquad_en": ["evidence_top_covered"],
    "begin_wow_dev": ["support_auroc"],
}


def _metrics(records, predictions, keep):
    return score_predictions([records[i] for i in keep], [predictions[i] for i in keep]).metrics


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-dir", default=str(quality.REPO.parent / "shared" / "eval"))
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)

    from citekit.pipeline import Pipeline

    pipeline = Pipeline()
    rows = []
    for stem, metric_names in HEADLINE.items():
        path = Path(arguments.eval_dir) / f"{stem}.jsonl"
        if not path.exists():
            continue
        records = load_records(path)
        systems = {"citekit": run_pipeline(records, pipeline)[0]}
        for peer in quality.PEERS:
            cache = quality._peer_cache(peer, stem)
            if cache.exists():
                raw = json.loads(cache.read_text(encoding="utf-8"))
                systems[peer] = quality._peer_predictions(peer, raw, records)[0]
        subsets = {stem: list(range(len(records)))}
        sourced = [i for i, r in enumerate(records) if quality._has_source_text(r)]
        if 0 < len(sourced) < len(records):
            subsets[stem + quality.WITH_SOURCES] = sourced
        for name, keep in subsets.items():
            rng = random.Random(f"{arguments.seed}-{name}")
            resamples = [
                [keep[rng.randrange(len(keep))] for _ in keep] for _ in range(arguments.resamples)
            ]
            values = {
                system: [_metrics(records, predictions, sample) for sample in resamples]
                for system, predictions in systems.items()
            }
            full = {system: _metrics(records, p, keep) for system, p in systems.items()}
            for metric in metric_names:
                for peer in systems:
                    if peer == "citekit":
                        continue
                    differences = sorted(
                        a.get(metric, float("nan")) - b.get(metric, float("nan"))
                        for a, b in zip(values["citekit"], values[peer])
                    )
                    low = differences[int(0.025 * len(differences))]
                    high = differences[min(len(differences) - 1, int(0.975 * len(differences)))]
                    rows.append(
                        {
                            "file": name,
                            "metric": metric,
                            "peer": peer,
                            "citekit": full["citekit"].get(metric),
                            "peer_value": full[peer].get(metric),
                            "ci_low": low,
                            "ci_high": high,
                            "clear": low > 0,
                        }
                    )
                    print(
                        f"{name:30s} {metric:22s} citekit {full['citekit'].get(metric):.3f}  "
                        f"{peer:10s} {full[peer].get(metric):.3f}  "
                        f"diff 95% [{low:+.3f}, {high:+.3f}]{'  clear' if low > 0 else ''}",
                        flush=True,
                    )
    out = quality.RESULTS / "quality_bootstrap.json"
    out.write_text(
        json.dumps(
            {"resamples": arguments.resamples, "seed": arguments.seed, "rows": rows}, indent=1
        ),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
