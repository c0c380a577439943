"""`albert-predict`: a trained model over a CSV, TSV or JSON Lines file; each input row is
written with its prediction beside it.

    # a fine-tuning run (its best checkpoint), tokenized as in training
    albert-predict --model_dir runs/reviews --input new.csv --output new_predicted.csv
    # a raw-text model saved from Python; a pair task's two columns
    albert-predict --model_dir similarity.keras --input pairs.jsonl --output scored.jsonl \\
        --text_column a --text_pair_column b
    # an exported SavedModel (classifiers and regressors)
    albert-predict --saved_model export/reviews --input new.tsv --output new_predicted.tsv

Added columns: `prediction` (the label) and `probability_<label>` per label for a
classifier; `prediction` (the number) for a regressor; `prediction` (the answer's text) and
`probability` for span extraction; `prediction` (the option's index) and `probability_<i>`
per option for multiple choice. Rows stream through in batches, so a file larger than
memory works; the output is written under a temporary name and renamed when complete. The
input columns default to the ones the run was trained on (your own files), else `text`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from albert_tf.cli.command import run_command
from albert_tf.io.console import add_verbose_flag


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="albert-predict", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument("--model_dir", help="an albert-finetune run folder (or one of its "
                       "best/ckpt-N), or a raw-text model's .keras file")
    model.add_argument("--saved_model", help="a SavedModel albert-export wrote from a "
                       "classifier or regressor")
    parser.add_argument("--input", required=True, help="a .csv, .tsv or .jsonl file")
    parser.add_argument("--output", required=True, help="the file to write (.csv, .tsv or "
                        ".jsonl; a new name)")
    parser.add_argument("--batch_size", type=int, default=64, help="rows per model call")
    columns = parser.add_argument_group("input columns (JSON keys)")
    columns.add_argument("--text_column", help="the text (default: the run's, else text)")
    columns.add_argument("--text_pair_column", help="a pair's second text (default: the "
                         "run's, else none)")
    columns.add_argument("--question_column", default="question", help="span extraction and "
                         "multiple choice (default: question)")
    columns.add_argument("--context_column", default="context", help="span extraction and "
                         "multiple choice (default: context)")
    columns.add_argument("--options_column", default="options", help="multiple choice: a "
                         "JSON list of the options (default: options)")
    parser.add_argument("--no_progress", action="store_true", help="no progress bar")
    add_verbose_flag(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_command("albert-predict", _parser(), _run, argv, lambda: (ValueError, OSError))


def _run(args) -> int:
    import os

    from albert_tf.text_models.batch_prediction import (
        InputColumns,
        model_predictor,
        predict_file,
        saved_model_predictor,
    )

    if args.batch_size < 1:
        raise ValueError(f"--batch_size must be positive, got {args.batch_size}")
    if os.path.abspath(args.input) == os.path.abspath(args.output):
        raise ValueError(f"--output {args.output} is the input file; give a new name")
    trained = _trained_columns(args.model_dir)
    columns = InputColumns(
        text=args.text_column or trained.get("text_column") or "text",
        text_pair=args.text_pair_column or trained.get("text_pair_column") or "",
        question=args.question_column, context=args.context_column,
        options=args.options_column)
    if args.saved_model:
        predictor = saved_model_predictor(args.saved_model, columns)
        source = args.saved_model
    else:
        from albert_tf.text_models import load_text_model

        predictor = model_predictor(load_text_model(args.model_dir), columns)
        source = args.model_dir
    count = predict_file(predictor, args.input, args.output, args.batch_size,
                         progress=not args.no_progress)
    print(f"albert-predict: {count} rows of {args.input} predicted by {source} -> "
          f"{args.output} (added {', '.join(predictor.added_columns)})")
    return 0


def _trained_columns(model_dir: str | None) -> dict:
    """The text columns a run on your own files was trained with ({} otherwise)."""
    from albert_tf.finetuning.restore import is_finetune_run, read_finetune_config

    if not model_dir or not is_finetune_run(model_dir):
        return {}
    data = read_finetune_config(model_dir).data
    if not data.has_own_files:
        return {}
    return {"text_column": data.text_column, "text_pair_column": data.text_pair_column}


if __name__ == "__main__":
    sys.exit(main())
