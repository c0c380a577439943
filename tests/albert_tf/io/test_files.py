"""Atomic writes: temporary names no other writer shares, created without following a link."""

import os
import socket

import pytest

from albert_tf.io import files


def test_a_temporary_name_carries_the_host_the_pid_and_a_random_part(tmp_path):
    path = str(tmp_path / "shard.tfrecord")
    first, second = files.temporary_name(path), files.temporary_name(path)
    assert os.path.dirname(first) == str(tmp_path)
    prefix = f".shard.tfrecord.tmp-{socket.gethostname()}-{os.getpid()}-"
    assert os.path.basename(first).startswith(prefix)
    assert first != second  # two writers of one process (threads) differ too


def test_an_atomic_write_leaves_the_file_and_no_temporary(tmp_path):
    path = tmp_path / "a" / "out.json"
    files.atomic_write_bytes(str(path), b"{}")
    assert path.read_bytes() == b"{}"
    assert os.listdir(path.parent) == ["out.json"]


def test_a_failed_write_leaves_nothing(tmp_path):
    path = tmp_path / "out.bin"
    with pytest.raises(RuntimeError):
        with files.atomic_output(str(path)) as file:
            file.write(b"half")
            raise RuntimeError("stopped")
    assert os.listdir(tmp_path) == []


def test_a_link_planted_at_the_temporary_name_is_not_followed(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's")
    planted = tmp_path / ".out.bin.tmp-planted"
    planted.symlink_to(victim)
    monkeypatch.setattr(files, "temporary_name", lambda path: str(planted))
    with pytest.raises(FileExistsError):
        files.atomic_write_bytes(str(tmp_path / "out.bin"), b"attacker's bytes")
    assert victim.read_text() == "the user's"
    assert planted.is_symlink()  # someone else's name: not removed either
    assert not (tmp_path / "out.bin").exists()


def test_listdir_is_sorted(tmp_path):
    for name in ("b", "a", "c"):
        (tmp_path / name).write_text("")
    assert files.listdir(str(tmp_path)) == ["a", "b", "c"]
