"""The recipe study: what small-budget pretraining buys downstream, one variant at a time.
Each variant is pretrained on the whole Debian prose corpus, then fine-tuned on the
downstream suite's four tasks from itself and from a random start of its sizes
(`albert-experiment downstream`: five seeds, test scores chosen on dev, stuck fine-tunes
named). The reference run is `configs/pretrain/tiny_cpu.yaml` at H 64 x 4 layers: 2,400
steps of 64 sequences of 128 tokens, 13 minutes alone on 2 cores.

    python -m albert_lab.studies.recipe_study h64_l2 h128_l2 --commit
    python -m albert_lab.studies.recipe_study --list      # variants, steps and FLOPs
    python -m albert_lab.studies.recipe_study h64_l4 --pretrain_only   # the run alone

The variants are of two kinds. `SHAPES`, the shape grid: hidden size 64, 128 and 256 at 2, 4
and 12 all-shared layers (E = H / 2, heads of 16, feed-forward 4H), each with the
reference's pretraining FLOPs (`albert_tf.flops.pretraining_step_flops`; warm-up at a sixth
of the steps, as there), which asks both whether the small-model fine-tuning recipe learns
at every size (no fine-tune stuck at the constant answer unless both starts are) and which
shape buys the most for a fixed budget. `LEVERS`: one change to the reference recipe each
(budget, learning rate, E, masking, the sentence objective, the data, the vocabulary, the
sequence length, the batch size), at the reference's FLOPs
unless the change is the budget. Each results folder gets `grid.md` (a row per finished
variant, with its gain over the random start per task and its pretrained start against
the reference run's), and the budget levers `budget_curve.md` / `.png`.

Every step resumes: a finished pretraining (its `eval_results.json` at the last step) is
not run again, `albert-pretrain` resumes an interrupted one from its backup, and the suite
skips finished seeds; the random starts' seeds are also recorded in `--random_records`
(committed with each variant), so another machine fine-tunes none of them again. Each
finished shape's figures go to `--results`/<shape>/ (default: the folder named after the
fine-tuning recipe in use, `experiments/results/recipe_study/<recipe>/`, whose `h64_l4` is
the reference run every row is compared with; `downstream.json` with
`pretrain_hours`, the time in training steps read from the run's TensorBoard logs, and the
machine; `downstream.md`; `pretraining.json`; `probe.json` and `probe.md`, the
frozen-feature probe run before the fine-tunes), the grid's table to `--results`/grid.md,
and with `--commit` into git at once, so a session that ends loses at most the variant it
was on. Paths are relative to the working folder (the repository's root); the commands run
are the ones beside this Python (its virtual environment's `bin`).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import os
import shutil
import subprocess
import sys
import time

from albert_lab.comparison.recipes import SMALL_MODEL

BIN = os.path.dirname(sys.executable)
REFERENCE = {"hidden": 64, "layers": 4, "steps": 2400}
STUDY = "experiments/results/recipe_study"
# Each fine-tuning recipe's study has its own folder, named after the recipe, with the
# reference run (`h64_l4`) in it, which every variant's row is compared with, seed by seed.
# The study made with `small_model_v2` ([CLS] head) is in shape_grid/ and levers/.
RESULTS = f"{STUDY}/{SMALL_MODEL}"
V2_REFERENCE_REPORT = f"{STUDY}/shape_grid/h64_l4/downstream.json"


def reference_report(recipe_name: str) -> str:
    """The reference run's suite made with fine-tuning recipe `recipe_name`."""
    return (V2_REFERENCE_REPORT if recipe_name == "small_model_v2"
            else f"{STUDY}/{recipe_name}/h64_l4/downstream.json")


# The random starts' seed records, shared by the grid and the levers (`albert-experiment
# downstream --random_records`): a new machine fine-tunes none of them again.
RANDOM_RECORDS = f"{STUDY}/random_starts"


# The reference's SentencePiece pieces, and its shards' sequence length (commands.sh), which is
# also every run's position table and the fine-tunes' sequence length.
REFERENCE_VOCABULARY = 8000
SEQUENCE_LENGTH = 128


@dataclasses.dataclass(frozen=True)
class Variant:
    """A run of the study: a shape, changes to the reference recipe, and a budget in
    multiples of the reference run's pretraining FLOPs."""
    hidden: int = REFERENCE["hidden"]
    layers: int = REFERENCE["layers"]
    overrides: tuple[str, ...] = ()
    budget: float = 1.0
    vocab_size: int = REFERENCE_VOCABULARY  # pieces (`prepare_corpus` builds other sizes)
    sequence_length: int = SEQUENCE_LENGTH  # of the pretraining examples (fine-tunes: 128)


SHAPES = {f"h{hidden}_l{layers}": Variant(hidden, layers)
          for hidden in (64, 128, 256) for layers in (2, 4, 12)}
CORPUS = "runs/prose_full"  # experiments/results/downstream/prose_full_8k/commands.sh
# The tokenizer's training text: the corpus's first 10 MB (the same commands.sh), on which
# the 8,000-piece model was trained; other vocabulary sizes are trained on it alike, up to
# the most pieces SentencePiece's unigram trainer finds in it (27,765: it refuses 30,000).
# Larger vocabularies are trained on the whole training corpus instead, of which
# `--max_sentences` takes a uniform sample of 300,000 sentences (three times the 10 MB's).
TOKENIZER_TEXT = "runs/prose/corpus/train.txt"
TOKENIZER_TEXT_MAX_PIECES = 27765
TASK_TEXT = "runs/task_text"  # the suite's training texts, tokenized like CORPUS
# The study's other levers, each one change at the reference shape.
LEVERS = {
    # The masking rate: 30% of 128 pieces, re-masked every read into 40 prediction slots
    # (the shards have 20); against `dynamic_masking`, the same masking at 15%.
    "mask_30": Variant(overrides=("data.dynamic_masking=true", "data.masked_lm_prob=0.3",
                                  "data.dynamic_predictions_per_seq=40")),
    # E at H 64: the tied masked-LM output layer is E wide, and Table 4 at the mini scale
    # found MLM rising with E (13.4 to 16.0% from E 32 to 128 at H 128). Their steps are
    # fewer, for the same FLOPs (the output layer costs 2 x E x V per prediction).
    "e_64": Variant(overrides=("model.embedding_size=64",)),
    "e_128": Variant(overrides=("model.embedding_size=128",)),
    "no_sentence_objective": Variant(overrides=("sentence_objective=none",)),
    "dynamic_masking": Variant(overrides=("data.dynamic_masking=true",)),
    # n-gram against single-piece masking: the paper's spans of up to 3 pieces (the shards'
    # and `dynamic_masking`'s) against every masked piece drawn alone, masks drawn afresh
    # on each read in both, so the pair differs in the spans only.
    "single_piece": Variant(overrides=("data.dynamic_masking=true", "data.ngram=1")),
    "lr_5e-4": Variant(overrides=("optimizer.learning_rate=0.0005",)),
    "lr_2e-3": Variant(overrides=("optimizer.learning_rate=0.002",)),
    "lr_4e-3": Variant(overrides=("optimizer.learning_rate=0.004",)),
    "budget_x2": Variant(budget=2.0),
    "budget_x4": Variant(budget=4.0),
    # The candidate for configs/pretrain/small_cpu.yaml: the best single lever measured so
    # far (learning rate 2e-3: more MLM per step, no collapse) at four times the budget,
    # about an hour of this machine alone; that reads the shards 3.15 times, so their masks
    # are drawn again on every read.
    "lr_2e-3_dynamic_x4": Variant(overrides=("optimizer.learning_rate=0.002",
                                             "data.dynamic_masking=true"), budget=4.0),
    # The hour spent on a wider, slower model instead: H 64 x 4 gains little held-out MLM
    # past the reference's budget (13.1% at 2,400 steps, 14.6% at 6,400 with the rate
    # doubled), so an hour may buy more as fewer steps of H 128 x 4 (3.3 times the FLOPs
    # per step), at tiny_cpu's rate. Its random start is the shape grid's h128_l4's.
    "h128_l4_dynamic_x4": Variant(128, 4, overrides=("data.dynamic_masking=true",),
                                  budget=4.0),
    # The data: the suite's four tasks' training texts (never their labels, dev or test)
    # beside the prose, a third of the examples (task-adaptive pretraining; the shards:
    # `task_text_shards` in experiments/results/recipe_study/README.md). On the quickstart's
    # docstrings, BBC News's own training text put the topics into the frozen features
    # (probe +19.8 points) where more steps of docstrings alone did not (+4.4).
    "task_text": Variant(overrides=(
        f"data.train_files=[{CORPUS}/shards/train/*.tfrecord, "
        f"{TASK_TEXT}/shards/train/*.tfrecord]",)),
    # The vocabulary: 16,000 and 30,000 pieces (the paper's) against 8,000, trained on the
    # same text (30,000: on the whole corpus, `tokenizer_text`), the corpus tokenized anew
    # with each. A larger vocabulary costs FLOPs in the tied output layer (2 x E x V per
    # prediction), so these get fewer steps; their random starts have their own tokenizers
    # and sizes.
    "vocab_16k": Variant(vocab_size=16000),
    "vocab_30k": Variant(vocab_size=30000),
    # The sequence length: the corpus cut into examples of 64 pieces with 10 predictions
    # (twice the examples, each step about half the FLOPs, so about twice the steps), the
    # position table kept at 128 rows, so that the fine-tunes run at 128 as the reference's
    # do and share its random start: positions 64-127 are then trained by fine-tuning alone.
    "seq_64": Variant(sequence_length=64),
    # The batch size at the same FLOPs and learning rate: half or twice the steps.
    "batch_32": Variant(overrides=("train.global_batch_size=32",)),
    "batch_128": Variant(overrides=("train.global_batch_size=128",)),
}
VARIANTS = {**SHAPES, **LEVERS}


def predictions_per_seq(sequence_length: int) -> int:
    """Prediction slots for 15% masking: 20 at 128, as BERT's and the reference's shards."""
    return math.ceil(0.15 * sequence_length)


def corpus_dir(vocab_size: int, sequence_length: int = SEQUENCE_LENGTH) -> str:
    """The folder of the corpus's shards tokenized with `vocab_size` pieces into examples of
    `sequence_length`."""
    folder = CORPUS if vocab_size == REFERENCE_VOCABULARY else f"{CORPUS}_{vocab_size // 1000}k"
    return folder if sequence_length == SEQUENCE_LENGTH else f"{folder}_s{sequence_length}"


def tokenizer_prefix(vocab_size: int) -> str:
    """The SentencePiece model's path without `.model`, for `vocab_size` pieces."""
    return ("runs/prose/spm/albert" if vocab_size == REFERENCE_VOCABULARY
            else f"runs/prose/spm_{vocab_size // 1000}k/albert")


def pretrain_overrides(vocab_size: int = REFERENCE_VOCABULARY,
                       sequence_length: int = SEQUENCE_LENGTH) -> list[str]:
    """The overrides of `tiny_cpu.yaml` every run of the study has: the whole prose corpus
    tokenized with `vocab_size` pieces into examples of `sequence_length`, a position table
    of `SEQUENCE_LENGTH`, no downstream check of its own."""
    corpus = corpus_dir(vocab_size, sequence_length)
    return [f"model.vocab_size={vocab_size}",
            f"data.train_files=[{corpus}/shards/train/*.tfrecord]",
            f"data.eval_files=[{corpus}/shards/heldout/*.tfrecord]",
            f"data.max_seq_length={sequence_length}",
            f"data.max_predictions_per_seq={predictions_per_seq(sequence_length)}",
            f"model.max_position_embeddings={SEQUENCE_LENGTH}", 'downstream_check.task_dir=""']


def tokenizer_text(vocab_size: int) -> str:
    """The text the SentencePiece model of `vocab_size` pieces is trained on."""
    return (TOKENIZER_TEXT if vocab_size <= TOKENIZER_TEXT_MAX_PIECES
            else os.path.join(CORPUS, "corpus", "train.txt"))


def prepare_corpus(vocab_size: int, sequence_length: int = SEQUENCE_LENGTH) -> None:
    """Trains the SentencePiece model of `vocab_size` pieces on `tokenizer_text` and builds
    the corpus's shards with it into examples of `sequence_length` (other options as the
    reference's shards'), each unless present; the reference's files (8,000 pieces, 128)
    come from its commands.sh."""
    if (vocab_size, sequence_length) == (REFERENCE_VOCABULARY, SEQUENCE_LENGTH):
        return
    data = os.path.join(BIN, "albert-data")
    prefix = tokenizer_prefix(vocab_size)
    if vocab_size != REFERENCE_VOCABULARY and not os.path.exists(prefix + ".model"):
        subprocess.run([data, "train-spm", "--input", tokenizer_text(vocab_size),
                        "--model_prefix", prefix,
                        "--vocab_size", str(vocab_size), "--max_sentences", "300000"],
                       check=True)
    for split in ("heldout", "train"):
        text = os.path.join(CORPUS, "corpus", f"{split}.txt")
        output = os.path.join(corpus_dir(vocab_size, sequence_length), "shards", split)
        if not os.path.exists(os.path.join(output, "manifest.json")):
            subprocess.run([data, "build", "--input", text,
                            "--spm_model", prefix + ".model", "--output_dir", output,
                            "--sentence_objective", "sop", "--dupe_factor", "1",
                            "--max_seq_length", str(sequence_length),
                            "--max_predictions_per_seq", str(predictions_per_seq(sequence_length)),
                            "--num_workers", "2", "--no_progress"], check=True)


PROBE_FILES = ("probe.json", "probe.md")
STEP_UNIT = 120  # steps are a multiple of it: six epochs of whole 20-step executions


def shape_overrides(hidden: int, layers: int) -> list[str]:
    return [f"model.hidden_size={hidden}", f"model.num_layers={layers}",
            f"model.embedding_size={hidden // 2}", f"model.num_attention_heads={hidden // 16}",
            f"model.intermediate_size={4 * hidden}"]


def step_flops(hidden: int, layers: int, overrides: tuple[str, ...] = (),
               vocab_size: int = REFERENCE_VOCABULARY,
               sequence_length: int = SEQUENCE_LENGTH) -> int:
    """FLOPs of one pretraining step of this shape with these overrides."""
    from albert_tf.config.pretraining import load_pretrain_config
    from albert_tf.flops import pretraining_step_flops
    config = load_pretrain_config("configs/pretrain/tiny_cpu.yaml",
                                  [*pretrain_overrides(vocab_size, sequence_length),
                                   *shape_overrides(hidden, layers), *overrides])
    return pretraining_step_flops(config.model, config.train.global_batch_size,
                                  config.data.max_seq_length,
                                  config.data.training_predictions_per_seq)


@functools.cache
def reference_step_flops() -> int:
    """FLOPs of one step of the reference run (H 64 x 4, `tiny_cpu.yaml`), the unit of
    every budget."""
    return step_flops(REFERENCE["hidden"], REFERENCE["layers"])


def budget_steps(variant: Variant) -> int:
    """The variant's budget (the reference run's FLOPs times `budget`) in whole
    `STEP_UNIT`s of its shape's steps (one at least)."""
    budget = variant.budget * REFERENCE["steps"] * reference_step_flops()
    return STEP_UNIT * max(1, round(budget / variant_step_flops(variant) / STEP_UNIT))


def variant_step_flops(variant: Variant) -> int:
    return step_flops(variant.hidden, variant.layers, variant.overrides, variant.vocab_size,
                      variant.sequence_length)


def pretrain_command(name: str, run_dir: str) -> list[str]:
    variant = VARIANTS[name]
    steps = budget_steps(variant)
    return [os.path.join(BIN, "albert-pretrain"), "--config", "configs/pretrain/tiny_cpu.yaml",
            *[item for override in [
                *pretrain_overrides(variant.vocab_size, variant.sequence_length),
                *shape_overrides(variant.hidden, variant.layers),
                *variant.overrides,
                f"train.model_dir={run_dir}", f"train.train_steps={steps}",
                f"train.steps_per_epoch={steps // 6}", f"train.backup_every_steps={steps // 6}",
                f"optimizer.warmup_steps={steps // 6}"]
              for item in ("--override", override)]]


def _json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _write_json(path: str, value: dict) -> None:
    from albert_tf.io.files import atomic_write_bytes
    atomic_write_bytes(path, json.dumps(value, indent=1).encode())


def training_seconds(run_dir: str, steps: int) -> float:
    """Seconds in training steps, from the run's TensorBoard logs, as the ablation tables
    count them (`albert_lab.ablations.curves`: compilation and stalls left out)."""
    from albert_lab.ablations.curves import run_curves
    return run_curves(os.path.join(run_dir, "tensorboard"), steps // 6, steps)["train_seconds"]


def pretrain(name: str, run_dir: str) -> dict:
    """Pretrains variant `name` in `run_dir` unless finished; returns what
    `pretraining.json` keeps."""
    variant = VARIANTS[name]
    from albert_tf.io.machine import machine
    steps = budget_steps(variant)
    results = os.path.join(run_dir, "eval_results.json")
    if not (os.path.exists(results) and _json(results).get("step") == steps):
        prepare_corpus(variant.vocab_size, variant.sequence_length)
        subprocess.run(pretrain_command(name, run_dir), check=True)
    return {"shape": name, "hidden_size": variant.hidden, "num_layers": variant.layers,
            "overrides": list(variant.overrides), "budget": variant.budget,
            "vocab_size": variant.vocab_size, "sequence_length": variant.sequence_length,
            "train_steps": steps, "step_flops": variant_step_flops(variant),
            "seconds": round(training_seconds(run_dir, steps), 1), "machine": machine(),
            "heldout": _json(results)}


def probe(run_dir: str, tasks_dir: str) -> None:
    """The frozen-feature probe of the run against three random encoders of its sizes, on
    every task folder (`probe.json` / `probe.md` in the run; seconds to minutes, where the
    fine-tunes take an hour), unless it is there."""
    if not os.path.exists(os.path.join(run_dir, PROBE_FILES[0])):
        subprocess.run([os.path.join(BIN, "albert-experiment"), "probe", run_dir,
                        "--tasks_dir", tasks_dir], check=True)


def finished_variant(folder: str) -> tuple[dict, dict] | None:
    """(pretraining.json, downstream.json) of a finished variant's results folder, or None."""
    if not os.path.exists(os.path.join(folder, "downstream.json")):
        return None
    return _json(os.path.join(folder, "pretraining.json")), _json(
        os.path.join(folder, "downstream.json"))


def gain_cell(comparison: dict) -> str:
    """A task's gain over the random start, or `failed` when the random start stuck."""
    from albert_lab.comparison.gain import points_interval
    return ("failed" if comparison["verdict"] == "failed" else
            points_interval(comparison["gain"], comparison["low"], comparison["high"]))


def average_cell(report: dict) -> str:
    """The suite's average gain over the random start (`none` without one)."""
    from albert_lab.comparison.gain import points_interval
    average = report.get("average")
    return (points_interval(average["gain"], average["gain_low"], average["gain_high"])
            if average else "none")


def against_reference(report: dict, reference: dict) -> str:
    """The variant's pretrained start minus the reference run's, on test, paired by seed
    (both are fine-tuned with the same seeds and recipe; their random starts are the same
    model, so this is also the difference of their gains over it): the mean over the tasks
    both have, per seed, with its 95% interval."""
    from albert_lab.comparison.gain import paired_difference, points_interval, split_scores
    tasks = sorted(set(report["tasks"]) & set(reference["tasks"]))
    if not tasks:
        return "–"
    scores = [[split_scores(source["tasks"][task]["seeds"]["pretrained"], "test")
               for task in tasks] for source in (report, reference)]
    seeds = sorted(set.intersection(*(set(by_seed) for side in scores for by_seed in side)),
                   key=int)
    if not seeds:
        return "–"
    means = [[sum(by_seed[seed] for by_seed in side) / len(tasks) for seed in seeds]
             for side in scores]
    return points_interval(*paired_difference(*means))


def probe_cell(folder: str) -> str:
    """The frozen-feature probe's gap (`albert_lab.comparison.probe`): pretrained minus the
    random encoders' mean, on the mean-pooled feature's test scores, averaged over the
    tasks (points; `–` when the variant has no probe.json)."""
    path = os.path.join(folder, PROBE_FILES[0])
    if not os.path.exists(path):
        return "–"
    gaps = []
    for row in _json(path)["tasks"].values():
        randoms = [scores["mean"]["test"] for scores in row["random"].values()]
        gaps.append(row["pretrained"]["mean"]["test"] - sum(randoms) / len(randoms))
    return f"{100 * sum(gaps) / len(gaps):+.1f}" if gaps else "–"


def against_reference_cell(report: dict) -> str:
    """`against_reference` with the reference run's suite of the same fine-tuning recipe
    (`–` while there is none)."""
    path = reference_report(report["recipe_name"])
    return against_reference(report, _json(path)) if os.path.exists(path) else "–"


def grid_markdown(results_dir: str) -> str:
    rows, recipes = [], set()
    for shape in VARIANTS:
        finished = finished_variant(os.path.join(results_dir, shape))
        if finished is None:
            continue
        pretraining, report = finished
        recipes.add(report["recipe_name"])
        cells = []
        for name, row in sorted(report["tasks"].items()):
            if "comparison" not in row:
                cells.append(f"{name}: error")
                continue
            comparison = row["comparison"]
            cells.append(f"{gain_cell(comparison)} ({len(comparison['stuck_pretrained'])}/"
                         f"{len(comparison['stuck_random'])})")
        rows.append(
            f"| {shape} | {pretraining['train_steps']} | {pretraining['seconds'] / 60:.0f} | "
            f"{100 * pretraining['heldout']['mlm_accuracy']:.1f} | "
            f"{100 * pretraining['heldout']['sentence_accuracy']:.1f} | " + " | ".join(cells)
            + f" | {average_cell(report)} | "
            + against_reference_cell(report)
            + f" | {probe_cell(os.path.join(results_dir, shape))} |")
    tasks = "bbc-news | fine-foods | lee-pairs | rotten-tomatoes"
    return ("# Recipe study: pretrained against random starts, per variant\n\n"
            f"Fine-tuned with `{'`, `'.join(sorted(recipes))}` "
            "(`albert_lab.comparison.recipes`). "
            "Shapes (h<H>_l<L>) get the reference run's pretraining FLOPs; levers change one "
            "thing of the reference (`LEVERS` in albert_lab/studies/recipe_study.py). "
            "Gain = pretrained - random start on test, paired by seed, 95% interval; "
            "(k/m) = stuck fine-tunes of the pretrained / random start out of 5. Against the "
            "reference: the variant's pretrained start minus the reference run's (H 64 x 4, "
            "`tiny_cpu.yaml`), test scores averaged over the tasks, paired by seed. Probe: "
            "a linear model on the frozen mean-pooled outputs (`albert-experiment probe`), "
            "pretrained minus three random encoders, test scores averaged over the tasks "
            "(`probe.md` in the variant's folder has each task and the pooled output).\n\n"
            f"| shape | steps | pretrain min | held-out MLM | SOP | {tasks} | average | "
            "against the reference | probe |\n"
            "|---|---:|---:|---:|---:|---|---|---|---|---|---|---:|\n" + "\n".join(rows)
            + "\n")


# The budget curves: the gain over the random start against the pretraining budget, one
# curve per shape. H 64 x 4 is the reference run, then these levers of its shape with more
# FLOPs (the hour candidate, four times the budget at twice the rate, stands for x4 where
# plain `budget_x4` was not run); H 128 x 4 is the grid's shape at the reference's FLOPs and
# its own hour at four times them.
BUDGET_CURVES = {"H 64 x 4": ("h64_l4", "budget_x2", "budget_x4", "lr_2e-3_dynamic_x4"),
                 "H 128 x 4": ("h128_l4", "h128_l4_dynamic_x4")}
CURVE_FILES = ("budget_curve.md", "budget_curve.png")


def _curve_point(name: str, finished: tuple[dict, dict]) -> dict:
    pretraining, report = finished
    tasks = {task: row["comparison"] for task, row in sorted(report["tasks"].items())
             if "comparison" in row}
    reference_flops = REFERENCE["steps"] * reference_step_flops()
    return {"name": name, "steps": pretraining["train_steps"],
            "budget": pretraining["train_steps"] * pretraining["step_flops"] / reference_flops,
            "hours": pretraining["seconds"] / 3600,
            "mlm": pretraining["heldout"]["mlm_accuracy"],
            "sop": pretraining["heldout"]["sentence_accuracy"],
            "average": report.get("average"), "average_cell": average_cell(report),
            "tasks": tasks}


def _finished_point(name: str, levers_dir: str, recipe: str) -> tuple[dict, dict] | None:
    """A curve point's results: the reference run of `recipe` for `h64_l4`, otherwise the
    variant's folder under `levers_dir`, if it was fine-tuned with `recipe`."""
    folder = (os.path.dirname(reference_report(recipe)) if name == "h64_l4"
              else os.path.join(levers_dir, name))
    finished = finished_variant(folder)
    return finished if finished and finished[1]["recipe_name"] == recipe else None


def budget_curve(levers_dir: str) -> tuple[str, dict[str, list[dict]]] | None:
    """The gain over the random start against the pretraining budget, per shape of
    `BUDGET_CURVES`: the points finished under `levers_dir` (the reference run: that of
    the levers' fine-tuning recipe, `reference_report`); markdown and the points per
    shape, None before some shape has two points."""
    recipe = next((finished[1]["recipe_name"] for names in BUDGET_CURVES.values()
                   for name in names[1:]
                   if (finished := finished_variant(os.path.join(levers_dir, name)))), None)
    if recipe is None:
        return None
    curves = {}
    for shape, names in BUDGET_CURVES.items():
        points = [_curve_point(name, finished) for name in names
                  if (finished := _finished_point(name, levers_dir, recipe))]
        if len(points) >= 2:
            curves[shape] = points
    if not curves:
        return None
    names = sorted(next(iter(curves.values()))[0]["tasks"])
    lines = ["# Budget curves: the gain over a random start against the pretraining budget",
             "", "Gain = pretrained - random start on test, paired by seed, 95% interval, "
             f"fine-tuned with `{recipe}`. Budget: pretraining FLOPs in multiples of the "
             "reference run's (H 64 x 4, 2,400 steps of 64 sequences of 128). Hours: time in "
             "training steps on this machine (2 cores, at times shared with other jobs). "
             "`lr_2e-3_dynamic_x4`: four times the budget at twice the learning rate; "
             "`*_dynamic_*`: masks drawn afresh on every read. Plot: budget_curve.png.", "",
             "| shape | run | budget | steps | pretrain hours | held-out MLM | SOP | "
             + " | ".join(names) + " | average |",
             "|---|---|---:|---:|---:|---:|---:|" + "---|" * (len(names) + 1)]
    for shape, points in curves.items():
        for point in points:
            cells = [gain_cell(point["tasks"][name]) for name in names]
            lines.append(f"| {shape} | {point['name']} | x{point['budget']:.1f} | "
                         f"{point['steps']} | {point['hours']:.2f} | "
                         f"{100 * point['mlm']:.1f} | {100 * point['sop']:.1f} | "
                         + " | ".join(cells) + f" | {point['average_cell']} |")
    return "\n".join(lines) + "\n", curves


def plot_budget_curve(curves: dict[str, list[dict]], path: str) -> None:
    """Gain (points, 95% interval as bars) against the pretraining budget, a panel per
    shape with a line per task and the average."""
    from albert_lab.ablations.plots import pyplot, save_figure
    figure, all_axes = pyplot.subplots(1, len(curves), figsize=(6.5 * len(curves), 4.5),
                                       sharey=True, squeeze=False)
    for axes, (shape, points) in zip(all_axes[0], curves.items()):
        budgets = [point["budget"] for point in points]
        series = {name: [point["tasks"][name] for point in points]
                  for name in sorted(points[0]["tasks"])}
        series["average"] = [{"gain": point["average"]["gain"],
                              "low": point["average"]["gain_low"],
                              "high": point["average"]["gain_high"]} for point in points]
        for index, (name, found) in enumerate(series.items()):
            gains = [100 * item["gain"] for item in found]
            errors = [[100 * (item["gain"] - item["low"]) for item in found],
                      [100 * (item["high"] - item["gain"]) for item in found]]
            axes.errorbar(budgets, gains, yerr=errors, marker="o", capsize=3, label=name,
                          linewidth=2.5 if name == "average" else 1.2, color=f"C{index}")
        axes.axhline(0, color="grey", linewidth=0.8, linestyle="--")
        axes.axhline(10, color="grey", linewidth=0.8, linestyle=":")
        axes.set_xscale("log", base=2)
        axes.set_xticks(budgets, [f"x{point['budget']:.1f}\n{point['name']}"
                                  for point in points], fontsize=7)
        axes.set_xlabel("pretraining FLOPs (x1: the reference's, about 13 minutes alone "
                        "on 2 cores)")
        axes.set_title(f"{shape}: gain over a random start")
        axes.legend(fontsize=7)
    all_axes[0][0].set_ylabel("pretrained - random start, test (points)")
    save_figure(figure, path)


def write_budget_curve(levers_dir: str) -> list[str]:
    """Writes the curves' markdown and plot under `levers_dir` once some shape has two
    points; returns the paths written."""
    from albert_tf.io.files import atomic_write_bytes
    curve = budget_curve(levers_dir)
    if curve is None:
        return []
    markdown, curves = curve
    paths = [os.path.join(levers_dir, name) for name in CURVE_FILES]
    atomic_write_bytes(paths[0], markdown.encode())
    plot_budget_curve(curves, paths[1])
    return paths


def suite_report(name: str) -> str:
    """The name (no extension) of the variant's report from `albert-experiment downstream`
    at `SEQUENCE_LENGTH`: a suite of its own when the variant pretrained at another."""
    from albert_lab.comparison.suite import named_overrides, suite_name
    return suite_name(named_overrides((), VARIANTS[name].sequence_length, SEQUENCE_LENGTH))


def finish(shape: str, run_dir: str, results_dir: str, record: dict, commit: bool,
           random_records: str = RANDOM_RECORDS) -> None:
    folder = os.path.join(results_dir, shape)
    os.makedirs(folder, exist_ok=True)
    report = _json(os.path.join(run_dir, f"{suite_report(shape)}.json"))
    report["pretrain_hours"] = round(record["seconds"] / 3600, 3)
    report["machine"] = record["machine"]
    _write_json(os.path.join(folder, "downstream.json"), report)
    shutil.copyfile(os.path.join(run_dir, f"{suite_report(shape)}.md"),
                    os.path.join(folder, "downstream.md"))
    _write_json(os.path.join(folder, "pretraining.json"), record)
    for name in PROBE_FILES:
        if os.path.exists(os.path.join(run_dir, name)):
            shutil.copyfile(os.path.join(run_dir, name), os.path.join(folder, name))
    from albert_tf.io.files import atomic_write_bytes
    atomic_write_bytes(os.path.join(results_dir, "grid.md"), grid_markdown(results_dir).encode())
    on_a_curve = any(shape in names for names in BUDGET_CURVES.values())
    curve = write_budget_curve(results_dir) if on_a_curve else []
    if commit:
        message = f"Recipe study: {shape} pretrained and fine-tuned"
        paths = [folder, os.path.join(results_dir, "grid.md"), *curve, random_records]
        for _ in range(3):  # another git command may hold the index for a moment
            if (subprocess.run(["git", "add", *paths]).returncode == 0 and
                    subprocess.run(["git", "commit", "-m", message, "--", *paths]).returncode == 0):
                break
            time.sleep(10)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", nargs="*", metavar="VARIANT",
                        help=f"any of {', '.join(VARIANTS)}")
    parser.add_argument("--list", action="store_true", help="print the variants' budgets")
    parser.add_argument("--work", default="runs/shape_grid", help="the runs' folder")
    parser.add_argument("--tasks_dir", default="runs/tasks")
    parser.add_argument("--results", default=RESULTS,
                        help="where each finished variant's figures go (default, the folder "
                             "of the fine-tuning recipe in use: %(default)s)")
    parser.add_argument("--random_records", default=RANDOM_RECORDS,
                        help="the random starts' seed records, kept in git so that another "
                             "machine does not fine-tune them again (default: %(default)s)")
    parser.add_argument("--reuse", action="append", default=[], metavar="SHAPE=RUN",
                        help="a finished run of that shape and budget (the reference run)")
    parser.add_argument("--commit", action="store_true", help="commit each finished shape")
    parser.add_argument("--pretrain_only", action="store_true",
                        help="pretrain (or find finished) the variants' runs, nothing more: "
                             "for a measurement of their own on the runs")
    args = parser.parse_args(argv)
    if args.list:
        reference = reference_step_flops()
        for name, variant in VARIANTS.items():
            flops = variant_step_flops(variant)
            print(f"{name}: {budget_steps(variant)} steps of {flops / 1e9:.1f} GFLOP "
                  f"({flops / reference:.1f}x the reference's)"
                  + (f", {' '.join(variant.overrides)}" if variant.overrides else ""))
        return 0
    unknown = [shape for shape in args.shapes if shape not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}: the variants are {', '.join(VARIANTS)}")
    reused = dict(item.split("=", 1) for item in args.reuse)
    for shape in args.shapes:
        run_dir = reused.get(shape, os.path.join(args.work, shape, "run"))
        record = pretrain(shape, run_dir)
        if args.pretrain_only:
            print(f"shape grid: {shape} pretrained in {run_dir}", flush=True)
            continue
        probe(run_dir, args.tasks_dir)
        subprocess.run([os.path.join(BIN, "albert-experiment"), "downstream", run_dir,
                        "--tasks_dir", args.tasks_dir, "--random_records",
                        args.random_records, "--max_seq_length", str(SEQUENCE_LENGTH)],
                       check=True)
        finish(shape, run_dir, args.results, record, args.commit, args.random_records)
        print(f"shape grid: {shape} done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
