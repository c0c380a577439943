"""`albert-experiment check`, the quickstart's downstream check: a finished pretraining run
and a random start of its sizes fine-tuned on one task folder, seed by seed, for real."""

import json

import numpy as np
import pytest
from data_helpers import english_like_text, sentiment_rows, write_tsv

from albert_lab.ablations.cli import main as experiment_main
from albert_lab.comparison.check import DownstreamCheck
from albert_lab.comparison.gain import compare_starts, paired_difference
from albert_tf.config.pretraining import pretrain_config_from_mapping
from albert_tf.training.trainer import run_pretraining
from data_prep.cli import main as data_main

SEQ = 32


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny ALBERT pretrained for 20 steps on text that holds the task's words."""
    root = tmp_path_factory.mktemp("check")
    corpus = root / "corpus.txt"
    lines = [sentence for sentence, _ in sentiment_rows(200, 9)]
    documents = ["\n".join(lines[start:start + 5]) for start in range(0, len(lines), 5)]
    corpus.write_text(english_like_text(60, seed=11) + "\n" + "\n\n".join(documents) + "\n")
    assert data_main(["train-spm", "--input", str(corpus), "--model_prefix", str(root / "spm"),
                      "--vocab_size", "200"]) == 0
    assert data_main(["build", "--input", str(corpus), "--spm_model", str(root / "spm.model"),
                      "--output_dir", str(root / "shards"), "--dupe_factor", "1",
                      "--max_seq_length", str(SEQ), "--max_predictions_per_seq", "5",
                      "--num_shards", "1", "--no_progress"]) == 0
    run_pretraining(pretrain_config_from_mapping({
        "model": {"vocab_size": 200, "embedding_size": 16, "hidden_size": 32, "num_layers": 2,
                  "num_attention_heads": 2, "intermediate_size": 64,
                  "max_position_embeddings": SEQ},
        "data": {"train_files": [str(root / "shards" / "*.tfrecord")], "max_seq_length": SEQ,
                 "max_predictions_per_seq": 5, "shuffle_buffer": 100},
        "optimizer": {"type": "adamw", "learning_rate": 0.001, "warmup_steps": 5},
        "train": {"model_dir": str(root / "run"), "global_batch_size": 16, "train_steps": 20,
                  "steps_per_epoch": 20, "steps_per_execution": 10, "backup_every_steps": 20,
                  "eval_steps": 0, "verbose": 0}}, "test"))
    return root / "run"


@pytest.mark.slow
def test_the_check_fine_tunes_both_starts_and_keeps_what_it_found(run, tmp_path, capsys):
    folder = tmp_path / "feelings"
    folder.mkdir()
    write_tsv(folder / "train.tsv", ["sentence", "label"], sentiment_rows(120, 1))
    write_tsv(folder / "dev.tsv", ["sentence", "label"], sentiment_rows(48, 2))
    (folder / "source.json").write_text(json.dumps({"albert_finetune": {"task": "sst2"}}))
    assert experiment_main(["check", str(run), "--task_dir", str(folder), "--train_steps", "20",
                            "--num_seeds", "2"]) == 0
    shown = capsys.readouterr().out
    check = json.loads((run / "downstream_check.json").read_text())
    scores = {start: [json.loads((run / "downstream_check" / start / f"seed{seed}" /
                                  "eval_results.json").read_text())["dev_metrics"]["dev"]
                      ["accuracy"] for seed in (1, 2)] for start in ("pretrained", "random")}
    assert check["split"] == "dev" and check["seeds"]["pretrained"]["2"]["value"] == \
        pytest.approx(scores["pretrained"][1])
    assert (check["gain"], check["low"], check["high"]) == pytest.approx(
        paired_difference(scores["pretrained"], scores["random"]))
    assert check["task"] == "sst2" and check["train_steps"] == 20
    assert check["recipe"] == "small_model_v4"
    assert (f"albert-experiment: downstream check on feelings (20 fine-tuning steps, 2 seeds): "
            f"dev accuracy {100 * np.mean(scores['pretrained']):.1f} from this run, "
            f"{100 * np.mean(scores['random']):.1f} from a random start "
            f"({100 * check['gain']:+.1f} points [{100 * check['low']:+.1f}, "
            f"{100 * check['high']:+.1f}] (95%, paired by seed))") in shown


def test_a_missing_or_unreadable_task_folder_is_an_error_that_names_it(run, tmp_path, capsys):
    missing = tmp_path / "bbc-news"
    assert experiment_main(["check", str(run), "--task_dir", str(missing)]) == 2
    assert (f"albert-experiment check: error: --task_dir: no task folder at {missing} (make it "
            f"with `albert-data task --source bbc-news --output {missing}`)"
            ) in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "source.json").write_text("{}")
    assert experiment_main(["check", str(run), "--task_dir", str(broken)]) == 2
    assert (f"albert-experiment check: error: {broken / 'source.json'}: not a task folder's "
            f"description") in capsys.readouterr().err


def test_no_gain_is_a_warning_and_a_stuck_random_start_fails_the_comparison():
    def check_of(pretrained, random):
        seeds = {"pretrained": pretrained, "random": random}
        return DownstreamCheck("tasks/feelings", "accuracy", 40, seeds,
                               compare_starts(pretrained, random))

    ahead = {"1": {"value": 0.71, "test": None, "stuck": False}}
    tied = check_of({"1": {"value": 0.7, "test": None, "stuck": False}}, ahead)
    assert tied.warning().startswith("warning: the pretrained encoder is no better a start")
    assert check_of(ahead, {"1": {"value": 0.7, "test": None, "stuck": False}}
                    ).warning() is None
    failed = check_of(ahead, {"1": {"value": 0.5, "test": None, "stuck": True}})
    assert failed.warning().startswith("warning: the comparison failed: the random start "
                                       "stuck at the constant answer on seed 1")
    assert "(one seed: no interval)" in failed.summary()
