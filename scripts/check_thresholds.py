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

A test whose bounds alone changed (a bound's number, its docstring or comments) keeps its
values: `--rejudge` runs nothing and judges the stored values against the bounds its source
states now, after checking in git's history that the version they were measured on differs
from today's in nothing else.

    python scripts/check_thresholds.py --rejudge tests/x/test_y.py::test_z

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
    parser.add_argument("--rejudge", action="store_true",
                        help="run nothing: judge the stored values of the TESTS (node ids) "
                             "against the bounds their source states now, when they changed "
                             "in nothing but their bounds' numbers, docstring and comments")
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


def test_path(test: str) -> str:
    """The file of test `test` ("tests.a.test_b::test_c"), relative to the repository."""
    return os.path.join(*test.split("::")[0].split(".")) + ".py"


def test_function(source: str, test: str, where: str) -> tuple[ast.FunctionDef, str]:
    """Test `test`'s function in module `source` (read from `where`) and its source text."""
    name = test.split("::")[1]
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node, ast.get_source_segment(source, node)
    raise ValueError(f"{where}: no function {name} (test {test})")


def digest(function_source: str) -> str:
    return hashlib.sha256(function_source.encode("utf-8")).hexdigest()[:16]


def test_source_digest(test: str) -> str:
    """A digest of test function `test`'s source ("tests.a.test_b::test_c"), so values
    measured before the test changed are not merged with values measured after."""
    path = os.path.join(REPOSITORY, test_path(test))
    with open(path, encoding="utf-8") as f:
        return digest(test_function(f.read(), test, path)[1])


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


def blanked_numbers(function: ast.FunctionDef) -> tuple[str, list[float]]:
    """`function`'s syntax tree without its docstring and with its numbers blanked, and
    the numbers, in the tree's order."""
    function = ast.parse(ast.unparse(function)).body[0]
    if ast.get_docstring(function) is not None:
        function.body = function.body[1:]
    numbers = []
    for node in ast.walk(function):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            numbers.append(node.value)
            node.value = None
    return ast.dump(function), numbers


def changed_bounds(measured: ast.FunctionDef, now: ast.FunctionDef,
                   bounds: set[float]) -> dict[float, float]:
    """{old: new} of the numbers that differ between a test's versions `measured` and `now`;
    ValueError unless that is all that differs (docstrings and comments aside), each old
    number is one of the stored `bounds`, and each is changed wherever it appears."""
    (shape, old), (shape_now, new) = blanked_numbers(measured), blanked_numbers(now)
    if shape != shape_now:
        raise ValueError("it changed in more than its numbers")
    pairs = set(zip(old, new))
    changes = {before: after for before, after in pairs if before != after}
    if len(changes) != len({pair for pair in pairs if pair[0] != pair[1]}):
        raise ValueError("one of its numbers changed to several")
    if set(changes) - bounds:
        raise ValueError(f"numbers other than its bounds changed: "
                         f"{sorted(set(changes) - bounds)}")
    if set(changes) & {before for before, after in pairs if before == after}:
        raise ValueError("a bound changed in one place and stayed in another")
    return changes


def measured_version(test: str, source_digest: str) -> ast.FunctionDef:
    """The version of test `test` in git's history whose source has `source_digest`."""
    path = test_path(test)
    commits = subprocess.run(["git", "rev-list", "HEAD", "--", path], cwd=REPOSITORY,
                             check=True, capture_output=True, text=True).stdout.split()
    for commit in commits:
        shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=REPOSITORY,
                               capture_output=True, text=True)
        if shown.returncode == 0 and f"def {test.split('::')[1]}(" in shown.stdout:
            function, function_source = test_function(shown.stdout, test, f"{commit}:{path}")
            if digest(function_source) == source_digest:
                return function
    raise ValueError(f"{path}: no commit holds the version of {test} whose values are "
                     f"stored (source {source_digest}); measure it again")


def rejudge(test: str, stored: dict[str, dict]) -> dict[str, dict]:
    """`stored`, test `test`'s records, judged against the bounds its source states now;
    refused unless the test differs from the version they were measured on only in the
    numbers of its bounds, its docstring and its comments."""
    path = os.path.join(REPOSITORY, test_path(test))
    with open(path, encoding="utf-8") as f:
        function, function_source = test_function(f.read(), test, path)
    rejudged = {}
    for source in {entry["source"] for entry in stored.values()}:
        names = [name for name, entry in stored.items() if entry["source"] == source]
        measured = measured_version(test, source)
        try:
            changes = changed_bounds(measured, function, {stored[name]["bound"]
                                                          for name in names})
        except ValueError as error:
            raise ValueError(f"{path}: {test} changed in more than its bounds since its "
                             f"values of {names} were measured ({error}); measure it "
                             f"again") from None
        for name in names:
            bound = changes.get(stored[name]["bound"], stored[name]["bound"])
            rejudged[name] = summary({**stored[name], "bound": bound,
                                      "source": digest(function_source)})
    return dict(sorted(rejudged.items()))


def stored_records(output: str) -> dict:
    if not os.path.exists(output):
        return {}
    with open(output, encoding="utf-8") as f:
        return json.load(f)


def test_name(node_id: str) -> str:
    """The name the records use for pytest node id `node_id` ("tests/a/test_b.py::test_c")."""
    path, _, function = node_id.partition("::")
    return f"{path.removesuffix('.py').replace(os.sep, '.')}::{function.split('[')[0]}"


def main_rejudge(args: argparse.Namespace) -> int:
    merged = stored_records(args.output)
    tests = [test_name(node_id) for node_id in args.tests]
    for test in tests:
        if test not in merged:
            raise SystemExit(f"{args.output}: no stored values of {test}")
        try:
            merged[test] = rejudge(test, merged[test])
        except ValueError as error:
            raise SystemExit(str(error)) from None
    write_result(args.output, merged, page=PAGE.format(table=table(merged)))
    print(table({test: merged[test] for test in tests}))
    return 0 if not any(row["failed"] for test in tests for row in merged[test].values()) else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rejudge:
        return main_rejudge(args)
    measured, failed_runs = measurements(run_tests(args.tests, args.seeds, args.workers))
    merged = stored_records(args.output)
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
