"""Where data-prep files live and how they are written: local disk or any TensorFlow filesystem.

Local paths go through `os` and `open`, so the workers of `albert-data build` never load
TensorFlow. A path with a scheme (`gs://`, `hdfs://`, `s3://` with tensorflow-io, `ram://`)
goes through `tf.io.gfile`, imported only then; that is what lets the Beam pipeline read and
write object stores from Dataflow workers.

Files appear whole or not at all: `atomic_output` writes to a temporary
`.<name>.tmp-<host>-<pid>-<random>` and renames it (fsync first on a local disk); a crash
leaves at most such a temporary, which later runs ignore and `remove_stale_temporaries`
deletes. The name is unique to the writer (two hosts writing to one bucket, or two processes
with one pid in two containers, never share one), and on a local disk the temporary is
created exclusively, without following a symbolic link: a link or file planted under that
name makes the write fail instead of writing through it.
"""

from __future__ import annotations

import contextlib
import glob as local_glob
import hashlib
import os
import secrets
import shutil
import socket
from typing import BinaryIO, Iterable, Iterator


def is_remote(path: str) -> bool:
    return "://" in path


def _gfile():
    import tensorflow as tf
    return tf.io.gfile


def open_read(path: str) -> BinaryIO:
    """A seekable binary file for reading."""
    return _gfile().GFile(path, "rb") if is_remote(path) else open(path, "rb")


def read_bytes(path: str) -> bytes:
    with open_read(path) as file:
        return file.read()


def exists(path: str) -> bool:
    return _gfile().exists(path) if is_remote(path) else os.path.exists(path)


def isdir(path: str) -> bool:
    return _gfile().isdir(path) if is_remote(path) else os.path.isdir(path)


def size(path: str) -> int:
    return _gfile().stat(path).length if is_remote(path) else os.path.getsize(path)


def glob(pattern: str) -> list[str]:
    """Sorted matches of a pattern with `*`, `?` or `[...]`."""
    return sorted(_gfile().glob(pattern) if is_remote(pattern) else local_glob.glob(pattern))


def listdir(path: str) -> list[str]:
    """The sorted names in folder `path` (a remote subfolder without its trailing slash)."""
    if is_remote(path):
        return sorted(name.rstrip("/") for name in _gfile().listdir(path))
    return sorted(os.listdir(path))


def has_magic(pattern: str) -> bool:
    return local_glob.has_magic(pattern)


def makedirs(path: str) -> None:
    if is_remote(path):
        _gfile().makedirs(path)
    else:
        os.makedirs(path, exist_ok=True)


def rmtree(path: str) -> None:
    if is_remote(path):
        _gfile().rmtree(path)
    else:
        shutil.rmtree(path)


def remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        if is_remote(path):
            import tensorflow as tf
            with contextlib.suppress(tf.errors.NotFoundError):
                tf.io.gfile.remove(path)
        else:
            os.remove(path)


def temporary_name(path: str) -> str:
    """`.<name>.tmp-<host>-<pid>-<random>` beside `path`: no other writer's."""
    folder, name = os.path.split(path)
    host = socket.gethostname().replace(os.sep, "_")
    return os.path.join(folder, f".{name}.tmp-{host}-{os.getpid()}-{secrets.token_hex(4)}")


# A new file, never an existing one, and never through a symbolic link.
_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def create_exclusive(path: str, mode: int = 0o644) -> BinaryIO:
    """A new local file opened for writing; FileExistsError when `path` exists (a planted
    symbolic link included, dangling or not)."""
    return os.fdopen(os.open(path, _EXCLUSIVE, mode), "wb")


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[BinaryIO]:
    """Opens a temporary file for writing; on success it becomes `path`, on error it goes.

    The folder of `path` is created when missing."""
    temporary = temporary_name(path)
    makedirs(os.path.dirname(path) or ".")
    remote = is_remote(path)
    # Opened before the try: a name someone else holds is theirs, not removed on error.
    file = _gfile().GFile(temporary, "wb") if remote else create_exclusive(temporary)
    try:
        with file:
            yield file
            if not remote:
                file.flush()
                os.fsync(file.fileno())
        if remote:
            _gfile().rename(temporary, path, overwrite=True)
        else:
            os.replace(temporary, path)
    except BaseException:
        remove(temporary)
        raise


def atomic_write_bytes(path: str, data: bytes) -> None:
    with atomic_output(path) as file:
        file.write(data)


def remove_stale_temporaries(folder: str) -> list[str]:
    """Deletes temporaries left by crashed writers in `folder`; returns their paths."""
    stale = glob(os.path.join(folder, ".*.tmp-*"))
    for path in stale:
        remove(path)
    return stale


def file_digest(paths: Iterable[str]) -> str:
    """SHA-256 over the names and bytes of `paths`, local files (folders are walked in
    order); each name is relative to its path's folder, so a copy elsewhere digests alike."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        files = [path]
        if os.path.isdir(path):
            files = sorted(os.path.join(root, name) for root, _, names in os.walk(path)
                           for name in names)
        for name in files:
            digest.update(os.path.relpath(name, os.path.dirname(path)).encode())
            with open(name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()
