"""`albert-experiment run`: pretrain every variant of an experiment, score it, report.

Per variant, under `<work_dir>/<variant>/`: an albert-pretrain run (config.yaml, checkpoints,
backup, tensorboard) and its `result.json` (`albert_lab.ablations.result_store`). A variant
runs a list of stages (`STAGES`: pretraining with its held-out scores and curves, held-out
outcomes, sentence probes, the checkpoint trend, downstream fine-tunes), each skipped when
its part of the result is there, so the next run resumes at the first missing part (and
pretraining itself where it stopped). A result made with other settings than the file now
asks for is never reused silently: the runner stops and names the settings that differ.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, Sequence

import tf_keras

from albert_lab.ablations.curves import run_curves
from albert_lab.ablations.heldout_scoring import (
    add_sentence_probes,
    checkpoint_trend,
    heldout_counts,
    heldout_scores,
    record_heldout_outcomes,
)
from albert_lab.ablations.prepared_data import HELDOUT_OBJECTIVES, ExperimentData
from albert_lab.ablations.records import (
    RECORDS_DIR,
    has_checkpoints,
    record_folder,
    restore_records,
    save_record,
)
from albert_lab.ablations.report import RANDOM_START, check_no_row_is_lost, write_report
from albert_lab.ablations.result_store import (
    VariantResult,
    copy_folder,
    copy_run,
    read_result,
    save_result,
    without_evaluation_extras,
)
from albert_lab.ablations.shared_runs import (
    find_identical_record,
    find_identical_run,
    find_random_start,
    heldout_scope,
)
from albert_lab.ablations.statistics.heldout_outcomes import load_outcomes
from albert_lab.ablations.table_spec import ExperimentError, ExperimentSpec, VariantSpec
from albert_lab.ablations.variant_config import finished_result, prepared_config, what_it_computes
from albert_lab.ablations.variant_downstream import task_done, variant_seed_loop
from albert_lab.comparison.seed_loop import raise_first_error, run_seed_loops
from albert_lab.comparison.starts import start_overrides
from albert_lab.comparison.suite import settings_digest
from albert_tf.checkpoints.model_folder import load_pretrainer
from albert_tf.config.pretraining import PretrainConfig
from albert_tf.models.parameters import parameter_counts
from albert_tf.training.evaluation import table6_row
from albert_tf.training.trainer import run_pretraining


@dataclasses.dataclass(frozen=True)
class Folders:
    work_dir: str  # variant runs
    data_dir: str  # corpus, tokenizer, shards (shared by experiments)
    results_dir: str  # results.json, results.md, plots
    # Other tables' work folders: a variant run there with the same settings is copied
    # rather than pretrained again (albert_lab.ablations.shared_runs).
    reuse_dirs: tuple[str, ...] = ()
    # Other tables' records folders, looked through when no work folder has such a run.
    reuse_records: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class VariantRun:
    """What the stages of one variant's run work with."""
    spec: ExperimentSpec
    variant: VariantSpec
    data: ExperimentData
    heldout: dict[str, str]  # objective -> held-out shards
    config: PretrainConfig  # the variant's resolved run config

    @property
    def folder(self) -> str:
        return self.config.train.model_dir


@dataclasses.dataclass(frozen=True)
class Stage:
    """One step of a variant's run. It runs when the table asks for it (`wanted`: of the
    table and the variant) and its part of the result is not there yet (`done`: of the table,
    the run folder and the result), adds that part, and the result is written after it."""
    name: str
    wanted: Callable[[ExperimentSpec, VariantSpec], bool]
    done: Callable[[ExperimentSpec, str, VariantResult], bool]
    run: Callable[[VariantRun, VariantResult], None]


def _always(spec: ExperimentSpec, variant: VariantSpec) -> bool:
    return True


def _has(part: str) -> Callable[[ExperimentSpec, str, VariantResult], bool]:
    return lambda spec, folder, result: part in result


def _pretraining(run: VariantRun, result: VariantResult) -> None:
    result.update(_pretrain_and_score(run.spec, run.variant, run.config, run.heldout))
    result["data"] = run.data.provenance(run.variant.corpus_sources)


def _outcomes(run: VariantRun, result: VariantResult) -> None:
    record_heldout_outcomes(run.spec, run.config, run.heldout)


def _probes(run: VariantRun, result: VariantResult) -> None:
    add_sentence_probes(result, run.spec, run.variant, run.data, run.config, run.heldout)


def _trend(run: VariantRun, result: VariantResult) -> None:
    result["trend"] = checkpoint_trend(run.spec, run.config, run.heldout)


def fine_tune_tasks(spec: ExperimentSpec, data: ExperimentData, result: VariantResult,
                    result_folder: str, run_dir: str, seq_length: int,
                    start: Sequence[str] | None = None,
                    after_each: Callable[[], None] = lambda: None) -> None:
    """Fine-tunes the run `run_dir` (or `start`, whose runs then live under `run_dir`) on the
    missing seeds of every downstream task, side by side (`run_seed_loops`), keeping each
    seed in `result["downstream"]` and writing `result` to `result_folder` as it finishes
    (then calling `after_each`); raises the first failed task's error once the others are
    done."""
    def keeper(name):
        def keep(entry):
            result["downstream"][name] = entry
            save_result(result_folder, result)
            after_each()
        return keep

    loops = [variant_seed_loop(task, data.task_folder(task), run_dir, data.spm_model(),
                               seq_length, result["downstream"].get(task.name),
                               keeper(task.name), start) for task in spec.downstream]
    run_seed_loops(loops)
    raise_first_error(loops)


def _downstream(run: VariantRun, result: VariantResult) -> None:
    fine_tune_tasks(run.spec, run.data, result, run.folder, run.folder,
                    run.config.data.max_seq_length)


STAGES = (
    # The run and its held-out scores and curves: the result's first write, so a variant
    # with a result has been pretrained and scored.
    Stage("pretraining", _always, _has("final_step"), _pretraining),
    # Right or wrong on every held-out prediction (their own file, for paired intervals).
    Stage("held-out outcomes", _always,
          lambda spec, folder, result: load_outcomes(folder) is not None, _outcomes),
    Stage("sentence probes",
          lambda spec, variant: (variant.objective == "none"
                                 and bool(spec.evaluation.sentence_probe_steps)),
          _has("sentence_probe"), _probes),
    Stage("checkpoint trend", lambda spec, variant: spec.evaluation.checkpoint_trend,
          _has("trend"), _trend),
    # Each task's missing seeds, each kept as it finishes.
    Stage("downstream", lambda spec, variant: bool(spec.downstream),
          lambda spec, folder, result: all(
              task_done(task, result.get("downstream", {}).get(task.name))
              for task in spec.downstream), _downstream),
)


def missing_stages(spec: ExperimentSpec, variant: VariantSpec, folder: str,
                   result: VariantResult) -> list[Stage]:
    """The stages the table asks of `variant` whose part the result in `folder` lacks."""
    return [stage for stage in STAGES
            if stage.wanted(spec, variant) and not stage.done(spec, folder, result)]


def run_variant(spec: ExperimentSpec, variant: VariantSpec, data: ExperimentData,
                folders: Folders, heldout: dict[str, str]) -> VariantResult:
    """Runs the `STAGES` of one variant whose part of its result is missing (pretraining
    resumes, or a finished run of the same settings in another table is copied first)."""
    config = prepared_config(spec, variant, data, folders.work_dir)
    run = VariantRun(spec, variant, data, heldout, config)
    result = finished_result(spec, variant, config)
    if result is not None:
        print(f"albert-experiment: {variant.name} is finished ({config.train.model_dir}); "
              f"not running it again")
    else:
        result = (_copy_of_identical_run(spec, variant, data, folders, config)
                  or _copy_of_identical_record(spec, variant, data, folders, config) or {})
    missing = missing_stages(spec, variant, run.folder, result) if result else []
    if missing and not has_checkpoints(run.folder):
        raise ExperimentError(
            f"{variant.name}: its result in {run.folder} (restored from the table's record, "
            f"without checkpoints) lacks {', '.join(stage.name for stage in missing)}, which "
            f"needs the pretrained model; delete {run.folder} and "
            f"{record_folder(folders.results_dir, variant.name)} to pretrain it again")
    for stage in STAGES:  # each checked as the one before it has run
        if stage.wanted(spec, variant) and not stage.done(spec, run.folder, result):
            stage.run(run, result)
            save_result(run.folder, result)
    save_record(folders.results_dir, variant.name, run.folder)
    return result


def _copy_of_identical_run(spec: ExperimentSpec, variant: VariantSpec, data: ExperimentData,
                           folders: Folders, config: PretrainConfig) -> dict[str, Any] | None:
    """The result of a copy of another table's finished run of the same settings, or None
    (nothing to copy, or the variant's folder already holds a run of its own)."""
    if not folders.reuse_dirs or os.path.exists(config.train.model_dir):
        return None
    source = find_identical_run(folders.reuse_dirs, config.train.model_dir,
                                what_it_computes(spec, variant, config), data.spm_model(),
                                heldout_scope(spec.evaluation.max_batches))
    if source is None:
        return None
    print(f"albert-experiment: {variant.name} was run with the same settings in {source}; "
          f"copying it to {config.train.model_dir}")
    return copy_run(source, config.train.model_dir,
                    {"name": variant.name, "label": variant.label, "group": variant.group})


def _copy_of_identical_record(spec: ExperimentSpec, variant: VariantSpec,
                              data: ExperimentData, folders: Folders,
                              config: PretrainConfig) -> dict[str, Any] | None:
    """The result of another table's record of a finished run of the same settings and data
    (`find_identical_record`), copied into the variant's folder, when it holds every part this
    table asks for (a record has no checkpoints to make a missing part from); None otherwise,
    or when the variant's folder already holds a run of its own."""
    if not folders.reuse_records or os.path.exists(config.train.model_dir):
        return None
    source = find_identical_record(
        folders.reuse_records, record_folder(folders.results_dir, variant.name),
        what_it_computes(spec, variant, config), data.provenance(variant.corpus_sources),
        heldout_scope(spec.evaluation.max_batches))
    if source is None:
        return None
    lacking = missing_stages(spec, variant, source, without_evaluation_extras(
        read_result(source)))
    if lacking:
        print(f"albert-experiment: {variant.name} was run with the same settings and data "
              f"({source}), but its record lacks {', '.join(stage.name for stage in lacking)}; "
              f"running it here")
        return None
    print(f"albert-experiment: {variant.name} was run with the same settings and data, and "
          f"its record is in {source}; copying it to {config.train.model_dir}")
    return copy_run(source, config.train.model_dir,
                    {"name": variant.name, "label": variant.label, "group": variant.group})


def _pretrain_and_score(spec: ExperimentSpec, variant: VariantSpec, config: PretrainConfig,
                        heldout: dict[str, str]) -> dict[str, Any]:
    print(f"albert-experiment: {spec.name} [{spec.scale}] variant {variant.name} "
          f"({variant.label}) -> {config.train.model_dir}")
    tf_keras.backend.clear_session()
    trained = run_pretraining(config)
    model, _, checkpoint = load_pretrainer(config.train.model_dir)
    scores = heldout_scores(model, config, heldout, spec.evaluation.batch_size,
                            spec.evaluation.max_batches)
    accuracy = table6_row(scores)
    curves = run_curves(os.path.join(config.train.model_dir, "tensorboard"),
                        config.train.steps_per_epoch, trained.final_step)
    result = {
        "name": variant.name, "label": variant.label, "group": variant.group,
        "settings": what_it_computes(spec, variant, config), "final_step": trained.final_step,
        "parameters": dict(parameter_counts(model.encoder).rows()),
        "metrics": {
            "mlm_accuracy": accuracy["mlm"], "nsp_accuracy": accuracy["nsp"],
            "sop_accuracy": accuracy["sop"], "mlm_loss": scores["sop"].get("mlm_loss"),
            "final_train_loss": curves["train_loss"][-1][1] if curves["train_loss"] else None,
            "train_hours": curves["train_seconds"] / 3600,
            "examples_per_second": curves["examples_per_second"],
            "cpu_use": curves["cpu_use"]},
        "checkpoint": checkpoint, "heldout": scores,
        "heldout_scope": heldout_scope(spec.evaluation.max_batches),
        "heldout_counts": {task: heldout_counts(heldout[task]) for task in scores},
        "curves": curves,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "downstream": {},
    }
    return result


def variants_to_run(spec: ExperimentSpec, only: Sequence[str] = ()) -> list[VariantSpec]:
    """The variants named in `only`, else every one the scale does not cut."""
    if only:
        return [spec.variant(name) for name in only]
    return [variant for variant in spec.variants if variant.name not in spec.cut]


def run_experiment(spec: ExperimentSpec, folders: Folders, only: Sequence[str] = (),
                   command: str = "", progress: bool = True) -> dict[str, Any]:
    """Runs the variants of `spec` (`variants_to_run`) and writes the report of every
    finished variant; returns the report's content."""
    chosen = variants_to_run(spec, only)
    sync_records(spec, folders)
    check_no_row_is_lost(spec, folders, [variant.name for variant in chosen] + (
        [RANDOM_START] if spec.evaluation.random_start and spec.downstream else []))
    data = ExperimentData(spec, folders.data_dir, progress)
    heldout = {objective: data.heldout_shards(objective) for objective in HELDOUT_OBJECTIVES}
    for variant in chosen:
        run_variant(spec, variant, data, folders, heldout)
        write_report(spec, folders, command)  # the report grows as each variant finishes
    if spec.evaluation.random_start and spec.downstream:
        run_random_start(spec, data, folders)
    return write_report(spec, folders, command)


def sync_records(spec: ExperimentSpec, folders: Folders) -> None:
    """Copies the table's records (`albert_lab.ablations.records`) of runs that this machine's
    work folder lacks into it, then keeps a record of every finished run there that has none
    or an older one (runs made before records were kept, or by an interrupted command)."""
    names = [*(variant.name for variant in spec.variants), RANDOM_START]
    restored = restore_records(folders.results_dir, folders.work_dir, names)
    if restored:
        print(f"albert-experiment: restored {', '.join(restored)} from the records in "
              f"{os.path.join(folders.results_dir, RECORDS_DIR)} (their run folders are not "
              f"on this machine)")
    for variant in spec.variants:
        folder = os.path.join(folders.work_dir, variant.name)
        result = read_result(folder)
        if result is not None and not missing_stages(spec, variant, folder, result):
            save_record(folders.results_dir, variant.name, folder)
    if read_result(os.path.join(folders.work_dir, RANDOM_START)) is not None:
        save_record(folders.results_dir, RANDOM_START,
                    os.path.join(folders.work_dir, RANDOM_START))


def run_random_start(spec: ExperimentSpec, data: ExperimentData, folders: Folders
                     ) -> dict[str, Any]:
    """Fine-tunes a random start of the first variant's sizes on every downstream task (the
    table's reference row); kept in `<work_dir>/random_start/result.json` like a variant's."""
    first = spec.variants[0]
    config = prepared_config(spec, first, data, folders.work_dir)
    model = config.model.to_dict()
    result = {"name": RANDOM_START, "label": f"random start ({first.row_label} sizes)",
              "model": model, "metrics": {}, "downstream": {}}
    stored = read_result(os.path.join(folders.work_dir, RANDOM_START))
    if stored is not None and stored.get("model") == model:
        result = {**stored, "label": result["label"]}
    else:  # new, or other sizes: fine-tuned anew, in another folder
        result["data"] = {"tokenizer": data.tokenizer_checksum()}
    folder = os.path.join(folders.work_dir, RANDOM_START, f"model-{settings_digest(model)}")
    if folders.reuse_dirs and not os.path.exists(folder):
        source = find_random_start(folders.reuse_dirs, folder, data.spm_model(),
                                   config.data.max_seq_length)
        if source is not None:
            print(f"albert-experiment: the random start of these sizes was fine-tuned in "
                  f"{source}; copying it to {folder}")
            copy_folder(source, folder)
            result["copied_from"] = source
    result_folder = os.path.join(folders.work_dir, RANDOM_START)
    fine_tune_tasks(spec, data, result, result_folder, folder, config.data.max_seq_length,
                    start_overrides("", "random", folder, model),
                    lambda: save_record(folders.results_dir, RANDOM_START, result_folder))
    return result
