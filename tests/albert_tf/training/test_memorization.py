"""The memorization check (training sentence accuracy far above held-out) and the note on
passes over the training shards, with thresholds computed by hand."""

import json
import types

import numpy as np
import pytest

from albert_tf.data.validation import manifest_example_count
from albert_tf.training.memorization import (
    MIN_GAP,
    MemorizationWatch,
    memorization_warning,
    passes_note,
)


def test_the_gap_must_exceed_ten_points_and_three_standard_errors():
    # 1,280 held-out pairs at 50%: one standard error is sqrt(0.25 / 1280) = 1.40 points, so
    # 3 errors (4.2) is below MIN_GAP and 10 points decide.
    assert MIN_GAP == 0.10
    logs = {"sentence_accuracy": 0.599, "val_sentence_accuracy": 0.50}
    assert memorization_warning(logs, 1280, "at step 400") is None
    logs["sentence_accuracy"] = 0.601
    warning = memorization_warning(logs, 1280, "at step 400")
    assert warning.startswith("warning: at step 400 the sentence head is right on 60.1% of "
                              "training pairs but 50.0% of 1,280 held-out ones")
    # 100 held-out pairs: 3 errors are 15 points, so a 14-point gap is within chance.
    assert memorization_warning({"sentence_accuracy": 0.64, "val_sentence_accuracy": 0.50},
                                100, "here") is None
    assert memorization_warning({"sentence_accuracy": 0.66, "val_sentence_accuracy": 0.50},
                                100, "here") is not None


def test_nothing_to_compare_gives_no_warning():
    assert memorization_warning({"sentence_accuracy": 0.9}, 1280, "x") is None  # no eval
    assert memorization_warning({"mlm_accuracy": 0.9, "val_mlm_accuracy": 0.1}, 1280,
                                "x") is None  # no sentence objective
    assert memorization_warning({"sentence_accuracy": 0.9, "val_sentence_accuracy": 0.5}, 0,
                                "x") is None


def test_the_callback_warns_once_per_memorizing_epoch(capsys):
    watch = MemorizationWatch(heldout_examples=1280)
    watch.set_model(types.SimpleNamespace(
        optimizer=types.SimpleNamespace(iterations=types.SimpleNamespace(
            numpy=lambda: np.int64(800)))))
    watch.on_epoch_end(0, {"sentence_accuracy": 0.76, "val_sentence_accuracy": 0.50})
    watch.on_epoch_end(1, {"sentence_accuracy": 0.51, "val_sentence_accuracy": 0.50})
    assert len(watch.warnings) == 1 and "at step 800" in watch.warnings[0]
    assert "albert-pretrain: warning: at step 800" in capsys.readouterr().err
    silent = MemorizationWatch(heldout_examples=1280, enabled=False)
    silent.on_epoch_end(0, {"sentence_accuracy": 0.76, "val_sentence_accuracy": 0.50})
    assert silent.warnings == []


def test_passes_note():
    assert passes_note(195_326, 2400, 64, False) == (
        "2,400 steps x 64 read 153,600 examples of 195,326: 0.79 passes over the training "
        "shards")
    assert passes_note(36_050, 2400, 64, False).endswith(
        "4.26 passes over the training shards (each example's masks repeat; "
        "data.dynamic_masking=true draws new ones)")
    assert "masks repeat" not in passes_note(36_050, 2400, 64, True)
    assert passes_note(None, 2400, 64, False) is None


@pytest.fixture()
def shard_folders(tmp_path):
    for name, counts in (("a", [10, 7]), ("b", [5])):
        folder = tmp_path / name
        folder.mkdir()
        shards = [{"file": f"train-{i}.tfrecord", "examples": count}
                  for i, count in enumerate(counts)]
        (folder / "manifest.json").write_text(json.dumps({"shards": shards}))
        for shard in shards:
            (folder / shard["file"]).write_bytes(b"")
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "x.tfrecord").write_bytes(b"")
    return tmp_path


def test_example_count_from_the_manifests(shard_folders):
    a, b = shard_folders / "a", shard_folders / "b"
    assert manifest_example_count([str(a / "train-0.tfrecord")]) == 10
    assert manifest_example_count([str(a / "train-0.tfrecord"), str(a / "train-1.tfrecord"),
                                   str(b / "train-0.tfrecord")]) == 22
    # A file the manifests do not list: unknown.
    assert manifest_example_count([str(a / "train-0.tfrecord"),
                                   str(shard_folders / "bare" / "x.tfrecord")]) is None
    assert manifest_example_count([]) is None
