"""The quickstart's record: the figures `scripts/quickstart.sh` prints, in one small JSON file
(no weights) that the repository commits, so the README's figures trace to a file and a new
run can be compared with them (`git diff experiments/results/quickstart/record.json`).

    python scripts/quickstart_record.py --eval quickstart/run/table6.json \\
        --check quickstart/run/downstream_check.json \\
        --output experiments/results/quickstart/record.json -- [albert-pretrain arguments]

`--eval` is the file `albert-eval --output` writes (held-out accuracies and the spread of
the encoder's outputs), `--check` the downstream check's (the run and a random start
fine-tuned on one task, seed by seed). Values are rounded to one digit more than the
quickstart prints, so two machines that print the same figures write the same file; the
record holds no times or host names for the same reason.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Mapping

# albert_tf.io is the library's floor 0: plain Python, no TensorFlow at import.
from albert_tf.io.files import atomic_write_bytes

DIGITS = 4  # of a fraction: 0.1048 is printed as 10.48% (MLM) or 10.5 (a fine-tune)


class RecordError(ValueError):
    """A file the record is made from is missing or lacks a field."""


def _read(path: str, what: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file (expected {what})") from None
    except json.JSONDecodeError as error:
        raise RecordError(f"{path}: line {error.lineno}: not JSON ({error.msg})") from None
    if not isinstance(found, dict):
        raise RecordError(f"{path}: expected a JSON object ({what})")
    return found


def _field(document: Mapping[str, Any], path: str, *keys: str) -> Any:
    value: Any = document
    for depth, key in enumerate(keys):
        if not isinstance(value, Mapping) or key not in value:
            raise RecordError(f"{path}: no field {'.'.join(keys[:depth + 1])!r}")
        value = value[key]
    return value


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)


def heldout_figures(evaluation: Mapping[str, Any], path: str) -> dict[str, Any]:
    """Held-out MLM, SOP and NSP accuracy and the output spreads, from `albert-eval`'s file."""
    spreads = _field(evaluation, path, "representation_spread")
    return {**{f"{task}_accuracy": _rounded(_field(evaluation, path, "accuracy", task))
               for task in ("mlm", "sop", "nsp")},
            **{name: _rounded(value) for name, value in sorted(spreads.items())}}


def check_figures(check: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The downstream check: each start's score per seed on the scored split, their means,
    the gain paired by seed with its 95% interval, the majority class and stuck seeds."""
    split = _field(check, path, "split")
    key, constant = ("test", "constant_test") if split == "test" else ("value", "constant")
    scores = {start: {seed: _rounded(_field(check, path, "seeds", start, seed, key))
                      for seed in sorted(_field(check, path, "seeds", start), key=int)}
              for start in ("pretrained", "random")}
    first_seed = next(iter(scores["pretrained"]))
    majority = _field(check, path, "seeds", "pretrained", first_seed, constant)
    return {"task": os.path.basename(os.path.normpath(_field(check, path, "task_dir"))),
            "metric": _field(check, path, "metric"), "split": split,
            "train_steps": _field(check, path, "train_steps"),
            "recipe": _field(check, path, "recipe"),
            "majority_class": _rounded(majority),
            "pretrained": _rounded(_field(check, path, "means", "pretrained")),
            "random": _rounded(_field(check, path, "means", "random")),
            "gain": _rounded(_field(check, path, "gain")),
            "low": _rounded(_field(check, path, "low")),
            "high": _rounded(_field(check, path, "high")),
            "verdict": _field(check, path, "verdict"),
            "stuck_pretrained": list(_field(check, path, "stuck_pretrained")),
            "stuck_random": list(_field(check, path, "stuck_random")),
            "scores_by_seed": scores}


def quickstart_record(eval_path: str, check_path: str | None,
                      pretrain_arguments: list[str]) -> dict[str, Any]:
    evaluation = _read(eval_path, "the held-out scores `albert-eval --output` writes")
    record = {"made_by": " ".join(["bash scripts/quickstart.sh", *pretrain_arguments]),
              "checkpoint": os.path.basename(_field(evaluation, eval_path, "checkpoint")),
              "heldout": heldout_figures(evaluation, eval_path)}
    if check_path is not None:
        check = _read(check_path, "the downstream check's result")
        record["downstream_check"] = check_figures(check, check_path)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", required=True, help="albert-eval's --output file")
    parser.add_argument("--check", help="the downstream check's JSON (none: no check ran)")
    parser.add_argument("--output", required=True, help="the record to write")
    parser.add_argument("pretrain_arguments", nargs="*",
                        help="after --: the arguments the quickstart passed to albert-pretrain")
    args = parser.parse_args(argv)
    try:
        record = quickstart_record(args.eval, args.check, args.pretrain_arguments)
    except RecordError as error:
        print(f"quickstart_record.py: {error}", file=sys.stderr)
        return 2
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    atomic_write_bytes(args.output, (json.dumps(record, indent=1) + "\n").encode())
    print(f"the quickstart's figures: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
