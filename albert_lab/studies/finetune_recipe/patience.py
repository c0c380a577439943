"""How long fine-tunes that stop early need to wait: each finished run's dev evaluations
replayed under a shorter patience, to see whether it would have kept the same checkpoint
and how many steps it would have saved.

    python -m albert_lab.studies.finetune_recipe.patience runs/prose_full/run/downstream-919deb74 \\
        --random runs/random_starts_es --patience 1 2 --output patience.md

A run is a folder with `eval_history.jsonl` (one line per dev evaluation, written by
`albert-finetune`) and `best.json`, found anywhere under the given folders (the pretrained
start's; `--random`: the random start's); its task and seed are read from the path
(`.../<task>-<digest>/seed<k>`). A replay walks the evaluations in order, keeps the best so
far (strictly better, as `albert-finetune` does) and stops once the best is `patience`
evaluations behind. When the replayed choice is the run's own best step, its test score is
the run's, so a shorter patience that keeps every choice costs nothing in accuracy; only
dev is read here, never test.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys

from albert_tf.finetuning.dev_evaluation import HISTORY_FILE, read_best
from albert_tf.io.files import atomic_write_bytes


def replay(history: list[dict], metric: str, patience: int) -> tuple[int, int]:
    """(chosen step, stopping step) of a run with these dev evaluations under `patience`
    evaluations without improvement."""
    best_step, best, behind = history[0]["step"], float("-inf"), 0
    for evaluation in history:
        value = next(iter(v for k, v in evaluation.items() if k != "step"))[metric]
        if value > best:
            best_step, best, behind = evaluation["step"], value, 0
        else:
            behind += 1
            if behind >= patience:
                return best_step, evaluation["step"]
    return best_step, history[-1]["step"]


def read_runs(folders: list[str], start: str) -> list[dict]:
    runs = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "**", HISTORY_FILE),
                                     recursive=True)):
            run_dir = os.path.dirname(path)
            match = re.search(r"([a-z-]+)-[0-9a-f]{8}/seed(\d+)$", run_dir)
            best = read_best(run_dir)
            if not match or best is None:
                continue
            with open(path, encoding="utf-8") as f:
                history = [json.loads(line) for line in f if line.strip()]
            runs.append({"task": match.group(1), "seed": int(match.group(2)),
                         "start": start, "history": history, "metric": best["metric"],
                         "best_step": best["step"]})
    return runs


def patience_markdown(runs: list[dict], patiences: list[int]) -> str:
    lines = ["| task | start | seed | evaluations | best step | stopped | " + " | ".join(
        f"patience {p}: choice, stop" for p in patiences) + " |",
        "|---|---|---:|---:|---:|---:|" + "---|" * len(patiences)]
    same = {p: 0 for p in patiences}
    saved = {p: 0 for p in patiences}
    ran = 0
    for run in sorted(runs, key=lambda r: (r["task"], r["start"], r["seed"])):
        history = run["history"]
        ran += history[-1]["step"]
        cells = []
        for patience in patiences:
            chosen, stop = replay(history, run["metric"], patience)
            same[patience] += chosen == run["best_step"]
            saved[patience] += history[-1]["step"] - stop
            cells.append(f"{chosen}{'' if chosen == run['best_step'] else ' (other)'}, {stop}")
        lines.append(f"| {run['task']} | {run['start']} | {run['seed']} | {len(history)} | "
                     f"{run['best_step']} | {history[-1]['step']} | " + " | ".join(cells) + " |")
    lines += ["", f"{len(runs)} runs, {ran:,} steps in all."] + [
        f"Patience {p}: the same checkpoint in {same[p]} of {len(runs)} runs, "
        f"{saved[p]:,} steps fewer ({saved[p] / max(ran, 1):.0%})." for p in patiences]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", help="the pretrained start's fine-tunes")
    parser.add_argument("--random", nargs="+", default=[], help="the random start's")
    parser.add_argument("--patience", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--output")
    args = parser.parse_args(argv)
    runs = read_runs(args.folders, "pretrained") + read_runs(args.random, "random")
    if not runs:
        parser.error("no finished fine-tuning runs (eval_history.jsonl and best.json) found")
    text = patience_markdown(runs, args.patience)
    print(text, end="")
    if args.output:
        atomic_write_bytes(args.output, text.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
