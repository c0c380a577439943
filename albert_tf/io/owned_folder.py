"""A folder one command owns: the run it holds, a lock while the command runs, and the names
of the files the command writes there (the only ones `--overwrite` deletes).

    with owned_folder("shards", "albert-data build", run=plan_settings,
                      files=["build.json", "manifest.json", "train-*-of-00004.tfrecord*"]):
        ...  # write the shards

Every command that writes a folder (`albert-data build`, `albert-pretrain`, `albert-finetune`,
`albert-experiment run`; `albert-convert` and `albert-export` through `staged_folder`) enters
it this way, after checking its inputs, so nothing is created for a command that cannot run.
Entering:

1. creates the folder and takes its lock, `.albert-lock`: created exclusively (`O_EXCL`)
   and holding the command, host, pid and start time. Another process's lock is an error
   naming that holder; a lock whose holder is gone (its host is this one and its pid no
   longer runs that process) is stale and is replaced, with a warning. The lock is removed
   when the command ends.
2. reads the folder's record, `.albert-folder.json`: the command, the run (the settings that
   decide what the command computes, as a nested mapping) and the names it writes (globs).
   A record of another command, or of a run whose settings differ (other than the fields in
   `may_differ`), is an error naming each differing field. A folder without a record must be
   empty or hold only names the command writes (then `legacy_run` reads the run they belong
   to, for folders made before records were kept); anything else is an error naming the
   files.
3. with `overwrite`, deletes the existing files the record names (never another file, never
   the folder), then writes the record for this run.

A command that fails before writing anything leaves the folder as it found it (no record; no
folder if it made it).

The lock needs a filesystem with exclusive create: a local disk or a network filesystem
mounted on the host. TensorFlow's filesystems (`gs://`, `s3://`, `hdfs://` through
`tf.io.gfile`) have none, so such a folder is not locked: the record still refuses another
run's settings, but nothing stops two copies of one run; the command warns and one must
start one command per folder (a multi-worker run's chief is its one writer).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import fnmatch
import json
import os
import secrets
import socket
import sys
import time
from typing import Any, Callable, Iterable, Iterator, Mapping

from albert_tf.io import files

LOCK_FILE = ".albert-lock"
RECORD_FILE = ".albert-folder.json"
_LISTED = 8  # names listed in an error before "and N more"


class FolderError(ValueError):
    """A folder holds another run, files that are not the command's, or another process's
    lock; the message names the folder and what differs."""


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


@dataclasses.dataclass(frozen=True)
class Holder:
    """Who holds a lock: the command, its host and pid, when it started, and a token that
    tells this holding from another one of the same process."""

    command: str
    host: str
    pid: int
    started: str
    token: str

    @classmethod
    def this_process(cls, command: str) -> Holder:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        return cls(command, socket.gethostname(), os.getpid(), now, secrets.token_hex(8))

    def __str__(self) -> str:
        return f"{self.command} (pid {self.pid} on host {self.host}, since {self.started})"

    def is_gone(self) -> bool:
        """Whether the holder has certainly ended: it ran on this host and its pid runs no
        process now. A holder on another host is never judged gone."""
        if self.host != socket.gethostname() or self.pid == os.getpid():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # a process of another user: alive
            return False
        return False


def _read_holder(path: str) -> Holder | None:
    """The holder a lock file names; None when it is gone or not (yet) readable."""
    try:
        with open(path, encoding="utf-8") as file:
            return Holder(**json.load(file))
    except (OSError, ValueError, TypeError):
        return None


@contextlib.contextmanager
def _serialized(folder: str) -> Iterator[None]:
    """Holds an advisory lock on `folder` itself, so that two processes of this host never
    both judge one stale lock and break it (where `fcntl` exists)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no guard
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the flock


class FolderLock:
    """The exclusive lock of a folder while a command runs (see the module docstring).

    Args:
        folder: the locked folder (it must exist for `acquire`, unless `path` is given).
        command: the command named to anyone else who finds the lock.
        path: the lock file (default `<folder>/.albert-lock`); a folder that appears whole at
            the end (`staged_folder`) is locked by a file beside it.
    """

    def __init__(self, folder: str, command: str, path: str | None = None):
        self.folder = folder
        self.command = command
        self.path = path or os.path.join(folder, LOCK_FILE)
        self.holder: Holder | None = None

    def acquire(self) -> FolderLock:
        if files.is_remote(self.path):
            print(f"{self.command}: warning: {self.folder} is not locked: its filesystem has "
                  f"no exclusive create through tf.io.gfile, so nothing stops a second command "
                  f"on it; its record ({RECORD_FILE}) still refuses another run's settings. "
                  f"Start one command per folder", file=sys.stderr)
            return self
        holder = Holder.this_process(self.command)
        for _ in range(50):
            try:
                with files.create_exclusive(self.path) as file:
                    file.write(json.dumps(dataclasses.asdict(holder)).encode())
                    file.flush()
                    os.fsync(file.fileno())
                self.holder = holder
                return self
            except FileExistsError:
                self._wait_or_break()
        raise FolderError(f"{self.path}: could not take the lock (it kept changing hands)")

    def _wait_or_break(self) -> None:
        """Raises FolderError naming a live holder; removes a stale lock file; waits for one
        being written."""
        holder = _read_holder(self.path)
        if holder is None:  # being written or removed just now: look again
            for _ in range(20):
                time.sleep(0.05)
                holder = _read_holder(self.path)
                if holder is not None or not os.path.lexists(self.path):
                    break
            if holder is None and os.path.lexists(self.path):
                raise FolderError(f"{self.folder} is locked by {self.path}, which names no "
                                  f"holder; if no command is running on this folder, delete "
                                  f"that file")
            if holder is None:
                return
        if not holder.is_gone():
            raise FolderError(f"{self.folder} is in use by {holder}; wait for it to end or "
                              f"use another folder (if no such command runs, delete its lock "
                              f"{self.path})")
        with _serialized(os.path.dirname(self.path) or "."):
            if _read_holder(self.path) == holder:
                os.remove(self.path)
                print(f"{self.command}: warning: removed the stale lock of {holder}, which "
                      f"has ended", file=sys.stderr)

    def release(self) -> None:
        """Removes the lock file if it is still this holding's."""
        if self.holder is not None and _read_holder(self.path) == self.holder:
            files.remove(self.path)
        self.holder = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc_info) -> None:
        self.release()


@dataclasses.dataclass
class FolderRecord:
    """What `.albert-folder.json` holds: the command, its run's settings, the names (globs,
    relative to the folder) it writes there."""

    command: str
    run: dict[str, Any]
    files: list[str]

    def owns(self, name: str) -> bool:
        """Whether `name` (a top-level entry) is one of the command's, or a temporary of one
        (`files.temporary_name`) that a crash left."""
        if name.startswith(".") and ".tmp-" in name:
            name = name[1:].split(".tmp-", 1)[0]
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.files)


def read_record(folder: str) -> FolderRecord | None:
    """The folder's record, None without one."""
    path = os.path.join(folder, RECORD_FILE)
    if not files.exists(path):
        return None
    try:
        return FolderRecord(**json.loads(files.read_bytes(path)))
    except (ValueError, TypeError) as error:
        raise FolderError(f"{path}: not a folder record ({error}); expected the JSON the "
                          f"albert-tf commands write there") from None


def write_record(folder: str, record: FolderRecord) -> None:
    text = json.dumps(dataclasses.asdict(record), indent=1, sort_keys=True) + "\n"
    files.atomic_write_bytes(os.path.join(folder, RECORD_FILE), text.encode())


def settings_without(settings: Mapping[str, Any],
                     skipped: Mapping[str, Iterable[str] | None]) -> dict[str, Any]:
    """`settings` (section -> field -> value) without the fields `skipped` names per
    section (None: the whole section): the part of a run config that is the run."""
    kept = {}
    for section, values in settings.items():
        fields = skipped.get(section, ())
        if fields is None:
            continue
        kept[section] = ({key: value for key, value in values.items() if key not in fields}
                         if isinstance(values, Mapping) else values)
    return kept


def _flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flat(value, name + "."))
        else:
            flat[name] = value
    return flat


def run_differences(stored: Mapping[str, Any], requested: Mapping[str, Any],
                    may_differ: Iterable[str] = ()) -> list[str]:
    """`field: stored -> requested` for every dotted field both runs have whose values
    differ, but those in `may_differ`. A field only one side has is not compared (a setting
    added to the package since the stored run was made)."""
    old, new = _flat(stored), _flat(json.loads(json.dumps(requested)))
    allowed = set(may_differ)
    return [f"{name}: {_short(old[name])} -> {_short(new[name])}"
            for name in sorted(old.keys() & new.keys())
            if name not in allowed and old[name] != new[name]]


def _short(value: Any, limit: int = 120) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[:limit - 4] + " ..."


def entries(folder: str) -> list[str]:
    """The folder's top-level names but its lock and record."""
    return sorted(name for name in files.listdir(folder) if name not in (LOCK_FILE, RECORD_FILE))


def _check_record(folder: str, record: FolderRecord, command: str, run: Mapping[str, Any],
                  may_differ: Iterable[str], overwrite: bool) -> None:
    if record.command != command:
        raise FolderError(f"{folder} holds the output of {record.command}, not of {command} "
                          f"(see {os.path.join(folder, RECORD_FILE)}); use another folder")
    differences = run_differences(record.run, run, may_differ)
    if differences and not overwrite:
        raise FolderError(f"{folder} holds another {command} run; its settings differ in "
                          f"{len(differences)} field(s): {'; '.join(differences[:_LISTED])}"
                          f"{'; ...' if len(differences) > _LISTED else ''}. Use another "
                          f"folder (or delete this one to start again)")


def _check_unrecorded(folder: str, command: str, run: Mapping[str, Any], own: FolderRecord,
                      may_differ: Iterable[str], overwrite: bool,
                      legacy_run: Callable[[], Mapping[str, Any] | None] | None) -> None:
    """A folder without a record: empty, or holding only the command's own names of a run
    `legacy_run` reads and finds the same."""
    present = entries(folder)
    if not present:
        return
    foreign = [name for name in present if not own.owns(name)]
    if foreign:
        raise FolderError(f"{folder} holds files {command} did not write: {_listed(foreign)}; "
                          f"give it a new or empty folder (nothing was changed)")
    stored = legacy_run() if legacy_run is not None else None
    if stored is None or overwrite:
        raise FolderError(f"{folder} holds {_listed(present)}, which no {command} recorded as "
                          f"its own ({RECORD_FILE} is missing); delete them yourself or give "
                          f"a new folder (nothing was changed)")
    _check_record(folder, FolderRecord(command, dict(stored), own.files), command, run,
                  may_differ, overwrite=False)


def delete_recorded_files(folder: str, record: FolderRecord) -> list[str]:
    """Deletes the folder's entries `record` names (files, or folders with what is in them);
    returns their names. Nothing else in the folder is touched."""
    deleted = [name for name in entries(folder) if record.owns(name)]
    for name in deleted:
        path = os.path.join(folder, name)
        if files.isdir(path) and not os.path.islink(path):
            files.rmtree(path)
        else:
            files.remove(path)
    return deleted


@contextlib.contextmanager
def owned_folder(folder: str, command: str, run: Mapping[str, Any], own_files: Iterable[str],
                 may_differ: Iterable[str] = (), overwrite: bool = False,
                 legacy_run: Callable[[], Mapping[str, Any] | None] | None = None
                 ) -> Iterator[FolderRecord]:
    """Creates, locks and checks `folder` for `command` (see the module docstring); yields
    the record written for this run; releases the lock at the end.

    Args:
        folder: the output folder (local, or remote without a lock).
        command: the command's name, as errors show it.
        run: the settings of the run (JSON data); `may_differ`: dotted fields of it that
            may change between two commands on the folder (the record takes the new values).
        own_files: the names (globs) the command writes in the folder.
        overwrite: delete the recorded files of the run there first, whatever its settings.
        legacy_run: reads the run of a folder made before records were kept (None: no such
            folder is taken over).
    """
    created = not files.exists(folder)
    files.makedirs(folder)
    try:
        with FolderLock(folder, command):
            record = FolderRecord(command, json.loads(json.dumps(run)), sorted(set(own_files)))
            stored = read_record(folder)
            if stored is None:
                _check_unrecorded(folder, command, run, record, may_differ, overwrite,
                                  legacy_run)
            else:
                _check_record(folder, stored, command, run, may_differ, overwrite)
                if overwrite:
                    deleted = delete_recorded_files(folder, stored)
                    if deleted:
                        print(f"{command}: --overwrite deleted {len(deleted)} file(s) of the "
                              f"earlier run in {folder}: {_listed(deleted)}")
            found = entries(folder)
            write_record(folder, record)
            try:
                yield record
            except BaseException:
                if stored is None and entries(folder) == found:  # it failed before writing
                    files.remove(os.path.join(folder, RECORD_FILE))
                raise
    except BaseException:
        if created and files.isdir(folder) and not files.listdir(folder):
            files.rmtree(folder)  # made for a command that wrote nothing: gone again
        raise
