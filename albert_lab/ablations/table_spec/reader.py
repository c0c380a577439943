"""Reading an experiment file (`experiments/table*.yaml`) at one scale into an
`ExperimentSpec`, with an error that names the file, the field and what was expected for
anything it cannot run.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping, Sequence

from albert_lab.ablations.statistics.verdicts import parse_claims
from albert_lab.ablations.table_spec.scales import (
    as_mapping,
    deep_merge,
    resolve_scale,
    scale_settings,
)
from albert_lab.ablations.table_spec.settings import (
    METRICS,
    PAPER_SCALE,
    CorpusSource,
    CorpusSpec,
    DownstreamSpec,
    EvaluationSpec,
    ExperimentError,
    ExperimentSpec,
    ShardSpec,
    TokenizerSpec,
    VariantSpec,
)
from albert_lab.corpora.local_corpus import SOURCES as BUILTIN_SOURCES
from albert_tf.config.schema import apply_overrides, dataclass_from_mapping, load_yaml_mapping
from albert_tf.text.options import DataPrepOptions

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


def table_name(document: Mapping[str, Any], source: str) -> str:
    """A table file's name: its `name`, else the file's name without `.yaml`; it names the
    table's results and work folders, so it must be a folder-safe name."""
    name = document.get("name") or os.path.splitext(os.path.basename(source))[0]
    return folder_safe(name, f"{source}: 'name'")


def folder_safe(name: object, where: str) -> str:
    """`name` if it is a folder-safe name (letters, digits, - and _): one name that stays
    inside the folder it names a file or folder in."""
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        raise ExperimentError(f"{where} must be a folder-safe name (letters, digits, - and _), "
                              f"got {name!r}")
    return name


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
    corpus = _corpus(as_mapping(settings.get("corpus", {}), f"{where}: corpus"), where)
    paper = as_mapping(document.get("paper", {}), f"{source}: paper")
    report = as_mapping(document.get("report", {}), f"{source}: report")
    metrics = tuple(report.get("metrics", ("mlm_accuracy",)))
    unknown = [name for name in metrics if name not in METRICS]
    if unknown:
        raise ExperimentError(f"{source}: report.metrics: unknown metric {unknown[0]!r} "
                              f"(known: {', '.join(METRICS)})")
    variants = _variants(document.get("variants"), settings, corpus, scale, tuple(scales),
                         source)
    shards = _shards(as_mapping(settings.get("shards", {}), f"{where}: shards"), where)
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
            TokenizerSpec, as_mapping(settings.get("tokenizer", {}), f"{where}: tokenizer"),
            f"{where}: tokenizer"),
        shards=shards,
        evaluation=dataclass_from_mapping(
            EvaluationSpec, as_mapping(settings.get("evaluation", {}), f"{where}: evaluation"),
            f"{where}: evaluation"),
        downstream=_downstream(settings.get("downstream", ()), f"{where}: downstream"),
        variants=variants, source=source,
        paper_models=_paper_models(document, variants if scale == PAPER_SCALE else None,
                                   source),
        claims=parse_claims(document.get("claims"), [v.name for v in variants],
                            source, ExperimentError), cut=cut)


def _cut_variants(value, names: Sequence[str], where: str) -> dict[str, str]:
    cut = as_mapping(value, where)
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
        corpus = _corpus(as_mapping(settings.get("corpus", {}), source), source)
        paper_variants = _variants(document.get("variants"), settings, corpus, PAPER_SCALE,
                                   tuple(scales), source)
    return {variant.name: variant.pretrain.get("model", {}) for variant in paper_variants}


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
        item = as_mapping(item, here)
        _check_keys(item, ("name", "train_files", "heldout_files"), here)
        files = {key: tuple([item[key]] if isinstance(item.get(key), str) else item.get(key, ()))
                 for key in ("train_files", "heldout_files")}
        if not item.get("name") or not files["train_files"]:
            raise ExperimentError(f"{here}: a source of your own needs 'name' and "
                                  f"'train_files' (and 'heldout_files' if it is evaluated on)")
        name = folder_safe(item["name"], f"{here}: 'name'")  # names the source's shard folders
        sources.append(CorpusSource(name, **files))
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
        item = dict(as_mapping(item, f"{where}[{index}]"))
        for key in ("overrides", "seeds"):
            if key in item:
                item[key] = tuple(item[key] if isinstance(item[key], list) else [item[key]])
        tasks.append(dataclass_from_mapping(DownstreamSpec, item, f"{where}[{index}]"))
    names = [task.name for task in tasks]
    if len(set(names)) != len(names):
        raise ExperimentError(f"{where}: two tasks with the same name {names}; give each a "
                              f"'label'")
    return tuple(tasks)


def _variants(value, settings, corpus: CorpusSpec, scale: str, scales, source: str
              ) -> tuple[VariantSpec, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise ExperimentError(f"{source}: 'variants' must be a non-empty list")
    base = as_mapping(settings.get("pretrain", {}), f"{source} (scale {scale}): pretrain")
    if isinstance(base.get("model"), str):
        base["model"] = {"preset": base["model"]}
    tokenizer = as_mapping(settings.get("tokenizer", {}), f"{source}: tokenizer")
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
        item = as_mapping(item, where)
        _check_keys(item, ("name", "label", "group", "pretrain", "corpus", "shards", "paper"),
                    where)
        name = folder_safe(item.get("name"), f"{where}: 'name'")
        changes = resolved(as_mapping(item.get("pretrain", {}), f"{where}.pretrain"),
                           f"{where}.pretrain")
        corpus_change = resolved(as_mapping(item.get("corpus", {}), f"{where}.corpus"),
                                 f"{where}.corpus")
        _check_keys(corpus_change, ("sources",), f"{where}.corpus")
        sources = (_sources(corpus_change["sources"], f"{where}.corpus.sources")
                   if "sources" in corpus_change else corpus.sources)
        shard_changes = resolved(as_mapping(item.get("shards", {}), f"{where}.shards"),
                                 f"{where}.shards")
        _check_shard_changes(shard_changes, f"{where}.shards")
        label, group = (resolved(item.get(key, default), f"{where}.{key}")
                        for key, default in (("label", name), ("group", "")))
        variants.append(VariantSpec(
            name=name, label=str(label), pretrain=deep_merge(base, changes),
            corpus_sources=sources, group=str(group), shard_changes=shard_changes,
            paper=as_mapping(item.get("paper", {}), f"{where}.paper")))
    names = [variant.name for variant in variants]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ExperimentError(f"{source}: variant names must differ; repeated: {duplicates}")
    return tuple(variants)
