"""Text classification and regression on raw text: `TextClassifier` and `TextRegressor`.

Both are `AlbertClassifier` (the pooled, or mean, sentence vector -> dropout -> dense) with a
`TextPreprocessor`; they take single texts or pairs (`[CLS] a [SEP] b [SEP]`).

    classifier = TextClassifier.from_checkpoint("runs/base", labels=["neg", "pos"])
    classifier.fit(["a fine film", "a dull one"], ["pos", "neg"], epochs=3)
    classifier.predict(["what a film"])["probabilities"]  # (1, 2)
    classifier.save("sentiment.keras")
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import tensorflow as tf
import tf_keras

from albert_tf.models.task_models import AlbertClassifier
from albert_tf.text_models.starts import StartMixin
from albert_tf.text_models.task import TextTask

TEXT, TEXT_PAIR = "text", "text_pair"


class SentenceTextTask(StartMixin, TextTask):
    """Texts or pairs in, one example per row: what the classifier and regressor share.

    `x` is a list (or array, or tensor) of texts; a tuple `(texts, text_pairs)` of two such
    lists for pairs; or a dict with `text` (and `text_pair`). A dataset yields the same
    forms as its `x` (a dict for unlabelled pairs, since a 2-tuple element is `(x, y)`).
    """

    text_columns = (TEXT, TEXT_PAIR)

    def to_columns(self, x) -> dict[str, Any]:
        if isinstance(x, dict):
            unknown = sorted(set(x) - {TEXT, TEXT_PAIR})
            if TEXT not in x or unknown:
                raise ValueError(f"a dict of texts needs {TEXT!r} (and may have "
                                 f"{TEXT_PAIR!r}); got keys {sorted(x)}")
            return dict(x)
        if isinstance(x, tuple):
            if len(x) != 2:
                raise ValueError(f"a tuple of texts must be (texts, text_pairs); got "
                                 f"{len(x)} parts")
            return {TEXT: x[0], TEXT_PAIR: x[1]}
        if isinstance(x, (str, bytes)):
            raise ValueError("x must be a list of texts, not one string: wrap it, [text]")
        return {TEXT: x}

    def features(self, batch):
        segments = [batch[TEXT]] + ([batch[TEXT_PAIR]] if TEXT_PAIR in batch else [])
        packed = self.preprocessor(segments)
        return {**packed, **{name: value for name, value in batch.items()
                             if name not in self.text_columns}}


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class TextClassifier(SentenceTextTask, AlbertClassifier):
    """Classifies texts (or text pairs) into `num_classes` classes.

    Args:
        encoder: an `AlbertEncoder` (e.g. a pretrained one) or an `AlbertConfig`.
        num_classes: how many classes (2 or more); defaults to `len(labels)`.
        preprocessor: the `TextPreprocessor` of the encoder's SentencePiece model.
        labels: the class names, in class-index order (optional): `fit` then takes names as
            labels as well as indices, and `albert-predict` writes names.
        dropout_rate: dropout on the sentence vector (0.1 in the original).
        pooling: `cls` (the pooled output, the original's) or `mean`.

    Use `TextClassifier.from_checkpoint(path, num_classes=...)` to start from a checkpoint.

    `fit(x, y)`: `x` as `SentenceTextTask` says, `y` class indices or names. `predict(x)`:
    `{"logits": (batch_size, num_classes), "probabilities": (batch_size, num_classes)}`.
    """

    def __init__(self, encoder, num_classes: int | None = None, preprocessor=None,
                 labels: Sequence[str] | None = None, dropout_rate: float = 0.1,
                 pooling: str = "cls", **kwargs):
        labels = None if labels is None else tuple(str(label) for label in labels)
        if num_classes is None and labels is not None:
            num_classes = len(labels)
        if num_classes is None or num_classes < 2:
            raise ValueError(f"num_classes must be at least 2 (a regression is a "
                             f"TextRegressor), got {num_classes}")
        if labels is not None and (len(labels) != num_classes or len(set(labels)) != len(labels)):
            raise ValueError(f"labels must be {num_classes} distinct names, got {list(labels)}")
        kwargs.setdefault("name", "text_classifier")
        super().__init__(encoder, num_classes, dropout_rate, pooling, **kwargs)
        self.labels = labels
        self.task_outputs = ("logits", "probabilities")
        self.set_preprocessor(preprocessor)

    def to_labels(self, y) -> dict[str, np.ndarray]:
        return {"label": class_indices(y, self.num_classes, self.labels)}

    def graph_labels(self, y) -> dict[str, tf.Tensor]:
        if y.dtype == tf.string:
            if self.labels is None:
                raise ValueError("string labels need the classifier's label names "
                                 "(labels=[...]); or give class indices")
            table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
                tf.constant(self.labels), tf.range(len(self.labels), dtype=tf.int32)), -1)
            y = table.lookup(y)
        y = tf.cast(y, tf.int32)
        checks = [tf.debugging.assert_non_negative(y, message="a label is not one of the "
                                                   "classifier's labels"),
                  tf.debugging.assert_less(y, self.num_classes, message="a class index is "
                                           "not below num_classes")]
        with tf.control_dependencies(checks):
            return {"label": tf.identity(y)}

    def get_config(self):
        return {**super().get_config(), "labels": None if self.labels is None
                else list(self.labels)}


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class TextRegressor(SentenceTextTask, AlbertClassifier):
    """Predicts one number per text (or pair), trained with mean squared error (STS-B).

    Args: as `TextClassifier`'s, without `num_classes` and `labels`.

    `fit(x, y)`: `y` numbers. `predict(x)`: `{"predictions": (batch_size,)}`.
    """

    def __init__(self, encoder, preprocessor=None, dropout_rate: float = 0.1,
                 pooling: str = "cls", **kwargs):
        kwargs.setdefault("name", "text_regressor")
        kwargs.pop("num_classes", None)  # AlbertClassifier's config has it; always 1 here
        super().__init__(encoder, 1, dropout_rate, pooling, **kwargs)
        self.set_preprocessor(preprocessor)

    def to_labels(self, y) -> dict[str, np.ndarray]:
        try:
            values = np.asarray(y, np.float32)
        except (TypeError, ValueError) as error:
            raise ValueError(f"regression labels must be numbers ({error})") from None
        if values.ndim != 1 or not np.all(np.isfinite(values)):
            raise ValueError("regression labels must be one finite number per row")
        return {"label": values}

    def graph_labels(self, y) -> dict[str, tf.Tensor]:
        return {"label": tf.cast(y, tf.float32)}


def class_indices(y, num_classes: int, labels: Sequence[str] | None) -> np.ndarray:
    """int32 class indices from indices or label names; a ValueError names the first row
    whose label is not a class."""
    values = np.asarray(y)
    if values.ndim != 1:
        raise ValueError(f"labels must be one per row, got shape {values.shape}")
    if values.dtype.kind in "UOS":
        if labels is None:
            raise ValueError("string labels need the classifier's label names (labels=[...]); "
                             "or give class indices")
        index = {name: position for position, name in enumerate(labels)}
        for row, value in enumerate(values.tolist()):
            if str(value) not in index:
                raise ValueError(f"label {value!r} of row {row} is not one of "
                                 f"{list(labels)}")
        return np.array([index[str(value)] for value in values.tolist()], np.int32)
    if values.dtype.kind not in "iu":
        raise ValueError(f"class labels must be integer indices or names, got "
                         f"{values.dtype} values")
    wrong = np.flatnonzero((values < 0) | (values >= num_classes))
    if wrong.size:
        raise ValueError(f"label {values[wrong[0]]} of row {wrong[0]} is not a class index "
                         f"in [0, {num_classes})")
    return values.astype(np.int32)
