"""How close each test's bound on a random quantity comes to failing, over many seeds.

A test whose assertion bounds a quantity that depends on its random draws takes the `seed`
fixture and states the bound with `tests/support/thresholds.py` (`above` / `below`), which
records the measured value. This script runs such tests once per seed (`pytest --seeds`),
reads what they recorded and prints, per test and quantity, the bound, the lowest, median
and highest value, the margin (how close the worst seed came to the bound) and the seeds
that failed;
the table and the values, seed by seed, are merged into a JSON file and its Markdown page,
so a long test can be measured in chunks (`--seeds 0:10`, then `--seeds 10:20`, ...) that add
up to one record, as long as the test's source and its bound stay the same (a changed test
starts its record again).

    python scripts/check_thresholds.py tests/albert_tf/training/test_collapse.py
    python scripts/check_thresholds.py tests/data_prep --seeds 0:50 -n 2

A one-off check, not a test: run it when a bound or what it bounds changes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
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


def measurements(junit_xml: str) -> tuple[dict[str, dict], dict[str, list[int]]]:
    """From a JUnit report: {test: {quantity: {"side", "bound", "values": {seed: value}}}},
    and {test: the seeds whose run failed or errored}."""
    found: dict[str, dict] = {}
    failed_runs: dict[str, list[int]] = {}
    for case in ElementTree.fromstring(junit_xml).iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name').split('[')[0]}"
        properties = {prop.get("name"): prop.get("value") for prop in case.iter("property")}
        seed = int(properties.pop("seed"))
        if case.find("failure") is not None or case.find("error") is not None:
            failed_runs.setdefault(test, []).append(seed)
        for name, value in properties.items():
            record = json.loads(value)
            entry = found.setdefault(test, {}).setdefault(name, {
                "side": record["side"], "bound": record["bound"], "values": {}})
            entry["values"][str(seed)] = record["value"]
    return found, failed_runs


def test_source_digest(test: str) -> str:
    """A digest of test function `test`'s source ("tests.a.test_b::test_c"), so values
    measured before the test changed are not merged with values measured after."""
    module, name = test.split("::")
    path = os.path.join(REPOSITORY, *module.split(".")) + ".py"
    with open(path, encoding="utf-8") as f:
        source = f.read()
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            segment = ast.get_source_segment(source, node)
            return hashlib.sha256(segment.encode("utf-8")).hexdigest()[:16]
    raise ValueError(f"{path}: no function {name} (test {test})")


def merge(stored: dict | None, measured: dict | None, source: str) -> dict:
    """`measured`'s values added to `stored`'s, seed by seed, when both measured the same
    bound of the same test source (so a run of seeds 0:25 and one of 25:50 make one record
    of 50 seeds); otherwise `measured` alone (or `stored` alone, when this run recorded
    nothing for the quantity)."""
    if measured is None:
        return stored
    same = (stored is not None and isinstance(stored.get("values"), dict)
            and stored.get("source") == source
            and (stored["side"], stored["bound"]) == (measured["side"], measured["bound"]))
    values = {**(stored["values"] if same else {}), **measured["values"]}
    return {"side": measured["side"], "bound": measured["bound"], "source": source,
            "values": dict(sorted(values.items(), key=lambda item: int(item[0])))}


def _holds(value: float, side: str, bound: float) -> bool:
    return {"above": value > bound, "at least": value >= bound, "below": value < bound,
            "at most": value <= bound}[side]


def summary(entry: dict) -> dict:
    """The bound, the values' lowest, median and highest, the margin (how far the worst
    seed stayed from the bound) and the seeds that failed it, with the values themselves."""
    values = sorted(entry["values"].values())
    worst = values[0] if entry["side"] in ("above", "at least") else values[-1]
    failed = [int(seed) for seed, value in entry["values"].items()
              if not _holds(value, entry["side"], entry["bound"])]
    return {"seeds": len(values), "side": entry["side"], "bound": entry["bound"],
            "lowest": values[0], "median": statistics.median(values), "highest": values[-1],
            "margin": abs(worst - entry["bound"]), "failed": len(failed),
            "failed_seeds": failed, "source": entry["source"], "values": entry["values"]}


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
                         f"| {row['margin']:.3g} | {_failures(row)} |")
    return "\n".join(lines)


def _failures(row: dict) -> str:
    seeds = row.get("failed_seeds")
    return f"{row['failed']} (seeds {', '.join(map(str, seeds))})" if seeds else str(
        row["failed"])


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    measured, failed_runs = measurements(run_tests(args.tests, args.seeds, args.workers))
    merged = {}
    if os.path.exists(args.output):
        with open(args.output, encoding="utf-8") as f:
            merged = json.load(f)
    for test, quantities in measured.items():
        source = test_source_digest(test)
        stored = merged.get(test, {})
        names = set(quantities) | {name for name, row in stored.items()
                                   if row.get("source") == source}
        merged[test] = {name: summary(merge(stored.get(name), quantities.get(name), source))
                        for name in sorted(names)}
    merged = dict(sorted(merged.items()))
    write_result(args.output, merged, page=PAGE.format(table=table(merged)))
    print(table({test: merged[test] for test in measured}))
    for test, seeds in sorted(failed_runs.items()):
        print(f"{test} failed on seeds {seeds} (a bound, or an assertion of its own)")
    print(f"\nmerged into {args.output} ({len(merged)} tests)")
    return 0 if not failed_runs else 1


if __name__ == "__main__":
    sys.exit(main())
