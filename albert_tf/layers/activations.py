"""The hidden activations ALBERT configs name, as functions of a float tensor."""

from __future__ import annotations

from typing import Callable

import tensorflow as tf


def gelu_tanh(x: tf.Tensor) -> tf.Tensor:
    """GELU, tanh approximation: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).

    This is what the original ALBERT and BERT code call "gelu" (Hugging Face: "gelu_new").
    """
    return tf.nn.gelu(x, approximate=True)


def gelu_exact(x: tf.Tensor) -> tf.Tensor:
    """GELU with the Gaussian CDF: 0.5x(1 + erf(x / sqrt(2)))."""
    return tf.nn.gelu(x, approximate=False)


def relu(x: tf.Tensor) -> tf.Tensor:
    return tf.nn.relu(x)


_ACTIVATIONS: dict[str, Callable[[tf.Tensor], tf.Tensor]] = {
    "gelu_tanh": gelu_tanh,
    "gelu_exact": gelu_exact,
    "relu": relu,
}


def get_activation(name: str) -> Callable[[tf.Tensor], tf.Tensor]:
    """The activation function called `name` (one of `AlbertConfig`'s hidden_activation)."""
    try:
        return _ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"unknown activation '{name}' "
                         f"(known: {', '.join(_ACTIVATIONS)})") from None
