"""Folders written whole (converters, exporters): locked beside while written, recorded, and
never written into a folder that holds anything."""

import json
import os

import pytest

from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.checkpoints.staging import staged_folder
from albert_tf.io.owned_folder import RECORD_FILE, FolderError, FolderLock


def test_a_staged_folder_appears_whole_with_its_record(tmp_path):
    with staged_folder(str(tmp_path / "out"), "albert-convert", {"to": "original"}) as staging:
        (tmp_path / staging / "model.ckpt").write_text("weights")
        assert not (tmp_path / "out").exists()
        assert os.path.exists(tmp_path / ".out.albert-lock")
    record = json.loads((tmp_path / "out" / RECORD_FILE).read_text())
    assert record == {"command": "albert-convert", "run": {"to": "original"},
                      "files": ["model.ckpt"]}
    assert sorted(os.listdir(tmp_path)) == ["out"]  # lock and staging gone


def test_a_second_writer_is_refused_while_the_first_writes(tmp_path):
    with FolderLock(str(tmp_path / "out"), "albert-export", str(tmp_path / ".out.albert-lock")):
        with pytest.raises(FolderError, match=r"out is in use by albert-export \(pid"):
            with staged_folder(str(tmp_path / "out"), "albert-convert"):
                pytest.fail("entered")
    assert sorted(os.listdir(tmp_path)) == []


def test_a_folder_that_holds_anything_is_refused_naming_it(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    with pytest.raises(CheckpointError, match=r"not an empty folder \(it holds notes.txt\)"):
        with staged_folder(str(tmp_path / "out"), "albert-convert"):
            pytest.fail("entered")
    assert os.listdir(tmp_path / "out") == ["notes.txt"]


def test_a_remote_folder_is_refused_before_anything_is_made(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError, match=r"gs://bucket/model: albert-export writes a "
                                              r"local folder"):
        with staged_folder("gs://bucket/model", "albert-export"):
            pytest.fail("entered")
    assert os.listdir(tmp_path) == []
