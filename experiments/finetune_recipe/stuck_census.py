"""Counts, over every committed result under `experiments/results/`, the fine-tunes and those
stuck at the constant answer (`albert_tf.finetuning.stuck`), and how many carry a test score
beside the dev one:

    python experiments/finetune_recipe/stuck_census.py --tasks_dir runs/tasks
    python experiments/finetune_recipe/stuck_census.py --tasks_dir runs/tasks --mark

A run made before the stuck flag was kept is judged by its dev score against its task's dev
majority share (from the task folder's `source.json`, as `albert-data task` writes it; zero
correlation for a similarity task). `--mark` writes those flags into the tables'
`results.json` (each seed's `stuck` and `constant`, each downstream verdict's `stuck`) and a
"Stuck fine-tunes" section into their `results.md`, since the runs behind them are gone and
the reports cannot be made again.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

from albert_experiments.report import stuck_markdown
from albert_experiments.statistics.downstream_average import DOWNSTREAM_AVERAGE, stuck_count
from albert_experiments.statistics.verdicts import Claim, Verdict, verdicts_markdown
from albert_experiments.summary import report_rows
from albert_tf.finetuning.stuck import is_stuck
from albert_tf.io.files import atomic_write_bytes

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow comes with the report module
ROOT = os.path.join(os.path.dirname(__file__), os.pardir, "results")


def dev_floors(tasks_dir: str) -> dict[str, float]:
    """Task folder name -> what one answer for every dev example scores."""
    floors = {}
    for path in glob.glob(os.path.join(tasks_dir, "*", "source.json")):
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        dev = record["splits"]["dev"]
        floors[os.path.basename(os.path.dirname(path))] = dev.get("majority_baseline", 0.0)
    return floors


def _runs_of_table(report: dict) -> list[tuple[str, str, str, dict]]:
    """(row, task, seed, run) of every fine-tune in a table's results.json."""
    return [(row["name"], task, seed, run) for row in report_rows(report)
            for task, entry in row.get("downstream", {}).items()
            for seed, run in entry.get("seeds", {}).items()]


def _runs_of_suite(report: dict) -> list[tuple[str, str, str, dict]]:
    """The same for a downstream suite's report, old (score lists) or new (seed records)."""
    found = []
    for task, row in report.get("tasks", {}).items():
        if "seeds" in row:
            found += [(start, task, seed, run) for start, seeds in row["seeds"].items()
                      for seed, run in seeds.items()]
        elif "scores" in row:
            found += [(start, task, str(seed), {"value": value})
                      for start, values in row["scores"].items()
                      for seed, value in zip(report["seeds"], values)]
    return found


def recipe_of(report: dict, name: str) -> str:
    """The small-model recipe a report was made with: a table's recipe name, or for a suite
    whether its recipe list ends with Adam's bias correction on."""
    if name == "results.json":
        names = {entry.get("settings", {}).get("recipe") for row in report_rows(report)
                 for entry in row.get("downstream", {}).values()}
        return ", ".join(sorted(str(found) for found in names))
    corrections = [item for item in report.get("recipe", [])
                   if item.startswith("optimizer.bias_correction=")]
    corrected = bool(corrections) and corrections[-1].endswith("=true")
    return "bias correction" if corrected else "no bias correction"


def judged(run: dict, task: str, floors: dict[str, float]) -> bool:
    if "stuck" in run:
        return bool(run["stuck"])
    return is_stuck(run["value"], floors[task])


def census(floors: dict[str, float], root: str = ROOT) -> list[dict]:
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True)):
        name = os.path.basename(path)
        if not (name == "results.json" or name.startswith("downstream")):
            continue
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        runs = _runs_of_table(report) if name == "results.json" else _runs_of_suite(report)
        if not runs:
            continue
        rows.append({"file": os.path.relpath(path, root), "recipe": recipe_of(report, name),
                     "fine_tunes": len(runs),
                     "stuck": sum(judged(run, task, floors) for _, task, _, run in runs),
                     "with_test": sum(run.get("test") is not None for *_, run in runs),
                     "flagged": all("stuck" in run for *_, run in runs)})
    return rows


def mark_table(path: str, floors: dict[str, float]) -> None:
    """Writes the stuck flags into one table's results.json and its section into
    results.md."""
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    for _, task, _, run in _runs_of_table(report):
        run.setdefault("constant", floors[task])
        run.setdefault("stuck", is_stuck(run["value"], run["constant"]))
    by_name = {row["name"]: row for row in report["variants"]}
    task_names = sorted({task for _, task, _, _ in _runs_of_table(report)})
    verdicts = []
    for record in report.get("verdicts", []):
        if record["metric"] == DOWNSTREAM_AVERAGE and record["difference"] is not None:
            seeds = [str(seed) for seed in range(1, record["samples"] + 1)]
            record["stuck"] = sum(stuck_count(by_name[name], task_names, seeds)
                                  for name in (record["first"], record["second"])
                                  if name in by_name)
        claim = Claim(**{key: record[key] for key in ("text", "metric", "first", "second",
                                                      "expect", "margin", "second_metric")})
        verdicts.append(Verdict(claim, record["difference"], record["low"], record["high"],
                                record["samples"], record["outcome"], record["paired"],
                                record.get("stuck", 0)))
    atomic_write_bytes(path, json.dumps(report, indent=1).encode())
    markdown_path = os.path.join(os.path.dirname(path), "results.md")
    with open(markdown_path, encoding="utf-8") as f:
        markdown = f.read()
    section = stuck_markdown(report_rows(report), task_names)
    if section and "## Stuck fine-tunes" not in markdown:
        anchor = markdown.find("## Verdicts")
        anchor = len(markdown) if anchor < 0 else anchor
        markdown = (markdown[:anchor] + f"## Stuck fine-tunes\n\n{section}\n\n"
                    + markdown[anchor:])
    if verdicts:  # the verdict table again, now with its stuck counts
        start = markdown.find("| the paper's claim |")
        end = markdown.find("\n\n", start)
        end = len(markdown) if end < 0 else end
        if start >= 0:
            markdown = markdown[:start] + verdicts_markdown(verdicts) + markdown[end:]
    atomic_write_bytes(markdown_path, markdown.encode())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks_dir", required=True, help="the albert-data task folders")
    parser.add_argument("--mark", action="store_true")
    parser.add_argument("--json", help="also write the counts here")
    args = parser.parse_args(argv)
    floors = dev_floors(args.tasks_dir)
    if args.mark:
        for path in sorted(glob.glob(os.path.join(ROOT, "table*", "*", "results.json"))):
            mark_table(path, floors)
    rows = census(floors)
    print("| result | recipe | fine-tunes | stuck | with a test score |\n"
          "|---|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['file']} | {row['recipe']} | {row['fine_tunes']} | {row['stuck']} | "
              f"{row['with_test']} |")
    total = {key: sum(row[key] for row in rows) for key in ("fine_tunes", "stuck",
                                                            "with_test")}
    print(f"| all | | {total['fine_tunes']} | {total['stuck']} | {total['with_test']} |")
    if args.json:
        atomic_write_bytes(args.json, json.dumps({"results": rows, "total": total},
                                                 indent=1).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
