"""What the ablation tables cost at a scale, in CPU-hours of this machine, before running them.

    python -m albert_lab.benchmarks.table_cost --scale small              # every table
    python -m albert_lab.benchmarks.table_cost --scale mini --tables table6_sentence_objective

For every variant of every table (`experiments/table*.yaml` at `--scale`) it builds the
variant's model and times, on random inputs of the scale's shapes, one pretraining step
(`AlbertPretrainer` with the variant's sentence objective and optimizer, `steps_per_execution`
steps per call, XLA as `albert-pretrain` sets it on one CPU) and one fine-tuning step
(`AlbertClassifier` at the downstream recipe's batch size and the pretraining's sequence
length). Each distinct shape is timed once: a warm-up call (tracing, compiling), then
`--executions` timed calls, the fastest counting. A table's cost is then

- pretraining: each variant's `train_steps` x its step time;
- downstream: per variant, every task x seed of the scale's `downstream` list, each fine-tune
  at its recipe's `train_steps` (the most a fine-tune can run; early stopping ends many
  sooner) x its step time; plus the random start of the first variant's sizes when the scale
  has `evaluation.random_start` (counted once per distinct size over the tables, which share
  it). A variant that an earlier table runs with the same settings is not counted again
  (`albert-experiment run` copies it), nor is one the scale cuts (`cut_variants`; its cost is
  shown beside).

Left out: held-out scoring, dev and test evaluations during fine-tuning, compilation and
data preparation (shards: about a minute for the small scale's corpus), which add time, and
the shorter batches a fine-tune cuts to its longest example, which save some. `--calibrate` sets
the estimate of each finished variant beside its measured training hours (the results.json
of `experiments/results/<table>/<scale>/`).
Prints a table per experiment and the totals, and writes JSON to
`benchmarks/results/table_cost-<scale>-<host>.json`.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time

import numpy as np
import tensorflow as tf
import tf_keras

from albert_lab.ablations.report import RESULTS_JSON
from albert_lab.ablations.table_spec import load_experiment, not_run_reason
from albert_lab.ablations.variant_config import variant_config, what_it_computes
from albert_lab.benchmarks.common import machine, result_path
from albert_lab.benchmarks.train_step import ExecutionTimer, random_pretraining_batch
from albert_lab.comparison.recipes import SMALL_MODEL_RECIPES
from albert_lab.comparison.starts import folder_task
from albert_lab.result_files import write_result
from albert_lab.task_folders import TASK_SOURCES
from albert_tf.config.finetuning import load_finetune_config, recipe_path
from albert_tf.config.schema import load_yaml_mapping
from albert_tf.flops import pretraining_step_flops
from albert_tf.loop.optimization import create_optimizer
from albert_tf.models.encoder import random_encoder_inputs
from albert_tf.models.pretrainer import AlbertPretrainer
from albert_tf.models.task_models import AlbertClassifier

FINETUNE_CLASSES = 5  # the head's width does not matter to the step time


def fine_tune_plan(task, seq_length: int) -> dict:
    """Steps and batch size of one fine-tune of downstream `task` (a `DownstreamSpec`)."""
    name = task.task or (TASK_SOURCES[task.source].finetune_task if task.source
                         else folder_task(task.data_dir))
    recipe = SMALL_MODEL_RECIPES.get(task.recipe, ())
    config = load_finetune_config(recipe_path(name), [*recipe, *task.overrides,
                                                      f"data.max_seq_length={seq_length}"],
                                  task=name)
    return {"task": task.name, "seeds": len(task.seeds), "train_steps": config.train.train_steps,
            "batch_size": config.train.global_batch_size,
            "early_stopping": bool(config.train.early_stopping_evals)}


def _timed(model, batch, steps: int, executions: int) -> float:
    """Seconds per step: the fastest of `executions` calls of `steps` steps, after a warm-up."""
    data = tf.data.Dataset.from_tensors(batch).repeat()
    timer = ExecutionTimer()
    best = float("inf")
    for call in range(1 + executions):
        timer.seconds.clear()
        model.fit(data, epochs=1, steps_per_epoch=steps, callbacks=[timer], verbose=0)
        if call:
            best = min(best, timer.seconds[0] / steps)
    return best


def pretraining_seconds(config, objective: str, steps: int, executions: int) -> float:
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(0)
    data = config.data
    batch = random_pretraining_batch(config.model, config.train.global_batch_size,
                                     data.max_seq_length, data.training_predictions_per_seq)
    model = AlbertPretrainer(config.model, objective)
    model(batch, training=False)
    model.compile(optimizer=create_optimizer(config.optimizer, config.train.train_steps),
                  steps_per_execution=steps, jit_compile=True)
    return _timed(model, batch, steps, executions)


def fine_tuning_seconds(model_config, batch_size: int, seq_length: int, steps: int,
                        executions: int) -> float:
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(0)
    batch = random_encoder_inputs(model_config, batch_size, seq_length)
    batch["label"] = tf.constant(np.arange(batch_size) % FINETUNE_CLASSES, tf.int32)
    model = AlbertClassifier(model_config, FINETUNE_CLASSES)
    model(batch, training=False)
    model.compile(optimizer=tf_keras.optimizers.Adam(5e-4), steps_per_execution=steps,
                  jit_compile=True)
    return _timed(model, batch, steps, executions)


class StepClock:
    """Step times per distinct shape, each measured once."""

    def __init__(self, steps: int, executions: int, known: dict | None = None):
        self.steps, self.executions = steps, executions
        self.pretraining: dict[str, float] = dict((known or {}).get("pretraining", {}))
        self.fine_tuning: dict[str, float] = dict((known or {}).get("fine_tuning", {}))

    def times(self) -> dict:
        """Every step time so far, by shape: what `--step_times` reads back."""
        return {"pretraining": dict(self.pretraining), "fine_tuning": dict(self.fine_tuning)}

    def pretraining_step(self, config, objective: str) -> float:
        key = json.dumps([config.model.to_dict(), objective, config.train.global_batch_size,
                          config.data.max_seq_length, config.data.training_predictions_per_seq,
                          config.optimizer.type], sort_keys=True)
        if key not in self.pretraining:
            self.pretraining[key] = pretraining_seconds(config, objective, self.steps,
                                                        self.executions)
        return self.pretraining[key]

    def fine_tuning_step(self, model_config, batch_size: int, seq_length: int) -> float:
        key = json.dumps([model_config.to_dict(), batch_size, seq_length], sort_keys=True)
        if key not in self.fine_tuning:
            self.fine_tuning[key] = fine_tuning_seconds(model_config, batch_size, seq_length,
                                                        self.steps, self.executions)
        return self.fine_tuning[key]


def downstream_hours(clock: StepClock, model_config, plans: list[dict], seq_length: int
                     ) -> tuple[float, int]:
    """Hours and count of one start's fine-tunes on every planned task and seed."""
    hours, count = 0.0, 0
    for plan in plans:
        step = clock.fine_tuning_step(model_config, plan["batch_size"], seq_length)
        hours += plan["seeds"] * plan["train_steps"] * step / 3600
        count += plan["seeds"]
    return hours, count


def measured_hours(table: str, scale: str) -> dict[str, float]:
    path = os.path.join("experiments", "results", table, scale, RESULTS_JSON)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    return {variant["name"]: variant["metrics"]["train_hours"] for variant in report["variants"]
            if variant.get("metrics", {}).get("train_hours")}


def table_cost(path: str, scale: str, clock: StepClock, seen: set, calibrate: bool) -> dict:
    """One table's cost; `seen` holds the variants and random starts of the tables costed
    before it, which this one shares (`albert-experiment run` copies them) and does not pay
    for again."""
    spec = load_experiment(path, scale)
    seq_length = spec.shards.options.max_seq_length
    plans = [fine_tune_plan(task, seq_length) for task in spec.downstream]
    measured = measured_hours(spec.name, scale) if calibrate else {}
    rows = []
    for variant in spec.variants:
        config = variant_config(spec, variant, model_dir="")
        key = json.dumps([what_it_computes(spec, variant, config), plans], sort_keys=True)
        step = clock.pretraining_step(config, variant.objective)
        steps = config.train.train_steps
        fine_tune_hours, fine_tunes = downstream_hours(clock, config.model, plans, seq_length)
        flops = pretraining_step_flops(config.model, config.train.global_batch_size,
                                       seq_length, config.data.training_predictions_per_seq)
        rows.append({"variant": variant.name, "hidden_size": config.model.hidden_size,
                     "num_layers": config.model.num_layers,
                     "embedding_size": config.model.embedding_size,
                     "sharing": config.model.sharing, "train_steps": steps,
                     "pretraining_step_seconds": step, "pretraining_gflops_per_second":
                         flops / step / 1e9,
                     "pretraining_hours": steps * step / 3600,
                     "measured_pretraining_hours": measured.get(variant.name),
                     "fine_tunes": fine_tunes, "fine_tuning_hours": fine_tune_hours,
                     "cut": spec.cut.get(variant.name),
                     "shared_with_an_earlier_table": key in seen})
        if variant.name not in spec.cut:
            seen.add(key)
        print(f"  {spec.name} {variant.name}: {step * 1e3:.0f} ms per pretraining step",
              flush=True)
    random_start = None
    if spec.evaluation.random_start and plans:
        first = variant_config(spec, spec.variants[0], model_dir="").model
        key = json.dumps([first.to_dict(), plans, seq_length], sort_keys=True)
        hours, count = downstream_hours(clock, first, plans, seq_length)
        random_start = {"fine_tunes": count, "fine_tuning_hours": hours,
                        "shared_with_an_earlier_table": key in seen}
        seen.add(key)
    extra = (random_start["fine_tuning_hours"]
             if random_start and not random_start["shared_with_an_earlier_table"] else 0.0)
    paid = [row for row in rows if not row["cut"] and not row["shared_with_an_earlier_table"]]
    total = sum(row["pretraining_hours"] + row["fine_tuning_hours"] for row in paid) + extra
    cut = sum(row["pretraining_hours"] + row["fine_tuning_hours"] for row in rows
              if row["cut"])
    return {"table": spec.name, "scale": scale, "seq_length": seq_length,
            "downstream": plans, "variants": rows, "random_start": random_start,
            "hours": total, "cut_hours": cut}


def markdown(result: dict) -> str:
    cut = f" (and {result['cut_hours']:.1f} cut)" if result["cut_hours"] else ""
    lines = [f"### {result['table']} ({result['scale']}): {result['hours']:.1f} CPU-hours{cut}",
             "", "| variant | H | L | E | sharing | steps | ms/step | GFLOP/s | pretrain h "
             "| measured h | fine-tunes | fine-tune h | |", "|---|---:|---:|---:|---|---:|---:"
             "|---:|---:|---:|---:|---:|---|"]
    for row in result["variants"]:
        measured = row["measured_pretraining_hours"]
        lines.append(
            f"| {row['variant']} | {row['hidden_size']} | {row['num_layers']} | "
            f"{row['embedding_size']} | {row['sharing']} | {row['train_steps']:,} | "
            f"{row['pretraining_step_seconds'] * 1e3:.0f} | "
            f"{row['pretraining_gflops_per_second']:.0f} | {row['pretraining_hours']:.2f} | "
            f"{'' if measured is None else f'{measured:.2f}'} | {row['fine_tunes']} | "
            f"{row['fine_tuning_hours']:.2f} | {_note(row)} |")
    start = result["random_start"]
    if start:
        shared = " (shared with an earlier table: not counted again)" \
            if start["shared_with_an_earlier_table"] else ""
        lines.append(f"| random start | | | | | | | | | | {start['fine_tunes']} | "
                     f"{start['fine_tuning_hours']:.2f} | {shared.strip(' ()')} |")
    return "\n".join(lines) + "\n"


def _note(row: dict) -> str:
    if row["cut"]:
        return f"cut: {row['cut']}"
    if row["shared_with_an_earlier_table"]:
        return "shared with an earlier table: not counted again"
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="small")
    parser.add_argument("--tables", nargs="+", default=[],
                        help="table names (default: every experiments/table*.yaml)")
    parser.add_argument("--steps", type=int, default=5, help="steps per timed call")
    parser.add_argument("--executions", type=int, default=2, help="timed calls per shape")
    parser.add_argument("--calibrate", action="store_true",
                        help="show each finished variant's measured training hours")
    parser.add_argument("--step_times", metavar="JSON",
                        help="an earlier result of this script: its step times are used "
                             "and only shapes it lacks are timed (re-plan after changing "
                             "steps, seeds or cuts without timing again)")
    parser.add_argument("--output", help="JSON path (default: benchmarks/results/...)")
    args = parser.parse_args()
    known = None
    if args.step_times:
        with open(args.step_times, encoding="utf-8") as f:
            known = json.load(f).get("step_times")
        if known is None:
            parser.error(f"--step_times {args.step_times}: no step_times in it (not a result "
                         f"of this script)")
    paths = sorted(glob.glob(os.path.join("experiments", "table*.yaml")))
    if args.tables:
        paths = [path for path in paths
                 if os.path.splitext(os.path.basename(path))[0] in args.tables]
    clock = StepClock(args.steps, args.executions, known)
    started, seen, results = time.time(), set(), []
    for path in paths:
        document = load_yaml_mapping(path)
        reason = not_run_reason(document, args.scale, path)
        if reason is not None:
            print(f"### {os.path.basename(path)}: no {args.scale} scale: {reason}\n")
            continue
        results.append(table_cost(path, args.scale, clock, seen, args.calibrate))
        print(markdown(results[-1]), flush=True)
    total = sum(result["hours"] for result in results)
    cut = sum(result["cut_hours"] for result in results)
    print(f"all {len(results)} tables at the {args.scale} scale: {total:.1f} CPU-hours, "
          f"{cut:.1f} more in the cut variants (made in {time.time() - started:.0f} s, load "
          f"average {os.getloadavg()[0]:.1f} at the end)")
    result = {"benchmark": "table_cost", "scale": args.scale, **machine(),
              "load_average_at_end": os.getloadavg()[0],
              "steps_per_call": args.steps, "executions": args.executions,
              "step_times_from": args.step_times, "tables": results,
              "hours": total, "cut_hours": cut, "step_times": clock.times()}
    output = write_result(result_path(f"table_cost-{args.scale}", result, args.output), result)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
