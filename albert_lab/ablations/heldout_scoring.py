"""Scoring a pretrained variant on the held-out sets: its metrics, its right/wrong outcome on
every prediction (for paired intervals), the trend over its kept checkpoints, and sentence
probes for a variant trained without a sentence objective. Each reads the run's folder and
the held-out shards; none trains the variant itself.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

import tensorflow as tf
import tf_keras

from albert_lab.ablations.prepared_data import HELDOUT_OBJECTIVES, ExperimentData
from albert_lab.ablations.statistics.heldout_outcomes import save_outcomes
from albert_lab.ablations.table_spec import ExperimentSpec, VariantSpec, deep_merge
from albert_lab.ablations.variant_config import variant_config
from albert_tf.checkpoints.model_folder import load_pretrainer
from albert_tf.config.pretraining import PretrainConfig
from albert_tf.config.run_folder import checkpoint_step, run_folders
from albert_tf.data.validation import read_shard_manifest
from albert_tf.training.evaluation import evaluate_files, example_outcomes, table6_row
from albert_tf.training.trainer import run_pretraining


def heldout_scores(model, config: PretrainConfig, heldout: dict[str, str], batch_size: int,
                   max_batches: int | None) -> dict[str, dict[str, float]]:
    """Metrics on the held-out SOP and NSP sets (the SOP set alone for a model without a
    sentence head: its MLM accuracy)."""
    sets = {"sop": heldout["sop"]} if config.sentence_objective == "none" else heldout
    return {task: evaluate_files(model, config, [pattern], batch_size, max_batches,
                                 field=f"held-out {task} shards")
            for task, pattern in sets.items()}


def record_heldout_outcomes(spec: ExperimentSpec, config: PretrainConfig,
                            heldout: dict[str, str]) -> None:
    """Stores the run's right/wrong outcome on every held-out prediction (on the scored
    scope) in its folder (`albert_lab.ablations.statistics.heldout_outcomes`);
    runs finished before outcomes were kept get them from their final checkpoint."""
    tf_keras.backend.clear_session()
    model, _, _ = load_pretrainer(config.train.model_dir)
    outcomes = {}
    for task in ("sop", "nsp") if model.sentence_head is not None else ("sop",):
        found = example_outcomes(model, config, [heldout[task]], spec.evaluation.batch_size,
                                 spec.evaluation.max_batches, field=f"held-out {task} shards")
        if task == "sop":  # the set the MLM accuracy is measured on
            outcomes.update(mlm_correct=found["mlm_correct"], mlm_labels=found["mlm_labels"])
        if "sentence_correct" in found:
            outcomes.update({f"{task}_correct": found["sentence_correct"],
                             f"{task}_labels": found["sentence_labels"]})
    save_outcomes(config.train.model_dir, outcomes)


def checkpoint_trend(spec: ExperimentSpec, config: PretrainConfig, heldout: dict[str, str]
                     ) -> list[dict[str, Any]]:
    """Every kept checkpoint of the run scored on the held-out sets: one
    {"step", "mlm_accuracy", "nsp_accuracy", "sop_accuracy"} per checkpoint, oldest first."""
    state = tf.train.get_checkpoint_state(run_folders(config.train.model_dir)["checkpoints"])
    paths = sorted(state.all_model_checkpoint_paths if state else [], key=checkpoint_step)
    trend = []
    for path in paths:
        tf_keras.backend.clear_session()
        model, _, _ = load_pretrainer(config.train.model_dir, path)
        accuracy = table6_row(heldout_scores(model, config, heldout,
                                             spec.evaluation.batch_size,
                                             spec.evaluation.max_batches))
        trend.append({"step": checkpoint_step(path), **{
            f"{task}_accuracy": value for task, value in accuracy.items()}})
    return trend


# The parts a sentence probe keeps fixed: everything the masked-LM objective trained.
PROBE_FROZEN = ["encoder.embedding", "encoder.transformer", "masked_lm"]


def add_sentence_probes(result: dict[str, Any], spec: ExperimentSpec, variant: VariantSpec,
                         data: ExperimentData, config: PretrainConfig,
                         heldout: dict[str, str]) -> None:
    """SOP and NSP accuracy of a variant trained without a sentence objective, as an
    intrinsic probe: for each objective a fresh sentence head and the pooler train
    `sentence_probe_steps` steps on that objective's training shards, everything else frozen
    (`init.freeze`), in `<run>/probe_<objective>`; then the held-out set scores it."""
    steps = spec.evaluation.sentence_probe_steps
    execution = math.gcd(steps, config.train.steps_per_execution)
    probes = {}
    for objective in HELDOUT_OBJECTIVES:
        probe = dataclasses.replace(variant, pretrain=deep_merge(variant.pretrain, {
            "sentence_objective": objective,
            "init": {"checkpoint": config.train.model_dir, "ignore": ["^sentence_head/"],
                     "freeze": PROBE_FROZEN, "mlm_output_bias": "zeros"},
            "optimizer": {"warmup_steps": max(1, steps // 10)},
            "train": {"train_steps": steps, "steps_per_epoch": steps,
                      "backup_every_steps": steps, "steps_per_execution": execution,
                      "eval_steps": 0}}))
        probe_config = variant_config(
            spec, probe, os.path.join(config.train.model_dir, f"probe_{objective}"),
            [data.train_shards(variant.corpus_sources, objective, variant.shard_changes)],
            [heldout[objective]], config.model.vocab_size)
        print(f"albert-experiment: {variant.name}: {objective.upper()} probe, {steps} steps "
              f"on the frozen encoder -> {probe_config.train.model_dir}")
        tf_keras.backend.clear_session()
        run_pretraining(probe_config)
        model, _, _ = load_pretrainer(probe_config.train.model_dir)
        scores = evaluate_files(model, probe_config, [heldout[objective]],
                                spec.evaluation.batch_size, spec.evaluation.max_batches,
                                field=f"held-out {objective} shards")
        probes[objective] = {"steps": steps, "frozen": PROBE_FROZEN, **scores}
        result["metrics"][f"{objective}_accuracy"] = scores["sentence_accuracy"]
        result.setdefault("heldout_counts", {})[objective] = heldout_counts(heldout[objective])
    result["sentence_probe"] = probes


def heldout_counts(pattern: str) -> dict[str, int]:
    """How many examples and masked predictions a held-out set holds (from its manifest):
    the sample sizes behind its accuracies, which the report's intervals need."""
    manifest = read_shard_manifest(os.path.dirname(pattern), "held-out shards") or {}
    examples = manifest.get("statistics", {}).get("examples", {})
    return {"examples": manifest.get("total_examples", 0),
            "masked_tokens": examples.get("masked_tokens", 0)}
