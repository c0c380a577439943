"""The folders `albert-experiment run` writes: the work folder it holds (the variant runs of
one table at one scale, recorded as such: `albert_tf.io.owned_folder`) and the results
folder it locks.

The results folder is a folder of its own: `--results_dir` naming the work folder itself or
one of its variant folders is refused before anything is made, naming both paths. It may lie
inside the work folder (`--results_dir <work_dir>/results`).
Then it is one of the work folder's own entries, and in a work folder made before records
were kept it is taken over as the table's when its report (`results.json`) is of the same
table and scale; a report of another table or scale is refused, naming the field that
differs. A report folder in such a work folder that is not the run's `--results_dir` is
refused, naming it and the two ways on: give it as `--results_dir`, or move it out.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any, Iterator

from albert_lab.ablations.report import RANDOM_START
from albert_lab.ablations.report.writer import RESULTS_JSON
from albert_tf.io import files
from albert_tf.io.owned_folder import RECORD_FILE, FolderError, FolderLock, owned_folder

COMMAND = "albert-experiment"


@contextlib.contextmanager
def experiment_folders(spec, folders) -> Iterator[None]:
    """Holds the table's work folder while it runs (its lock, and a record of the table and
    scale it holds the variant runs of) and locks its results folder, so two runs of a table
    never write one folder.

    Args:
        spec: the table (`name`, `scale`, `variants` with their `name`s).
        folders: `work_dir` and `results_dir` (`albert_lab.ablations.runner.Folders`).
    """
    table = {"experiment": spec.name, "scale": spec.scale}
    own = [variant.name for variant in spec.variants] + [RANDOM_START]
    results_entry = _entry_of(folders.work_dir, folders.results_dir)
    _refuse_shared_results_dir(spec, folders, results_entry, own)
    if results_entry is not None:
        own.append(results_entry)
    _refuse_other_reports(folders, results_entry)

    def legacy_run() -> dict[str, Any]:
        """The table an unrecorded work folder holds: its report's, when the run's results
        folder is in it and holds one; else this one (each variant folder is then checked
        against the table's settings as it runs, `variant_config.finished_result`)."""
        if results_entry is None:
            return table
        return report_table(folders.results_dir) or table

    with owned_folder(folders.work_dir, COMMAND, table, own, legacy_run=legacy_run):
        os.makedirs(folders.results_dir, exist_ok=True)
        with FolderLock(folders.results_dir, COMMAND):
            yield


def _entry_of(work_dir: str, results_dir: str) -> str | None:
    """The name of `results_dir` in `work_dir` when it is a folder right inside it."""
    parent, name = os.path.split(os.path.normpath(os.path.abspath(results_dir)))
    if os.path.normpath(os.path.abspath(work_dir)) != parent:
        return None
    return name


def _refuse_shared_results_dir(spec, folders, results_entry: str | None,
                               run_folders: list[str]) -> None:
    """The report, its plots and records need a folder of their own: neither the work folder
    (whose lock and record are the table's) nor the folder of one of its runs."""
    work_dir, results_dir = folders.work_dir, folders.results_dir
    if os.path.realpath(results_dir) == os.path.realpath(work_dir):
        shared = f"is the work folder itself (--work_dir {work_dir})"
    elif results_entry in run_folders:
        shared = f"is the folder of the run {results_entry!r} in the work folder {work_dir}"
    else:
        return
    raise FolderError(
        f"--results_dir {results_dir} {shared}; expected a folder of the report's own, outside "
        f"the work folder (the default is experiments/results/{spec.name}/{spec.scale}) or a "
        f"new folder inside it, e.g. --results_dir {os.path.join(work_dir, 'results')} "
        f"(nothing was changed)")


def report_table(results_dir: str) -> dict[str, Any] | None:
    """{"experiment", "scale"} of the report in `results_dir`; None without one."""
    path = os.path.join(results_dir, RESULTS_JSON)
    if not files.exists(path):
        return None
    try:
        report = json.loads(files.read_bytes(path))
        return {"experiment": report["experiment"], "scale": report["scale"]}
    except (ValueError, TypeError, KeyError) as error:
        raise FolderError(f"{path}: not a report of {COMMAND} ({error!r}); expected the "
                          f"results.json it writes, with 'experiment' and 'scale'") from None


def _refuse_other_reports(folders, results_entry: str | None) -> None:
    """In a work folder without a record, a folder holding a report that is not the run's
    `--results_dir` would be refused as a file the command did not write: say what it is."""
    work_dir = folders.work_dir
    if not files.isdir(work_dir) or files.exists(os.path.join(work_dir, RECORD_FILE)):
        return
    for name in files.listdir(work_dir):
        path = os.path.join(work_dir, name)
        if name == results_entry or not files.exists(os.path.join(path, RESULTS_JSON)):
            continue
        try:
            shown = report_table(path)
        except FolderError:
            continue  # not a report: refused as a file of someone else's
        raise FolderError(
            f"{path} holds a report of {COMMAND} ({shown['experiment']} at scale "
            f"{shown['scale']}), made before work folders were recorded, but this run writes "
            f"its report to {folders.results_dir}; to go on with that report, give "
            f"--results_dir {path}, else move {path} out of {work_dir} (nothing was changed)")
