"""A variant's result: `result.json` in its run folder (the table's random start keeps one in
`<work_dir>/random_start/`), its parts typed (`VariantResult`), and the only code that reads,
writes and copies one.

Each part is written by one stage of the runner (`albert_lab.ablations.runner.STAGES`); a stage
whose part is there is skipped, so the file grows as the variant's run goes on and an
interrupted run resumes at the first missing part. Writes go through a temporary name; a run
folder is copied (from another table that ran the same settings) under a temporary name too,
so a crash leaves nothing half-written or half-copied under a variant's name.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any, TypedDict

from albert_lab.result_files import write_result
from albert_tf.config.pretraining import RETIRED_SECTIONS, PretrainConfig
from albert_tf.text.options import DataPrepOptions

RESULT_FILE = "result.json"
_PARTIAL_SUFFIX = ".copying"  # a copy being made; renamed to the variant's folder when done
# Parts that another table's evaluation settings made; a copy drops them and recomputes them
# if this table asks for them.
_EVALUATION_EXTRAS = ("trend", "sentence_probe")


class VariantResult(TypedDict, total=False):
    """What `result.json` holds. The pretraining stage writes the first group; each later
    stage adds its part."""

    # The pretraining stage: the run and its held-out scores.
    name: str  # the variant's name in the table
    label: str  # its row label
    group: str  # its group of rows, or ""
    settings: dict[str, Any]  # what the run computes: its config without places, the data
    final_step: int
    parameters: dict[str, int]  # the encoder's parameter counts by part
    metrics: dict[str, float | None]  # mlm/nsp/sop accuracy, losses, train_hours, throughput
    checkpoint: str  # the checkpoint scored
    heldout: dict[str, dict[str, float]]  # per held-out set (sop, nsp): its metrics
    heldout_scope: dict[str, Any]  # how much of the held-out sets the scores cover
    heldout_counts: dict[str, dict[str, int]]  # examples and masked tokens per held-out set
    curves: dict[str, Any]  # training and held-out loss per logged step
    finished: str  # when pretraining was scored (UTC)
    copied_from: str  # the folder this run was copied from, if it was
    # Later stages.
    sentence_probe: dict[str, Any]  # SOP and NSP probes of a run without a sentence head
    trend: list[dict[str, Any]]  # every kept checkpoint scored on the held-out sets
    downstream: dict[str, Any]  # task name -> its fine-tunes (`variant_downstream`)
    # The random start's result: its sizes instead of settings.
    model: dict[str, Any]


def result_path(folder: str) -> str:
    return os.path.join(folder, RESULT_FILE)


def read_result(folder: str) -> VariantResult | None:
    """The result in `folder`, or None when it has none."""
    path = result_path(folder)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def comparable_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` (a run's `what_it_computes`, or a stored result's, written by an earlier
    version) in today's form, so the two compare: the sections retired since left out
    (`RETIRED_SECTIONS`), and each field added since filled in with its default, which is
    what every run made before the field existed did (a new field's default keeps the
    behaviour from before it). A stored file itself is left as it was."""
    defaults = {**PretrainConfig().to_dict(),
                "training_data": {"shards": DataPrepOptions().to_dict()}}
    current = {key: value for key, value in settings.items() if key not in RETIRED_SECTIONS}
    return _filled(current, defaults)


def _filled(stored: Any, defaults: Any) -> Any:
    if not (isinstance(stored, dict) and isinstance(defaults, dict)):
        return stored
    return {**{key: value for key, value in defaults.items() if key not in stored},
            **{key: _filled(value, defaults.get(key)) for key, value in stored.items()}}


def save_result(folder: str, result: VariantResult) -> None:
    """Writes `result` as the `result.json` of `folder` (the runner's JSON form)."""
    write_result(result_path(folder), result, indent=1, final_newline=False)


def copy_folder(source: str, target: str) -> None:
    """Copies the folder `source` to `target` through a temporary name, so a crash leaves
    nothing half-copied under `target`."""
    partial = _partial_copy(source, target)
    os.replace(partial, target)


def is_partial_copy(folder: str) -> bool:
    """A copy still being made (or left by a crash): not a run."""
    return folder.endswith(_PARTIAL_SUFFIX)


def _partial_copy(source: str, target: str) -> str:
    """Copies `source` next to `target` under a temporary name (replacing a half-made copy a
    crash left) and returns that name; `target` must not exist yet."""
    if os.path.exists(target):
        raise FileExistsError(f"{target}: exists; a run is copied only into a new folder")
    partial = target + _PARTIAL_SUFFIX
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial, symlinks=True)
    return partial


def without_evaluation_extras(result: VariantResult) -> VariantResult:
    """`result` less the parts that another table's evaluation settings made."""
    return {key: value for key, value in result.items() if key not in _EVALUATION_EXTRAS}


def _inside(path: str, folder: str) -> bool:
    folder = os.path.abspath(folder)
    return os.path.commonpath([os.path.abspath(path), folder]) == folder


def copy_run(source: str, model_dir: str, names: dict[str, Any]) -> VariantResult:
    """Copies the finished run folder `source` (or another table's record of one) to
    `model_dir` (through a temporary name, so a crash leaves no half-copied variant) and
    returns its result with `names` (name, label, group) of the variant it now stands for,
    the checkpoint path moved when the checkpoint was in `source` (a record's names where
    its run was), the parts that depend on another table's evaluation settings dropped and
    `copied_from` set."""
    partial = _partial_copy(source, model_dir)
    result = without_evaluation_extras(read_result(partial))
    result.update(names)
    checkpoint = result.get("checkpoint")
    if checkpoint and _inside(checkpoint, source):
        result["checkpoint"] = os.path.join(model_dir, os.path.relpath(checkpoint, source))
    result["copied_from"] = source
    save_result(partial, result)
    os.replace(partial, model_dir)
    return result
