"""Fine-tuning models: the ALBERT encoder with one task head, its loss and its metrics.

Every task model holds its encoder as `.encoder` and its call returns the encoder's outputs
(`sequence_output`, `pooled_output`) plus its own, so `albert_tf.export` serves it from raw
text. Losses are means over the global batch: each replica computes its share (its sum over
the all-reduced global batch size), as the pretrainer does, so the gradients summed over
replicas equal the single-device gradients.

    AlbertClassifier      GLUE classification (`num_classes` >= 2) and STS-B regression (1)
    AlbertSpanLabeler     SQuAD v1.1 / v2.0 (no answer = the [CLS] span, as in BERT)
    AlbertAnswerabilitySpanLabeler  SQuAD v2.0 as the original ALBERT (XLNet's head)
    AlbertMultipleChoice  RACE: one score per option, softmax across the options
"""

from __future__ import annotations

from typing import Any, Mapping

import tensorflow as tf
import tf_keras

from albert_tf.config import AlbertConfig
from albert_tf.layers.pooler import check_pooling, sentence_vector
from albert_tf.layers.task_heads import AnswerabilitySpanHead, ClassificationHead, SpanHead
from albert_tf.models.encoder import INPUT_NAMES, AlbertEncoder
from albert_tf.models.training_step import StepModel, correct_predictions, global_sum


def _sparse_cross_entropy(labels, logits):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.cast(tf.reshape(labels, [-1]), tf.int32), logits=logits)


def _correct(labels, logits):
    return correct_predictions(logits, tf.reshape(labels, [-1]))


class AlbertTaskModel(StepModel):
    """The part every task model shares: the encoder, and the loss as a mean over examples
    for the shared training and evaluation steps (`StepModel`).

    The first argument is the encoder: an `AlbertEncoder` object (as the Model Garden's
    `BertClassifier(network=...)` and keras-hub's `TextClassifier(backbone=...)` take one),
    or an `AlbertConfig` (or its mapping) to build a fresh one from.

    Subclasses pass the names of their metrics besides `loss`, set `task_outputs` (the
    outputs `predict` returns) and implement `call`, `per_example_loss(features, outputs)`
    -> `(batch_size,)` and `metric_values(features, outputs)` -> {metric name: per-example
    values}; `loss_outputs` (default: the call) gives the outputs the loss is computed on.
    """

    task_outputs: tuple[str, ...] = ()

    def __init__(self, config: AlbertEncoder | AlbertConfig | Mapping[str, Any],
                 metric_names: tuple[str, ...] = (), **kwargs):
        super().__init__(tuple(metric_names), **kwargs)
        if isinstance(config, AlbertEncoder):  # an encoder object, e.g. a pretrained one
            self.encoder, config = config, config.config
        else:
            if not isinstance(config, AlbertConfig):
                config = AlbertConfig.from_dict(config)
            self.encoder = AlbertEncoder(config)
        self.config = config

    @property
    def metric_fractions(self):
        """Every metric is a mean over examples."""
        return {name: (name, "examples") for name in self._trackers if name != "loss"}

    def encode(self, inputs, training=None) -> dict[str, tf.Tensor]:
        return self.encoder({name: inputs[name] for name in INPUT_NAMES}, training=training)

    def per_example_loss(self, features, outputs) -> tf.Tensor:
        raise NotImplementedError

    def metric_values(self, features, outputs) -> dict[str, tf.Tensor]:
        raise NotImplementedError

    def loss_outputs(self, features, training):
        """The outputs the loss and metrics are computed on."""
        return self(features, training=training)

    def loss_denominators(self, features) -> dict[str, tf.Tensor]:
        """The examples in the step's batch over all replicas."""
        first = tf.nest.flatten({name: features[name] for name in INPUT_NAMES})[0]
        return {"examples": global_sum(tf.cast(tf.shape(first)[0], tf.float32))}

    def compute_task_loss(self, features, outputs, denominators=None) -> tf.Tensor:
        """This replica's share of the mean loss over the global batch."""
        denominators = denominators or self.loss_denominators(features)
        return tf.reduce_sum(self.per_example_loss(features, outputs)) / denominators["examples"]

    def loss_and_statistics(self, features, denominators, training):
        outputs = self.loss_outputs(features, training)
        per_example = self.per_example_loss(features, outputs)
        sums = {name: tf.reduce_sum(values)
                for name, values in self.metric_values(features, outputs).items()}
        sums["examples"] = tf.cast(tf.shape(per_example)[0], tf.float32)
        return tf.reduce_sum(per_example) / denominators["examples"], sums

    def predict_step(self, features):
        """Only the task outputs: the encoder's `(batch, seq, H)` outputs would dwarf them."""
        outputs = self(features, training=False)
        return {name: outputs[name] for name in self.task_outputs}

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


class SentenceTaskModel(AlbertTaskModel):
    """A task model whose head reads one vector per sequence: the pooled [CLS] output
    (`pooling="cls"`, the original's) or the mean of the sequence output over the real
    pieces (`"mean"`, `albert_tf.layers.pooler.masked_mean`)."""

    def __init__(self, config, metric_names: tuple[str, ...] = (), pooling: str = "cls",
                 **kwargs):
        super().__init__(config, metric_names, **kwargs)
        self.pooling = check_pooling(pooling)

    def sentence(self, encoded, inputs) -> tf.Tensor:
        """`(batch_size, hidden_size)`: the vector the head reads."""
        return sentence_vector(encoded, inputs["input_mask"], self.pooling)

    def get_config(self):
        return {**super().get_config(), "pooling": self.pooling}


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertClassifier(SentenceTaskModel):
    """Sentence (pair) classification or regression on the pooled output.

    Args:
        config: an `AlbertConfig` (or a mapping of its fields).
        num_classes: int; 1 makes it a regression model (STS-B) trained with mean squared
            error.
        dropout_rate: float, dropout on the pooled output (0.1 in the original).
        pooling: `cls` (the pooled output, the original's) or `mean` (the sequence output
            averaged over the real pieces).

    Inputs: the encoder inputs, int `(batch_size, seq_length)`; training and evaluation also
    read `label`: int `(batch_size,)` (a class index) or float for regression.

    Outputs: the encoder's, plus float32 `logits` and `probabilities`
    `(batch_size, num_classes)`, or `predictions` `(batch_size,)` for regression.

    Metrics: `loss`, and `accuracy` for classification.
    """

    def __init__(self, config, num_classes: int, dropout_rate: float = 0.1,
                 pooling: str = "cls", **kwargs):
        kwargs.setdefault("name", "albert_classifier")
        super().__init__(config, () if num_classes == 1 else ("accuracy",), pooling, **kwargs)
        self.num_classes = num_classes
        self.dropout_rate = dropout_rate
        self.is_regression = num_classes == 1
        self.task_outputs = ("predictions",) if self.is_regression else ("logits",)
        self.head = ClassificationHead(num_classes, dropout_rate, self.config.initializer_range,
                                       name="classifier")

    def call(self, inputs, training=None):
        encoded = self.encode(inputs, training)
        logits = self.head(self.sentence(encoded, inputs), training=training)
        if self.is_regression:
            return {**encoded, "predictions": logits[:, 0]}
        return {**encoded, "logits": logits, "probabilities": tf.nn.softmax(logits, -1)}

    def per_example_loss(self, features, outputs):
        if self.is_regression:
            labels = tf.cast(tf.reshape(features["label"], [-1]), tf.float32)
            return tf.square(outputs["predictions"] - labels)
        return _sparse_cross_entropy(features["label"], outputs["logits"])

    def metric_values(self, features, outputs):
        if self.is_regression:
            return {}
        return {"accuracy": _correct(features["label"], outputs["logits"])}

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "dropout_rate": self.dropout_rate}


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertSpanLabeler(AlbertTaskModel):
    """Extractive question answering (SQuAD): start and end logits at every position.

    For SQuAD v2.0 this is BERT's "no answer" rule (Devlin et al., 2019): unanswerable
    questions are trained to point at the [CLS] position, and at inference the [CLS] span's
    score competes with the best real span (`albert_tf.task_data.squad_postprocess`). The
    original ALBERT's v2.0 model is `AlbertAnswerabilitySpanLabeler`.

    Args:
        config: an `AlbertConfig` (or a mapping of its fields).

    Inputs: the encoder inputs `(batch_size, seq_length)`; training and evaluation also read
    `start_position`, `end_position` int `(batch_size,)`.

    Outputs: the encoder's, plus float32 `start_logits`, `end_logits` `(batch_size,
    seq_length)`.

    Metrics: `loss` ((start + end cross-entropy) / 2), `start_accuracy`, `end_accuracy`.
    """

    task_outputs = ("start_logits", "end_logits")

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "albert_span_labeler")
        super().__init__(config, ("start_accuracy", "end_accuracy"), **kwargs)
        self.head = SpanHead(self.config.initializer_range, name="span")

    def call(self, inputs, training=None):
        encoded = self.encode(inputs, training)
        start_logits, end_logits = self.head(encoded["sequence_output"])
        return {**encoded, "start_logits": start_logits, "end_logits": end_logits}

    def per_example_loss(self, features, outputs):
        return 0.5 * (_sparse_cross_entropy(features["start_position"], outputs["start_logits"])
                      + _sparse_cross_entropy(features["end_position"], outputs["end_logits"]))

    def metric_values(self, features, outputs):
        return {"start_accuracy": _correct(features["start_position"], outputs["start_logits"]),
                "end_accuracy": _correct(features["end_position"], outputs["end_logits"])}


def answer_mask(input_mask: tf.Tensor, input_type_ids: tf.Tensor) -> tf.Tensor:
    """float `(batch, seq)`: 1 where an answer cannot start or end in a
    `[CLS] question [SEP] context [SEP]` row (the question, both [SEP]s, padding), 0 at the
    context and at [CLS] (the no-answer position), as the original's `p_mask`."""
    length = tf.shape(input_mask)[1]
    last = tf.reduce_sum(tf.cast(input_mask, tf.int32), 1, keepdims=True) - 1  # final [SEP]
    positions = tf.range(length)[None]
    context = ((tf.cast(input_type_ids, tf.int32) == 1) & (tf.cast(input_mask, tf.int32) == 1)
               & (positions != last))
    return 1.0 - tf.cast(context | (positions == 0), tf.float32)


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertAnswerabilitySpanLabeler(AlbertTaskModel):
    """SQuAD 2.0 as the original ALBERT's `run_squad_v2.py` trains it: XLNet's head
    (`AnswerabilitySpanHead`: start, end conditioned on the start, an answerability logit).

    Args:
        config: an `AlbertConfig` (or a mapping of its fields).
        start_n_top, end_n_top: the inference beam (5 and 5 in the original).
        dropout_rate: dropout in the answerability branch (0.1).

    Inputs: the encoder inputs `(batch_size, seq_length)` of `[CLS] question [SEP] context
    [SEP]` rows; training and evaluation also read `start_position`, `end_position` int
    `(batch_size,)` (0, the [CLS] position, for a window without the answer).

    Outputs: the encoder's, plus, in training, `start_log_probs`, `end_log_probs`, and at
    inference `start_top_log_probs`, `start_top_index`, `end_top_log_probs`,
    `end_top_index`; always `cls_logits` `(batch_size,)`, the logit of "no answer"
    (`albert_tf.task_data.squad_postprocess.predict_answers_with_answerability` reads them).

    Loss, as the original's: (start NLL + end NLL) / 2 + (sigmoid cross-entropy of
    `cls_logits` against "the window has no answer") / 2, the end conditioned on the true
    start. Metrics: `loss`, `start_accuracy`, `end_accuracy`, `answerable_accuracy`.
    """

    task_outputs = ("start_top_log_probs", "start_top_index", "end_top_log_probs",
                    "end_top_index", "cls_logits")

    def __init__(self, config, start_n_top: int = 5, end_n_top: int = 5,
                 dropout_rate: float = 0.1, **kwargs):
        kwargs.setdefault("name", "albert_answerability_span_labeler")
        super().__init__(config, ("start_accuracy", "end_accuracy", "answerable_accuracy"),
                         **kwargs)
        self.start_n_top, self.end_n_top, self.dropout_rate = start_n_top, end_n_top, dropout_rate
        self.head = AnswerabilitySpanHead(
            self.config.hidden_size, start_n_top, end_n_top, dropout_rate,
            self.config.initializer_range, name="squad_v2")

    def call(self, inputs, training=None):
        """Conditioned on the true start while training, on the beam otherwise."""
        return self._outputs(inputs, training, conditioned=bool(training))

    def _outputs(self, inputs, training, conditioned: bool):
        encoded = self.encode(inputs, training)
        p_mask = answer_mask(inputs["input_mask"], inputs["input_type_ids"])
        starts = inputs["start_position"] if conditioned else None
        return {**encoded, **self.head(encoded["sequence_output"], p_mask, starts,
                                       training=training)}

    def loss_outputs(self, features, training):
        """The training objective, in evaluation too: the end conditioned on the true start."""
        return self._outputs(features, training, conditioned=True)

    def per_example_loss(self, features, outputs):
        start, end = _positions(features["start_position"]), _positions(features["end_position"])
        span = -0.5 * (tf.gather(outputs["start_log_probs"], start[:, None], batch_dims=1)[:, 0]
                       + tf.gather(outputs["end_log_probs"], end[:, None], batch_dims=1)[:, 0])
        no_answer = tf.cast(tf.equal(start, 0), tf.float32)
        return span + 0.5 * tf.nn.sigmoid_cross_entropy_with_logits(
            labels=no_answer, logits=outputs["cls_logits"])

    def metric_values(self, features, outputs):
        start = _positions(features["start_position"])
        no_answer = tf.equal(start, 0)
        return {"start_accuracy": _correct(start, outputs["start_log_probs"]),
                "end_accuracy": _correct(features["end_position"], outputs["end_log_probs"]),
                "answerable_accuracy": tf.cast(
                    tf.equal(outputs["cls_logits"] > 0, no_answer), tf.float32)}

    def get_config(self):
        return {**super().get_config(), "start_n_top": self.start_n_top,
                "end_n_top": self.end_n_top, "dropout_rate": self.dropout_rate}


def _positions(values: tf.Tensor) -> tf.Tensor:
    return tf.cast(tf.reshape(values, [-1]), tf.int32)


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertMultipleChoice(SentenceTaskModel):
    """Multiple choice (RACE): each option is encoded with its passage, scored by a dense
    layer on its pooled output, and the scores are soft-maxed across the options.

    Args:
        config: an `AlbertConfig` (or a mapping of its fields).
        num_choices: options per question (4 in RACE).
        dropout_rate: float, dropout on the pooled output.
        pooling: `cls` or `mean`, as `AlbertClassifier`'s.

    Inputs: the encoder inputs as int `(batch_size, num_choices, seq_length)` (each option's
    `[CLS] passage [SEP] question+option [SEP]`); training and evaluation also read `label`,
    the correct option's index `(batch_size,)`. Inputs of rank 2 `(batch_size, seq_length)`
    are single options (what the raw-text SavedModel sends): the outputs are then the
    encoder's plus `option_logits` `(batch_size,)`, to be soft-maxed across a question's rows.

    Outputs: `choice_logits` float32 `(batch_size, num_choices)`, and `pooled_output`
    `(batch_size, num_choices, hidden_size)`, `sequence_output`
    `(batch_size, num_choices, seq_length, hidden_size)`.

    Metrics: `loss`, `accuracy`.
    """

    task_outputs = ("choice_logits",)

    def __init__(self, config, num_choices: int = 4, dropout_rate: float = 0.1,
                 pooling: str = "cls", **kwargs):
        kwargs.setdefault("name", "albert_multiple_choice")
        super().__init__(config, ("accuracy",), pooling, **kwargs)
        self.num_choices = num_choices
        self.dropout_rate = dropout_rate
        self.head = ClassificationHead(1, dropout_rate, self.config.initializer_range,
                                       name="option_score")

    def call(self, inputs, training=None):
        word_ids = inputs["input_word_ids"]
        if word_ids.shape.rank == 2:
            encoded = self.encode(inputs, training)
            scores = self.head(self.sentence(encoded, inputs), training=training)
            return {**encoded, "option_logits": scores[:, 0]}
        seq_length = tf.shape(word_ids)[-1]
        flat = {name: tf.reshape(inputs[name], [-1, seq_length]) for name in INPUT_NAMES}
        encoded = self.encode(flat, training)
        scores = self.head(self.sentence(encoded, flat), training=training)
        hidden = self.config.hidden_size
        return {"choice_logits": tf.reshape(scores, [-1, self.num_choices]),
                "pooled_output": tf.reshape(encoded["pooled_output"],
                                            [-1, self.num_choices, hidden]),
                "sequence_output": tf.reshape(encoded["sequence_output"],
                                              [-1, self.num_choices, seq_length, hidden])}

    def per_example_loss(self, features, outputs):
        return _sparse_cross_entropy(features["label"], outputs["choice_logits"])

    def metric_values(self, features, outputs):
        return {"accuracy": _correct(features["label"], outputs["choice_logits"])}

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices,
                "dropout_rate": self.dropout_rate}
