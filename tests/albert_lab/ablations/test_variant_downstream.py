"""A variant's downstream columns (`albert_lab.ablations.variant_downstream`): each missing
seed fine-tuned and kept as it finishes, task sources written once."""

from __future__ import annotations

import json
import os

import pytest

from albert_lab.ablations import prepared_data, variant_downstream
from albert_lab.ablations.table_spec import DownstreamSpec
from albert_lab.comparison import seed_loop


def _fake_scores(calls):
    """Seed k scores 0.5 + k/10 on dev and 0.45 + k/10 on test; one answer for every example
    scores 0.6, so seed 1 is stuck."""
    def fine_tune_scores(task, overrides, metric=None, label=None):
        calls.append((task, list(overrides)))
        seed = int(next(o for o in overrides if o.startswith("train.seed=")).split("=")[1])
        return {"metric": "accuracy", "split": "dev", "value": 0.5 + seed / 10,
                "test": 0.45 + seed / 10, "best_step": 10, "constant": 0.6,
                "constant_test": 0.55}
    return fine_tune_scores


def test_fine_tuning_a_variant_runs_each_missing_seed_and_keeps_it(fine_tunes_here, tmp_path):
    calls, kept = [], []
    fine_tunes_here(_fake_scores(calls))
    task = DownstreamSpec(source="bbc-news", recipe="small_model", seeds=(1, 2),
                          overrides=("train.train_steps=50",))
    (tmp_path / "source.json").write_text(json.dumps({"albert_finetune": {"task": "classify"}}))

    def fine_tune(task, entry):
        """The task's seed loop run; the entry it kept last."""
        loop = variant_downstream.variant_seed_loop(
            task, str(tmp_path), "run", "spm.model", 64, entry,
            lambda entry: kept.append(json.loads(json.dumps(entry))))
        seed_loop.run_seed_loops([loop])
        assert loop.error is None
        return kept[-1]

    entry = fine_tune(task, None)
    assert entry["task"] == "classify" and entry["value"] == pytest.approx(0.65)
    assert entry["test"] == pytest.approx(0.6) and entry["stuck"] == 1
    common = {"metric": "accuracy", "best_step": 10, "constant": 0.6, "constant_test": 0.55}
    assert entry["seeds"] == {
        "1": {**common, "value": 0.6, "test": pytest.approx(0.55), "stuck": True},
        "2": {**common, "value": 0.7, "test": pytest.approx(0.65), "stuck": False}}
    assert [len(e["seeds"]) for e in kept] == [1, 2]  # kept after every seed
    overrides = calls[0][1]
    # The small-model recipe at the run's length, then the task's own changes, then places.
    assert overrides.index("data.max_seq_length=64") < overrides.index("train.train_steps=50")
    assert "model.init_checkpoint=run" in overrides
    folder = entry["folder"]
    assert folder.startswith(os.path.join("finetune", "bbc-news-"))
    assert f"train.model_dir={os.path.join('run', folder, 'seed2')}" in calls[1][1]

    # A third seed later: only it runs.
    more = DownstreamSpec(source="bbc-news", recipe="small_model", seeds=(1, 2, 3),
                          overrides=("train.train_steps=50",))
    calls.clear()
    entry = fine_tune(more, entry)
    assert len(calls) == 1 and "train.seed=3" in calls[0][1] and entry["folder"] == folder
    assert entry["value"] == pytest.approx(0.7)

    # Another recipe: every seed anew, in another folder.
    changed = DownstreamSpec(source="bbc-news", seeds=(1,))
    calls.clear()
    fresh = fine_tune(changed, entry)
    assert len(calls) == 1 and fresh["folder"] != folder and list(fresh["seeds"]) == ["1"]
    assert not any(o.startswith("data.max_seq_length") for o in calls[0][1])  # task recipe


def test_a_task_source_is_written_once_under_the_data_folder(monkeypatch, tmp_path):
    written = []

    def write_task(source, folder):
        written.append(source)
        os.makedirs(folder)
        with open(os.path.join(folder, "source.json"), "w") as f:
            json.dump({}, f)
        return {"split": {"unit": "article"}, "label_names": {}, "splits": {}}

    monkeypatch.setattr(prepared_data, "write_task", write_task)
    monkeypatch.setattr(prepared_data, "summary_lines", lambda record: [])
    data = prepared_data.ExperimentData(spec=None, data_dir=str(tmp_path))
    task = DownstreamSpec(source="bbc-news")
    folder = data.task_folder(task)
    assert folder == str(tmp_path / "tasks" / "bbc-news") and written == ["bbc-news"]
    assert data.task_folder(task) == folder and written == ["bbc-news"]
    assert data.task_folder(DownstreamSpec(task="sst2", data_dir="mine")) == "mine"
