"""Task heads and models: shapes, float32 outputs, losses against numpy, the multiple-choice
paths agreeing, serialization, and one distributed step equal to a single-device step."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from helpers import random_inputs, randomize_weights

from albert_tf.config.precision import precision_policy
from albert_tf.layers.task_heads import ClassificationHead, SpanHead
from albert_tf.models.task_models import AlbertClassifier, AlbertMultipleChoice, AlbertSpanLabeler


def log_softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def batch(config, seed=0, rows=4, seq=12):
    inputs = random_inputs([seq, seq - 3, 5, seq - 1][:rows], seq, config.vocab_size, seed)
    return {name: value.numpy() for name, value in inputs.items()}


@pytest.fixture(scope="module")
def classifier(tiny_config):
    model = AlbertClassifier(tiny_config, num_classes=3, dropout_rate=0.1)
    model(batch(tiny_config))
    randomize_weights(model, seed=1)
    return model


def test_heads_serialize_and_emit_float32_under_mixed_precision():
    for head, shape in ((ClassificationHead(3, 0.2, 0.05), (2, 8)), (SpanHead(0.05), (2, 5, 8))):
        clone = type(head).from_config(head.get_config())
        assert clone.get_config() == head.get_config()
        with precision_policy("mixed_bfloat16"):
            fresh = type(head).from_config(head.get_config())
            outputs = fresh(tf.zeros(shape, tf.bfloat16))
        for output in tf.nest.flatten(outputs):
            assert output.dtype == tf.float32
    with pytest.raises(ValueError, match="num_outputs must be at least 1"):
        ClassificationHead(0)


def test_classifier_loss_is_the_mean_cross_entropy_and_outputs_keep_the_encoders(
        classifier, tiny_config):
    features = batch(tiny_config)
    features["label"] = np.array([0, 2, 1, 2], np.int32)
    outputs = classifier(features, training=False)
    assert {"sequence_output", "pooled_output", "logits", "probabilities"} <= set(outputs)
    logits = outputs["logits"].numpy()
    expected = -log_softmax(logits)[np.arange(4), features["label"]].mean()
    loss = classifier.compute_task_loss(features, outputs)
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(outputs["probabilities"].numpy().sum(-1), 1.0, rtol=1e-5)
    assert set(classifier.predict_step(features)) == {"logits"}


def test_regression_loss_is_mean_squared_error(tiny_config):
    model = AlbertClassifier(tiny_config, num_classes=1)
    features = batch(tiny_config, seed=3)
    features["label"] = np.array([0.5, 4.0, 2.5, 1.0], np.float32)
    outputs = model(features, training=False)
    predictions = outputs["predictions"].numpy()
    assert predictions.shape == (4,)
    np.testing.assert_allclose(model.compute_task_loss(features, outputs).numpy(),
                               np.mean((predictions - features["label"]) ** 2), rtol=1e-5)
    assert [metric.name for metric in model.metrics] == ["loss"]


def test_span_loss_averages_start_and_end_cross_entropy(tiny_config):
    model = AlbertSpanLabeler(tiny_config)
    features = batch(tiny_config, seed=4)
    features["start_position"] = np.array([1, 3, 0, 7], np.int32)
    features["end_position"] = np.array([2, 5, 0, 9], np.int32)
    outputs = model(features, training=False)
    rows = np.arange(4)
    start = -log_softmax(outputs["start_logits"].numpy())[rows, features["start_position"]]
    end = -log_softmax(outputs["end_logits"].numpy())[rows, features["end_position"]]
    np.testing.assert_allclose(model.compute_task_loss(features, outputs).numpy(),
                               np.mean((start + end) / 2), rtol=1e-5)
    assert outputs["start_logits"].shape == (4, 12)


def test_multiple_choice_scores_each_option_as_a_single_pair_would(tiny_config):
    model = AlbertMultipleChoice(tiny_config, num_choices=4)
    options = batch(tiny_config, seed=5)  # 4 rows = the 4 options of one question
    grouped = {name: np.stack([value, value[::-1]]) for name, value in options.items()}
    outputs = model(grouped, training=False)
    randomize_weights(model, seed=6)
    outputs = model(grouped, training=False)
    assert outputs["choice_logits"].shape == (2, 4)
    assert outputs["pooled_output"].shape == (2, 4, tiny_config.hidden_size)
    single = model(options, training=False)["option_logits"].numpy()
    np.testing.assert_allclose(outputs["choice_logits"].numpy()[0], single, rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(outputs["choice_logits"].numpy()[1], single[::-1], rtol=1e-4,
                               atol=1e-5)
    grouped["label"] = np.array([2, 0], np.int32)
    expected = -log_softmax(outputs["choice_logits"].numpy())[[0, 1], [2, 0]].mean()
    np.testing.assert_allclose(model.compute_task_loss(grouped, outputs).numpy(), expected,
                               rtol=1e-5)


def test_task_models_round_trip_their_config(classifier, tiny_config):
    for model in (classifier, AlbertMultipleChoice(tiny_config, 3, 0.2),
                  AlbertSpanLabeler(tiny_config)):
        clone = type(model).from_config(model.get_config())
        assert clone.get_config() == model.get_config()


def test_a_two_replica_step_equals_a_single_device_step(tiny_config, two_cpu_strategy):
    features = batch(tiny_config, seed=7)
    features["label"] = np.array([0, 1, 1, 0], np.int32)
    config = tiny_config.replace(hidden_dropout=0.0, attention_dropout=0.0)

    def one_step(strategy):
        with strategy.scope():
            model = AlbertClassifier(config, num_classes=2, dropout_rate=0.0)
            model(features)
            randomize_weights(model, seed=8)
            model.compile(optimizer=tf_keras.optimizers.SGD(0.1))
        dataset = tf.data.Dataset.from_tensors(features)
        model.fit(dataset, epochs=1, steps_per_epoch=1, verbose=0)
        return [weight.numpy() for weight in model.trainable_weights]

    single = one_step(tf.distribute.get_strategy())
    mirrored = one_step(two_cpu_strategy)
    for a, b in zip(single, mirrored):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_task_models_train_under_mixed_precision(tiny_config, policy):
    features = batch(tiny_config, seed=9)
    features["start_position"] = np.array([1, 2, 3, 4], np.int32)
    features["end_position"] = np.array([2, 2, 5, 6], np.int32)
    with precision_policy(policy):
        model = AlbertSpanLabeler(tiny_config)
        model.compile(optimizer=tf_keras.optimizers.SGD(0.1))
    history = model.fit(tf.data.Dataset.from_tensors(features).repeat(), epochs=1,
                        steps_per_epoch=2, verbose=0).history
    assert np.isfinite(history["loss"]).all()
    outputs = model(features, training=False)
    assert outputs["start_logits"].dtype == tf.float32
    assert model.encoder.compute_dtype == policy.removeprefix("mixed_")
    if policy == "mixed_float16":  # compile wraps the optimizer to scale the loss
        assert isinstance(model.optimizer, tf_keras.mixed_precision.LossScaleOptimizer)


def test_a_task_model_takes_an_encoder_object(tiny_encoder, tiny_config):
    """As the Model Garden's BertClassifier(network=...) and keras-hub's
    TextClassifier(backbone=...): the task model uses that very encoder."""
    model = AlbertClassifier(tiny_encoder, num_classes=3, dropout_rate=0.0)
    assert model.encoder is tiny_encoder and model.config == tiny_config
    features = batch(tiny_config, seed=10)
    outputs = model(features, training=False)
    np.testing.assert_allclose(outputs["pooled_output"],
                               tiny_encoder(features, training=False)["pooled_output"])
    assert AlbertClassifier.from_config(model.get_config()).encoder is not tiny_encoder


def test_task_models_share_the_pretrainers_step_with_accumulation(tiny_config):
    """The task models train through the same step as the pretrainer: 2 micro-batches of 2
    give the update of the batch of 4."""
    features = batch(tiny_config, seed=11)
    features["label"] = np.array([0, 1, 2, 1], np.int32)
    config = tiny_config.replace(hidden_dropout=0.0, attention_dropout=0.0)

    def one_step(micro_batches):
        model = AlbertClassifier(config, num_classes=3, dropout_rate=0.0)
        model(features)
        randomize_weights(model, seed=12)
        model.gradient_accumulation_steps = micro_batches
        model.compile(optimizer=tf_keras.optimizers.SGD(0.1), jit_compile=False)
        history = model.fit(tf.data.Dataset.from_tensors(features), epochs=1, verbose=0)
        return [weight.numpy() for weight in model.trainable_weights], history.history

    whole, whole_history = one_step(1)
    accumulated, history = one_step(2)
    for a, b in zip(whole, accumulated):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(history["loss"], whole_history["loss"], rtol=1e-5)
    np.testing.assert_allclose(history["accuracy"], whole_history["accuracy"])


def test_mean_pooling_heads_read_the_mean_of_the_real_pieces(tiny_config):
    model = AlbertClassifier(tiny_config, num_classes=3, dropout_rate=0.1, pooling="mean")
    features = batch(tiny_config, seed=7)
    outputs = model(features, training=False)
    randomize_weights(model, seed=8)
    outputs = model(features, training=False)
    sequence = outputs["sequence_output"].numpy()
    mask = features["input_mask"].astype(np.float32)
    mean = (sequence * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    kernel, bias = model.head.dense.get_weights()
    np.testing.assert_allclose(outputs["logits"].numpy(), mean @ kernel + bias, rtol=1e-4,
                               atol=1e-5)
    # Padding is not read: the shortest row alone, cut to its real pieces, scores the same.
    length = int(mask[2].sum())
    alone = {name: value[2:3, :length] for name, value in features.items()}
    np.testing.assert_allclose(model(alone, training=False)["logits"].numpy()[0],
                               outputs["logits"].numpy()[2], rtol=1e-4, atol=1e-5)
    assert AlbertClassifier.from_config(model.get_config()).pooling == "mean"
    choice = AlbertMultipleChoice(tiny_config, num_choices=4, pooling="mean")
    grouped = {name: value[None] for name, value in features.items()}
    choice(grouped, training=False)
    kernel, bias = choice.head.dense.get_weights()
    choice_mean = choice(features, training=False)["sequence_output"].numpy()
    choice_mean = (choice_mean * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    np.testing.assert_allclose(choice(grouped, training=False)["choice_logits"].numpy()[0],
                               (choice_mean @ kernel + bias)[:, 0], rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="pooling must be one of cls, mean, got 'max'"):
        AlbertClassifier(tiny_config, num_classes=2, pooling="max")
