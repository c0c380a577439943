"""The recipe study's arithmetic (`albert_lab/studies/recipe_study.py`): equal-FLOP step
budgets, the pairing against the reference run, the budget curve, all by hand."""

import json
import os

import pytest
from repository import REPOSITORY

from albert_lab.studies import recipe_study


@pytest.fixture(scope="module")
def study():
    return recipe_study


def test_every_shape_gets_the_reference_flops_within_one_step_unit(study, monkeypatch):
    monkeypatch.chdir(REPOSITORY)  # the study's paths are relative to the repository
    reference = study.REFERENCE["steps"] * study.step_flops(64, 4)
    assert study.budget_steps(study.VARIANTS["h64_l4"]) == study.REFERENCE["steps"]
    for name, variant in study.VARIANTS.items():
        steps = study.budget_steps(variant)
        assert steps % study.STEP_UNIT == 0 and steps >= study.STEP_UNIT, name
        spent = steps * study.variant_step_flops(variant)
        unit = study.STEP_UNIT * study.variant_step_flops(variant)
        if steps > study.STEP_UNIT:  # the largest shapes get one unit, whatever it costs
            assert abs(spent - variant.budget * reference) <= unit / 2, name
    # A wider output layer costs FLOPs, so the E levers and 30% masking get fewer steps.
    assert (study.budget_steps(study.VARIANTS["e_128"])
            < study.budget_steps(study.VARIANTS["e_64"]) < study.REFERENCE["steps"])
    assert study.budget_steps(study.VARIANTS["mask_30"]) < study.REFERENCE["steps"]
    # So does a larger vocabulary: 30,000 pieces get fewer steps than 16,000.
    assert (study.budget_steps(study.VARIANTS["vocab_30k"])
            < study.budget_steps(study.VARIANTS["vocab_16k"]) < study.REFERENCE["steps"])
    assert study.budget_steps(study.VARIANTS["budget_x4"]) == 4 * study.REFERENCE["steps"]


def _report(pretrained, random=None):
    """A suite report: task -> seed -> (dev, test) of the pretrained start; the random
    start's the same unless given; gains as `albert-experiment downstream` writes them."""
    tasks = {}
    for task, seeds in pretrained.items():
        rows = {"pretrained": {seed: {"value": dev, "test": test}
                               for seed, (dev, test) in seeds.items()}}
        rows["random"] = {seed: {"value": dev, "test": test}
                          for seed, (dev, test) in (random or pretrained)[task].items()}
        tasks[task] = {"seeds": rows, "comparison": {"gain": 0.1, "low": 0.0, "high": 0.2,
                                                     "verdict": "gain"}}
    return {"recipe_name": "small_model_v9", "tasks": tasks,
            "average": {"gain": 0.05, "gain_low": -0.01, "gain_high": 0.11}}


def test_a_variant_is_paired_with_the_reference_run_seed_by_seed(study):
    reference = _report({"a": {"1": (0, 0.50), "2": (0, 0.60)},
                         "b": {"1": (0, 0.70), "2": (0, 0.80)}})
    variant = _report({"a": {"1": (0, 0.60), "2": (0, 0.60), "3": (0, 0.9)},
                       "b": {"1": (0, 0.80), "2": (0, 1.00), "3": (0, 0.9)}})
    # Seeds both have: per seed the mean over a and b, 0.70 - 0.60 and 0.80 - 0.70, so
    # +10.0 with no spread: the interval is the mean itself.
    assert study.against_reference(variant, reference) == "+10.0 [+10.0, +10.0]"
    variant["tasks"]["a"]["seeds"]["pretrained"]["2"]["test"] = 0.80
    # Differences 0.10 and 0.20: mean 0.15, sd 0.0707, t(1) 12.706 -> +-0.635.
    assert study.against_reference(variant, reference) == "+15.0 [-48.5, +78.5]"
    assert study.against_reference(_report({"c": {"1": (0, 0.5)}}), reference) == "–"


def _finished(folder, report, steps, step_flops):
    folder.mkdir(parents=True)
    (folder / "downstream.json").write_text(json.dumps(report))
    (folder / "pretraining.json").write_text(json.dumps({
        "train_steps": steps, "step_flops": step_flops, "seconds": steps * 0.3,
        "heldout": {"mlm_accuracy": 0.13, "sentence_accuracy": 0.51}}))


def test_the_budget_curves_need_two_points_of_a_shape_and_list_them_in_order(
        study, tmp_path, monkeypatch):
    reference = tmp_path / "reference"
    levers = tmp_path / "levers"
    report = _report({"a": {"1": (0, 0.5)}})
    monkeypatch.setattr(study, "reference_step_flops", lambda: 10)
    _finished(reference, report, 2400, 10)
    _finished(levers / "budget_x2", report, 4800, 10)
    # H 128 x 4 at 3.3 times the step FLOPs: 720 steps are x0.99 of the reference's FLOPs.
    _finished(levers / "h128_l4", report, 720, 33)
    # The reference run is the one of the levers' fine-tuning recipe.
    monkeypatch.setattr(study, "reference_report", lambda recipe: str(
        (reference if recipe == "small_model_v9" else tmp_path / "other") / "downstream.json"))
    assert study.write_budget_curve(str(tmp_path / "nothing")) == []
    written = study.write_budget_curve(str(levers))
    assert [os.path.basename(path) for path in written] == list(study.CURVE_FILES)
    rows = [line for line in open(written[0]).read().splitlines() if line.startswith("| H ")]
    # H 128 x 4 has one point, so no curve yet.
    assert rows == ["| H 64 x 4 | h64_l4 | x1.0 | 2400 | 0.20 | 13.0 | 51.0 | "
                    "+10.0 [+0.0, +20.0] | +5.0 [-1.0, +11.0] |",
                    "| H 64 x 4 | budget_x2 | x2.0 | 4800 | 0.40 | 13.0 | 51.0 | "
                    "+10.0 [+0.0, +20.0] | +5.0 [-1.0, +11.0] |"]
    assert open(written[1], "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert "fine-tuned with `small_model_v9`" in open(written[0]).read()
    _finished(levers / "h128_l4_dynamic_x4", report, 2880, 33)
    markdown, curves = study.budget_curve(str(levers))
    assert [point["name"] for point in curves["H 128 x 4"]] == ["h128_l4", "h128_l4_dynamic_x4"]
    assert [round(point["budget"], 2) for point in curves["H 128 x 4"]] == [0.99, 3.96]
    assert "| H 128 x 4 | h128_l4_dynamic_x4 | x4.0 | 2880 | 0.24 |" in markdown
    # A point fine-tuned with another recipe is not on the curve, and without the
    # reference run of that recipe one lever of H 64 x 4 is no curve.
    (levers / "h128_l4" / "downstream.json").write_text(
        json.dumps({**report, "recipe_name": "small_model_v8"}))
    monkeypatch.setattr(study, "reference_report", lambda recipe: str(tmp_path / "other"))
    assert study.budget_curve(str(levers)) is None


def test_each_recipe_s_study_is_compared_with_its_own_reference_run(study, tmp_path,
                                                                   monkeypatch):
    assert study.reference_report("small_model_v2").endswith("shape_grid/h64_l4/downstream.json")
    assert study.reference_report("small_model_v4") == (
        "experiments/results/recipe_study/small_model_v4/h64_l4/downstream.json")
    assert study.RESULTS == f"experiments/results/recipe_study/{study.SMALL_MODEL}"
    monkeypatch.chdir(tmp_path)
    variant = _report({"a": {"1": (0, 0.60)}})
    assert study.against_reference_cell(variant) == "–"  # no reference run of v9 yet
    reference = tmp_path / "experiments/results/recipe_study/small_model_v9/h64_l4"
    reference.mkdir(parents=True)
    (reference / "downstream.json").write_text(json.dumps(_report({"a": {"1": (0, 0.50)}})))
    assert study.against_reference_cell(variant) == "+10.0 [+10.0, +10.0]"


def test_the_probe_column_is_the_mean_feature_gap_averaged_over_the_tasks(study, tmp_path):
    def scores(test):
        return {"mean": {"test": test}, "pooled": {"test": 0.0}}

    (tmp_path / "probe.json").write_text(json.dumps({"tasks": {
        "a": {"pretrained": scores(0.70), "random": {"1": scores(0.60), "2": scores(0.62)}},
        "b": {"pretrained": scores(0.50), "random": {"1": scores(0.55)}}}}))
    # a: 0.70 - 0.61 = +9.0; b: 0.50 - 0.55 = -5.0; the mean of the two, +2.0 points.
    assert study.probe_cell(str(tmp_path)) == "+2.0"
    assert study.probe_cell(str(tmp_path / "absent")) == "–"


def test_pretrain_only_pretrains_each_variant_and_measures_nothing(study, monkeypatch, capsys):
    pretrained, measured = [], []
    monkeypatch.setattr(study, "pretrain", lambda shape, run_dir: pretrained.append(
        (shape, run_dir)) or {})
    monkeypatch.setattr(study, "probe", lambda *args: measured.append("probe"))
    monkeypatch.setattr(study.subprocess, "run", lambda *args, **kwargs: measured.append(args))
    assert study.main(["h64_l2", "mask_30", "--pretrain_only", "--work", "w"]) == 0
    assert pretrained == [("h64_l2", os.path.join("w", "h64_l2", "run")),
                          ("mask_30", os.path.join("w", "mask_30", "run"))]
    assert measured == []
    assert "mask_30 pretrained in w/mask_30/run" in capsys.readouterr().out


def test_a_vocabulary_lever_tokenizes_the_corpus_anew_once_and_pretrains_on_it(
        study, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    commands = []

    def run(command, check):  # stands for albert-data: writes what each command would
        commands.append(command)
        if command[1] == "train-spm":
            prefix = command[command.index("--model_prefix") + 1]
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
            open(prefix + ".model", "w").close()
        else:
            output = command[command.index("--output_dir") + 1]
            os.makedirs(output)
            open(os.path.join(output, "manifest.json"), "w").close()

    monkeypatch.setattr(study.subprocess, "run", run)
    study.prepare_corpus(8000)  # the reference's files come from its commands.sh
    assert commands == []
    study.prepare_corpus(16000)
    assert [command[1] for command in commands] == ["train-spm", "build", "build"]
    assert commands[0][commands[0].index("--input") + 1] == study.TOKENIZER_TEXT
    assert commands[0][commands[0].index("--vocab_size") + 1] == "16000"
    for command, split in zip(commands[1:], ("heldout", "train")):
        assert command[command.index("--input") + 1] == f"runs/prose_full/corpus/{split}.txt"
        assert command[command.index("--spm_model") + 1] == "runs/prose/spm_16k/albert.model"
        assert command[command.index("--output_dir") + 1] == (
            f"runs/prose_full_16k/shards/{split}")
    study.prepare_corpus(16000)  # everything there: nothing run again
    assert len(commands) == 3
    # More pieces than the 10 MB hold: the tokenizer is trained on the whole corpus.
    study.prepare_corpus(30000)
    assert commands[3][commands[3].index("--input") + 1] == "runs/prose_full/corpus/train.txt"
    assert commands[3][commands[3].index("--model_prefix") + 1] == "runs/prose/spm_30k/albert"
    monkeypatch.chdir(REPOSITORY)  # the step budget reads the study's config
    pretrain = study.pretrain_command("vocab_16k", "run")
    assert "model.vocab_size=16000" in pretrain
    assert "data.train_files=[runs/prose_full_16k/shards/train/*.tfrecord]" in pretrain


def test_the_sequence_lever_pretrains_on_examples_of_64_and_fine_tunes_at_128(
        study, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    commands = []

    def build(command, check):  # stands for albert-data build: writes its manifest
        commands.append(command)
        output = command[command.index("--output_dir") + 1]
        os.makedirs(output)
        open(os.path.join(output, "manifest.json"), "w").close()

    monkeypatch.setattr(study.subprocess, "run", build)
    study.prepare_corpus(8000, 64)  # the reference's tokenizer: no train-spm
    assert [command[1] for command in commands] == ["build", "build"]
    for command, split in zip(commands, ("heldout", "train")):
        assert command[command.index("--spm_model") + 1] == "runs/prose/spm/albert.model"
        assert command[command.index("--output_dir") + 1] == f"runs/prose_full_s64/shards/{split}"
        # 15% of 64 pieces in 10 slots, as 20 hold 15% of the reference's 128.
        assert command[command.index("--max_seq_length") + 1] == "64"
        assert command[command.index("--max_predictions_per_seq") + 1] == "10"
    assert study.predictions_per_seq(study.SEQUENCE_LENGTH) == 20
    monkeypatch.chdir(REPOSITORY)
    pretrain = study.pretrain_command("seq_64", "run")
    assert {"data.max_seq_length=64", "data.max_predictions_per_seq=10",
            "model.max_position_embeddings=128",
            "data.train_files=[runs/prose_full_s64/shards/train/*.tfrecord]"} <= set(pretrain)
    # A step of 64 costs less than half of one of 128 (attention is quadratic in length).
    assert study.budget_steps(study.VARIANTS["seq_64"]) > 2 * study.REFERENCE["steps"]
    # The batch levers: a step's FLOPs are linear in the batch, so exactly 2x / 0.5x steps.
    assert study.budget_steps(study.VARIANTS["batch_32"]) == 2 * study.REFERENCE["steps"]
    assert study.budget_steps(study.VARIANTS["batch_128"]) == study.REFERENCE["steps"] // 2
    # Its fine-tunes run at 128 (so it shares the reference's random start), as a suite of
    # their own in the run folder, which is the report the results folder takes.
    downstream, finished = [], []
    monkeypatch.setattr(study, "pretrain", lambda shape, run_dir: {})
    monkeypatch.setattr(study, "probe", lambda *args: None)
    monkeypatch.setattr(study.subprocess, "run", lambda command, check: downstream.append(command))
    monkeypatch.setattr(study, "finish", lambda shape, *args: finished.append(shape))
    assert study.main(["seq_64", "--work", str(tmp_path)]) == 0
    assert downstream[0][downstream[0].index("--max_seq_length") + 1] == "128"
    assert finished == ["seq_64"]
    from albert_lab.comparison.suite import suite_name
    assert study.suite_report("seq_64") == suite_name(["data.max_seq_length=128"])
    assert study.suite_report("h64_l4") == study.suite_report("vocab_16k") == "downstream"
