"""A pretraining folder across commands: a finished run asked for more steps continues from
its last checkpoint (weights and optimizer state, its checkpoints kept); any other change is
refused before anything is written; a second run on the folder is refused while the first
holds it; a NaN loss stops the run with an error naming the step."""

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
import yaml
from pretraining_runs import run_mapping, write_config
from process_helpers import child_environment

from albert_tf.checkpoints.reading import CheckpointError, trackable_variable_paths
from albert_tf.cli.pretrain import main as pretrain_main
from albert_tf.config.pretraining import pretrain_config_from_mapping
from albert_tf.io.owned_folder import LOCK_FILE, RECORD_FILE
from albert_tf.training import trainer
from albert_tf.training.continuation import restore_run_checkpoint

TINY_RUN = {"steps_per_epoch": 2, "steps_per_execution": 2, "backup_every_steps": 2,
            "eval_steps": 0, "jit_compile": False}


def _mapping(shards, folder, steps):
    mapping = run_mapping(shards, folder, train_steps=steps, **TINY_RUN)
    mapping["optimizer"]["warmup_steps"] = 1
    return mapping


def _snapshot(folder):
    """{relative path: bytes} of every file under `folder`."""
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as file:
                found[os.path.relpath(path, folder)] = file.read()
    return found


def test_a_finished_run_asked_for_more_steps_continues_from_its_last_checkpoint(
        shards, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "run"
    first = trainer.run_pretraining(pretrain_config_from_mapping(
        _mapping(shards, folder, 4), "test"))
    assert first.final_step == 4
    before = _snapshot(folder / "checkpoints")
    last = tf.train.load_checkpoint(str(folder / "checkpoints" / "ckpt-4"))

    started = {}
    real_fit = trainer._fit_and_evaluate

    def record_the_start(config, strategy, model, *args):
        paths = trackable_variable_paths(tf.train.Checkpoint(model=model))
        started.update({path: variable.numpy() for path, variable in paths.items()})
        return real_fit(config, strategy, model, *args)

    monkeypatch.setattr(trainer, "_fit_and_evaluate", record_the_start)
    more = trainer.run_pretraining(pretrain_config_from_mapping(
        _mapping(shards, folder, 8), "test"))
    assert "resuming after step 4 from" in capsys.readouterr().out
    # The first new step starts from ckpt-4: every weight, the step counter and the moments.
    assert started["model/optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == 4
    # (Not state: the metrics' running sums, reset every epoch, and the learning rate the
    # schedule sets at every step.)
    compared = [path for path in started if last.has_tensor(path)
                and "_current_learning_rate" not in path and "/_trackers/" not in path]
    assert sum("optimizer/_variables" in path for path in compared) > 20  # the moments
    assert any(path.startswith("model/encoder/") for path in compared)
    for path in compared:
        np.testing.assert_array_equal(started[path], last.get_tensor(path), err_msg=path)
    assert any(started[path].any() for path in compared if "optimizer/_variables" in path)
    # It trained steps 5-8 only, and the checkpoints it had are there as they were.
    assert more.final_step == 8 and len(more.history["loss"]) == 2
    after = _snapshot(folder / "checkpoints")
    assert {name: data for name, data in after.items() if name in before
            and name != "checkpoint"} == {name: data for name, data in before.items()
                                          if name != "checkpoint"}
    assert {"ckpt-6.index", "ckpt-8.index"} <= set(after)
    stored = yaml.safe_load((folder / "config.yaml").read_text())
    assert stored["train"]["train_steps"] == 8


def test_any_other_change_is_refused_before_anything_is_written(shards, tmp_path, capsys):
    folder = tmp_path / "run"
    mapping = _mapping(shards, folder, 4)
    assert pretrain_main(["--config", write_config(tmp_path / "run.yaml", mapping)]) == 0
    before = _snapshot(folder)
    changed = _mapping(shards, folder, 8)
    changed["optimizer"]["learning_rate"] = 0.003
    changed["model"]["num_layers"] = 3
    assert pretrain_main(["--config", write_config(tmp_path / "other.yaml", changed)]) == 2
    error = capsys.readouterr().err
    assert (f"{folder} holds another albert-pretrain run; its settings differ in 2 field(s): "
            f"model.num_layers: 2 -> 3; optimizer.learning_rate: 0.002 -> 0.003") in error
    assert pretrain_main(["--config", write_config(tmp_path / "fewer.yaml",
                                                   _mapping(shards, folder, 2))]) == 2
    assert "field 'train.train_steps' (2): the run in" in capsys.readouterr().err
    assert _snapshot(folder) == before


def test_a_folder_with_a_users_files_is_refused(shards, tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    mapping = _mapping(shards, tmp_path, 4)
    assert pretrain_main(["--config", write_config(tmp_path / "run.yaml", mapping)]) == 2
    assert "holds files albert-pretrain did not write: notes.txt, run.yaml" in \
        capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "run.yaml"]


# A real albert-pretrain whose training waits for the file argv[2] once it holds its folder.
_PAUSED_RUN = """
import os, sys, time
from albert_tf.cli import pretrain
from albert_tf.training import trainer
from albert_tf.training.continuation import restore_run_checkpoint
real = trainer._fit_and_evaluate
def paused(*args):
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.05)
    return real(*args)
trainer._fit_and_evaluate = paused
sys.exit(pretrain.main(["--config", sys.argv[1]]))
"""


@pytest.mark.slow
def test_two_runs_started_on_one_folder_one_trains_and_one_is_refused(shards, tmp_path):
    folder, go = tmp_path / "run", tmp_path / "go"
    config = write_config(tmp_path / "run.yaml", _mapping(shards, folder, 4))
    env = child_environment(tmp_path)
    first = subprocess.Popen([sys.executable, "-c", _PAUSED_RUN, config, str(go)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    while not (folder / LOCK_FILE).exists():
        assert first.poll() is None, first.stdout.read()[-3000:]
        time.sleep(0.1)
    second = subprocess.run([sys.executable, "-m", "albert_tf.cli.pretrain", "--config",
                             config], env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 2, second.stderr[-3000:]
    assert f"is in use by albert-pretrain (pid {first.pid} on host" in second.stderr
    go.write_text("")
    output = first.communicate(timeout=300)[0]
    assert first.returncode == 0, output[-3000:]
    assert "finished at step 4" in output
    assert sorted(os.listdir(folder)) == [RECORD_FILE, "backup", "checkpoints", "config.yaml",
                                          "precision.json", "spm.model", "tensorboard"]
    assert sorted(os.listdir(folder / "checkpoints")) == [
        "checkpoint", "ckpt-2.data-00000-of-00001", "ckpt-2.index",
        "ckpt-4.data-00000-of-00001", "ckpt-4.index"]


def test_a_loss_that_becomes_nan_stops_the_run_with_an_error_naming_the_step(
        shards, tmp_path, capsys):
    mapping = _mapping(shards, tmp_path / "run", 8)
    mapping["optimizer"].update(learning_rate=1e30, warmup_steps=0)
    assert pretrain_main(["--config", write_config(tmp_path / "run.yaml", mapping)]) == 2
    error = capsys.readouterr().err
    assert re.search(r"albert-pretrain: error: the training loss became (nan|inf) in steps "
                     r"\d+-\d+; training stopped there", error), error
    assert not os.path.exists(tmp_path / "run" / "checkpoints" / "ckpt-8.index")


def _compiled(layers, seed):
    tf_keras.utils.set_random_seed(seed)
    inputs = tf_keras.Input((2,))
    outputs = inputs
    for width in layers:
        outputs = tf_keras.layers.Dense(width)(outputs)
    model = tf_keras.Model(inputs, outputs)
    model.compile(optimizer=tf_keras.optimizers.Adam(0.1), loss="mse")
    return model


def _weights(model):
    return [variable.numpy() for variable in [*model.weights, *model.optimizer.variables]]


def _assert_refused_and_untouched(model, prefix, missing):
    before = _weights(model)
    with pytest.raises(CheckpointError, match=rf"ckpt-1 does not fit the model; nothing was "
                                              rf"loaded\.\n  missing {missing}$"):
        restore_run_checkpoint(model, prefix)
    for old, new in zip(before, _weights(model)):
        np.testing.assert_array_equal(old, new)


def test_a_run_checkpoint_that_leaves_a_part_unrestored_is_refused_and_nothing_changes(
        tmp_path):
    """What continuing a finished run restores: a head the checkpoint lacks, or optimizer
    moments it lacks, is an error listing them (never a part left at its initial values)."""
    data = (np.ones((4, 2), np.float32), np.ones((4, 1), np.float32))
    body_only = _compiled([3], seed=0)
    body_only.fit(*data, batch_size=4, verbose=0)
    tf.train.Checkpoint(model=body_only).write(str(tmp_path / "headless" / "ckpt-1"))
    _assert_refused_and_untouched(_compiled([3, 1], seed=1),
                                  str(tmp_path / "headless" / "ckpt-1"),
                                  missing=r"\(6\):\n    model/layer_with_weights-1/bias\n"
                                          r"    model/layer_with_weights-1/kernel\n"
                                          r"(    model/optimizer/_variables/[5-8]\n?){4}")

    never_trained = _compiled([3, 1], seed=2)  # its optimizer has no moments to save
    tf.train.Checkpoint(model=never_trained).write(str(tmp_path / "weights" / "ckpt-1"))
    model = _compiled([3, 1], seed=3)
    _assert_refused_and_untouched(model, str(tmp_path / "weights" / "ckpt-1"),
                                  missing=r"\(8\):(\n    model/optimizer/_variables/\d){8}")
    model.fit(*data, batch_size=4, verbose=0)
    tf.train.Checkpoint(model=model).write(str(tmp_path / "whole" / "ckpt-1"))
    assert restore_run_checkpoint(_compiled([3, 1], seed=4), str(tmp_path / "whole" /
                                                                  "ckpt-1")) == 1
