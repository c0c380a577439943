"""`albert-export`: write a model where users run it. `--format`:

    saved_model  (default) a SavedModel that serves raw text (TF Serving,
                 `tf.saved_model.load`), with tokenization inside the graph;
    tflite       a LiteRT (TFLite) file taking ids, with the SentencePiece model and a small
                 client beside it; `--quantize none|float16|dynamic_int8|int8`;
    hub          `preprocessor/` and `encoder/` SavedModels in the TF Hub text convention
                 (`hub.KerasLayer`, fine-tunable);
    onnx         an ONNX model taking ids, with the same client (tf2onnx; the `onnx` extra).

    # our pretraining run (its latest checkpoint) with the SentencePiece model it used
    albert-export --checkpoint runs/tiny --spm_model data/spm.model --output export/tiny
    # one checkpoint of it, bf16 compute, XLA-compiled model function, sequences of 128
    albert-export --checkpoint runs/tiny/checkpoints/ckpt-1000 --spm_model data/spm.model \\
        --output export/tiny_bf16 --max_seq_length 128 --precision mixed_bfloat16 --jit_compile
    # a released TF1 model folder (albert_config.json, model.ckpt-*, 30k-clean.model)
    albert-export --from original --checkpoint albert_base/ --output export/albert_base

    # a fine-tuned run folder of albert-finetune (its best checkpoint), task outputs included
    albert-export --checkpoint runs/mrpc --output export/mrpc
    # a raw-text model saved from Python (TextClassifier.save), its tokenizer inside it
    albert-export --checkpoint sentiment.keras --output export/sentiment
    # LiteRT with int8 weights; full-integer int8 calibrated on the task's training texts
    albert-export --checkpoint runs/mrpc --format tflite --quantize dynamic_int8 \\
        --output export/mrpc_tflite
    albert-export --checkpoint runs/mrpc --format tflite --quantize int8 \\
        --representative_data glue_data/MRPC --output export/mrpc_int8

SavedModel signatures: serving_default (text), serving_pairs (text, text_pair), encode_ids
(TF-Hub ids interface), preprocess, preprocess_pairs, and fill_mask for models with the
masked-LM head.
Loading the SavedModel needs the tensorflow-text ops: `import tensorflow_text` first (TF
Serving: a build that includes them).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from typing import NamedTuple, Sequence

from albert_tf.cli.command import run_command
from albert_tf.io.console import add_verbose_flag


def _parser() -> argparse.ArgumentParser:
    from albert_tf.config.checkpoint_formats import CHECKPOINT_FORMATS
    from albert_tf.config.export_formats import EXPORT_FORMATS, QUANTIZATIONS
    from albert_tf.config.precision import PRECISION_SETTINGS

    parser = argparse.ArgumentParser(prog="albert-export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True,
                        help="our model folder or one of its checkpoints/ckpt-N, a fine-tuning "
                        "run folder, a raw-text model's .keras file, or a source in another "
                        "--from format")
    parser.add_argument("--from", dest="source_format", default="ours", choices=CHECKPOINT_FORMATS)
    parser.add_argument("--config", help="model config for --from model_garden (or to "
                        "override the one beside the source)")
    parser.add_argument("--spm_model", help="the SentencePiece model the weights were trained "
                        "with (default: the one found beside the source)")
    parser.add_argument("--output", required=True, help="a new (or empty) folder")
    parser.add_argument("--format", default="saved_model", choices=EXPORT_FORMATS,
                        help="what to write (default: a raw-text SavedModel)")
    parser.add_argument("--quantize", default="none", choices=QUANTIZATIONS,
                        help="tflite: float32 (none), float16 weights, int8 weights "
                        "(dynamic_int8) or full-integer int8 (needs --representative_data)")
    parser.add_argument("--representative_data",
                        help="tflite --quantize int8: examples to calibrate on: pretraining "
                        "shards (a folder of *.tfrecord, a glob) or a task folder")
    parser.add_argument("--representative_examples", type=int, default=200,
                        help="how many representative examples to read (default 200)")
    parser.add_argument("--max_seq_length", type=int,
                        help="longest packed input (default: the run's data.max_seq_length, "
                        "else 512, at most max_position_embeddings)")
    parser.add_argument("--cased", action="store_true",
                        help="do not lower-case (the released models are uncased)")
    parser.add_argument("--top_k", type=int, default=5, help="predictions per [MASK]")
    parser.add_argument("--precision", default="float32", choices=PRECISION_SETTINGS,
                        help="compute dtype of the exported model (outputs are float32); "
                        "auto: what train.precision's auto picks on this machine for the "
                        "model's size and --jit_compile (the machine that will serve it "
                        "should be of the same kind)")
    parser.add_argument("--jit_compile", action="store_true",
                        help="XLA-compile the model function (compiles once per new shape)")
    parser.add_argument("--pad_to_multiple_of", type=int, default=None,
                        help="round padded lengths up to this multiple (default: 16 with "
                        "--jit_compile, else 1)")
    parser.add_argument("--encoder_only", action="store_true",
                        help="leave out the masked-LM head and fill_mask")
    add_verbose_flag(parser)
    return parser


def _source(args):
    """(path, checkpoint) for `load_model`: a ckpt-N path of ours names its model folder."""
    if args.source_format != "ours":
        return args.checkpoint, None
    from albert_tf.checkpoints.model_folder import split_checkpoint_path

    return split_checkpoint_path(args.checkpoint)


def _default_max_seq_length(args, path: str, max_positions: int) -> int:
    length = 512
    if args.source_format == "ours":
        from albert_tf.checkpoints.model_folder import load_run_config

        length = load_run_config(path).data.max_seq_length
    return min(length, max_positions)


def _load_source(args):
    """(model, tokenizer path or None, lower_case, default max_seq_length, metadata)."""
    from albert_tf.checkpoints.convert import load_model, read_model_config
    from albert_tf.checkpoints.model_folder import folder_tokenizer
    from albert_tf.finetuning.restore import is_finetune_run, load_finetuned
    from albert_tf.finetuning.task_kinds import get_task

    if args.source_format == "ours" and args.checkpoint.endswith(".keras"):
        return _load_text_model(args.checkpoint)
    path, checkpoint = _source(args)
    if args.source_format == "ours" and is_finetune_run(path):
        run = load_finetuned(path, checkpoint)
        task = get_task(run.config)
        metadata = {"source": os.path.abspath(path), "source_format": "finetuned",
                    "task": run.config.task, "global_step": run.step, **_labels(task.labels)}
        if task.kind == "multiple_choice":  # its rows are packed as its training packed them
            metadata["max_qa_length"] = run.config.data.max_qa_length
        return (run.model, run.config.model.spm_model, run.config.model.lower_case,
                run.config.data.max_seq_length, metadata)
    config = read_model_config(args.config) if args.config else None
    loaded = load_model(args.source_format, path, config, checkpoint=checkpoint)
    lower_case = not args.cased
    if args.source_format == "ours":
        recorded = folder_tokenizer(path)[1]
        lower_case = lower_case if recorded is None else recorded
    metadata = {"source": loaded.source, "source_format": loaded.source_format,
                "global_step": loaded.global_step}
    return (loaded.model, loaded.spm_model, lower_case,
            _default_max_seq_length(args, path, loaded.config.max_position_embeddings),
            metadata)


def _load_text_model(path: str):
    """`_load_source` for a raw-text model's `.keras` file: its tokenizer is its own (bytes,
    written to a temporary file while the export runs)."""
    from albert_tf.text_models import load_text_model

    model = load_text_model(path)
    preprocessor = model.preprocessor
    metadata = {"source": os.path.abspath(path), "source_format": "keras",
                "task": type(model).__name__, "global_step": None,
                **_labels(getattr(model, "labels", None))}
    return (model, preprocessor.proto, preprocessor.lower_case, preprocessor.max_seq_length,
            metadata)


def _labels(labels) -> dict:
    """The class names a classifier's probabilities follow, for the export's metadata."""
    return {} if labels is None else {"labels": list(labels)}


@contextlib.contextmanager
def _tokenizer_file(spm_model: str | bytes):
    """A path of the SentencePiece model: its own, or a temporary file holding its bytes
    (the exports copy the model from a file)."""
    if not isinstance(spm_model, bytes):
        yield spm_model
        return
    with tempfile.TemporaryDirectory(prefix="albert-export-") as scratch:
        path = os.path.join(scratch, "sentencepiece.model")
        with open(path, "wb") as f:
            f.write(spm_model)
        yield path


def main(argv: Sequence[str] | None = None) -> int:
    return run_command("albert-export", _parser(), _run, argv, _user_errors)


def _user_errors() -> tuple[type[Exception], ...]:
    from albert_tf.export import ExportError

    return (ExportError, OSError, ValueError)  # CheckpointError is a ValueError


def _run(args) -> int:
    from albert_tf.config.precision import precision_policy
    from albert_tf.export import ExportError

    _check_format_flags(args)
    precision = args.precision
    with precision_policy("float32" if precision == "auto" else precision):
        loaded = _load_source(args)
    if precision == "auto":  # the model's size decides: loaded again under another policy
        precision = _auto_precision(model_config(loaded[0]).hidden_size, args.jit_compile)
        if precision != "float32":
            with precision_policy(precision):
                loaded = _load_source(args)
    model, spm_model, lower_case, max_seq_length, metadata = loaded
    spm_model = args.spm_model or spm_model
    if not spm_model:
        raise ExportError(f"{args.checkpoint}: no SentencePiece model found beside the "
                          f"source; pass --spm_model (the one the weights were trained with)")
    if args.encoder_only and hasattr(model, "encoder"):
        model = model.encoder
    with _tokenizer_file(spm_model) as spm_path:
        source = _Source(model, spm_path, lower_case and not args.cased,
                         args.max_seq_length or min(max_seq_length,
                                                    model_config(model).max_position_embeddings),
                         {**metadata, "precision": precision})
        output, summary = _EXPORTERS[args.format](args, source)
    step = "" if metadata["global_step"] is None else f" (step {metadata['global_step']})"
    tokenizer = "its own" if isinstance(spm_model, bytes) else spm_model
    print(f"{metadata['source_format']} {metadata['source']}{step} -> {output}\n  "
          f"max_seq_length {source.max_seq_length}, "
          f"{'lower-cased' if source.lower_case else 'cased'}, {summary}; tokenizer "
          f"{tokenizer}")
    return 0


class _Source(NamedTuple):
    """What every format exports: the model and how its text is tokenized."""

    model: object
    spm_model: str
    lower_case: bool
    max_seq_length: int
    metadata: dict


def _check_format_flags(args) -> None:
    """The flags that only some formats read, refused where they would be ignored."""
    from albert_tf.export import ExportError

    if args.format != "tflite" and (args.quantize != "none" or args.representative_data):
        raise ExportError("--quantize and --representative_data are for --format tflite")
    # A mixed policy would put bfloat16/float16 compute into the converted graph; LiteRT
    # chooses its precision by quantizing the float32 model instead.
    if args.format in ("tflite", "onnx") and args.precision.startswith("mixed"):
        advice = ("; choose their precision with --quantize (float16, dynamic_int8, int8)"
                  if args.format == "tflite" else "")
        raise ExportError(f"--precision {args.precision}: {args.format} files are made from "
                          f"the float32 model{advice}")
    if args.format == "tflite" and (args.quantize == "int8") != bool(args.representative_data):
        raise ExportError("--quantize int8 needs --representative_data (pretraining shards or "
                          "a task folder to calibrate on), and only it reads one")
    if args.format != "saved_model" and (args.jit_compile or args.pad_to_multiple_of):
        raise ExportError("--jit_compile and --pad_to_multiple_of are for --format "
                          "saved_model")


def _export_saved_model(args, source: _Source) -> tuple[str, str]:
    from albert_tf.export import ExportOptions, export_saved_model

    options = ExportOptions(
        max_seq_length=source.max_seq_length, lower_case=source.lower_case, top_k=args.top_k,
        jit_compile=args.jit_compile,
        pad_to_multiple_of=args.pad_to_multiple_of or (16 if args.jit_compile else 1))
    output = export_saved_model(source.model, source.spm_model, args.output, options,
                                metadata=source.metadata)
    return (f"SavedModel {output}",
            f"{source.metadata['precision']}{', XLA' if args.jit_compile else ''}"
            f"\n  load it with `import tensorflow_text` first (its ops tokenize in the graph)")


def _export_litert(args, source: _Source) -> tuple[str, str]:
    from albert_tf.export.litert import LiteRTOptions, export_litert
    from albert_tf.export.representative import representative_inputs
    from albert_tf.tokenization import AlbertTokenizer

    representative = None
    if args.representative_data:
        representative = representative_inputs(
            args.representative_data, AlbertTokenizer(source.spm_model, source.lower_case),
            source.max_seq_length, args.representative_examples)
    options = LiteRTOptions(source.max_seq_length, source.lower_case, args.quantize)
    output = export_litert(source.model, source.spm_model, args.output, options,
                           representative, metadata=source.metadata)
    calibrated = f" (calibrated on {len(representative)} examples)" if representative else ""
    return (f"LiteRT {output}", f"quantize {args.quantize}{calibrated}\n  ids in: "
            f"albert_client.py beside it tokenizes raw text as albert-tf does")


def _export_hub(args, source: _Source) -> tuple[str, str]:
    from albert_tf.export.hub import HubOptions, export_hub

    output = export_hub(source.model, source.spm_model, args.output,
                        HubOptions(source.max_seq_length, source.lower_case),
                        metadata=source.metadata)
    return (f"TF Hub preprocessor/ and encoder/ in {output}",
            f"{source.metadata['precision']}\n  load them with hub.KerasLayer (the "
            f"preprocessor after `import tensorflow_text`)")


def _export_onnx(args, source: _Source) -> tuple[str, str]:
    from albert_tf.export.onnx import OnnxOptions, export_onnx

    output = export_onnx(source.model, source.spm_model, args.output,
                         OnnxOptions(source.max_seq_length, source.lower_case),
                         metadata=source.metadata)
    return (f"ONNX {output}", "float32\n  ids in: albert_client.py beside it tokenizes raw "
            "text as albert-tf does and runs onnxruntime")


_EXPORTERS = {"saved_model": _export_saved_model, "tflite": _export_litert, "hub": _export_hub,
              "onnx": _export_onnx}


def _auto_precision(hidden_size: int, jit_compile: bool) -> str:
    """The policy `auto` picks for a model of `hidden_size` on this machine's default
    device (printed with the reason)."""
    import tensorflow as tf

    from albert_tf.config.precision import choose_precision
    from albert_tf.loop.precision import strategy_device

    choice = choose_precision("auto", strategy_device(tf.distribute.get_strategy()),
                              hidden_size, jit_compile)
    print(f"albert-export: precision {choice.describe()}")
    return choice.policy


def model_config(model):
    """The AlbertConfig of an encoder, pretrainer or task model."""
    return getattr(model, "encoder", model).config


if __name__ == "__main__":
    sys.exit(main())
