"""The pieces of a fine-tuning run below the model: the feature cache, the tf.data
pipelines, task conversion, the run config and the CLI's errors."""

import os

import numpy as np
import pytest
import tensorflow as tf
from repository import REPOSITORY

from albert_tf.cli.finetune import main as finetune_main
from albert_tf.config.finetuning import load_finetune_config
from albert_tf.finetuning import feature_cache
from albert_tf.finetuning.datasets import evaluation_dataset, training_dataset, trim_to_longest
from albert_tf.finetuning.task_kinds import TASK_NAMES, get_task
from albert_tf.io.files import file_digest
from albert_tf.task_data.examples import MultipleChoiceExample, TextExample
from albert_tf.tokenization import AlbertTokenizer


def rows(count, seq=16, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, seq + 1, count)
    mask = (np.arange(seq)[None] < lengths[:, None]).astype(np.int32)
    return {"input_word_ids": rng.integers(5, 50, (count, seq)).astype(np.int32) * mask,
            "input_mask": mask, "input_type_ids": np.zeros((count, seq), np.int32),
            "label": rng.integers(0, 3, count).astype(np.int32),
            "score": rng.random(count).astype(np.float32)}


def test_cache_round_trips_and_converts_only_once(tmp_path):
    arrays = rows(37)
    calls = []

    def convert():
        calls.append(1)
        return arrays

    first = feature_cache.cached_features(str(tmp_path), "task-dev", "k1", convert)
    again = feature_cache.cached_features(str(tmp_path), "task-dev", "k1", convert)
    assert len(calls) == 1 and again == first and first.count == 37
    read = first.arrays()
    for name, value in arrays.items():
        np.testing.assert_array_equal(read[name], value)
        assert read[name].dtype == value.dtype
    # A cache without its .json (a crash mid-write) is converted again.
    os.remove(first.path + ".json")
    feature_cache.cached_features(str(tmp_path), "task-dev", "k1", convert)
    assert len(calls) == 2


def test_cache_key_follows_settings_and_file_bytes(tmp_path):
    data = tmp_path / "train.tsv"
    data.write_text("a\t1\n")
    digest = file_digest([str(data)])
    key = feature_cache.cache_key(data=digest, max_seq_length=128)
    assert key == feature_cache.cache_key(data=digest, max_seq_length=128)
    assert key != feature_cache.cache_key(data=digest, max_seq_length=64)
    data.write_text("a\t0\n")
    assert file_digest([str(data)]) != digest


def test_batches_are_cut_to_their_longest_row_rounded_up():
    mask = np.zeros((2, 64), np.int32)
    mask[0, :17] = 1
    mask[1, :5] = 1
    batch = {"input_word_ids": tf.constant(mask * 7), "input_mask": tf.constant(mask),
             "input_type_ids": tf.constant(mask * 0), "label": tf.constant([1, 0])}
    trimmed = trim_to_longest(batch, 16)
    assert trimmed["input_mask"].shape == (2, 32) and trimmed["label"].shape == (2,)
    np.testing.assert_array_equal(trimmed["input_word_ids"].numpy(), mask[:, :32] * 7)
    assert trim_to_longest(batch, 128)["input_mask"].shape == (2, 64)


def test_evaluation_batches_keep_order_and_fill_the_last_batch(tmp_path):
    arrays = rows(10)
    cached = feature_cache.write_features(str(tmp_path / "f.tfrecord"), arrays)
    batches = list(evaluation_dataset(cached, ["input_mask", "label"], 4, None))
    assert [batch["label"].shape[0] for batch in batches] == [4, 4, 4]
    labels = np.concatenate([batch["label"].numpy() for batch in batches])
    np.testing.assert_array_equal(labels[:10], arrays["label"])
    assert not labels[10:].any() and not batches[-1]["input_mask"].numpy()[2:].any()


def test_training_order_is_a_function_of_the_seed_and_skipping_resumes_it(tmp_path):
    cached = feature_cache.write_features(str(tmp_path / "f.tfrecord"), rows(20))

    def labels(seed, skip=0, take=6):
        dataset = training_dataset(cached, ["label", "score"], 4, 100, seed, None, skip)
        return [batch["score"].numpy().tolist() for batch in dataset.take(take)]

    assert labels(1) == labels(1)
    assert labels(1) != labels(2)
    assert labels(1, skip=2, take=4) == labels(1)[2:]
    scores = sorted(score for batch in labels(1, take=5) for score in batch)
    np.testing.assert_allclose(scores, sorted(rows(20)["score"]))  # one pass = every row


def test_task_names_and_recipes_agree():
    assert set(TASK_NAMES) == {"cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte",
                               "wnli", "squad_v1", "squad_v2", "race", "classify", "regress"}
    folder = os.path.join(REPOSITORY, "configs", "finetune")
    for name in TASK_NAMES:
        config = load_finetune_config(os.path.join(folder, f"{name}.yaml"))
        assert config.task == name and config.optimizer.type == "adamw"
    mrpc = load_finetune_config(os.path.join(folder, "mrpc.yaml"))
    assert (mrpc.optimizer.learning_rate, mrpc.optimizer.warmup_steps, mrpc.train.train_steps,
            mrpc.train.global_batch_size, mrpc.data.max_seq_length) == (2e-5, 200, 800, 32, 512)
    squad = load_finetune_config(os.path.join(folder, "squad_v1.yaml"))
    assert (squad.optimizer.learning_rate, squad.train.train_steps, squad.data.max_seq_length,
            squad.train.global_batch_size) == (5e-5, 3649, 384, 48)


@pytest.mark.parametrize("override, expected", [
    ("task=glue", "field 'task' must be one of cola"),
    ("model.init_format=onnx", "field 'model.init_format' must be one of ours"),
    ("model.classifier_dropout=1.5", "field 'model.classifier_dropout' must be in [0, 1)"),
    ("train.eval_every_steps=0", "field 'train.eval_every_steps' must be positive"),
    ("optimizer.warmup_steps=900", "field 'optimizer.warmup_steps' must be below"),
    ("data.max_seq_lenght=12", "'max_seq_lenght' is not a field of TaskDataConfig"),
])
def test_config_errors_name_the_field(override, expected, capsys):
    recipe = os.path.join(REPOSITORY, "configs", "finetune",
                          "mrpc.yaml")
    assert finetune_main(["--config", recipe, "--override", override, "--print_config"]) == 2
    assert expected in capsys.readouterr().err


def test_cli_prints_the_resolved_recipe_and_rejects_unknown_tasks(capsys):
    assert finetune_main(["--task", "rte", "--data_dir", "glue/RTE", "--print_config"]) == 0
    printed = capsys.readouterr().out
    assert "task: rte" in printed and "data_dir: glue/RTE" in printed
    assert finetune_main(["--task", "imdb", "--print_config"]) == 2
    assert "unknown task 'imdb'" in capsys.readouterr().err


def test_missing_checkpoint_and_data_are_reported_before_training(released_style_model,
                                                                  tmp_path, capsys):
    task_folder = tmp_path / "with_splits"  # the splits are there: the missing start is named
    task_folder.mkdir()
    for split in ("train", "dev"):
        (task_folder / f"{split}.tsv").write_text(
            "index\tsentence1\tsentence2\tlabel\n0\tA cat.\tAn animal.\tentailment\n")
    assert finetune_main(["--task", "rte", "--data_dir", str(task_folder), "--model_dir",
                          str(tmp_path / "run")]) == 2
    assert "model.init_checkpoint" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    assert finetune_main(["--task", "rte", "--data_dir", str(tmp_path), "--model_config",
                          "tiny", "--spm_model", released_style_model, "--model_dir",
                          str(tmp_path / "run"), "--override", "data.max_seq_length=32"]) == 2
    assert "train.tsv" in capsys.readouterr().err


def test_glue_and_race_conversion_pack_as_the_original(released_style_model):
    tokenizer = AlbertTokenizer(released_style_model)
    config = load_finetune_config(None, ["data.max_seq_length=12", "data.max_qa_length=3"],
                                  task="rte")
    task = get_task(config)
    examples = [TextExample("dev-1", "the cafe was open", "he was in the cafe", "entailment"),
                TextExample("dev-2", "of and in to", "a", "not_entailment")]
    arrays = task.convert(examples, tokenizer, is_training=False)
    expected = tokenizer.encode_for_model([e.text_a for e in examples],
                                          [e.text_b for e in examples], 12)
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        width = expected[name].shape[1]
        np.testing.assert_array_equal(arrays[name][:, :width], expected[name])
        assert not arrays[name][:, width:].any() and arrays[name].shape == (2, 12)
    np.testing.assert_array_equal(arrays["label"], [0, 1])

    race = get_task(load_finetune_config(None, ["data.max_seq_length=12",
                                                "data.max_qa_length=3"], task="race"))
    question = MultipleChoiceExample("f-0", "the cafe was open in the year", "he was _ the",
                                     ["in", "of", "at the cafe", "to"], 2, "middle")
    arrays = race.convert([question], tokenizer, is_training=False)
    assert arrays["input_word_ids"].shape == (1, 4, 12) and arrays["label"].tolist() == [2]
    option = tokenizer.encode("he was at the cafe the")[-3:]  # the last max_qa_length pieces
    row = arrays["input_word_ids"][0, 2]
    length = arrays["input_mask"][0, 2].sum()
    assert row[length - 1] == tokenizer.sep_id and list(row[length - 4:length - 1]) == option
    assert length == 12


def test_glue_scores_follow_the_task_table():
    """CoLA: MCC of labels 1 1 0 0 vs 1 0 0 0 is (1*2 - 0*1) / sqrt(1*2*2*3) = 0.57735;
    STS-B: Pearson of (1 2 3) vs (1 2 4) is 3 / (sqrt(2) * sqrt(42) / 3) = 0.98198,
    Spearman 1, mean squared error 1/3."""
    cola = get_task(load_finetune_config(None, task="cola"))
    logits = np.array([[0.0, 1.0], [2.0, 1.0], [3.0, 0.0], [1.0, 0.5]])
    scores = cola.evaluate(None, {"label": np.array([1, 1, 0, 0])}, {"logits": logits})
    assert cola.primary_metric == "matthews_correlation"
    assert scores == pytest.approx({"matthews_correlation": 2 / np.sqrt(12), "accuracy": 0.75})
    stsb = get_task(load_finetune_config(None, task="stsb"))
    scores = stsb.evaluate(None, {"label": np.array([1.0, 2.0, 3.0])},
                           {"predictions": np.array([1.0, 2.0, 4.0])})
    assert stsb.primary_metric == "pearson"
    assert scores == pytest.approx({"pearson": 9 / np.sqrt(84), "spearman": 1.0,
                                    "mse": 1 / 3})
    mrpc = get_task(load_finetune_config(None, task="mrpc"))
    scores = mrpc.evaluate(None, {"label": np.array([1, 0, 1])},
                           {"logits": np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])})
    assert scores == pytest.approx({"accuracy": 1 / 3, "f1_score": 0.5})


def test_an_optimizer_section_keeps_the_fine_tuning_defaults():
    """Setting one optimizer field must not fall back to the pretraining LAMB recipe."""
    config = load_finetune_config(None, ["optimizer.learning_rate=1e-3"], task="sst2")
    assert (config.optimizer.type, config.optimizer.learning_rate,
            config.optimizer.warmup_steps) == ("adamw", 1e-3, 100)


def test_static_shapes_keep_full_length_batches(tmp_path):
    """TPUs need one shape: with data.static_shapes the batches are never cut."""
    from albert_tf.finetuning.runner import trim_multiple

    static = load_finetune_config(None, ["data.static_shapes=true"], task="rte")
    assert trim_multiple(static) is None
    assert trim_multiple(load_finetune_config(None, task="rte")) == 16
    cached = feature_cache.write_features(str(tmp_path / "f.tfrecord"), rows(8, seq=64))
    batch = next(iter(training_dataset(cached, ["input_mask", "label"], 4, 10, 0,
                                       trim_multiple(static))))
    assert batch["input_mask"].shape == (4, 64)
