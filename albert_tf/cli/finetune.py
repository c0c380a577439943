"""`albert-finetune`: fine-tune a pretrained ALBERT on a GLUE task, SQuAD, RACE or your own
files.

    albert-finetune --task mrpc --data_dir glue_data/MRPC --init_checkpoint runs/base \\
        --model_dir runs/mrpc
    # your own CSV, TSV or JSON Lines files; the label set is the training file's
    albert-finetune --task classify --train_file train.csv --dev_file dev.csv \\
        --test_file test.csv --text_column review --label_column stars \\
        --init_checkpoint runs/base --model_dir runs/reviews
    albert-finetune --task regress --train_file pairs.jsonl --dev_file dev.jsonl \\
        --text_column a --text_pair_column b --label_column score \\
        --init_checkpoint runs/base --model_dir runs/similarity
    albert-finetune --task squad_v2 --data_dir squad/ --from original \\
        --init_checkpoint albert_base_v2/ --model_dir runs/squad2 \\
        --override train.global_batch_size=24 --override optimizer.learning_rate=2e-5
    albert-finetune --task race --data_dir RACE/ --init_checkpoint runs/base \\
        --config my_race.yaml --print_config

The recipe comes from `configs/finetune/<task>.yaml` (the paper's per-task hyperparameters)
unless --config names another YAML; flags and --override change single fields. The run
evaluates on dev every train.eval_every_steps, keeps the best checkpoint, writes test-set
predictions in the leaderboard format under <model_dir>/predictions/, and resumes when run
again.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from albert_tf.cli.command import print_config, run_command
from albert_tf.config import ConfigError
from albert_tf.io.console import add_verbose_flag

# Flag -> config field, for the flags that set one field.
_FIELD_FLAGS = {"data_dir": "data.data_dir", "init_checkpoint": "model.init_checkpoint",
                "init_format": "model.init_format", "model_config": "model.config",
                "spm_model": "model.spm_model", "model_dir": "train.model_dir",
                "train_file": "data.train_file", "dev_file": "data.dev_file",
                "test_file": "data.test_file", "text_column": "data.text_column",
                "text_pair_column": "data.text_pair_column",
                "label_column": "data.label_column"}


def _parser() -> argparse.ArgumentParser:
    from albert_tf.config.checkpoint_formats import CHECKPOINT_FORMATS
    from albert_tf.config.finetuning import TASK_NAMES

    parser = argparse.ArgumentParser(prog="albert-finetune", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", help=f"{', '.join(TASK_NAMES[:-1])} or {TASK_NAMES[-1]} "
                        f"(default: the --config's task); classify and regress read your own "
                        f"files (--train_file ...), classify also a task folder of "
                        f"albert-data task")
    parser.add_argument("--config", help="a task YAML (default: configs/finetune/<task>.yaml)")
    parser.add_argument("--data_dir", help="the task's folder as downloaded")
    files = parser.add_argument_group(
        "your own files (classify, regress): CSV, TSV or JSON Lines, by extension")
    files.add_argument("--train_file", help="the training examples")
    files.add_argument("--dev_file", help="the examples that choose the best checkpoint")
    files.add_argument("--test_file", help="scored with the best checkpoint when it has the "
                       "label column, else predicted")
    files.add_argument("--text_column", help="the column (JSON key) of the text (default: text)")
    files.add_argument("--text_pair_column", help="the column of a pair's second text")
    files.add_argument("--label_column", help="the column of the label: a class name, or a "
                       "number for regress (default: label)")
    parser.add_argument("--init_checkpoint", help="the pretrained model: our model folder or "
                        "checkpoint, or a source in --from format")
    parser.add_argument("--from", dest="init_format", choices=CHECKPOINT_FORMATS,
                        help="format of --init_checkpoint (default: ours)")
    parser.add_argument("--model_config", help="model config (preset, YAML or JSON) for "
                        "--from model_garden or a random start")
    parser.add_argument("--spm_model", help="SentencePiece model (default: beside the "
                        "checkpoint)")
    parser.add_argument("--model_dir", help="the run folder")
    parser.add_argument("--override", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="change one field, e.g. train.train_steps=100; may be repeated")
    parser.add_argument("--print_config", action="store_true",
                        help="print the resolved configuration and exit")
    add_verbose_flag(parser)
    return parser


def _config_path(args) -> str:
    if args.config:
        return args.config
    if not args.task:
        raise ConfigError("name the task (--task) or a task YAML (--config)")
    from albert_tf.config.finetuning import recipe_path

    return recipe_path(args.task)


def main(argv: Sequence[str] | None = None) -> int:
    # Task data, checkpoints and features raise ValueErrors (TaskDataError, CheckpointError)
    # and OSErrors that name the file.
    return run_command("albert-finetune", _parser(), _run, argv, lambda: (ValueError, OSError))


def _run(args) -> int:
    from albert_tf.config.finetuning import load_finetune_config

    fields = {field: getattr(args, flag) for flag, field in _FIELD_FLAGS.items()}
    fields["task"] = args.task
    config = load_finetune_config(_config_path(args), args.override, **fields)
    if args.print_config:
        return print_config(config)

    from albert_tf.finetuning.runner import run_finetuning

    result = run_finetuning(config)
    print(f"\nalbert-finetune: best dev checkpoint {result.best_checkpoint} "
          f"(step {result.best_step})")
    print(json.dumps(result.dev_metrics, indent=2))
    if result.test_metrics:
        print("albert-finetune: the same checkpoint on the labelled test split (chosen on dev):")
        print(json.dumps(result.test_metrics, indent=2))
    for path in result.prediction_files:
        print(f"  wrote {path}")
    note = result.stuck_note()
    if note:
        print(f"albert-finetune: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
