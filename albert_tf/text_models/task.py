"""`TextTask`: what a raw-text task model adds to a task model that takes ids.

A raw-text model is one of the fine-tuning task models (`albert_tf.models.task_models`: the
encoder, the head, the loss, the shared training step) with a `TextPreprocessor` beside it.
Its `fit`, `evaluate` and `predict` take texts (Python lists, numpy arrays or a
`tf.data.Dataset`), turn them into batches of ids in the `tf.data` pipeline with that
preprocessor, and hand the batches to Keras. The model function itself still takes ids, so
it XLA-compiles and distributes as the ids model does; the text ops run on the host, in the
pipeline, as they do in the exported SavedModel (the same layers).

A subclass sets `text_columns` (the names of its text inputs) and implements
`to_columns(x)` (the user's texts as named columns), `to_labels(y)` (Python labels as named
numpy columns), `graph_labels(y)` (a dataset's labels as named tensors) and `features(batch)`
(a batch of columns -> the ids model's features, in the graph).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import tensorflow as tf
import tf_keras

from albert_tf.loop.optimization import AdamWeightDecay
from albert_tf.models.encoder import INPUT_NAMES
from albert_tf.preprocessing.text_preprocessor import TextPreprocessor
from albert_tf.text_models.inputs import text_batches

DEFAULT_LEARNING_RATE = 5e-5


def default_optimizer() -> AdamWeightDecay:
    """What `compile()` uses when given no optimizer: AdamW as fine-tuning uses it (weight
    decay 0.01 but on LayerNorm and biases, gradients clipped at global norm 1.0) with Adam's
    bias correction, at a constant 5e-5 (keras-hub's default rate)."""
    return AdamWeightDecay(DEFAULT_LEARNING_RATE, bias_correction=True, global_clipnorm=1.0)


class TextTask:
    """The raw-text half of a task model (see the module docstring); mixed in before the ids
    task model class, e.g. `class TextClassifier(TextTask, AlbertClassifier)`."""

    text_columns: tuple[str, ...] = ()

    def set_preprocessor(self, preprocessor: TextPreprocessor | Mapping[str, Any]) -> None:
        if isinstance(preprocessor, Mapping):  # from a saved config
            preprocessor = tf_keras.saving.deserialize_keras_object(dict(preprocessor))
        if not isinstance(preprocessor, TextPreprocessor):
            raise TypeError(f"preprocessor must be a TextPreprocessor, got "
                            f"{type(preprocessor).__name__}")
        tokenizer = preprocessor.tokenizer
        if tokenizer is not None and tokenizer.vocab_size != self.config.vocab_size:
            raise ValueError(f"the SentencePiece model has {tokenizer.vocab_size} pieces but "
                             f"the encoder's vocab_size is {self.config.vocab_size}; give the "
                             f"tokenizer the weights were trained with")
        if preprocessor.max_seq_length > self.config.max_position_embeddings:
            raise ValueError(f"max_seq_length {preprocessor.max_seq_length} exceeds the "
                             f"encoder's max_position_embeddings "
                             f"{self.config.max_position_embeddings}")
        self.preprocessor = preprocessor

    # -- what a subclass defines

    def to_columns(self, x) -> dict[str, Any]:
        raise NotImplementedError

    def to_labels(self, y) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def graph_labels(self, y) -> dict[str, tf.Tensor]:
        raise NotImplementedError

    def features(self, batch: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        raise NotImplementedError

    def dummy_features(self) -> dict[str, np.ndarray]:
        """One short row of ids, to build the weights before a saved model's are read."""
        return {name: np.zeros((1, 2), np.int32) for name in INPUT_NAMES}

    # -- Keras

    def text_dataset(self, x, y=None, batch_size: int | None = None,
                     shuffle: bool = False) -> tf.data.Dataset:
        """The batches of features `fit`, `evaluate` and `predict` run on. A dataset of
        features already (ids; what Keras's `fit` hands its own `evaluate`) passes as it is."""
        if _holds_features(x):
            return x
        return text_batches(x, y, batch_size, shuffle, self.to_columns, self.to_labels,
                            self.graph_labels, self.features)

    def compile(self, optimizer=None, **kwargs):
        """As Keras's, with `default_optimizer()` when no optimizer is given. The loss and
        metrics are the task's own (`loss_and_statistics`)."""
        super().compile(optimizer=optimizer or default_optimizer(), **kwargs)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, validation_data=None,
            shuffle=True, **kwargs):
        """Keras's `fit` on texts; `validation_data` is `(x, y)` or a dataset, as `x` and
        `y` are. Compiles with the default optimizer first if `compile` was not called."""
        _refuse(kwargs, ("validation_split", "sample_weight", "class_weight"))
        if not self._is_compiled:
            self.compile()
        train = self.text_dataset(x, y, batch_size, shuffle)
        validation = None
        if validation_data is not None:
            validation = self.text_dataset(*_x_and_y(validation_data), batch_size)
        return super().fit(train, epochs=epochs, validation_data=validation, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
        """Keras's `evaluate` on texts: the loss and the task's metrics."""
        _refuse(kwargs, ("sample_weight",))
        if not self._is_compiled:
            self.compile()
        return super().evaluate(self.text_dataset(x, y, batch_size), **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        """The task outputs (`task_outputs`) for texts, as numpy arrays, in input order."""
        return super().predict(self.text_dataset(x, None, batch_size), **kwargs)

    # -- saving

    def get_config(self):
        return {**super().get_config(),
                "preprocessor": tf_keras.saving.serialize_keras_object(self.preprocessor)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        return cls(config.pop("config"), **config)  # the encoder's config comes first

    def get_build_config(self):
        return {"built_on_dummy_ids": True}

    def build_from_config(self, config):
        """Builds every weight with one dummy row, so a saved model's weights can be read."""
        self(self.dummy_features(), training=False)


def _refuse(arguments: Mapping[str, Any], names: tuple[str, ...]) -> None:
    for name in names:
        if arguments.get(name) is not None:
            raise ValueError(f"{name} is not supported with raw texts; give validation_data, "
                             f"or weigh the rows by repeating them")


def _holds_features(x) -> bool:
    spec = x.element_spec if isinstance(x, tf.data.Dataset) else None
    return isinstance(spec, Mapping) and all(name in spec for name in INPUT_NAMES)


def _x_and_y(data) -> tuple[Any, Any]:
    """`validation_data` as (x, y): a dataset carries its own labels."""
    if isinstance(data, tf.data.Dataset):
        return data, None
    if not (isinstance(data, tuple) and len(data) == 2):
        raise ValueError("validation_data must be (x, y) or a tf.data.Dataset of (x, y)")
    return data
