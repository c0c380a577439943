"""The frozen-feature probe: the linear fit chooses on dev and never on test, the encoder
outputs match the encoder's own by hand, and `albert-experiment probe` on a tiny run and two
made-up task folders: one whose label is a word the features hold, one of coin flips."""

import functools
import json

import numpy as np
import pytest
import tensorflow as tf
import yaml
from data_helpers import english_like_text, sentiment_rows, write_task_folder
from thresholds import at_least, at_most

from albert_lab.ablations.cli import main as experiment_main
from albert_lab.comparison.probe import encoder_outputs, fit_probe, random_encoder
from albert_tf.finetuning.feature_cache import write_features
from albert_tf.models.encoder import INPUT_NAMES


def _accuracy(labels):
    return lambda split, predicted: float(np.mean(predicted == labels[split]))


def _splits(rng, sizes, label):
    inputs = {split: rng.normal(size=(size, 8)) for split, size in sizes.items()}
    return inputs, {split: label(values) for split, values in inputs.items()}


def test_the_probe_learns_a_linear_rule_chooses_on_dev_and_never_looks_at_test(
        seed, record_property):
    rng = np.random.default_rng(seed)
    inputs, labels = _splits(rng, {"train": 600, "dev": 300, "test": 300},
                             lambda x: (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int))
    found = fit_probe(inputs, labels["train"], False, _accuracy(labels), True)
    at_least(record_property, "dev accuracy", found.dev, 0.95)
    at_least(record_property, "test accuracy", found.test, 0.95)
    # Test labels shuffled: the same strength and dev score, and test at chance.
    shuffled = {**labels, "test": rng.permutation(labels["test"])}
    again = fit_probe(inputs, labels["train"], False, _accuracy(shuffled), True)
    assert (again.strength, again.dev) == (found.strength, found.dev)
    at_most(record_property, "|test accuracy on shuffled labels - 0.5|",
            abs(again.test - 0.5), 0.15)  # 5 standard errors at 300 rows
    # Dev labels shuffled instead: the choice may move, and dev says chance (the best of the
    # strengths tried, so a little above one half).
    blind = fit_probe(inputs, labels["train"], False,
                      _accuracy({**labels, "dev": rng.permutation(labels["dev"])}), True)
    at_least(record_property, "dev accuracy on shuffled labels, low bound", blind.dev, 0.4)
    at_most(record_property, "dev accuracy on shuffled labels, high bound", blind.dev, 0.65)
    assert fit_probe(inputs, labels["train"], False, _accuracy(labels), False).test is None


def test_labels_the_features_do_not_hold_leave_the_probe_at_the_larger_class(
        seed, record_property):
    """Labels drawn at 70/30 independently of the features: over 2,000 test rows the probe
    scores what answering the larger class scores, within a few points."""
    rng = np.random.default_rng(seed + 1)
    inputs, labels = _splits(rng, {"train": 2000, "dev": 1000, "test": 2000},
                             lambda x: (rng.random(len(x)) < 0.3).astype(int))
    found = fit_probe(inputs, labels["train"], False, _accuracy(labels), True)
    at_most(record_property, "|test accuracy - the larger class's share|",
            abs(found.test - np.mean(labels["test"] == 0)), 0.04)


def test_a_similarity_probe_is_a_ridge_regression(seed, record_property):
    rng = np.random.default_rng(seed + 2)
    weights = rng.normal(size=8)
    inputs, targets = _splits(rng, {"train": 400, "dev": 200, "test": 200},
                              lambda x: x @ weights + 0.1 * rng.normal(size=len(x)))
    found = fit_probe(inputs, targets["train"], True,
                      lambda split, predicted: float(np.corrcoef(predicted,
                                                                 targets[split])[0, 1]), True)
    # ||weights|| varies with the seed, and the noise's share with it: 0.986 at the lowest
    # of 50 seeds (scripts/check_thresholds.py).
    at_least(record_property, "test correlation", found.test, 0.95)


def test_encoder_outputs_are_the_pooled_output_and_the_mean_over_real_pieces(
        tiny_encoder, tmp_path):
    """Rows of 3 to 30 pieces in 32 columns, read in batches cut to their longest row: the
    same as the encoder's outputs on the full rows, averaged by hand over the real pieces."""
    rng = np.random.default_rng(3)
    lengths = rng.integers(3, 31, size=21)
    ids = np.zeros((21, 32), np.int32)
    mask = np.zeros((21, 32), np.int32)
    types = np.zeros((21, 32), np.int32)
    for row, length in enumerate(lengths):
        ids[row, :length] = rng.integers(5, 97, size=length)
        mask[row, :length] = 1
        types[row, length // 2:length] = 1
    features = write_features(str(tmp_path / "rows.tfrecord"), {
        "input_word_ids": ids, "input_mask": mask, "input_type_ids": types,
        "label": np.zeros(21, np.int32)})
    found = encoder_outputs(tiny_encoder, features, batch_size=8)
    full = tiny_encoder(dict(zip(INPUT_NAMES, map(tf.constant, (ids, mask, types)))),
                        training=False)
    sequence = full["sequence_output"].numpy()
    by_hand = np.stack([sequence[row, :length].mean(axis=0)
                        for row, length in enumerate(lengths)])
    np.testing.assert_allclose(found["mean"], by_hand, atol=1e-5)
    np.testing.assert_allclose(found["pooled"], full["pooled_output"].numpy(), atol=1e-5)


def test_random_encoders_are_the_same_for_the_same_seed(tiny_config):
    first, again, other = (random_encoder(tiny_config, seed) for seed in (1, 1, 2))
    for ours, same, different in zip(first.get_weights(), again.get_weights(),
                                     other.get_weights()):
        np.testing.assert_array_equal(ours, same)
        assert ours.shape == different.shape
    assert any(not np.array_equal(ours, different)
               for ours, different in zip(first.get_weights(), other.get_weights()))


# Rows per split of the probe's tasks: enough test rows that chance scores 0.5 within 0.016
# (one standard error), so bounds a few standard errors from chance leave a real margin.
PROBE_SPLITS = {"train": 2000, "dev": 400, "test": 1000}


def write_probe_tasks(tasks, seed):
    """Task folders under `tasks`: `feelings` (the label is which of two word sets a
    sentence holds), `coin` (labels drawn at random) and `one-class` (every training label
    the same); their sentences and coin flips drawn from `seed`."""
    rng = np.random.default_rng(seed)
    for name, relabel in (("feelings", lambda labels: labels),
                          ("coin", lambda labels: rng.integers(0, 2, len(labels))),
                          ("one-class", lambda labels: np.ones(len(labels), int))):
        rows = {}
        for offset, (split, count) in enumerate(PROBE_SPLITS.items()):
            drawn_rows = sentiment_rows(count, 100 + 3 * seed + offset)  # not the corpus's (9)
            labels = [int(label) for label in relabel([label for _, label in drawn_rows])]
            rows[split] = [(sentence, label) for (sentence, _), label in zip(drawn_rows, labels)]
        write_task_folder(tasks / name, rows,
                          {"albert_finetune": {"task": "classify"}, "labels": ["0", "1"]})


@pytest.fixture(scope="module")
def probe_inputs(tmp_path_factory):
    """A 20-step pretraining run on English-like text that holds the tasks' words, and a
    tasks folder: `feelings` (the label is which of two word sets a sentence holds), `coin`
    (labels drawn at random) and `one-class` (every training label the same)."""
    from albert_tf.cli.pretrain import main as pretrain_main
    from data_prep.cli import main as data_main

    root = tmp_path_factory.mktemp("probe")
    lines = [sentence for sentence, _ in sentiment_rows(400, 9)]
    documents = ["\n".join(lines[start:start + 5]) for start in range(0, len(lines), 5)]
    corpus = root / "corpus.txt"
    corpus.write_text(english_like_text(100, seed=4) + "\n" + "\n\n".join(documents) + "\n")
    assert data_main(["train-spm", "--input", str(corpus), "--model_prefix",
                      str(root / "spm"), "--vocab_size", "200"]) == 0
    assert data_main(["build", "--input", str(corpus), "--spm_model", str(root / "spm.model"),
                      "--output_dir", str(root / "shards"), "--dupe_factor", "1",
                      "--max_seq_length", "32", "--max_predictions_per_seq", "5",
                      "--num_shards", "1", "--no_progress"]) == 0
    config = {
        "model": {"vocab_size": 200, "embedding_size": 16, "hidden_size": 32, "num_layers": 2,
                  "num_attention_heads": 4, "intermediate_size": 64,
                  "max_position_embeddings": 32},
        "data": {"train_files": [str(root / "shards" / "*.tfrecord")], "max_seq_length": 32,
                 "max_predictions_per_seq": 5, "shuffle_buffer": 100},
        "optimizer": {"type": "adamw", "learning_rate": 0.001, "warmup_steps": 5},
        "init": {"mlm_output_bias": "unigram"},
        "train": {"model_dir": str(root / "run"), "global_batch_size": 16, "train_steps": 20,
                  "steps_per_epoch": 20, "steps_per_execution": 10, "backup_every_steps": 20,
                  "eval_steps": 0, "verbose": 0}}
    (root / "run.yaml").write_text(yaml.safe_dump(config))
    assert pretrain_main(["--config", str(root / "run.yaml")]) == 0
    tasks = root / "tasks"
    write_probe_tasks(tasks, seed=0)
    return {"run": str(root / "run"), "tasks": str(tasks)}


@pytest.mark.slow
def test_the_probe_finds_the_word_the_label_is_and_not_the_coin(probe_inputs, tmp_path,
                                                                 capsys, seed, record_property):
    """The tasks' sentences, the coin's flips and the random encoders' weights come from
    the seed; the pretraining run is one fixed, seeded run (the bounds are about probing)."""
    output, tasks = tmp_path / "probe", tmp_path / "tasks"
    write_probe_tasks(tasks, seed)
    random_seeds = [str(1 + 2 * seed), str(2 + 2 * seed)]  # the random encoders' weights
    assert experiment_main(["probe", probe_inputs["run"], "--tasks_dir", str(tasks),
                            "--seeds", *random_seeds,
                            "--output_dir", str(output)]) == 0
    shown = capsys.readouterr().out
    assert "one-class left out: " in shown and "every training example has the same label" \
        in shown
    report = json.loads((output / "probe.json").read_text())
    assert sorted(report["tasks"]) == ["coin", "feelings"]
    assert (output / "probe.md").read_text() in shown
    for name, row in report["tasks"].items():
        with open(tasks / name / "test_labels.tsv") as f:
            labels = np.array([int(line.split("\t")[1]) for line in f.read().splitlines()[1:]])
        larger = max(np.mean(labels), 1 - np.mean(labels))
        assert row["constant"]["test"] == pytest.approx(larger)
        starts = [row["pretrained"], *row["random"].values()]
        assert sorted(row["random"]) == sorted(random_seeds)
        accuracies = [scores[feature]["test"] for scores in starts
                      for feature in ("pooled", "mean")]
        # Chance scores 0.5 within 0.016 (one standard error at 1,000 test rows).
        if name == "feelings":  # which word set a sentence holds: even random 32-wide
            # encoders keep much of it; at least chance plus 6 standard errors
            at_least(record_property, "feelings: lowest test accuracy", min(accuracies), 0.6)
        else:  # coin flips: nothing to find, chance within 5 standard errors
            at_most(record_property, "coin: largest |test accuracy - 0.5|",
                    max(abs(accuracy - 0.5) for accuracy in accuracies), 0.08)


def test_the_probe_names_a_task_folder_that_is_not_there(probe_inputs, tmp_path, capsys):
    assert experiment_main(["probe", probe_inputs["run"], "--tasks_dir",
                            probe_inputs["tasks"], "--tasks", "feelings", "moods",
                            "--output_dir", str(tmp_path)]) == 2
    assert "has no task folder moods" in capsys.readouterr().err
    assert experiment_main(["probe", probe_inputs["run"], "--tasks_dir",
                            str(tmp_path / "absent")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_an_interrupted_probe_starts_again_at_its_first_unfinished_task(
        probe_inputs, tmp_path, monkeypatch):
    """The probe stopped during its second task keeps the first one's scores; run again, it
    probes only the second; with other seeds it keeps nothing; at the end the progress file
    is gone."""
    from albert_lab.comparison import probe as probe_module

    output = tmp_path / "probe"
    probed = []
    real_probe = probe_module.TaskProbe.probe

    def probe_or_stop(self, encoder):
        probed.append(self.task.data_dir)
        if self.task.data_dir.endswith("feelings") and stop["now"]:
            raise KeyboardInterrupt("the session stopped")
        return real_probe(self, encoder)

    stop = {"now": True}
    monkeypatch.setattr(probe_module.TaskProbe, "probe", probe_or_stop)
    run = functools.partial(probe_module.probe_run, probe_inputs["run"],
                            probe_inputs["tasks"], tasks=["coin", "feelings"],
                            output_dir=str(output))
    with pytest.raises(KeyboardInterrupt):
        run(seeds=(1,))
    assert not (output / "probe.json").exists()
    kept = json.loads((output / probe_module.PROGRESS_FILE).read_text())
    assert sorted(kept["tasks"]) == ["coin"]
    first_coin = kept["tasks"]["coin"]["row"]

    stop["now"] = False
    probed.clear()
    report = run(seeds=(1,))
    assert [folder.rsplit("/", 1)[-1] for folder in probed] == ["feelings", "feelings"]
    assert report["tasks"]["coin"] == first_coin
    assert sorted(report["tasks"]) == ["coin", "feelings"]
    assert json.loads((output / "probe.json").read_text()) == report
    assert not (output / probe_module.PROGRESS_FILE).exists()

    # Progress made with other seeds is not taken.
    stop["now"] = True
    with pytest.raises(KeyboardInterrupt):
        run(seeds=(1,))
    stop["now"] = False
    probed.clear()
    run(seeds=(2,))
    assert [folder.rsplit("/", 1)[-1] for folder in probed] == ["coin", "coin", "feelings",
                                                                 "feelings"]
