"""One pretraining run: strategy, data, model, optimizer, `model.fit` with its callbacks.

A run's folder (`train.model_dir`):

    config.yaml          the resolved configuration (what `albert-eval` rebuilds the model from),
                         its `tokenizer` section filled from the shards' manifest
    precision.json       the policy `train.precision` resolved to at each start, and why
    <name>.model         a copy of the SentencePiece model the shards were made with
    checkpoints/ckpt-N   model + optimizer after step N (every `steps_per_epoch`), the last few
    backup/              Keras BackupAndRestore state every `backup_every_steps` (deleted
                         at the end)
    tensorboard/         losses, accuracies, learning rate, throughput (train and validation)
    eval_results.json    held-out MLM / sentence metrics of the final model
    .albert-folder.json  the run's settings (`io/owned_folder.py`); `.albert-lock` while it runs

Starting point: the layers' initializers, or the model `init.checkpoint` names (any format
`albert-convert` reads; the optimizer and step counter start fresh), then `init.*`'s other
settings (`training/initialization.py`).

Resuming: run the same command again. Keras's BackupAndRestore (`loop/backup.py`'s
`StepBackup`, which records the right step also when a call runs several) restores weights,
optimizer state and the step counter; this module restores the data position (the input
pipeline skips the batches the interrupted run consumed, and its order is a function of the
seed), so a resumed run sees exactly the batches an uninterrupted run would. A run whose
final checkpoint exists is not trained again; asked for more steps (`train.train_steps`
raised), it continues from that checkpoint's weights and optimizer state. The folder holds
one run: any other setting that differs is refused (`training/continuation.py`), and a
second command on it while one runs is refused by its lock. A loss that becomes NaN or
infinite stops the run with an error naming the step.
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import tensorflow as tf
import tf_keras
import yaml

from albert_tf.config.precision import precision_policy
from albert_tf.config.pretraining import PretrainConfig, TokenizerConfig
from albert_tf.config.run_folder import checkpoint_step, run_folders
from albert_tf.data.pretraining import PretrainingDataConfig, pretraining_dataset
from albert_tf.data.validation import (
    DataError,
    check_pretraining_files,
    manifest_example_count,
    read_shard_manifest,
    shard_folder,
)
from albert_tf.io import files as file_system
from albert_tf.io.files import atomic_write_bytes
from albert_tf.loop.backup import StepBackup, backup_step
from albert_tf.loop.cluster import agree_with_chief, peer_loss_reported
from albert_tf.loop.distribute import (
    check_global_batch,
    create_strategy,
    is_chief,
    resolve_jit_compile,
)
from albert_tf.loop.finite import StopAtNonFiniteLoss
from albert_tf.loop.optimization import create_optimizer
from albert_tf.loop.precision import run_precision
from albert_tf.loop.step_callbacks import StepCheckpoint, TrainingScalars
from albert_tf.models.pretrainer import AlbertPretrainer, built_pretrainer
from albert_tf.records.features import MANIFEST
from albert_tf.text.options import DataPrepError
from albert_tf.text.vocabulary import check_model_file
from albert_tf.training.collapse import CollapseWatch
from albert_tf.training.continuation import pretraining_folder, restore_run_checkpoint
from albert_tf.training.initialization import (
    freeze_parts,
    initialize_pretrainer,
    load_init_checkpoint,
)
from albert_tf.training.memorization import MemorizationWatch, passes_note


@dataclasses.dataclass
class PretrainResult:
    """What a finished run reports: its final step, checkpoint and held-out metrics."""

    final_step: int
    checkpoint: str
    eval_metrics: dict[str, float]
    history: dict[str, list[float]]
    chief: bool = True  # whether this process writes the run's files


def input_config(config: PretrainConfig, files, is_training: bool,
                 start_batch: int = 0) -> PretrainingDataConfig:
    """The input pipeline of run `config` over `files`: the training stream (from batch
    `start_batch`, dynamically masked when the run's `data` section says so, with its masking
    recipe) or a held-out pass."""
    data = config.data
    return PretrainingDataConfig(
        file_patterns=tuple(files), max_seq_length=data.max_seq_length,
        max_predictions_per_seq=data.max_predictions_per_seq,
        global_batch_size=config.train.global_batch_size, is_training=is_training,
        shuffle_buffer=data.shuffle_buffer, cycle_length=data.cycle_length,
        seed=config.train.seed, start_batch=start_batch,
        dynamic_masking=data.dynamic_masking and is_training, masking=data.masking_recipe(),
        vocab_size=config.model.vocab_size,
        dynamic_predictions_per_seq=(data.dynamic_predictions_per_seq or None) if is_training
        else None)


def _evaluation_steps(config: PretrainConfig, eval_files) -> int:
    """`train.eval_steps`, or fewer when the held-out set has fewer full batches (counted), so
    one evaluation reads no example twice (unless the set is smaller than one batch)."""
    batch = config.train.global_batch_size
    records = tf.data.TFRecordDataset(eval_files).take(config.train.eval_steps * batch)
    count = int(records.reduce(np.int64(0), lambda total, _: total + 1))
    return max(1, min(config.train.eval_steps, count // batch))


def _evaluation_data(strategy, config: PretrainConfig, eval_files):
    """Held-out batches, all full (static shapes, for TPUs) and endless: Keras then never
    runs out of data in the middle of a multi-step execution; `_evaluation_steps` bounds a
    pass."""
    data_config = input_config(config, eval_files, False)

    def dataset_fn(context):
        batch_size = context.get_per_replica_batch_size(config.train.global_batch_size)
        examples = pretraining_dataset(data_config, context).unbatch().repeat()
        return examples.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

    return strategy.distribute_datasets_from_function(dataset_fn)


def build_pretrainer(config: PretrainConfig,
                     return_all_layer_outputs: bool = False) -> AlbertPretrainer:
    """The run's model, built (weights created) so that checkpoints restore into it at once."""
    return built_pretrainer(config.model, config.sentence_objective, return_all_layer_outputs,
                            config.train.gradient_accumulation_steps)


def _worker_id(strategy) -> int:
    resolver = getattr(strategy, "cluster_resolver", None)
    return int(getattr(resolver, "task_id", 0) or 0)


def _watch_batch(config: PretrainConfig, files: list[str]) -> dict[str, tf.Tensor]:
    """The first (up to 128) examples of `files` in order: the batch the collapse check
    measures after every epoch."""
    data_config = dataclasses.replace(input_config(config, files, False),
                                      global_batch_size=min(config.train.global_batch_size, 128))
    return next(iter(pretraining_dataset(data_config)))


def _callbacks(config: PretrainConfig, strategy, watch_batch: dict[str, tf.Tensor],
               heldout_examples: int) -> list[tf_keras.callbacks.Callback]:
    folders = run_folders(config.train.model_dir)
    chief = is_chief(strategy)
    return [
        StopAtNonFiniteLoss(config.train.steps_per_execution),  # first: before any save
        StepBackup(
            folders["backup"],
            save_freq=config.train.backup_every_steps // config.train.steps_per_execution),
        StepCheckpoint(folders["checkpoints"], config.train.checkpoints_to_keep, chief,
                       _worker_id(strategy)),
        tf_keras.callbacks.TensorBoard(folders["tensorboard"],
                                       update_freq=config.train.log_every_steps),
        TrainingScalars(folders["tensorboard"], config.train.global_batch_size,
                        config.train.log_every_steps, enabled=chief),
        CollapseWatch(watch_batch, folders["tensorboard"], enabled=chief),
        MemorizationWatch(heldout_examples, enabled=chief),
    ]


def _write_text(path: str, text: str) -> None:
    """Atomically, on local disk or any TensorFlow filesystem (a model_dir may be gs://)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def carry_tokenizer(config: PretrainConfig, train_files: list[str],
                    chief: bool = True) -> PretrainConfig:
    """`config` with the tokenizer its training shards were made with (their manifest's
    SentencePiece model, checksum and lower-casing), the model file copied into the run
    folder (by the chief) so that every tool downstream finds it there.

    Raises:
        DataError: `config.tokenizer` names another checksum or lower-casing than the
            shards' manifest.
    """
    folder = shard_folder(train_files[0])
    manifest = read_shard_manifest(folder, "data.train_files") or {}
    recorded = manifest.get("tokenizer", {})
    given = config.tokenizer
    checksum = recorded.get("checksum") or given.checksum
    lower_case = manifest.get("options", {}).get("lower_case", given.lower_case)
    where = os.path.join(folder, MANIFEST)
    if given.checksum and recorded.get("checksum") and given.checksum != checksum:
        raise DataError(f"{where}: the shards were made with the SentencePiece model "
                        f"{recorded.get('path')} ({checksum}), but the run's "
                        f"tokenizer.checksum is {given.checksum}")
    if manifest and given.checksum and given.lower_case != lower_case:
        raise DataError(f"{where}: the shards were made with lower_case={lower_case}, but the "
                        f"run's tokenizer.lower_case is {given.lower_case}")
    source = given.spm_model or recorded.get("path") or ""
    if not source or not file_system.exists(source):
        if source:
            print(f"albert-pretrain: the SentencePiece model {source} is gone; the run folder "
                  f"records its checksum only")
        return dataclasses.replace(config, tokenizer=TokenizerConfig(
            source, checksum or "", lower_case))
    data = file_system.read_bytes(source)
    try:  # parsed, and its checksum checked, before it is copied
        found = check_model_file(data, source, checksum, where if recorded.get("checksum")
                                 else "the run's tokenizer section", config.model.vocab_size)
    except DataPrepError as error:
        raise DataError(str(error)) from None
    name = os.path.basename(source)
    copy = os.path.join(config.train.model_dir, name)
    if chief and not file_system.exists(copy):
        file_system.makedirs(config.train.model_dir)
        atomic_write_bytes(copy, data)
    return dataclasses.replace(config, tokenizer=TokenizerConfig(name, found, lower_case))


def save_run_config(config: PretrainConfig) -> None:
    _write_text(os.path.join(config.train.model_dir, "config.yaml"),
                yaml.safe_dump(config.to_dict(), sort_keys=False))


def _checked_inputs(config: PretrainConfig, strategy, verify_checksums: bool):
    """This worker's checks of its config and shards before anything is built: the config
    with the shards' tokenizer carried over, the train and eval files, and `jit_compile`."""
    check_global_batch(config, strategy)
    jit_compile = resolve_jit_compile(config, strategy)
    model_fields = {"model.vocab_size": config.model.vocab_size,
                    "sentence_objective": config.sentence_objective}

    def say(line: str) -> None:
        if is_chief(strategy):
            print(f"albert-pretrain: {line}")
    train_files = check_pretraining_files(input_config(config, config.data.train_files, True),
                                          "data.train_files", model_fields, verify_checksums,
                                          say)
    eval_files = (check_pretraining_files(input_config(config, config.data.eval_files, False),
                                          "data.eval_files", model_fields, verify_checksums,
                                          say)
                  if config.data.eval_files and config.train.eval_steps else [])
    # Its checks only: the chief copies the tokenizer once it holds the run folder.
    config = carry_tokenizer(config, train_files, chief=False)
    return config, train_files, eval_files, jit_compile


def _cluster_description(checked) -> dict:
    """What every worker of a multi-worker run must share with the chief: the resolved config,
    the tokenizer, and the shard files it reads with their sizes."""
    config, train_files, eval_files, _ = checked
    settings = config.to_dict()
    tokenizer = settings.pop("tokenizer")
    return {"config": settings,
            "tokenizer": {"checksum": tokenizer["checksum"],
                          "lower_case": tokenizer["lower_case"]},
            "shards": {path: file_system.size(path) for path in [*train_files, *eval_files]}}


def run_pretraining(config: PretrainConfig, verify_checksums: bool = False) -> PretrainResult:
    """Trains (or resumes, or finds finished) the run `config` describes; see the module
    docstring for the folder it writes. The shards are checked against their manifests
    first (`verify_checksums`: their SHA-256 too), and the workers of a multi-worker run
    must agree on config, shards and tokenizer (`loop/cluster.py`); then the chief holds
    the run folder (`training/continuation.py`) and writes its files."""
    strategy = create_strategy(config.distribution)
    given = config
    config, train_files, eval_files, jit_compile = agree_with_chief(
        strategy, lambda: _checked_inputs(given, strategy, verify_checksums),
        _cluster_description)
    folders = run_folders(config.train.model_dir)
    latest = tf.train.latest_checkpoint(folders["checkpoints"])
    start_step = backup_step(folders["backup"], config.train.steps_per_epoch)
    init_model = load_init_checkpoint(config) if latest is None and not start_step else None
    with pretraining_folder(config, is_chief(strategy)):
        if is_chief(strategy):
            carry_tokenizer(given, train_files)  # its copy in the run folder
            save_run_config(config)
        return _train(config, strategy, jit_compile, train_files, eval_files, folders,
                      latest, start_step, init_model)


def _train(config, strategy, jit_compile, train_files, eval_files, folders, latest,
           start_step, init_model) -> PretrainResult:
    """Builds the model, starts it (fresh, from `init_model`, from the backup Keras restores
    at `start_step`, or from the `latest` checkpoint of a finished run), then trains and
    evaluates."""
    tf_keras.utils.set_random_seed(config.train.seed)
    note = passes_note(manifest_example_count(train_files), config.train.train_steps,
                       config.train.global_batch_size, config.data.dynamic_masking)
    if note and is_chief(strategy):
        print(f"albert-pretrain: {note}")
    first_step = start_step or (checkpoint_step(latest) if latest is not None else 0)
    policy = run_precision("albert-pretrain", config, strategy, config.model.hidden_size,
                           jit_compile, first_step, is_chief(strategy))
    with precision_policy(policy):
        with strategy.scope():
            model = build_pretrainer(config)
            if latest is None and not start_step:
                for line in initialize_pretrainer(model, config, train_files, init_model):
                    if is_chief(strategy):
                        print(f"albert-pretrain: {line}")
            del init_model
            for line in freeze_parts(model, config.init.freeze):
                if is_chief(strategy):
                    print(f"albert-pretrain: {line}")
            model.compile(optimizer=create_optimizer(config.optimizer, config.train.train_steps),
                          steps_per_execution=config.train.steps_per_execution,
                          jit_compile=jit_compile)
            source = folders["backup"]
            finished = latest is not None and checkpoint_step(latest) >= \
                config.train.train_steps
            if latest is not None and (finished or not start_step):  # or asked for more steps
                start_step = restore_run_checkpoint(model, latest)
                source = f"{latest} (its weights and optimizer state)"
        if 0 < start_step < config.train.train_steps:
            print(f"albert-pretrain: resuming after step {start_step} from {source}")
        return _fit_and_evaluate(config, strategy, model, train_files, eval_files, folders,
                                 latest, start_step)


def _fit_and_evaluate(config, strategy, model, train_files, eval_files, folders, latest,
                      start_step):
    """Trains from `start_step` (the backup's position, or the last checkpoint's when a
    finished run continues), unless `latest`, the newest checkpoint, is already the final
    step; then evaluates on `eval_files`."""
    eval_steps = _evaluation_steps(config, eval_files) if eval_files else None
    history: dict[str, list[float]] = {}
    if latest is not None and checkpoint_step(latest) >= config.train.train_steps:
        print(f"albert-pretrain: {latest} is the final step; not training again")
    else:
        train_config = input_config(config, train_files, True, start_step)
        train_data = strategy.distribute_datasets_from_function(
            lambda context: pretraining_dataset(train_config, context))
        eval_data = _evaluation_data(strategy, config, eval_files) if eval_files else None
        callbacks = _callbacks(config, strategy, _watch_batch(config, eval_files or train_files),
                               (eval_steps or 0) * config.train.global_batch_size)
        with peer_loss_reported(strategy, folders["backup"]):
            fitted = model.fit(train_data, epochs=config.train.epochs,
                               initial_epoch=start_step // config.train.steps_per_epoch,
                               steps_per_epoch=config.train.steps_per_epoch,
                               validation_data=eval_data, validation_steps=eval_steps,
                               callbacks=callbacks, verbose=config.train.verbose)
        history = fitted.history
        latest = tf.train.latest_checkpoint(folders["checkpoints"])
    metrics = {}
    if eval_files:
        metrics = model.evaluate(_evaluation_data(strategy, config, eval_files),
                                 steps=eval_steps, return_dict=True, verbose=0)
        metrics = {name: float(value) for name, value in metrics.items()}
        if is_chief(strategy):
            _write_text(os.path.join(config.train.model_dir, "eval_results.json"),
                        json.dumps({"step": checkpoint_step(latest), **metrics}, indent=2,
                                   sort_keys=True))
    return PretrainResult(final_step=int(model.optimizer.iterations.numpy()),
                          checkpoint=latest, eval_metrics=metrics, history=history,
                          chief=is_chief(strategy))
