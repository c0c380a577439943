"""The experiment runner: files of every table load at every scale, parameter counts from
built models equal the formula and the paper, and a micro experiment runs end to end,
resumes by skipping finished variants and refuses results made with other settings."""

from __future__ import annotations

import functools
import glob
import json
import os
import re

import numpy as np
import pytest
import yaml
from data_helpers import ordered_documents, sentiment_rows, write_tsv
from repository import REPOSITORY

from albert_experiments.cli import main as experiment_main
from albert_experiments.curves import interval_means, read_scalars, training_seconds
from albert_experiments.report import markdown_table, millions
from albert_experiments.runner import PROBE_FROZEN, variant_config
from albert_experiments.spec import (
    ExperimentError,
    experiment_from_mapping,
    load_experiment,
    resolve_scale,
)
from albert_tf.models.parameters import count_parameters

ROOT = REPOSITORY
EXPERIMENTS = sorted(glob.glob(os.path.join(ROOT, "experiments", "table*.yaml")))
PAPER_SCALE = os.path.abspath(os.path.join(ROOT, "experiments", "scales", "paper.yaml"))


def test_every_paper_table_from_4_to_12_has_an_experiment_file():
    numbers = sorted(int(os.path.basename(path)[5:].split("_")[0]) for path in EXPERIMENTS)
    assert numbers == list(range(4, 13))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=os.path.basename)
@pytest.mark.parametrize("scale", ["paper", "mini"])
def test_every_variant_of_every_file_makes_a_valid_pretraining_config(path, scale):
    spec = load_experiment(path, scale)
    assert spec.scale == scale and len(spec.variants) >= 2
    for variant in spec.variants:
        config = variant_config(spec, variant, model_dir="unused")
        assert config.data.max_seq_length == spec.shards.options.max_seq_length
        assert config.model.vocab_size == spec.tokenizer.vocab_size
        if variant.paper:  # a row the paper has fills every paper column
            for key, _ in spec.paper_columns:
                assert key in variant.paper, (variant.name, key)
    assert sum(bool(variant.paper) for variant in spec.variants) >= 2


@functools.cache
def _count(config) -> int:
    """Parameters of the built encoder (cached: two tests count the same paper-size models)."""
    return count_parameters(config).total


def _formula(config) -> int:
    """Distinct encoder parameters by hand: factorized embedding, one attention and one FFN
    sub-block per distinct copy (LayerNorms included), the pooler."""
    vocab, embedding, hidden = config.vocab_size, config.embedding_size, config.hidden_size
    inner, layers = config.intermediate_size, config.num_layers
    tables = (vocab + config.max_position_embeddings + config.type_vocab_size) * embedding
    embeddings = tables + 2 * embedding + (embedding * hidden + hidden
                                           if embedding != hidden else 0)
    attention = 4 * (hidden * hidden + hidden) + 2 * hidden
    feed_forward = hidden * inner + inner + inner * hidden + hidden + 2 * hidden
    copies = {"all": (1, 1), "attention": (1, layers), "ffn": (layers, 1),
              "none": (layers, layers)}[config.sharing]
    return (embeddings + copies[0] * attention + copies[1] * feed_forward
            + hidden * hidden + hidden)


@pytest.mark.parametrize("scale", ["mini", "paper"])
def test_table5_parameter_counts_of_the_built_models_equal_the_formula(scale):
    spec = load_experiment(os.path.join(ROOT, "experiments", "table5_sharing.yaml"), scale)
    sharing = set()
    for variant in spec.variants:
        config = variant_config(spec, variant, model_dir="unused").model
        sharing.add(config.sharing)
        assert _count(config) == _formula(config), variant.name
    assert sharing == {"all", "attention", "ffn", "none"}


def test_albert_experiment_params_prints_the_built_models_counts(capsys):
    path = os.path.join(ROOT, "experiments", "table5_sharing.yaml")
    assert experiment_main(["params", path, "--scale", "mini"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    spec = load_experiment(path, "mini")
    for variant in spec.variants:
        config = variant_config(spec, variant, model_dir="").model
        assert int(rows[variant.name][1].replace(",", "")) == _formula(config)
        assert rows[variant.name][-1] == variant.paper["params"]  # the paper's figure


@pytest.mark.parametrize("name", ["table4_embedding_size", "table5_sharing", "table7_depth",
                                  "table8_width"])
def test_paper_scale_counts_match_the_papers_figures(name):
    """Within the paper's rounding (0.5M or 2.5%); the paper's own 225M for H=4096 in
    Table 8 disagrees with its Table 2 (235M), the architecture gives about 223M."""
    spec = load_experiment(os.path.join(ROOT, "experiments", f"{name}.yaml"), "paper")
    for variant in spec.variants:
        ours = _count(variant_config(spec, variant, model_dir="").model) / 1e6
        theirs = float(variant.paper["params"].rstrip("M"))
        assert abs(ours - theirs) <= max(0.5, 0.025 * theirs), (variant.name, ours, theirs)


def test_per_scale_values_resolve_and_missing_ones_are_named():
    value = {"model": {"embedding_size": {"paper": 768, "mini": 64}, "sharing": "all"},
             "list": [{"paper": 1, "mini": 2}]}
    assert resolve_scale(value, "mini", ("paper", "mini"), "x") == {
        "model": {"embedding_size": 64, "sharing": "all"}, "list": [2]}
    with pytest.raises(ExperimentError, match=r"x\.model\.embedding_size: no value for scale "
                                              r"'micro'"):
        resolve_scale({"model": {"embedding_size": {"paper": 768}}}, "micro",
                      ("paper", "micro"), "x")


SST2_OVERRIDES = ["data.max_seq_length=64", "train.train_steps=20", "train.eval_every_steps=10",
                  "train.global_batch_size=32", "train.eval_batch_size=32",
                  "optimizer.warmup_steps=2", "train.verbose=0"]


def _document(text_dir, steps=20, downstream=(), **extra):
    """A micro experiment: two variants (SOP, NSP) of a 2-layer H=32 model, 20 steps."""
    return {
        "name": "micro_table", "title": "Micro table",
        "paper": {"table": "6", "setting": "ALBERT-base",
                  "columns": [["nsp", "NSP"], ["sop", "SOP"]]},
        "report": {"metrics": ["mlm_accuracy", "nsp_accuracy", "sop_accuracy",
                               "train_hours"]},
        "scales": {
            "paper": {"include": PAPER_SCALE},
            "micro": {
                "corpus": {"sources": [{"name": "ordered",
                                        "train_files": [str(text_dir / "train.txt")],
                                        "heldout_files": [str(text_dir / "heldout.txt")]}]},
                "tokenizer": {"vocab_size": 48},
                "shards": {"max_seq_length": 64, "max_predictions_per_seq": 10,
                           "dupe_factor": 1, "num_shards": 1},
                "evaluation": {"batch_size": 32},
                "downstream": list(downstream),
                "pretrain": {
                    "model": {"embedding_size": 16, "hidden_size": 32, "num_layers": 2,
                              "num_attention_heads": 2, "intermediate_size": 64,
                              "max_position_embeddings": 64},
                    "optimizer": {"type": "adamw", "learning_rate": 0.002,
                                  "warmup_steps": 5},
                    "train": {"global_batch_size": 32, "train_steps": steps,
                              "steps_per_epoch": 10, "steps_per_execution": 5,
                              "backup_every_steps": 10, "eval_steps": 2,
                              "log_every_steps": 5, "verbose": 0}}}},
        "variants": [
            {"name": "nsp", "label": "NSP", "pretrain": {"sentence_objective": "nsp"},
             "paper": {"nsp": 90.5, "sop": 52.0}},
            {"name": "sop", "label": "SOP", "pretrain": {"sentence_objective": "sop"},
             "paper": {"nsp": 78.9, "sop": 86.5}}],
        **extra,
    }


def test_bad_experiment_files_get_errors_that_name_the_field(tmp_path):
    good = _document(tmp_path)
    with pytest.raises(ExperimentError, match=r"f\.yaml: no scale 'tiny' \(the file has: "
                                              r"paper, micro\)"):
        experiment_from_mapping(good, "tiny", "f.yaml")
    bad_metric = {**good, "report": {"metrics": ["sop_acc"]}}
    with pytest.raises(ExperimentError, match="report.metrics: unknown metric 'sop_acc'"):
        experiment_from_mapping(bad_metric, "micro", "f.yaml")
    twice = {**good, "variants": good["variants"] + good["variants"][:1]}
    with pytest.raises(ExperimentError, match=r"repeated: \['nsp'\]"):
        experiment_from_mapping(twice, "micro", "f.yaml")
    with pytest.raises(ExperimentError, match=r"corpus\.sources\[0\]: 'wikipedia' is not a "
                                              r"built-in source"):
        experiment_from_mapping(good, "micro", "f.yaml",
                                ["corpus.sources=[wikipedia]"])
    with pytest.raises(ExperimentError, match=r"variants\[1\]: unknown field 'pretrian'"):
        experiment_from_mapping({**good, "variants": [good["variants"][0],
                                                      {"name": "x", "pretrian": {}}]},
                                "micro", "f.yaml")
    variant = {"name": "x", "pretrain": {"sentence_objective": "none"}}
    with pytest.raises(ExperimentError, match=r"variants\[1\]\.shards: unknown field "
                                              r"'sentence_objective'"):
        experiment_from_mapping({**good, "variants": [good["variants"][0], {
            **variant, "shards": {"sentence_objective": "sop"}}]}, "micro", "f.yaml")
    with pytest.raises(ExperimentError, match=r"variant x: shards: option "
                                              r"single_sentence_chunks random_next .* needs "
                                              r"sentence_objective sop or nsp"):
        experiment_from_mapping({**good, "variants": [good["variants"][0], {
            **variant, "shards": {"single_sentence_chunks": "random_next"}}]},
            "micro", "f.yaml")


def test_a_variants_shard_changes_reach_only_its_own_data_prep_options(tmp_path):
    document = _document(tmp_path)
    document["variants"].append({"name": "sop_original", "pretrain": {
        "sentence_objective": "sop"}, "shards": {"single_sentence_chunks": "random_next"}})
    spec = experiment_from_mapping(document, "micro", "f.yaml")
    sop, original = spec.variant("sop"), spec.variant("sop_original")
    assert sop.shard_changes == {} and original.objective == "sop"
    assert spec.shards.options_for("sop", original.shard_changes).single_sentence_chunks == \
        "random_next"
    assert spec.shards.options_for("sop").single_sentence_chunks == "split"


def test_training_seconds_add_each_logged_interval_at_its_rate():
    # Steps 0-10 at the first logged rate (compilation left out), then 10-30 at 4/s.
    assert training_seconds([(10, 5.0), (30, 4.0)]) == pytest.approx(10 / 5 + 20 / 4)
    assert training_seconds([]) == 0.0
    # A rate below a third of the median (a stopped process) counts at the median: steps
    # 30-50 at 4/s, not at 0.01/s; a rate of half the median is real and kept.
    assert training_seconds([(10, 5.0), (30, 4.0), (50, 0.01), (70, 2.0)]) == pytest.approx(
        10 / 5 + 20 / 4 + 20 / 3.0 + 20 / 2)
    # A run that ends between two logs: its last 15 steps at the last logged rate, 4/s;
    # after a stalled last interval, at the median (4/s of 5, 4 and 0.01).
    assert training_seconds([(10, 5.0), (30, 4.0)], final_step=45) == pytest.approx(
        10 / 5 + 20 / 4 + 15 / 4)
    assert training_seconds([(10, 5.0), (30, 4.0), (50, 0.01)], final_step=60) == \
        pytest.approx(10 / 5 + 20 / 4 + 20 / 4 + 10 / 4)
    assert training_seconds([(10, 5.0)], final_step=10) == pytest.approx(10 / 5)


def test_running_means_become_interval_means_across_epoch_starts():
    # Epochs of 4 steps, logged every 2: losses 4, 2 | 3, 1 | 6, 4 per interval.
    running = [(2, 4.0), (4, 3.0), (6, 3.0), (8, 2.0), (10, 6.0), (12, 5.0)]
    assert interval_means(running, 4) == [(2, 4.0), (4, 2.0), (6, 3.0), (8, 1.0), (10, 6.0),
                                          (12, 4.0)]


def test_scalars_of_a_resumed_run_keep_the_last_value_of_a_repeated_step(tmp_path):
    import tensorflow as tf
    for values in ({5: 3.0, 10: 2.0}, {10: 1.5, 15: 1.0}):  # two processes, step 10 twice
        writer = tf.summary.create_file_writer(str(tmp_path / "train"))
        with writer.as_default():
            for step, value in values.items():
                tf.summary.scalar("batch_loss", value, step=step)
        writer.close()
    assert read_scalars(str(tmp_path), "train", "batch_loss") == [(5, 3.0), (10, 1.5),
                                                                   (15, 1.0)]


def test_markdown_table_puts_our_numbers_beside_the_papers(tmp_path):
    spec = experiment_from_mapping(_document(tmp_path), "micro", "f.yaml")
    results = [{"name": "sop", "parameters": {"total": 123_456},
                "metrics": {"mlm_accuracy": 0.4321, "nsp_accuracy": 0.61,
                            "sop_accuracy": 0.9, "train_hours": 0.0123}}]
    table = markdown_table(spec, results, {"nsp": 11_683_584, "sop": 11_683_584}).splitlines()
    assert not spec.downstream
    assert table[0] == ("|  | paper NSP | paper SOP | params, paper sizes (ours) | "
                        "params (micro) | MLM acc. % (micro) | NSP acc. % (micro) | "
                        "SOP acc. % (micro) | train time (h) (micro) |")
    assert table[2] == "| NSP | 90.5 | 52.0 | 11.7M | not run | not run | not run | not run " \
                       "| not run |"
    assert table[3] == "| SOP | 78.9 | 86.5 | 11.7M | 0.12M | 43.2 | 61.0 | 90.0 | 0.012 |"
    assert (millions(334_000_000), millions(17_600_000)) == ("334M", "17.6M")


@pytest.fixture(scope="module")
def micro(tmp_path_factory):
    root = tmp_path_factory.mktemp("micro_experiment")
    (root / "train.txt").write_text(ordered_documents(300, seed=1))
    (root / "heldout.txt").write_text(ordered_documents(40, seed=2))
    (root / "SST-2").mkdir()
    write_tsv(root / "SST-2" / "train.tsv", ["sentence", "label"], sentiment_rows(200, 1))
    write_tsv(root / "SST-2" / "dev.tsv", ["sentence", "label"], sentiment_rows(64, 2))
    path = root / "micro.yaml"
    sst2 = {"task": "sst2", "data_dir": str(root / "SST-2"), "overrides": SST2_OVERRIDES,
            "seeds": [1, 2]}
    claims = [{"claim": "SOP beats NSP downstream", "metric": ["downstream_average",
                                                               "mlm_accuracy"],
               "compare": ["sop", "nsp"], "expect": "higher"}]
    document = _document(root, downstream=[sst2], claims=claims)
    document["scales"]["micro"]["evaluation"].update(checkpoint_trend=True, random_start=True)
    path.write_text(yaml.safe_dump(document))
    folders = {name: str(root / name) for name in ("work", "data", "results")}
    arguments = ["--scale", "micro", "--work_dir", folders["work"], "--data_dir",
                 folders["data"], "--results_dir", folders["results"], "--no_progress"]
    return {"path": str(path), "arguments": arguments, **folders}


@pytest.mark.slow
def test_a_micro_experiment_runs_end_to_end_and_resumes_by_skipping_finished_variants(
        micro, capsys):
    run = ["run", micro["path"], *micro["arguments"]]
    # First only one variant: the report lists the other as not run.
    assert experiment_main([*run, "--variants", "sop"]) == 0
    report = json.loads(open(os.path.join(micro["results"], "results.json")).read())
    assert [v["name"] for v in report["variants"]] == ["sop"] and report["not_run"] == ["nsp"]
    sop_result = os.path.join(micro["work"], "sop", "result.json")
    written = os.path.getmtime(sop_result)
    capsys.readouterr()

    # The whole experiment: the finished variant is skipped, the other one trained.
    assert experiment_main(run) == 0
    output = capsys.readouterr().out
    assert "sop is finished" in output and "variant nsp (NSP)" in output
    assert "variant sop (SOP)" not in output
    assert os.path.getmtime(sop_result) == written

    report = json.loads(open(os.path.join(micro["results"], "results.json")).read())
    assert report["command"].startswith(f"albert-experiment run {micro['path']} --scale micro")
    assert [v["name"] for v in report["variants"]] == ["nsp", "sop"] and not report["not_run"]
    for variant in report["variants"]:
        metrics = variant["metrics"]
        assert variant["final_step"] == 20
        for name in ("mlm_accuracy", "nsp_accuracy", "sop_accuracy"):
            assert 0.0 <= metrics[name] <= 1.0
        assert metrics["train_hours"] > 0 and metrics["examples_per_second"] > 0
        # Parameters of the trained model equal the formula at the tokenizer's 48 pieces.
        spec = load_experiment(micro["path"], "micro")
        config = variant_config(spec, spec.variant(variant["name"]), "", vocab_size=48).model
        assert variant["parameters"]["total"] == _formula(config)
        assert variant["paper_scale_parameters"] == 11_683_584  # ALBERT-base, V 30000
        assert variant["heldout"].keys() == {"sop", "nsp"}
        # Fine-tuned on the downstream task from the variant's own pretrained run.
        sst2 = variant["downstream"]["sst2"]
        # The GLUE folder has no test labels: dev scores only, each run's floor recorded.
        assert sst2["metric"] == "accuracy" and sst2["test"] is None
        assert all(run["constant"] > 0.4 and run["stuck"] == (run["value"] <= run["constant"]
                                                               + 0.01)
                   for run in sst2["seeds"].values())
        assert list(sst2["seeds"]) == ["1", "2"]
        assert all(run["best_step"] in (10, 20) for run in sst2["seeds"].values())
        assert sst2["value"] == pytest.approx(
            sum(run["value"] for run in sst2["seeds"].values()) / 2)
        # One task: the Avg column is its mean over seeds.
        assert metrics["downstream_average"] == pytest.approx(sst2["value"])
        for seed in (1, 2):
            assert os.path.exists(os.path.join(micro["work"], variant["name"], sst2["folder"],
                                               f"seed{seed}", "eval_results.json"))
        # Every kept checkpoint scored; the last one is the variant's own result.
        assert [point["step"] for point in variant["trend"]] == [10, 20]
        for name in ("mlm_accuracy", "nsp_accuracy", "sop_accuracy"):
            assert variant["trend"][-1][name] == pytest.approx(metrics[name])
    curves = json.loads(open(sop_result).read())["curves"]
    assert [step for step, _ in curves["train_loss"]] == [5, 10, 15, 20]
    assert [step for step, _ in curves["eval_loss"]] == [10, 20]

    markdown = open(os.path.join(micro["results"], "results.md")).read()
    assert "| SOP | 78.9 | 86.5 | 11.7M |" in markdown and "albert-experiment run" in markdown
    assert "sst2 (micro) | downstream avg. (micro) |" in markdown
    assert re.search(r"\| dev \d+\.\d accuracy \(2 seeds(, \*\*\d stuck\*\*)?\) \|", markdown)
    assert "| SOP beats NSP downstream | downstream_average | sop - nsp | higher |" in markdown
    assert re.search(r"2 fine-tuning seeds(, \d+ fine-tunes stuck)? \|", markdown)
    # The reference row: a random start of the first variant's sizes, same recipe and seeds.
    random_start = report["random_start"]
    assert list(random_start["downstream"]["sst2"]["seeds"]) == ["1", "2"]
    assert random_start["model"]["hidden_size"] == 32
    assert random_start["metrics"]["downstream_average"] == pytest.approx(
        random_start["downstream"]["sst2"]["value"])
    assert "| random start (NSP sizes) | – | – | – | – |" in markdown
    # Each variant against it, paired by seed, from the stored scores read independently.
    assert "## Pretraining against a random start" in markdown
    for variant in report["variants"]:
        scores, reference = (variant["downstream"]["sst2"]["seeds"],
                             random_start["downstream"]["sst2"]["seeds"])
        gain = report["pretraining_gains"][variant["name"]]["sst2"]
        assert gain["seeds"] == 2 and gain["gain"] == pytest.approx(np.mean(
            [scores[seed]["value"] - reference[seed]["value"] for seed in ("1", "2")]))
    verdict, mlm = report["verdicts"]  # the one claim on two metrics
    assert verdict["metric"] == "downstream_average" and verdict["samples"] == 2
    assert verdict["outcome"] in ("shown", "not shown", "contradicted")
    # Held-out MLM accuracy: both variants' outcomes on the same masked predictions, paired.
    masked = report["variants"][0]["heldout_counts"]["sop"]["masked_tokens"]
    assert mlm["paired"] and mlm["samples"] == masked > 0
    for variant in report["variants"]:
        with np.load(os.path.join(micro["work"], variant["name"],
                                  "heldout_outcomes.npz")) as outcomes:
            assert set(outcomes.files) == {f"{task}_{kind}" for task in ("mlm", "sop", "nsp")
                                           for kind in ("correct", "labels")}
            assert len(outcomes["mlm_correct"]) == masked
            for task in ("mlm", "sop", "nsp"):
                assert outcomes[f"{task}_correct"].mean() == pytest.approx(
                    variant["metrics"][f"{task}_accuracy"], abs=1e-6)
    assert f"{masked:,} masked predictions, paired |" in markdown
    assert "## Sentence accuracies against chance" in markdown
    assert "## Held-out accuracies at each kept checkpoint" in markdown
    assert "## Off the unigram plateau" in markdown
    for variant in report["variants"]:  # the plateau of the same held-out predictions
        with np.load(os.path.join(micro["work"], variant["name"],
                                  "heldout_outcomes.npz")) as outcomes:
            counts = np.bincount(outcomes["mlm_labels"])
        plateau = report["unigram_plateau"][variant["name"]]
        assert plateau["token"] == counts.argmax()
        assert plateau["plateau"] == pytest.approx(counts.max() / masked)
        assert plateau["accuracy"] == pytest.approx(variant["metrics"]["mlm_accuracy"],
                                                    abs=1e-6)
    for plot in ("losses.png", "metrics.png", "trend.png"):
        with open(os.path.join(micro["results"], plot), "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"

    # The report rewritten from the finished variants keeps the command that made it, and
    # the notes written beside it by hand.
    with open(os.path.join(micro["results"], "notes.md"), "w") as f:
        f.write("## Reading\n\nWhat these rows say.\n")
    assert experiment_main(["report", micro["path"], "--scale", "micro", "--work_dir",
                            micro["work"], "--results_dir", micro["results"]]) == 0
    with open(os.path.join(micro["results"], "results.md")) as f:
        assert f.read().endswith("\n\n## Reading\n\nWhat these rows say.\n")
    rewritten = json.loads(open(os.path.join(micro["results"], "results.json")).read())
    assert rewritten["command"] == report["command"]
    assert rewritten["variants"] == report["variants"]

    # Run again: nothing is trained.
    assert experiment_main(run) == 0
    output = capsys.readouterr().out
    assert "nsp is finished" in output and "sop is finished" in output
    assert "variant" not in output.replace("finished", "")

    # Another table with the same variant copies the finished run instead of pretraining it.
    other_work = os.path.join(os.path.dirname(micro["work"]), "other_table")
    assert experiment_main([
        "run", micro["path"], "--scale", "micro", "--work_dir", other_work, "--data_dir",
        micro["data"], "--results_dir", os.path.join(other_work, "results"), "--no_progress",
        "--variants", "sop", "--reuse_from", micro["work"]]) == 0
    output = capsys.readouterr().out
    assert f"sop was run with the same settings in {os.path.join(micro['work'], 'sop')}" \
        in output
    assert "variant sop (SOP)" not in output
    copied = json.loads(open(os.path.join(other_work, "sop", "result.json")).read())
    original = json.loads(open(sop_result).read())
    assert copied["metrics"] == original["metrics"]
    assert copied["downstream"] == original["downstream"]  # the fine-tunes came along
    # The trend is asked for here too: scored again from the copied checkpoints.
    assert [point["step"] for point in copied["trend"]] == [10, 20]
    assert copied["trend"][-1]["mlm_accuracy"] == pytest.approx(
        original["trend"][-1]["mlm_accuracy"])
    assert os.path.exists(copied["checkpoint"] + ".index")
    assert os.path.exists(os.path.join(other_work, "sop", "heldout_outcomes.npz"))
    assert copied["checkpoint"].startswith(os.path.join(other_work, "sop"))
    missing = os.path.join(micro["work"], "missing")
    assert experiment_main([*run, "--reuse_from", missing]) == 2
    assert f"--reuse_from {missing}: not a folder" in capsys.readouterr().err

    # A result made with other settings is never reused silently.
    assert experiment_main([*run, "--override", "pretrain.optimizer.learning_rate=0.01"]) == 2
    error = capsys.readouterr().err
    assert "optimizer.learning_rate: 0.002 -> 0.01" in error and "nsp/result.json" in error
    # ... nor one whose training shards were made another way.
    assert experiment_main([*run, "--override", "shards.masked_lm_prob=0.2"]) == 2
    assert "training_data.shards.masked_lm_prob: 0.15 -> 0.2" in capsys.readouterr().err


def _result(name, accuracy, masked_tokens=10_000, metric="mlm_accuracy"):
    return {"name": name, "metrics": {metric: accuracy},
            "heldout_counts": {"sop": {"masked_tokens": masked_tokens, "examples": 400},
                               "nsp": {"examples": 400}}}


def test_verdicts_use_the_normal_interval_of_two_accuracies():
    from albert_experiments.statistics.verdicts import Claim, judge
    results = {"a": _result("a", 0.20), "b": _result("b", 0.18)}
    verdict = judge(Claim("a beats b", "mlm_accuracy", "a", "b", "higher"), results)
    # By hand: se = sqrt(.2 * .8 / 1e4 + .18 * .82 / 1e4) = 0.0055426; 1.96 se = 0.010864.
    assert verdict.difference == pytest.approx(0.02)
    assert (verdict.low, verdict.high) == pytest.approx((0.009136, 0.030864), abs=1e-5)
    assert verdict.outcome == "shown" and verdict.samples == 10_000
    assert judge(Claim("", "mlm_accuracy", "a", "b", "lower"), results).outcome == \
        "contradicted"
    close = {"a": _result("a", 0.20), "b": _result("b", 0.195)}
    assert judge(Claim("", "mlm_accuracy", "a", "b", "higher"), close).outcome == "not shown"
    assert judge(Claim("", "mlm_accuracy", "a", "b", "same", 0.02), close).outcome == "shown"
    assert judge(Claim("", "mlm_accuracy", "a", "b", "same", 0.001), results).outcome == \
        "contradicted"
    assert judge(Claim("", "mlm_accuracy", "a", "missing", "same"), results).outcome == \
        "not run"


def _scores(**tasks):
    """A result's stored downstream scores: task name -> dev score by seed."""
    return {"downstream": {task: {"seeds": {seed: {"value": value} for seed, value
                                            in scores.items()}}
                           for task, scores in tasks.items()}}


def test_pretraining_gains_pair_each_task_and_the_average_by_seed():
    from albert_experiments.statistics.pretraining_gain import (
        pretraining_gains,
        pretraining_gains_markdown,
    )
    ours = _scores(bbc={"1": 0.60, "2": 0.70, "3": 0.65},
                   rt={"1": 0.60, "2": 0.60, "3": 0.57})
    # Seed 3 of rt is missing from the random start: bbc pairs three seeds, the average two.
    start = _scores(bbc={"1": 0.50, "2": 0.50, "3": 0.50}, rt={"1": 0.58, "2": 0.62})
    gains = pretraining_gains(ours, start, ["bbc", "rt"])
    # bbc by hand: differences .10, .20, .15: mean .15, sd .05, t(2) 4.303 * .05 / sqrt 3.
    assert gains["bbc"]["gain"] == pytest.approx(0.15)
    assert gains["bbc"]["high"] - 0.15 == pytest.approx(4.303 * 0.05 / 3 ** 0.5)
    assert gains["bbc"]["seeds"] == 3
    # rt: .02, -.02; the average by seed: (.60+.60)/2 - (.50+.58)/2 = .06, (.70+.60)/2 -
    # (.50+.62)/2 = .09: mean .075, sd .0212132, t(1) 12.706 * .0212132 / sqrt 2.
    assert gains["rt"]["gain"] == pytest.approx(0.0) and gains["rt"]["seeds"] == 2
    average = gains["downstream_average"]
    assert average["gain"] == pytest.approx(0.075) and average["seeds"] == 2
    assert average["low"] == pytest.approx(0.075 - 12.706 * 0.0212132 / 2 ** 0.5)
    one_seed = pretraining_gains(_scores(bbc={"1": 0.6}), _scores(bbc={"1": 0.5}), ["bbc"])
    assert one_seed["bbc"] == {"gain": pytest.approx(0.1), "low": pytest.approx(0.1),
                               "high": pytest.approx(0.1), "seeds": 1}
    assert pretraining_gains(_scores(bbc={"1": 0.6}), _scores(bbc={"2": 0.5}), ["bbc"]) == {}

    table = pretraining_gains_markdown([("E 16", gains), ("E 32", one_seed), ("none", {})],
                                       ["bbc", "rt"], "avg.").splitlines()
    assert table[0] == "| trained with | bbc | rt | avg. |"
    assert table[2] == "| E 16 | +15.0 [+2.6, +27.4] | +0.0 [-25.4, +25.4] | +7.5 [-11.6, +26.6] |"
    assert table[3] == "| E 32 | +10.0 (1 seed) | – | +10.0 (1 seed) |"
    assert len(table) == 4  # a variant without fine-tunes gets no row
    assert pretraining_gains_markdown([("none", {})], ["bbc"], "avg.") == ""


def _agreeing_outcomes(first_right=2000, second_loses=200, count=10_000, label_seed=0):
    """Two models' outcomes on `count` predictions: the first right on `first_right`, the
    second right on the same ones but `second_loses` of them."""
    labels = np.random.default_rng(label_seed).integers(5, 1000, count).astype(np.int32)
    first = np.zeros(count, bool)
    first[:first_right] = True
    second = first.copy()
    second[:second_loses] = False
    return ({"mlm_correct": first, "mlm_labels": labels},
            {"mlm_correct": second, "mlm_labels": labels.copy()})


def test_paired_outcomes_difference_is_the_interval_of_per_example_differences():
    from albert_experiments.statistics.intervals import paired_outcomes_difference
    # Differences 0, 1, 0, 0: mean 0.25, sd 0.5, 1.96 * 0.5 / 2 = 0.49.
    assert paired_outcomes_difference([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(
        (0.25, -0.24, 0.74), abs=1e-4)
    first, second = _agreeing_outcomes()
    difference, low, high = paired_outcomes_difference(first["mlm_correct"],
                                                       second["mlm_correct"])
    # 200 differences of 1 in 10,000: sd sqrt(0.02 * 0.98 * 10000 / 9999) = 0.1400070.
    assert difference == pytest.approx(0.02)
    assert high - difference == pytest.approx(1.959964 * 0.1400070 / 100, abs=1e-6)
    with pytest.raises(ValueError, match="equally long"):
        paired_outcomes_difference([True, False], [True])


def test_verdicts_pair_the_outcomes_of_the_same_held_out_examples(tmp_path):
    from albert_experiments.statistics.heldout_outcomes import load_outcomes, save_outcomes
    from albert_experiments.statistics.verdicts import Claim, judge, verdicts_markdown
    first, second = _agreeing_outcomes()
    for name, outcomes in (("a", first), ("b", second)):
        os.makedirs(tmp_path / name)
        save_outcomes(str(tmp_path / name), outcomes)
    outcomes = {name: load_outcomes(str(tmp_path / name)) for name in ("a", "b", "c")}
    assert outcomes["c"] is None
    np.testing.assert_array_equal(outcomes["b"]["mlm_correct"], second["mlm_correct"])
    results = {"a": _result("a", 0.20), "b": _result("b", 0.18)}
    claim = Claim("a beats b", "mlm_accuracy", "a", "b", "higher")
    paired = judge(claim, results, (), outcomes)
    unpaired = judge(claim, results)
    # The same difference; the paired interval is the per-example one, under a third as wide.
    assert paired.paired and not unpaired.paired and paired.samples == 10_000
    assert paired.difference == pytest.approx(unpaired.difference)
    assert paired.high - paired.low == pytest.approx(2 * 1.959964 * 0.1400070 / 100, abs=1e-6)
    assert paired.high - paired.low < 0.3 * (unpaired.high - unpaired.low)
    assert "10,000 masked predictions, paired |" in verdicts_markdown([paired])
    assert "10,000 masked predictions |" in verdicts_markdown([unpaired])
    # Not paired: other examples (labels differ), outcomes that do not give the reported
    # accuracy, a metric without stored outcomes, a variant without them.
    other = dict(outcomes, b={**outcomes["b"], "mlm_labels": outcomes["b"]["mlm_labels"] + 1})
    assert not judge(claim, results, (), other).paired
    wrong = {"a": _result("a", 0.21), "b": _result("b", 0.18)}
    assert not judge(claim, wrong, (), outcomes).paired
    sop = {name: _result(name, value, metric="sop_accuracy")
           for name, value in (("a", 0.6), ("b", 0.5))}
    assert not judge(Claim("", "sop_accuracy", "a", "b", "higher"), sop, (), outcomes).paired
    assert not judge(claim, results, (), {"a": outcomes["a"]}).paired


def test_the_unigram_plateau_is_always_predicting_the_most_frequent_held_out_target():
    from albert_experiments.report import plateau_markdown
    from albert_experiments.statistics.heldout_outcomes import (
        above_unigram_plateau,
        unigram_plateau,
    )
    # Targets 8 (four times), 5 and 9 (twice each: a tie, which the lower id wins), 11.
    labels = np.array([8, 5, 8, 9, 8, 5, 9, 11, 8, 7], np.int32)
    token, plateau = unigram_plateau(labels)
    assert token == 8 and plateau.tolist() == [label == 8 for label in labels]
    assert unigram_plateau(np.array([9, 5, 5, 9]))[0] == 5
    with pytest.raises(ValueError, match="at least one"):
        unigram_plateau(np.array([], np.int32))
    # A model right on the 8s and on two others: 6 of 10 against the plateau's 4 of 10; the
    # per-prediction differences are two 1s and eight 0s (mean 0.2, sd 0.4216).
    correct = (labels == 8) | np.isin(np.arange(10), [1, 3])
    found = above_unigram_plateau({"mlm_correct": correct, "mlm_labels": labels})
    assert (found["token"], found["plateau"], found["accuracy"]) == (8, 0.4, 0.6)
    half = 1.959964 * np.sqrt(0.2 * 0.8 * 10 / 9) / np.sqrt(10)
    assert (found["difference"], found["low"], found["high"]) == pytest.approx(
        (0.2, 0.2 - half, 0.2 + half))
    assert not found["above"]  # ten predictions cannot show it: the interval reaches below 0
    many = above_unigram_plateau({"mlm_correct": np.tile(correct, 100),
                                  "mlm_labels": np.tile(labels, 100)})
    assert many["difference"] == pytest.approx(0.2) and many["above"]
    assert above_unigram_plateau(None) is None
    assert above_unigram_plateau({"sop_correct": correct, "sop_labels": labels}) is None
    # The report's rows: one per variant with outcomes, a variant below the plateau in bold.
    stuck = above_unigram_plateau({"mlm_correct": labels == 8, "mlm_labels": labels})
    markdown = plateau_markdown([{"name": "a", "label": "A"}, {"name": "b", "label": "B"},
                                 {"name": "c", "label": "C"}],
                                {"a": many, "b": stuck, "c": None})
    assert "| A | 60.0 | 40.0 (id 8) | +20.0 [+17.5, +22.5] | yes |" in markdown
    assert "| B | 40.0 | 40.0 (id 8) | +0.0 [+0.0, +0.0] | **no** |" in markdown
    assert "| C |" not in markdown
    assert plateau_markdown([{"name": "c", "label": "C"}], {"c": None}) == ""


def test_a_claim_against_chance_uses_the_sentence_examples():
    from albert_experiments.statistics.verdicts import Claim, judge
    results = {"sop": _result("sop", 0.58, metric="nsp_accuracy")}
    verdict = judge(Claim("", "nsp_accuracy", "sop", "chance", "higher"), results)
    # se = sqrt(.58 * .42 / 400) = 0.024678; the interval is 0.08 +- 0.048368.
    assert (verdict.low, verdict.high) == pytest.approx((0.031632, 0.128368), abs=1e-5)
    assert verdict.outcome == "shown" and verdict.samples == 400


@pytest.mark.parametrize("claim, message", [
    ({"metric": "mlm_accuracy", "compare": ["a", "nowhere"], "expect": "higher"},
     "no variant named 'nowhere'"),
    ({"metric": "f1", "compare": ["a", "b"], "expect": "higher"}, "metric must be one of"),
    ({"metric": "mlm_accuracy", "compare": ["a", "b"], "expect": "better"},
     "expect must be one of"),
    ({"metric": "mlm_accuracy", "compare": ["a"], "expect": "higher"}, "compare must name two"),
    ({"metric": "mlm_accuracy", "compare": ["a", "b"], "expect": "higher", "headline": "yes"},
     "headline must be true or false, got 'yes'"),
])
def test_bad_claims_are_named(claim, message):
    from albert_experiments.spec import ExperimentError
    from albert_experiments.statistics.verdicts import parse_claims
    with pytest.raises(ExperimentError, match=message):
        parse_claims([claim], ["a", "b"], "table.yaml", ExperimentError)


@pytest.mark.slow
def test_a_variant_without_a_sentence_objective_gets_its_sentence_columns_from_probes(
        tmp_path, capsys):
    (tmp_path / "train.txt").write_text(ordered_documents(300, seed=1))
    (tmp_path / "heldout.txt").write_text(ordered_documents(40, seed=2))
    document = _document(tmp_path, variants=[
        {"name": "none", "label": "None", "pretrain": {"sentence_objective": "none"}}])
    document["scales"]["micro"]["evaluation"]["sentence_probe_steps"] = 10
    path = tmp_path / "none.yaml"
    path.write_text(yaml.safe_dump(document))
    folders = {name: str(tmp_path / name) for name in ("work", "data", "results")}
    assert experiment_main(["run", str(path), "--scale", "micro", "--work_dir",
                            folders["work"], "--data_dir", folders["data"], "--results_dir",
                            folders["results"], "--no_progress"]) == 0
    assert "SOP probe, 10 steps on the frozen encoder" in capsys.readouterr().out
    result = json.loads(open(os.path.join(folders["work"], "none", "result.json")).read())
    for objective in ("sop", "nsp"):
        probe = result["sentence_probe"][objective]
        assert probe["steps"] == 10 and probe["frozen"] == PROBE_FROZEN
        assert result["metrics"][f"{objective}_accuracy"] == probe["sentence_accuracy"]
        assert result["heldout_counts"][objective]["examples"] > 0
    # The probe left the pretrained encoder and MLM head as they were.
    assert result["sentence_probe"]["sop"]["mlm_accuracy"] == pytest.approx(
        result["heldout"]["sop"]["mlm_accuracy"], abs=1e-6)
    markdown = open(os.path.join(folders["results"], "results.md")).read()
    assert "SOP and NSP columns are probes" in markdown


@pytest.mark.slow
def test_downstream_compares_a_run_with_a_random_start_and_a_bag_of_words(micro, tmp_path,
                                                                          capsys):
    from albert_experiments.statistics.intervals import paired_difference
    from albert_tf.comparison.suite import suite_name
    assert experiment_main(["run", micro["path"], *micro["arguments"], "--variants",
                            "sop"]) == 0
    tasks = tmp_path / "tasks"
    folder = tasks / "feelings"
    folder.mkdir(parents=True)
    write_tsv(folder / "train.tsv", ["sentence", "label"], sentiment_rows(200, 1))
    write_tsv(folder / "dev.tsv", ["sentence", "label"], sentiment_rows(64, 2))
    write_tsv(folder / "test.tsv", ["index", "sentence"],
              [(index, sentence) for index, (sentence, _) in enumerate(sentiment_rows(40, 3))])
    write_tsv(folder / "test_labels.tsv", ["index", "label"],
              [(index, label) for index, (_, label) in enumerate(sentiment_rows(40, 3))])
    (folder / "source.json").write_text(json.dumps({"albert_finetune": {"task": "sst2"}}))
    (tasks / "notes").mkdir()  # not a task folder: skipped
    run = os.path.join(micro["work"], "sop")
    overrides = ["train.train_steps=10", "train.eval_every_steps=10", "optimizer.warmup_steps=2"]
    assert experiment_main(["downstream", run, "--tasks_dir", str(tasks), "--seeds", "1", "2",
                            *[item for override in overrides
                              for item in ("--override", override)]]) == 0
    shown = capsys.readouterr().out
    # A changed recipe is a suite of its own, named by a digest of its overrides.
    suite = suite_name(overrides)
    assert suite.startswith("downstream-") and suite != suite_name(overrides[::-1])
    assert suite_name([]) == "downstream"
    report = json.loads(open(os.path.join(run, f"{suite}.json")).read())
    row = report["tasks"]["feelings"]
    assert row["metric"] == "accuracy" and list(report["tasks"]) == ["feelings"]
    assert all(list(row["seeds"][start]) == ["1", "2"] for start in ("pretrained", "random"))
    assert row["baseline"]["dev"] >= 0.9 and row["baseline"]["test"] >= 0.9  # the words decide
    # Scored on test (the folder has its labels), each run's own test score read back.
    random_runs = glob.glob(str(tasks / "random_starts" / "*" / "feelings-*"))
    assert len(random_runs) == 1  # shared by every run of these sizes, tokenizer and recipe
    data = random_runs[0].rsplit("-", 1)[1]  # the digest of the task folder's files
    assert row["data"] == data
    places = {"pretrained": os.path.join(run, suite, f"feelings-{data}"),
              "random": random_runs[0]}
    test = {start: [json.loads(open(os.path.join(
        places[start], f"seed{seed}", "eval_results.json")).read())["test_metrics"]["test"]
        ["accuracy"] for seed in (1, 2)] for start in ("pretrained", "random")}
    comparison = row["comparison"]
    assert comparison["split"] == "test" and comparison["paired_seeds"] == 2
    assert (comparison["gain"], comparison["low"], comparison["high"]) == pytest.approx(
        paired_difference(test["pretrained"], test["random"]))
    assert os.path.exists(os.path.join(run, f"{suite}.md"))
    assert "| feelings | accuracy |" in shown
    # Ten steps may leave the random start at the majority class: then the one task's
    # comparison failed and there is no average gain (suite_average, by hand, in
    # test_experiment_downstream.py).
    if comparison["verdict"] == "failed":
        assert report["average"] is None and "failed: random start stuck" in shown
    else:
        assert report["average"]["split"] == "test" and report["average"]["gain"] == \
            pytest.approx(comparison["gain"])
        assert "| **average** | test |" in shown
    # The task folder written anew (one more training example): a rerun fine-tunes both
    # starts anew in folders of the new data's digest, and keeps nothing of the old rows.
    write_tsv(folder / "train.tsv", ["sentence", "label"], sentiment_rows(201, 1))
    assert experiment_main(["downstream", run, "--tasks_dir", str(tasks), "--seeds", "1",
                            *[item for override in overrides
                              for item in ("--override", override)]]) == 0
    again = json.loads(open(os.path.join(run, f"{suite}.json")).read())["tasks"]["feelings"]
    assert again["data"] != data and list(again["seeds"]["pretrained"]) == ["1"]
    for start, place in (("pretrained", os.path.join(run, suite, "feelings-")),
                         ("random", random_runs[0].rsplit("-", 1)[0] + "-")):
        assert os.path.exists(os.path.join(place + again["data"], "seed1", "eval_results.json"))
