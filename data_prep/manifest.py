"""The output folder of a build: shard names, per-shard sidecars, the build plan and manifest.

Layout of `--output_dir`:
- `.albert-folder.json`, `.albert-lock`: the build owns the folder (`owned_output`): the
  record of its settings and of the names it writes (the only files `--overwrite` deletes),
  and the lock held while it runs, so two builds never write one folder.
- `build.json`: written first; what is being built (inputs, options, shard count, tokenizer
  checksum) and its fingerprint. A later run into the same folder must have the same
  fingerprint, or it stops instead of mixing shards of two builds.
- `<prefix>-00003-of-00016.tfrecord`: a shard; `<shard>.json` beside it, written after it,
  marks it complete and holds its count, size, checksum and statistics. A shard without a
  sidecar, or whose bytes no longer match it (checked on every rerun), is rebuilt (same
  bytes, since shards are pure functions of the plan).
- `manifest.json`: written last, when every shard is complete: all of the above plus the
  merged statistics. Readers check the shards against it (`albert_tf.records.shard_set`).
Every file is written atomically (`albert_tf.io.files`), on a local disk or a remote filesystem.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import hashlib
import json
import os
import sys
from typing import Iterator

from albert_tf.io import files
from albert_tf.io.owned_folder import owned_folder
from albert_tf.records.features import MANIFEST
from albert_tf.records.shard_set import RecordedShard, check_shard
from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.statistics import ShardStatistics
from data_prep.corpus import Part, Source

COMMAND = "albert-data build"
BUILD_PLAN = "build.json"
FORMAT = "albert-tf pretraining shards, version 1"


@dataclasses.dataclass
class BuildPlan:
    """What a build makes: every input of the output bytes, nothing about how it runs."""

    output_dir: str
    sources: list[Source]
    parts: list[Part]
    options: DataPrepOptions
    tokenizer_path: str
    tokenizer_checksum: str
    vocab_size: int
    prefix: str = "train"

    @property
    def num_shards(self) -> int:
        return len(self.parts)

    def shard_name(self, index: int) -> str:
        return f"{self.prefix}-{index:05d}-of-{self.num_shards:05d}.tfrecord"

    def shard_path(self, index: int) -> str:
        return os.path.join(self.output_dir, self.shard_name(index))

    def description(self) -> dict:
        """The plan as JSON data; the fingerprint hashes all of it but the tokenizer path."""
        return {
            "format": FORMAT,
            "inputs": [dataclasses.asdict(source) | {"kind": type(source).__name__}
                       for source in self.sources],
            "options": self.options.to_dict(),
            "num_shards": self.num_shards,
            "prefix": self.prefix,
            "tokenizer": {"path": self.tokenizer_path, "checksum": self.tokenizer_checksum,
                          "vocab_size": self.vocab_size},
        }

    def settings(self) -> dict:
        """What the output bytes depend on: the description without the paths of the
        tokenizer and of TFDS data (the same data elsewhere builds the same shards)."""
        return _settings(self.description())

    def fingerprint(self) -> str:
        text = json.dumps(self.settings(), sort_keys=True)
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    def own_files(self) -> list[str]:
        """The names the build writes in its folder (globs)."""
        shards = f"{glob.escape(self.prefix)}-[0-9][0-9][0-9][0-9][0-9]-of-{self.num_shards:05d}"
        return [BUILD_PLAN, MANIFEST, f"{shards}.tfrecord", f"{shards}.tfrecord.json"]


def _settings(description: dict) -> dict:
    settings = {key: value for key, value in description.items() if key != "fingerprint"}
    settings["tokenizer"] = dict(settings["tokenizer"], path=None)
    settings["inputs"] = [{key: value for key, value in source.items() if key != "data_dir"}
                          for source in settings["inputs"]]
    return settings


@contextlib.contextmanager
def owned_output(plan: BuildPlan, overwrite: bool = False) -> Iterator[None]:
    """Holds `plan.output_dir` for the build while it runs (`albert_tf.io.owned_folder`: its
    lock, and a record refusing another build's folder, or a folder with other files);
    with `overwrite`, the files of the build recorded there are deleted first."""
    def recorded_build() -> dict | None:  # a folder built before records were kept
        existing = _existing_plan(plan.output_dir)
        return _settings(existing) if existing else None

    with owned_folder(plan.output_dir, COMMAND, plan.settings(), plan.own_files(),
                      overwrite=overwrite, legacy_run=recorded_build):
        yield


def _write_json(path: str, data: dict) -> dict:
    """Writes `data` atomically; returns it as read back (JSON object keys are strings)."""
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    files.atomic_write_bytes(path, text.encode())
    return json.loads(text)


def start_build(plan: BuildPlan) -> None:
    """Creates the output folder and its build.json, or checks an existing one matches."""
    files.makedirs(plan.output_dir)
    existing = _existing_plan(plan.output_dir)
    if existing is not None:
        if existing.get("fingerprint") != plan.fingerprint():
            raise DataPrepError(
                f"{plan.output_dir} holds shards of another build (different inputs, options, "
                f"shard count or tokenizer; see {os.path.join(plan.output_dir, BUILD_PLAN)}); "
                f"use a new --output_dir or --overwrite")
        return
    _write_json(os.path.join(plan.output_dir, BUILD_PLAN),
                plan.description() | {"fingerprint": plan.fingerprint()})


def _existing_plan(output_dir: str) -> dict | None:
    path = os.path.join(output_dir, BUILD_PLAN)
    return json.loads(files.read_bytes(path)) if files.exists(path) else None


def planned_shard_count(output_dir: str) -> int | None:
    """The shard count of the build planned in `output_dir` (its build.json), if any."""
    return (_existing_plan(output_dir) or {}).get("num_shards")


def sidecar_path(shard_path: str) -> str:
    return shard_path + ".json"


def write_sidecar(plan: BuildPlan, index: int, examples: int, checksum: str,
                  stats: ShardStatistics) -> None:
    _write_json(sidecar_path(plan.shard_path(index)), {
        "fingerprint": plan.fingerprint(), "file": plan.shard_name(index),
        "examples": examples, "checksum": checksum,
        "bytes": files.size(plan.shard_path(index)), "statistics": stats.to_dict()})


def complete_sidecars(plan: BuildPlan) -> dict[int, dict]:
    """Sidecars of this plan's complete shards, by shard index (one listing of the folder)."""
    present = set(files.glob(os.path.join(plan.output_dir, f"{plan.prefix}-*")))
    fingerprint = plan.fingerprint()
    complete = {}
    for index in range(plan.num_shards):
        shard = plan.shard_path(index)
        if shard in present and sidecar_path(shard) in present:
            sidecar = json.loads(files.read_bytes(sidecar_path(shard)))
            if sidecar.get("fingerprint") == fingerprint:
                complete[index] = sidecar
    return complete


def incomplete_shards(plan: BuildPlan) -> list[int]:
    """Indices of the shards a (re)run must build: those without a sidecar, and those whose
    bytes no longer match it (size, record count and SHA-256 are checked before a shard of
    an earlier run is trusted; such a shard is built again, with a warning)."""
    complete = complete_sidecars(plan)
    for index, sidecar in list(complete.items()):
        path = sidecar_path(plan.shard_path(index))
        try:
            recorded = RecordedShard(sidecar["file"], sidecar["examples"],
                                     sidecar.get("checksum"), sidecar.get("bytes"))
            check_shard(plan.shard_path(index), recorded, path, verify=True,
                        remedy="building it again")
        except (DataPrepError, KeyError, TypeError) as error:
            print(f"{COMMAND}: warning: {error}", file=sys.stderr)
            files.remove(path)
            del complete[index]
    return [index for index in range(plan.num_shards) if index not in complete]


def finish_build(plan: BuildPlan) -> dict:
    """Checks every shard is complete and not all are empty, then writes the manifest."""
    sidecars = complete_sidecars(plan)
    missing = [plan.shard_name(i) for i in range(plan.num_shards) if i not in sidecars]
    if missing:
        raise DataPrepError(f"{plan.output_dir}: {len(missing)} shard(s) not complete "
                            f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}); "
                            "run the build again to resume")
    ordered = [sidecars[index] for index in range(plan.num_shards)]
    if sum(sidecar["examples"] for sidecar in ordered) == 0:
        raise DataPrepError("no examples were made: the inputs hold no documents with text "
                            "(is the input empty, or every line skipped? see the shard "
                            f"sidecars in {plan.output_dir})")
    return write_manifest(plan, ordered)


def write_manifest(plan: BuildPlan, sidecars: list[dict]) -> dict:
    """Writes manifest.json from the complete shards' sidecars; returns its content."""
    totals = ShardStatistics()
    for sidecar in sidecars:
        totals.merge(ShardStatistics.from_dict(sidecar["statistics"]))
    manifest = plan.description() | {
        "fingerprint": plan.fingerprint(),
        "shards": [{"file": s["file"], "examples": s["examples"], "checksum": s["checksum"],
                    "bytes": s.get("bytes") or files.size(os.path.join(plan.output_dir,
                                                                       s["file"]))}
                   for s in sidecars],
        "total_examples": sum(s["examples"] for s in sidecars),
        "statistics": totals.to_dict(),
    }
    return _write_json(os.path.join(plan.output_dir, MANIFEST), manifest)


def read_manifest(output_dir: str) -> dict:
    path = os.path.join(output_dir, MANIFEST)
    if not files.exists(path):
        raise DataPrepError(f"{path}: no manifest; the build has not finished (run it again "
                            "to resume)")
    return json.loads(files.read_bytes(path))
