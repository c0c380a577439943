"""Weights a pretraining run sets before step 1 beyond each layer's own initializer: a
checkpoint to continue from (`init.checkpoint`) and the MLM output bias
(`init.mlm_output_bias`).

Both apply to a fresh start only: a resumed run restores its own weights afterwards, and the
trainer does not read them again then.
"""

from __future__ import annotations

import dataclasses

from albert_tf.checkpoints.convert import load_model
from albert_tf.checkpoints.model_folder import split_checkpoint_path
from albert_tf.checkpoints.transfer import copy_weights
from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.config.pretraining import PretrainConfig
from albert_tf.data.target_frequencies import log_prior, masked_target_counts
from albert_tf.models.pretrainer import AlbertPretrainer

MLM_OUTPUT_BIAS = "masked_lm/output_bias"
# Fields that change no weight's shape or value: a run may set them to anything.
_FREE_FIELDS = ("hidden_dropout", "attention_dropout")


def check_architecture(run: AlbertConfig, found: AlbertConfig, source: str) -> None:
    """Raises a ConfigError naming every `model.*` field in which the run differs from the
    checkpoint at `source` (dropout may differ)."""
    differences = [f"model.{field.name}: run {getattr(run, field.name)!r}, checkpoint "
                   f"{getattr(found, field.name)!r}"
                   for field in dataclasses.fields(AlbertConfig)
                   if field.name not in _FREE_FIELDS
                   and getattr(run, field.name) != getattr(found, field.name)]
    if differences:
        raise ConfigError(f"init.checkpoint {source}: the run's model is not the checkpoint's "
                          f"architecture; set these fields as the checkpoint has them:\n  "
                          + "\n  ".join(differences))


def load_init_checkpoint(config: PretrainConfig):
    """The model `config.init.checkpoint` holds (a `checkpoints.convert.LoadedModel`), read
    and checked against the run's model; None without one. Call it outside any strategy
    scope: the copy is only read from."""
    init = config.init
    if not init.checkpoint:
        return None
    if init.checkpoint_format == "ours":
        folder, checkpoint = split_checkpoint_path(init.checkpoint)
        loaded = load_model("ours", folder, checkpoint=checkpoint)
    else:
        # A Model Garden checkpoint holds no config: it is read with the run's.
        given = config.model if init.checkpoint_format == "model_garden" else None
        loaded = load_model(init.checkpoint_format, init.checkpoint, given,
                            sentence_objective=config.sentence_objective
                            if config.sentence_objective != "none" else "sop",
                            ignored=init.ignore)
    check_architecture(config.model, loaded.config, init.checkpoint)
    return loaded


def initialize_pretrainer(model: AlbertPretrainer, config: PretrainConfig,
                          train_files: list[str], loaded=None) -> list[str]:
    """Applies `config.init` to the built `model` (inside the strategy scope); returns what
    it did, one line each, for the log.

    `loaded` (from `load_init_checkpoint`) supplies the weights it has, except those
    `init.ignore` names; `init.mlm_output_bias: unigram` then sets the masked-LM output bias
    to the log prior of the targets in the first `init.prior_examples` examples of
    `train_files`, unless the checkpoint supplied the bias.
    """
    done = []
    copied: list[str] = []
    if loaded is not None:
        transfer = copy_weights(loaded.model, model, config.init.ignore)
        copied = transfer.copied
        done.append(f"started from {loaded.source_format} {loaded.source} (step "
                    f"{loaded.global_step}): {transfer.summary()}")
    if config.init.mlm_output_bias == "unigram" and MLM_OUTPUT_BIAS not in copied:
        counts, examples = masked_target_counts(
            train_files, config.data.max_predictions_per_seq, config.model.vocab_size,
            config.init.prior_examples)
        model.masked_lm.output_bias.assign(log_prior(counts))
        done.append(f"masked-LM output bias set to the log frequencies of "
                    f"{int(counts.sum()):,} targets in {examples:,} training examples")
    return done


def freeze_parts(model: AlbertPretrainer, parts) -> list[str]:
    """Keeps `parts` (`init.freeze`, e.g. `encoder.transformer`) of `model` at their current
    weights: their layers stop being trainable. Returns a log line, or nothing."""
    frozen = []
    for part in parts:
        layer = model
        for name in part.split("."):
            layer = getattr(layer, name)
        if layer is None:
            raise ConfigError(f"field 'init.freeze': the model has no {part} (sentence "
                              f"objective {model.sentence_objective})")
        layer.trainable = False
        frozen.append(part)
    if not frozen:
        return []
    trainable = sum(int(variable.shape.num_elements()) for variable in model.trainable_weights)
    return [f"frozen: {', '.join(frozen)}; {trainable:,} parameters train"]
