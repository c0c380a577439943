"""How close each test's bound on a random quantity comes to failing, over many seeds.

A test whose assertion bounds a quantity that depends on its random draws takes the `seed`
fixture and states the bound with `tests/support/thresholds.py` (`above` / `below`), which
records the measured value. This script runs such tests once per seed (`pytest --seeds`),
reads what they recorded and prints, per test and quantity, the bound, the lowest, median
and highest value, the margin (how close the worst seed came to the bound) and the seeds
that failed;
the table and the values are merged into a JSON file and its Markdown page (by test, so
tests can be measured in several runs).

    python scripts/check_thresholds.py tests/albert_tf/training/test_collapse.py
    python scripts/check_thresholds.py tests/data_prep --seeds 0:50 -n 2

A one-off check, not a test: run it when a bound or what it bounds changes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

from albert_lab.result_files import write_result

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUTPUT = os.path.join(REPOSITORY, "benchmarks", "results", "thresholds.json")
PAGE = """# Bounds on random quantities in the tests, over many seeds

Written by `python scripts/check_thresholds.py TESTS --seeds 0:50`: for each test whose
assertion bounds a random quantity, the bound, the lowest, median and highest value measured
over the seeds, the margin (how far the worst seed stayed from the bound) and the seeds that
failed. The values are in thresholds.json beside this page.

{table}
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tests", nargs="+", help="test files, folders or node ids")
    parser.add_argument("--seeds", default="0:50", help="FIRST:STOP (default 0:50)")
    parser.add_argument("-n", "--workers", default="0", help="pytest-xdist workers")
    parser.add_argument("--output", default=DEFAULT_OUTPUT)
    return parser


def run_tests(tests: list[str], seeds: str, workers: str) -> str:
    """Runs `tests` once per seed; returns the JUnit XML pytest wrote."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.xml")
        command = [sys.executable, "-m", "pytest", *tests, "--seeds", seeds, "-q",
                   "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
                   f"--junitxml={report}", "--no-header", "-rN"]
        if workers != "0":
            command += ["-n", workers]
        subprocess.run(command, cwd=REPOSITORY, check=False)
        with open(report, encoding="utf-8") as f:
            return f.read()


def measurements(junit_xml: str) -> dict[str, dict]:
    """{test: {quantity: {"side", "bound", "values", "failed"}}} from a JUnit report."""
    found: dict[str, dict] = {}
    for case in ElementTree.fromstring(junit_xml).iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name').split('[')[0]}"
        for prop in case.iter("property"):
            record = json.loads(prop.get("value"))
            entry = found.setdefault(test, {}).setdefault(prop.get("name"), {
                "side": record["side"], "bound": record["bound"], "values": [], "failed": 0})
            entry["values"].append(record["value"])
            entry["failed"] += not _holds(record["value"], record["side"], record["bound"])
    return found


def _holds(value: float, side: str, bound: float) -> bool:
    return {"above": value > bound, "at least": value >= bound, "below": value < bound,
            "at most": value <= bound}[side]


def summary(entry: dict) -> dict:
    values = sorted(entry["values"])
    worst = values[0] if entry["side"] in ("above", "at least") else values[-1]
    return {"seeds": len(values), "side": entry["side"], "bound": entry["bound"],
            "lowest": values[0], "median": statistics.median(values), "highest": values[-1],
            "margin": abs(worst - entry["bound"]), "failed": entry["failed"]}


def table(results: dict[str, dict]) -> str:
    lines = ["| test | quantity | bound | seeds | lowest | median | highest | margin | failed |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for test in sorted(results):
        for name, row in sorted(results[test].items()):
            sign = {"above": ">", "at least": ">=", "below": "<", "at most": "<="}[row["side"]]
            bound = f"{sign} {row['bound']:g}"
            quantity = name.replace("|", "\\|")  # a Markdown cell holds no bare bar
            lines.append(f"| `{test}` | {quantity} | {bound} | {row['seeds']} "
                         f"| {row['lowest']:.4g} | {row['median']:.4g} | {row['highest']:.4g} "
                         f"| {row['margin']:.3g} | {row['failed']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    measured = measurements(run_tests(args.tests, args.seeds, args.workers))
    results = {test: {name: summary(entry) for name, entry in quantities.items()}
               for test, quantities in measured.items()}
    merged = {}
    if os.path.exists(args.output):
        with open(args.output, encoding="utf-8") as f:
            merged = json.load(f)
    merged = dict(sorted({**merged, **results}.items()))
    write_result(args.output, merged, page=PAGE.format(table=table(merged)))
    print(table(results))
    print(f"\nmerged into {args.output} ({len(merged)} tests)")
    return 0 if all(row["failed"] == 0 for rows in results.values()
                    for row in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
