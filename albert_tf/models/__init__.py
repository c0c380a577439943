"""Keras models built from the layers: the encoder now, pretraining and task models later."""

from albert_tf.models.encoder import INPUT_NAMES, AlbertEncoder, random_encoder_inputs

__all__ = ["AlbertEncoder", "INPUT_NAMES", "random_encoder_inputs"]
