"""`albert-pretrain`: pretrain ALBERT with Keras `model.fit` from a run YAML.

    albert-pretrain --config configs/pretrain/tiny_cpu.yaml
    albert-pretrain --config configs/pretrain/albert_base_gpu.yaml \\
        --override data.train_files='[gs://bucket/shards/*.tfrecord]' \\
        --override train.model_dir=gs://bucket/runs/base
    albert-pretrain --config configs/pretrain/albert_base_paper.yaml --print_config
    # continue pretraining a released model on your own shards (built with its 30k-clean.model)
    albert-pretrain --config my_domain.yaml --init_checkpoint albert_base/ --init_format original

Running the same command again resumes an interrupted run from its last backup (weights,
optimizer, step and data position) and leaves a finished one as it is; with a larger
train.train_steps it continues a finished run from its last checkpoint. Any other change of
settings on the same train.model_dir is refused, naming the fields.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from albert_tf.cli.command import print_config, run_command
from albert_tf.io.console import add_verbose_flag


def _parser() -> argparse.ArgumentParser:
    from albert_tf.config.checkpoint_formats import CHECKPOINT_FORMATS

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
    parser.add_argument("--verify_checksums", action="store_true",
                        help="also check every shard's SHA-256 against its manifest before "
                        "step 1 (reads each shard once; the size and record count are always "
                        "checked)")
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


def _note_retired_sections(path: str) -> None:
    from albert_tf.config.pretraining import RETIRED_SECTIONS
    from albert_tf.config.schema import load_yaml_mapping

    for section in sorted(set(load_yaml_mapping(path)) & set(RETIRED_SECTIONS)):
        print(f"albert-pretrain: note: {path}: section '{section}' is ignored: albert-pretrain "
              f"no longer fine-tunes after training; `albert-experiment check RUN --task_dir "
              f"DIR` does (pip install -e '.[lab]')", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    return run_command("albert-pretrain", _parser(), _run, argv, _user_errors)


def _user_errors() -> tuple[type[Exception], ...]:
    from albert_tf.checkpoints.reading import CheckpointError
    from albert_tf.data.validation import DataError
    from albert_tf.loop.cluster import ClusterError, PeerLostError
    from albert_tf.loop.finite import NonFiniteError

    return (DataError, CheckpointError, ClusterError, PeerLostError, NonFiniteError)


def _run(args) -> int:
    from albert_tf.config.pretraining import load_pretrain_config

    config = load_pretrain_config(args.config, [*_init_overrides(args), *args.override])
    if args.print_config:
        return print_config(config, config.model.hidden_size)
    _note_retired_sections(args.config)

    from albert_tf.training.trainer import run_pretraining

    result = run_pretraining(config, args.verify_checksums)
    print(f"\nalbert-pretrain: finished at step {result.final_step}; "
          f"checkpoint {result.checkpoint}")
    if result.eval_metrics:
        print("held-out evaluation:\n" + format_metrics(result.eval_metrics))
    return 0


if __name__ == "__main__":
    sys.exit(main())
