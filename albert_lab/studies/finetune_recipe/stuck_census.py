"""Counts, over every committed result under `experiments/results/`, the fine-tunes and those
stuck at the constant answer (`albert_tf.finetuning.stuck`), and how many carry a test score
beside the dev one:

    python -m albert_lab.studies.finetune_recipe.stuck_census --tasks_dir runs/tasks
    python -m albert_lab.studies.finetune_recipe.stuck_census --tasks_dir runs/tasks --mark

`--shapes` adds the measurement issue's view: the fine-tunes made with the corrected recipe,
by model shape (hidden size x layers) and start, against the nine shapes its "done" names
(hidden 64, 128 and 256 at 2, 4 and 12 layers); a table's variant reads its shape from its
settings, a recipe-study run from its `pretraining.json`.

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

from albert_lab.ablations.report import stuck_markdown
from albert_lab.ablations.statistics.downstream_average import DOWNSTREAM_AVERAGE, stuck_count
from albert_lab.ablations.statistics.verdicts import Claim, Verdict, verdicts_markdown
from albert_lab.ablations.summary import report_rows
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


def _runs_of_table(report: dict) -> list[tuple[dict, str, str, dict]]:
    """(row, task, seed, run) of every fine-tune in a table's results.json; the row is the
    report's own (its settings say the shape)."""
    return [(row, task, seed, run) for row in report_rows(report)
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


TARGET_SHAPES = [(hidden, layers) for hidden in (64, 128, 256) for layers in (2, 4, 12)]


def _shape(model: dict) -> tuple[int, int]:
    return int(model["hidden_size"]), int(model["num_layers"])


def shaped_runs(floors: dict[str, float], root: str = ROOT) -> list[dict]:
    """Every fine-tune made with the corrected recipe whose model shape the results say:
    {file, shape, start, task, seed, stuck}. Runs that one report reads from another (a
    study lever sharing the reference's random start, the grid's reference row) are counted
    once, by (shape, start, task, seed, score)."""
    found, seen = [], set()

    def add(file, shape, start, task, seed, run):
        key = (shape, start, task, seed, run.get("value"), run.get("test"))
        if key not in seen:
            seen.add(key)
            found.append({"file": file, "shape": shape, "start": start, "task": task,
                          "seed": seed, "stuck": judged(run, task, floors)})

    for path in sorted(glob.glob(os.path.join(root, "table*", "*", "results.json"))):
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        if recipe_of(report, "results.json") == "small_model":
            continue  # made before the correction
        for row, task, seed, run in _runs_of_table(report):
            is_random = row is report.get("random_start")
            model = row["model"] if is_random else row["settings"]["model"]
            add(os.path.relpath(path, root), _shape(model),
                "random" if is_random else "pretrained", task, seed, run)
    for path in sorted(glob.glob(os.path.join(root, "**", "pretraining.json"),
                                 recursive=True)):
        suite_path = os.path.join(os.path.dirname(path), "downstream.json")
        if not os.path.exists(suite_path):
            continue
        with open(path, encoding="utf-8") as f:
            pretraining = json.load(f)
        with open(suite_path, encoding="utf-8") as f:
            report = json.load(f)
        if recipe_of(report, "downstream.json") != "bias correction":
            continue
        for start, task, seed, run in _runs_of_suite(report):
            add(os.path.relpath(suite_path, root), _shape(pretraining), start, task, seed, run)
    return found


def shape_table(runs: list[dict]) -> list[dict]:
    """One row per (shape, start): fine-tunes, stuck, tasks; the nine target shapes always
    listed, with zero where nothing is measured yet."""
    keys = sorted({(run["shape"], run["start"]) for run in runs}
                  | {(shape, start) for shape in TARGET_SHAPES
                     for start in ("pretrained", "random")})
    rows = []
    for shape, start in keys:
        mine = [run for run in runs if run["shape"] == shape and run["start"] == start]
        rows.append({"hidden_size": shape[0], "num_layers": shape[1], "start": start,
                     "target": shape in TARGET_SHAPES, "fine_tunes": len(mine),
                     "stuck": sum(run["stuck"] for run in mine),
                     "tasks": sorted({run["task"] for run in mine}),
                     "files": sorted({run["file"] for run in mine})})
    return rows


def shape_markdown(rows: list[dict]) -> str:
    lines = ["| shape (H x layers) | start | one of the nine | fine-tunes | stuck | tasks |",
             "|---|---|---|---:|---:|---|"]
    for row in rows:
        lines.append(f"| {row['hidden_size']} x {row['num_layers']} | {row['start']} | "
                     f"{'yes' if row['target'] else ''} | {row['fine_tunes']} | "
                     f"{row['stuck']} | {', '.join(row['tasks']) or '–'} |")
    covered = {(row["hidden_size"], row["num_layers"]) for row in rows
               if row["target"] and row["fine_tunes"]}
    both = [shape for shape in TARGET_SHAPES if all(
        row["fine_tunes"] for row in rows
        if (row["hidden_size"], row["num_layers"]) == shape)]
    lines.append(f"\nOf the nine shapes, {len(covered)} have fine-tunes and {len(both)} "
                 f"have both starts fine-tuned.")
    return "\n".join(lines)


STUCK_TITLE = "## Stuck fine-tunes"


def with_stuck_section(markdown: str, section: str) -> str:
    """`markdown` (a table's results.md) with its stuck section made `section`: an earlier
    one replaced (it may name a recipe no longer in use), or a new one put before the
    verdicts (at the end without them); unchanged when `section` is empty."""
    if not section:
        return markdown
    block = f"{STUCK_TITLE}\n\n{section}\n\n"
    start = markdown.find(STUCK_TITLE)
    if start >= 0:
        end = markdown.find("\n## ", start + len(STUCK_TITLE))
        return markdown[:start] + block + ("" if end < 0 else markdown[end + 1:])
    anchor = markdown.find("## Verdicts")
    anchor = len(markdown) if anchor < 0 else anchor
    return markdown[:anchor] + block + markdown[anchor:]


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
    markdown = with_stuck_section(markdown, stuck_markdown(report_rows(report), task_names))
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
    parser.add_argument("--shapes", action="store_true",
                        help="also count the corrected recipe's fine-tunes by model shape")
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
    shapes = shape_table(shaped_runs(floors)) if args.shapes else None
    if shapes is not None:
        print("\n" + shape_markdown(shapes))
    if args.json:
        record = {"results": rows, "total": total}
        if shapes is not None:
            record["shapes"] = shapes
        atomic_write_bytes(args.json, json.dumps(record, indent=1).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
