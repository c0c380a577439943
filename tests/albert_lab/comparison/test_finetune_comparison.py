"""The measurement under every downstream figure, by hand: the test split's labels, the
constant-answer floor and the stuck flag, the one seed loop, and the pretrained-versus-random
comparison (scored on test, paired by seed, failed when the random start is stuck)."""

import json
import os

import numpy as np
import pytest
from data_helpers import write_tsv

from albert_lab.comparison import seed_loop
from albert_lab.comparison.gain import compare_starts, paired_difference, scored_split
from albert_tf.config import ConfigError
from albert_tf.config.finetuning import load_finetune_config
from albert_tf.finetuning.stuck import is_stuck, stuck_note
from albert_tf.finetuning.task_kinds import get_task
from albert_tf.task_data.examples import TaskDataError
from albert_tf.task_data.glue import read_labelled_test
from albert_tf.task_data.glue_table import folder_classification_task


def _record(dev, test=None, stuck=False):
    return {"metric": "accuracy", "value": dev, "test": test, "stuck": stuck}


def test_the_comparison_pairs_test_scores_by_seed_by_hand():
    pretrained = {"1": _record(0.60, 0.62), "2": _record(0.70, 0.66), "3": _record(0.9, 0.9)}
    random = {"1": _record(0.50, 0.50), "2": _record(0.50, 0.52)}
    found = compare_starts(pretrained, random)
    # Seeds 1 and 2 only; test differences 0.12 and 0.14: mean 0.13, sd 0.01414, t(1) 12.706.
    assert (found.split, found.paired_seeds) == ("test", 2)
    assert (found.gain, found.low, found.high) == pytest.approx((0.13, 0.0029, 0.2571),
                                                                abs=1e-4)
    assert found.verdict == "gain" and found.to_dict()["verdict"] == "gain"
    # One run without a test score: every run is compared on dev.
    random["2"] = _record(0.50)
    assert compare_starts(pretrained, random).split == "dev"
    assert scored_split({"1": _record(0.5, 0.5)}) == "test"
    assert compare_starts(pretrained, {"9": _record(0.5)}) is None


def test_a_stuck_random_start_makes_the_comparison_fail_not_a_gain():
    pretrained = {str(seed): _record(0.8, 0.8) for seed in (1, 2, 3)}
    random = {"1": _record(0.24, 0.24, stuck=True), "2": _record(0.5, 0.5),
              "3": _record(0.45, 0.46)}
    found = compare_starts(pretrained, random)
    assert found.low > 0 and found.verdict == "failed" and found.stuck_random == ("1",)
    pretrained["2"] = _record(0.24, 0.24, stuck=True)
    random["1"] = _record(0.5, 0.5)
    found = compare_starts(pretrained, random)
    assert found.stuck_pretrained == ("2",) and found.verdict == "unclear"
    behind = compare_starts({"1": _record(0.4, 0.4), "2": _record(0.41, 0.41)},
                            {"1": _record(0.5, 0.5), "2": _record(0.52, 0.52)})
    assert behind.verdict == "loss"


def test_paired_difference_has_one_home():
    from albert_lab.ablations.statistics import intervals

    assert intervals.paired_difference is paired_difference


def test_stuck_means_within_one_point_of_the_constant_answer():
    assert is_stuck(0.239, 0.239) and is_stuck(0.2489, 0.239) and is_stuck(0.1, 0.239)
    assert not is_stuck(0.2491, 0.239) and not is_stuck(0.0, None)
    assert stuck_note("accuracy", 0.468, 0.239) is None
    assert stuck_note("accuracy", 0.239, 0.239) == (
        "stuck: the best dev accuracy 23.9 is within 1 point of what one answer for every "
        "example scores (23.9); the fine-tune learned nothing from its encoder")


def _scores_by_seed(calls, fail_on=()):
    """Seed k scores 0.2k on dev, 0.2k - 0.05 on test, against a constant answer's 0.3; the
    runs of `fail_on` ((first override, seed) pairs) raise."""
    def scores(task, overrides, metric=None, label=None):
        calls.append(list(overrides))
        seed = int(overrides[-2].split("=")[1])
        if (overrides[0], seed) in fail_on:
            raise ConfigError(f"seed {seed} failed")
        return {"metric": "accuracy", "value": 0.2 * seed, "test": 0.2 * seed - 0.05,
                "best_step": 100, "constant": 0.3, "constant_test": 0.3}
    return scores


def test_the_seed_loop_runs_missing_seeds_and_keeps_each(fine_tunes_here):
    calls, kept = [], []
    fine_tunes_here(_scores_by_seed(calls))
    records = seed_loop.fine_tune_seeds("classify", ["a=1"], (1, 2, 3), "runs/x",
                                        done={"2": _record(0.9)}, keep=kept.append)
    assert [call[-2:] for call in calls] == [["train.seed=1", "train.model_dir=runs/x/seed1"],
                                             ["train.seed=3", "train.model_dir=runs/x/seed3"]]
    assert calls[0][0] == "a=1" and [list(found) for found in kept] == [["1", "2"],
                                                                        ["1", "2", "3"]]
    assert records["1"]["stuck"] and not records["3"]["stuck"]  # 0.2 and 0.6 against 0.3
    assert records["3"]["test"] == pytest.approx(0.55) and records["2"] == _record(0.9)
    assert seed_loop.DEFAULT_SEEDS == (1, 2, 3, 4, 5)


def test_a_failed_run_is_its_loops_error_and_every_other_run_is_kept(fine_tunes_here):
    calls = []
    fine_tunes_here(_scores_by_seed(calls, fail_on={("a=1", 2), ("c=1", 2)}))
    failing = seed_loop.SeedLoop("classify", ["a=1"], (1, 2, 3), "runs/a")
    other = seed_loop.SeedLoop("classify", ["b=1"], (2, 3), "runs/b")
    seed_loop.run_seed_loops([failing, other])
    assert isinstance(failing.error, ConfigError) and list(failing.records) == ["1", "3"]
    assert other.error is None and list(other.records) == ["2", "3"]
    with pytest.raises(ConfigError, match="seed 2 failed"):
        seed_loop.fine_tune_seeds("classify", ["c=1"], (2,), "runs/c")


def test_how_many_fine_tunes_run_at_once(monkeypatch):
    monkeypatch.setenv(seed_loop.WORKERS_VARIABLE, "3")
    assert seed_loop.fine_tune_workers() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(seed_loop.WORKERS_VARIABLE, bad)
        with pytest.raises(ConfigError, match="ALBERT_FINE_TUNE_WORKERS"):
            seed_loop.fine_tune_workers()
    monkeypatch.delenv(seed_loop.WORKERS_VARIABLE)
    monkeypatch.setattr(seed_loop, "usable_cpus", lambda: 1)
    assert seed_loop.fine_tune_workers() == 1
    monkeypatch.setattr(seed_loop, "usable_cpus", lambda: 8)
    assert seed_loop.fine_tune_workers() == 2  # no GPU in the tests


def _threads_here():
    import tensorflow as tf

    return (os.getpid(), tf.config.threading.get_intra_op_parallelism_threads(),
            tf.config.threading.get_inter_op_parallelism_threads())


def test_a_worker_process_serves_runs_per_process_runs_then_is_replaced():
    worker = seed_loop.WorkerProcess(runs_per_process=2)
    try:
        workers = [worker.submit(_threads_here).result() for _ in range(3)]
    finally:
        worker.close()
    pids = [found[0] for found in workers]
    assert pids[0] == pids[1] != pids[2] and os.getpid() not in pids
    assert workers[0][1:] == (0, 0)  # None keeps TensorFlow's own thread counts


def test_side_by_side_workers_share_the_cores():
    worker = seed_loop.WorkerProcess(threads=2)
    try:
        assert worker.submit(_threads_here).result()[1:] == (2, 2)
    finally:
        worker.close()


def test_an_error_after_a_run_starts_no_more_runs(fine_tunes_here):
    calls = []
    fine_tunes_here(_scores_by_seed(calls))

    def keep(records):
        raise KeyError("a keeper failed")

    with pytest.raises(KeyError):
        seed_loop.fine_tune_seeds("classify", ["a=1"], (1, 2, 3), "runs/a", keep=keep)
    assert len(calls) == 1


def test_a_fine_tune_in_a_child_process_raises_its_error_here(tmp_path):
    """The seed loop's child process (spawned, so this takes a few seconds): a bad override
    is the same ConfigError, with its message, as in this process."""
    with pytest.raises(ConfigError, match="no_such_field"):
        seed_loop.fine_tune_seeds("classify", ["train.no_such_field=1"], (1,), str(tmp_path))


@pytest.fixture()
def folder(tmp_path):
    write_tsv(tmp_path / "train.tsv", ["sentence", "label"], [("a b", "x"), ("c", "y")])
    write_tsv(tmp_path / "dev.tsv", ["sentence", "label"],
              [("a", "x"), ("b", "y"), ("c", "y"), ("d", "z")])
    write_tsv(tmp_path / "test.tsv", ["index", "sentence"], [(0, "e f"), (1, "g"), (2, "h")])
    write_tsv(tmp_path / "test_labels.tsv", ["index", "label"], [(2, "z"), (0, "x"), (1, "z")])
    (tmp_path / "source.json").write_text(json.dumps({"labels": ["x", "y", "z"]}))
    return tmp_path


def test_test_labels_are_joined_on_the_index(folder):
    task = folder_classification_task(str(folder))
    examples = read_labelled_test(task, str(folder))
    assert [(e.guid, e.text_a, e.label) for e in examples] == [
        ("0", "e f", "x"), ("1", "g", "z"), ("2", "h", "z")]


@pytest.mark.parametrize("rows, message", [
    ([(0, "x"), (0, "z"), (1, "z"), (2, "z")], r"test_labels.tsv:3: index '0' repeats"),
    ([(0, "x"), (7, "z")], r"test_labels.tsv:3: index '7' is not in the test file"),
    ([(0, "x"), (1, "z")], r"test_labels.tsv: no label for test index '2' \(1 of 3"),
    ([(0, "x"), (1, "w"), (2, "z")], r"test_labels.tsv:3: label 'w' \(column 2\) is not one"),
    ([(0, "x", "extra")], r"test_labels.tsv:2: expected 2 tab-separated columns"),
])
def test_bad_test_labels_are_named_by_file_and_line(folder, rows, message):
    write_tsv(folder / "test_labels.tsv", ["index", "label"], rows)
    with pytest.raises(TaskDataError, match=message):
        read_labelled_test(folder_classification_task(str(folder)), str(folder))


def test_the_constant_answer_scores_the_largest_class_or_no_correlation(folder):
    config = load_finetune_config(None, [f"data.data_dir={folder}"], task="classify")
    task = get_task(config)
    assert task.has_labels("test") and not task.has_labels("dev")
    assert str(folder / "test_labels.tsv") in task.source_files("test")
    dev = task.read("dev")
    labels = np.array([task.spec.labels.index(example.label) for example in dev])
    assert task.constant_score(dev, {"label": labels}) == pytest.approx(0.5)  # y: 2 of 4
    (folder / "test_labels.tsv").unlink()
    assert not task.has_labels("test") and task.read("test")[0].label is None
    similarity = get_task(load_finetune_config(None, [f"data.data_dir={folder}"], task="stsb"))
    assert similarity.constant_score([], {"label": np.array([1.0, 2.5, 4.0])}) == 0.0
