"""One fine-tuning run: pretrained encoder + task head, `model.fit` with dev evaluation every
`eval_every_steps`, the best checkpoint kept, then test predictions in leaderboard format.

A run's folder (`train.model_dir`):

    finetune.yaml        the resolved run config (tokenizer path and casing included)
    model_config.yaml    the encoder config with the fine-tuning dropout
    <name>.model         the SentencePiece model, so the folder exports on its own
    precision.json       the policy `train.precision` resolved to at each start, and why
    features/            converted features cached as TFRecords (data.cache_dir)
    best/ckpt-N          encoder + head weights of the best dev evaluation; best.json
    eval_history.jsonl   every dev evaluation; eval_results.json: the best model's scores
    predictions/         test-set files for the leaderboards (and dev predictions)
    backup/              Keras BackupAndRestore state (deleted at the end)
    tensorboard/
    .albert-folder.json  the run's settings (`io/owned_folder.py`); `.albert-lock` while it runs

Running the same command again resumes an interrupted run (weights, optimizer, step, data
position and the best score so far) and leaves a finished one as it is; other settings on
the same folder are refused, naming the fields, and so is a second command while one runs
(`same_run.py`). A loss that becomes NaN or infinite stops the run with an error naming the
step; a NaN dev score is never the best.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os

import numpy as np
import tf_keras
import yaml

from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.checkpoints.transfer import copy_weights
from albert_tf.config import ConfigError
from albert_tf.config.finetuning import FinetuneConfig
from albert_tf.config.precision import precision_policy
from albert_tf.finetuning import datasets as task_data
from albert_tf.finetuning.dev_evaluation import (
    HISTORY_FILE,
    DevEvaluation,
    StopAtStep,
    read_best,
    restore_weights,
)
from albert_tf.finetuning.feature_cache import CachedFeatures, cache_key, cached_features
from albert_tf.finetuning.head_prior import start_head_at_prior
from albert_tf.finetuning.initialization import load_pretrained_encoder
from albert_tf.finetuning.restore import FINETUNE_CONFIG_FILE, MODEL_CONFIG_FILE
from albert_tf.finetuning.same_run import finetuning_folder
from albert_tf.finetuning.stuck import stuck_note
from albert_tf.finetuning.task_kinds import FinetuneTask, get_task
from albert_tf.io.files import atomic_write_bytes, file_digest, read_bytes
from albert_tf.loop.backup import StepBackup, backup_step
from albert_tf.loop.distribute import check_global_batch, create_strategy, resolve_jit_compile
from albert_tf.loop.finite import StopAtNonFiniteLoss
from albert_tf.loop.optimization import create_optimizer
from albert_tf.loop.precision import run_precision
from albert_tf.loop.step_callbacks import TrainingScalars
from albert_tf.task_data.examples import TaskDataError
from albert_tf.tokenization import AlbertTokenizer

RESULTS_FILE = "eval_results.json"


@dataclasses.dataclass
class FinetuneResult:
    """What a finished run reports.

    Attributes:
        best_step, best_checkpoint: the dev evaluation that chose the kept weights.
        dev_metrics: split -> metric -> score of the kept weights on each dev split.
        prediction_files: the leaderboard (and dev) prediction files written.
        test_metrics: split -> metric -> score on each test split with gold labels (a task
            folder's `test_labels.tsv`), of the weights dev chose; test is never used to
            choose anything.
        metric: the primary metric, which chose the checkpoint.
        constant_scores: split -> the primary metric of one answer for every example (the
            majority class's share for accuracy), for each labelled split.
    """

    best_step: int
    best_checkpoint: str
    dev_metrics: dict[str, dict[str, float]]
    prediction_files: list[str]
    test_metrics: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    metric: str = ""
    constant_scores: dict[str, float] = dataclasses.field(default_factory=dict)

    def stuck_note(self) -> str | None:
        """Says so when the first dev split's best score is within a point of the constant
        answer's (`albert_tf.finetuning.stuck`); None otherwise, and for runs made before
        the constant scores were recorded."""
        split = next(iter(self.dev_metrics), None)
        if split is None or not self.metric:
            return None
        return stuck_note(self.metric, self.dev_metrics[split][self.metric],
                          self.constant_scores.get(split), split)


@dataclasses.dataclass
class SplitData:
    """A split's examples (None for training, which needs only features) and features."""

    examples: list | None
    features: CachedFeatures

    @functools.cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        """Every feature as numpy, read once (evaluation reads the labels and, for SQuAD,
        the token offsets at every evaluation)."""
        return self.features.arrays()


class SplitPreparer:
    """Reads and converts a task's splits through the feature cache."""

    def __init__(self, task: FinetuneTask, tokenizer: AlbertTokenizer, cache_dir: str):
        self.task, self.tokenizer, self.cache_dir = task, tokenizer, cache_dir
        self.tokenizer_digest = file_digest([tokenizer.spm_model])

    def __call__(self, split: str, is_training: bool = False) -> SplitData:
        task = self.task
        key = cache_key(task=task.name, split=split, is_training=is_training,
                        data=file_digest(task.source_files(split)),
                        tokenizer=self.tokenizer_digest, lower_case=self.tokenizer.lower_case,
                        **task.conversion_settings())
        examples = None if is_training else task.read(split)

        def convert():
            print(f"albert-finetune: converting {task.name} {split} (cached for later runs)")
            return task.convert(examples if examples is not None else task.read(split),
                                self.tokenizer, is_training)

        return SplitData(examples, cached_features(self.cache_dir, f"{task.name}-{split}", key,
                                                   convert))


def trim_multiple(config: FinetuneConfig) -> int | None:
    """What batches are cut to a multiple of (None: full `max_seq_length`, for TPUs)."""
    return None if config.data.static_shapes else config.data.pad_to_multiple_of


def predict(model, task: FinetuneTask, features: CachedFeatures,
            config: FinetuneConfig) -> dict[str, np.ndarray]:
    """The model's task outputs for every row of `features`, in order."""
    trim = trim_multiple(config) if task.trims_eval_batches else None
    dataset = task_data.evaluation_dataset(features, task.model_features,
                                           config.train.eval_batch_size, trim)
    # The dataset's length is unknown to Keras (a cached file); with several steps per
    # execution it cannot infer one, so the batches are counted here.
    batches = -(-features.count // config.train.eval_batch_size)
    outputs = model.predict(dataset, steps=batches, verbose=0)
    return {name: np.asarray(value)[:features.count] for name, value in outputs.items()}


def evaluate_split(model, task: FinetuneTask, split: SplitData, config: FinetuneConfig
                   ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """(the task's scores, the model's outputs) on one labelled split."""
    outputs = predict(model, task, split.features, config)
    scores = task.evaluate(split.examples, split.arrays, outputs)
    return {name: float(value) for name, value in scores.items()}, outputs


def build_task_model(task: FinetuneTask, pretrained, features: CachedFeatures):
    """The task model, built on one real row, with the pretrained encoder weights."""
    model = task.build_model(pretrained.config)
    row = next(iter(features.dataset(task.model_features).batch(1)))
    model(row, training=False)
    if pretrained.encoder is not None:
        copied = copy_weights(pretrained.encoder, model.encoder)  # by name, all or nothing
        if copied.fresh:
            raise CheckpointError(f"{pretrained.source}: the checkpoint has no "
                                  f"{', '.join(copied.fresh)} for the task model's encoder")
    return model


def _write_run_files(config: FinetuneConfig, pretrained) -> FinetuneConfig:
    """Copies the tokenizer into the run folder and writes the resolved configs; returns the
    config as written (pointing at the copied tokenizer)."""
    model_dir = config.train.model_dir
    os.makedirs(model_dir, exist_ok=True)
    spm_copy = os.path.join(model_dir, os.path.basename(pretrained.spm_model))
    if os.path.abspath(spm_copy) != os.path.abspath(pretrained.spm_model):
        atomic_write_bytes(spm_copy, read_bytes(pretrained.spm_model))
    config = dataclasses.replace(config, model=dataclasses.replace(
        config.model, spm_model=os.path.abspath(spm_copy), lower_case=pretrained.lower_case))
    for name, mapping in ((FINETUNE_CONFIG_FILE, config.to_dict()),
                          (MODEL_CONFIG_FILE, pretrained.config.to_dict())):
        atomic_write_bytes(os.path.join(model_dir, name),
                           yaml.safe_dump(mapping, sort_keys=False).encode())
    return config


def _training_data(strategy, config: FinetuneConfig, task, features, start_step: int):
    trim = trim_multiple(config)

    def dataset_fn(context):
        per_replica = context.get_per_replica_batch_size(config.train.global_batch_size)
        replicas_per_pipeline = context.num_replicas_in_sync // context.num_input_pipelines
        return task_data.training_dataset(
            features, task.model_features, per_replica, config.data.shuffle_buffer,
            config.train.seed, trim, start_step * replicas_per_pipeline, context)

    return strategy.distribute_datasets_from_function(dataset_fn)


def run_finetuning(config: FinetuneConfig) -> FinetuneResult:
    """Fine-tunes (or resumes, or finds finished) the run `config` describes, holding its
    folder meanwhile (`same_run.finetuning_folder`)."""
    task = get_task(config)
    config = task.check_inputs()  # the user's own files: all read and checked before any write
    results_path = os.path.join(config.train.model_dir, RESULTS_FILE)
    if os.path.exists(results_path):
        with finetuning_folder(config):  # the same run's, or an error naming what differs
            with open(results_path, encoding="utf-8") as f:
                finished = json.load(f)
        print(f"albert-finetune: {config.train.model_dir} is finished (step "
              f"{finished['best_step']}); not training again")
        return FinetuneResult(**finished)
    _check_splits(task, config)
    strategy = create_strategy(config.distribution)
    check_global_batch(config, strategy)
    jit_compile = resolve_jit_compile(config, strategy)
    pretrained = load_pretrained_encoder(config)
    with finetuning_folder(config):
        return _train(config, strategy, jit_compile, task, pretrained)


def _check_splits(task, config) -> None:
    """A TaskDataError, before the run folder is made, when the task folder lacks the
    training split or the dev split that chooses the best checkpoint."""
    for split, use in (("train", "to train on"),
                       (task.eval_splits[0], "to choose the best checkpoint")):
        if not task.has_split(split):
            looked = ", ".join(task.source_files(split))  # a GLUE task's raises, naming it
            raise TaskDataError(f"{config.data.data_dir}: task {task.name} needs its "
                                f"'{split}' split {use} (looked for {looked})")


def _train(config, strategy, jit_compile, task, pretrained) -> FinetuneResult:
    """Writes the run's files, prepares the splits, builds the task model and fits it."""
    model_dir = config.train.model_dir
    config = _write_run_files(config, pretrained)
    print(f"albert-finetune: {task.name} from {pretrained.source}")
    tokenizer = AlbertTokenizer(config.model.spm_model, config.model.lower_case)
    prepare = SplitPreparer(task, tokenizer,
                            config.data.cache_dir or os.path.join(model_dir, "features"))
    train = prepare("train", is_training=True)
    dev = {split: prepare(split) for split in task.eval_splits if task.has_split(split)}
    tf_keras.utils.set_random_seed(config.train.seed)
    policy = run_precision("albert-finetune", config, strategy, pretrained.config.hidden_size,
                           jit_compile, backup_step(os.path.join(model_dir, "backup"),
                                                    config.train.eval_every_steps))
    with precision_policy(policy):
        with strategy.scope():
            model = build_task_model(task, pretrained, train.features)
            if config.model.head_bias_prior:
                bias = start_head_at_prior(model, train.features.arrays(["label"])["label"])
                print(f"albert-finetune: the head's bias starts at the training labels' "
                      f"prior {np.round(bias, 3).tolist()}")
            model.gradient_accumulation_steps = config.train.gradient_accumulation_steps
            model.compile(optimizer=create_optimizer(config.optimizer, config.train.train_steps),
                          steps_per_execution=config.train.steps_per_execution,
                          jit_compile=jit_compile)
        _fit(config, strategy, task, model, train, dev)
        return _finish(config, task, model, prepare, dev)


def _dev_scores(model, task, dev, config) -> dict[str, dict[str, float]]:
    return {split: evaluate_split(model, task, data, config)[0] for split, data in dev.items()}


def _fit(config, strategy, task, model, train, dev) -> None:
    model_dir, every = config.train.model_dir, config.train.eval_every_steps
    backup_dir = os.path.join(model_dir, "backup")
    start_step = backup_step(backup_dir, every)
    if start_step:
        print(f"albert-finetune: resuming after step {start_step} from {backup_dir}")
    log_dir = os.path.join(model_dir, "tensorboard")
    # The evaluation runs before the backup at an epoch's end, so a resumed run never skips
    # an evaluation (a crash between the two repeats it).
    callbacks = [
        StopAtNonFiniteLoss(config.train.steps_per_execution),  # first: before any save
        DevEvaluation(lambda: _dev_scores(model, task, dev, config),
                      model_dir, task.primary_metric, log_dir,
                      patience_steps=config.train.early_stopping_evals * every),
        StepBackup(backup_dir),
        StopAtStep(config.train.train_steps),
        tf_keras.callbacks.TensorBoard(log_dir, update_freq=config.train.log_every_steps),
        TrainingScalars(log_dir, config.train.global_batch_size, config.train.log_every_steps),
    ]
    model.fit(_training_data(strategy, config, task, train.features, start_step),
              epochs=math.ceil(config.train.train_steps / every), steps_per_epoch=every,
              callbacks=callbacks, verbose=config.train.verbose)


def _finish(config, task, model, prepare, dev) -> FinetuneResult:
    """Restores the best checkpoint, scores every dev split with it and writes the dev and
    test predictions."""
    model_dir = config.train.model_dir
    best = read_best(model_dir)
    if best is None:
        raise ConfigError(f"{model_dir}: no dev evaluation gave a finite {task.primary_metric} "
                          f"(see {HISTORY_FILE}), so no checkpoint was kept")
    restore_weights(model, os.path.join(model_dir, best["checkpoint"]))
    output_dir = os.path.join(model_dir, "predictions")
    os.makedirs(output_dir, exist_ok=True)
    written, scores, test_scores, constants = [], {}, {}, {}
    for split, data in dev.items():
        scores[split], outputs = evaluate_split(model, task, data, config)
        constants[split] = task.constant_score(data.examples, data.arrays)
        if task.writes_dev_predictions:
            written += task.write_predictions(split, data.examples, data.arrays, outputs,
                                              output_dir)
    for split in task.predict_splits:
        if not task.has_split(split):
            continue
        data = prepare(split)
        if task.has_labels(split):
            test_scores[split], outputs = evaluate_split(model, task, data, config)
            constants[split] = task.constant_score(data.examples, data.arrays)
        else:
            outputs = predict(model, task, data.features, config)
        written += task.write_predictions(split, data.examples, data.arrays, outputs,
                                          output_dir)
    result = FinetuneResult(best["step"], os.path.join(model_dir, best["checkpoint"]), scores,
                            written, test_scores, task.primary_metric,
                            {split: value for split, value in constants.items()
                             if value is not None})
    atomic_write_bytes(os.path.join(model_dir, RESULTS_FILE),
                       json.dumps(dataclasses.asdict(result), indent=2).encode())
    return result
