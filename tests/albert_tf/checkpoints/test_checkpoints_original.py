"""Original TF1 checkpoints: written here from numpy with the original names, read into our
model, checked against the numpy forward pass, and written back unchanged."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf
from checkpoint_helpers import (
    GLOBAL_STEP,
    ORIGINAL_CONFIG,
    numpy_forward,
    original_arrays_from_numpy,
    restore_with_tf1_saver,
    write_tf1_checkpoint,
)
from thresholds import above

from albert_tf.checkpoints import CheckpointError
from albert_tf.checkpoints.original import load_original, read_original, save_original
from albert_tf.checkpoints.reading import read_arrays


@pytest.fixture(scope="module")
def original_checkpoint(tmp_path_factory, seed):
    folder = str(tmp_path_factory.mktemp("albert_base_v2"))
    arrays = original_arrays_from_numpy(ORIGINAL_CONFIG, seed=seed)
    write_tf1_checkpoint(folder, arrays, ORIGINAL_CONFIG)
    return folder, arrays


@pytest.fixture(scope="module")
def loaded(original_checkpoint):
    folder, _ = original_checkpoint
    return load_original(folder)


def test_loaded_model_matches_numpy_forward(original_checkpoint, loaded, seed, record_property):
    from helpers import random_inputs

    _, arrays = original_checkpoint
    model, config, step = loaded
    assert (config.num_groups, config.inner_group_num, config.num_layers) == (2, 2, 3)
    assert step == GLOBAL_STEP
    inputs = random_inputs([11, 7, 3], seq_length=11, vocab_size=61, seed=3 + seed,
                           type_split=5)
    positions = np.array([[1, 4, 9], [0, 2, 6], [1, 2, 0]], np.int32)
    outputs = model({**inputs, "masked_lm_positions": positions}, training=False)
    encoded = model.encoder(inputs, training=False)
    sequence, pooled, log_probs, logits = numpy_forward(arrays, ORIGINAL_CONFIG, inputs,
                                                        positions)
    mask = inputs["input_mask"].numpy()[..., None]  # padded positions carry no meaning
    np.testing.assert_allclose(encoded["sequence_output"] * mask, sequence * mask, atol=1e-5)
    np.testing.assert_allclose(encoded["pooled_output"], pooled, atol=1e-5)
    np.testing.assert_allclose(tf.nn.log_softmax(outputs["mlm_logits"]), log_probs, atol=1e-5)
    np.testing.assert_allclose(outputs["sentence_logits"], logits, atol=1e-5)
    # Far from the nearly linear regime of the 0.02 init, where mistakes would hide.
    above(record_property, "largest |pooled_output|", np.abs(pooled).max(), 0.3)
    above(record_property, "std of the MLM log-probabilities", np.std(log_probs), 0.3)


def test_original_round_trip_is_exact(original_checkpoint, loaded, tmp_path):
    folder, arrays = original_checkpoint
    model, _, step = loaded
    prefix = save_original(model, str(tmp_path / "exported"), global_step=step)
    written = read_arrays(prefix)
    assert set(written) == set(arrays) | {"global_step"}
    for name, value in arrays.items():
        assert written[name].dtype == np.float32
        np.testing.assert_array_equal(written[name], value, err_msg=name)
    assert int(written["global_step"]) == GLOBAL_STEP
    # The original code's own way of reading it: a TF1 Saver restoring graph variables.
    restored = restore_with_tf1_saver(prefix, {name: (value.shape, value.dtype)
                                               for name, value in written.items()})
    for name, value in arrays.items():
        np.testing.assert_array_equal(restored[name], value, err_msg=name)
    with open(tmp_path / "exported" / "albert_config.json") as f:
        assert json.load(f) == ORIGINAL_CONFIG
    # The written folder is itself an original checkpoint folder.
    model_again, _, _ = read_original(str(tmp_path / "exported"))
    assert model_again.config == loaded[1]


def test_reports_every_missing_unexpected_and_misshaped_variable(tmp_path):
    arrays = original_arrays_from_numpy(ORIGINAL_CONFIG, heads=True)
    del arrays["bert/pooler/dense/bias"]
    del arrays["bert/encoder/transformer/group_1/inner_group_1/LayerNorm_1/gamma"]
    arrays["bert/encoder/transformer/group_2/inner_group_0/LayerNorm/beta"] = np.zeros(24)
    arrays["bert/embeddings/position_embeddings"] = np.zeros((16, 12), np.float32)
    write_tf1_checkpoint(str(tmp_path), arrays, ORIGINAL_CONFIG, slots=False)
    with pytest.raises(CheckpointError) as error:
        read_original(str(tmp_path))
    message = str(error.value)
    assert "missing (2)" in message and "bert/pooler/dense/bias" in message
    assert "group_1/inner_group_1/LayerNorm_1/gamma" in message
    assert "unexpected (1)" in message and "group_2/inner_group_0/LayerNorm/beta" in message
    assert "bert/embeddings/position_embeddings: checkpoint [16, 12], model [20, 12]" in message
    # A fine-tuned checkpoint's extra variables can be skipped by pattern.
    arrays = original_arrays_from_numpy(ORIGINAL_CONFIG)
    arrays["output_weights"] = np.zeros((3, 24), np.float32)
    write_tf1_checkpoint(str(tmp_path / "finetuned"), arrays, ORIGINAL_CONFIG, slots=False)
    with pytest.raises(CheckpointError, match="unexpected .1.:\n    output_weights"):
        read_original(str(tmp_path / "finetuned"))
    read_original(str(tmp_path / "finetuned"), ignored=[r"^output_weights$"])


@pytest.mark.parametrize("damage", ["truncate_data", "corrupt_data", "truncate_index"])
def test_damaged_checkpoint_gives_a_clear_error(original_checkpoint, tmp_path, damage):
    import shutil

    source, _ = original_checkpoint
    folder = tmp_path / "damaged"
    shutil.copytree(source, folder)
    data = next(folder.glob("*.data-00000-of-00001"))
    index = next(folder.glob("*.index"))
    if damage == "truncate_data":
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 4])
    elif damage == "corrupt_data":
        blob = bytearray(data.read_bytes())
        blob[len(blob) // 5: len(blob) // 5 + 64] = bytes(64)
        data.write_bytes(bytes(blob))
    else:
        index.write_bytes(index.read_bytes()[:40])
    with pytest.raises(CheckpointError, match="truncated or corrupted"):
        load_original(str(folder))


def test_bert_layout_and_unsupported_sharing(tmp_path):
    """sharing 'none' is the original layout with one group per layer; attention-only
    sharing has no original layout and is refused by name."""
    from albert_tf.checkpoints.original import build_model, original_arrays
    from albert_tf.checkpoints.original_config import to_original_config
    from albert_tf.config import AlbertConfig

    bert = AlbertConfig(vocab_size=30, embedding_size=8, hidden_size=8, num_layers=2,
                        num_attention_heads=2, intermediate_size=16, sharing="none",
                        max_position_embeddings=16)
    model = build_model(bert, masked_lm=True, sentence_objective="nsp")
    names = original_arrays(model)
    assert "bert/encoder/embedding_hidden_mapping_in/kernel" not in names  # E == H
    assert {name.split("/")[3] for name in names if "/transformer/" in name} == {
        "group_0", "group_1"}
    assert to_original_config(bert)["num_hidden_groups"] == 2
    prefix = save_original(model, str(tmp_path / "bert"))
    loaded_model, config, _ = load_original(os.path.dirname(prefix), sentence_objective="nsp")
    assert (config.sharing, config.num_groups) == ("all", 2)
    for name, value in original_arrays(loaded_model).items():
        np.testing.assert_array_equal(value, names[name])
    with pytest.raises(CheckpointError, match="sharing 'attention'"):
        save_original(build_model(bert.replace(sharing="attention"), True, "sop"),
                      str(tmp_path / "attention"))
    assert not (tmp_path / "attention").exists()
