"""AlbertPretrainer: the encoder with the masked-LM and sentence heads, their losses and metrics.

The losses are the original ALBERT's (`run_pretraining.py`):
    mlm_loss = sum(w * nll) / (sum(w) + 1e-5) over the masked positions of the global batch,
    sentence_loss = mean cross-entropy of the 2-way SOP/NSP logits over the global batch,
    loss = mlm_loss + sentence_loss (what `fit` logs as `loss`, averaged over steps).
Under a `tf.distribute` strategy each replica computes its share of these global values (its
numerator over the all-reduced global denominator), so the gradients the optimizer sums over
replicas are exactly those of the single-device loss on the whole global batch.
"""

from __future__ import annotations

from typing import Any, Mapping

import tensorflow as tf
import tf_keras

from albert_tf.config import SENTENCE_OBJECTIVES, AlbertConfig, ConfigError
from albert_tf.layers.heads import MaskedLMHead, SentenceHead
from albert_tf.models.encoder import INPUT_NAMES, AlbertEncoder
from albert_tf.models.training_step import StepModel, correct_predictions, global_sum

MLM_WEIGHT_EPSILON = 1e-5  # the original's guard in the MLM loss denominator


def masked_lm_nll(logits: tf.Tensor, label_ids: tf.Tensor) -> tf.Tensor:
    """Negative log-likelihood of `label_ids` (batch, P) under `logits` (batch, P, V)."""
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=label_ids, logits=logits)


def masked_lm_loss(logits: tf.Tensor, label_ids: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
    """This replica's share of sum(w * nll) / (sum(w) + 1e-5) over the global batch."""
    weights = tf.cast(weights, tf.float32)
    numerator = tf.reduce_sum(weights * masked_lm_nll(logits, label_ids))
    return numerator / (global_sum(tf.reduce_sum(weights)) + MLM_WEIGHT_EPSILON)


def sentence_loss(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
    """This replica's share of the mean 2-way cross-entropy over the global batch.

    logits: `(batch_size, 2)`; labels: int `(batch_size,)` or `(batch_size, 1)`.
    """
    labels = tf.reshape(labels, [-1])
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    batch_size = tf.cast(tf.shape(labels)[0], tf.float32)
    return tf.reduce_sum(per_example) / global_sum(batch_size)


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertPretrainer(StepModel):
    """ALBERT with its pretraining heads; `fit` trains it on batches of the TFRecord features.

    Args:
        config: an `AlbertConfig` (or a mapping of its fields).
        sentence_objective: `sop`, `nsp` (a sentence head on the pooled output) or `none`.
        return_all_layer_outputs: also output `encoder_outputs`, every transformer block's
            output (see `AlbertEncoder`).
        gradient_accumulation_steps: N; `fit` splits each step's batch into N micro-batches
            and applies one update with their summed gradients, exactly the one batch's
            (`albert_tf.models.accumulation`).

    Inputs (a dict): the encoder inputs `input_word_ids`, `input_mask`, `input_type_ids`
    (int `(batch_size, seq_length)`) and `masked_lm_positions` (int `(batch_size, P)`);
    training and evaluation also read `masked_lm_ids`, `masked_lm_weights` `(batch_size, P)`
    and `next_sentence_labels` `(batch_size, 1)`, as `albert_tf.data` produces them.

    Outputs (a dict of float32): `mlm_logits` `(batch_size, P, vocab_size)` and, unless the
    objective is `none`, `sentence_logits` `(batch_size, 2)`; `encoder_outputs` on request.

    Metrics: `loss` (the objective minimized, averaged over steps), `mlm_loss` (the weighted
    mean NLL over all predictions, without the objective's `+1e-5`), `mlm_accuracy`, and for
    SOP/NSP `sentence_loss`, `sentence_accuracy`.
    """

    def __init__(self, config: AlbertConfig | Mapping[str, Any], sentence_objective: str = "sop",
                 return_all_layer_outputs: bool = False, gradient_accumulation_steps: int = 1,
                 **kwargs):
        kwargs.setdefault("name", "albert_pretrainer")
        if sentence_objective not in SENTENCE_OBJECTIVES:
            raise ConfigError(f"field 'sentence_objective' must be one of "
                              f"{', '.join(SENTENCE_OBJECTIVES)}, got '{sentence_objective}'")
        metric_names = ("mlm_loss", "mlm_accuracy")
        if sentence_objective != "none":
            metric_names += ("sentence_loss", "sentence_accuracy")
        super().__init__(metric_names, gradient_accumulation_steps, **kwargs)
        if not isinstance(config, AlbertConfig):
            config = AlbertConfig.from_dict(config)
        self.config = config
        self.sentence_objective = sentence_objective
        self.return_all_layer_outputs = return_all_layer_outputs
        self.encoder = AlbertEncoder(config, return_all_layer_outputs)
        self.masked_lm = MaskedLMHead(
            config.vocab_size, config.embedding_size, config.hidden_activation,
            config.initializer_range, config.layer_norm_epsilon, name="masked_lm")
        self.sentence_head = None
        if sentence_objective != "none":
            self.sentence_head = SentenceHead(config.initializer_range, name="sentence_head")

    # Each metric as (numerator, weight) of the step's statistics (`_statistics`).
    metric_fractions = {"mlm_loss": ("mlm_nll", "mlm_weight"),
                        "mlm_accuracy": ("mlm_correct", "mlm_weight"),
                        "sentence_loss": ("sentence_nll", "sentence_count"),
                        "sentence_accuracy": ("sentence_correct", "sentence_count")}

    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(name for name in self._trackers if name != "loss")

    def call(self, inputs, training=None):
        encoded = self.encoder({name: inputs[name] for name in INPUT_NAMES}, training=training)
        outputs = {"mlm_logits": self.masked_lm(encoded["sequence_output"],
                                                inputs["masked_lm_positions"],
                                                self.encoder.get_embedding_table())}
        if self.sentence_head is not None:
            outputs["sentence_logits"] = self.sentence_head(encoded["pooled_output"])
        if self.return_all_layer_outputs:
            outputs["encoder_outputs"] = encoded["encoder_outputs"]
        return outputs

    def loss_denominators(self, features) -> dict[str, tf.Tensor]:
        """The global denominators of the losses over the step's batch (all replicas): the
        MLM weights plus 1e-5, and the example count for the sentence loss."""
        weights = tf.cast(features["masked_lm_weights"], tf.float32)
        denominators = {"masked_lm": global_sum(tf.reduce_sum(weights)) + MLM_WEIGHT_EPSILON}
        if self.sentence_head is not None:
            denominators["sentence"] = global_sum(tf.cast(tf.shape(weights)[0], tf.float32))
        return denominators

    def compute_pretraining_loss(self, features, outputs, denominators=None) -> tf.Tensor:
        """This replica's share of the total loss (the global loss on one device);
        `denominators` (default: those of `features`) lets a micro-batch compute its share
        of a larger batch's loss."""
        return self._loss(self._statistics(features, outputs),
                          denominators or self.loss_denominators(features))

    def _loss(self, sums, denominators) -> tf.Tensor:
        loss = sums["mlm_nll"] / denominators["masked_lm"]
        if self.sentence_head is not None:
            loss += sums["sentence_nll"] / denominators["sentence"]
        return loss

    def _statistics(self, features, outputs) -> dict[str, tf.Tensor]:
        """Sums over the batch that the losses and metrics are made of."""
        logits, labels = outputs["mlm_logits"], features["masked_lm_ids"]
        weights = tf.cast(features["masked_lm_weights"], tf.float32)
        sums = {"mlm_nll": tf.reduce_sum(weights * masked_lm_nll(logits, labels)),
                "mlm_correct": tf.reduce_sum(weights * correct_predictions(logits, labels)),
                "mlm_weight": tf.reduce_sum(weights)}
        if self.sentence_head is not None:
            logits = outputs["sentence_logits"]
            labels = tf.reshape(features["next_sentence_labels"], [-1])
            sums["sentence_nll"] = tf.reduce_sum(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            sums["sentence_correct"] = tf.reduce_sum(correct_predictions(logits, labels))
            sums["sentence_count"] = tf.cast(tf.shape(labels)[0], tf.float32)
        return sums

    def loss_and_statistics(self, features, denominators, training):
        """(this replica's share of the step's loss, the statistics of `features`)."""
        sums = self._statistics(features, self(features, training=training))
        return self._loss(sums, denominators), sums

    def get_config(self):
        return {"config": self.config.to_dict(), "sentence_objective": self.sentence_objective,
                "return_all_layer_outputs": self.return_all_layer_outputs,
                "gradient_accumulation_steps": self.gradient_accumulation_steps,
                "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


def built_pretrainer(config: AlbertConfig, sentence_objective: str = "sop",
                     return_all_layer_outputs: bool = False,
                     gradient_accumulation_steps: int = 1) -> AlbertPretrainer:
    """An `AlbertPretrainer` with its weights created (by a call on two positions, not a
    full-length pass), so that a checkpoint restores into it at once."""
    model = AlbertPretrainer(config, sentence_objective, return_all_layer_outputs,
                             gradient_accumulation_steps)
    ids = tf.zeros((1, 2), tf.int32)
    model({"input_word_ids": ids, "input_mask": ids, "input_type_ids": ids,
           "masked_lm_positions": ids[:, :1]}, training=False)
    return model
