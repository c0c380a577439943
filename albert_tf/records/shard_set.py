"""A folder of shards checked against the manifest its writer left there, before reading.

`albert-data build` records in `manifest.json` the name, example count, byte size and
SHA-256 of every shard it wrote. A reader that only globs the folder trains on whatever is
left: a deleted shard, or one cut at a record boundary, is read to the end without a word.
`check_shard_set` holds the files a reader's patterns matched in one folder against that list:

- every shard the manifest names that one of the patterns would match is there;
- each has its recorded byte size and, on a local disk, its recorded number of records
  (counted from the record headers alone: about 5 microseconds a record);
- with `verify`, its SHA-256 too, in one pass over its bytes (which also counts the records
  of a remote shard, whose headers are not read one by one over the network);
- a matched file the manifest does not name is refused;
- patterns that select some of the shards on purpose (the others would not match them) are
  fine: the check then says how many of the manifest's shards they read.

Example:
    note = check_shard_set(folder, manifest, matched, ["shards/train-*.tfrecord"],
                           "data.train_files")
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from typing import Any, Mapping, Sequence

from albert_tf.io import files
from albert_tf.io.names import plain_name
from albert_tf.records.features import MANIFEST
from albert_tf.records.tfrecord import count_records, digest_records
from albert_tf.text.options import DataPrepError

REBUILD = "build the shards again (albert-data build into the same folder rebuilds them)"


@dataclasses.dataclass(frozen=True)
class RecordedShard:
    """What a manifest (or a build's sidecar) records of one shard; `bytes` is None in
    manifests written before sizes were recorded."""

    file: str
    examples: int
    checksum: str | None
    bytes: int | None


def recorded_shards(manifest: Mapping[str, Any], where: str) -> list[RecordedShard]:
    """The manifest's `shards` list, each entry checked: a plain file name (a name with a
    path in it would select a file outside the folder), a count, optional size and
    checksum. `where` names the manifest in errors."""
    entries = manifest.get("shards")
    if not isinstance(entries, list):
        raise DataPrepError(f"{where}: no 'shards' list (is it a manifest albert-data build "
                            "wrote?)")
    shards = []
    for index, entry in enumerate(entries):
        field = f"{where}: shards[{index}]"
        if not isinstance(entry, Mapping):
            raise DataPrepError(f"{field}: expected an object with file and examples")
        name = plain_name(entry.get("file"), f"{field}.file", DataPrepError)
        examples, size = entry.get("examples"), entry.get("bytes")
        if not _count(examples) or not (size is None or _count(size)):
            raise DataPrepError(f"{field}: examples and bytes must be counts, got "
                                f"{examples!r} and {size!r}")
        shards.append(RecordedShard(name, examples, entry.get("checksum"), size))
    return shards


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_shard(path: str, shard: RecordedShard, where: str, verify: bool = False,
                remedy: str = REBUILD) -> None:
    """`path` against what `where` (a manifest or sidecar) records of it: its size, its
    record count (local files, or any with `verify`) and with `verify` its checksum.
    Raises DataPrepError naming the file, the recorded and the found value, and `remedy`."""
    found = files.size(path)
    if shard.bytes is not None and found != shard.bytes:
        raise DataPrepError(f"{path}: {found:,} bytes, but {where} records {shard.bytes:,} "
                            f"(the shard was cut short or changed after the build); {remedy}")
    checksum = None
    if verify:
        count, checksum = digest_records(path)
    elif not files.is_remote(path):
        count = count_records(path)
    else:
        return
    if count != shard.examples:
        raise DataPrepError(f"{path}: {count:,} records, but {where} records "
                            f"{shard.examples:,}; {remedy}")
    if checksum is not None and checksum != shard.checksum:
        raise DataPrepError(f"{path}: its checksum is {checksum}, but {where} records "
                            f"{shard.checksum} (the shard changed after the build); {remedy}")


def check_shard_set(folder: str, manifest: Mapping[str, Any], matched: Sequence[str],
                    patterns: Sequence[str], field: str, verify: bool = False) -> str | None:
    """Checks the files `patterns` matched in `folder` (`matched`, as the glob gave them)
    against `folder`'s manifest (see the module docstring).

    Returns a note when the patterns read some of the manifest's shards on purpose, else
    None. Raises DataPrepError naming the manifest, the file and what differs.
    """
    where = os.path.join(folder, MANIFEST)
    shards = recorded_shards(manifest, where)
    by_name = {shard.file: shard for shard in shards}
    for path in matched:
        if os.path.basename(path) not in by_name:
            raise DataPrepError(f"{path} (matched by {field}) is not one of the {len(shards)} "
                                f"shards {where} names; a file another build or tool left "
                                "beside them, or a pattern that is too wide")
    listed_folder = os.path.dirname(matched[0])  # the folder as the patterns spell it
    read = {os.path.basename(path) for path in matched}
    for shard in shards:
        if shard.file in read:
            continue
        candidate = os.path.join(listed_folder, shard.file)
        wanted = [pattern for pattern in patterns if fnmatch.fnmatchcase(candidate, pattern)]
        if wanted:
            raise DataPrepError(f"{candidate}: missing; {where} names it among its "
                                f"{len(shards)} shards and {field} ({wanted[0]!r}) would read "
                                f"it: the folder lost a shard; {REBUILD}")
    for path in matched:
        check_shard(path, by_name[os.path.basename(path)], where, verify)
    if len(read) < len(shards):
        return (f"{field} reads {len(read)} of the {len(shards)} shards {where} names (its "
                "patterns select them)")
    return None
