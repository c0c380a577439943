"""What an experiment file says at one scale, as typed settings: the corpus, tokenizer,
shards, evaluation and downstream tasks every variant shares, and the variants (the table's
rows). `albert_lab.ablations.table_spec.reader` makes them from the file.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from albert_lab.ablations.statistics.downstream_average import DOWNSTREAM_AVERAGE
from albert_lab.ablations.statistics.verdicts import Claim
from albert_lab.comparison.recipes import SMALL_MODEL_RECIPES
from albert_lab.task_folders.registry import TASK_NAMES
from albert_tf.config import ConfigError
from albert_tf.config.schema import (
    require,
    require_one_of,
)
from albert_tf.text.options import DataPrepError, DataPrepOptions

# What the runner measures for every variant; `report.metrics` picks and orders them.
METRICS = {
    "mlm_accuracy": "MLM acc. %",
    "nsp_accuracy": "NSP acc. %",
    "sop_accuracy": "SOP acc. %",
    "mlm_loss": "MLM loss",
    "final_train_loss": "train loss",
    "train_hours": "train time (h)",
    "examples_per_second": "examples/s",
    "cpu_use": "CPU use %",
    DOWNSTREAM_AVERAGE: "downstream avg.",
}


# Kept as fractions, shown in percent.
PERCENT_METRICS = ("mlm_accuracy", "nsp_accuracy", "sop_accuracy", DOWNSTREAM_AVERAGE,
                   "cpu_use")


# Our metric -> the key of the paper's column that reports the same thing (Table 6).
PAPER_KEYS = {"mlm_accuracy": "mlm", "nsp_accuracy": "nsp", "sop_accuracy": "sop"}


PAPER_SCALE = "paper"


class ExperimentError(ConfigError):
    """An experiment file or folder that cannot be run as it is."""


@dataclasses.dataclass(frozen=True)
class CorpusSource:
    """Text to train on and to hold out: a built-in source or the user's files."""

    name: str
    train_files: tuple[str, ...] = ()
    heldout_files: tuple[str, ...] = ()

    @property
    def builtin(self) -> bool:
        return not self.train_files


@dataclasses.dataclass(frozen=True)
class CorpusSpec:
    sources: tuple[CorpusSource, ...]
    heldout_every: int = 20  # built-in sources: every n-th document is held out
    max_mb: float | None = None  # built-in sources: stop after this much text


@dataclasses.dataclass(frozen=True)
class TokenizerSpec:
    """The SentencePiece model: trained on the first source's training text, or given."""

    vocab_size: int = 30000
    max_sentences: int = 2_000_000
    spm_model: str | None = None


@dataclasses.dataclass(frozen=True)
class ShardSpec:
    """How TFRecords are made: data-prep options (the sentence objective comes from each
    variant) and how many shards and worker processes."""

    options: DataPrepOptions
    num_shards: int = 0
    num_workers: int = 1
    heldout_dupe_factor: int = 1

    def options_for(self, objective: str, changes: Mapping[str, Any] | None = None,
                    where: str = "shards") -> DataPrepOptions:
        """The data-prep options of shards for `objective`, with a variant's `changes`."""
        try:
            return dataclasses.replace(self.options, sentence_objective=objective,
                                       **(changes or {}))
        except DataPrepError as error:
            raise ExperimentError(f"{where}: {error}") from None


@dataclasses.dataclass(frozen=True)
class EvaluationSpec:
    """How the held-out sets are scored: batch size, and at most this many batches.
    `sentence_probe_steps`: a variant trained without a sentence objective gets SOP and NSP
    accuracies from a probe: its pooler and a fresh sentence head trained this many steps on
    its frozen encoder (0: none, its columns stay empty). `checkpoint_trend`: also score every
    checkpoint a variant kept (`train.checkpoints_to_keep`), so the report shows how each
    accuracy moved over the last part of training. `random_start`: also fine-tune a random
    start of the first variant's sizes on the downstream tasks, the table's reference row
    (what the downstream columns would be without pretraining)."""

    batch_size: int = 64
    max_batches: int | None = None
    sentence_probe_steps: int = 300
    checkpoint_trend: bool = False
    random_start: bool = False


DOWNSTREAM_RECIPES = ("task", *SMALL_MODEL_RECIPES)


@dataclasses.dataclass(frozen=True)
class DownstreamSpec:
    """A fine-tuning task every variant is scored on, as the paper's downstream columns.

    The data is a task folder (`data_dir`) or an `albert-data task` source (`source`: written
    once under `<data_dir of the run>/tasks/<source>`). `task` is the `albert-finetune` task
    (default: the one the folder's `source.json` names). `recipe` is `task` (the task's own
    recipe file) or a small-model recipe (`albert_lab.comparison.recipes.SMALL_MODEL_RECIPES`,
    at the pretraining's sequence length: `small_model_v4` is the downstream suite's recipe,
    v2 with the head on the mean-pooled sequence output; `small_model_v2` reads the pooled
    [CLS] output, `small_model` has no Adam bias correction, `small_model_v3` is v2 run until
    dev stops improving);
    `overrides` change it.
    Each of `seeds` is one fine-tuning run; the table shows dev `metric` (default: the
    task's own) as the mean over seeds under `label`, and the claims on the downstream
    average pair the variants by seed.
    """

    task: str = ""
    data_dir: str = ""
    source: str = ""
    recipe: str = "task"
    seeds: tuple[int, ...] = (1,)
    overrides: tuple[str, ...] = ()
    metric: str = ""
    label: str = ""

    def __post_init__(self):
        require((self.data_dir == "") != (self.source == ""), "data_dir / source",
                "exactly one of a task folder (data_dir) or an albert-data task source",
                {"data_dir": self.data_dir, "source": self.source})
        if self.source:
            require_one_of(self.source, TASK_NAMES, "source")
        require_one_of(self.recipe, DOWNSTREAM_RECIPES, "recipe")
        require(bool(self.seeds) and all(isinstance(seed, int) and not isinstance(seed, bool)
                                         for seed in self.seeds)
                and len(set(self.seeds)) == len(self.seeds), "seeds",
                "a non-empty list of different integers", list(self.seeds))

    @property
    def name(self) -> str:
        return self.label or self.source or self.task

    def settings(self) -> dict[str, Any]:
        """What a variant's dev scores on this task depend on (seeds aside)."""
        return {"task": self.task, "data_dir": self.data_dir, "source": self.source,
                "recipe": self.recipe, "overrides": list(self.overrides),
                "metric": self.metric}


def row_name(group: str, label: str) -> str:
    """A variant's row name in tables and plots: its group (if any), then its label."""
    return f"{group} {label}".strip()


@dataclasses.dataclass(frozen=True)
class VariantSpec:
    """One row of the table."""

    name: str
    label: str
    pretrain: dict[str, Any]  # the complete albert-pretrain mapping, data files not yet set
    corpus_sources: tuple[CorpusSource, ...]
    group: str = ""
    shard_changes: dict[str, Any] = dataclasses.field(default_factory=dict)  # training shards
    paper: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def objective(self) -> str:
        """The sentence-level objective its shards are made for."""
        return self.pretrain.get("sentence_objective", "sop")

    @property
    def row_label(self) -> str:
        """The row's name in tables and plots: its group (if any), then its label."""
        return row_name(self.group, self.label)


@dataclasses.dataclass(frozen=True)
class ExperimentSpec:
    name: str
    title: str
    scale: str
    scales: tuple[str, ...]
    paper_table: str
    paper_setting: str
    paper_columns: tuple[tuple[str, str], ...]
    metrics: tuple[str, ...]
    corpus: CorpusSpec
    tokenizer: TokenizerSpec
    shards: ShardSpec
    evaluation: EvaluationSpec
    downstream: tuple[DownstreamSpec, ...]
    variants: tuple[VariantSpec, ...]
    source: str
    # Each variant's model section at the paper scale (for parameter counts at the paper's
    # sizes beside the paper's figures); empty when the file has no `paper` scale.
    paper_models: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    # The paper's claims about the table, judged in the report
    # (albert_lab.ablations.statistics.verdicts).
    claims: tuple[Claim, ...] = ()
    # Variants this scale does not run -> why (`cut_variants`).
    cut: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def shown_metrics(self) -> tuple[str, ...]:
        """The metrics of the report's table and plot: `report.metrics`, then the downstream
        average when the scale has downstream tasks."""
        if self.downstream and DOWNSTREAM_AVERAGE not in self.metrics:
            return (*self.metrics, DOWNSTREAM_AVERAGE)
        return self.metrics

    def variant(self, name: str) -> VariantSpec:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise ExperimentError(f"{self.source}: no variant named {name!r} (variants: "
                              f"{', '.join(v.name for v in self.variants)})")
