"""Fine-tuning heads: a dense layer on the pooled output (classification, regression, one
score per multiple-choice option), start/end logits on the sequence output (SQuAD spans, and
BERT's [CLS] rule for SQuAD 2.0), and the original ALBERT's SQuAD 2.0 head (start, end
conditioned on the start, answerability).

They follow the original ALBERT fine-tuning code: dropout 0.1 on the pooled output and a
`num_outputs x H` dense layer; the span head is a `2 x H` dense layer on every position.
Logits come out in float32 under any mixed-precision policy, so softmax and losses are
float32.
"""

from __future__ import annotations

import tensorflow as tf
import tf_keras

from albert_tf.layers.common import build_sublayer, dropout, truncated_normal


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class ClassificationHead(tf_keras.layers.Layer):
    """Dropout and a dense layer on the pooled `[CLS]` representation.

    Args:
        num_outputs: int; classes for classification, 1 for regression (STS-B) and for the
            per-option score of multiple choice (RACE).
        dropout_rate: float, dropout on the pooled output while training (0.1 in the
            original).
        initializer_range: float, stddev of the truncated-normal initializer.

    Call arguments:
        pooled: `(batch_size, hidden_size)`.

    Returns:
        float32 `(batch_size, num_outputs)`.

    Example:
    >>> head = ClassificationHead(3)
    >>> head(tf.zeros((2, 8))).shape
    TensorShape([2, 3])
    """

    def __init__(self, num_outputs: int, dropout_rate: float = 0.1,
                 initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        if num_outputs < 1:
            raise ValueError(f"num_outputs must be at least 1, got {num_outputs}")
        self.num_outputs = num_outputs
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.dropout = dropout(dropout_rate)
        self.dense = tf_keras.layers.Dense(
            num_outputs, kernel_initializer=truncated_normal(initializer_range), name="dense")

    def build(self, input_shape):
        build_sublayer(self.dense, (None, input_shape[-1]))
        super().build(input_shape)

    def call(self, pooled, training=None):
        return tf.cast(self.dense(self.dropout(pooled, training=training)), tf.float32)

    def get_config(self):
        config = super().get_config()
        config.update(num_outputs=self.num_outputs, dropout_rate=self.dropout_rate,
                      initializer_range=self.initializer_range)
        return config


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class SpanHead(tf_keras.layers.Layer):
    """Start and end logits of an answer span at every position.

    Args:
        initializer_range: float, stddev of the truncated-normal initializer.

    Call arguments:
        sequence: `(batch_size, seq_length, hidden_size)`, the encoder's sequence output.

    Returns:
        (start_logits, end_logits), float32 `(batch_size, seq_length)` each.

    Example:
    >>> start, end = SpanHead()(tf.zeros((2, 5, 8)))
    >>> start.shape, end.shape
    (TensorShape([2, 5]), TensorShape([2, 5]))
    """

    def __init__(self, initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.initializer_range = initializer_range
        self.dense = tf_keras.layers.Dense(
            2, kernel_initializer=truncated_normal(initializer_range), name="dense")

    def build(self, input_shape):
        build_sublayer(self.dense, (None, None, input_shape[-1]))
        super().build(input_shape)

    def call(self, sequence):
        logits = tf.cast(self.dense(sequence), tf.float32)
        return logits[:, :, 0], logits[:, :, 1]

    def get_config(self):
        config = super().get_config()
        config.update(initializer_range=self.initializer_range)
        return config


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AnswerabilitySpanHead(tf_keras.layers.Layer):
    """The original ALBERT's SQuAD 2.0 head (from XLNet): start logits, end logits
    conditioned on the start, and an answerability logit.

    - start: a `1 x H` dense layer at every position;
    - end: for a start s, `[h_i; h_s]` (2H) -> dense H with tanh -> LayerNorm -> dense 1 at
      every position i; trained with the true start, searched over the `start_n_top` best
      starts at inference;
    - answerability: `[sum_i p_start(i) h_i; h_[CLS]]` -> dense H with tanh -> dropout ->
      dense 1 without bias; a logit of "no answer".
    Positions that cannot hold an answer (the question, [SEP], padding; [CLS] can, it is the
    no-answer span) get a logit of -1e30 before each softmax, as in the original.

    Args:
        hidden_size: H, the encoder's width.
        start_n_top, end_n_top: the beam of starts, and of ends per start, at inference.
        dropout_rate: dropout in the answerability branch while training (0.1 in the
            original).
        initializer_range: stddev of the truncated-normal initializer.
        layer_norm_epsilon: the end branch's LayerNorm epsilon (TF1 contrib's 1e-12).

    Call arguments:
        sequence: `(batch_size, seq_length, hidden_size)`, the encoder's sequence output.
        p_mask: float `(batch_size, seq_length)`, 1 where no answer can start or end.
        start_positions: int `(batch_size,)`, the true starts; given, the end is conditioned
            on them (training), else on the beam of best starts.

    Returns (float32, except the int32 indices), a dict:
        with `start_positions`: `start_log_probs`, `end_log_probs` `(batch_size,
            seq_length)`, `cls_logits` `(batch_size,)`;
        without: `start_top_log_probs`, `start_top_index` `(batch_size, start_n_top)`,
            `end_top_log_probs`, `end_top_index` `(batch_size, start_n_top * end_n_top)`
            (the ends of start k at `k * end_n_top + j`), `cls_logits`.

    Example:
    >>> head = AnswerabilitySpanHead(8, start_n_top=2, end_n_top=3)
    >>> outputs = head(tf.random.normal((2, 5, 8)), tf.zeros((2, 5)))
    >>> outputs["end_top_index"].shape, outputs["cls_logits"].shape
    (TensorShape([2, 6]), TensorShape([2]))
    """

    def __init__(self, hidden_size: int, start_n_top: int = 5, end_n_top: int = 5,
                 dropout_rate: float = 0.1, initializer_range: float = 0.02,
                 layer_norm_epsilon: float = 1e-12, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.start_n_top = start_n_top
        self.end_n_top = end_n_top
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon

        def dense(units, name, activation=None, use_bias=True):
            return tf_keras.layers.Dense(units, activation=activation, use_bias=use_bias,
                                         kernel_initializer=truncated_normal(initializer_range),
                                         name=name)

        self.start_dense = dense(1, "start")
        self.end_hidden = dense(hidden_size, "end_hidden", "tanh")
        self.end_layer_norm = tf_keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, name="end_layer_norm")
        self.end_dense = dense(1, "end")
        self.answer_hidden = dense(hidden_size, "answer_hidden", "tanh")
        self.answer_dropout = dropout(dropout_rate)
        self.answer_dense = dense(1, "answer", use_bias=False)

    def build(self, input_shape):
        width = input_shape[-1]
        build_sublayer(self.start_dense, (None, None, width))
        # The end branch runs on (batch, starts, seq, features).
        build_sublayer(self.end_hidden, (None, None, None, 2 * width))
        build_sublayer(self.end_layer_norm, (None, None, None, self.hidden_size))
        build_sublayer(self.end_dense, (None, None, None, self.hidden_size))
        build_sublayer(self.answer_hidden, (None, 2 * width))
        build_sublayer(self.answer_dense, (None, self.hidden_size))
        super().build(input_shape)

    def _end_logits(self, sequence, start_features):
        """`(batch, K, seq)` end logits for K start representations `(batch, K, H)`."""
        length, beams = tf.shape(sequence)[1], tf.shape(start_features)[1]
        tokens = tf.tile(sequence[:, None], [1, beams, 1, 1])
        starts = tf.tile(start_features[:, :, None], [1, 1, length, 1])
        hidden = self.end_layer_norm(self.end_hidden(tf.concat([tokens, starts], -1)))
        return tf.cast(self.end_dense(hidden)[..., 0], tf.float32)

    def call(self, sequence, p_mask, start_positions=None, training=None):
        p_mask = tf.cast(p_mask, tf.float32)
        start_logits = tf.cast(self.start_dense(sequence)[..., 0], tf.float32)
        start_logits = _masked(start_logits, p_mask)
        start_log_probs = tf.nn.log_softmax(start_logits, -1)
        if start_positions is not None:
            chosen = tf.gather(sequence, tf.reshape(start_positions, [-1, 1]), batch_dims=1)
            end_logits = _masked(self._end_logits(sequence, chosen)[:, 0], p_mask)
            outputs = {"start_log_probs": start_log_probs,
                       "end_log_probs": tf.nn.log_softmax(end_logits, -1)}
        else:
            start_top_log_probs, start_top_index = tf.math.top_k(start_log_probs,
                                                                 self.start_n_top)
            chosen = tf.gather(sequence, start_top_index, batch_dims=1)
            end_logits = _masked(self._end_logits(sequence, chosen), p_mask[:, None])
            end_top_log_probs, end_top_index = tf.math.top_k(
                tf.nn.log_softmax(end_logits, -1), self.end_n_top)
            flat = [-1, self.start_n_top * self.end_n_top]
            outputs = {"start_top_log_probs": start_top_log_probs,
                       "start_top_index": start_top_index,
                       "end_top_log_probs": tf.reshape(end_top_log_probs, flat),
                       "end_top_index": tf.reshape(end_top_index, flat)}
        # Answerability from [CLS] and the start distribution's expected representation.
        start_probabilities = tf.cast(tf.nn.softmax(start_logits, -1), sequence.dtype)
        # A batched matmul, not an einsum: LiteRT has a kernel for the one, not the other.
        expected_start = tf.matmul(start_probabilities[:, None], sequence)[:, 0]
        hidden = self.answer_hidden(tf.concat([expected_start, sequence[:, 0]], -1))
        hidden = self.answer_dropout(hidden, training=training)
        outputs["cls_logits"] = tf.cast(self.answer_dense(hidden)[:, 0], tf.float32)
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, start_n_top=self.start_n_top,
                      end_n_top=self.end_n_top, dropout_rate=self.dropout_rate,
                      initializer_range=self.initializer_range,
                      layer_norm_epsilon=self.layer_norm_epsilon)
        return config


def _masked(logits: tf.Tensor, p_mask: tf.Tensor) -> tf.Tensor:
    """The original's masking: logits where p_mask is 0, -1e30 where it is 1."""
    return logits * (1.0 - p_mask) - 1e30 * p_mask
