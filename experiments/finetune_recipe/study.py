"""The fine-tuning recipe study: which small-model recipe learns on every seed?

Fine-tunes one pretraining run and a random start of its sizes on every task folder under
`--tasks_dir`, with each named recipe of `RECIPES` and each seed, and writes per recipe,
start and task the dev and test scores (test at the checkpoint dev chose), and how many
seeds ended stuck at the constant answer (`albert_tf.finetuning.stuck`):

    python experiments/finetune_recipe/study.py --run quickstart/run --tasks_dir runs/tasks \\
        --output runs/recipe_study --recipes adam_uncorrected adam --seeds 1 2 3 4 5

Each fine-tune keeps its folder (`<output>/<recipe>/<start>/<task>/seed<k>`), so a rerun
skips finished ones; `<output>/study.json` and `study.md` are rewritten after each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from albert_tf.finetuning.starts import folder_task, start_overrides
from albert_tf.text.files import atomic_write_bytes
from albert_tf.training.config import load_pretrain_config

_BASE = ("optimizer.warmup_steps=60", "train.global_batch_size=32", "train.train_steps=600",
         "train.eval_every_steps=200", "train.verbose=0", "model.classifier_dropout=0.1")
# Each recipe: overrides on top of _BASE.
RECIPES = {
    "adam_uncorrected": ("optimizer.learning_rate=5e-4", "optimizer.bias_correction=false"),
    "adam": ("optimizer.learning_rate=5e-4", "optimizer.bias_correction=true"),
    "adam_lr1e-4": ("optimizer.learning_rate=1e-4", "optimizer.bias_correction=true"),
    "adam_lr1e-3": ("optimizer.learning_rate=1e-3", "optimizer.bias_correction=true"),
    "adam_uncorrected_lr1e-4": ("optimizer.learning_rate=1e-4",
                                "optimizer.bias_correction=false"),
}


def _fine_tune(task: str, overrides: list[str]) -> dict:
    # Imported late: TensorFlow only once the arguments are good.
    import tf_keras

    from albert_tf.finetuning.config import load_finetune_config, recipe_path
    from albert_tf.finetuning.runner import run_finetuning

    config = load_finetune_config(recipe_path(task), overrides, task=task)
    tf_keras.backend.clear_session()
    result = run_finetuning(config)
    split = next(iter(result.dev_metrics))
    test = next(iter(result.test_metrics.values()), {})
    return {"dev": result.dev_metrics[split][result.metric],
            "test": test.get(result.metric), "best_step": result.best_step,
            "constant_dev": result.constant_scores.get(split),
            "constant_test": result.constant_scores.get("test"),
            "stuck": result.stuck_note() is not None}


def _summary(cells: dict) -> str:
    lines = ["| recipe | start | task | dev (mean) | test (mean) | stuck seeds | seeds |",
             "|---|---|---|---:|---:|---:|---:|"]
    for key, runs in sorted(cells.items()):
        recipe, start, task = key.split("|")
        done = list(runs.values())
        tests = [run["test"] for run in done if run["test"] is not None]
        lines.append(f"| {recipe} | {start} | {task} | "
                     f"{100 * np.mean([run['dev'] for run in done]):.1f} | "
                     f"{100 * np.mean(tests):.1f} | {sum(run['stuck'] for run in done)} | "
                     f"{len(done)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="the pretraining run folder")
    parser.add_argument("--tasks_dir", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--starts", nargs="+", default=["pretrained", "random"])
    parser.add_argument("--tasks", nargs="*", help="task folder names (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    args = parser.parse_args(argv)
    run = load_pretrain_config(os.path.join(args.run, "config.yaml"))
    spm_model = os.path.join(args.run, run.tokenizer.spm_model)
    tasks = args.tasks or sorted(name for name in os.listdir(args.tasks_dir)
                                 if os.path.exists(os.path.join(args.tasks_dir, name,
                                                                "source.json")))
    path = os.path.join(args.output, "study.json")
    cells = json.load(open(path)) if os.path.exists(path) else {}
    for seed in args.seeds:
        for name in tasks:
            folder = os.path.join(args.tasks_dir, name)
            for start in args.starts:
                begin = start_overrides(args.run, start, os.path.join(args.output, "random"),
                                        run.model.to_dict())
                for recipe in args.recipes:
                    key = f"{recipe}|{start}|{name}"
                    if str(seed) in cells.get(key, {}):
                        continue
                    model_dir = os.path.join(args.output, recipe, start, name, f"seed{seed}")
                    print(f"study: {key} seed {seed}", flush=True)
                    cells.setdefault(key, {})[str(seed)] = _fine_tune(folder_task(folder), [
                        *_BASE, *RECIPES[recipe], *begin, f"model.spm_model={spm_model}",
                        f"data.data_dir={folder}", f"data.max_seq_length={run.data.max_seq_length}",
                        f"train.seed={seed}", f"train.model_dir={model_dir}"])
                    atomic_write_bytes(path, json.dumps(cells, indent=1).encode())
                    atomic_write_bytes(os.path.join(args.output, "study.md"),
                                       _summary(cells).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
