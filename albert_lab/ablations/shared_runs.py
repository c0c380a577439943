"""Variants that several tables share are pretrained once.

The paper's tables reuse rows: Table 4's all-shared E=128 model is Table 5's all-shared
E=128 model, Table 5's baselines reappear in Tables 6-12, and so it goes at our scales too.
Before pretraining a variant the runner looks through the work folders of other tables
(`<work root>/<table>/<scale>/<variant>/result.json`) for a finished run that was made
with the same settings (the run config without places, the training shards' sources and
data-prep options: `albert_lab.ablations.variant_config.what_it_computes`), the same
tokenizer file and the same held-out scope, and copies that folder under the variant's
name: its weights, logs, held-out scores and finished fine-tunes. Each table's folder
stays complete on its own (delete one and the others keep working), and the copy's result
says where it came from.
When no work folder holds such a run (another machine made it, and its folders are gone), the
other tables' records (`albert_lab.ablations.records`, kept in git beside their reports) are
looked through the same way (`find_identical_record`): a record made with the same settings,
held-out scope and data (`ExperimentData.provenance`: the corpus and the tokenizer's
checksum) stands for the run, without its checkpoints.

A table's random start (its reference row: the first variant's sizes fine-tuned from random
weights) is shared the same way: another table's random start of the same model sizes, whose
fine-tunes used the same tokenizer and sequence length, is copied rather than fine-tuned again.
"""

from __future__ import annotations

import glob
import os
from typing import Any, Iterator, Sequence

import yaml

from albert_lab.ablations.result_store import (
    RESULT_FILE,
    comparable_settings,
    is_partial_copy,
    read_result,
)
from albert_lab.ablations.statistics.heldout_outcomes import OUTCOMES_FILE
from albert_tf.finetuning.restore import FINETUNE_CONFIG_FILE
from albert_tf.finetuning.runner import RESULTS_FILE as FINETUNE_RESULTS_FILE
from albert_tf.io.files import read_bytes


def heldout_scope(max_batches: int | None) -> dict[str, Any]:
    """How much of the held-out sets a run's scores cover (None: all of them), as results
    store it: runs scored on different scopes are not the same run."""
    return {"max_batches": max_batches}


def _stored_heldout_scope(result: dict[str, Any]) -> dict[str, Any]:
    # Results written before the scope was stored were all scored on whole held-out sets.
    return result.get("heldout_scope", heldout_scope(None))


def _results_of_the_same_run(folders: Sequence[str], own_folder: str,
                             settings: dict[str, Any], scope: dict[str, Any]
                             ) -> Iterator[tuple[str, dict[str, Any]]]:
    """(folder, result) for each folder one level under `folders` (sorted) whose readable
    result was made with `settings` and held-out `scope`; `own_folder` and half-made copies
    are skipped."""
    own = os.path.realpath(own_folder)
    settings = comparable_settings(settings)
    for parent in folders:
        for path in sorted(glob.glob(os.path.join(parent, "*", RESULT_FILE))):
            folder = os.path.dirname(path)
            if os.path.realpath(folder) == own or is_partial_copy(folder):
                continue
            try:
                stored = read_result(folder)
            except (OSError, ValueError):
                continue  # being written, or not ours: not a run to copy
            if (isinstance(stored, dict) and "settings" in stored
                    and comparable_settings(stored["settings"]) == settings
                    and _stored_heldout_scope(stored) == scope):
                yield folder, stored


def find_identical_run(work_dirs: Sequence[str], own_dir: str, settings: dict[str, Any],
                       tokenizer_file: str, scope: dict[str, Any]) -> str | None:
    """The first finished variant folder under any of `work_dirs` (other tables' work
    folders) whose result was made with `settings` and held-out `scope` and which holds a copy
    of the SentencePiece model `tokenizer_file` (same name, same bytes); None if there is
    none. `own_dir`, the variant's own folder, is skipped."""
    tokenizer = read_bytes(tokenizer_file)
    return next((folder for folder, _ in _results_of_the_same_run(work_dirs, own_dir,
                                                                   settings, scope)
                 if _same_bytes(os.path.join(folder, os.path.basename(tokenizer_file)),
                                tokenizer)), None)


def find_identical_record(records_dirs: Sequence[str], own_record: str,
                          settings: dict[str, Any], data: dict[str, Any],
                          scope: dict[str, Any]) -> str | None:
    """The first record folder (`<records dir>/<variant>`) under any of `records_dirs` (other
    tables' records) of a run made with `settings`, held-out `scope` and `data` (its
    `ExperimentData.provenance`) that holds its held-out outcomes; None if there is none.
    `own_record`, the variant's own record folder, is skipped; a record that does not say
    what data it was made from is never taken."""
    return next((folder for folder, stored in _results_of_the_same_run(
                     records_dirs, own_record, settings, scope)
                 if stored.get("data") == data
                 and os.path.exists(os.path.join(folder, OUTCOMES_FILE))), None)


def find_random_start(work_dirs: Sequence[str], own_folder: str, tokenizer_file: str,
                      seq_length: int) -> str | None:
    """Another table's random-start folder of the same model sizes as `own_folder` (whose name,
    `model-<digest>`, carries them), in which every fine-tune has finished with a copy of the
    SentencePiece model `tokenizer_file` (same name, same bytes) and `seq_length`; None if
    there is none. `own_folder` itself is skipped."""
    own = os.path.realpath(own_folder)
    relative = os.path.join(os.path.basename(os.path.dirname(own_folder)),
                            os.path.basename(own_folder))
    tokenizer = read_bytes(tokenizer_file)
    for work_dir in work_dirs:
        folder = os.path.join(work_dir, relative)
        if os.path.realpath(folder) == own:
            continue
        runs = sorted(glob.glob(os.path.join(folder, "finetune", "*", "seed*")))
        if runs and all(_finished_fine_tune(run, os.path.basename(tokenizer_file), tokenizer,
                                            seq_length) for run in runs):
            return folder
    return None


def _finished_fine_tune(run: str, tokenizer_name: str, tokenizer: bytes,
                        seq_length: int) -> bool:
    if not (os.path.exists(os.path.join(run, FINETUNE_RESULTS_FILE))
            and _same_bytes(os.path.join(run, tokenizer_name), tokenizer)):
        return False
    try:
        with open(os.path.join(run, FINETUNE_CONFIG_FILE), encoding="utf-8") as f:
            config = yaml.safe_load(f)
        return config["data"]["max_seq_length"] == seq_length
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return False


def _same_bytes(path: str, content: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read() == content
    except OSError:
        return False


