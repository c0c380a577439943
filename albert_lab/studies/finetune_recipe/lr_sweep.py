"""The fine-tuning learning-rate sweep as one table: each start's mean dev score per task at
each rate, over the seeds every rate has (dev only: the test split chooses nothing).

    python -m albert_lab.studies.finetune_recipe.lr_sweep \
        experiments/results/downstream/prose_full_8k/downstream.json \
        experiments/results/finetune_recipe/lr_sweep/downstream-lr_*.json \
        --output experiments/results/finetune_recipe/lr_sweep/sweep.md

Each input is a `downstream.json` of `albert-experiment downstream` on the same run; its
rate is read from its recipe (the last `optimizer.learning_rate=` in it).
"""

from __future__ import annotations

import argparse
import json
import sys

from albert_tf.io.files import atomic_write_bytes


def learning_rate(report: dict) -> float:
    rates = [item.split("=", 1)[1] for item in report["recipe"]
             if item.startswith("optimizer.learning_rate=")]
    return float(rates[-1])


def sweep_markdown(reports: list[dict]) -> str:
    reports = sorted(reports, key=learning_rate)
    rates = [learning_rate(report) for report in reports]
    tasks = sorted(set.intersection(*(set(report["tasks"]) for report in reports)))
    lines = [f"# Fine-tuning learning rate: {reports[0]['run']}", "",
             "Mean dev score (x100) over the seeds every rate has; the recipe is otherwise "
             f"`{reports[0]['recipe_name']}`.", "",
             "| task | start | seeds | " + " | ".join(f"{rate:g}" for rate in rates) + " |",
             "|---|---|---:|" + "---:|" * len(rates)]
    for task in tasks:
        for start in ("pretrained", "random"):
            runs = [report["tasks"][task]["seeds"][start] for report in reports]
            seeds = sorted(set.intersection(*(set(found) for found in runs)), key=int)
            means = [sum(found[seed]["value"] for seed in seeds) / len(seeds) for found in runs]
            best = max(means)
            cells = [f"**{100 * mean:.1f}**" if mean == best else f"{100 * mean:.1f}"
                     for mean in means]
            lines.append(f"| {task} | {start} | {len(seeds)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", help="downstream.json files of one run")
    parser.add_argument("--output", required=True, help="the markdown table to write")
    args = parser.parse_args(argv)
    reports = []
    for path in args.reports:
        with open(path, encoding="utf-8") as f:
            reports.append(json.load(f))
    text = sweep_markdown(reports)
    atomic_write_bytes(args.output, text.encode())
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
