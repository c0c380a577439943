"""`TextSpanExtractor`: the answer to a question, cut from its context (SQuAD), from raw text.

Unlike the other raw-text models, its texts are prepared in Python, by the code
`albert-finetune`'s SQuAD task uses (`albert_tf.task_data.squad`): a context longer than one
row is read in windows sliding by `doc_stride`, and every piece keeps the span of original
characters it came from, so an answer comes back exactly as the context spells it (the
in-graph tokenizer has no offsets to map pieces back through the normalization). The ids are
the in-graph tokenizer's: the Python tokenizer gives the same ones (the tests of
`albert_tf.preprocessing` pin this) and is built from the same SentencePiece bytes.

    extractor = TextSpanExtractor.from_checkpoint("runs/base")
    extractor.fit((questions, contexts), answers)  # answer texts (or (text, start) pairs)
    extractor.predict((["Who wrote it?"], ["It was written by Tom."]))["answer"]  # ["Tom"]
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np
import tensorflow as tf
import tf_keras

from albert_tf.finetuning.datasets import trim_to_longest
from albert_tf.models.encoder import INPUT_NAMES
from albert_tf.models.task_models import AlbertSpanLabeler
from albert_tf.task_data import squad, squad_postprocess
from albert_tf.task_data.examples import SquadExample
from albert_tf.text_models.inputs import DEFAULT_BATCH_SIZE
from albert_tf.text_models.starts import StartMixin
from albert_tf.text_models.task import TextTask
from albert_tf.tokenization import AlbertTokenizer

POSITIONS = ("start_position", "end_position")


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class TextSpanExtractor(StartMixin, TextTask, AlbertSpanLabeler):
    """Start and end logits over the context's pieces; the best span is the answer.

    Args:
        encoder: an `AlbertEncoder` or an `AlbertConfig`.
        preprocessor: the `TextPreprocessor` of the encoder's SentencePiece model (its
            `max_seq_length` is the window's row length).
        doc_stride: context pieces between the starts of consecutive windows.
        max_query_length: question pieces kept.
        max_answer_length: longest answer, in pieces.
        n_best_size: candidate starts and ends per window.
        allow_no_answer: SQuAD 2.0 with BERT's rule: a question may have no answer (trained
            to point at [CLS]); "" is predicted when the [CLS] span beats the best one by
            more than `null_score_threshold`.

    `x`: a tuple `(questions, contexts)` or a dict with `question` and `context`. `y`: per
    row the answer's text (found at its first place in the context), a `(text, start
    character)` pair, or None / "" for no answer (with `allow_no_answer`). `predict(x)`:
    `{"answer": (rows,) strings, "probability": (rows,)}`, the probability among the n-best
    candidates. Python sequences only (no `tf.data.Dataset`: windows are made in Python).
    """

    text_columns = ("question", "context")

    def __init__(self, encoder, preprocessor=None, doc_stride: int = 128,
                 max_query_length: int = 64, max_answer_length: int = 30,
                 n_best_size: int = 20, allow_no_answer: bool = False,
                 null_score_threshold: float = 0.0, **kwargs):
        kwargs.setdefault("name", "text_span_extractor")
        super().__init__(encoder, **kwargs)
        self.doc_stride, self.max_query_length = doc_stride, max_query_length
        self.max_answer_length, self.n_best_size = max_answer_length, n_best_size
        self.allow_no_answer, self.null_score_threshold = allow_no_answer, null_score_threshold
        self.set_preprocessor(preprocessor)

    @functools.cached_property
    def python_tokenizer(self) -> AlbertTokenizer:
        """The tokenizer of the preprocessor's SentencePiece bytes, with offsets."""
        return AlbertTokenizer(self.preprocessor.proto, self.preprocessor.lower_case)

    def examples(self, x, y=None) -> list[SquadExample]:
        """The rows of `x` (and answers `y`) as SQuAD examples."""
        columns = x if isinstance(x, dict) else dict(zip(self.text_columns, x)) \
            if isinstance(x, tuple) and len(x) == 2 else None
        if columns is None or any(name not in columns for name in self.text_columns):
            raise ValueError("x must be (questions, contexts) or a dict with question and "
                             "context")
        questions, contexts = (list(columns[name]) for name in self.text_columns)
        if len(questions) != len(contexts) or (y is not None and len(y) != len(questions)):
            raise ValueError(f"{len(questions)} questions, {len(contexts)} contexts"
                             + ("" if y is None else f" and {len(y)} answers"))
        answers = [None] * len(questions) if y is None else list(y)
        return [self._example(row, question, context, answer, labelled=y is not None)
                for row, (question, context, answer)
                in enumerate(zip(questions, contexts, answers))]

    def _example(self, row: int, question: str, context: str, answer, labelled: bool):
        if not labelled:
            return SquadExample(str(row), question, context)
        if answer is None or answer == "":
            if not self.allow_no_answer:
                raise ValueError(f"row {row} has no answer; a question without one needs "
                                 f"allow_no_answer=True")
            return SquadExample(str(row), question, context, is_impossible=True)
        text, start = (answer, context.find(answer)) if isinstance(answer, str) else answer
        if start < 0 or context[start:start + len(text)] != text:
            raise ValueError(f"row {row}: the answer {text!r} is not in its context"
                             + ("" if isinstance(answer, str) else f" at character {start}"))
        return SquadExample(str(row), question, context, answers=((text, int(start)),))

    def windows(self, examples: Sequence[SquadExample], is_training: bool) -> dict[str, Any]:
        """The window rows of `examples` (`squad.convert_examples`)."""
        return squad.convert_examples(examples, self.python_tokenizer,
                                      self.preprocessor.max_seq_length, self.doc_stride,
                                      self.max_query_length, is_training)

    def text_dataset(self, x, y=None, batch_size=None, shuffle=False) -> tf.data.Dataset:
        if isinstance(x, tf.data.Dataset):
            if all(name in x.element_spec for name in INPUT_NAMES):
                return x  # features already (Keras's fit hands them to evaluate)
            raise ValueError("TextSpanExtractor takes Python sequences of texts, not a "
                             "tf.data.Dataset: its windows and offsets are made in Python")
        windows = self.windows(self.examples(x, y), is_training=y is not None)
        names = INPUT_NAMES + (POSITIONS if y is not None else ())
        dataset = tf.data.Dataset.from_tensor_slices({name: windows[name] for name in names})
        if shuffle:
            dataset = dataset.shuffle(max(len(windows["input_mask"]), 1),
                                      reshuffle_each_iteration=True)
        dataset = dataset.batch(batch_size or DEFAULT_BATCH_SIZE)
        if y is not None:  # logits are per position: predictions keep the full width
            dataset = dataset.map(lambda batch: trim_to_longest(
                batch, self.preprocessor.pad_to_multiple_of))
        return dataset.prefetch(tf.data.AUTOTUNE)

    def predict(self, x, batch_size=None, **kwargs) -> dict[str, np.ndarray]:
        examples = self.examples(x)
        windows = self.windows(examples, is_training=False)
        dataset = tf.data.Dataset.from_tensor_slices(
            {name: windows[name] for name in INPUT_NAMES}).batch(
                batch_size or DEFAULT_BATCH_SIZE)
        outputs = tf_keras.Model.predict(self, dataset, **kwargs)
        found = squad_postprocess.predict_answers(
            examples, windows, outputs["start_logits"], outputs["end_logits"],
            self.n_best_size, self.max_answer_length, self.allow_no_answer,
            self.null_score_threshold)
        answers = [found.answers[example.qas_id] for example in examples]
        probabilities = [_probability(found.nbest[example.qas_id], answer)
                         for example, answer in zip(examples, answers)]
        return {"answer": np.array(answers, dtype=object),
                "probability": np.array(probabilities, np.float32)}

    def get_config(self):
        return {**super().get_config(), "doc_stride": self.doc_stride,
                "max_query_length": self.max_query_length,
                "max_answer_length": self.max_answer_length, "n_best_size": self.n_best_size,
                "allow_no_answer": self.allow_no_answer,
                "null_score_threshold": self.null_score_threshold}


def _probability(nbest: list[dict], answer: str) -> float:
    """The n-best probability of `answer` (0 when it is not among the candidates)."""
    return next((entry["probability"] for entry in nbest if entry["text"] == answer), 0.0)
