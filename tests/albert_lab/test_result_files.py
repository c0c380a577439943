"""The lab's one writer of result files (`albert_lab.result_files`): the two JSON forms byte
for byte, the page beside its JSON, nothing half-written, and the committed result files and
summaries re-made from their own records without a diff."""

from __future__ import annotations

import glob
import json
import os

import pytest
from repository import REPOSITORY

from albert_lab.ablations.summary import comparison_markdown, scale_markdown, summarize
from albert_lab.benchmarks.run_all import write_summary
from albert_lab.result_files import json_text, markdown_table, write_page, write_result

RECORD = {"task": "bbc-news", "gain": 0.5, "seeds": [1, 2], "note": "45.8 – 45.0"}


def test_the_two_json_forms_byte_for_byte():
    assert json_text(RECORD) == ('{\n  "task": "bbc-news",\n  "gain": 0.5,\n  "seeds": [\n'
                                 '    1,\n    2\n  ],\n  "note": "45.8 – 45.0"\n}\n')
    assert json_text(RECORD, indent=1, final_newline=False) == (
        '{\n "task": "bbc-news",\n "gain": 0.5,\n "seeds": [\n  1,\n  2\n ],\n'
        ' "note": "45.8 – 45.0"\n}')


def test_a_result_and_its_page_are_written_side_by_side(tmp_path):
    path = write_result(tmp_path / "deep" / "run.json", RECORD, page="# run\n")
    assert path == str(tmp_path / "deep" / "run.json")
    assert (tmp_path / "deep" / "run.json").read_bytes() == json_text(RECORD).encode("utf-8")
    assert (tmp_path / "deep" / "run.md").read_text(encoding="utf-8") == "# run\n"
    write_result(tmp_path / "bare.json", RECORD, indent=1, final_newline=False)
    assert sorted(os.listdir(tmp_path)) == ["bare.json", "deep"]  # no page asked, none made
    assert json.loads((tmp_path / "bare.json").read_text(encoding="utf-8")) == RECORD


def test_a_record_that_cannot_be_written_leaves_the_file_as_it_was(tmp_path):
    write_result(tmp_path / "run.json", RECORD, page="before\n")
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_result(tmp_path / "run.json", {"when": object()}, page="after\n")
    assert json.loads((tmp_path / "run.json").read_text(encoding="utf-8")) == RECORD
    assert (tmp_path / "run.md").read_text() == "before\n"
    write_page(tmp_path / "run.md", "after\n")
    assert sorted(os.listdir(tmp_path)) == ["run.json", "run.md"]  # no temporaries left


def test_markdown_tables_align_each_column_as_asked():
    assert markdown_table("task:l|gain:r", [["bbc-news", "+0.8"], ["lee-pairs", "-1.0"]]) == (
        "| task | gain |\n|---|---:|\n| bbc-news | +0.8 |\n| lee-pairs | -1.0 |")
    with pytest.raises(ValueError, match="'task:c': expected each as title:l or title:r"):
        markdown_table("task:c", [])


def _committed(pattern: str) -> list[str]:
    found = sorted(glob.glob(os.path.join(REPOSITORY, pattern)))
    assert found, pattern
    return found


def test_the_committed_table_reports_and_run_records_are_in_the_runners_form():
    """Each table's results.json and each run record's result.json, read and written again
    in the ablation runner's form, is byte for byte the committed file: a report re-made
    from the same runs does not show up in a diff for its form."""
    paths = (_committed("experiments/results/*/*/results.json")
             + _committed("experiments/results/*/*/records/*/result.json"))
    changed = [os.path.relpath(path, REPOSITORY) for path in paths
               if json_text(json.load(open(path, encoding="utf-8")), indent=1,
                            final_newline=False) != open(path, encoding="utf-8").read()]
    assert not changed, changed


def test_the_committed_benchmark_summary_is_remade_without_a_diff(tmp_path):
    """benchmarks/results/vm.json and vm.md written again from vm.json (`run_all
    --summarize`: the targets checked again, the page made again)."""
    committed = os.path.join(REPOSITORY, "benchmarks", "results", "vm")
    with open(committed + ".json", encoding="utf-8") as f:
        run = json.load(f)
    write_summary(run, tmp_path / "vm.json")
    for suffix in (".json", ".md"):
        with open(committed + suffix, "rb") as f:
            assert (tmp_path / f"vm{suffix}").read_bytes() == f.read(), suffix


def test_the_committed_scale_summaries_are_remade_without_a_diff():
    """experiments/results/summary-mini.md and summary-small.md (with its section against
    mini) from the committed reports, as `albert-experiment summary` writes them."""
    experiments = os.path.join(REPOSITORY, "experiments")
    results = os.path.join(experiments, "results")
    mini, small = (summarize(experiments, results, scale) for scale in ("mini", "small"))
    for name, text in (("summary-mini.md", scale_markdown(mini)),
                       ("summary-small.md",
                        scale_markdown(small) + "\n" + comparison_markdown(small, mini))):
        with open(os.path.join(results, name), encoding="utf-8") as f:
            assert text == f.read(), name
