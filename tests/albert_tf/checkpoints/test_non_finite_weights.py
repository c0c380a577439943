"""NaN and infinity in a checkpoint are refused by every loader, naming the variable, and
nothing is loaded: the original TF1 layout (and through it transformers' and keras-hub's,
which load by the same assignment), our model folders, and a Keras backup."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from checkpoint_helpers import ORIGINAL_CONFIG, original_arrays_from_numpy, write_tf1_checkpoint

from albert_tf.checkpoints.model_folder import load_encoder, save_model_folder
from albert_tf.checkpoints.original import load_original
from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.loop.backup import StepBackup
from albert_tf.loop.finite import NonFiniteError, non_finite_weights


def test_non_finite_weights_are_counted_by_kind():
    arrays = {"fine": np.ones(3), "bad": np.array([np.nan, np.inf, -np.inf, 1.0]),
              "steps": np.array(7)}
    assert non_finite_weights(arrays) == ["bad (1 NaN, 2 infinite of 4 values)"]


def test_an_original_checkpoint_holding_a_nan_is_refused_naming_it(tmp_path):
    arrays = original_arrays_from_numpy(ORIGINAL_CONFIG)
    name = "bert/encoder/transformer/group_1/inner_group_0/ffn_1/intermediate/dense/kernel"
    arrays[name][3, 5] = np.nan
    prefix = write_tf1_checkpoint(str(tmp_path / "tf1"), arrays, ORIGINAL_CONFIG)
    with pytest.raises(CheckpointError, match=rf"1 weight\(s\) hold NaN or infinity.*\n.*"
                                              rf"{name} \(1 NaN of 960 values\)"):
        load_original(prefix)


def test_our_model_folder_holding_an_infinity_is_refused_and_nothing_is_loaded(
        tiny_config, tmp_path):
    from albert_tf.models.encoder import AlbertEncoder

    encoder = AlbertEncoder(tiny_config)
    encoder({"input_word_ids": tf.ones((1, 4), tf.int32), "input_mask": tf.ones((1, 4), tf.int32),
             "input_type_ids": tf.zeros((1, 4), tf.int32)})
    bias = encoder.pooler.dense.bias
    bias.assign(tf.tensor_scatter_nd_update(bias, [[0]], [np.inf]))
    save_model_folder(encoder, str(tmp_path / "model"))
    with pytest.raises(CheckpointError, match=r"model/encoder/.* \(1 infinite of 32 values\)"):
        load_encoder(str(tmp_path / "model"))


def test_a_backup_holding_a_nan_is_refused_when_restored(tmp_path):
    """A Keras backup (what an interrupted run resumes from) with a NaN weight."""
    def model():
        tf_keras.utils.set_random_seed(0)
        built = tf_keras.Sequential([tf_keras.layers.Dense(1, input_shape=(2,))])
        built.compile(optimizer="sgd", loss="mse")
        return built

    class Interrupt(tf_keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            raise KeyboardInterrupt  # after the backup of this step: it stays for a resume

    broken = model()
    broken.layers[0].kernel.assign([[np.nan], [1.0]])
    data = (np.ones((4, 2), np.float32), np.ones((4, 1), np.float32))
    with pytest.raises(KeyboardInterrupt):
        broken.fit(*data, batch_size=2, verbose=0,
                   callbacks=[StepBackup(str(tmp_path), save_freq=1), Interrupt()])
    with pytest.raises(NonFiniteError, match=rf"the backup in {tmp_path}: 2 weight\(s\).*\n"
                                             r".*kernel.* \(2 NaN of 2 values\)"):
        model().fit(*data, batch_size=2, verbose=0,
                    callbacks=[StepBackup(str(tmp_path), save_freq=1)])
