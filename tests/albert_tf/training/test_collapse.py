"""The representation-collapse check: the spread measure, the encoder-level check and the
training callback's warning, on hand-made vectors and a tiny encoder made to collapse."""

import numpy as np
import pytest
import tf_keras
from helpers import random_inputs
from seeding import seed_draws
from thresholds import above, below

from albert_tf.models.pretrainer import AlbertPretrainer
from albert_tf.training.collapse import (
    COLLAPSE_SPREAD,
    CollapseWatch,
    collapse_warning,
    representation_spread,
    spread,
)


def test_spread_by_hand():
    # Per-dimension std over the two vectors: 1 and 0 -> mean 0.5; rms of (1, 0, 3, 0) is
    # sqrt(10 / 4).
    vectors = np.array([[1.0, 0.0], [3.0, 0.0]])
    assert spread(vectors) == pytest.approx(0.5 / np.sqrt(10 / 4))
    assert spread(np.ones((5, 3))) == 0.0
    assert spread(np.zeros((4, 2))) == 0.0
    assert spread(np.ones((1, 3))) == 0.0
    # Scale-free.
    assert spread(7.0 * vectors) == pytest.approx(spread(vectors))


# A freshly initialized tiny encoder's spread: over 50 seeds (scripts/check_thresholds.py)
# the lowest was well above this, and far above COLLAPSE_SPREAD.
WORKING_SPREAD = 0.2


def _batch(config, seed=0):
    return random_inputs([config.max_position_embeddings] * 6 + [5, 9],
                         config.max_position_embeddings, config.vocab_size, seed=seed)


def _collapse(encoder):
    """Zero the last LayerNorm's gamma: every token's output becomes its beta."""
    last_norm = encoder.get_layer("transformer").feed_forward_blocks[-1].layer_norm
    last_norm.gamma.assign(np.zeros(last_norm.gamma.shape, np.float32))
    last_norm.beta.assign(np.linspace(-1, 1, last_norm.beta.shape[0]).astype(np.float32))


def test_a_working_encoder_spreads_and_a_collapsed_one_does_not(tiny_config, seed,
                                                                record_property):
    seed_draws(seed)  # the initial weights and the batches
    model = AlbertPretrainer(tiny_config, "sop")
    batch = _batch(tiny_config, seed)
    spreads = representation_spread(model.encoder, [batch])
    for name in ("sequence_spread", "pooled_spread"):
        above(record_property, name, spreads[name], WORKING_SPREAD)
    assert collapse_warning(spreads, "here") is None

    _collapse(model.encoder)
    spreads = representation_spread(model.encoder, [batch, _batch(tiny_config, seed + 1)])
    for name in ("sequence_spread", "pooled_spread"):
        below(record_property, f"collapsed {name}", spreads[name], COLLAPSE_SPREAD)
    warning = collapse_warning(spreads, "at step 7")
    assert "at step 7" in warning and "sequence_spread" in warning
    assert "pooled_spread" in warning and "init.mlm_output_bias=unigram" in warning


def test_the_callback_warns_and_logs_only_when_collapsed(tiny_config, tmp_path, capsys):
    model = AlbertPretrainer(tiny_config, "sop")
    model.compile(optimizer=tf_keras.optimizers.Adam())
    batch = _batch(tiny_config)
    watch = CollapseWatch(batch, str(tmp_path))
    watch.set_model(model)
    watch.on_train_begin()
    watch.on_epoch_end(0)
    assert watch.warnings == [] and "collapsed" not in capsys.readouterr().err
    _collapse(model.encoder)
    watch.on_epoch_end(1)
    watch.on_train_end()
    assert len(watch.warnings) == 1
    assert "at step 0" in capsys.readouterr().err
    assert any(path.name.startswith("events.out") for path in (tmp_path / "train").iterdir())
