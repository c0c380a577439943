"""albert-pretrain / albert-eval end to end on shards the tests build: learning, resuming after
SIGKILL, multi-worker training, and errors before training starts."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
import yaml
from pretraining_runs import PREDICTIONS, SEQ, VOCAB, run_mapping, write_config
from process_helpers import child_environment, wait_for_backup
from repository import REPOSITORY
from seeding import seed_draws
from thresholds import above, below

from albert_tf.cli.evaluate import main as eval_main
from albert_tf.cli.pretrain import main as pretrain_main
from albert_tf.config import precision as precision_rule
from albert_tf.config.pretraining import TrainConfig, pretrain_config_from_mapping
from albert_tf.io import machine
from albert_tf.io.owned_folder import RECORD_FILE, read_record
from albert_tf.records.tfrecord import read_records
from albert_tf.training.trainer import build_pretrainer, run_pretraining
from data_prep.cli import main as data_main

CONFIGS = os.path.join(REPOSITORY, "configs")


def tensorboard_tags(folder):
    tags = set()
    for root, _, files in os.walk(folder):
        for name in files:
            if name.startswith("events.out"):
                for event in tf.compat.v1.train.summary_iterator(os.path.join(root, name)):
                    tags.update(value.tag for value in event.summary.value)
    return tags


@pytest.mark.slow
def test_a_tiny_model_learns_mlm_and_sop_and_albert_eval_scores_it(shards, tmp_path, capsys,
                                                                  seed, record_property):
    # XLA asked for (null leaves it off on CPUs): the compiled trainer path is this test's.
    # 600 steps, not 400, with the unigram MLM bias, not the original's zeros: at 400 steps
    # with zeros 3 of seeds 0-9 collapsed (one output for every input) and never learned SOP;
    # with the unigram bias seed 3 still sat at chance until step 300 (SOP is learned in a
    # jump, later on some seeds) and the decaying rate left too little after it.
    mapping = run_mapping(shards, tmp_path / "run", jit_compile=True, train_steps=600,
                          seed=TrainConfig.seed + seed)
    mapping["init"] = {"mlm_output_bias": "unigram"}
    config = pretrain_config_from_mapping(mapping, "test")
    untrained = build_pretrainer(config)
    untrained.compile(jit_compile=False)
    from albert_tf.training.evaluation import evaluate_files
    before = evaluate_files(untrained, config, [shards["heldout_sop"]], 32)

    result = run_pretraining(config)
    after = result.eval_metrics
    assert result.final_step == 600 and result.checkpoint.endswith("ckpt-600")
    below(record_property, "MLM loss after / before", after["mlm_loss"] / before["mlm_loss"],
          0.8)
    below(record_property, "sentence loss after / before",
          after["sentence_loss"] / before["sentence_loss"], 0.6)
    above(record_property, "held-out SOP accuracy", after["sentence_accuracy"], 0.75)
    saved = json.loads((tmp_path / "run" / "eval_results.json").read_text())
    assert saved["step"] == 600 and saved["sentence_accuracy"] == pytest.approx(
        after["sentence_accuracy"])
    tags = tensorboard_tags(tmp_path / "run" / "tensorboard")
    assert {"learning_rate", "examples_per_second", "epoch_mlm_accuracy",
            "epoch_sentence_loss", "representation/sequence_spread",
            "representation/pooled_spread"} <= tags, tags

    # The run folder carries the shards' tokenizer forward: a copy, its checksum, its case.
    manifest = json.loads(open(os.path.join(os.path.dirname(shards["train"]),
                                            "manifest.json")).read())
    recorded = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["tokenizer"]
    assert recorded == {"spm_model": "spm.model", "lower_case": True,
                        "checksum": manifest["tokenizer"]["checksum"]}
    assert (tmp_path / "run" / "spm.model").read_bytes() == open(
        manifest["tokenizer"]["path"], "rb").read()
    # ... so serving needs no --spm_model.
    from albert_tf.cli.export import main as export_main
    assert export_main(["--checkpoint", str(tmp_path / "run"), "--output",
                        str(tmp_path / "export")]) == 0
    assert "tokenizer " + str(tmp_path / "run" / "spm.model") in capsys.readouterr().out

    # A finished run is not trained again.
    again = run_pretraining(config)
    assert again.final_step == 600 and again.history == {}

    output = tmp_path / "table6.json"
    # The run evaluated whole batches only: 3 of 32 from the ~100 held-out examples.
    assert eval_main(["--model_dir", str(tmp_path / "run"), "--sop_files", shards["heldout_sop"],
                      "--nsp_files", shards["heldout_nsp"], "--output", str(output),
                      "--batch_size", "32", "--max_batches", "3"]) == 0
    scores = json.loads(output.read_text())["accuracy"]
    spreads = json.loads(output.read_text())["representation_spread"]
    above(record_property, "lowest representation spread", min(spreads.values()), 0.1)
    assert scores["sop"] == pytest.approx(after["sentence_accuracy"], abs=1e-6)
    assert scores["mlm"] == pytest.approx(after["mlm_accuracy"], abs=1e-6)
    assert 0.0 <= scores["nsp"] <= 1.0
    assert "| MLM | NSP | SOP |" in capsys.readouterr().out
    # A checkpoint the run does not have is an error naming it, not a traceback.
    missing = str(tmp_path / "run" / "checkpoints" / "ckpt-77")
    assert eval_main(["--model_dir", str(tmp_path / "run"), "--checkpoint", missing,
                      "--sop_files", shards["heldout_sop"]]) == 2
    assert f"albert-eval: error: {missing}: no such checkpoint" in capsys.readouterr().err

    # Through transformers' layout and back, the model scores the same (the converted
    # folder's config knows nothing of the shards' lengths: albert-eval reads them).
    from albert_tf.cli.convert import main as convert_main
    hf, converted = str(tmp_path / "hf"), str(tmp_path / "converted")
    assert convert_main(["--from", "ours", "--input", str(tmp_path / "run"),
                         "--to", "huggingface", "--output", hf]) == 0
    assert convert_main(["--from", "huggingface", "--input", hf, "--to", "ours",
                         "--output", converted]) == 0
    assert eval_main(["--model_dir", converted, "--sop_files", shards["heldout_sop"],
                      "--nsp_files", shards["heldout_nsp"], "--output", str(output),
                      "--batch_size", "32", "--max_batches", "3"]) == 0
    assert json.loads(output.read_text())["accuracy"] == scores

    # Continuing from the run (sentence head left fresh): the new run starts from its
    # weights at step 0 with a fresh optimizer, so a few slow steps keep its MLM skill.
    mapping = run_mapping(shards, tmp_path / "continued", train_steps=10, steps_per_epoch=10,
                          backup_every_steps=10, eval_steps=3)
    mapping["optimizer"].update(learning_rate=1e-4, warmup_steps=2)
    assert pretrain_main(["--config", write_config(tmp_path / "continue.yaml", mapping),
                          "--init_checkpoint", str(tmp_path / "run"),
                          "--init_ignore", "^sentence_head/"]) == 0
    out = capsys.readouterr().out
    assert f"started from ours {tmp_path / 'run'} (step 600)" in out, out
    assert "left as initialized: sentence_head (2)" in out and "finished at step 10" in out
    continued = json.loads((tmp_path / "continued" / "eval_results.json").read_text())
    below(record_property, "continued run: share of the MLM loss's drop given back",
          (continued["mlm_loss"] - after["mlm_loss"]) / (before["mlm_loss"] - after["mlm_loss"]),
          0.2)


def _pretrain_command(config_path):
    return [sys.executable, "-m", "albert_tf.cli.pretrain", "--config", config_path]


def _model_variables(checkpoint):
    reader = tf.train.load_checkpoint(checkpoint)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name.startswith("model/")}


def test_example_outcomes_are_the_evaluated_accuracies_prediction_by_prediction(
        shards, tmp_path, seed, record_property):
    config = pretrain_config_from_mapping(run_mapping(shards, tmp_path / "run"), "test")
    seed_draws(3 + seed)  # the initial weights
    model = build_pretrainer(config)
    model.compile(jit_compile=False)
    from albert_tf.training.evaluation import evaluate_files, example_outcomes
    files = [shards["heldout_sop"]]
    outcomes = example_outcomes(model, config, files, 16)
    metrics = evaluate_files(model, config, files, 16)
    # Labels straight from the shards (the pass interleaves the shards: compared as sets).
    import glob
    masked, sentence = [], []
    for record in tf.data.TFRecordDataset(sorted(glob.glob(shards["heldout_sop"]))):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        weights = np.asarray(feature["masked_lm_weights"].float_list.value)
        masked += list(np.asarray(feature["masked_lm_ids"].int64_list.value)[weights > 0])
        sentence += list(feature["next_sentence_labels"].int64_list.value)
    np.testing.assert_array_equal(np.sort(outcomes["mlm_labels"]), np.sort(masked))
    np.testing.assert_array_equal(np.sort(outcomes["sentence_labels"]), np.sort(sentence))
    assert outcomes["mlm_correct"].dtype == bool
    # Some right: with none, the accuracies compared below would agree at 0 for nothing.
    above(record_property, "right MLM predictions of the untrained model",
          outcomes["mlm_correct"].sum(), 0)
    assert outcomes["mlm_correct"].mean() == pytest.approx(metrics["mlm_accuracy"], abs=1e-6)
    assert outcomes["sentence_correct"].mean() == pytest.approx(metrics["sentence_accuracy"],
                                                                abs=1e-6)
    # Every pass reads the examples in one order, so two models' outcomes pair up.
    again = example_outcomes(model, config, files, 16)
    for name in outcomes:
        np.testing.assert_array_equal(again[name], outcomes[name])
    # A limited pass covers the same first batches evaluate_files scores with max_batches.
    first = example_outcomes(model, config, files, 16, max_batches=2)
    assert len(first["sentence_correct"]) == 32
    assert first["mlm_correct"].mean() == pytest.approx(
        evaluate_files(model, config, files, 16, max_batches=2)["mlm_accuracy"], abs=1e-6)


@pytest.mark.slow
def test_sigkill_then_the_same_command_resumes_to_the_same_weights(shards, tmp_path):
    env = child_environment(tmp_path)
    # Four steps a call: a backup must record the step the call ended at, not began at.
    train = {"train_steps": 200, "steps_per_epoch": 100, "steps_per_execution": 4,
             "backup_every_steps": 20, "eval_steps": 0}
    killed = write_config(tmp_path / "killed.yaml",
                          run_mapping(shards, tmp_path / "killed", **train))
    straight = write_config(tmp_path / "straight.yaml",
                            run_mapping(shards, tmp_path / "straight", **train))
    uninterrupted = subprocess.Popen(_pretrain_command(straight), env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    victim = subprocess.Popen(_pretrain_command(killed), env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    backup = tmp_path / "killed" / "backup" / "chief"
    wait_for_backup(backup, victim)
    time.sleep(1.0)  # let it run past the first backup
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert victim.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert not (tmp_path / "killed" / "checkpoints" / "ckpt-200.index").exists()

    resumed = subprocess.run(_pretrain_command(killed), env=env, capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming after step" in resumed.stdout
    assert "finished at step 200" in resumed.stdout
    assert uninterrupted.wait(timeout=600) == 0

    ours = _model_variables(str(tmp_path / "killed" / "checkpoints" / "ckpt-200"))
    reference = _model_variables(str(tmp_path / "straight" / "checkpoints" / "ckpt-200"))
    assert ours.keys() == reference.keys()
    assert any("optimizer" in name for name in ours)  # optimizer state is in the comparison
    for name, value in reference.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_two_process_multi_worker_run_completes(shards, tmp_path):
    mapping = run_mapping(shards, tmp_path / "run", train_steps=20, steps_per_epoch=10,
                          steps_per_execution=1, backup_every_steps=10, eval_steps=2)
    mapping["distribution"] = {"strategy": "multi_worker"}
    mapping["optimizer"]["warmup_steps"] = 5
    config_path = write_config(tmp_path / "multi.yaml", mapping)
    workers = [f"localhost:{_free_port()}" for _ in range(2)]
    processes = []
    for index in range(2):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = {**child_environment(tmp_path), "TF_CONFIG": json.dumps(tf_config)}
        processes.append(subprocess.Popen(_pretrain_command(config_path), env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True))
    outputs = [process.communicate(timeout=600)[0] for process in processes]
    for process, output in zip(processes, outputs):
        assert process.returncode == 0, output[-3000:]
    assert "finished at step 20" in outputs[0]
    assert (tmp_path / "run" / "checkpoints" / "ckpt-20.index").exists()
    assert not any(name.startswith(".worker") for name in
                   os.listdir(tmp_path / "run" / "checkpoints"))
    # The chief held the run folder (the worker, on the same folder, never asked for it):
    # its record is the chief's, its lock is gone, the worker wrote no file of its own there.
    assert read_record(str(tmp_path / "run")).command == "albert-pretrain"
    assert sorted(os.listdir(tmp_path / "run")) == [RECORD_FILE, "backup", "checkpoints",
                                                    "config.yaml", "eval_results.json",
                                                    "precision.json", "spm.model",
                                                    "tensorboard"]


@pytest.mark.parametrize("change, expected", [
    (["--override", "train.stepz=3"], ["stepz", "TrainConfig"]),
    (["--override", "data.train_files=[/nowhere/*.tfrecord]"],
     ["data.train_files", "/nowhere/*.tfrecord"]),
    (["--override", "data.max_seq_length=32"], ["data.max_seq_length", "64", "32"]),
    # The shards' manifest against the model: its tokenizer's size, its sentence labels.
    (["--override", "model.vocab_size=30000"],
     ["manifest.json", f"a {VOCAB}-piece SentencePiece model", "spm.model",
      "model.vocab_size is 30000"]),
    (["--override", "sentence_objective=nsp"],
     ["manifest.json", "sentence_objective sop", "the run's sentence_objective is nsp"]),
    (["--override", "tokenizer.checksum=sha256:0"],
     ["manifest.json", "spm.model", "the run's tokenizer.checksum is sha256:0"]),
])
def test_bad_config_or_data_fails_before_training(shards, tmp_path, capsys, change, expected):
    config_path = write_config(tmp_path / "run.yaml", run_mapping(shards, tmp_path / "run"))
    assert pretrain_main(["--config", config_path, *change]) == 2
    error = capsys.readouterr().err
    for text in expected:
        assert text in error, error
    assert not (tmp_path / "run").exists()


def _lose_a_shard(folder, manifest):
    os.remove(folder / manifest["shards"][1]["file"])
    return [f"{folder / manifest['shards'][1]['file']}: missing; {folder}/manifest.json names "
            "it among its 2 shards"]


def _cut_a_shard_short(folder, manifest):
    path = folder / manifest["shards"][0]["file"]
    last = list(read_records(str(path)))[-1]
    with open(path, "r+b") as file:  # at a record boundary: a valid, shorter TFRecord file
        file.truncate(manifest["shards"][0]["bytes"] - 16 - len(last))
    return [f"{path}: {manifest['shards'][0]['bytes'] - 16 - len(last):,} bytes, but "
            f"{folder}/manifest.json records {manifest['shards'][0]['bytes']:,}"]


def _point_at_another_tokenizer(folder, manifest):
    other = folder.parent / "other.model"
    data_main(["train-spm", "--input", str(folder.parent / "heldout.txt"), "--model_prefix",
               str(folder.parent / "other"), "--vocab_size", str(VOCAB)])
    manifest["tokenizer"]["path"] = str(other)
    return [f"{other}: its checksum is sha256:", f"but {folder}/manifest.json records "
            f"{manifest['tokenizer']['checksum']} for it"]


def _point_at_an_unchecked_file(folder, manifest):
    manifest["tokenizer"].update(path=str(folder / "build.json"), checksum=None)
    return [f"{folder / 'build.json'}: not a SentencePiece model"]


@pytest.mark.parametrize("damage", [_lose_a_shard, _cut_a_shard_short,
                                    _point_at_another_tokenizer, _point_at_an_unchecked_file])
def test_shards_unlike_their_manifest_are_refused_before_step_1(shards, tmp_path, capsys,
                                                                  damage):
    """A copy of the training shards, damaged: the run stops with the file named before it
    creates its folder (nothing trained, no tokenizer copied)."""
    folder = tmp_path / "train"
    shutil.copytree(os.path.dirname(shards["train"]), folder)
    shutil.copy(os.path.join(os.path.dirname(shards["train"]), "..", "heldout.txt"), tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    expected = damage(folder, manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    mapping = run_mapping(shards, tmp_path / "run")
    mapping["data"]["train_files"] = [str(folder / "*.tfrecord")]
    assert pretrain_main(["--config", write_config(tmp_path / "run.yaml", mapping)]) == 2
    error = capsys.readouterr().err
    for text in expected:
        assert text in error, error
    assert not (tmp_path / "run").exists()


def test_config_sections_and_presets(tmp_path):
    path = write_config(tmp_path / "run.yaml", {"model": {"preset": "tiny", "num_layers": 2},
                                                "data": {"max_seq_length": 128},
                                                "train": {"train_steps": 10,
                                                          "steps_per_epoch": 5}})
    from albert_tf.config.pretraining import load_pretrain_config
    config = load_pretrain_config(path, ["optimizer.warmup_steps=2", "sentence_objective=nsp"])
    assert config.model.num_layers == 2 and config.model.hidden_size == 32  # tiny preset
    assert config.optimizer.warmup_steps == 2 and config.sentence_objective == "nsp"
    for paper in ("albert_base_paper", "albert_xxlarge_paper"):
        recipe = load_pretrain_config(os.path.join(CONFIGS, "pretrain", f"{paper}.yaml"))
        assert (recipe.train.global_batch_size, recipe.data.max_seq_length,
                recipe.optimizer.learning_rate, recipe.train.train_steps,
                recipe.optimizer.warmup_steps) == (4096, 512, 0.00176, 125_000, 3125)


@pytest.mark.parametrize("precision, flags, policy", [
    ("mixed_float16", "avx2 fma", "mixed_float16"),  # as set; a GPU's, with loss scaling
    ("auto", "avx2 avx512f avx512_bf16", "mixed_bfloat16"),  # the size rule lowered to 32:
    # as a TPU's and a base-size model's on this CPU
    ("auto", "avx2 fma avx512f", "float32"),  # nothing changes on a CPU without the flags
])
def test_each_precision_trains_and_evaluates_with_float32_variables(
        shards, tmp_path, monkeypatch, precision, flags, policy):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"model name\t: Made-up CPU\nflags\t\t: {flags}\n")
    monkeypatch.setattr(machine, "CPUINFO", str(cpuinfo))
    monkeypatch.setattr(precision_rule, "CPU_BFLOAT16_MIN_HIDDEN_SIZE", 32)
    mapping = run_mapping(shards, tmp_path / "run", train_steps=4, steps_per_epoch=2,
                          steps_per_execution=2, backup_every_steps=2, eval_steps=1,
                          precision=precision, jit_compile=False)
    mapping["optimizer"]["warmup_steps"] = 1
    result = run_pretraining(pretrain_config_from_mapping(mapping, "test"))
    assert result.final_step == 4
    assert np.isfinite(result.eval_metrics["loss"])
    assert tf_keras.mixed_precision.global_policy().name == "float32"  # restored afterwards
    recorded = json.loads((tmp_path / "run" / "precision.json").read_text())
    assert (recorded["setting"], recorded["starts"][0]["policy"]) == (precision, policy)
    written = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert written["train"]["precision"] == precision  # as written, not as resolved
    stored = tf.train.load_checkpoint(result.checkpoint).get_variable_to_dtype_map()
    weights = {name: dtype for name, dtype in stored.items() if "/.ATTRIBUTES/" in name
               and dtype.is_floating}
    assert len(weights) > 20 and set(weights.values()) == {tf.float32}


def test_a_run_writes_to_a_remote_model_dir(shards):
    """model_dir may be any TensorFlow filesystem (gs:// on TPUs): here the in-memory ram://."""
    mapping = run_mapping(shards, "ram://albert_run", train_steps=4, steps_per_epoch=2,
                          steps_per_execution=2, backup_every_steps=2, eval_steps=1,
                          jit_compile=False)
    mapping["optimizer"]["warmup_steps"] = 1
    result = run_pretraining(pretrain_config_from_mapping(mapping, "test"))
    assert result.checkpoint == "ram://albert_run/checkpoints/ckpt-4"
    assert tf.io.gfile.exists("ram://albert_run/config.yaml")
    assert json.loads(tf.io.gfile.GFile("ram://albert_run/eval_results.json").read())["step"] == 4
    from albert_tf.checkpoints.model_folder import load_pretrainer
    model, config, checkpoint = load_pretrainer("ram://albert_run")
    assert checkpoint == result.checkpoint and config.train.train_steps == 4


def test_more_prediction_slots_than_the_shards_train_with_dynamic_masking(shards, tmp_path):
    """Dynamic masking at twice the shards' slots and a 30% rate: training batches carry the
    larger slot count (jit-compiled), held-out evaluation reads the shards' own masks."""
    from albert_tf.config import ConfigError

    mapping = run_mapping(shards, tmp_path / "run", train_steps=4, steps_per_epoch=2,
                          steps_per_execution=2, backup_every_steps=2, eval_steps=1)
    mapping["optimizer"]["warmup_steps"] = 1
    mapping["data"].update(dynamic_masking=True, masked_lm_prob=0.3,
                           dynamic_predictions_per_seq=2 * PREDICTIONS)
    config = pretrain_config_from_mapping(mapping, "test")
    assert config.data.training_predictions_per_seq == 2 * PREDICTIONS
    result = run_pretraining(config)
    assert result.final_step == 4 and np.isfinite(result.eval_metrics["loss"])

    static = {**mapping["data"], "dynamic_masking": False}
    with pytest.raises(ConfigError, match="'data.dynamic_predictions_per_seq' needs "
                                          "data.dynamic_masking=true"):
        pretrain_config_from_mapping({**mapping, "data": static}, "test")
    too_many = {**mapping["data"], "dynamic_predictions_per_seq": SEQ + 1}
    with pytest.raises(ConfigError, match="dynamic_predictions_per_seq"):
        pretrain_config_from_mapping({**mapping, "data": too_many}, "test")


def test_unigram_init_sets_the_mlm_bias_to_the_targets_log_prior(shards, tmp_path):
    from albert_tf.data.target_frequencies import log_prior, masked_target_counts
    from albert_tf.training.initialization import initialize_pretrainer

    mapping = run_mapping(shards, tmp_path / "run")
    zeros = pretrain_config_from_mapping(mapping, "test")
    model = build_pretrainer(zeros)
    assert initialize_pretrainer(model, zeros, [shards["train"]]) == []
    assert not np.any(model.masked_lm.output_bias.numpy())

    unigram = pretrain_config_from_mapping(
        {**mapping, "init": {"mlm_output_bias": "unigram", "prior_examples": 200}}, "test")
    [message] = initialize_pretrainer(model, unigram, [shards["train"]])
    assert "200 training examples" in message
    counts, _ = masked_target_counts([shards["train"]], PREDICTIONS, VOCAB, 200)
    bias = model.masked_lm.output_bias.numpy()
    np.testing.assert_allclose(bias, log_prior(counts), rtol=1e-6)
    assert np.argmax(bias) == np.argmax(counts)
    # Control ids are never targets: their bias is the smoothed floor.
    assert bias[2] == bias.min()


def test_init_section_is_checked(shards, tmp_path):
    from albert_tf.config import ConfigError

    mapping = {**run_mapping(shards, tmp_path / "run"), "init": {"mlm_output_bias": "prior"}}
    with pytest.raises(ConfigError, match="init.mlm_output_bias' must be one of zeros, unigram"):
        pretrain_config_from_mapping(mapping, "test")


def test_two_runs_of_the_same_config_write_identical_checkpoints(shards, tmp_path):
    """Training is deterministic: the same config (seeded data order, weights and dropout)
    gives bit-identical weights and optimizer slots (the README's figures rely on it)."""
    checkpoints = []
    for name in ("first", "second"):  # each in its own process, as a user runs it
        mapping = run_mapping(shards, tmp_path / name, train_steps=4, steps_per_epoch=2,
                              steps_per_execution=2, backup_every_steps=2, eval_steps=0,
                              jit_compile=False)
        mapping["optimizer"]["warmup_steps"] = 2
        mapping["model"]["hidden_dropout"] = 0.1  # dropout is seeded too
        subprocess.run(_pretrain_command(write_config(tmp_path / f"{name}.yaml", mapping)),
                       check=True, capture_output=True)
        checkpoints.append(str(tmp_path / name / "checkpoints" / "ckpt-4"))
    readers = [tf.train.load_checkpoint(path) for path in checkpoints]
    names = sorted(readers[0].get_variable_to_shape_map())
    assert names == sorted(readers[1].get_variable_to_shape_map())
    assert any("optimizer/_variables" in name for name in names)  # the slots too
    for name in names:
        if name == "_CHECKPOINTABLE_OBJECT_GRAPH":
            continue
        np.testing.assert_array_equal(readers[0].get_tensor(name), readers[1].get_tensor(name),
                                      err_msg=name)
