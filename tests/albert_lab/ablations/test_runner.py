"""`albert-experiment run` end to end on a micro table: pretraining, probes, held-out
scores, downstream columns, the report and resuming (slow)."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil

import numpy as np
import pytest
import yaml
from data_helpers import ordered_documents, sentiment_rows, write_sentiment_task, write_tsv
from experiment_tables import SST2_OVERRIDES, micro_table_document, parameters_by_hand

from albert_lab.ablations.cli import main as experiment_main
from albert_lab.ablations.heldout_scoring import PROBE_FROZEN
from albert_lab.ablations.statistics.intervals import paired_difference
from albert_lab.ablations.table_spec import load_experiment
from albert_lab.ablations.variant_config import variant_config
from albert_lab.comparison.bag_of_words import baseline_score


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
    document = micro_table_document(root, downstream=[sst2], claims=claims)
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

    first_written = report["written"]
    report = json.loads(open(os.path.join(micro["results"], "results.json")).read())
    assert report["written"] > first_written  # a report with a new row is written anew
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
        assert variant["parameters"]["total"] == parameters_by_hand(config)
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
    # What the data was made from, by the bytes of the training text and of the tokenizer,
    # hashed here independently: one build for every row, the random start's too.
    (spm_model,) = glob.glob(os.path.join(micro["data"], "spm", "*.model"))
    train_text = os.path.join(os.path.dirname(micro["path"]), "train.txt")
    with open(spm_model, "rb") as f:
        tokenizer = "sha256:" + hashlib.sha256(f.read()).hexdigest()
    with open(train_text, "rb") as f:  # the digest names the file, then its bytes
        text = hashlib.sha256(b"train.txt" + f.read()).hexdigest()
    for variant in report["variants"]:
        assert variant["data"] == {"corpus": {"ordered": {train_text: text}},
                                   "tokenizer": tokenizer}
    assert random_start["data"] == {"tokenizer": tokenizer}
    assert (f"Every row with a record was made from the same data: ordered (1 part), "
            f"tokenizer {tokenizer}") in markdown
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

    # The report rewritten from the finished variants keeps the command that made it, the
    # notes written beside it by hand and, as nothing else changed, the time it was written.
    with open(os.path.join(micro["results"], "notes.md"), "w") as f:
        f.write("## Reading\n\nWhat these rows say.\n")
    report["written"] = "2026-01-02T03:04:05Z"
    with open(os.path.join(micro["results"], "results.json"), "w") as f:
        json.dump(report, f, indent=1)
    # A finished run without a record (one made before records were kept) gets one.
    shutil.rmtree(os.path.join(micro["results"], "records", "nsp"))
    assert experiment_main(["report", micro["path"], "--scale", "micro", "--work_dir",
                            micro["work"], "--results_dir", micro["results"]]) == 0
    with open(os.path.join(micro["results"], "results.md")) as f:
        assert f.read().endswith("\n\n## Reading\n\nWhat these rows say.\n")
    rewritten = json.loads(open(os.path.join(micro["results"], "results.json")).read())
    assert rewritten == report

    # Run again: nothing is trained.
    assert experiment_main(run) == 0
    output = capsys.readouterr().out
    assert "nsp is finished" in output and "sop is finished" in output
    assert "variant" not in output.replace("finished", "")

    with np.load(os.path.join(micro["results"], "records", "nsp",
                              "heldout_outcomes.npz")) as kept:
        assert "mlm_correct" in kept.files

    # Another machine: the work folder is gone, the report's folder (kept in git) is not.
    # Its records rewrite the same report and let `run` skip what is done.
    for name in ("nsp", "sop", "random_start"):
        assert os.path.exists(os.path.join(micro["results"], "records", name, "result.json"))
    elsewhere = micro["work"] + "_on_another_machine"
    assert experiment_main(["report", micro["path"], "--scale", "micro", "--work_dir",
                            elsewhere, "--results_dir", micro["results"]]) == 0
    assert "restored nsp, sop, random_start from the records" in capsys.readouterr().out
    restored = json.loads(open(os.path.join(micro["results"], "results.json")).read())
    for part in ("variants", "random_start", "verdicts", "pretraining_gains",
                 "unigram_plateau", "command"):
        assert restored[part] == rewritten[part], part
    run_elsewhere = ["run", micro["path"], "--scale", "micro", "--work_dir", elsewhere,
                     "--data_dir", micro["data"], "--results_dir", micro["results"],
                     "--no_progress"]
    assert experiment_main(run_elsewhere) == 0
    output = capsys.readouterr().out
    assert "nsp is finished" in output and "sop is finished" in output
    assert "variant" not in output.replace("finished", "")
    # Rows made before records were kept, their run folders gone: neither `report` nor `run`
    # writes a report without them, and `run` says so before it prepares or trains anything.
    bare = micro["results"] + "_without_records"
    shutil.copytree(micro["results"], bare, ignore=shutil.ignore_patterns("records"))
    gone = micro["work"] + "_gone"
    with open(os.path.join(bare, "results.md")) as f:
        shown = f.read()
    assert experiment_main(["report", micro["path"], "--scale", "micro", "--work_dir", gone,
                            "--results_dir", bare]) == 2
    error = capsys.readouterr().err
    assert "shows nsp, sop, random_start, which neither" in error and "would drop" in error
    assert experiment_main(["run", micro["path"], "--scale", "micro", "--work_dir", gone,
                            "--data_dir", micro["data"] + "_unmade", "--results_dir", bare,
                            "--variants", "sop", "--no_progress"]) == 2
    assert "shows nsp, which neither" in capsys.readouterr().err  # sop would be remade
    with open(os.path.join(bare, "results.md")) as f:
        assert f.read() == shown
    assert not os.path.exists(micro["data"] + "_unmade")
    assert not os.path.exists(gone) or not os.listdir(gone)
    # A part the table asks for that the record lacks needs the checkpoints it has not.
    lacking = json.loads(open(os.path.join(elsewhere, "sop", "result.json")).read())
    del lacking["trend"]
    with open(os.path.join(elsewhere, "sop", "result.json"), "w") as f:
        json.dump(lacking, f)
    assert experiment_main(run_elsewhere) == 2
    assert "lacks checkpoint trend, which needs the pretrained model" in \
        capsys.readouterr().err

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

    # Another table on another machine, where no work folder holds the run: the first
    # table's record (beside its report, as the tables lay them out) stands for it, since it
    # was made with the same settings and data and holds every part this table asks for.
    document = yaml.safe_load(open(micro["path"]).read())
    document["name"] = "copy_table"
    document["scales"]["micro"]["evaluation"].update(checkpoint_trend=False,
                                                     random_start=False)
    copy_root = os.path.join(os.path.dirname(os.path.dirname(micro["results"])), "copy_table")
    os.makedirs(copy_root)
    copy_path = os.path.join(copy_root, "copy_table.yaml")
    with open(copy_path, "w") as f:
        yaml.safe_dump(document, f)
    copy_results = os.path.join(copy_root, "results")
    assert experiment_main(["run", copy_path, "--scale", "micro", "--work_dir",
                            os.path.join(copy_root, "work"), "--data_dir", micro["data"],
                            "--results_dir", copy_results, "--variants", "sop",
                            "--no_progress"]) == 0
    output = capsys.readouterr().out
    record = os.path.join(micro["results"], "records", "sop")
    assert f"sop was run with the same settings and data, and its record is in {record}" \
        in output
    assert "variant sop (SOP)" not in output and "fine-tuning" not in output
    copied = json.loads(open(os.path.join(copy_root, "work", "sop", "result.json")).read())
    assert copied["copied_from"] == record
    assert copied["metrics"] == original["metrics"] and copied["data"] == original["data"]
    assert copied["downstream"] == original["downstream"]
    assert json.loads(open(os.path.join(copy_results, "records", "sop", "result.json")
                           ).read()) == copied


@pytest.mark.slow
def test_a_variant_without_a_sentence_objective_gets_its_sentence_columns_from_probes(
        tmp_path, capsys):
    (tmp_path / "train.txt").write_text(ordered_documents(300, seed=1))
    (tmp_path / "heldout.txt").write_text(ordered_documents(40, seed=2))
    document = micro_table_document(tmp_path, variants=[
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
    from albert_lab.comparison.suite import suite_name
    assert experiment_main(["run", micro["path"], *micro["arguments"], "--variants",
                            "sop"]) == 0
    tasks = tmp_path / "tasks"
    folder = write_sentiment_task(tasks / "feelings")
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
    # The folder's own baseline (its accuracy over 50 draws of such folders:
    # tests/albert_lab/comparison/test_bag_of_words.py).
    assert row["baseline"] == {"dev": baseline_score(str(folder), "sst2"),
                               "test": baseline_score(str(folder), "sst2", "test")}
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
    # tests/albert_lab/comparison/test_suite_report.py).
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
