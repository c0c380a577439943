"""The same small pretraining run and the same fine-tunes computed in float32 and in mixed
bfloat16: how far apart the losses and scores end up (what `precision: auto` risks where it
picks bfloat16). Not a timing: run it under `tools/cpu`, beside other work.

    python -m albert_lab.benchmarks.precision_numerics --work_dir /tmp/precision_numerics

What it runs (in `--work_dir`, data made once and kept; a finished run is not run again):
- the quickstart's data (`scripts/quickstart.sh`'s commands: the standard library's
  docstrings, a 1,000-piece SentencePiece model, SOP shards of sequences of 64 with every
  20th document held out) and BBC News topics (`albert-data task --source bbc-news`);
- `albert-pretrain --config configs/pretrain/tiny_cpu.yaml` (H 64 x 4 layers, AdamW, batch
  64) for `--pretrain_steps` steps, once with `train.precision=float32` and once with
  `mixed_bfloat16`, epochs of 40 steps: each epoch's mean masked-LM and SOP losses (the
  TensorBoard epoch scalars) side by side, and the held-out metrics at the end;
- BBC News fine-tuned from the float32 run with the downstream suite's recipe
  (`albert_lab.comparison.recipes.SMALL_MODEL_RECIPE`), seeds `--seeds`, in float32 and in
  mixed_bfloat16 (the seed loops of the suite, two workers on two cores): dev and test
  accuracy per seed, the mean and spread of each precision.
Every variable stays float32 under mixed_bfloat16 (tf_keras's policy: bfloat16 compute,
float32 variables); the script checks the pretraining checkpoints hold float32 tensors only.

Writes JSON to `benchmarks/results/precision_numerics-<host>.json` and prints tables.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import statistics
import subprocess
import sys

from albert_lab.benchmarks.common import machine, result_path
from albert_lab.result_files import write_result

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
PRECISIONS = ("float32", "mixed_bfloat16")
EPOCH_STEPS = 40  # a multiple of the recipe's 20 steps per execution


def run(*arguments: str) -> None:
    print("$ " + " ".join(arguments), flush=True)
    subprocess.run([str(BIN / arguments[0]), *arguments[1:]], check=True, cwd=REPOSITORY)


def prepare_data(work: pathlib.Path) -> None:
    """The quickstart's corpus, tokenizer and shards, and BBC News (made once)."""
    if not (work / "corpus" / "train.txt").exists():
        run("albert-data", "corpus", "--source", "stdlib-docstrings", "--output",
            str(work / "corpus" / "train.txt"), "--heldout_output",
            str(work / "corpus" / "heldout.txt"), "--heldout_every", "20")
    if not (work / "spm" / "albert.model").exists():
        run("albert-data", "train-spm", "--input", str(work / "corpus" / "train.txt"),
            "--model_prefix", str(work / "spm" / "albert"), "--vocab_size", "1000",
            "--max_sentences", "200000")
    for name, source, dupe in (("train", "train", "3"), ("heldout_sop", "heldout", "1")):
        if not (work / "shards" / name / "manifest.json").exists():
            run("albert-data", "build", "--input", str(work / "corpus" / f"{source}.txt"),
                "--spm_model", str(work / "spm" / "albert.model"), "--output_dir",
                str(work / "shards" / name), "--sentence_objective", "sop", "--dupe_factor",
                dupe, "--max_seq_length", "64", "--max_predictions_per_seq", "10",
                "--num_shards", "4", "--num_workers", "2", "--no_progress")
    if not (work / "tasks" / "bbc-news" / "source.json").exists():
        run("albert-data", "task", "--source", "bbc-news", "--output",
            str(work / "tasks" / "bbc-news"))


def epoch_scalars(model_dir: pathlib.Path) -> dict[str, list[float]]:
    """Each epoch's training scalars (`epoch_<metric>` in TensorBoard), by metric."""
    import tensorflow as tf

    scalars: dict[str, dict[int, float]] = {}
    for path in glob.glob(str(model_dir / "tensorboard" / "train" / "events.out*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag.startswith("epoch_"):
                    scalars.setdefault(value.tag[6:], {})[event.step] = float(
                        tf.make_ndarray(value.tensor))
    return {name: [by_epoch[step] for step in sorted(by_epoch)]
            for name, by_epoch in scalars.items()}


def float_dtypes(model_dir: pathlib.Path) -> list[str]:
    """The floating dtypes of the tensors in a run's last checkpoint."""
    import tensorflow as tf

    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(model_dir / "checkpoints"))
    return sorted({dtype.name for dtype in reader.get_variable_to_dtype_map().values()
                   if dtype.is_floating})


def pretrain(work: pathlib.Path, precision: str, steps: int) -> dict:
    model_dir = work / f"pretrain_{precision}"
    if not (model_dir / "eval_results.json").exists():
        overrides = [f"data.train_files=[{work}/shards/train/*.tfrecord]",
                     f"data.eval_files=[{work}/shards/heldout_sop/*.tfrecord]",
                     f"train.model_dir={model_dir}", f"train.train_steps={steps}",
                     f"train.steps_per_epoch={EPOCH_STEPS}",
                     f"train.backup_every_steps={EPOCH_STEPS}",
                     f"train.precision={precision}"]
        run("albert-pretrain", "--config", "configs/pretrain/tiny_cpu.yaml",
            *[item for override in overrides for item in ("--override", override)])
    return {"precision": precision, "epochs": epoch_scalars(model_dir),
            "heldout": json.loads((model_dir / "eval_results.json").read_text()),
            "checkpoint_float_dtypes": float_dtypes(model_dir)}


def fine_tune(work: pathlib.Path, seeds: list[int]) -> dict:
    from albert_lab.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPE
    from albert_lab.comparison.seed_loop import SeedLoop, raise_first_error, run_seed_loops

    task = work / "tasks" / "bbc-news"
    loops = {precision: SeedLoop("classify", [
        *SMALL_MODEL_RECIPE, f"model.init_checkpoint={work / 'pretrain_float32'}",
        f"data.data_dir={task}", "data.max_seq_length=64", f"train.precision={precision}"],
        seeds, str(work / f"bbc-news_{precision}")) for precision in PRECISIONS}
    run_seed_loops(list(loops.values()))  # a finished seed's run is read back, not run again
    raise_first_error(list(loops.values()))
    summary = {}
    for precision, loop in loops.items():
        dev = [loop.records[str(seed)]["value"] for seed in seeds]
        test = [loop.records[str(seed)]["test"] for seed in seeds]
        summary[precision] = {"dev": dev, "test": test,
                              "dev_mean": statistics.mean(dev), "dev_sd": statistics.stdev(dev),
                              "test_mean": statistics.mean(test),
                              "test_sd": statistics.stdev(test)}
    return {"task": "bbc-news", "recipe": SMALL_MODEL, "seeds": seeds, **summary}


def report(result: dict) -> str:
    runs = {run["precision"]: run for run in result["pretraining"]}
    float32, bfloat16 = runs["float32"]["epochs"], runs["mixed_bfloat16"]["epochs"]
    lines = ["| steps | MLM loss float32 | bfloat16 | SOP loss float32 | bfloat16 |",
             "|---:|---:|---:|---:|---:|"]
    for epoch, (mlm, sop) in enumerate(zip(float32["mlm_loss"], float32["sentence_loss"])):
        lines.append(f"| {EPOCH_STEPS * (epoch + 1)} | {mlm:.4f} | "
                     f"{bfloat16['mlm_loss'][epoch]:.4f} | {sop:.4f} | "
                     f"{bfloat16['sentence_loss'][epoch]:.4f} |")
    lines += ["", "| held-out | float32 | bfloat16 |", "|---|---:|---:|"]
    for name in ("mlm_loss", "mlm_accuracy", "sentence_loss", "sentence_accuracy"):
        lines.append(f"| {name} | {runs['float32']['heldout'][name]:.4f} | "
                     f"{runs['mixed_bfloat16']['heldout'][name]:.4f} |")
    tune = result["fine_tuning"]
    lines += ["", f"BBC News, seeds {tune['seeds']} (accuracy x100, mean and sd):", ""]
    for precision in PRECISIONS:
        row = tune[precision]
        lines.append(f"- {precision}: dev {100 * row['dev_mean']:.1f} "
                     f"(sd {100 * row['dev_sd']:.1f}), test {100 * row['test_mean']:.1f} "
                     f"(sd {100 * row['test_sd']:.1f}); dev per seed "
                     + ", ".join(f"{100 * value:.1f}" for value in row["dev"]))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work_dir", default="/tmp/precision_numerics")
    parser.add_argument("--pretrain_steps", type=int, default=600)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    work = pathlib.Path(args.work_dir).resolve()
    prepare_data(work)
    result = {"benchmark": "precision_numerics", **machine(),
              "pretrain_steps": args.pretrain_steps,
              "pretraining": [pretrain(work, precision, args.pretrain_steps)
                              for precision in PRECISIONS],
              "fine_tuning": fine_tune(work, args.seeds)}
    output = write_result(result_path("precision_numerics", result, args.output), result)
    print(report(result))
    print(f"wrote {output}")


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    main()
