"""`albert-convert`: move ALBERT weights between the original, Model Garden, Hugging Face and our
formats.

    # the released TF1 model -> our model folder (config.yaml, checkpoints/, 30k-clean.model)
    albert-convert --from original --input albert_base/ --to ours --output models/albert_base
    # a Model Garden TF2 encoder checkpoint (its sizes from a preset, YAML or JSON)
    albert-convert --from model_garden --input mg/ckpt-1000 --config albert_base \\
        --to ours --output models/mg_base
    # our pretraining run -> transformers (config.json, model.safetensors, spiece.model)
    albert-convert --from ours --input runs/tiny --to huggingface --output hf/tiny
    # ... or back to the original TF1 layout, for tools that expect it
    albert-convert --from ours --input runs/tiny --to original --output tf1/tiny

Every variable is checked against the config before anything is written; a mismatch lists
each missing, unexpected and mis-shaped variable by name. The output folder is written under a
temporary name and renamed when complete.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from albert_tf.cli.command import run_command
from albert_tf.io.console import add_verbose_flag


def _parser() -> argparse.ArgumentParser:
    from albert_tf.config.checkpoint_formats import CHECKPOINT_FORMATS, TARGET_FORMATS

    parser = argparse.ArgumentParser(prog="albert-convert", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source_format", required=True, choices=CHECKPOINT_FORMATS)
    parser.add_argument("--input", required=True,
                        help="source folder, checkpoint prefix or weights file")
    parser.add_argument("--to", dest="target_format", required=True, choices=TARGET_FORMATS)
    parser.add_argument("--output", required=True, help="a new (or empty) folder")
    parser.add_argument("--config", help="model config: a preset name, our YAML, an original "
                        "albert_config.json or a transformers config.json (default: the one "
                        "beside the source; required for model_garden)")
    parser.add_argument("--checkpoint", help="with --from ours: a ckpt-N path (default: latest)")
    parser.add_argument("--sentence_objective", choices=("sop", "nsp"), default="sop",
                        help="what the source's sentence head was trained for (the released "
                        "ALBERT models: sop)")
    parser.add_argument("--spm_model", help="SentencePiece model to put beside the weights "
                        "(default: the one found beside the source)")
    parser.add_argument("--cased", action="store_true",
                        help="the tokenizer keeps case (the released models are uncased)")
    parser.add_argument("--ignore", nargs="+", default=[], metavar="REGEX",
                        help="source variables to skip, e.g. a fine-tuned task head")
    add_verbose_flag(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_command("albert-convert", _parser(), _run, argv, _user_errors)


def _user_errors() -> tuple[type[Exception], ...]:
    from albert_tf.checkpoints.reading import CheckpointError

    return (CheckpointError, OSError)


def _run(args) -> int:
    from albert_tf.checkpoints.convert import load_model, read_model_config, save_model

    config = read_model_config(args.config) if args.config else None
    loaded = load_model(args.source_format, args.input, config, args.sentence_objective,
                        args.ignore, args.checkpoint)
    written = save_model(loaded, args.target_format, args.output, args.spm_model,
                         lower_case=not args.cased)
    heads = "MLM + sentence heads" if getattr(loaded.model, "sentence_head", None) else (
        "MLM head" if hasattr(loaded.model, "masked_lm") else "encoder only")
    parameters = sum(int(variable.shape.num_elements()) for variable in
                     loaded.model.trainable_weights)
    print(f"{args.source_format} {loaded.source} -> {args.target_format} {written}\n"
          f"  {parameters:,} parameters ({heads}), step "
          f"{loaded.global_step}, tokenizer: {args.spm_model or loaded.spm_model or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
