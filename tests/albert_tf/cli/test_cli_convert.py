"""`albert-convert` end to end: the released layout through every format and back, Model Garden
checkpoints into our folders, and the errors users meet."""

import os

import numpy as np
import pytest
import tensorflow as tf
import yaml
from checkpoint_helpers import (
    GLOBAL_STEP,
    ORIGINAL_CONFIG,
    original_arrays_from_numpy,
    write_tf1_checkpoint,
)
from helpers import random_inputs

from albert_tf.checkpoints import CheckpointError
from albert_tf.checkpoints.model_folder import load_encoder, load_pretrainer
from albert_tf.checkpoints.original import original_arrays
from albert_tf.checkpoints.reading import read_arrays, resolve_checkpoint
from albert_tf.cli.convert import main


@pytest.fixture(scope="module")
def released(tmp_path_factory, released_style_model):
    """A folder shaped like a released ALBERT download."""
    folder = tmp_path_factory.mktemp("released") / "albert_tiny_v2"
    arrays = original_arrays_from_numpy(ORIGINAL_CONFIG, seed=7)
    write_tf1_checkpoint(str(folder), arrays, ORIGINAL_CONFIG)
    (folder / "30k-clean.model").write_bytes(open(released_style_model, "rb").read())
    return folder, arrays


def test_original_through_every_format_and_back_is_exact(released, tmp_path, capsys):
    folder, arrays = released
    ours, hf, ours_again, back = (str(tmp_path / name) for name in
                                  ("ours", "hf", "ours_again", "back"))
    assert main(["--from", "original", "--input", str(folder), "--to", "ours",
                 "--output", ours]) == 0
    assert "step 12345" in capsys.readouterr().out
    assert main(["--from", "ours", "--input", ours, "--to", "huggingface", "--output", hf]) == 0
    assert main(["--from", "huggingface", "--input", hf, "--to", "ours",
                 "--output", ours_again]) == 0
    assert main(["--from", "ours", "--input", ours, "--to", "original", "--output", back]) == 0

    written = read_arrays(resolve_checkpoint(back))
    assert int(written.pop("global_step")) == GLOBAL_STEP
    assert set(written) == set(arrays)
    for name, value in arrays.items():
        np.testing.assert_array_equal(written[name], value, err_msg=name)
    assert (tmp_path / "back" / "30k-clean.model").read_bytes() == \
        (released[0] / "30k-clean.model").read_bytes()
    assert (tmp_path / "hf" / "spiece.model").exists()

    first, config, checkpoint = load_pretrainer(ours)
    assert checkpoint.endswith(f"ckpt-{GLOBAL_STEP}")
    assert (config.model.num_groups, config.model.inner_group_num) == (2, 2)
    assert config.sentence_objective == "sop"
    second, _, _ = load_pretrainer(ours_again)
    for name, value in original_arrays(first).items():
        np.testing.assert_array_equal(original_arrays(second)[name], value, err_msg=name)

    # Every block's output on request (3 layers x 2 inner blocks), the last one the
    # sequence output.
    inputs = random_inputs([9, 5], seq_length=9, vocab_size=61, seed=2)
    sequence = first.encoder(inputs)["sequence_output"].numpy()
    deep, _, _ = load_pretrainer(ours, return_all_layer_outputs=True)
    blocks = deep({**inputs, "masked_lm_positions": tf.zeros((2, 1), tf.int32)}
                  )["encoder_outputs"]
    encoder, _, _ = load_encoder(ours, return_all_layer_outputs=True)
    for outputs in (blocks, encoder(inputs)["encoder_outputs"]):
        assert len(outputs) == 6
        np.testing.assert_allclose(outputs[-1], sequence, atol=1e-6)
        assert not np.allclose(outputs[0], sequence, atol=1e-3)


def test_model_garden_checkpoint_to_our_folder(tmp_path, tiny_config):
    from helpers import randomize_weights

    from albert_tf.checkpoints.model_garden import model_garden_encoder

    garden = model_garden_encoder(tiny_config)
    inputs = random_inputs([7, 4], seq_length=7, vocab_size=tiny_config.vocab_size, seed=1)
    garden(inputs)
    randomize_weights(garden, seed=4)
    prefix = tf.train.Checkpoint(encoder=garden).write(str(tmp_path / "mg" / "ckpt-1"))
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(tiny_config.to_dict()))
    assert main(["--from", "model_garden", "--input", prefix, "--config", str(config_path),
                 "--to", "ours", "--output", str(tmp_path / "ours")]) == 0
    encoder, config, _ = load_encoder(str(tmp_path / "ours"))
    assert config.sentence_objective == "none"
    np.testing.assert_allclose(encoder(inputs)["pooled_output"], garden(inputs)["pooled_output"],
                               atol=1e-5)
    # The folder has no pretraining heads, and loading them says so by name.
    with pytest.raises(CheckpointError, match="encoder without pretraining heads"):
        load_pretrainer(str(tmp_path / "ours"))


def test_our_folder_with_a_changed_config_reports_every_mismatch(released, tmp_path):
    folder, _ = released
    ours = tmp_path / "ours"
    assert main(["--from", "original", "--input", str(folder), "--to", "ours",
                 "--output", str(ours)]) == 0
    config = yaml.safe_load((ours / "config.yaml").read_text())
    config["model"]["intermediate_size"] = 48
    config["model"]["num_groups"] = 1
    (ours / "config.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(CheckpointError) as error:
        load_pretrainer(str(ours))
    message = str(error.value)
    assert "nothing was loaded" in message
    assert "unexpected (" in message and "attention_blocks/2/" in message
    assert "wrong shape (" in message and "checkpoint [24, 40], model [24, 48]" in message


def test_errors_name_the_problem_and_leave_nothing_behind(released, tmp_path, capsys):
    folder, _ = released
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("user data")
    assert main(["--from", "original", "--input", str(folder), "--to", "ours",
                 "--output", str(occupied)]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert os.listdir(occupied) == ["keep.txt"]

    assert main(["--from", "original", "--input", str(tmp_path / "nowhere"), "--to", "ours",
                 "--output", str(tmp_path / "out")]) == 2
    assert "no such checkpoint" in capsys.readouterr().err
    assert main(["--from", "model_garden", "--input", str(folder), "--to", "ours",
                 "--output", str(tmp_path / "out")]) == 2
    assert "holds no config" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert [name for name in os.listdir(tmp_path) if ".tmp-" in name] == []
