"""Hugging Face transformers ALBERT weights: names, exact round trips, and the same outputs from
transformers' own (TF) ALBERT loading the files we write."""

import json
import os
import re

import numpy as np
import pytest
import tensorflow as tf
from helpers import random_inputs, randomize_weights

from albert_tf.checkpoints import CheckpointError
from albert_tf.checkpoints.huggingface import (
    hf_arrays,
    load_huggingface,
    read_hf_state,
    save_huggingface,
)
from albert_tf.checkpoints.original import build_model, original_arrays
from albert_tf.config import AlbertConfig

# transformers' TF ALBERT cannot run inner_group_num > num_layers // num_groups (its head-mask
# slicing), so the shared config has 4 layers in 2 groups of 2 inner blocks.
CONFIG = AlbertConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_layers=4,
                      num_groups=2, inner_group_num=2, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=20)


def expected_state_dict_shapes():
    """The AlbertForPreTraining state dict of transformers' modeling_albert.py, written out
    by hand (torch Linear weights are [out, in])."""
    shapes = {
        "albert.embeddings.word_embeddings.weight": (50, 8),
        "albert.embeddings.position_embeddings.weight": (20, 8),
        "albert.embeddings.token_type_embeddings.weight": (2, 8),
        "albert.embeddings.LayerNorm.weight": (8,), "albert.embeddings.LayerNorm.bias": (8,),
        "albert.encoder.embedding_hidden_mapping_in.weight": (16, 8),
        "albert.encoder.embedding_hidden_mapping_in.bias": (16,),
        "albert.pooler.weight": (16, 16), "albert.pooler.bias": (16,),
        "predictions.bias": (50,), "predictions.decoder.bias": (50,),
        "predictions.dense.weight": (8, 16), "predictions.dense.bias": (8,),
        "predictions.LayerNorm.weight": (8,), "predictions.LayerNorm.bias": (8,),
        "sop_classifier.classifier.weight": (2, 16), "sop_classifier.classifier.bias": (2,),
    }
    for group in range(2):
        for inner in range(2):
            layer = f"albert.encoder.albert_layer_groups.{group}.albert_layers.{inner}."
            for name in ("attention.query", "attention.key", "attention.value",
                         "attention.dense"):
                shapes[f"{layer}{name}.weight"] = (16, 16)
                shapes[f"{layer}{name}.bias"] = (16,)
            for norm in ("attention.LayerNorm", "full_layer_layer_norm"):
                shapes[f"{layer}{norm}.weight"] = (16,)
                shapes[f"{layer}{norm}.bias"] = (16,)
            shapes[f"{layer}ffn.weight"] = (32, 16)
            shapes[f"{layer}ffn.bias"] = (32,)
            shapes[f"{layer}ffn_output.weight"] = (16, 32)
            shapes[f"{layer}ffn_output.bias"] = (16,)
    return shapes


@pytest.fixture(scope="module")
def pretrainer():
    model = build_model(CONFIG, masked_lm=True, sentence_objective="sop")
    randomize_weights(model, seed=5)
    return model


@pytest.fixture(scope="module")
def exported(pretrainer, tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("hf") / "albert")
    save_huggingface(pretrainer, folder)
    return folder


def test_state_dict_names_and_shapes(pretrainer):
    state = hf_arrays(pretrainer)
    assert {key: value.shape for key, value in state.items()} == expected_state_dict_shapes()
    ours = original_arrays(pretrainer)
    np.testing.assert_array_equal(  # torch layout: [out, in]
        state["albert.encoder.albert_layer_groups.1.albert_layers.0.ffn.weight"],
        ours["bert/encoder/transformer/group_1/inner_group_0/ffn_1/intermediate/dense/kernel"].T)
    np.testing.assert_array_equal(state["sop_classifier.classifier.weight"],
                                  ours["cls/seq_relationship/output_weights"])


def test_round_trip_through_huggingface_is_exact(pretrainer, exported):
    with open(os.path.join(exported, "config.json")) as f:
        config = json.load(f)
    assert config["architectures"] == ["AlbertForPreTraining"]
    assert (config["hidden_act"], config["num_hidden_groups"], config["inner_group_num"]) == (
        "gelu_new", 2, 2)
    model, loaded_config = load_huggingface(exported)
    assert loaded_config == CONFIG
    before, after = original_arrays(pretrainer), original_arrays(model)
    assert set(before) == set(after)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


def test_encoder_only_round_trip_uses_albert_model_names(pretrainer, tmp_path):
    save_huggingface(pretrainer.encoder, str(tmp_path / "base"))
    state, _ = read_hf_state(str(tmp_path / "base"))
    assert "embeddings.word_embeddings.weight" in state and "predictions.bias" not in state
    model, _ = load_huggingface(str(tmp_path / "base"))
    assert not hasattr(model, "masked_lm")
    for name, value in original_arrays(model).items():
        np.testing.assert_array_equal(value, original_arrays(pretrainer.encoder)[name])


def test_bad_state_dicts_are_reported_by_name(exported, tmp_path):
    from safetensors.numpy import save_file

    state, _ = read_hf_state(exported)
    state.pop("albert.pooler.bias")
    state["albert.pooler.weight"] = np.zeros((16, 8), np.float32)
    state["albert.encoder.albert_layer_groups.2.albert_layers.0.ffn.bias"] = np.zeros(32)
    folder = tmp_path / "bad"
    folder.mkdir()
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(open(os.path.join(exported, "config.json")).read())
    with pytest.raises(CheckpointError) as error:
        load_huggingface(str(folder))
    message = str(error.value)
    assert "missing (1):\n    albert.pooler.bias" in message
    assert "unexpected (1):\n    albert.encoder.albert_layer_groups.2" in message
    assert "albert.pooler.weight: checkpoint [16, 8], model [16, 16]" in message

    state, _ = read_hf_state(exported)
    state["predictions.decoder.bias"] = state["predictions.bias"] + 1
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match="ALBERT ties them"):
        load_huggingface(str(folder))

    blob = open(os.path.join(exported, "model.safetensors"), "rb").read()
    (folder / "model.safetensors").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(CheckpointError, match="truncated, corrupted"):
        load_huggingface(str(folder))


def test_an_index_reads_its_shards_and_none_outside_its_folder(exported, tmp_path):
    """A sharded checkpoint (`model.safetensors.index.json`) reads the files its weight_map
    names; a name leading out of the folder (`../secret.safetensors`) is refused, not read."""
    from safetensors.numpy import save_file

    state, _ = read_hf_state(exported)
    folder = tmp_path / "sharded"
    folder.mkdir()
    names = sorted(state)
    halves = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    for file, keys in halves.items():
        save_file({key: state[key] for key in keys}, str(folder / file))
    index = folder / "model.safetensors.index.json"
    weight_map = {key: file for file, keys in halves.items() for key in keys}
    index.write_text(json.dumps({"weight_map": weight_map}))
    read, path = read_hf_state(str(folder))
    assert path == str(index) and sorted(read) == names
    save_file({names[0]: state[names[0]]}, str(tmp_path / "secret.safetensors"))
    for outside in ("../secret.safetensors", str(tmp_path / "secret.safetensors")):
        index.write_text(json.dumps({"weight_map": {**weight_map, names[0]: outside}}))
        with pytest.raises(CheckpointError, match=re.escape(f"{index}: weight_map: {outside!r}")):
            read_hf_state(str(folder))
    index.write_text(json.dumps({"weight_map": ["not", "a", "map"]}))
    with pytest.raises(CheckpointError, match=f"{index}: not a transformers index"):
        read_hf_state(str(folder))


def test_torch_files_need_torch_only_when_read(tmp_path):
    (tmp_path / "pytorch_model.bin").write_bytes(b"not a zip")
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(CheckpointError, match="needs torch"):
            read_hf_state(str(tmp_path))
    else:
        with pytest.raises(CheckpointError, match="cannot read PyTorch file"):
            read_hf_state(str(tmp_path))


def test_transformers_albert_gives_our_outputs(pretrainer, exported):
    """A second implementation: transformers' TF ALBERT loads the files we wrote."""
    transformers = pytest.importorskip("transformers")
    from safetensors.numpy import load_file
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    os.environ["HF_HUB_OFFLINE"] = "1"
    theirs = transformers.TFAlbertForPreTraining(
        transformers.AlbertConfig.from_pretrained(exported))
    theirs.build_in_name_scope()
    # from_pretrained cannot read a PyTorch safetensors file into TF in transformers 4.5x
    # (huggingface/transformers#40028), so load the state dict the way it would.
    _, info = load_pytorch_state_dict_in_tf2_model(
        theirs, load_file(os.path.join(exported, "model.safetensors")), tf_inputs=False,
        allow_missing_keys=True, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    assert not info["mismatched_keys"]

    inputs = random_inputs([9, 6, 3], seq_length=9, vocab_size=50, seed=2, type_split=4)
    positions = np.array([[1, 3, 8], [2, 4, 5], [0, 1, 2]], np.int32)
    ours = pretrainer({**inputs, "masked_lm_positions": positions}, training=False)
    encoded = pretrainer.encoder(inputs, training=False)
    outputs = theirs(input_ids=inputs["input_word_ids"], attention_mask=inputs["input_mask"],
                     token_type_ids=inputs["input_type_ids"], output_hidden_states=True,
                     training=False)
    mask = inputs["input_mask"].numpy()[..., None]
    np.testing.assert_allclose(encoded["sequence_output"] * mask,
                               outputs.hidden_states[-1] * mask, atol=1e-5)
    np.testing.assert_allclose(ours["sentence_logits"], outputs.sop_logits, atol=1e-5)
    their_mlm = tf.gather(outputs.prediction_logits, positions, batch_dims=1)
    np.testing.assert_allclose(ours["mlm_logits"], their_mlm, atol=1e-5)
