"""`albert-eval`: score a pretrained checkpoint on MLM, NSP-style and SOP-style shards.

    albert-eval --model_dir runs/tiny --sop_files 'data/heldout_sop/*.tfrecord' \\
        --nsp_files 'data/heldout_nsp/*.tfrecord'
    albert-eval --model_dir runs/tiny --checkpoint runs/tiny/checkpoints/ckpt-200 \\
        --mlm_files 'data/heldout/*.tfrecord' --output scores.json

Each set is read once in order (or `--max_batches` batches of it). The printed row is the
paper's Table 6 layout: MLM, NSP and SOP accuracy. The spread of the encoder's outputs across
the first set's inputs is printed too, with a warning when the encoder has collapsed to one
output for every input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from albert_tf.cli.command import fail, run_command
from albert_tf.io.console import add_verbose_flag


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="albert-eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model_dir", required=True,
                        help="a folder albert-pretrain wrote (its config.yaml is read)")
    parser.add_argument("--checkpoint", help="a ckpt-N path (default: the run's latest)")
    for task, what in (("mlm", "any pretraining shards (masked-LM accuracy)"),
                       ("nsp", "shards built with --sentence_objective nsp"),
                       ("sop", "shards built with --sentence_objective sop")):
        parser.add_argument(f"--{task}_files", nargs="+", default=[], metavar="GLOB",
                            help=what)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_batches", type=int, default=None,
                        help="stop each set after this many batches (default: all)")
    parser.add_argument("--output", help="also write the results to this JSON file")
    add_verbose_flag(parser)
    return parser


def _percent(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def main(argv: Sequence[str] | None = None) -> int:
    return run_command("albert-eval", _parser(), _run, argv, _user_errors)


def _user_errors() -> tuple[type[Exception], ...]:
    from albert_tf.checkpoints.reading import CheckpointError
    from albert_tf.data.validation import DataError

    return (DataError, CheckpointError)


def _run(args) -> int:
    sets = {task: getattr(args, f"{task}_files") for task in ("mlm", "nsp", "sop")}
    sets = {task: files for task, files in sets.items() if files}
    if not sets:
        return fail("albert-eval", "give at least one of --mlm_files, --nsp_files, "
                    "--sop_files")

    from albert_tf.checkpoints.model_folder import load_pretrainer
    from albert_tf.training.collapse import collapse_warning
    from albert_tf.training.evaluation import evaluate_files, spread_on_files, table6_row

    model, config, checkpoint = load_pretrainer(args.model_dir, args.checkpoint)
    results = {task: evaluate_files(model, config, files, args.batch_size,
                                    args.max_batches, field=f"--{task}_files")
               for task, files in sets.items()}
    first_task, first_files = next(iter(sets.items()))
    spreads = spread_on_files(model, config, first_files, args.batch_size,
                              field=f"--{first_task}_files")
    row = table6_row(results)
    print(f"checkpoint {checkpoint} (sentence objective: {config.sentence_objective})")
    for task, metrics in results.items():
        shown = " ".join(f"{name}={value:.4f}" for name, value in sorted(metrics.items()))
        print(f"  {task} set: {shown}")
    print(f"  representation spread across {first_task} inputs (0 = collapsed): "
          + " ".join(f"{name}={value:.3f}" for name, value in sorted(spreads.items())))
    warning = collapse_warning(spreads, "on these inputs")
    if warning:
        print(f"albert-eval: {warning}", file=sys.stderr)
    print("\n| MLM | NSP | SOP |\n|---|---|---|")
    print(f"| {_percent(row['mlm'])} | {_percent(row['nsp'])} | {_percent(row['sop'])} |")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            json.dump({"checkpoint": checkpoint, "sets": results, "accuracy": row,
                       "representation_spread": spreads}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
