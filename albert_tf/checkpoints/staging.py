"""Writing an output folder all at once: assembled under a temporary name, then renamed."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from typing import Any, Iterator, Mapping

from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.io import files
from albert_tf.io.owned_folder import FolderLock, FolderRecord, write_record


def _check_new(output_dir: str) -> None:
    if os.path.exists(output_dir) and (not os.path.isdir(output_dir) or os.listdir(output_dir)):
        held = sorted(os.listdir(output_dir))[:8] if os.path.isdir(output_dir) else []
        raise CheckpointError(f"{output_dir}: exists and is not an empty folder"
                              f"{' (it holds ' + ', '.join(held) + ')' if held else ''}; "
                              f"choose a new output folder (nothing was changed)")


@contextlib.contextmanager
def staged_folder(output_dir: str, command: str,
                  run: Mapping[str, Any] | None = None) -> Iterator[str]:
    """Yields a temporary folder beside `output_dir` to write into; on success it becomes
    `output_dir`, on any error it is removed, so no half-written folder is ever left.

    `output_dir` must be local and must not exist or be empty (a converter never overwrites
    a model). While the folder is written, `command` holds the lock `.<name>.albert-lock`
    beside it (`albert_tf.io.owned_folder`: a second writer is refused, naming this one);
    the folder gets the record of `command`, `run` (what it was made from) and its files.
    """
    if files.is_remote(output_dir):
        raise CheckpointError(f"{output_dir}: {command} writes a local folder (it is renamed "
                              f"into place whole and locked while written, which needs a "
                              f"local filesystem); write it locally, then copy it there")
    output_dir = os.path.abspath(output_dir)
    _check_new(output_dir)
    parent, name = os.path.split(output_dir)
    os.makedirs(parent, exist_ok=True)
    with FolderLock(output_dir, command, os.path.join(parent, f".{name}.albert-lock")):
        _check_new(output_dir)  # again, now that no other writer can change it
        prefix = f".{name}.tmp-{socket.gethostname()}-{os.getpid()}-"
        staging = tempfile.mkdtemp(prefix=prefix, dir=parent)
        try:
            yield staging
            write_record(staging, FolderRecord(command, dict(run or {}),
                                               sorted(os.listdir(staging))))
            if os.path.exists(output_dir):
                os.rmdir(output_dir)
            os.rename(staging, output_dir)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def write_checkpoint_state(folder: str, name: str) -> None:
    """The `checkpoint` file `tf.train.latest_checkpoint` reads, naming checkpoint `name` by a
    relative path, so the folder still works after it is renamed or moved."""
    with open(os.path.join(folder, "checkpoint"), "w", encoding="utf-8") as f:
        f.write(f'model_checkpoint_path: "{name}"\nall_model_checkpoint_paths: "{name}"\n')
