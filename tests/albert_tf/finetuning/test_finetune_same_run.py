"""A fine-tuning folder holds one run: the settings it was made with are compared with those
asked for, except paths, device and display fields, and fields it predates; folders made
before runs were recorded are compared through their finetune.yaml."""

import os

import pytest
import yaml

from albert_tf.config import ConfigError
from albert_tf.config.finetuning import load_finetune_config, recipe_path
from albert_tf.finetuning.same_run import finetuning_folder
from albert_tf.io.owned_folder import RECORD_FILE, FolderError


def _config(model_dir, *overrides):
    return load_finetune_config(recipe_path("sst2"), [f"train.model_dir={model_dir}",
                                                      *overrides], task="sst2")


def _store(model_dir, mapping):
    model_dir.mkdir(exist_ok=True)
    (model_dir / "finetune.yaml").write_text(yaml.safe_dump(mapping))


def _enter(config):
    with finetuning_folder(config):
        pass


def test_an_empty_folder_and_the_same_settings_pass(tmp_path):
    _enter(_config(tmp_path / "new"))
    assert (tmp_path / "new" / RECORD_FILE).exists()
    _enter(_config(tmp_path / "new"))
    _store(tmp_path / "run", _config(tmp_path / "run").to_dict())  # an unrecorded run
    _enter(_config(tmp_path / "run"))


def test_paths_devices_display_and_newer_fields_are_not_compared(tmp_path):
    stored = _config("elsewhere/run", "model.init_checkpoint=elsewhere/pretrained",
                     "model.spm_model=elsewhere/spm.model", "data.data_dir=elsewhere/SST-2",
                     "train.verbose=2", "train.steps_per_execution=10",
                     "distribution.strategy=mirrored").to_dict()
    del stored["optimizer"]["bias_correction"]  # a run made before the field existed
    _store(tmp_path / "run", stored)
    _enter(_config(tmp_path / "run", "model.init_checkpoint=here/pretrained",
                   "optimizer.bias_correction=true", "train.steps_per_execution=2"))


@pytest.mark.parametrize("recorded", [False, True])
def test_another_recipe_is_an_error_naming_each_field(tmp_path, recorded):
    _store(tmp_path / "run", _config(tmp_path / "run").to_dict())
    if recorded:
        _enter(_config(tmp_path / "run"))
    asked = _config(tmp_path / "run", "optimizer.learning_rate=0.5", "train.train_steps=7",
                    "optimizer.warmup_steps=2", "model.classifier_dropout=0.3")
    with pytest.raises(FolderError) as error:
        _enter(asked)
    message = str(error.value)
    assert message.startswith(f"{tmp_path / 'run'} holds another albert-finetune run; its "
                              f"settings differ in 4 field(s): ")
    for field in ("model.classifier_dropout: ", "optimizer.learning_rate: ",
                  "optimizer.warmup_steps: ", "train.train_steps: "):
        assert field in message
    assert "-> 0.5" in message and "-> 7" in message


def test_precision_is_compared_as_written_not_as_resolved(tmp_path):
    """A run made with `auto` on a CPU that resolved it to bfloat16 continues with `auto` on
    any machine; asked for with a written policy, it is refused."""
    _store(tmp_path / "run", _config(tmp_path / "run").to_dict())
    (tmp_path / "run" / "precision.json").write_text(
        '{"setting": "auto", "starts": [{"start_step": 0, "policy": "mixed_bfloat16"}]}')
    assert _config(tmp_path / "run").train.precision == "auto"
    _enter(_config(tmp_path / "run"))
    with pytest.raises(FolderError, match="train.precision: 'auto' -> 'mixed_bfloat16'"):
        _enter(_config(tmp_path / "run", "train.precision=mixed_bfloat16"))


@pytest.mark.parametrize("text, expected", [
    ("- a list\n", r"finetune\.yaml: the top level must be a mapping of field: value, got list"),
    ("model: {vocab_size: 3\ntrain: [\n",  # line 2: a key inside the open brace
     r"finetune\.yaml:2: invalid YAML"),
    ("", r"finetune\.yaml is empty: expected the settings albert-finetune writes"),
])
def test_a_damaged_settings_file_is_an_error_naming_it(tmp_path, text, expected):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "finetune.yaml").write_text(text)
    with pytest.raises(ConfigError, match=expected):
        _enter(_config(tmp_path / "run"))


def test_a_folder_with_other_files_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "train.tsv").write_text("a\t1\n")
    with pytest.raises(FolderError, match="holds files albert-finetune did not write: "
                                          "train.tsv"):
        _enter(_config(tmp_path / "run"))


def test_a_second_command_is_refused_while_one_holds_the_folder(tmp_path):
    config = _config(tmp_path / "run")
    with finetuning_folder(config):
        (tmp_path / "run" / "finetune.yaml").write_text("written by the first")
        with pytest.raises(FolderError, match=rf"{tmp_path / 'run'} is in use by "
                                              rf"albert-finetune \(pid {os.getpid()} on host"):
            _enter(config)
    assert sorted(os.listdir(tmp_path / "run")) == [RECORD_FILE, "finetune.yaml"]
    assert (tmp_path / "run" / "finetune.yaml").read_text() == "written by the first"
