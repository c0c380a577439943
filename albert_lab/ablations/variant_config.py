"""One variant's albert-pretrain config, and what its result depends on.

`variant_config` fills a variant's settings with the shards' lengths, its files and folder;
`what_it_computes` is the part of a run's settings its result depends on (places and
distribution left out, the training shards' sources and data-prep options added): two runs
with equal `what_it_computes` make the same result, so one may stand for the other
(`albert_lab.ablations.shared_runs`), and a stored result made with other settings is never
taken (`finished_result`).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from albert_lab.ablations.prepared_data import ExperimentData
from albert_lab.ablations.records import RECORDS_DIR
from albert_lab.ablations.result_store import comparable_settings, read_result, result_path
from albert_lab.ablations.table_spec import ExperimentError, ExperimentSpec, VariantSpec, deep_merge
from albert_tf.config.pretraining import PretrainConfig, pretrain_config_from_mapping
from albert_tf.config.schema import setting_differences
from albert_tf.text.vocabulary import SentencePieceTokenizer

# Settings that say where a run lives or how it talks, not what it computes.
_PLACE_KEYS = {("train", "model_dir"), ("train", "verbose"), ("data", "train_files"),
               ("data", "eval_files")}


def variant_config(spec: ExperimentSpec, variant: VariantSpec, model_dir: str,
                   train_files: Sequence[str] = (), eval_files: Sequence[str] = (),
                   vocab_size: int | None = None) -> PretrainConfig:
    """The albert-pretrain config of one variant: its settings with the shards' lengths, the
    tokenizer's vocabulary size and the given files and folder filled in."""
    options = spec.shards.options
    placed = deep_merge(variant.pretrain, {
        "data": {"train_files": list(train_files), "eval_files": list(eval_files),
                 "max_seq_length": options.max_seq_length,
                 "max_predictions_per_seq": options.max_predictions_per_seq},
        "train": {"model_dir": model_dir}})
    if vocab_size is not None:
        placed = deep_merge(placed, {"model": {"vocab_size": vocab_size}})
    return pretrain_config_from_mapping(placed, f"{spec.source}: variant {variant.name}")


def prepared_config(spec: ExperimentSpec, variant: VariantSpec, data: ExperimentData,
                    work_dir: str) -> PretrainConfig:
    """`variant_config` with the variant's shards made (or found) and its tokenizer's size."""
    objective = variant.objective
    return variant_config(
        spec, variant, os.path.join(work_dir, variant.name),
        [data.train_shards(variant.corpus_sources, objective, variant.shard_changes)],
        [data.heldout_shards("sop" if objective == "none" else objective)],
        SentencePieceTokenizer(data.spm_model()).vocab_size)


def what_it_computes(spec: ExperimentSpec, variant: VariantSpec,
                     config: PretrainConfig) -> dict[str, Any]:
    """The settings a result depends on: the run config without places, and how the training
    shards were made (their sources and data-prep options)."""
    settings = config.to_dict()
    for section, key in _PLACE_KEYS:
        settings[section].pop(key, None)
    settings.pop("distribution", None)
    settings["training_data"] = {
        "sources": [source.name for source in variant.corpus_sources],
        "shards": spec.shards.options_for(variant.objective, variant.shard_changes).to_dict()}
    return settings


def finished_result(spec: ExperimentSpec, variant: VariantSpec, config: PretrainConfig
                    ) -> dict[str, Any] | None:
    """The stored result of the variant run at `config.train.model_dir`, if it was made with
    the same settings; raises ExperimentError naming the settings that differ otherwise."""
    result = read_result(config.train.model_dir)
    if result is None:
        return None
    differences = setting_differences(
        comparable_settings(result["settings"]),
        comparable_settings(what_it_computes(spec, variant, config)))
    if differences:
        raise ExperimentError(
            f"{result_path(config.train.model_dir)} was made with other settings than the "
            f"experiment file now gives "
            f"({'; '.join(differences[:5])}); delete that variant folder (and its record under "
            f"the report's {RECORDS_DIR}/ folder, which would restore it) to run it again, or "
            f"use another --work_dir")
    return result
