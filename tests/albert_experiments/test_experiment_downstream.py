"""A table's downstream columns: the task specs, fine-tuning per seed with resume, the Avg
column, and the claims judged on it with an interval paired by seed (all by hand; the
end-to-end run is in test_experiments.py)."""

from __future__ import annotations

import json
import os

import pytest

from albert_experiments import prepared_data, variant_downstream
from albert_experiments.spec import DownstreamSpec, ExperimentError, _downstream
from albert_experiments.statistics.downstream_average import (
    DOWNSTREAM_AVERAGE,
    as_fraction,
    downstream_average,
    seed_averages,
)
from albert_experiments.statistics.intervals import paired_difference, proportions_difference
from albert_experiments.statistics.verdicts import Claim, judge, parse_claims, verdicts_markdown
from albert_tf.comparison import seed_loop
from albert_tf.comparison.gain import compare_starts
from albert_tf.comparison.suite import suite_average
from albert_tf.config import ConfigError


def test_paired_difference_is_students_t_interval_by_hand():
    # Differences 0.1 and 0.3: mean 0.2, sd 0.1414, t(1) = 12.706 -> 0.2 +- 1.2706.
    assert paired_difference([0.6, 0.8], [0.5, 0.5]) == pytest.approx((0.2, -1.0706, 1.4706))
    # Differences 1, 2, 3, 4: mean 2.5, sd 1.2910, t(3) = 3.182 -> 2.5 +- 2.0540.
    assert paired_difference([1, 2, 3, 4], [0, 0, 0, 0]) == pytest.approx(
        (2.5, 0.4460, 4.5540), abs=1e-4)
    assert paired_difference([0.7], [0.5]) == pytest.approx((0.2, 0.2, 0.2))
    with pytest.raises(ValueError, match="equally long"):
        paired_difference([0.1, 0.2], [0.1])


def test_proportions_difference_is_the_normal_interval_by_hand():
    # se = sqrt(.2 * .8 / 1e4 + .18 * .82 / 1e4) = 0.0055462; 1.96 se = 0.0108703.
    assert proportions_difference(0.20, 10_000, 0.18, 10_000) == pytest.approx(
        (0.02, 0.0091297, 0.0308703), abs=1e-6)
    # Against a fixed 50%: only the first side varies.
    assert proportions_difference(0.58, 400, 0.5, 0) == pytest.approx(
        (0.08, 0.031632, 0.128368), abs=1e-6)


@pytest.mark.parametrize("item, message", [
    ({"task": "sst2"}, "exactly one of a task folder"),
    ({"source": "bbc-news", "data_dir": "x"}, "exactly one of a task folder"),
    ({"source": "imdb"}, "source' must be one of bbc-news"),
    ({"source": "bbc-news", "recipe": "tiny"}, "recipe' must be one of task, small_model"),
    ({"source": "bbc-news", "seeds": [1, 1]}, "seeds' must be a non-empty list of different"),
    ({"source": "bbc-news", "seeds": []}, "seeds' must be a non-empty list"),
    ({"source": "bbc-news", "seeds": ["1"]}, "seeds' must be a non-empty list"),
])
def test_bad_downstream_tasks_are_named(item, message):
    with pytest.raises(ConfigError, match=message):
        _downstream([item], "t.yaml: downstream")


def test_downstream_tasks_read_their_seeds_and_are_named_by_label_source_or_task():
    tasks = _downstream([{"source": "bbc-news", "seeds": [1, 2, 3], "recipe": "small_model"},
                         {"task": "sst2", "data_dir": "glue/SST-2", "seeds": 4},
                         {"source": "fine-foods", "label": "foods"}], "t.yaml")
    assert [task.name for task in tasks] == ["bbc-news", "sst2", "foods"]
    assert tasks[0].seeds == (1, 2, 3) and tasks[1].seeds == (4,) and tasks[2].seeds == (1,)
    with pytest.raises(ExperimentError, match="two tasks with the same name"):
        _downstream([{"source": "bbc-news"}, {"source": "bbc-news"}], "t.yaml")


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


def test_fine_tuning_a_variant_runs_each_missing_seed_and_keeps_it(monkeypatch, tmp_path):
    calls, kept = [], []
    monkeypatch.setattr(seed_loop, "fine_tune_in_child", _fake_scores(calls))
    task = DownstreamSpec(source="bbc-news", recipe="small_model", seeds=(1, 2),
                          overrides=("train.train_steps=50",))
    (tmp_path / "source.json").write_text(json.dumps({"albert_finetune": {"task": "classify"}}))
    def snapshot(entry):
        kept.append(json.loads(json.dumps(entry)))

    entry = variant_downstream.fine_tune_variant(task, str(tmp_path), "run", "spm.model", 64,
                                                 None, snapshot)
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
    entry = variant_downstream.fine_tune_variant(more, str(tmp_path), "run", "spm.model", 64,
                                                 entry, kept.append)
    assert len(calls) == 1 and "train.seed=3" in calls[0][1] and entry["folder"] == folder
    assert entry["value"] == pytest.approx(0.7)

    # Another recipe: every seed anew, in another folder.
    changed = DownstreamSpec(source="bbc-news", seeds=(1,))
    calls.clear()
    fresh = variant_downstream.fine_tune_variant(changed, str(tmp_path), "run", "spm.model",
                                                 64, entry, kept.append)
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


def _variant(name, scores):
    """A finished variant with per-task, per-seed dev scores."""
    return {"name": name, "metrics": {}, "downstream": {
        task: {"metric": "accuracy", "value": sum(by_seed.values()) / len(by_seed),
               "seeds": {seed: {"value": value} for seed, value in by_seed.items()}}
        for task, by_seed in scores.items()}}


def test_the_average_column_and_the_seed_averages_by_hand():
    result = _variant("a", {"news": {"1": 0.80, "2": 0.90, "3": 0.70},
                            "squad": {"1": 60.0, "2": 70.0}})  # SQuAD prints percent
    assert as_fraction(85.0) == 0.85 and as_fraction(-0.2) == -0.2
    # news: mean 0.80; squad: 0.65 -> Avg 0.725. Per seed: (0.8+0.6)/2, (0.9+0.7)/2.
    assert downstream_average(result, ["news", "squad"]) == pytest.approx(0.725)
    assert seed_averages(result, ["news", "squad"]) == pytest.approx({"1": 0.7, "2": 0.8})
    assert downstream_average(result, ["news", "race"]) is None
    assert seed_averages(result, ["news", "race"]) == {}


def test_downstream_claims_pair_the_variants_by_seed():
    results = {"a": _variant("a", {"t1": {"1": 0.80, "2": 0.82, "3": 0.90},
                                   "t2": {"1": 0.60, "2": 0.62, "3": 0.60}}),
               "b": _variant("b", {"t1": {"1": 0.70, "2": 0.74, "3": 0.80},
                                   "t2": {"1": 0.60, "2": 0.60, "3": 0.56}})}
    claim = Claim("a beats b", DOWNSTREAM_AVERAGE, "a", "b", "higher")
    verdict = judge(claim, results, ["t1", "t2"])
    # Per-seed averages a: .70 .72 .75, b: .65 .67 .68 -> differences .05 .05 .07:
    # mean 0.056667, sd 0.011547, t(2) 4.303 -> half width 0.028687.
    assert (verdict.difference, verdict.low, verdict.high) == pytest.approx(
        (0.056667, 0.027980, 0.085354), abs=1e-5)
    assert verdict.outcome == "shown" and verdict.samples == 3
    assert judge(Claim("", DOWNSTREAM_AVERAGE, "a", "b", "lower"), results,
                 ["t1", "t2"]).outcome == "contradicted"
    # Seeds that only one side finished are left out; one common seed gives no interval.
    del results["b"]["downstream"]["t1"]["seeds"]["2"]
    del results["b"]["downstream"]["t1"]["seeds"]["3"]
    single = judge(claim, results, ["t1", "t2"])
    assert single.samples == 1 and single.outcome == "not shown"
    assert "(no interval)" in verdicts_markdown([single])
    assert judge(claim, {"a": results["a"]}, ["t1", "t2"]).outcome == "not run"


def test_a_claim_may_name_several_metrics_but_downstream_has_no_chance():
    claims = parse_claims([{"claim": "x", "metric": [DOWNSTREAM_AVERAGE, "mlm_accuracy"],
                            "compare": ["a", "b"], "expect": "higher"}], ["a", "b"], "t.yaml",
                          ExperimentError)
    assert [claim.metric for claim in claims] == [DOWNSTREAM_AVERAGE, "mlm_accuracy"]
    with pytest.raises(ExperimentError, match="has no chance level"):
        parse_claims([{"metric": DOWNSTREAM_AVERAGE, "compare": ["a", "chance"],
                       "expect": "higher"}], ["a"], "t.yaml", ExperimentError)


def test_binomial_p_values_by_hand():
    from albert_experiments.statistics.intervals import binomial_p_value
    # 9 of 10 at 50%: the counts 0, 1, 9, 10 are as unlikely: (1 + 10 + 10 + 1) / 1024.
    assert binomial_p_value(9, 10) == pytest.approx(22 / 1024)
    assert binomial_p_value(10, 10) == pytest.approx(2 / 1024)
    assert binomial_p_value(5, 10) == pytest.approx(1.0)
    # 2 of 3 at 25%: P = 1/64 27/64 27/64 9/64 for 3, 0, 1, 2 hits -> 1 + 9 of 64.
    assert binomial_p_value(2, 3, 0.25) == pytest.approx(10 / 64)
    with pytest.raises(ValueError, match="successes <= trials"):
        binomial_p_value(11, 10)


def _sentence_result(name, label, nsp=None, sop=None):
    metrics = {"nsp_accuracy": nsp, "sop_accuracy": sop}
    return {"name": name, "label": label, "metrics": metrics,
            "heldout_counts": {"sop": {"examples": 200, "masked_tokens": 5000},
                               "nsp": {"examples": 400}}}


def test_a_cross_task_claim_compares_one_models_task_with_anothers():
    results = {"sop": _sentence_result("sop", "SOP", nsp=0.60, sop=0.80),
               "nsp": _sentence_result("nsp", "NSP", nsp=0.90, sop=0.52)}
    claims = parse_claims([{"claim": "one-way", "metric": "nsp_accuracy",
                            "second_metric": "sop_accuracy", "compare": ["sop", "nsp"],
                            "expect": "higher"}], ["sop", "nsp"], "t.yaml", ExperimentError)
    verdict = judge(claims[0], results)
    # SOP model on NSP: .60 of 400; NSP model on SOP: .52 of 200.
    # se = sqrt(.6 * .4 / 400 + .52 * .48 / 200) = sqrt(.001848) = 0.042988;
    # 1.96 se = 0.084256.
    assert (verdict.difference, verdict.low, verdict.high) == pytest.approx(
        (0.08, -0.004256, 0.164256), abs=1e-5)
    assert verdict.outcome == "not shown" and verdict.samples == 400
    assert "| sop on nsp_accuracy - nsp on sop_accuracy |" in verdicts_markdown([verdict])
    with pytest.raises(ExperimentError, match="second_metric compares one held-out accuracy"):
        parse_claims([{"metric": "nsp_accuracy", "second_metric": DOWNSTREAM_AVERAGE,
                       "compare": ["sop", "nsp"], "expect": "higher"}], ["sop", "nsp"],
                     "t.yaml", ExperimentError)


def test_the_report_tests_each_sentence_accuracy_against_chance_and_lists_the_trend():
    from albert_experiments.report import chance_markdown, trend_markdown
    results = [_sentence_result("sop", "SOP", nsp=0.6, sop=0.8),
               {**_sentence_result("none", "None"), "trend": [
                   {"step": 500, "mlm_accuracy": 0.1, "nsp_accuracy": None,
                    "sop_accuracy": None},
                   {"step": 1000, "mlm_accuracy": 0.15, "nsp_accuracy": None,
                    "sop_accuracy": None}]}]
    lines = chance_markdown(results).splitlines()
    assert len(lines) == 4  # header, rule, the SOP model's two cells; None has no head
    from albert_experiments.statistics.intervals import binomial_p_value
    assert lines[2] == f"| SOP | NSP | 240 / 400 | 60.0 | {binomial_p_value(240, 400):.2g} |"
    assert lines[3].startswith("| SOP | SOP | 160 / 200 | 80.0 |")
    trend = trend_markdown(results).splitlines()
    assert trend[2:] == ["| None | 500 | 10.0 | – | – |", "| None | 1,000 | 15.0 | – | – |"]
    assert chance_markdown([_sentence_result("none", "None")]) == ""


def _suite_row(pretrained, random, stuck=()):
    """A suite task row by hand: dev scores by seed (no test labels), `stuck` random seeds."""
    seeds = {start: {str(seed): {"metric": "accuracy", "value": value, "test": None,
                                 "stuck": start == "random" and seed in stuck}
                     for seed, value in enumerate(values, 1)}
             for start, values in (("pretrained", pretrained), ("random", random))}
    return {"task": "classify", "metric": "accuracy", "seeds": seeds, "baseline": {"dev": 0.9},
            "comparison": compare_starts(seeds["pretrained"], seeds["random"]).to_dict()}


def test_the_suite_average_leaves_out_failed_tasks_and_counts_every_stuck_run():
    rows = {"news": _suite_row([0.6, 0.8], [0.5, 0.5]),
            "reviews": _suite_row([0.9, 0.9], [0.57, 0.7], stuck=(1,))}
    assert rows["reviews"]["comparison"]["verdict"] == "failed"
    average = suite_average(rows)
    # Only news: differences 0.1 and 0.3 (as the t-interval test above).
    assert (average["gain"], average["gain_low"], average["gain_high"]) == pytest.approx(
        (0.2, -1.0706, 1.4706), abs=1e-4)
    assert average["failed"] == ["reviews"] and average["stuck"] == {"pretrained": 0,
                                                                     "random": 1}
    assert average["split"] == "dev" and average["pretrained"] == pytest.approx(0.7)
    assert suite_average({"reviews": rows["reviews"]}) is None
