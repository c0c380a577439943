"""A folder one command owns: its lock (two real processes, stale locks), its record (the run
and the names it writes), refusals that name what differs, and --overwrite deleting only
the recorded files."""

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from albert_tf.io.owned_folder import (
    LOCK_FILE,
    RECORD_FILE,
    FolderError,
    FolderLock,
    owned_folder,
    read_record,
    run_differences,
)

RUN = {"options": {"seed": 1, "length": 64}, "inputs": ["a.txt"]}
OWN = ["build.json", "train-*.tfrecord"]


def _write(folder, *names):
    for name in names:
        (folder / name).write_text(name)


def _contents(folder):
    return {path.name: path.read_text() for path in folder.iterdir()}


def test_a_new_folder_is_created_recorded_and_unlocked_at_the_end(tmp_path):
    folder = tmp_path / "out"
    with owned_folder(str(folder), "build", RUN, OWN) as record:
        assert (folder / LOCK_FILE).exists()
        assert record.run == RUN
    assert not (folder / LOCK_FILE).exists()
    assert read_record(str(folder)).files == sorted(OWN)
    assert json.loads((folder / RECORD_FILE).read_text())["command"] == "build"


def test_a_folder_holding_a_users_file_is_refused_and_left_as_it_was(tmp_path):
    _write(tmp_path, "precious.txt", "build.json")
    before = _contents(tmp_path)
    with pytest.raises(FolderError, match=r"files build did not write: precious\.txt"):
        with owned_folder(str(tmp_path), "build", RUN, OWN, overwrite=True):
            pytest.fail("entered")
    assert _contents(tmp_path) == before


def test_the_same_run_resumes_and_another_is_refused_naming_the_field(tmp_path):
    with owned_folder(str(tmp_path), "build", RUN, OWN):
        _write(tmp_path, "train-0.tfrecord")
    with owned_folder(str(tmp_path), "build", RUN, OWN):
        pass
    other = {**RUN, "options": {"seed": 2, "length": 64}}
    with pytest.raises(FolderError, match=r"differ in 1 field\(s\): options\.seed: 1 -> 2"):
        with owned_folder(str(tmp_path), "build", other, OWN):
            pytest.fail("entered")
    assert read_record(str(tmp_path)).run == RUN
    with pytest.raises(FolderError, match="holds the output of build, not of pretrain"):
        with owned_folder(str(tmp_path), "pretrain", RUN, OWN):
            pytest.fail("entered")


def test_a_field_that_may_differ_is_taken_over_by_the_record(tmp_path):
    with owned_folder(str(tmp_path), "pretrain", {"train": {"steps": 40}}, OWN):
        pass
    with owned_folder(str(tmp_path), "pretrain", {"train": {"steps": 80}}, OWN,
                      may_differ=["train.steps"]):
        pass
    assert read_record(str(tmp_path)).run == {"train": {"steps": 80}}


def test_overwrite_deletes_only_the_recorded_files_and_keeps_the_folder(tmp_path):
    with owned_folder(str(tmp_path), "build", RUN, OWN):
        _write(tmp_path, "build.json", "train-0.tfrecord", ".train-1.tfrecord.tmp-h-1-ab")
    _write(tmp_path, "notes.txt")  # the user's, added later
    other = {**RUN, "inputs": ["b.txt"]}
    with owned_folder(str(tmp_path), "build", other, OWN, overwrite=True):
        assert sorted(os.listdir(tmp_path)) == sorted([LOCK_FILE, RECORD_FILE, "notes.txt"])
    assert read_record(str(tmp_path)).run == other


def test_an_unrecorded_folder_of_the_commands_own_names_is_taken_over_only_if_the_same(
        tmp_path):
    _write(tmp_path, "build.json")
    with owned_folder(str(tmp_path), "build", RUN, OWN, legacy_run=lambda: RUN):
        pass
    assert read_record(str(tmp_path)).run == RUN
    (tmp_path / RECORD_FILE).unlink()
    with pytest.raises(FolderError, match="options.length: 64 -> 128"):
        with owned_folder(str(tmp_path), "build", {**RUN, "options": {"seed": 1, "length": 128}},
                          OWN, legacy_run=lambda: RUN):
            pytest.fail("entered")
    with pytest.raises(FolderError, match=r"no build recorded as its own"):
        with owned_folder(str(tmp_path), "build", RUN, OWN, legacy_run=lambda: None):
            pytest.fail("entered")
    assert sorted(os.listdir(tmp_path)) == ["build.json"]


def test_run_differences_compare_only_fields_both_runs_have():
    stored = {"a": {"b": 1, "c": [1, 2]}, "old": 1}
    assert run_differences(stored, {"a": {"b": 1, "c": (1, 2)}, "new": 2}) == []
    assert run_differences(stored, {"a": {"b": 2, "c": [1]}}, may_differ=["a.b"]) == [
        "a.c: [1, 2] -> [1]"]


def test_a_lock_held_by_a_live_process_names_its_host_and_pid(tmp_path):
    with FolderLock(str(tmp_path), "albert-data build"):
        with pytest.raises(FolderError) as raised:
            FolderLock(str(tmp_path), "albert-pretrain").acquire()
    message = str(raised.value)
    assert f"in use by albert-data build (pid {os.getpid()} on host {socket.gethostname()}" \
        in message
    assert not (tmp_path / LOCK_FILE).exists()


def _ended_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_stale_lock_of_an_ended_process_is_replaced_with_a_warning(tmp_path, capsys):
    pid = _ended_pid()
    (tmp_path / LOCK_FILE).write_text(json.dumps({
        "command": "albert-pretrain", "host": socket.gethostname(), "pid": pid,
        "started": "2026-01-01T00:00:00+00:00", "token": "0"}))
    with FolderLock(str(tmp_path), "albert-pretrain") as lock:
        assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == os.getpid()
        assert lock.holder.pid == os.getpid()
    assert f"removed the stale lock of albert-pretrain (pid {pid}" in capsys.readouterr().err


def test_a_lock_of_another_host_is_never_judged_stale(tmp_path):
    (tmp_path / LOCK_FILE).write_text(json.dumps({
        "command": "albert-pretrain", "host": "elsewhere", "pid": _ended_pid(),
        "started": "2026-01-01T00:00:00+00:00", "token": "0"}))
    with pytest.raises(FolderError, match="on host elsewhere"):
        FolderLock(str(tmp_path), "albert-pretrain").acquire()


def test_a_lock_file_naming_no_holder_is_reported(tmp_path):
    (tmp_path / LOCK_FILE).write_text("")
    with pytest.raises(FolderError, match="names no holder"):
        FolderLock(str(tmp_path), "albert-pretrain").acquire()


# Each process takes the folder, says so, and holds it until told to go on (a line on stdin).
_CONTENDER = textwrap.dedent("""
    import sys
    from albert_tf.io.owned_folder import FolderError, owned_folder
    try:
        with owned_folder(sys.argv[1], "build", {"seed": 1}, ["out.txt"]):
            print("held", flush=True)
            sys.stdin.readline()
    except FolderError as error:
        print("refused", error, flush=True)
""")


def test_of_two_processes_started_on_one_folder_one_holds_it_and_one_is_refused(tmp_path):
    folder = str(tmp_path / "out")
    contenders = [subprocess.Popen([sys.executable, "-c", _CONTENDER, folder], text=True,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                  for _ in range(2)]
    first_lines = [process.stdout.readline() for process in contenders]
    for process in contenders:
        process.communicate("go\n", timeout=60)
    assert sorted(line.split()[0] for line in first_lines) == ["held", "refused"]
    refusal = next(line for line in first_lines if line.startswith("refused"))
    assert "is in use by build (pid" in refusal and socket.gethostname() in refusal
    assert sorted(os.listdir(folder)) == [RECORD_FILE]


def test_a_command_that_fails_before_writing_leaves_no_folder_and_no_record(tmp_path):
    folder = tmp_path / "new"
    with pytest.raises(RuntimeError):
        with owned_folder(str(folder), "build", RUN, OWN):
            raise RuntimeError("an input was wrong")
    assert not folder.exists()
    _write(tmp_path, "build.json")  # a folder it did not make, which it owns once written
    with pytest.raises(RuntimeError):
        with owned_folder(str(tmp_path), "build", RUN, OWN, legacy_run=lambda: RUN):
            raise RuntimeError("an input was wrong")
    assert sorted(os.listdir(tmp_path)) == ["build.json"]
