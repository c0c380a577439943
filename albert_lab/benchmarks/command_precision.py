"""`albert-pretrain` and `albert-finetune` as a user types them, an albert_base-sized model with
the CPU recipes, once with no precision setting (`auto`) and once with
`train.precision=float32`: the seconds a step takes through the commands themselves.

    python -m albert_lab.benchmarks.command_precision --work_dir /tmp/command_precision

What it runs (in `--work_dir`; the corpus, tokenizer, shards and task folder are made once
and kept):
- the data: the docstrings of this Python's standard library (`albert-data corpus --source
  stdlib-docstrings`), an 8,000-piece SentencePiece model, SOP shards of sequences of 128
  with 20 predictions; BBC News topics (`albert-data task --source bbc-news`);
- `albert-pretrain --config configs/pretrain/small_cpu.yaml` with albert_base's shape
  (E 128, H 768, 12 layers, 12 heads, feed-forward 3072) at batch 8, `--steps` steps, no
  held-out evaluation, each setting in a fresh folder;
- `albert-finetune --task classify --data_dir <bbc-news>` (configs/finetune/classify.yaml)
  from that pretraining run, batch 8, sequences of 128, `--steps` steps, one dev evaluation,
  its features converted by the first run and read from `<work_dir>/features` by the others.
The two settings take turns, `--rounds` times each (the machine's speed drifts by 10% from
minute to minute: one round compares runs minutes apart). A step's time is read back from the
run's TensorBoard scalars (`steps_per_second`, written every `train.log_every_steps` =
steps per execution, by `albert_tf.loop.step_callbacks.TrainingScalars`, which leaves out
the first execution's tracing); the fastest execution of each run counts, then the fastest
run of each setting. What each run resolved its precision to is read from its
`precision.json`.

Writes JSON to `benchmarks/results/command_precision-<host>.json` and prints a table.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

from albert_lab.benchmarks.common import machine, result_path
from albert_lab.benchmarks.summary import command_precision_table
from albert_lab.result_files import write_result

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
SETTINGS = {"auto": [], "float32": ["train.precision=float32"]}
ALBERT_BASE_SHAPE = ("model.embedding_size=128", "model.hidden_size=768",
                     "model.num_attention_heads=12", "model.intermediate_size=3072",
                     "model.num_layers=12", "model.max_position_embeddings=512")
VOCAB_SIZE = 8000


def command(name: str, *arguments: str) -> list[str]:
    return [str(BIN / name), *arguments]


def run(arguments: list[str]) -> None:
    print("$ " + " ".join(arguments), flush=True)
    subprocess.run(arguments, check=True, cwd=REPOSITORY)


def prepare_data(work: pathlib.Path) -> dict[str, str]:
    """The corpus, tokenizer, shards and task folder (made once)."""
    corpus, spm, shards, task = (work / "corpus.txt", work / "spm", work / "shards",
                                 work / "bbc-news")
    if not corpus.exists():
        run(command("albert-data", "corpus", "--source", "stdlib-docstrings",
                    "--output", str(corpus)))
    if not (work / "spm.model").exists():
        run(command("albert-data", "train-spm", "--input", str(corpus), "--model_prefix",
                    str(spm), "--vocab_size", str(VOCAB_SIZE), "--max_sentences", "200000"))
    if not (shards / "manifest.json").exists():
        run(command("albert-data", "build", "--input", str(corpus), "--spm_model",
                    str(work / "spm.model"), "--output_dir", str(shards),
                    "--sentence_objective", "sop", "--max_seq_length", "128",
                    "--max_predictions_per_seq", "20", "--num_shards", "2",
                    "--num_workers", "2", "--no_progress"))
    if not (task / "source.json").exists():
        run(command("albert-data", "task", "--source", "bbc-news", "--output", str(task)))
    return {"shards": str(shards / "*.tfrecord"), "task": str(task),
            "features": str(work / "features")}


def step_seconds(model_dir: pathlib.Path) -> list[float]:
    """Seconds per step of each logged interval of a run (its TensorBoard scalars)."""
    import tensorflow as tf

    rates = []
    for path in sorted(glob.glob(str(model_dir / "tensorboard" / "train" / "events.out*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "steps_per_second":
                    rates.append(float(tf.make_ndarray(value.tensor)))
    return [1 / rate for rate in rates]


def timed(kind: str, setting: str, arguments: list[str], model_dir: pathlib.Path) -> dict:
    shutil.rmtree(model_dir, ignore_errors=True)
    start = time.perf_counter()
    run(arguments + [item for override in SETTINGS[setting]
                     for item in ("--override", override)])
    seconds = step_seconds(model_dir)
    if not seconds:
        raise RuntimeError(f"{model_dir}: no steps_per_second scalars were written")
    resolved = json.loads((model_dir / "precision.json").read_text())["starts"][-1]
    return {"command": kind, "setting": setting, "policy": resolved["policy"],
            "reason": resolved["reason"], "step_seconds": min(seconds),
            "step_seconds_per_execution": seconds,
            "wall_seconds": time.perf_counter() - start}


def pretrain_arguments(data: dict, model_dir: pathlib.Path, steps: int,
                       per_execution: int) -> list[str]:
    overrides = [*ALBERT_BASE_SHAPE, f"model.vocab_size={VOCAB_SIZE}",
                 f"data.train_files=[{data['shards']}]", "data.eval_files=[]",
                 f"train.model_dir={model_dir}", "train.global_batch_size=8",
                 f"train.train_steps={steps}", f"train.steps_per_epoch={steps}",
                 f"train.backup_every_steps={steps}", f"train.steps_per_execution={per_execution}",
                 f"train.log_every_steps={per_execution}", "optimizer.warmup_steps=1"]
    return command("albert-pretrain", "--config", "configs/pretrain/small_cpu.yaml",
                   *[item for override in overrides for item in ("--override", override)])


def finetune_arguments(data: dict, pretrained: pathlib.Path, model_dir: pathlib.Path,
                       steps: int, per_execution: int) -> list[str]:
    overrides = ["train.global_batch_size=8", "data.max_seq_length=128",
                 f"train.train_steps={steps}", f"train.eval_every_steps={steps}",
                 f"train.steps_per_execution={per_execution}",
                 f"train.log_every_steps={per_execution}", "optimizer.warmup_steps=1",
                 "train.verbose=2", f"data.cache_dir={data['features']}"]
    return command("albert-finetune", "--task", "classify", "--data_dir", data["task"],
                   "--init_checkpoint", str(pretrained), "--model_dir", str(model_dir),
                   *[item for override in overrides for item in ("--override", override)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work_dir", default="/tmp/command_precision")
    parser.add_argument("--commands", nargs="+", default=["albert-pretrain", "albert-finetune"],
                        choices=["albert-pretrain", "albert-finetune"])
    parser.add_argument("--steps", type=int, default=12, help="steps of each run")
    parser.add_argument("--steps_per_execution", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each setting")
    parser.add_argument("--data_only", action="store_true",
                        help="make the data and stop (before a timed run)")
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    work = pathlib.Path(args.work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = prepare_data(work)
    pretrained = work / "pretrained"
    if not (pretrained / "checkpoints").exists():  # the start every fine-tune reads
        run(pretrain_arguments(data, pretrained, 3, 3))
    if args.data_only:
        return
    runs = []
    for _ in range(args.rounds):
        for setting in SETTINGS:
            if "albert-pretrain" in args.commands:
                runs.append(timed("albert-pretrain", setting, pretrain_arguments(
                    data, work / f"pretrain_{setting}", args.steps, args.steps_per_execution),
                    work / f"pretrain_{setting}"))
            if "albert-finetune" in args.commands:
                runs.append(timed("albert-finetune", setting, finetune_arguments(
                    data, pretrained, work / f"finetune_{setting}", args.steps,
                    args.steps_per_execution), work / f"finetune_{setting}"))
    result = {"benchmark": "command_precision", **machine(), "steps": args.steps,
              "steps_per_execution": args.steps_per_execution, "rounds": args.rounds,
              "runs": runs}
    output = write_result(result_path("command_precision", result, args.output), result)
    print(command_precision_table(result))
    print(f"wrote {output}")


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    main()
