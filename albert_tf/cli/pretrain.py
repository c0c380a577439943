"""`albert-pretrain`: pretrain ALBERT with Keras `model.fit` from a run YAML.

    albert-pretrain --config configs/pretrain/tiny_cpu.yaml
    albert-pretrain --config configs/pretrain/albert_base_gpu.yaml \\
        --override data.train_files='[gs://bucket/shards/*.tfrecord]' \\
        --override train.model_dir=gs://bucket/runs/base
    albert-pretrain --config configs/pretrain/albert_base_paper.yaml --print_config
    # continue pretraining a released model on your own shards (built with its 30k-clean.model)
    albert-pretrain --config my_domain.yaml --init_checkpoint albert_base/ --init_format original

Running the same command again resumes an interrupted run from its last backup (weights,
optimizer, step and data position) and leaves a finished one as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

import yaml

from albert_tf.config import ConfigError
from albert_tf.text.console import add_verbose_flag, quiet_tensorflow


def _parser() -> argparse.ArgumentParser:
    from albert_tf.checkpoints.formats import CHECKPOINT_FORMATS

    parser = argparse.ArgumentParser(prog="albert-pretrain", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="a run YAML (see configs/pretrain/)")
    parser.add_argument("--override", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="change one field, e.g. train.train_steps=1000; may be repeated")
    parser.add_argument("--init_checkpoint", metavar="PATH",
                        help="start from this model (init.checkpoint): our model folder, an "
                        "original TF1 folder, a transformers folder or a Model Garden "
                        "checkpoint; the optimizer and step start fresh")
    parser.add_argument("--init_format", choices=CHECKPOINT_FORMATS,
                        help="its format (init.checkpoint_format; default ours)")
    parser.add_argument("--init_ignore", nargs="+", metavar="REGEX",
                        help="weights to leave freshly initialized (init.ignore), e.g. "
                        "'^sentence_head/'")
    parser.add_argument("--print_config", action="store_true",
                        help="print the resolved configuration and exit without training")
    add_verbose_flag(parser)
    return parser


def format_metrics(metrics: dict[str, float]) -> str:
    """`name: value` lines, accuracies as percentages."""
    lines = []
    for name, value in sorted(metrics.items()):
        shown = f"{100 * value:.2f}%" if name.endswith("accuracy") else f"{value:.4f}"
        lines.append(f"  {name:<20} {shown}")
    return "\n".join(lines)


def _init_overrides(args) -> list[str]:
    """The `init.*` overrides the --init_* flags stand for (JSON values are YAML)."""
    fields = {"checkpoint": args.init_checkpoint, "checkpoint_format": args.init_format,
              "ignore": args.init_ignore}
    return [f"init.{name}={json.dumps(value)}" for name, value in fields.items()
            if value is not None]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    with quiet_tensorflow(args.verbose):
        return _run(args)


def _run(args) -> int:
    from albert_tf.training.config import load_pretrain_config

    overrides = [*_init_overrides(args), *args.override]
    try:
        config = load_pretrain_config(args.config, overrides)
    except ConfigError as error:
        print(f"albert-pretrain: error: {error}", file=sys.stderr)
        return 2
    if args.print_config:
        print(yaml.safe_dump(config.to_dict(), sort_keys=False), end="")
        return 0

    from albert_tf.checkpoints.reading import CheckpointError
    from albert_tf.data.validation import DataError
    from albert_tf.training.trainer import run_pretraining

    try:
        result = run_pretraining(config)
    except (ConfigError, DataError, CheckpointError) as error:
        print(f"albert-pretrain: error: {error}", file=sys.stderr)
        return 2
    print(f"\nalbert-pretrain: finished at step {result.final_step}; "
          f"checkpoint {result.checkpoint}")
    if result.eval_metrics:
        print("held-out evaluation:\n" + format_metrics(result.eval_metrics))
    if result.chief and config.downstream_check.task_dir:
        return _downstream_check(config)
    return 0


def _downstream_check(config) -> int:
    from albert_tf.checkpoints.reading import CheckpointError
    from albert_tf.training.downstream_check import missing_task_note, run_downstream_check

    try:
        check = run_downstream_check(config.train.model_dir)
    except (ConfigError, CheckpointError, ValueError, OSError) as error:  # as albert-finetune
        print(f"albert-pretrain: error: downstream check: {error}", file=sys.stderr)
        return 2
    if check is None:
        print(f"albert-pretrain: {missing_task_note(config.downstream_check.task_dir)}")
        return 0
    print(f"albert-pretrain: {check.summary()}")
    if check.warning():
        print(f"albert-pretrain: {check.warning()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
