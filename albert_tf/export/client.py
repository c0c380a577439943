"""A small client for an ALBERT export that takes ids (LiteRT, ONNX): raw text -> ALBERT's
ids -> the model.

`albert-export --format tflite` and `--format onnx` write this file beside the model as
`albert_client.py`, with the SentencePiece model and `albert_export.json`. It needs only
`numpy`, `sentencepiece` and the model's runtime (LiteRT: `ai-edge-litert`, or TensorFlow's
`tf.lite`; ONNX: `onnxruntime`), not albert-tf or TensorFlow:

    from albert_client import AlbertClient

    model = AlbertClient("export/tiny_tflite")      # or an ONNX export folder
    outputs = model(["The cafe was open."])                     # single texts
    outputs = model(["a question"], text_pairs=["its passage"])  # pairs
    outputs["pooled_output"]                                     # (batch, hidden) float32
    ids = model.encode(["The cafe was open."])    # the ids alone, for another runtime

    chooser = AlbertClient("export/race_onnx")   # a fine-tuned multiple-choice model
    outputs = chooser.choose(["a passage"], ["Who was it?"], [["Tom", "Ann", "Bo", "Al"]])
    outputs["choice_logits"]                                     # (questions, options)

Why a client: these files take ids, not text. ALBERT's text normalization (NFKD with
combining marks dropped, lower-casing, whitespace and LaTeX-quote rules) runs on TensorFlow
string ops that LiteRT and ONNX have no kernels for, and tensorflow-text's LiteRT
SentencePiece kernel (`FastSentencepieceTokenize`) splits some texts differently from
SentencePiece itself. This client gives exactly the ids of albert-tf's Python tokenizer
(`albert_tf.tokenization`): the same normalization, SentencePiece, the original ALBERT
tokenizer's digit-comma rule ("1990," -> "1990" ","; the replacements are listed in
`albert_export.json`), and the original `run_classifier.py` packing and truncation; for a
multiple-choice model, `albert-finetune --task race`'s rows: the question+option text, cut to
its last `max_qa_length` pieces, then packed with the passage. On a device without Python,
do the same steps with SentencePiece's C++ library.
"""

from __future__ import annotations

import json
import os
import unicodedata
from typing import Sequence

import numpy as np
import sentencepiece

METADATA_FILE = "albert_export.json"
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def normalize(text: str, lower_case: bool) -> str:
    """ALBERT's normalization before SentencePiece: LaTeX quotes (two backquotes or two
    single quotes) become a double quote, NFKD with the combining marks dropped, lower-cased
    if asked, whitespace runs as single spaces, no space at either end."""
    text = text.replace("``", '"').replace("''", '"')
    decomposed = unicodedata.normalize("NFKD", text)
    text = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join((text.lower() if lower_case else text).split())


class AlbertClient:
    """The model of an `albert-export --format tflite|onnx` folder, with its tokenizer.

    Args:
        folder: the export folder (the model file, `albert_export.json`, the `.model`).
        num_threads: runtime threads (default: the runtime's choice).
    """

    def __init__(self, folder: str, num_threads: int | None = None):
        with open(os.path.join(folder, METADATA_FILE), encoding="utf-8") as file:
            self.facts = json.load(file)
        self.max_seq_length = int(self.facts["max_seq_length"])
        self.max_qa_length = self.facts.get("max_qa_length")  # multiple-choice models only
        self.lower_case = bool(self.facts["lower_case"])
        special = self.facts["special_ids"]
        self.cls_id, self.sep_id, self.pad_id = (special[name] for name in ("cls", "sep", "pad"))
        self.digit_comma = {int(piece): parts
                            for piece, parts in self.facts["digit_comma_pieces"].items()}
        self.sentencepiece = sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(folder, self.facts["sentencepiece_model"]))
        model_file = os.path.join(folder, self.facts["model_file"])
        self.runner = (_litert_runner if self.facts["format"] == "tflite" else _onnx_runner)(
            model_file, num_threads)

    def tokenize(self, text: str) -> list[int]:
        """SentencePiece ids of one text, without [CLS]/[SEP]."""
        ids = self.sentencepiece.encode(normalize(text, self.lower_case), out_type=int)
        return [part for piece in ids for part in self.digit_comma.get(piece, (piece,))]

    def encode(self, texts: Sequence[str],
               text_pairs: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """int32 `(batch, length)` model inputs: `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`,
        at most `max_seq_length` long (the longer segment loses its last piece first), padded
        to the batch's longest row. An empty pair text packs its row as a single text."""
        if text_pairs is not None and len(text_pairs) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(text_pairs)} text pairs")
        return self._pack([(self.tokenize(text),
                            self.tokenize(text_pairs[index]) if text_pairs is not None else [])
                           for index, text in enumerate(texts)])

    def encode_choices(self, contexts: Sequence[str], questions: Sequence[str],
                       options: Sequence[Sequence[str]]) -> dict[str, np.ndarray]:
        """A multiple-choice model's inputs: one row per question and option, in order
        (question 0's options first), `[CLS] context [SEP] question+option [SEP]`, where a
        cloze question (holding "_") gets the option in place of every "_" and any other is
        followed by a space and the option; the question+option keeps its last
        `max_qa_length` pieces, then the pair is truncated as `encode` truncates."""
        if self.max_qa_length is None:
            raise ValueError(f"{METADATA_FILE} records no max_qa_length: this export is not "
                             f"a multiple-choice model (or was made before exports recorded "
                             f"it); pack its rows with encode()")
        if not len(contexts) == len(questions) == len(options):
            raise ValueError(f"{len(contexts)} contexts, {len(questions)} questions and "
                             f"{len(options)} rows of options; expected one of each per row")
        rows = []
        for context, question, row_options in zip(contexts, questions, options):
            passage = self.tokenize(context)
            for option in row_options:
                text = (question.replace("_", option) if "_" in question
                        else f"{question} {option}")
                rows.append((list(passage), self.tokenize(text)[-int(self.max_qa_length):]))
        return self._pack(rows)

    def _pack(self, rows: Sequence[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
        """Truncates (the longer segment loses its last piece first) and pads pairs of
        piece ids; an empty second segment packs its row as a single text."""
        packed = []
        for first, second in rows:
            budget = self.max_seq_length - (3 if second else 2)
            while len(first) + len(second) > budget:
                (first if len(first) > len(second) else second).pop()
            segment_a = [self.cls_id, *first, self.sep_id]
            segment_b = [*second, self.sep_id] if second else []
            packed.append((segment_a + segment_b,
                           [0] * len(segment_a) + [1] * len(segment_b)))
        length = max([2] + [len(word_ids) for word_ids, _ in packed])
        inputs = {name: np.zeros((len(packed), length), np.int32) for name in INPUT_NAMES}
        inputs["input_word_ids"][:] = self.pad_id
        for row, (word_ids, type_ids) in enumerate(packed):
            inputs["input_word_ids"][row, :len(word_ids)] = word_ids
            inputs["input_mask"][row, :len(word_ids)] = 1
            inputs["input_type_ids"][row, :len(type_ids)] = type_ids
        return inputs

    def run_ids(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The model's outputs on id inputs of any batch size and length 1 to
        `max_seq_length` (int32 `(batch, length)` each)."""
        shapes = {np.shape(inputs[name]) for name in INPUT_NAMES}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise ValueError(f"the inputs {', '.join(INPUT_NAMES)} must share one shape "
                             f"(batch, length); got {sorted(shapes)}")
        _, length = next(iter(shapes))
        if not 1 <= length <= self.max_seq_length:
            # The interpreter's own error for a longer input names no length ("XNNPack
            # delegate failed to reshape runtime"), so the limit is checked here.
            raise ValueError(f"length {length} is outside 1..{self.max_seq_length}, the "
                             f"lengths this model was exported for (max_seq_length)")
        return self.runner(**{name: np.asarray(inputs[name], np.int32)
                              for name in INPUT_NAMES})

    def __call__(self, texts: Sequence[str],
                 text_pairs: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """The model's outputs for raw texts (and pairs), with the ids they were given."""
        inputs = self.encode(texts, text_pairs)
        return {**self.run_ids(inputs), **inputs}

    def choose(self, contexts: Sequence[str], questions: Sequence[str],
               options: Sequence[Sequence[str]]) -> dict[str, np.ndarray]:
        """A multiple-choice model's outputs on `encode_choices`' rows, with
        `choice_logits` `(questions, options)`: each row's `option_logits`, a question's
        options side by side (every question needs as many options)."""
        widths = {len(row) for row in options}
        if len(widths) > 1:
            raise ValueError(f"every question needs as many options; got {sorted(widths)}")
        inputs = self.encode_choices(contexts, questions, options)
        outputs = {**self.run_ids(inputs), **inputs}
        outputs["choice_logits"] = outputs["option_logits"].reshape(len(options), -1)
        return outputs


def _litert_runner(path: str, num_threads: int | None):
    """inputs by name -> outputs by name, through the LiteRT interpreter."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:  # TensorFlow's own copy of the interpreter
        from tensorflow.lite import Interpreter
    return Interpreter(model_path=path, num_threads=num_threads).get_signature_runner()


def _onnx_runner(path: str, num_threads: int | None):
    """inputs by name -> outputs by name, through onnxruntime."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if num_threads:
        options.intra_op_num_threads = num_threads
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return lambda **inputs: dict(zip(names, session.run(names, inputs)))
