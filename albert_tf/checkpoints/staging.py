"""Writing an output folder all at once: assembled under a temporary name, then renamed."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Iterator

from albert_tf.checkpoints.reading import CheckpointError


@contextlib.contextmanager
def staged_folder(output_dir: str) -> Iterator[str]:
    """Yields a temporary folder beside `output_dir` to write into; on success it becomes
    `output_dir`, on any error it is removed, so no half-written folder is ever left.

    `output_dir` must not exist or be empty (a converter never overwrites a model).
    """
    output_dir = os.path.abspath(output_dir)
    if os.path.exists(output_dir) and (not os.path.isdir(output_dir) or os.listdir(output_dir)):
        raise CheckpointError(f"{output_dir}: exists and is not an empty folder; choose a new "
                              f"output folder")
    parent = os.path.dirname(output_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(output_dir)}.tmp-", dir=parent)
    try:
        yield staging
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
