"""The folder of an export that takes ids (LiteRT, ONNX): the model file, the SentencePiece
model, the client (`client.py`, written as `albert_client.py`) and `albert_export.json`, which
holds what the client reads and how the model was made."""

from __future__ import annotations

import json
import os
import shutil
from typing import Any, Mapping

from albert_tf.checkpoints.staging import staged_folder
from albert_tf.export import client
from albert_tf.text.vocabulary import CLS_ID, PAD_ID, SEP_ID, SentencePieceTokenizer

CLIENT_FILE = "albert_client.py"


def write_ids_folder(output_dir: str, model_file: str, model_bytes: bytes, spm_model: str,
                     tokenizer: SentencePieceTokenizer, max_seq_length: int, lower_case: bool,
                     facts: Mapping[str, Any]) -> str:
    """Writes the folder atomically; returns its absolute path.

    Args:
        model_file: the model's file name in the folder (`model.tflite`, `model.onnx`).
        model_bytes: its contents.
        spm_model, tokenizer: the SentencePiece model's path, and it loaded.
        max_seq_length: the longest input the client packs and passes on.
        lower_case: whether the client lower-cases text.
        facts: the rest of `albert_export.json` (format, source, options, model config).
    """
    with staged_folder(output_dir, "albert-export", {"format": model_file}) as staging:
        with open(os.path.join(staging, model_file), "wb") as file:
            file.write(model_bytes)
        spm_name = os.path.basename(spm_model)
        shutil.copyfile(spm_model, os.path.join(staging, spm_name))
        shutil.copyfile(client.__file__, os.path.join(staging, CLIENT_FILE))
        everything = {**facts, "model_file": model_file, "sentencepiece_model": spm_name,
                      "max_seq_length": max_seq_length, "lower_case": lower_case,
                      "special_ids": {"pad": PAD_ID, "cls": CLS_ID, "sep": SEP_ID},
                      "digit_comma_pieces": {str(piece): tokenizer.split_digit_commas([piece])
                                             for piece in sorted(tokenizer.digit_comma_ids)}}
        with open(os.path.join(staging, client.METADATA_FILE), "w", encoding="utf-8") as file:
            json.dump(everything, file, indent=2)
            file.write("\n")
    return os.path.abspath(output_dir)
