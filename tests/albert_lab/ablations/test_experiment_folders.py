"""`albert-experiment run` holds its work folder (recorded as one table at one scale) and
locks its results folder while it runs."""

import json
import os
import types

import pytest
from repository import REPOSITORY

from albert_lab.ablations.cli import main as experiment_main
from albert_lab.ablations.work_folder import experiment_folders
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
    assert record.files == ["e128", "e64", "random_start", "results"]
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


def _unrecorded_work_folder(work_dir, report_folder="results", scale="micro"):
    """A work folder as runs made before folder records left it: a variant run, and the
    report of a run given `--results_dir <work_dir>/<report_folder>`."""
    os.makedirs(os.path.join(work_dir, "e64"))
    with open(os.path.join(work_dir, "e64", "result.json"), "w") as file:
        file.write("{}")
    report = os.path.join(work_dir, report_folder)
    os.makedirs(os.path.join(report, "records"))
    with open(os.path.join(report, "results.json"), "w") as file:
        json.dump({"experiment": "table4", "scale": scale, "variants": []}, file)
    return _tree(work_dir)


def _tree(folder):
    return sorted((path, sorted(names), sorted(files)) for path, names, files in os.walk(folder))


def test_a_work_folder_made_before_records_is_taken_over_with_its_results_folder(folders):
    """The results folder inside it is the run's own `--results_dir` and its report is of
    this table and scale: the folder is recorded as the table's and nothing in it changes.
    (Before, `results` was refused as a file albert-experiment did not write.)"""
    before = _unrecorded_work_folder(folders.work_dir)
    with experiment_folders(_spec(), folders):
        assert os.path.exists(os.path.join(folders.results_dir, LOCK_FILE))
    record = read_record(folders.work_dir)
    assert record.run == {"experiment": "table4", "scale": "micro"}
    assert "results" in record.files
    os.remove(os.path.join(folders.work_dir, RECORD_FILE))
    assert _tree(folders.work_dir) == before


def test_a_work_folder_made_before_records_with_another_scales_report_is_refused(folders):
    before = _unrecorded_work_folder(folders.work_dir, scale="small")
    with pytest.raises(FolderError, match=rf"{folders.work_dir} holds another albert-experiment "
                                          r"run; its settings differ in 1 field\(s\): scale: "
                                          r"'small' -> 'micro'"):
        with experiment_folders(_spec(), folders):
            pytest.fail("entered")
    assert _tree(folders.work_dir) == before


def test_a_report_folder_that_is_not_the_runs_results_dir_is_named_with_what_to_do(
        folders, tmp_path):
    """Its report elsewhere, the run would refuse `results` as a file it did not write: the
    error says what the folder holds and the two ways on."""
    before = _unrecorded_work_folder(folders.work_dir)
    folders.results_dir = str(tmp_path / "reports")
    old = os.path.join(folders.work_dir, "results")
    with pytest.raises(FolderError) as refusal:
        with experiment_folders(_spec(), folders):
            pytest.fail("entered")
    assert str(refusal.value) == (
        f"{old} holds a report of albert-experiment (table4 at scale micro), made before work "
        f"folders were recorded, but this run writes its report to {folders.results_dir}; to "
        f"go on with that report, give --results_dir {old}, else move {old} out of "
        f"{folders.work_dir} (nothing was changed)")
    assert _tree(folders.work_dir) == before
    assert not os.path.exists(folders.results_dir)


@pytest.mark.parametrize("results_in_work", ["", ".", "e64", "random_start"])
def test_a_results_dir_that_is_the_work_folder_or_one_of_its_runs_is_refused_naming_both(
        folders, results_in_work):
    """Before, the work folder as --results_dir met its own lock: 'in use by
    albert-experiment (pid <its own>)'."""
    folders.results_dir = os.path.join(folders.work_dir, results_in_work)
    with pytest.raises(FolderError) as refusal:
        with experiment_folders(_spec(), folders):
            pytest.fail("entered")
    shared = (f"is the work folder itself (--work_dir {folders.work_dir})"
              if results_in_work in ("", ".") else
              f"is the folder of the run '{results_in_work}' in the work folder "
              f"{folders.work_dir}")
    assert str(refusal.value) == (
        f"--results_dir {folders.results_dir} {shared}; expected a folder of the report's "
        f"own, outside the work folder (the default is experiments/results/table4/micro) or "
        f"a new folder inside it, e.g. --results_dir {folders.work_dir}/results (nothing was "
        f"changed)")
    assert not os.path.exists(folders.work_dir)


def test_albert_experiment_run_with_the_work_folder_as_results_dir_says_so(tmp_path, capsys):
    work = str(tmp_path / "work")
    assert experiment_main(["run", os.path.join(REPOSITORY, "experiments",
                                                "table4_embedding_size.yaml"),
                            "--work_dir", work, "--results_dir", work,
                            "--data_dir", str(tmp_path / "data")]) == 2
    error = capsys.readouterr().err
    assert f"--results_dir {work} is the work folder itself (--work_dir {work})" in error
    assert "in use by" not in error
    assert os.listdir(tmp_path) == []
