"""AlbertPretrainer: heads, losses and metrics against numpy; one step under MirroredStrategy
equals the same step on one device."""

import logging

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from helpers import pretraining_batch, randomize_weights
from numpy_reference import layer_norm

from albert_tf.layers.activations import gelu_tanh
from albert_tf.loop.optimization import OptimizerConfig, create_optimizer
from albert_tf.models.pretrainer import AlbertPretrainer

BATCH = 6  # pretraining_batch's default


@pytest.fixture(scope="module")
def pretrainer(tiny_config):
    model = AlbertPretrainer(tiny_config, "sop")
    model(pretraining_batch(tiny_config.vocab_size))
    randomize_weights(model, seed=3)
    return model


def log_softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def test_mlm_head_is_tied_to_the_word_embeddings(pretrainer, tiny_config):
    batch = pretraining_batch(tiny_config.vocab_size)
    sequence = pretrainer.encoder({k: batch[k] for k in ("input_word_ids", "input_mask",
                                                         "input_type_ids")})["sequence_output"]
    head = pretrainer.masked_lm
    gathered = np.take_along_axis(sequence.numpy(), batch["masked_lm_positions"][..., None], 1)
    hidden = gelu_tanh(gathered @ head.transform.kernel.numpy()
                       + head.transform.bias.numpy()).numpy()
    hidden = layer_norm(hidden, head.layer_norm.gamma.numpy(), head.layer_norm.beta.numpy(),
                        tiny_config.layer_norm_epsilon)
    expected = hidden @ pretrainer.encoder.get_embedding_table().numpy().T
    expected += head.output_bias.numpy()
    logits = pretrainer(batch)["mlm_logits"].numpy()
    np.testing.assert_allclose(logits, expected, atol=2e-4, rtol=1e-4)
    assert logits.dtype == np.float32


def test_losses_and_metrics_equal_numpy(pretrainer, tiny_config):
    batch = pretraining_batch(tiny_config.vocab_size, seed=1)
    outputs = pretrainer(batch)
    mlm_logits = outputs["mlm_logits"].numpy()
    sentence_logits = outputs["sentence_logits"].numpy()
    weights = batch["masked_lm_weights"]
    nll = -np.take_along_axis(log_softmax(mlm_logits), batch["masked_lm_ids"][..., None],
                              -1)[..., 0]
    labels = batch["next_sentence_labels"][:, 0]
    sentence_nll = -log_softmax(sentence_logits)[np.arange(BATCH), labels]
    expected_loss = (weights * nll).sum() / (weights.sum() + 1e-5) + sentence_nll.mean()
    loss = pretrainer.compute_pretraining_loss(batch, outputs).numpy()
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-5)

    pretrainer.compile(jit_compile=False)
    pretrainer.reset_metrics()
    metrics = {k: v.numpy() for k, v in pretrainer.test_step(batch).items()}
    mlm_correct = mlm_logits.argmax(-1) == batch["masked_lm_ids"]
    np.testing.assert_allclose(metrics["mlm_loss"], (weights * nll).sum() / weights.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(metrics["mlm_accuracy"],
                               (weights * mlm_correct).sum() / weights.sum(), rtol=1e-6)
    np.testing.assert_allclose(metrics["sentence_loss"], sentence_nll.mean(), rtol=1e-5)
    np.testing.assert_allclose(metrics["sentence_accuracy"],
                               (sentence_logits.argmax(-1) == labels).mean(), rtol=1e-6)
    # The logged loss is the objective minimized (with its +1e-5), averaged over steps.
    np.testing.assert_allclose(metrics["loss"], expected_loss, rtol=1e-6)
    other = pretraining_batch(tiny_config.vocab_size, seed=5)
    other_loss = pretrainer.compute_pretraining_loss(other, pretrainer(other)).numpy()
    metrics = {k: v.numpy() for k, v in pretrainer.test_step(other).items()}
    np.testing.assert_allclose(metrics["loss"], (loss + other_loss) / 2, rtol=1e-6)


def test_objective_none_has_no_sentence_head(tiny_config):
    model = AlbertPretrainer(tiny_config, "none")
    batch = pretraining_batch(tiny_config.vocab_size)
    assert set(model(batch)) == {"mlm_logits"}
    assert model.metric_names == ("mlm_loss", "mlm_accuracy")
    assert not any("sentence" in w.name for w in model.weights)


@pytest.mark.parametrize("kind", ["lamb", "lamb_model_garden"])
def test_objective_none_trains_everything_but_the_pooler_without_warnings(tiny_config, kind):
    """No loss reaches the pooler without a sentence objective: the step updates the rest and
    leaves it, instead of tf_keras warning about its missing gradients at every trace (the
    legacy optimizer, Model Garden's LAMB, still warns: it has no `compute_gradients`)."""
    model = AlbertPretrainer(tiny_config, "none")
    batch = pretraining_batch(tiny_config.vocab_size)
    model(batch)
    before = {weight.name: weight.numpy() for weight in model.weights}
    model.compile(optimizer=create_optimizer(OptimizerConfig(type=kind, learning_rate=1e-2,
                                                             warmup_steps=1), decay_steps=10),
                  jit_compile=False)
    warnings = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = warnings.append
    logging.getLogger("tensorflow").addHandler(handler)
    try:
        model.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=2, epochs=1,
                  verbose=0)
    finally:
        logging.getLogger("tensorflow").removeHandler(handler)
    warned = [record for record in warnings if "Gradients do not exist" in
              record.getMessage()]
    assert bool(warned) == (kind == "lamb_model_garden")
    changed = {weight.name for weight in model.weights
               if not np.array_equal(weight.numpy(), before[weight.name])}
    pooler = {name for name in before if name.startswith("pooler/")}
    assert pooler and not pooler & changed
    assert any("word_embeddings" in name for name in changed)


def test_round_trips_through_get_config(pretrainer):
    clone = AlbertPretrainer.from_config(pretrainer.get_config())
    assert clone.config == pretrainer.config
    assert clone.sentence_objective == "sop"


def _one_fit_step(strategy, config, weights, batch, steps):
    with strategy.scope():
        model = AlbertPretrainer(config, "nsp")
        model(pretraining_batch(config.vocab_size, batch=2))
        model.set_weights(weights)
        optimizer = create_optimizer(OptimizerConfig(learning_rate=1e-2, warmup_steps=1),
                                     decay_steps=10)
        model.compile(optimizer=optimizer, jit_compile=False)
    dataset = tf.data.Dataset.from_tensors(batch).repeat()
    history = model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0)
    return {k: v[-1] for k, v in history.history.items()}, model.get_weights()


def test_mirrored_two_devices_equals_one_device(tiny_config, two_cpu_strategy):
    """Global batch 6 on one device vs 3 + 3 on two logical CPUs: the replicas hold unequal
    numbers of masked predictions, so the global MLM denominator must be all-reduced."""
    batch = pretraining_batch(tiny_config.vocab_size, seed=2)
    batch["masked_lm_weights"][:3, 1:] = 0.0  # first replica: one prediction per example
    template = AlbertPretrainer(tiny_config, "nsp")
    template(batch)
    randomize_weights(template, seed=4)
    weights = template.get_weights()
    single = _one_fit_step(tf.distribute.get_strategy(), tiny_config, weights, batch, 2)
    mirrored = _one_fit_step(two_cpu_strategy, tiny_config, weights, batch, 2)
    for name, value in single[0].items():
        np.testing.assert_allclose(mirrored[0][name], value, rtol=2e-5, err_msg=name)
    for after_single, after_mirrored in zip(single[1], mirrored[1]):
        np.testing.assert_allclose(after_mirrored, after_single, atol=2e-5, rtol=1e-4)
    assert not np.allclose(single[1][0], weights[0])  # the step did change the weights


def test_mixed_bfloat16_gives_float32_logits(tiny_config):
    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = AlbertPretrainer(tiny_config, "sop")
        outputs = model(pretraining_batch(tiny_config.vocab_size))
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)
    assert outputs["mlm_logits"].dtype == tf.float32
    assert outputs["sentence_logits"].dtype == tf.float32
    assert model.encoder.get_embedding_table().dtype == tf.float32
