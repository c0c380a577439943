"""The checkpoint format of a path, read from its files (what `from_checkpoint` and other
callers use when no format is named)."""

import json

import pytest

from albert_tf.checkpoints.detection import detect_format
from albert_tf.checkpoints.reading import CheckpointError


def folder(root, name, files):
    path = root / name
    path.mkdir()
    for file_name, text in files.items():
        (path / file_name).write_text(text)
    return path


def test_each_format_is_told_by_its_files(tmp_path):
    cases = {
        "ours": {"config.yaml": "model: {}\n"},
        "finetuned": {"finetune.yaml": "task: sst2\n"},
        "original": {"albert_config.json": "{}", "model.ckpt-10.index": ""},
        "hf": {"config.json": json.dumps({"model_type": "albert"}), "spiece.model": ""},
        "keras_hub": {"config.json": json.dumps({"class_name": "AlbertBackbone"}),
                      "metadata.json": "{}"},
    }
    expected = {"ours": "ours", "finetuned": "ours", "original": "original",
                "hf": "huggingface", "keras_hub": "keras_hub"}
    for name, files in cases.items():
        assert detect_format(str(folder(tmp_path, name, files))) == expected[name], name
    run = folder(tmp_path, "run", {})
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "ckpt-5.index").write_text("")
    assert detect_format(str(run / "checkpoints" / "ckpt-5")) == "ours"
    assert detect_format(str(tmp_path / "original" / "model.ckpt-10")) == "original"


def test_a_path_that_names_no_format_says_what_was_looked_for(tmp_path):
    with pytest.raises(CheckpointError, match="no such folder or checkpoint"):
        detect_format(str(tmp_path / "missing"))
    unknown = folder(tmp_path, "garden", {"config.json": json.dumps({"hidden": 8})})
    with pytest.raises(CheckpointError, match="cannot tell the checkpoint format: expected "
                                              "config.yaml or finetune.yaml"):
        detect_format(str(unknown))
