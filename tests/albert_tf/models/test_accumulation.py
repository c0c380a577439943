"""Gradient accumulation: N micro-batches give the update of the one batch they make up, for
LAMB and AdamW, with clipping, under MirroredStrategy, several steps per execution and XLA."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from helpers import pretraining_batch, randomize_weights
from thresholds import above, below

from albert_tf.config import ConfigError
from albert_tf.loop.optimization import OptimizerConfig, create_optimizer
from albert_tf.models.pretrainer import AlbertPretrainer

MICRO, STEPS = 8, 3
CLIP_NORM = 1.0


@pytest.fixture(scope="module")
def start(tiny_config, seed):
    """Weights at a trained scale (large gradients: the first step is clipped) and three
    batches of 32 whose micro-batches hold different numbers of MLM predictions."""
    template = AlbertPretrainer(tiny_config, "sop")
    template(pretraining_batch(tiny_config.vocab_size, batch=2))
    randomize_weights(template, seed=11 + seed)
    batches = [pretraining_batch(tiny_config.vocab_size, seed=20 + STEPS * seed + step,
                                 batch=4 * MICRO) for step in range(STEPS)]
    for batch in batches:  # the first micro-batch: one prediction per example
        batch["masked_lm_weights"][:MICRO, 1:] = 0.0
    return template.get_weights(), batches


def train(config, weights, batches, micro_batches, kind="lamb", strategy=None,
          steps_per_execution=1, jit_compile=False):
    """(weights, history) after one `fit` over `batches`, one update each."""
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        model = AlbertPretrainer(config, "sop", gradient_accumulation_steps=micro_batches)
        model(pretraining_batch(config.vocab_size, batch=2))
        model.set_weights(weights)
        optimizer = create_optimizer(OptimizerConfig(type=kind, learning_rate=1e-2,
                                                     warmup_steps=0, clip_norm=CLIP_NORM),
                                     decay_steps=10)
        model.compile(optimizer=optimizer, steps_per_execution=steps_per_execution,
                      jit_compile=jit_compile)
    data = tf.data.Dataset.from_tensor_slices(
        {name: np.stack([batch[name] for batch in batches]) for name in batches[0]})
    history = model.fit(data, epochs=1, steps_per_epoch=len(batches), verbose=0)
    return model.get_weights(), history.history


def assert_same_weights(actual, expected, atol=1e-5):
    for index, (got, want) in enumerate(zip(actual, expected)):
        np.testing.assert_allclose(got, want, atol=atol, rtol=1e-4, err_msg=f"weight {index}")


def test_the_first_step_is_clipped_and_micro_batch_means_differ(tiny_config, start,
                                                                record_property):
    """The set-up makes the test able to fail: clipping is active at step 1, and averaging
    the micro-batches' own normalised losses does not give the batch's gradient."""
    weights, batches = start
    model = AlbertPretrainer(tiny_config, "sop")
    model(pretraining_batch(tiny_config.vocab_size, batch=2))
    model.set_weights(weights)

    def gradient(*pieces):
        """The gradient of the mean of the pieces' own losses, as one vector."""
        with tf.GradientTape() as tape:
            loss = tf.add_n([model.compute_pretraining_loss(piece, model(piece, training=True))
                             for piece in pieces]) / len(pieces)
        return tf.concat([tf.reshape(tf.convert_to_tensor(part), [-1])
                          for part in tape.gradient(loss, model.trainable_variables)], 0)

    batch = {name: tf.constant(value) for name, value in batches[0].items()}
    whole = gradient(batch)
    above(record_property, "first gradient's norm / clip norm", float(tf.norm(whole)) / CLIP_NORM,
          2)
    # The first micro-batch holds about a third of the others' predictions, so its own mean
    # weighs each of them about three times as much as theirs: over seeds 0-49 the gradients
    # differed by 7% to 78% (median 29%). (The losses' means alone can agree by chance: on 4
    # of those seeds they differed by less than 0.01.)
    naive = gradient(*[{name: value[i * MICRO:(i + 1) * MICRO] for name, value in batch.items()}
                       for i in range(4)])
    above(record_property, "|micro-batch means' gradient - the batch's| / |the batch's|",
          float(tf.norm(naive - whole) / tf.norm(whole)), 0.02)


@pytest.mark.parametrize("kind", ["lamb", "adamw"])
def test_four_micro_batches_of_8_equal_one_batch_of_32(tiny_config, start, kind):
    weights, batches = start
    whole, whole_history = train(tiny_config, weights, batches, 1, kind)
    accumulated, history = train(tiny_config, weights, batches, 4, kind)
    assert_same_weights(accumulated, whole)
    assert not np.allclose(whole[0], weights[0])
    for name in whole_history:  # the logged loss and metrics too
        np.testing.assert_allclose(history[name], whole_history[name], rtol=1e-5, err_msg=name)


@pytest.mark.slow
def test_accumulation_under_two_replicas_several_steps_per_execution_and_xla(
        tiny_config, start, two_cpu_strategy):
    weights, batches = start
    whole, _ = train(tiny_config, weights, batches, 1)
    mirrored, _ = train(tiny_config, weights, batches, 2, strategy=two_cpu_strategy,
                        steps_per_execution=3)
    assert_same_weights(mirrored, whole, atol=2e-5)
    compiled, _ = train(tiny_config, weights, batches, 4, jit_compile=True,
                        steps_per_execution=3)
    assert_same_weights(compiled, whole, atol=2e-5)


def test_mixed_float16_accumulates_unscaled_gradients(tiny_config, seed, record_property):
    """Under a LossScaleOptimizer each micro-batch's loss is scaled and its gradients
    unscaled: the accumulated gradient is the float32 one (to float16 precision), not
    32768 times it (which LAMB's and Adam's scale invariance would hide in the weights).
    Seed 0 gives `start`'s weights and first batch."""
    from albert_tf.models.accumulation import accumulate

    batch = pretraining_batch(tiny_config.vocab_size, seed=20 + seed, batch=4 * MICRO)
    batch["masked_lm_weights"][:MICRO, 1:] = 0.0
    batch = {name: tf.constant(value) for name, value in batch.items()}
    exact = AlbertPretrainer(tiny_config, "sop")
    exact(pretraining_batch(tiny_config.vocab_size, batch=2))
    randomize_weights(exact, seed=11 + seed)
    weights = exact.get_weights()
    with tf.GradientTape() as tape:
        loss = exact.compute_pretraining_loss(batch, exact(batch, training=True))
    expected = [tf.convert_to_tensor(g) for g in tape.gradient(loss, exact.trainable_variables)]
    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = AlbertPretrainer(tiny_config, "sop", gradient_accumulation_steps=4)
        model(pretraining_batch(tiny_config.vocab_size, batch=2))
        model.set_weights(weights)
        model.compile(optimizer=create_optimizer(OptimizerConfig(warmup_steps=0), 10),
                      jit_compile=False)
        assert isinstance(model.optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
        denominators = model.loss_denominators(batch)
        gradients, total, _ = accumulate(
            model, batch, 4,
            lambda piece: model.loss_and_statistics(piece, denominators, training=True))
        history = model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=1,
                            steps_per_epoch=2, verbose=0).history
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)
    np.testing.assert_allclose(float(total), float(loss), rtol=1e-2)
    got, want = (np.concatenate([np.ravel(g) for g in grads]) for grads in (gradients, expected))
    below(record_property, "|gradient norm / float32's - 1|",
          abs(np.linalg.norm(got) / np.linalg.norm(want) - 1), 2e-2)
    above(record_property, "cosine to the float32 gradient",
          got @ want / (np.linalg.norm(got) * np.linalg.norm(want)), 0.999)
    assert np.all(np.isfinite(history["loss"]))


def test_batches_that_do_not_split_are_refused(tmp_path):
    from albert_tf.config.pretraining import pretrain_config_from_mapping
    from albert_tf.loop.distribute import check_global_batch

    with pytest.raises(ConfigError, match="gradient_accumulation_steps' must be positive"):
        pretrain_config_from_mapping({"train": {"gradient_accumulation_steps": 0}}, "test")
    config = pretrain_config_from_mapping(
        {"train": {"global_batch_size": 36, "gradient_accumulation_steps": 8}}, "test")
    with pytest.raises(ConfigError, match="multiple of the 1 replicas of distribution.strategy "
                                          "'default' times the 8 micro-batches"):
        check_global_batch(config, tf.distribute.get_strategy())
