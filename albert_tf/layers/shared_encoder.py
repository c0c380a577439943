"""Cross-layer parameter sharing (paper section 3.1): L layer applications over fewer weights.

The encoder owns only the distinct sub-blocks its sharing strategy needs and calls them L times:

- `all`: one attention and one feed-forward sub-block per group (ALBERT's default, N = 1);
- `attention`: attention shared within a group, a feed-forward sub-block per layer;
- `ffn`: feed-forward shared within a group, an attention sub-block per layer;
- `none`: every layer has its own sub-blocks (BERT).

Layer i belongs to group int(i * N / L); each layer applies `inner_group_num` blocks in a row,
as the original code's `inner_group_num` does.
"""

from __future__ import annotations

import tensorflow as tf
import tf_keras

from albert_tf.config import SHARING_STRATEGIES
from albert_tf.layers.attention import AttentionBlock, attention_bias_from_mask
from albert_tf.layers.common import build_sublayer
from albert_tf.layers.feed_forward import FeedForwardBlock

_SHARED_PARTS = {"all": ("attention", "ffn"), "attention": ("attention",),
                 "ffn": ("ffn",), "none": ()}


def group_of_layer(layer_index: int, num_layers: int, num_groups: int) -> int:
    """int(i * N / L), exact in integers: 3 layers in 2 groups -> 0, 0, 1."""
    return layer_index * num_groups // num_layers


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class SharedTransformerEncoder(tf_keras.layers.Layer):
    """A post-LN transformer stack of `num_layers` applications of shared sub-blocks.

    Args:
        num_layers: int, L.
        hidden_size: int, H.
        num_attention_heads: int.
        intermediate_size: int.
        hidden_activation: str, see `albert_tf.layers.activations`.
        hidden_dropout: float.
        attention_dropout: float.
        initializer_range: float.
        layer_norm_epsilon: float.
        sharing: `all`, `attention`, `ffn` or `none`.
        num_groups: int, N; groups of consecutive layers that share weights.
        inner_group_num: int, blocks applied in sequence within each layer.
        return_all_layer_outputs: bool; if true, `call` returns the list of every block's
            output (`num_layers * inner_group_num` entries), else the last one.

    Call arguments:
        hidden: `(batch_size, seq_length, hidden_size)`.
        input_mask: int `(batch_size, seq_length)`, 1 for tokens and 0 for padding.

    Returns:
        `(batch_size, seq_length, hidden_size)` float32, or a list of them.
    """

    def __init__(self, num_layers: int, hidden_size: int, num_attention_heads: int,
                 intermediate_size: int, hidden_activation: str = "gelu_tanh",
                 hidden_dropout: float = 0.0, attention_dropout: float = 0.0,
                 initializer_range: float = 0.02, layer_norm_epsilon: float = 1e-12,
                 sharing: str = "all", num_groups: int = 1, inner_group_num: int = 1,
                 return_all_layer_outputs: bool = False, **kwargs):
        super().__init__(**kwargs)
        if sharing not in SHARING_STRATEGIES:
            raise ValueError(f"sharing must be one of {SHARING_STRATEGIES}, got '{sharing}'")
        if not 1 <= num_groups <= num_layers:
            raise ValueError(f"num_groups must be in [1, num_layers={num_layers}], "
                             f"got {num_groups}")
        self.num_layers = num_layers
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_activation = hidden_activation
        self.hidden_dropout = hidden_dropout
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon
        self.sharing = sharing
        self.num_groups = num_groups
        self.inner_group_num = inner_group_num
        self.return_all_layer_outputs = return_all_layer_outputs

        self.attention_blocks: list[AttentionBlock] = []
        self.feed_forward_blocks: list[FeedForwardBlock] = []
        # _plan[layer][inner] = (index into attention_blocks, index into feed_forward_blocks)
        self._plan = self._create_blocks()

    def _block_name(self, part: str, layer: int, inner: int) -> str:
        """The name of the sub-block `part` that (layer, inner) applies; equal names share."""
        if part in _SHARED_PARTS[self.sharing]:
            group = group_of_layer(layer, self.num_layers, self.num_groups)
            return f"group_{group}_inner_{inner}_{part}"
        return f"layer_{layer}_inner_{inner}_{part}"

    def _create_blocks(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Creates each distinct sub-block once; returns plan[layer][inner] = (a, f) indices."""
        indices: dict[str, int] = {}

        def index_of(part, blocks, make, layer, inner):
            name = self._block_name(part, layer, inner)
            if name not in indices:
                indices[name] = len(blocks)
                blocks.append(make(name=name))
            return indices[name]

        return tuple(
            tuple((index_of("attention", self.attention_blocks, self._attention_block,
                            layer, inner),
                   index_of("ffn", self.feed_forward_blocks, self._feed_forward_block,
                            layer, inner))
                  for inner in range(self.inner_group_num))
            for layer in range(self.num_layers))

    def _attention_block(self, name):
        return AttentionBlock(self.hidden_size, self.num_attention_heads,
                              attention_dropout=self.attention_dropout,
                              hidden_dropout=self.hidden_dropout,
                              initializer_range=self.initializer_range,
                              layer_norm_epsilon=self.layer_norm_epsilon, name=name)

    def _feed_forward_block(self, name):
        return FeedForwardBlock(self.hidden_size, self.intermediate_size,
                                hidden_activation=self.hidden_activation,
                                hidden_dropout=self.hidden_dropout,
                                initializer_range=self.initializer_range,
                                layer_norm_epsilon=self.layer_norm_epsilon, name=name)

    def blocks_of_layer(self, layer_index: int) -> list[tuple[AttentionBlock, FeedForwardBlock]]:
        """The (attention, feed-forward) sub-blocks layer `layer_index` applies, in order."""
        return [(self.attention_blocks[a], self.feed_forward_blocks[f])
                for a, f in self._plan[layer_index]]

    def build(self, input_shape):
        hidden_shape = tf.TensorShape([None, None, self.hidden_size])
        for block in self.attention_blocks + self.feed_forward_blocks:
            build_sublayer(block, hidden_shape)
        super().build(input_shape)

    def call(self, hidden, input_mask, training=None):
        attention_bias = attention_bias_from_mask(input_mask)
        outputs = []
        for layer_index in range(self.num_layers):
            for attention, feed_forward in self.blocks_of_layer(layer_index):
                hidden = attention(hidden, attention_bias=attention_bias, training=training)
                hidden = feed_forward(hidden, training=training)
                outputs.append(hidden)
        return outputs if self.return_all_layer_outputs else outputs[-1]

    def get_config(self):
        config = super().get_config()
        config.update(num_layers=self.num_layers, hidden_size=self.hidden_size,
                      num_attention_heads=self.num_attention_heads,
                      intermediate_size=self.intermediate_size,
                      hidden_activation=self.hidden_activation,
                      hidden_dropout=self.hidden_dropout,
                      attention_dropout=self.attention_dropout,
                      initializer_range=self.initializer_range,
                      layer_norm_epsilon=self.layer_norm_epsilon, sharing=self.sharing,
                      num_groups=self.num_groups, inner_group_num=self.inner_group_num,
                      return_all_layer_outputs=self.return_all_layer_outputs)
        return config
