"""Our own model folder: what `albert-pretrain` writes and what `albert-convert` produces.

A model folder holds `config.yaml` (the run config: the model section and the sentence
objective are what loading needs), `checkpoints/ckpt-<step>` (a `tf.train.Checkpoint` with
the model under `model`, the encoder under `model/encoder`) and, for converted models,
`conversion.json` (where the weights came from, which heads they include, the SentencePiece
model's name and checksum) and the SentencePiece model. An encoder-only checkpoint (no
pretraining heads in the source) is saved under the same `model/encoder` path, so the encoder
of any folder loads the same way.

Loading compares the checkpoint with the model built from `config.yaml` first and reports every
missing, unexpected or mis-shaped variable (`reading.restore_checked`).
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

import tensorflow as tf
import yaml

from albert_tf.checkpoints.original import build_model
from albert_tf.checkpoints.reading import CheckpointError, restore_checked
from albert_tf.checkpoints.staging import staged_folder, write_checkpoint_state
from albert_tf.config import ConfigError
from albert_tf.config.pretraining import DataConfig, PretrainConfig, pretrain_config_from_mapping
from albert_tf.config.run_folder import CONFIG_FILE, CONVERSION_FILE, checkpoint_name, run_folders
from albert_tf.config.schema import parse_yaml
from albert_tf.io.names import plain_name
from albert_tf.models.encoder import AlbertEncoder
from albert_tf.models.pretrainer import AlbertPretrainer, built_pretrainer
from albert_tf.text.options import DataPrepError
from albert_tf.text.vocabulary import check_model_file

_HEAD_KEYS = (r"^model/(masked_lm|sentence_head|_trackers)/",)


def split_checkpoint_path(path: str) -> tuple[str, str | None]:
    """(model folder, checkpoint or None): a folder names itself; one of its checkpoints
    (`<folder>/checkpoints/ckpt-N`, or a fine-tuning run's `<folder>/best/ckpt-N`) names the
    folder two levels up. Raises CheckpointError when `path` is neither (no folder, and no
    `<path>.index` of a checkpoint)."""
    if tf.io.gfile.isdir(path):  # local or remote (gs://)
        return path, None
    if not tf.io.gfile.exists(path + ".index"):
        raise CheckpointError(
            f"{path}: no such model folder or checkpoint; expected a folder albert-pretrain or "
            f"albert-convert wrote, or one of its checkpoints (<folder>/checkpoints/ckpt-N, or "
            f"a fine-tuning run's <folder>/best/ckpt-N)")
    if "://" in path:
        return path.rsplit("/", 2)[0], path
    return os.path.dirname(os.path.dirname(os.path.abspath(path))), path


def load_run_config(model_dir: str) -> PretrainConfig:
    """The configuration stored in model folder `model_dir`."""
    path = os.path.join(model_dir, CONFIG_FILE)
    if not tf.io.gfile.exists(path):
        raise ConfigError(f"{path}: no such file; is {model_dir} a model folder written by "
                          f"albert-pretrain or albert-convert?")
    with tf.io.gfile.GFile(path) as f:  # model_dir may be remote (gs://)
        mapping = parse_yaml(f.read())
    return pretrain_config_from_mapping(mapping, path)


def conversion_facts(model_dir: str) -> dict[str, Any]:
    """The folder's `conversion.json` (empty for a folder albert-pretrain wrote)."""
    path = os.path.join(model_dir, CONVERSION_FILE)
    if not tf.io.gfile.exists(path):
        return {}
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


def folder_tokenizer(model_dir: str) -> tuple[str | None, bool | None]:
    """(path of the folder's SentencePiece model or None, its lower-casing or None): from
    `conversion.json` for a converted folder, else from the run's `tokenizer` section (the
    copy albert-pretrain keeps beside config.yaml).

    The file is checked before anyone reads or copies it: a name must be a file of the
    folder (a run may also record the absolute path of a model it could not copy), its
    checksum the one recorded beside the name (`spm_checksum`, `tokenizer.checksum`), and it
    must parse as an ALBERT SentencePiece model; a folder converted before checksums were
    recorded is checked for the model's vocabulary size instead. Raises CheckpointError."""
    facts = conversion_facts(model_dir)
    config = load_run_config(model_dir)
    if facts.get("spm_model"):
        where = os.path.join(model_dir, CONVERSION_FILE)
        name = plain_name(facts["spm_model"], f"{where}: spm_model", CheckpointError)
        recorded, lower_case = facts.get("spm_checksum"), facts.get("lower_case")
    else:  # a run folder: its tokenizer section, when the run filled it
        where = f"{os.path.join(model_dir, CONFIG_FILE)} (tokenizer section)"
        tokenizer = config.tokenizer
        name, recorded = tokenizer.spm_model, tokenizer.checksum
        lower_case = tokenizer.lower_case if tokenizer.checksum else facts.get("lower_case")
        if name and not (os.path.isabs(name) or "://" in name):
            plain_name(name, f"{where}: spm_model", CheckpointError)
    if not name:
        return None, lower_case
    path = name if os.path.isabs(name) or "://" in name else os.path.join(model_dir, name)
    if not tf.io.gfile.exists(path):
        return None, lower_case
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    try:
        check_model_file(data, path, recorded or None, where, config.model.vocab_size)
    except DataPrepError as error:
        raise CheckpointError(str(error)) from None
    return path, lower_case


def latest_checkpoint(model_dir: str, checkpoint: str | None = None) -> str:
    """`checkpoint` if given, else the folder's newest `checkpoints/ckpt-<step>`."""
    checkpoint = checkpoint or tf.train.latest_checkpoint(run_folders(model_dir)["checkpoints"])
    if checkpoint is None:
        raise CheckpointError(f"{model_dir}: no checkpoint in "
                              f"{run_folders(model_dir)['checkpoints']}")
    return checkpoint


def load_pretrainer(model_dir: str, checkpoint: str | None = None,
                    return_all_layer_outputs: bool = False
                    ) -> tuple[AlbertPretrainer, PretrainConfig, str]:
    """(model with its heads, config, checkpoint path) of model folder `model_dir`.

    The model is compiled for `evaluate` and `predict` (no optimizer). To train it further,
    start a run from the folder (`init.checkpoint`), or compile it with an optimizer
    (`albert_tf.loop.optimization.create_optimizer`) before `fit`. `return_all_layer_outputs`
    adds every transformer block's output (`encoder_outputs`) to its outputs."""
    config = load_run_config(model_dir)
    facts = conversion_facts(model_dir)
    if not facts.get("masked_lm_head", True):
        raise CheckpointError(f"{model_dir}: this model folder holds an encoder without "
                              f"pretraining heads (converted from "
                              f"{facts.get('source_format')}); load it with load_encoder")
    checkpoint = latest_checkpoint(model_dir, checkpoint)
    model = built_pretrainer(config.model, config.sentence_objective, return_all_layer_outputs)
    restore_checked(tf.train.Checkpoint(model=model), checkpoint,
                    _model_weights(model))
    model.compile(jit_compile=False)
    return model, config, checkpoint


def load_encoder(model_dir: str, checkpoint: str | None = None,
                 return_all_layer_outputs: bool = False
                 ) -> tuple[AlbertEncoder, PretrainConfig, str]:
    """(encoder, config, checkpoint path) of model folder `model_dir`, heads or not;
    `return_all_layer_outputs` adds every block's output (`encoder_outputs`)."""
    config = load_run_config(model_dir)
    checkpoint = latest_checkpoint(model_dir, checkpoint)
    encoder = build_model(config.model, masked_lm=False, sentence_objective="none",
                          return_all_layer_outputs=return_all_layer_outputs)
    restore_checked(tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder)), checkpoint,
                    encoder.weights, ignored=_HEAD_KEYS)
    return encoder, config, checkpoint


def _model_weights(model: AlbertPretrainer) -> list[tf.Variable]:
    """The model's weights without its metric accumulators."""
    metric_ids = {id(variable) for metric in model.metrics for variable in metric.variables}
    return [variable for variable in model.weights if id(variable) not in metric_ids]


def save_model_folder(model: AlbertEncoder | AlbertPretrainer, output_dir: str,
                      global_step: int = 0, conversion: Mapping[str, Any] | None = None,
                      spm_model: str | None = None, max_seq_length: int = 512) -> str:
    """Writes `model` as a model folder (atomically); returns the checkpoint path.

    Args:
        model: a built encoder (saved without heads) or pretrainer.
        output_dir: a new or empty local folder.
        global_step: the step the weights were trained for (names the checkpoint).
        conversion: facts about the source, stored in `conversion.json`.
        spm_model: a SentencePiece model to copy into the folder.
        max_seq_length: the sequence length recorded in the config's data section.
    """
    if isinstance(model, AlbertPretrainer):
        objective, root = model.sentence_objective, tf.train.Checkpoint(model=model)
    else:
        objective = "none"
        root = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=model))
    config = PretrainConfig(model=model.config, sentence_objective=objective,
                            data=DataConfig(max_seq_length=min(
                                max_seq_length, model.config.max_position_embeddings)))
    name = checkpoint_name(global_step)
    with staged_folder(output_dir, "albert-convert",
                       {"to": "ours", **(conversion or {})}) as staging:
        with open(os.path.join(staging, CONFIG_FILE), "w", encoding="utf-8") as f:
            yaml.safe_dump(config.to_dict(), f, sort_keys=False)
        checkpoints = run_folders(staging)["checkpoints"]
        os.makedirs(checkpoints)
        root.write(os.path.join(checkpoints, name))
        write_checkpoint_state(checkpoints, name)
        facts = {**(conversion or {}), "global_step": int(global_step),
                 "masked_lm_head": isinstance(model, AlbertPretrainer),
                 "sentence_objective": objective}
        if spm_model:
            with open(spm_model, "rb") as f:
                data = f.read()
            try:  # parsed before it is copied; its checksum recorded beside its name
                facts["spm_checksum"] = check_model_file(data, spm_model, None,
                                                         "the model folder's spm_model")
            except DataPrepError as error:
                raise CheckpointError(str(error)) from None
            with open(os.path.join(staging, os.path.basename(spm_model)), "wb") as f:
                f.write(data)
            facts["spm_model"] = os.path.basename(spm_model)
        with open(os.path.join(staging, CONVERSION_FILE), "w", encoding="utf-8") as f:
            json.dump(facts, f, indent=2)
            f.write("\n")
    return os.path.join(run_folders(os.path.abspath(output_dir))["checkpoints"], name)
