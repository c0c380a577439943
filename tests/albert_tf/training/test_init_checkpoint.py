"""Continuing pretraining from a checkpoint (`init.checkpoint`): the run's model starts with
exactly the checkpoint's loss, heads can be left fresh, and a different architecture is
refused by field."""

import numpy as np
import pytest
import tensorflow as tf
from checkpoint_helpers import (
    GLOBAL_STEP,
    ORIGINAL_CONFIG,
    numpy_forward,
    original_arrays_from_numpy,
    write_tf1_checkpoint,
)
from seeding import seed_draws
from thresholds import above, below

from albert_tf.checkpoints.convert import load_model, save_model
from albert_tf.checkpoints.transfer import copy_weights, named_weights
from albert_tf.config import ConfigError
from albert_tf.config.pretraining import pretrain_config_from_mapping
from albert_tf.training.initialization import initialize_pretrainer, load_init_checkpoint
from albert_tf.training.trainer import build_pretrainer

SEQ = 11
# The run's model section for the checkpoint ORIGINAL_CONFIG describes.
MODEL = {"vocab_size": 61, "embedding_size": 12, "hidden_size": 24, "num_layers": 3,
         "num_attention_heads": 4, "intermediate_size": 40, "max_position_embeddings": 20,
         "num_groups": 2, "inner_group_num": 2}


@pytest.fixture(scope="module")
def original_folder(tmp_path_factory, seed):
    folder = str(tmp_path_factory.mktemp("released"))
    arrays = original_arrays_from_numpy(ORIGINAL_CONFIG, seed=4 + seed)
    write_tf1_checkpoint(folder, arrays, ORIGINAL_CONFIG)
    return folder, arrays


def run_config(tmp_path, **init):
    return pretrain_config_from_mapping({
        "model": {**MODEL, "hidden_dropout": 0.1},  # dropout may differ from the checkpoint
        "data": {"max_seq_length": SEQ, "max_predictions_per_seq": 3},
        "optimizer": {"type": "lamb", "warmup_steps": 1},
        "init": init,
        "train": {"model_dir": str(tmp_path / "run"), "train_steps": 10, "steps_per_epoch": 5},
    }, "test")


def fixed_batch(seed=0):
    from helpers import random_inputs

    inputs = random_inputs([11, 7, 3], seq_length=SEQ, vocab_size=61, seed=3 + seed,
                           type_split=5)
    return {**{name: tf.constant(value) for name, value in inputs.items()},
            "masked_lm_positions": tf.constant([[1, 4, 9], [0, 2, 6], [1, 2, 0]], tf.int32),
            "masked_lm_ids": tf.constant([[5, 17, 60], [8, 3, 44], [21, 9, 0]], tf.int32),
            "masked_lm_weights": tf.constant([[1, 1, 1], [1, 1, 1], [1, 1, 0]], tf.float32),
            "next_sentence_labels": tf.constant([[0], [1], [1]], tf.int32)}


def original_loss(arrays, batch) -> float:
    """The original code's total loss, from the numpy forward pass: MLM
    sum(w * nll) / (sum(w) + 1e-5) plus the mean sentence cross-entropy."""
    _, _, log_probs, logits = numpy_forward(arrays, ORIGINAL_CONFIG, batch,
                                            batch["masked_lm_positions"].numpy())
    ids, weights = batch["masked_lm_ids"].numpy(), batch["masked_lm_weights"].numpy()
    nll = -np.take_along_axis(log_probs, ids[..., None], axis=-1)[..., 0]
    mlm = np.sum(weights * nll) / (np.sum(weights) + 1e-5)
    labels = batch["next_sentence_labels"].numpy()[:, 0]
    shifted = logits - logits.max(-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return mlm - np.mean(log_softmax[np.arange(len(labels)), labels])


def started_model(config):
    loaded = load_init_checkpoint(config)
    model = build_pretrainer(config)
    messages = initialize_pretrainer(model, config, [], loaded)
    return model, messages


def step_zero_loss(model, batch) -> float:
    return float(model.compute_pretraining_loss(batch, model(batch, training=False)))


def test_a_run_from_an_original_checkpoint_starts_at_its_loss(original_folder, tmp_path, seed,
                                                              record_property):
    folder, arrays = original_folder
    model, [message] = started_model(run_config(tmp_path, checkpoint=folder,
                                                checkpoint_format="original"))
    assert f"step {GLOBAL_STEP}" in message and "left as initialized" not in message
    batch = fixed_batch(seed)
    expected = original_loss(arrays, batch)
    # A real loss, not a near-zero coincidence.
    above(record_property, "the original's loss at the run's start", expected, 1.0)
    np.testing.assert_allclose(step_zero_loss(model, batch), expected, rtol=1e-5)


def test_a_run_from_a_converted_checkpoint_starts_at_the_same_loss(original_folder, tmp_path):
    folder, arrays = original_folder
    converted = str(tmp_path / "converted")
    save_model(load_model("original", folder), "ours", converted)
    model, _ = started_model(run_config(tmp_path, checkpoint=converted))
    # The folder's checkpoint path works too, as for albert-finetune.
    by_path, _ = started_model(run_config(
        tmp_path, checkpoint=f"{converted}/checkpoints/ckpt-{GLOBAL_STEP}"))
    batch = fixed_batch()
    expected = original_loss(arrays, batch)
    np.testing.assert_allclose(step_zero_loss(model, batch), expected, rtol=1e-5)
    assert step_zero_loss(by_path, batch) == step_zero_loss(model, batch)


def test_ignored_heads_start_fresh_and_the_unigram_bias_fills_only_what_is_fresh(
        original_folder, tmp_path, seed, record_property):
    folder, arrays = original_folder
    config = run_config(tmp_path, checkpoint=folder, checkpoint_format="original",
                        ignore=["^sentence_head/"], mlm_output_bias="unigram")
    seed_draws(seed)  # the fresh head's initial weights
    model, [message] = started_model(config)
    assert "left as initialized: sentence_head (2)" in message
    kernel = model.sentence_head.dense.kernel.numpy()
    assert not np.allclose(kernel.T, arrays["cls/seq_relationship/output_weights"])
    # The 0.02 initializer, not the checkpoint's unit scale.
    below(record_property, "fresh head's weights' std", np.std(kernel), 0.05)
    np.testing.assert_allclose(model.masked_lm.output_bias.numpy(),
                               arrays["cls/predictions/output_bias"], rtol=1e-6)


def test_every_differing_architecture_field_is_named(original_folder, tmp_path):
    folder, _ = original_folder
    config = run_config(tmp_path, checkpoint=folder, checkpoint_format="original")
    config = pretrain_config_from_mapping(
        {**config.to_dict(), "model": {**MODEL, "hidden_size": 32, "num_groups": 1}}, "test")
    with pytest.raises(ConfigError) as raised:
        load_init_checkpoint(config)
    assert "model.hidden_size: run 32, checkpoint 24" in str(raised.value)
    assert "model.num_groups: run 1, checkpoint 2" in str(raised.value)


def test_bad_init_fields_are_named(tmp_path):
    with pytest.raises(ConfigError, match="init.checkpoint_format' must be one of ours"):
        run_config(tmp_path, checkpoint="x", checkpoint_format="tf1")
    with pytest.raises(ConfigError, match="init.ignore': '\\(' is not a regular expression"):
        run_config(tmp_path, ignore=["("])


def test_copy_weights_reports_what_it_did_and_refuses_other_shapes(tiny_config):
    from albert_tf.checkpoints.original import build_model
    from albert_tf.checkpoints.reading import CheckpointError

    encoder = build_model(tiny_config, masked_lm=False, sentence_objective="none")
    pretrainer = build_model(tiny_config, masked_lm=True, sentence_objective="sop")
    report = copy_weights(encoder, pretrainer)
    assert report.copied == sorted(named_weights(encoder)) and not report.dropped
    assert {name.split("/")[0] for name in report.fresh} == {"masked_lm", "sentence_head"}
    for name, variable in named_weights(encoder).items():
        np.testing.assert_array_equal(named_weights(pretrainer)[name].numpy(), variable.numpy())
    back = copy_weights(pretrainer, build_model(tiny_config, False, "none"))
    assert {name.split("/")[0] for name in back.dropped} == {"masked_lm", "sentence_head"}
    wider = build_model(tiny_config.replace(intermediate_size=tiny_config.intermediate_size * 2),
                        masked_lm=False, sentence_objective="none")
    with pytest.raises(CheckpointError, match="wrong shape") as raised:
        copy_weights(encoder, wider)
    assert "intermediate/kernel" in str(raised.value)


def test_a_probe_trains_only_the_unfrozen_parts(original_folder, tmp_path):
    """init.freeze: a sentence probe on a pretrained model moves the pooler and the sentence
    head and leaves every other weight as the checkpoint had it."""
    from albert_tf.loop.optimization import create_optimizer
    from albert_tf.training.initialization import freeze_parts

    folder, _ = original_folder
    config = run_config(tmp_path, checkpoint=folder, checkpoint_format="original",
                        ignore=["^sentence_head/"],
                        freeze=["encoder.embedding", "encoder.transformer", "masked_lm"])
    model, _ = started_model(config)
    [message] = freeze_parts(model, config.init.freeze)
    assert message.startswith("frozen: encoder.embedding, encoder.transformer, masked_lm")
    parameters = [*model.encoder.weights, *model.masked_lm.weights,
                  *model.sentence_head.weights]
    before = [weight.numpy() for weight in parameters]
    model.compile(optimizer=create_optimizer(config.optimizer, 10))
    model.fit(tf.data.Dataset.from_tensors(fixed_batch()).repeat(), steps_per_epoch=3,
              verbose=0)
    trained = {id(weight) for weight in (*model.encoder.pooler.weights,
                                         *model.sentence_head.weights)}
    for weight, start in zip(parameters, before):
        changed = not np.array_equal(weight.numpy(), start)
        assert changed == (id(weight) in trained), weight.name
    with pytest.raises(ConfigError, match="init.freeze' must be one of encoder"):
        run_config(tmp_path, freeze=["decoder"])
