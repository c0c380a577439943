"""The threshold check (`scripts/check_thresholds.py`): what it reads from pytest's JUnit
report, and how runs of a test over chunks of seeds add up to one record."""

import json
import subprocess

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


MEASURED = '''from thresholds import at_least


def test_draws(seed, record_property):
    """Measured with a bound of 0.4."""
    at_least(record_property, "score", 0.3 + seed / 10, 0.4)
'''


def commit_test_file(folder, text):
    """`text` as folder's tests/test_draws.py, committed to its git repository."""
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "tests" / "test_draws.py").write_text(text)
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "test"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *command],
                       cwd=folder, check=True)


def test_rejudging_applies_a_new_bound_only_to_a_test_changed_in_nothing_else(
        check, monkeypatch, tmp_path):
    """--rejudge runs nothing: it finds the version the values were measured on in git's
    history, checks that only bounds, docstring and comments changed since, and judges the
    stored values against the bound the source states now."""
    monkeypatch.setattr(check, "REPOSITORY", str(tmp_path))
    commit_test_file(tmp_path, MEASURED)
    test, output = "tests.test_draws::test_draws", tmp_path / "thresholds.json"
    entry = {"side": "at least", "bound": 0.4, "source": check.test_source_digest(test),
             "values": {"0": 0.3, "1": 0.4, "2": 0.5}}
    output.write_text(json.dumps({test: {"score": check.summary(entry)}}))
    node_id = "tests/test_draws.py::test_draws"

    rebound = MEASURED.replace("0.4.", "0.3, from chance.").replace("seed / 10, 0.4)",
                                                                    "seed / 10, 0.3)  # why")
    (tmp_path / "tests" / "test_draws.py").write_text(rebound)
    assert check.main(["--rejudge", node_id, "--output", str(output)]) == 0
    row = json.loads(output.read_text())[test]["score"]
    assert (row["bound"], row["failed"], row["values"]) == (0.3, 0, entry["values"])
    assert row["margin"] == pytest.approx(0.0) and row["source"] == check.test_source_digest(
        test)

    # Judged again, the record's source is today's, which git does not hold: refused, as is
    # a test that changed in what it measures.
    with pytest.raises(SystemExit, match="no commit holds the version"):
        check.main(["--rejudge", node_id, "--output", str(output)])
    output.write_text(json.dumps({test: {"score": check.summary(entry)}}))
    for changed in (rebound.replace("0.3 +", "0.4 +"), rebound.replace("seed / 10", "seed")):
        (tmp_path / "tests" / "test_draws.py").write_text(changed)
        with pytest.raises(SystemExit, match="changed in more than its bounds"):
            check.main(["--rejudge", node_id, "--output", str(output)])
