"""Shared fixtures: tiny configs and built models (TensorFlow on 2 CPU cores is slow)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_tf.config import AlbertConfig  # noqa: E402

# Two logical CPU devices for tf.distribute tests; must happen before TensorFlow initializes
# its devices, so here, at collection time, and once for the whole session.
tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])

# Tiny but not degenerate: E != H (projection present), several heads, several layers.
TINY = AlbertConfig(vocab_size=97, embedding_size=16, hidden_size=32, num_layers=3,
                    num_attention_heads=4, intermediate_size=64, max_position_embeddings=32,
                    hidden_dropout=0.0, attention_dropout=0.0)


@pytest.fixture(scope="session")
def tiny_config() -> AlbertConfig:
    return TINY


@pytest.fixture(scope="session")
def tiny_encoder(tiny_config):
    """A built tiny all-shared encoder with weights at a realistic scale. Do not mutate."""
    from albert_tf.models.encoder import AlbertEncoder
    from helpers import randomize_weights

    encoder = AlbertEncoder(tiny_config)
    randomize_weights(encoder, seed=0)
    return encoder


@pytest.fixture(scope="session")
def two_cpu_strategy():
    """One MirroredStrategy over the two logical CPUs for every test that needs one.

    Separate MirroredStrategy instances in one process hand out the same collective instance
    keys, so a second instance's all-reduce can meet the first one's in TensorFlow's
    collective executor ("Shape mismatch in the collective instance"); sharing one avoids it.
    """
    devices = [device.name for device in tf.config.list_logical_devices("CPU")][:2]
    assert len(devices) == 2, "two logical CPU devices are set up above"
    return tf.distribute.MirroredStrategy(devices)
