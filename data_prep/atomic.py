"""Files that appear whole or not at all: write to a temporary name, fsync, rename.

A crash mid-write leaves at most a `.<name>.tmp-<pid>` file, which later runs ignore and
`remove_stale_temporaries` deletes; readers never see a half-written shard or manifest.
"""

from __future__ import annotations

import contextlib
import glob
import os
from typing import BinaryIO, Iterator


def temporary_name(path: str) -> str:
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.tmp-{os.getpid()}")


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[BinaryIO]:
    """Opens a temporary file for writing; on success it becomes `path`, on error it goes."""
    temporary = temporary_name(path)
    try:
        with open(temporary, "wb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise


def atomic_write_bytes(path: str, data: bytes) -> None:
    with atomic_output(path) as file:
        file.write(data)


def remove_stale_temporaries(folder: str) -> list[str]:
    """Deletes temporaries left by crashed writers in `folder`; returns their paths."""
    stale = glob.glob(os.path.join(folder, ".*.tmp-*"))
    for path in stale:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    return stale
