"""Variants that several tables share are pretrained once.

The paper's tables reuse rows: Table 4's all-shared E=128 model is Table 5's all-shared
E=128 model, Table 5's baselines reappear in Tables 6-12, and so it goes at our scales too.
Before pretraining a variant the runner looks through the work folders of other tables
(`<work root>/<table>/<scale>/<variant>/result.json`) for a finished run that was made
with the same settings (the run config without places, the training shards' sources and
data-prep options; see `runner._what_it_computes`), the same tokenizer file and the same
held-out scope, and copies that folder under the variant's name: its weights, logs,
held-out scores and finished fine-tunes. Each table's folder stays complete on its own
(delete one and the others keep working), and the copy's result says where it came from.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from typing import Any, Sequence

from albert_experiments.report import RESULT_FILE
from albert_tf.text.files import atomic_write_bytes

_PARTIAL_SUFFIX = ".copying"  # a copy being made; renamed to the variant's folder when done
# Scores another table's evaluation settings made; recomputed if this table asks for them.
_EVALUATION_EXTRAS = ("trend", "sentence_probe")


def heldout_scope(max_batches: int | None) -> dict[str, Any]:
    """How much of the held-out sets a run's scores cover (None: all of them), as results
    store it: runs scored on different scopes are not the same run."""
    return {"max_batches": max_batches}


def _stored_heldout_scope(result: dict[str, Any]) -> dict[str, Any]:
    # Results written before the scope was stored were all scored on whole held-out sets.
    return result.get("heldout_scope", heldout_scope(None))


def find_identical_run(work_dirs: Sequence[str], own_dir: str, settings: dict[str, Any],
                       tokenizer_file: str, scope: dict[str, Any]) -> str | None:
    """The first finished variant folder under any of `work_dirs` (other tables' work
    folders) whose result was made with `settings` and held-out `scope` and which holds a copy
    of the SentencePiece model `tokenizer_file` (same name, same bytes); None if there is
    none. `own_dir`, the variant's own folder, is skipped."""
    own = os.path.realpath(own_dir)
    with open(tokenizer_file, "rb") as f:
        tokenizer = f.read()
    for work_dir in work_dirs:
        for path in sorted(glob.glob(os.path.join(work_dir, "*", RESULT_FILE))):
            folder = os.path.dirname(path)
            if os.path.realpath(folder) == own or folder.endswith(_PARTIAL_SUFFIX):
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    stored = json.load(f)
            except (OSError, ValueError):
                continue  # being written, or not ours: not a run to copy
            if (isinstance(stored, dict) and stored.get("settings") == settings
                    and _stored_heldout_scope(stored) == scope
                    and _same_bytes(os.path.join(folder, os.path.basename(tokenizer_file)),
                                    tokenizer)):
                return folder
    return None


def _same_bytes(path: str, content: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read() == content
    except OSError:
        return False


def copy_run(source: str, model_dir: str, names: dict[str, Any]) -> dict[str, Any]:
    """Copies the finished run folder `source` to `model_dir` (through a temporary name, so a
    crash leaves no half-copied variant) and returns its result with `names` (name, label,
    group) of the variant it now stands for, the checkpoint path moved, scores that depend on
    another table's evaluation settings dropped and `copied_from` set."""
    if os.path.exists(model_dir):
        raise FileExistsError(f"{model_dir}: exists; a run is copied only into a new folder")
    partial = model_dir + _PARTIAL_SUFFIX
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial, symlinks=True)
    with open(os.path.join(partial, RESULT_FILE), encoding="utf-8") as f:
        result = json.load(f)
    for key in _EVALUATION_EXTRAS:
        result.pop(key, None)
    result.update(names)
    if result.get("checkpoint"):
        relative = os.path.relpath(result["checkpoint"], source)
        result["checkpoint"] = os.path.join(model_dir, relative)
    result["copied_from"] = source
    atomic_write_bytes(os.path.join(partial, RESULT_FILE),
                       json.dumps(result, indent=1).encode())
    os.replace(partial, model_dir)
    return result
