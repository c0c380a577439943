"""The pretraining run's configuration: one dataclass per concern, read from YAML + overrides.

A run's YAML has seven sections and one top-level field:

```yaml
model: {preset: tiny, hidden_dropout: 0.0}   # a preset and/or AlbertConfig fields
sentence_objective: sop                      # sop | nsp | none
data: {train_files: [...], eval_files: [...], max_seq_length: 128, ...}
optimizer: {type: lamb, learning_rate: 0.00176, warmup_steps: 3125, ...}
init: {mlm_output_bias: unigram}             # how the weights start: a checkpoint, the MLM bias
train: {model_dir: runs/x, global_batch_size: 4096, train_steps: 125000, ...}
distribution: {strategy: tpu}
tokenizer: {spm_model: ..., checksum: ..., lower_case: true}   # filled from the shards
```

`--override train.train_steps=100` changes one field; an unknown section or field is a
`ConfigError` that names it, before anything is built.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping, Sequence

from albert_tf.config.checkpoint_formats import CHECKPOINT_FORMATS
from albert_tf.config.distribution import DistributionConfig
from albert_tf.config.loop import TrainingLoopConfig
from albert_tf.config.masking import MaskingRecipe
from albert_tf.config.model import SENTENCE_OBJECTIVES, AlbertConfig, ConfigError
from albert_tf.config.optimizer import OptimizerConfig
from albert_tf.config.presets import preset_path
from albert_tf.config.schema import (
    apply_overrides,
    dataclass_from_mapping,
    load_yaml_mapping,
    plain_dict,
    require,
    require_one_of,
    require_patterns,
    require_positive,
)


@dataclasses.dataclass(frozen=True)
class DataConfig(MaskingRecipe):
    """Where the pretraining shards are and how they are read; with `dynamic_masking`, how
    they are masked afresh: the masking recipe's fields (`masked_lm_prob`, `ngram`,
    `favor_shorter_ngram`, `whole_word_mask`, `mask_token_rate`, `random_token_rate`,
    `random_from_ordinary`: `albert_tf.config.masking.MaskingRecipe`, which this extends;
    static masks are the shards' own, made by the recipe in their manifest).

    Attributes:
        train_files: TFRecord files or globs of training shards (`albert-data build`).
        eval_files: held-out shards; empty: no evaluation.
        max_seq_length, max_predictions_per_seq: what the shards were built with (checked).
        shuffle_buffer: examples held for shuffling.
        cycle_length: shards read at once.
        dynamic_masking: draw new n-gram masks every time an example is read.
        dynamic_predictions_per_seq: prediction slots per sequence of the re-masked training
            batches (0: the shards' `max_predictions_per_seq`); with `dynamic_masking` only.
            Raise it with `masked_lm_prob`: at most this many pieces are masked, so 20 slots
            cap sequences of 128 at a 15.6% rate whatever the probability.
    """

    train_files: Sequence[str] = ()
    eval_files: Sequence[str] = ()
    max_seq_length: int = 512
    max_predictions_per_seq: int = 20
    shuffle_buffer: int = 10_000
    cycle_length: int = 8
    dynamic_masking: bool = False
    dynamic_predictions_per_seq: int = 0

    def __post_init__(self):
        super().__post_init__()
        require_positive("data", self, ("max_seq_length", "max_predictions_per_seq",
                                         "shuffle_buffer", "cycle_length"))
        require(0 <= self.dynamic_predictions_per_seq <= self.max_seq_length,
                "data.dynamic_predictions_per_seq",
                f"0 (the shards' count) to data.max_seq_length ({self.max_seq_length})",
                self.dynamic_predictions_per_seq)
        if self.dynamic_predictions_per_seq and not self.dynamic_masking:
            raise ConfigError("field 'data.dynamic_predictions_per_seq' needs "
                              "data.dynamic_masking=true: static masks are the shards' own, "
                              f"{self.max_predictions_per_seq} slots per sequence")
        if isinstance(self.train_files, str) or isinstance(self.eval_files, str):
            raise ConfigError("fields 'data.train_files' and 'data.eval_files' must be lists "
                              "of paths or globs")

    def masking_error(self, name: str, problem: str) -> Exception:
        return ConfigError(f"field 'data.{name}' {problem}")

    @property
    def training_predictions_per_seq(self) -> int:
        """Prediction slots per sequence of the training batches."""
        return self.dynamic_predictions_per_seq or self.max_predictions_per_seq


@dataclasses.dataclass(frozen=True)
class TrainConfig(TrainingLoopConfig):
    """The `train` section of a pretraining run: `TrainingLoopConfig` and its checkpoints,
    backups and held-out evaluations.

    Attributes:
        steps_per_epoch: steps between checkpoints, held-out evaluations and epoch logs.
        backup_every_steps: steps between the backups that preemption resumes from.
        eval_steps: held-out batches per evaluation (0: no evaluation).
        checkpoints_to_keep: most recent checkpoints kept.
    """

    model_dir: str = "runs/pretrain"
    global_batch_size: int = 4096
    train_steps: int = 125_000
    steps_per_epoch: int = 5_000
    backup_every_steps: int = 1_000
    eval_steps: int = 100
    checkpoints_to_keep: int = 5

    def __post_init__(self):
        super().__post_init__()
        require_positive("train", self, ("steps_per_epoch", "backup_every_steps",
                                         "checkpoints_to_keep"))
        if self.train_steps % self.steps_per_epoch:
            raise ConfigError(f"field 'train.train_steps' ({self.train_steps}) must be a "
                              f"multiple of train.steps_per_epoch ({self.steps_per_epoch})")
        for name in ("steps_per_epoch", "backup_every_steps"):
            self.require_multiple_of_execution(name)
        require(self.eval_steps >= 0, "train.eval_steps", ">= 0", self.eval_steps)

    @property
    def epochs(self) -> int:
        return self.train_steps // self.steps_per_epoch


MLM_OUTPUT_BIAS_INITS = ("zeros", "unigram")
# The parts of a pretrainer `init.freeze` can keep at their starting weights.
FREEZABLE_PARTS = ("encoder", "encoder.embedding", "encoder.transformer", "encoder.pooler",
                   "masked_lm", "sentence_head")


@dataclasses.dataclass(frozen=True)
class InitConfig:
    """How the weights start before step 1 (beyond each layer's own initializer).

    Attributes:
        checkpoint: continue pretraining from this model (empty: a fresh start): our model
            folder or one of its `checkpoints/ckpt-N`, an original TF1 folder or prefix, a
            transformers folder, a Model Garden encoder checkpoint or a keras-hub preset
            folder. Its architecture must
            be the run's `model` (dropout aside). The optimizer and step start fresh.
        checkpoint_format: `ours`, `original`, `huggingface`, `model_garden` or
            `keras_hub`.
        ignore: regular expressions over weight names (`encoder/...`, `masked_lm/...`,
            `sentence_head/...`) to leave freshly initialized, e.g. `^sentence_head/` when
            continuing an NSP model with SOP.
        mlm_output_bias: `zeros` (the original code) or `unigram`: the masked-LM output bias
            starts at the log frequency of each piece among the masked targets of the first
            `prior_examples` training examples (add-one smoothed); with a `checkpoint` that
            has the MLM head, the checkpoint's bias is kept. Small models trained fast
            need it: with `zeros` they write the unigram into every hidden state instead and
            can collapse to one output for all inputs (`albert_tf.data.target_frequencies`).
        prior_examples: training examples counted for `unigram`.
        freeze: parts of the model that keep their starting weights (not trained, on every
            start and resume): any of `FREEZABLE_PARTS`. A probe of what a pretrained model
            knows trains only the sentence head on it: checkpoint = the model, ignore =
            `^sentence_head/`, freeze = [encoder.embedding, encoder.transformer, masked_lm]
            (the pooler feeds only the sentence head, so it trains with it).
    """

    checkpoint: str = ""
    checkpoint_format: str = "ours"
    ignore: Sequence[str] = ()
    mlm_output_bias: str = "zeros"
    prior_examples: int = 20_000
    freeze: Sequence[str] = ()

    def __post_init__(self):
        require_one_of(self.checkpoint_format, CHECKPOINT_FORMATS, "init.checkpoint_format")
        require_patterns(self.ignore, "init.ignore")
        require_one_of(self.mlm_output_bias, MLM_OUTPUT_BIAS_INITS, "init.mlm_output_bias")
        require_positive("init", self, ("prior_examples",))
        for part in self.freeze:
            require_one_of(part, FREEZABLE_PARTS, "init.freeze")


@dataclasses.dataclass(frozen=True)
class TokenizerConfig:
    """The SentencePiece model the run's shards were made with, carried into the run folder.

    Filled from the shards' `manifest.json` when the run starts (set it only to insist on a
    tokenizer: a different checksum is an error then).

    Attributes:
        spm_model: the SentencePiece model; in a run folder's config.yaml, the copy beside it.
        checksum: `sha256:...` of the model file, as the manifest records it.
        lower_case: whether text is lower-cased before SentencePiece.
    """

    spm_model: str = ""
    checksum: str = ""
    lower_case: bool = True


@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    """Everything one pretraining run needs."""

    model: AlbertConfig = dataclasses.field(default_factory=AlbertConfig)
    sentence_objective: str = "sop"
    data: DataConfig = dataclasses.field(default_factory=DataConfig)
    optimizer: OptimizerConfig = dataclasses.field(default_factory=OptimizerConfig)
    init: InitConfig = dataclasses.field(default_factory=InitConfig)
    train: TrainConfig = dataclasses.field(default_factory=TrainConfig)
    distribution: DistributionConfig = dataclasses.field(default_factory=DistributionConfig)
    tokenizer: TokenizerConfig = dataclasses.field(default_factory=TokenizerConfig)

    def __post_init__(self):
        require_one_of(self.sentence_objective, SENTENCE_OBJECTIVES, "sentence_objective")
        if self.data.max_seq_length > self.model.max_position_embeddings:
            raise ConfigError(f"field 'data.max_seq_length' ({self.data.max_seq_length}) "
                              f"exceeds model.max_position_embeddings "
                              f"({self.model.max_position_embeddings})")
        if self.optimizer.warmup_steps >= self.train.train_steps:
            raise ConfigError(f"field 'optimizer.warmup_steps' ({self.optimizer.warmup_steps})"
                              f" must be below train.train_steps ({self.train.train_steps})")

    def to_dict(self) -> dict[str, Any]:
        return plain_dict(self)


def _resolve_model_section(mapping: dict[str, Any], source: str) -> dict[str, Any]:
    """`model: {preset: name, field: value}` -> the preset's fields updated with the rest."""
    model = mapping.get("model", {})
    if isinstance(model, str):
        model = {"preset": model}
    if not isinstance(model, Mapping):
        raise ConfigError(f"{source}: section 'model' must be a mapping of AlbertConfig "
                          f"fields (optionally with 'preset'), got {type(model).__name__}")
    model = dict(model)
    preset = model.pop("preset", None)
    if preset is not None:
        model = {**load_yaml_mapping(preset_path(str(preset))), **model}
    return {**mapping, "model": model}


def model_config_from_mapping(model: Mapping[str, Any] | str, source: str) -> AlbertConfig:
    """The AlbertConfig of a run file's `model` section (a preset name, or fields with an
    optional `preset`)."""
    return AlbertConfig.from_dict(_resolve_model_section({"model": model}, source)["model"],
                                  source)


# Sections a run folder's config.yaml may hold from an earlier version, read and dropped:
# `downstream_check` (the fine-tuning check that albert-pretrain ran after training; it is
# `albert-experiment check` now, and never changed what a run trained).
RETIRED_SECTIONS = ("downstream_check",)


def pretrain_config_from_mapping(mapping: Mapping[str, Any], source: str) -> PretrainConfig:
    current = {key: value for key, value in mapping.items() if key not in RETIRED_SECTIONS}
    return dataclass_from_mapping(PretrainConfig, _resolve_model_section(current, source),
                                  source)


def load_pretrain_config(path: str | os.PathLike,
                         overrides: Sequence[str] = ()) -> PretrainConfig:
    """Reads a run YAML, applies `section.field=value` overrides and validates everything."""
    path = os.fspath(path)
    mapping = apply_overrides(load_yaml_mapping(path), overrides)
    source = path + (" with overrides " + " ".join(overrides) if overrides else "")
    return pretrain_config_from_mapping(mapping, source)
