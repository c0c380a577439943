"""A table's finished runs, kept beside its report so that another machine can go on.

Run folders (checkpoints, logs, fine-tunes) stay on the machine that made them; when it is
replaced they are gone. What a report is made of is small, so it is kept with the report,
in git:

    <results_dir>/records/<variant>/result.json            the variant's result
    <results_dir>/records/<variant>/heldout_outcomes.npz   its held-out right/wrong answers
    <results_dir>/records/random_start/result.json         the table's reference row

A variant's record is written once all of its stages have run (`runner.STAGES`); the random
start's after each of its fine-tunes, since it needs no checkpoint to go on. On a machine
whose work folder lacks a run, `restore_records` copies the record in, so `albert-experiment
report` rewrites the same report and `run` skips what is done and fine-tunes the random
start's missing seeds. A restored variant has no checkpoints: a stage it still lacks (the
table asked for more since) cannot run, and the runner says so.
"""

from __future__ import annotations

import os
from typing import Sequence

from albert_lab.ablations.result_store import RESULT_FILE, read_result
from albert_lab.ablations.statistics.heldout_outcomes import OUTCOMES_FILE
from albert_tf.config.run_folder import run_folders
from albert_tf.io.files import atomic_write_bytes, read_bytes

RECORDS_DIR = "records"
# The files a record holds; the result last, so a record with a result is whole.
RECORD_FILES = (OUTCOMES_FILE, RESULT_FILE)


def record_folder(results_dir: str, name: str) -> str:
    return os.path.join(results_dir, RECORDS_DIR, name)


def _copy_files(source: str, target: str) -> None:
    os.makedirs(target, exist_ok=True)
    for name in RECORD_FILES:
        path = os.path.join(source, name)
        if os.path.exists(path):
            atomic_write_bytes(os.path.join(target, name), read_bytes(path))


def save_record(results_dir: str, name: str, run_folder: str) -> None:
    """Copies the result (and held-out outcomes) of the run in `run_folder` to the record
    of `name`, replacing an older one."""
    if read_result(run_folder) is None:
        raise FileNotFoundError(f"{run_folder}: no {RESULT_FILE} to keep")
    target = record_folder(results_dir, name)
    stale = os.path.join(target, OUTCOMES_FILE)
    if os.path.exists(stale) and not os.path.exists(os.path.join(run_folder, OUTCOMES_FILE)):
        os.remove(stale)
    _copy_files(run_folder, target)


def restore_records(results_dir: str, work_dir: str, names: Sequence[str]) -> list[str]:
    """Copies the record of each of `names` whose run folder (`<work_dir>/<name>`) has no
    result into that folder; returns the names restored."""
    restored = []
    for name in names:
        source, target = record_folder(results_dir, name), os.path.join(work_dir, name)
        if read_result(source) is None or read_result(target) is not None:
            continue
        _copy_files(source, target)
        restored.append(name)
    return restored


def has_checkpoints(run_folder: str) -> bool:
    """Whether `run_folder` holds a pretraining run's checkpoints (a restored record does
    not)."""
    folder = run_folders(run_folder)["checkpoints"]
    return os.path.isdir(folder) and bool(os.listdir(folder))
