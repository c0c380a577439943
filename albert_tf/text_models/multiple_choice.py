"""`TextMultipleChoice`: which of a question's options is right, from raw text (RACE).

Each option is packed with its context as the original RACE recipe does
(`albert_tf.preprocessing.choices`): `[CLS] context [SEP] question+option [SEP]`, where
a cloze question (one holding "_") gets the option in place of every "_" and any other
question is followed by a space and the option; the question+option keeps its last
`max_qa_length` pieces, and the pair is then truncated as the original did.

    chooser = TextMultipleChoice.from_checkpoint("runs/base", num_choices=4)
    chooser.fit((contexts, questions, options), answers)  # options: (rows, 4) strings
    chooser.predict((contexts, questions, options))["choice_logits"]  # (rows, 4)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf
import tf_keras

from albert_tf.models.encoder import INPUT_NAMES
from albert_tf.models.task_models import AlbertMultipleChoice
from albert_tf.preprocessing.choices import pack_option_rows
from albert_tf.text_models.classifier import class_indices
from albert_tf.text_models.starts import StartMixin
from albert_tf.text_models.task import TextTask

COLUMNS = ("context", "question", "options")


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class TextMultipleChoice(StartMixin, TextTask, AlbertMultipleChoice):
    """Scores each option of a question with its context; soft-maxes across the options.

    Args:
        encoder: an `AlbertEncoder` or an `AlbertConfig`.
        num_choices: options per question (4 in RACE).
        preprocessor: the `TextPreprocessor` of the encoder's SentencePiece model.
        max_qa_length: pieces of question+option kept (the last ones; 128 in RACE).
        dropout_rate, pooling: as `AlbertMultipleChoice`'s.

    `x`: a tuple `(contexts, questions, options)` or a dict with those three keys
    (`context`, `question`, `options`); `options` holds `num_choices` strings per row.
    `y`: the right option's index. `predict(x)`: `{"choice_logits": (batch_size,
    num_choices)}`.
    """

    text_columns = COLUMNS

    def __init__(self, encoder, num_choices: int = 4, preprocessor=None,
                 max_qa_length: int = 128, dropout_rate: float = 0.1, pooling: str = "cls",
                 **kwargs):
        kwargs.setdefault("name", "text_multiple_choice")
        super().__init__(encoder, num_choices, dropout_rate, pooling, **kwargs)
        self.max_qa_length = max_qa_length
        self.set_preprocessor(preprocessor)

    def to_columns(self, x) -> dict[str, Any]:
        if isinstance(x, dict):
            missing = [name for name in COLUMNS if name not in x]
            if missing:
                raise ValueError(f"a dict of multiple-choice inputs needs {list(COLUMNS)}; "
                                 f"missing {missing}")
            columns = {name: x[name] for name in COLUMNS}
        elif isinstance(x, tuple) and len(x) == 3:
            columns = dict(zip(COLUMNS, x))
        else:
            raise ValueError("x must be (contexts, questions, options) or a dict with "
                             "context, question and options")
        options = columns["options"]
        if not isinstance(options, tf.Tensor):
            widths = {len(row) for row in options}
            if widths - {self.num_choices}:
                raise ValueError(f"every row needs {self.num_choices} options; found rows "
                                 f"with {sorted(widths - {self.num_choices})}")
        return columns

    def to_labels(self, y) -> dict[str, np.ndarray]:
        return {"label": class_indices(y, self.num_choices, None)}

    def graph_labels(self, y) -> dict[str, tf.Tensor]:
        return {"label": tf.cast(y, tf.int32)}

    def features(self, batch):
        packed = pack_option_rows(
            self.preprocessor.tokenize, self.preprocessor.packer,
            tf.repeat(batch["context"], self.num_choices),
            tf.repeat(batch["question"], self.num_choices),
            tf.reshape(batch["options"], [-1]),  # (batch * choices,), row by row
            self.max_qa_length)
        length = tf.shape(packed["input_word_ids"])[-1]
        features = {name: tf.reshape(packed[name], [-1, self.num_choices, length])
                    for name in INPUT_NAMES}
        if "label" in batch:
            features["label"] = batch["label"]
        return features

    def dummy_features(self):
        return {name: np.zeros((1, self.num_choices, 2), np.int32) for name in INPUT_NAMES}

    def get_config(self):
        return {**super().get_config(), "max_qa_length": self.max_qa_length}
