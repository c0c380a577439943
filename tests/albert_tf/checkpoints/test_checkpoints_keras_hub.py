"""keras-hub presets: written by `albert-convert --to keras_hub`, loaded by keras-hub itself in
a Keras 3 process with the same outputs as our encoder, read back exactly, and the layouts
keras-hub cannot hold refused by name."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import random_inputs, randomize_weights
from thresholds import above

from albert_tf.checkpoints.convert import load_model
from albert_tf.checkpoints.keras_hub import keras_hub_config
from albert_tf.checkpoints.original import build_model, original_arrays
from albert_tf.cli.convert import main as convert_main
from albert_tf.config import AlbertConfig, ConfigError

pytest.importorskip("keras_hub", reason="keras-hub is in the test extra")

# 4 layers in 2 groups of 2 inner blocks, E != H.
CONFIG = AlbertConfig(vocab_size=56, embedding_size=16, hidden_size=32, num_layers=4,
                      num_attention_heads=4, intermediate_size=64, max_position_embeddings=24,
                      num_groups=2, inner_group_num=2)

KERAS_3_SCRIPT = """
import json, os, sys
import numpy as np
import keras, keras_hub
folder, inputs_path, outputs_path = sys.argv[1:]
assert keras.__version__.startswith("3."), keras.__version__
backbone = keras_hub.models.AlbertBackbone.from_preset(folder)
inputs = dict(np.load(inputs_path))
outputs = backbone({"token_ids": inputs["input_word_ids"], "segment_ids":
                    inputs["input_type_ids"], "padding_mask": inputs["input_mask"]})
arrays = {k: np.asarray(v) for k, v in outputs.items()}
if os.path.exists(os.path.join(folder, "tokenizer.json")):
    tokenizer = keras_hub.models.AlbertTokenizer.from_preset(folder)
    arrays["ids"] = np.asarray(tokenizer("the cafe was in 1995"))
np.savez(outputs_path, **arrays)
"""


def run_in_keras_3(folder, inputs, tmp_path):
    """Our inputs through keras-hub's AlbertBackbone.from_preset, in its own process."""
    inputs_path, outputs_path = str(tmp_path / "inputs.npz"), str(tmp_path / "outputs.npz")
    np.savez(inputs_path, **{name: np.asarray(value) for name, value in inputs.items()})
    environment = {key: value for key, value in os.environ.items()
                   if key != "TF_USE_LEGACY_KERAS"}
    finished = subprocess.run([sys.executable, "-c", KERAS_3_SCRIPT, folder, inputs_path,
                               outputs_path], capture_output=True, text=True, env=environment)
    assert finished.returncode == 0, finished.stderr[-3000:]
    return dict(np.load(outputs_path))


@pytest.fixture(scope="module")
def encoder(seed):
    model = build_model(CONFIG, masked_lm=False, sentence_objective="none")
    randomize_weights(model, seed=5 + seed)
    return model


@pytest.fixture(scope="module")
def inputs(seed):
    return random_inputs([13, 9, 4], seq_length=13, vocab_size=56, seed=3 + seed, type_split=5)


def test_the_compared_encoder_is_far_from_the_linear_regime(encoder, inputs, record_property):
    """Under the 0.02 init every layer is nearly linear and a wrong activation would still
    match keras-hub to 1e-5; the compared encoder's outputs are not."""
    pooled = encoder(inputs, training=False)["pooled_output"]
    above(record_property, "largest |pooled_output|", np.abs(pooled).max(), 0.3)


def test_keras_hub_loads_the_preset_with_our_outputs_and_it_reads_back_exactly(
        encoder, inputs, released_style_model, tmp_path, capsys):
    import sentencepiece as spm

    from albert_tf.checkpoints.model_folder import save_model_folder

    ours, preset, back = (str(tmp_path / name) for name in ("ours", "preset", "back"))
    save_model_folder(encoder, ours, global_step=7, spm_model=released_style_model)
    assert convert_main(["--from", "ours", "--input", ours, "--to", "keras_hub",
                         "--output", preset]) == 0
    assert {"config.json", "model.weights.h5", "tokenizer.json"} <= set(os.listdir(preset))
    assert json.load(open(os.path.join(preset, "config.json")))["class_name"] == \
        "AlbertBackbone"

    expected = encoder(inputs, training=False)
    found = run_in_keras_3(preset, inputs, tmp_path)
    mask = np.asarray(inputs["input_mask"])[..., None]
    np.testing.assert_allclose(found["sequence_output"] * mask,
                               expected["sequence_output"] * mask, atol=1e-5)
    np.testing.assert_allclose(found["pooled_output"], expected["pooled_output"], atol=1e-5)
    # The tokenizer went with it: keras-hub's pieces are SentencePiece's own.
    processor = spm.SentencePieceProcessor(model_file=released_style_model)
    assert found["ids"].tolist() == processor.encode("the cafe was in 1995")

    # And back: the same weights, the tokenizer found in the preset's assets.
    loaded = load_model("keras_hub", preset)
    assert loaded.config == CONFIG and loaded.spm_model.endswith("vocabulary.spm")
    for name, value in original_arrays(encoder).items():
        np.testing.assert_array_equal(original_arrays(loaded.model)[name], value, err_msg=name)
    assert convert_main(["--from", "keras_hub", "--input", preset, "--to", "ours",
                         "--output", back]) == 0
    assert "encoder only" in capsys.readouterr().out


def test_equal_embedding_and_hidden_widths_write_an_identity_projection(tmp_path):
    config = CONFIG.replace(embedding_size=32)
    model = build_model(config, masked_lm=False, sentence_objective="none")
    randomize_weights(model, seed=6)
    assert model.embedding.projection is None
    from albert_tf.checkpoints.keras_hub import save_keras_hub

    save_keras_hub(model, str(tmp_path / "preset"))
    # keras-hub reads it back (in its own process) as the same weights: the identity
    # projection is an exact no-op, so the encoder's outputs are unchanged.
    assert not os.path.exists(tmp_path / "preset" / "tokenizer.json")  # no SentencePiece model
    inputs = random_inputs([8, 5], seq_length=8, vocab_size=56, seed=1)
    loaded = load_model("keras_hub", str(tmp_path / "preset"))
    assert loaded.model.embedding.projection is None and loaded.spm_model is None
    for name, value in original_arrays(model).items():
        np.testing.assert_array_equal(original_arrays(loaded.model)[name], value, err_msg=name)
    np.testing.assert_array_equal(loaded.model(inputs)["pooled_output"],
                                  model(inputs)["pooled_output"])


@pytest.mark.parametrize("change, message", [
    ({"num_layers": 3}, "model.num_layers (3) is not a multiple of model.num_groups (2)"),
    ({"sharing": "attention", "num_groups": 1, "inner_group_num": 1},
     "model.sharing is 'attention'; keras-hub fixes 'all'"),
    ({"hidden_activation": "gelu_exact"}, "model.hidden_activation is 'gelu_exact'"),
])
def test_layouts_keras_hub_cannot_hold_are_refused_by_name(change, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        keras_hub_config(CONFIG.replace(**change))
