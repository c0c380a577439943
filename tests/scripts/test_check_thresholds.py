"""The threshold check (`scripts/check_thresholds.py`): what it reads from pytest's JUnit
report, and how runs of a test over chunks of seeds add up to one record."""

import json

import pytest
from repository import script_module

TEST = ("tests.albert_tf.training.test_collapse::"
        "test_a_working_encoder_spreads_and_a_collapsed_one_does_not")


@pytest.fixture(scope="module")
def check():
    with script_module("scripts", "check_thresholds.py", name="check_thresholds") as module:
        yield module


def report(values_by_seed, bound=0.2, failed_seeds=()):
    """A JUnit report (xunit1, as pytest writes it) of TEST run once per seed, each run
    recording "spread" with `bound`; the runs of `failed_seeds` failed."""
    module, name = TEST.split("::")
    cases = []
    for seed, value in values_by_seed.items():
        record = json.dumps({"value": value, "side": "above", "bound": bound})
        failure = '<failure message="no">x</failure>' if seed in failed_seeds else ""
        cases.append(f'<testcase classname="{module}" name="{name}[{seed}]" time="1">'
                     f'<properties><property name="seed" value="{seed}"/>'
                     f"<property name=\"spread\" value='{record}'/></properties>"
                     f"{failure}</testcase>")
    return f'<testsuites><testsuite name="pytest">{"".join(cases)}</testsuite></testsuites>'


def test_each_value_is_kept_with_its_seed_and_failed_runs_are_named(check):
    measured, failed = check.measurements(report({3: 0.5, 4: 0.1}, failed_seeds={4}))
    assert measured == {TEST: {"spread": {"side": "above", "bound": 0.2,
                                          "values": {"3": 0.5, "4": 0.1}}}}
    assert failed == {TEST: [4]}


def run_chunk(check, monkeypatch, output, junit_xml):
    monkeypatch.setattr(check, "run_tests", lambda tests, seeds, workers: junit_xml)
    return check.main([TEST, "--output", str(output)])


def test_chunks_of_seeds_add_up_to_one_record(check, monkeypatch, tmp_path):
    output = tmp_path / "thresholds.json"
    assert run_chunk(check, monkeypatch, output, report({0: 0.5, 1: 0.3})) == 0
    assert run_chunk(check, monkeypatch, output, report({2: 0.1, 3: 0.7},
                                                        failed_seeds={2})) == 1
    row = json.loads(output.read_text())[TEST]["spread"]
    assert row["values"] == {"0": 0.5, "1": 0.3, "2": 0.1, "3": 0.7}
    assert (row["seeds"], row["lowest"], row["median"], row["highest"]) == (4, 0.1, 0.4, 0.7)
    assert row["margin"] == pytest.approx(0.1) and row["failed_seeds"] == [2]
    assert "| spread | > 0.2 | 4 | 0.1 | 0.4 | 0.7 | 0.1 | 1 (seeds 2) |" in (
        tmp_path / "thresholds.md").read_text()

    # A seed measured again replaces its value; a changed bound starts the record again.
    run_chunk(check, monkeypatch, output, report({1: 0.9}))
    assert json.loads(output.read_text())[TEST]["spread"]["values"]["1"] == 0.9
    run_chunk(check, monkeypatch, output, report({5: 0.6}, bound=0.25))
    row = json.loads(output.read_text())[TEST]["spread"]
    assert row["values"] == {"5": 0.6} and row["bound"] == 0.25


def test_a_changed_test_starts_its_record_again(check, monkeypatch, tmp_path):
    output = tmp_path / "thresholds.json"
    run_chunk(check, monkeypatch, output, report({0: 0.5}))
    monkeypatch.setattr(check, "test_source_digest", lambda test: "another source")
    run_chunk(check, monkeypatch, output, report({1: 0.3}))
    assert json.loads(output.read_text())[TEST]["spread"]["values"] == {"1": 0.3}
