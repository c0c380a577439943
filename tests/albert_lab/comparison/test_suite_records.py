"""The downstream suite's random-start records (`albert_lab.comparison.suite`): a random
start's finished seeds, kept in a folder committed to git, are not fine-tuned again on a
machine whose random-start folders are gone; a task folder written anew uses none of them.
The fine-tunes are replaced by a stand-in that counts them (the seed loop itself is real)."""

from __future__ import annotations

import json
import os

import pytest

from albert_lab.comparison.seed_loop import run_seed_loops
from albert_lab.comparison.suite import (
    _task_loops,
    _task_row,
    random_record_path,
    read_seed_records,
)


@pytest.fixture
def fine_tunes(stand_in_fine_tunes):
    """Every fine-tune asked for, as (start, seed); each scores by its seed."""
    return stand_in_fine_tunes(lambda overrides, seed: (
        "random" if "start=random" in overrides else "pretrained", seed))


def _task_folder(root, rows):
    folder = root / "news"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.tsv").write_text("sentence\tlabel\n" + "".join(
        f"words {index}\t{index % 2}\n" for index in range(rows)))
    (folder / "dev.tsv").write_text("sentence\tlabel\nwords\t1\n")
    return str(folder)


def _row(task_folder, machine, records, seeds, stored=None):
    """One task row on a machine whose random starts live under `machine`."""
    folders = {"pretrained": os.path.join(machine, "run", "downstream"),
               "random": os.path.join(machine, "random_starts", "5afa2fcb")}
    starts = {"pretrained": ["start=pretrained"], "random": ["start=random"]}
    loops = _task_loops("news", "classify", task_folder, [], starts, folders, seeds,
                        stored or {}, random_records=records, after_each=lambda: None)
    run_seed_loops(list(loops.values()))
    return _task_row("classify", task_folder, loops)


def test_committed_random_seeds_are_not_fine_tuned_again_on_another_machine(tmp_path,
                                                                            fine_tunes):
    task_folder = _task_folder(tmp_path / "tasks", rows=20)
    records = str(tmp_path / "committed")
    first = _row(task_folder, str(tmp_path / "machine1"), records, seeds=(1, 2))
    assert sorted(fine_tunes) == [("pretrained", 1), ("pretrained", 2), ("random", 1),
                                  ("random", 2)]
    path = random_record_path(records, "any/5afa2fcb", "news", first["data"])
    assert path == os.path.join(records, "5afa2fcb", f"news-{first['data']}.json")
    assert read_seed_records(path) == first["seeds"]["random"]
    assert read_seed_records(path)["2"]["test"] == pytest.approx(0.42)

    # Another machine: no folders, no earlier report; the records give seeds 1 and 2.
    fine_tunes.clear()
    second = _row(task_folder, str(tmp_path / "machine2"), records, seeds=(1, 2, 3))
    assert sorted(fine_tunes) == [("pretrained", 1), ("pretrained", 2), ("pretrained", 3),
                                  ("random", 3)]
    assert second["seeds"]["random"] == {**first["seeds"]["random"],
                                         "3": second["seeds"]["random"]["3"]}
    assert list(read_seed_records(path)) == ["1", "2", "3"]
    assert second["comparison"]["paired_seeds"] == 3

    # The task folder written anew: its data digest differs, so no record applies.
    fine_tunes.clear()
    task_folder = _task_folder(tmp_path / "tasks", rows=21)
    third = _row(task_folder, str(tmp_path / "machine3"), records, seeds=(1,))
    assert third["data"] != first["data"]
    assert sorted(fine_tunes) == [("pretrained", 1), ("random", 1)]
    assert list(read_seed_records(path)) == ["1", "2", "3"]  # the old data's, untouched


def test_seeds_of_an_earlier_report_are_recorded_too_and_no_records_means_no_file(
        tmp_path, fine_tunes):
    task_folder = _task_folder(tmp_path / "tasks", rows=20)
    plain = _row(task_folder, str(tmp_path / "machine"), None, seeds=(1,))
    assert not (tmp_path / "committed").exists()
    # A report made before records were kept: its random seed is written out, not re-run.
    fine_tunes.clear()
    records = str(tmp_path / "committed")
    _row(task_folder, str(tmp_path / "machine"), records, seeds=(1,), stored=plain)
    assert fine_tunes == []
    path = random_record_path(records, "5afa2fcb", "news", plain["data"])
    with open(path, encoding="utf-8") as f:
        assert json.load(f) == plain["seeds"]["random"]
