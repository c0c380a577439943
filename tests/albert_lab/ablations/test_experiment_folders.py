"""`albert-experiment run` holds its work folder (recorded as one table at one scale) and
locks its results folder while it runs."""

import os
import types

import pytest

from albert_lab.ablations.cli import experiment_folders
from albert_tf.io.owned_folder import LOCK_FILE, RECORD_FILE, FolderError, read_record


def _spec(scale="micro"):
    variants = [types.SimpleNamespace(name=name) for name in ("e64", "e128")]
    return types.SimpleNamespace(name="table4", scale=scale, variants=variants)


@pytest.fixture
def folders(tmp_path):
    work = tmp_path / "work"
    return types.SimpleNamespace(work_dir=str(work), results_dir=str(work / "results"))


def test_a_second_run_of_the_table_is_refused_while_the_first_holds_its_folders(folders):
    with experiment_folders(_spec(), folders):
        assert os.path.exists(os.path.join(folders.results_dir, LOCK_FILE))
        with pytest.raises(FolderError, match=rf"{folders.work_dir} is in use by "
                                              rf"albert-experiment \(pid {os.getpid()} on"):
            with experiment_folders(_spec(), folders):
                pytest.fail("entered")
    record = read_record(folders.work_dir)
    assert record.run == {"experiment": "table4", "scale": "micro"}
    assert record.files == ["e128", "e64", "random_start"]
    assert sorted(os.listdir(folders.work_dir)) == [RECORD_FILE, "results"]  # locks gone
    assert os.listdir(folders.results_dir) == []


def test_another_scale_of_the_table_is_refused_naming_it(folders):
    with experiment_folders(_spec(), folders):
        pass
    with pytest.raises(FolderError, match=r"holds another albert-experiment run; its settings "
                                          r"differ in 1 field\(s\): scale: 'micro' -> 'small'"):
        with experiment_folders(_spec("small"), folders):
            pytest.fail("entered")


def test_a_work_folder_holding_a_users_file_is_refused_and_left_as_it_was(folders):
    os.makedirs(folders.work_dir)
    with open(os.path.join(folders.work_dir, "notes.txt"), "w") as file:
        file.write("mine")
    with pytest.raises(FolderError, match=r"holds files albert-experiment did not write: "
                                          r"notes.txt"):
        with experiment_folders(_spec(), folders):
            pytest.fail("entered")
    assert os.listdir(folders.work_dir) == ["notes.txt"]
