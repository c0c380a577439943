"""An experiment file (`experiments/table*.yaml`) read at one scale.

One file describes one of the paper's ablation tables at every scale it runs at: `paper` (the
paper's sizes and recipe, for TPU pods), `mini` (a CPU in tens of minutes) and any other the
file declares. The layout:

    name: table6_sentence_objective
    title: ...
    paper: {table: 6, setting: ..., columns: [[mlm, MLM], [squad11, SQuAD1.1], ...]}
    report: {metrics: [mlm_accuracy, nsp_accuracy, sop_accuracy]}
    scales:
      mini:
        include: scales/mini.yaml        # defaults that the keys beside it change
        corpus: {sources: [python-docs], heldout_every: 20}
        tokenizer: {vocab_size: 1000}
        shards: {max_seq_length: 128, dupe_factor: 2, ...}   # albert-data build options
        evaluation: {batch_size: 64}
        downstream: [{task: sst2, data_dir: glue/SST-2}]   # optional fine-tuning
        pretrain: {model: ..., optimizer: ..., train: ...}   # an albert-pretrain config
      paper: ...
    variants:
      - name: sop
        label: SOP
        pretrain: {sentence_objective: sop}      # merged into the scale's pretrain section
        paper: {mlm: 54.0, nsp: 78.9, sop: 86.5}  # the paper's figures for this row

Anywhere in `variants`, a mapping whose keys are scale names gives one value per scale, e.g.
`embedding_size: {paper: 768, mini: 32}`. A variant may also replace `corpus.sources` (the
additional-data table trains on more text; every variant is evaluated on the held-out
documents of the scale's first source) and change how its training shards are made with
`shards: {<albert-data build option>: value}` (its held-out sets stay the scale's).
`include: <file>` may appear in any mapping of a scale, relative to the file that holds it.

A corpus source is a built-in one (`python-docs`, `stdlib-docstrings`: text already on the
machine, split into training and held-out documents here) or a mapping
`{name, train_files, heldout_files}` of text files in the original format (one sentence per
line, a blank line between documents) the user already has.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping, Sequence

from albert_experiments.statistics.downstream_average import DOWNSTREAM_AVERAGE
from albert_experiments.statistics.verdicts import Claim, parse_claims
from albert_tf.comparison.recipes import SMALL_MODEL_RECIPES
from albert_tf.config import ConfigError
from albert_tf.config.schema import (
    apply_overrides,
    dataclass_from_mapping,
    load_yaml_mapping,
    require,
    require_one_of,
)
from albert_tf.text.options import DataPrepError, DataPrepOptions
from data_prep.local_corpus import SOURCES as BUILTIN_SOURCES
from data_prep.task_folders.registry import TASK_NAMES

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
# A scale's setting naming another scale whose per-scale variant values it takes wherever a
# variant gives none for it (a larger run of the same shapes says so once, in its scale file).
FALLBACK_KEY = "variant_values_from"
# A scale's setting naming the variants it does not run, each with the reason (the budget a
# scale is sized to, say); `albert-experiment run` skips them unless named with --variants,
# and the report shows them as cut, with the reason.
CUT_KEY = "cut_variants"
# A table file's top-level mapping from each scale it leaves out to why, with what running it
# there would cost; the summary quotes the reason in the row that says the table is not run.
NOT_RUN_KEY = "not_run_at"


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
    recipe file) or a small-model recipe (`albert_tf.comparison.recipes.SMALL_MODEL_RECIPES`,
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
    # (albert_experiments.statistics.verdicts).
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


def table_name(document: Mapping[str, Any], source: str) -> str:
    """A table file's name: its `name`, else the file's name without `.yaml`."""
    return str(document.get("name") or os.path.splitext(os.path.basename(source))[0])


def not_run_reasons(document: Mapping[str, Any], source: str) -> dict[str, str]:
    """A table file's `not_run_at`: scale -> why the file leaves that scale out (one line).
    A reason for a scale the file runs, or one that is not text, is an error."""
    value = document.get(NOT_RUN_KEY) or {}
    if not isinstance(value, Mapping):
        raise ExperimentError(f"{source}: {NOT_RUN_KEY} must map each scale the file leaves "
                              f"out to why, got {type(value).__name__}")
    scales = document.get("scales") or {}
    reasons = {}
    for scale, reason in value.items():
        where = f"{source}: {NOT_RUN_KEY}.{scale}"
        if scale in scales:
            raise ExperimentError(f"{where}: the file runs scale {scale!r}; give a reason only "
                                  f"for a scale it leaves out")
        if not isinstance(reason, str) or not reason.strip():
            raise ExperimentError(f"{where}: expected why the scale is left out, as text, "
                                  f"got {reason!r}")
        reasons[str(scale)] = " ".join(reason.split())
    return reasons


def not_run_reason(document: Mapping[str, Any], scale: str, source: str) -> str | None:
    """None if the table file runs `scale`; else why it leaves the scale out, as its
    `not_run_at` says (or that it says not)."""
    if scale in (document.get("scales") or {}):
        return None
    return not_run_reasons(document, source).get(
        scale, f"its file gives no reason (`{NOT_RUN_KEY}`)")


def load_experiment(path: str | os.PathLike, scale: str,
                    overrides: Sequence[str] = ()) -> ExperimentSpec:
    """Reads experiment file `path` at `scale`; `overrides` (`a.b=value`) apply to the scale's
    section, e.g. `pretrain.train.train_steps=200` or `shards.dupe_factor=1`."""
    path = os.fspath(path)
    return experiment_from_mapping(load_yaml_mapping(path), scale, path, overrides)


def experiment_from_mapping(document: Mapping[str, Any], scale: str, source: str,
                            overrides: Sequence[str] = ()) -> ExperimentSpec:
    scales = document.get("scales")
    if not isinstance(scales, Mapping) or not scales:
        raise ExperimentError(f"{source}: 'scales' must map scale names (paper, mini, ...) to "
                              f"their settings")
    if scale not in scales:
        raise ExperimentError(f"{source}: no scale {scale!r} (the file has: "
                              f"{', '.join(scales)})")
    not_run_reasons(document, source)
    where = f"{source} (scale {scale})"
    settings = apply_overrides(scale_settings(scales, scale, source), overrides)
    _check_keys(settings, ("corpus", "tokenizer", "shards", "evaluation", "downstream",
                           "pretrain", FALLBACK_KEY, CUT_KEY), f"{where}: scales.{scale}")
    corpus = _corpus(_mapping(settings.get("corpus", {}), f"{where}: corpus"), where)
    paper = _mapping(document.get("paper", {}), f"{source}: paper")
    report = _mapping(document.get("report", {}), f"{source}: report")
    metrics = tuple(report.get("metrics", ("mlm_accuracy",)))
    unknown = [name for name in metrics if name not in METRICS]
    if unknown:
        raise ExperimentError(f"{source}: report.metrics: unknown metric {unknown[0]!r} "
                              f"(known: {', '.join(METRICS)})")
    variants = _variants(document.get("variants"), settings, corpus, scale, tuple(scales),
                         source)
    shards = _shards(_mapping(settings.get("shards", {}), f"{where}: shards"), where)
    cut = _cut_variants(settings.get(CUT_KEY, {}), [v.name for v in variants],
                        f"{where}: {CUT_KEY}")
    for variant in variants:
        shards.options_for(variant.objective, variant.shard_changes,
                           f"{source}: variant {variant.name}: shards")
    return ExperimentSpec(
        name=table_name(document, source),
        title=str(document.get("title", "")), scale=scale, scales=tuple(scales),
        paper_table=str(paper.get("table", "")), paper_setting=str(paper.get("setting", "")),
        paper_columns=_columns(paper.get("columns", ()), source), metrics=metrics,
        corpus=corpus,
        tokenizer=dataclass_from_mapping(
            TokenizerSpec, _mapping(settings.get("tokenizer", {}), f"{where}: tokenizer"),
            f"{where}: tokenizer"),
        shards=shards,
        evaluation=dataclass_from_mapping(
            EvaluationSpec, _mapping(settings.get("evaluation", {}), f"{where}: evaluation"),
            f"{where}: evaluation"),
        downstream=_downstream(settings.get("downstream", ()), f"{where}: downstream"),
        variants=variants, source=source,
        paper_models=_paper_models(document, variants if scale == PAPER_SCALE else None,
                                   source),
        claims=parse_claims(document.get("claims"), [v.name for v in variants],
                            source, ExperimentError), cut=cut)


def _cut_variants(value, names: Sequence[str], where: str) -> dict[str, str]:
    cut = _mapping(value, where)
    for name, reason in cut.items():
        if name not in names:
            raise ExperimentError(f"{where}: no variant named {name!r} (variants: "
                                  f"{', '.join(names)})")
        if not isinstance(reason, str) or not reason.strip():
            raise ExperimentError(f"{where}.{name}: give the reason it is cut, as text")
    if len(cut) >= len(names):
        raise ExperimentError(f"{where}: cuts every variant; leave the scale out instead")
    return {str(name): reason.strip() for name, reason in cut.items()}


def _paper_models(document: Mapping[str, Any], paper_variants, source: str
                  ) -> dict[str, dict[str, Any]]:
    """Each variant's model section at the paper scale (none without a paper scale)."""
    scales = document["scales"]
    if PAPER_SCALE not in scales:
        return {}
    if paper_variants is None:
        settings = scale_settings(scales, PAPER_SCALE, source)
        corpus = _corpus(_mapping(settings.get("corpus", {}), source), source)
        paper_variants = _variants(document.get("variants"), settings, corpus, PAPER_SCALE,
                                   tuple(scales), source)
    return {variant.name: variant.pretrain.get("model", {}) for variant in paper_variants}


def with_includes(mapping: Mapping[str, Any], base_dir: str) -> dict[str, Any]:
    """`mapping` with every `include: <file>` (at any depth, relative to `base_dir`) replaced
    by that file's mapping, changed by the keys beside the `include`."""
    result = {key: with_includes(value, base_dir) if isinstance(value, Mapping) else value
              for key, value in mapping.items() if key != "include"}
    if "include" not in mapping:
        return result
    path = os.path.join(base_dir, str(mapping["include"]))
    included = with_includes(load_yaml_mapping(path), os.path.dirname(path))
    return deep_merge(included, result)


def scale_settings(scales: Mapping[str, Any], scale: str, source: str) -> dict[str, Any]:
    """The settings of one scale, its `include`s read (relative to the experiment file)."""
    return with_includes(_mapping(scales[scale], f"{source}: scales.{scale}"),
                         os.path.dirname(source))


def _mapping(value, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ExperimentError(f"{where} must be a mapping, got {type(value).__name__}")
    return dict(value)


def _check_keys(mapping: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in mapping:
        if key not in known:
            raise ExperimentError(f"{where}: unknown field {key!r} (known: {', '.join(known)})")


def _columns(columns, source: str) -> tuple[tuple[str, str], ...]:
    result = []
    for index, column in enumerate(columns):
        if not (isinstance(column, Sequence) and len(column) == 2
                and all(isinstance(part, str) for part in column)):
            raise ExperimentError(f"{source}: paper.columns[{index}] must be a [key, header] "
                                  f"pair of strings, got {column!r}")
        result.append((column[0], column[1]))
    return tuple(result)


def _sources(value, where: str) -> tuple[CorpusSource, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise ExperimentError(f"{where} must be a non-empty list of sources")
    sources = []
    for index, item in enumerate(value):
        here = f"{where}[{index}]"
        if isinstance(item, str):
            if item not in BUILTIN_SOURCES:
                raise ExperimentError(f"{here}: {item!r} is not a built-in source (built-in: "
                                      f"{', '.join(BUILTIN_SOURCES)}); give your own text as "
                                      f"{{name, train_files, heldout_files}}")
            sources.append(CorpusSource(item))
            continue
        item = _mapping(item, here)
        _check_keys(item, ("name", "train_files", "heldout_files"), here)
        files = {key: tuple([item[key]] if isinstance(item.get(key), str) else item.get(key, ()))
                 for key in ("train_files", "heldout_files")}
        if not item.get("name") or not files["train_files"]:
            raise ExperimentError(f"{here}: a source of your own needs 'name' and "
                                  f"'train_files' (and 'heldout_files' if it is evaluated on)")
        sources.append(CorpusSource(str(item["name"]), **files))
    names = [source.name for source in sources]
    if len(set(names)) != len(names):
        raise ExperimentError(f"{where}: source names must differ, got {names}")
    return tuple(sources)


def _corpus(mapping: dict[str, Any], where: str) -> CorpusSpec:
    _check_keys(mapping, ("sources", "heldout_every", "max_mb"), f"{where}: corpus")
    sources = _sources(mapping.get("sources"), f"{where}: corpus.sources")
    if not sources[0].builtin and not sources[0].heldout_files:
        raise ExperimentError(f"{where}: corpus.sources[0] ({sources[0].name}) is evaluated on,"
                              f" so it needs 'heldout_files'")
    corpus = CorpusSpec(sources, int(mapping.get("heldout_every", 20)), mapping.get("max_mb"))
    if corpus.heldout_every < 2:
        raise ExperimentError(f"{where}: corpus.heldout_every must be 2 or more, got "
                              f"{corpus.heldout_every}")
    return corpus


def _shards(mapping: dict[str, Any], where: str) -> ShardSpec:
    if "sentence_objective" in mapping:
        raise ExperimentError(f"{where}: shards.sentence_objective comes from each variant's "
                              f"pretrain.sentence_objective; remove it here")
    layout = {key: mapping.pop(key) for key in ("num_shards", "num_workers",
                                                "heldout_dupe_factor") if key in mapping}
    options = dataclass_from_mapping(DataPrepOptions, mapping, f"{where}: shards")
    return ShardSpec(options, **layout)


def _check_shard_changes(changes: Mapping[str, Any], where: str) -> None:
    """A variant may change data-prep options of its training shards, nothing else."""
    known = [field.name for field in dataclasses.fields(DataPrepOptions)
             if field.name != "sentence_objective"]
    _check_keys(changes, known, where)


def _downstream(value, where: str) -> tuple[DownstreamSpec, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ExperimentError(f"{where} must be a list of {{task, data_dir, ...}}")
    tasks = []
    for index, item in enumerate(value):
        item = dict(_mapping(item, f"{where}[{index}]"))
        for key in ("overrides", "seeds"):
            if key in item:
                item[key] = tuple(item[key] if isinstance(item[key], list) else [item[key]])
        tasks.append(dataclass_from_mapping(DownstreamSpec, item, f"{where}[{index}]"))
    names = [task.name for task in tasks]
    if len(set(names)) != len(names):
        raise ExperimentError(f"{where}: two tasks with the same name {names}; give each a "
                              f"'label'")
    return tuple(tasks)


def resolve_scale(value, scale: str, scales: Sequence[str], where: str,
                  fallback: str = ""):
    """`value` with every `{scale_name: value, ...}` mapping replaced by this scale's value,
    or by the `fallback` scale's where the mapping has no value for this one (a scale that
    keeps another's sizes says so once, in its `variant_values_from`)."""
    if isinstance(value, Mapping):
        if value and set(value) <= set(scales):
            chosen = scale if scale in value else fallback
            if chosen not in value:
                given = f"; nor for its fallback {fallback!r}" if fallback else ""
                raise ExperimentError(f"{where}: no value for scale {scale!r}{given} (given "
                                      f"for {', '.join(value)})")
            return resolve_scale(value[chosen], scale, scales, where, fallback)
        return {key: resolve_scale(item, scale, scales, f"{where}.{key}", fallback)
                for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_scale(item, scale, scales, f"{where}[{index}]", fallback)
                for index, item in enumerate(value)]
    return value


def deep_merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `changes` applied: mappings merge key by key, anything else replaces."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _variants(value, settings, corpus: CorpusSpec, scale: str, scales, source: str
              ) -> tuple[VariantSpec, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise ExperimentError(f"{source}: 'variants' must be a non-empty list")
    base = _mapping(settings.get("pretrain", {}), f"{source} (scale {scale}): pretrain")
    if isinstance(base.get("model"), str):
        base["model"] = {"preset": base["model"]}
    tokenizer = _mapping(settings.get("tokenizer", {}), f"{source}: tokenizer")
    if not tokenizer.get("spm_model"):  # a model trained here has exactly this many pieces
        base = deep_merge(base, {"model": {"vocab_size": tokenizer.get(
            "vocab_size", TokenizerSpec.vocab_size)}})
    fallback = settings.get(FALLBACK_KEY, "")
    if fallback and (fallback not in scales or fallback == scale):
        raise ExperimentError(f"{source} (scale {scale}): {FALLBACK_KEY} must name another "
                              f"scale of the file ({', '.join(s for s in scales if s != scale)})"
                              f", got {fallback!r}")

    def resolved(item_value, where_in):
        return resolve_scale(item_value, scale, scales, where_in, fallback)

    variants = []
    for index, item in enumerate(value):
        where = f"{source}: variants[{index}]"
        item = _mapping(item, where)
        _check_keys(item, ("name", "label", "group", "pretrain", "corpus", "shards", "paper"),
                    where)
        name = item.get("name")
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise ExperimentError(f"{where}: 'name' must be a folder-safe name (letters, "
                                  f"digits, - and _), got {name!r}")
        changes = resolved(_mapping(item.get("pretrain", {}), f"{where}.pretrain"),
                           f"{where}.pretrain")
        corpus_change = resolved(_mapping(item.get("corpus", {}), f"{where}.corpus"),
                                 f"{where}.corpus")
        _check_keys(corpus_change, ("sources",), f"{where}.corpus")
        sources = (_sources(corpus_change["sources"], f"{where}.corpus.sources")
                   if "sources" in corpus_change else corpus.sources)
        shard_changes = resolved(_mapping(item.get("shards", {}), f"{where}.shards"),
                                 f"{where}.shards")
        _check_shard_changes(shard_changes, f"{where}.shards")
        label, group = (resolved(item.get(key, default), f"{where}.{key}")
                        for key, default in (("label", name), ("group", "")))
        variants.append(VariantSpec(
            name=name, label=str(label), pretrain=deep_merge(base, changes),
            corpus_sources=sources, group=str(group), shard_changes=shard_changes,
            paper=_mapping(item.get("paper", {}), f"{where}.paper")))
    names = [variant.name for variant in variants]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ExperimentError(f"{source}: variant names must differ; repeated: {duplicates}")
    return tuple(variants)
