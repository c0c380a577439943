"""`albert-data task`: reading a task's data, splitting it and writing the task folder with its
`source.json` (written last), and the lines the command prints."""

from __future__ import annotations

import json
import os
from typing import Optional, Union

from albert_lab.task_folders.glue_files import TEST_LABELS_FILE, glue_files, groups_file
from albert_lab.task_folders.packages import locate_package_data
from albert_lab.task_folders.registry import get_task_source
from albert_lab.task_folders.splitting import SPLITS, prepare_examples, split_examples
from albert_lab.task_folders.statistics import split_statistics
from albert_lab.task_folders.task_source import TaskSource
from albert_tf.io.files import atomic_write_bytes
from albert_tf.text.options import DataPrepError

DEFAULT_SEED = 12345


def _split_rule(source: TaskSource) -> str:
    """The split rule in words, for `source.json`."""
    shares = "/".join(f"{round(share * 100)}" for share in source.fractions)
    if source.layout == "stsb":
        return (f"by {source.unit}: {source.unit}s shuffled with the seed and cut at "
                f"{shares}% of the {source.unit}s; a pair goes to the later split of its "
                f"two {source.unit}s (train, dev, test), so training sees no dev or test "
                f"{source.unit} and dev no test {source.unit}")
    return (f"by {source.unit}: {source.unit}s shuffled with the seed (per label when each "
            f"has one) and cut at {shares}% of the examples; {source.unit}s sharing a text "
            f"merged, repeated examples dropped")


def write_task(source: Union[str, TaskSource], output_dir: str, seed: int = DEFAULT_SEED,
               data_path: Optional[str] = None) -> dict:
    """Reads `source`'s data, splits it by source item and writes the task folder.

    Args:
        source: a name of `TASK_SOURCES` or a `TaskSource`.
        output_dir: the task folder to write (created; files of the same names replaced).
        seed: the split's seed; the same data and seed give the same bytes.
        data_path: read this file or folder instead of the installed package's (tests, or a
            copy of the package's data); the package is then not looked up.

    Returns:
        What `source.json` records.

    Raises:
        DataPrepError: the package is not installed (the message names the install command),
            its data is not in the expected format, or a split comes out empty.
    """
    source = get_task_source(source)
    if data_path is None:
        data_path, package = locate_package_data(source)
    else:
        package = {"name": source.package, "installer": source.installer,
                   "install": source.install_command, "version": None,
                   "metadata_licence": None, "note": "read from a given path"}
    if not os.path.exists(data_path):
        raise DataPrepError(f"{data_path}: not found")
    examples, reading = prepare_examples(source.read(data_path))
    for example in examples:
        if not source.is_regression and example.label not in source.labels:
            raise DataPrepError(f"task {source.name!r}: label {example.label!r} is not one of "
                                f"{', '.join(source.labels)}")
    splits, assignment, split_facts = split_examples(examples, source.fractions, seed,
                                                     stratify=not source.is_regression)
    empty = [split for split in SPLITS if not splits[split]]
    if empty:
        raise DataPrepError(f"task {source.name!r}: split {', '.join(empty)} is empty "
                            f"({len(examples)} examples from {len(assignment)} "
                            f"{source.unit}s in {data_path}); too little data")
    files = glue_files(source, splits)
    files["groups.tsv"] = groups_file(assignment, splits)
    for name, data in files.items():
        atomic_write_bytes(os.path.join(output_dir, name), data)
    record = {
        "task": source.name,
        "kind": source.kind,
        "albert_finetune": {
            "task": source.finetune_task,
            "command": f"albert-finetune --task {source.finetune_task} --data_dir "
                       f"{output_dir} --init_checkpoint RUN --model_dir RUNS/{source.name}"},
        "layout": source.layout,
        "labels": list(source.labels) if source.labels else "score in [0, 5]",
        "label_names": source.label_names,
        "files": {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv",
                  "test_labels": TEST_LABELS_FILE, "groups": "groups.tsv"},
        "package": {**package, "data_path": data_path},
        "licence": source.licence,
        "origin": source.origin,
        "notes": source.notes,
        "split": {"unit": source.unit, "rule": _split_rule(source), "seed": seed,
                  "fractions": dict(zip(SPLITS, source.fractions)), **split_facts},
        "reading": {**reading, "examples": len(examples), "groups": len(assignment)},
        **split_statistics(source, splits, assignment),
    }
    atomic_write_bytes(os.path.join(output_dir, "source.json"),
                       (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return record


def summary_lines(record: dict) -> list[str]:
    """One line per split for the command line."""
    unit = record["split"]["unit"]
    names = record["label_names"]
    lines = []
    for split in SPLITS:
        entry = record["splits"][split]
        line = f"{split}: {entry['examples']:,} examples from {entry['groups']:,} {unit}s"
        if "class_counts" in entry:
            counts = ", ".join(f"{names.get(label, label)} {count:,}"
                               for label, count in entry["class_counts"].items())
            majority = names.get(record["baseline"]["label"], record["baseline"]["label"])
            line += f"; {counts}; majority ({majority}) {entry['majority_baseline']:.1%}"
        else:
            line += (f"; mean score {entry['mean_score']:.2f}; MSE of the training mean "
                     f"{entry['train_mean_mse']:.3f}")
        lines.append(line)
    return lines
