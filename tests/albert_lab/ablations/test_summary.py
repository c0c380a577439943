"""`albert-experiment summary`: every table's report on one page, in the paper's order."""

from __future__ import annotations

import json
import os

import yaml
from repository import REPOSITORY

from albert_lab.ablations.cli import main as experiment_main
from albert_lab.ablations.summary import moved, readme_block, readme_markers, summarize


def _table(name: str, claims: list) -> dict:
    """A table file of four variants, `d` cut at the micro scale."""
    variant = {"pretrain": {"model": {"hidden_size": 32, "num_attention_heads": 2,
                                      "intermediate_size": 64, "embedding_size": 16}}}
    return {
        "name": name, "title": f"Title of {name}",
        "paper": {"table": f"{name[5:].split('_')[0]} (arXiv v6: 1)"},
        "scales": {"micro": {
            "corpus": {"sources": [{"name": "x", "train_files": ["t.txt"],
                                    "heldout_files": ["h.txt"]}]},
            "tokenizer": {"vocab_size": 48}, "shards": {"max_seq_length": 32},
            "pretrain": {"train": {"train_steps": 1}},
            "cut_variants": {"d": "cut for the budget"}}},
        "variants": [{"name": "a", **variant}, {"name": "b", **variant},
                     {"name": "c", **variant}, {"name": "d", **variant}],
        "claims": claims}


def _micro_tables(tmp_path):
    """Two table files (Table 12 and Table 4, in that order on disk), each with the claims
    `a beats b` (on two metrics, the README's headline) and `c beats b`, and a report for
    Table 4 alone; returns the experiments and results folders."""
    experiments, results = tmp_path / "experiments", tmp_path / "results"
    experiments.mkdir()
    claims = [{"claim": "a beats b", "metric": ["downstream_average", "mlm_accuracy"],
               "compare": ["a", "b"], "expect": "higher", "headline": True},
              {"claim": "c beats b", "metric": "mlm_accuracy", "compare": ["c", "b"],
               "expect": "higher"}]
    for name in ("table12_dropout", "table4_size"):  # written out of order on purpose
        (experiments / f"{name}.yaml").write_text(yaml.safe_dump(_table(name, claims)))
    # Three fine-tunes of a, one of the random start: one of a's is stuck.
    report = {"variants": [
        {"name": "a", "metrics": {"mlm_accuracy": 0.152, "downstream_average": 0.71},
         "downstream": {"t": {"seeds": {"1": {"stuck": False}, "2": {"stuck": True},
                                        "3": {"stuck": False}}}}},
        {"name": "b", "metrics": {"mlm_accuracy": 0.1, "downstream_average": None}}],
        "random_start": {"downstream": {"t": {"seeds": {"1": {"stuck": False}}}}},
        "verdicts": [
            {"text": "a beats b", "metric": "downstream_average", "second_metric": "",
             "difference": 0.03, "low": 0.01, "high": 0.05, "outcome": "shown"},
            {"text": "a beats b", "metric": "mlm_accuracy", "second_metric": "",
             "difference": 0.052, "low": -0.01, "high": 0.114, "outcome": "not shown"},
            {"text": "c beats b", "metric": "mlm_accuracy", "second_metric": "",
             "difference": None, "low": None, "high": None, "outcome": "not run"}],
        "unigram_plateau": {"a": {"above": True}, "b": {"above": False}},
        # a is ahead of the random start (interval above 0), b's interval straddles 0.
        "pretraining_gains": {
            "a": {"downstream_average": {"gain": 0.12, "low": 0.02, "high": 0.22, "seeds": 3}},
            "b": {"downstream_average": {"gain": -0.01, "low": -0.05, "high": 0.03,
                                         "seeds": 3}}}}
    folder = results / "table4_size" / "micro"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(report))
    return experiments, results


def test_the_summary_counts_each_tables_runs_ranges_and_verdicts(tmp_path, capsys):
    experiments, results = _micro_tables(tmp_path)
    assert experiment_main(["summary", "--scale", "micro", "--experiments_dir",
                            str(experiments), "--results_root", str(results)]) == 0
    printed = capsys.readouterr().out
    with open(results / "summary-micro.md") as f:
        assert f.read() == printed
    lines = printed.splitlines()
    rows = [line for line in lines if line.startswith("| [Title") or
            line.startswith("| Title")]
    # Table 4 before Table 12; 2 of 4 variants run, the cut one counted in the 4; MLM
    # 10.0-15.2, one of the two above the unigram plateau; one downstream average; one of two
    # ahead of the random start.
    assert rows[0] == ("| [Title of table4_size](table4_size/micro/results.md) | 2 of 4 "
                       "(1 cut) | "
                       "10.0-15.2 | 1 of 2 | 71.0 | 1 of 4 | 1 of 2 (-1.0 to +12.0) | "
                       "1 / 1 / 0 / 1 |")
    # No report yet: its three claims (one per metric) still to run.
    assert rows[1] == ("| Title of table12_dropout | 0 of 4 (1 cut) | – | – | – | – | – | "
                       "0 / 0 / 0 / 3 |")
    assert "| 4 | a beats b | downstream_average | +3.0 [+1.0, +5.0] | shown |" in lines
    assert "| 4 | a beats b | mlm_accuracy | +5.2 [-1.0, +11.4] | not shown |" in lines
    # A table without the scale is named with its file's reason, not counted; a file that
    # gives none is named as such.
    table = _table("table7_depth", [])
    table["scales"]["mini"] = table["scales"].pop("micro")
    table["not_run_at"] = {"micro": "it needs\n  9 CPU-hours"}
    (experiments / "table7_depth.yaml").write_text(yaml.safe_dump(table))
    table = _table("table8_width", [])
    table["scales"]["mini"] = table["scales"].pop("micro")
    (experiments / "table8_width.yaml").write_text(yaml.safe_dump(table))
    assert experiment_main(["summary", "--scale", "micro", "--experiments_dir",
                            str(experiments), "--results_root", str(results)]) == 0
    printed = capsys.readouterr().out
    assert "Not run at the micro scale:\n\n- `table7_depth.yaml`: it needs 9 CPU-hours\n" \
           "- `table8_width.yaml`: its file gives no reason (`not_run_at`)\n" in printed
    assert sum(line.startswith(("| [Title", "| Title")) for line in printed.splitlines()) == 2
    assert experiment_main(["summary", "--scale", "paper", "--experiments_dir",
                            str(experiments), "--results_root", str(results)]) == 2
    assert "no scale 'paper'" in capsys.readouterr().err
    assert not os.path.exists(results / "summary-paper.md")


def test_the_readme_rows_quote_each_tables_headline_claims_from_its_report(tmp_path, capsys):
    experiments, results = _micro_tables(tmp_path)
    readme = tmp_path / "README.md"
    begin, end = readme_markers("micro")
    readme.write_text(f"# Intro\n\n{begin}\nrows written by hand\n{end}\n\nThe rest.\n")
    assert experiment_main(["summary", "--scale", "micro", "--experiments_dir",
                            str(experiments), "--results_root", str(results),
                            "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith(f"# Intro\n\n{begin}\n| table |") and text.endswith(
        f"{end}\n\nThe rest.\n")
    assert "rows written by hand" not in text
    # The headline claim on both metrics, not the unmarked `c beats b`; the link is
    # relative to the README; one of Table 4's four fine-tunes stuck, none run for Table 12.
    assert ("| [Title of table4_size](results/table4_size/micro/results.md) | 2 of 4 (1 cut) "
            "| 1 of 4 "
            "| a beats b: downstream +3.0 [+1.0, +5.0] shown, MLM +5.2 [-1.0, +11.4] not "
            "shown |") in text
    assert "| Title of table12_dropout | 0 of 4 (1 cut) | – | – |" in text
    assert "over the micro tables: 1 of 4." in text
    capsys.readouterr()

    readme.write_text("# A README without the markers\n")
    assert experiment_main(["summary", "--scale", "micro", "--experiments_dir",
                            str(experiments), "--results_root", str(results),
                            "--readme", str(readme)]) == 2
    assert f"{readme}: expected a line '{begin}'" in capsys.readouterr().err
    assert readme.read_text() == "# A README without the markers\n"


def test_the_committed_results_index_rows_are_the_ones_the_committed_reports_give():
    """The table rows of docs/results.md, the results index (small scale, mini one line
    below), are generated, never edited by hand: rerun `albert-experiment summary --scale
    small --against mini --readme docs/results.md` after a report changes."""
    with open(os.path.join(REPOSITORY, "docs", "results.md"), encoding="utf-8") as f:
        text = f.read()
    begin, end = readme_markers("small", "mini")
    committed = text[text.index(begin) + len(begin):text.index(end)].strip("\n")
    experiments = os.path.join(REPOSITORY, "experiments")
    results = os.path.join(experiments, "results")
    assert committed == readme_block(summarize(experiments, results, "small"),
                                     "../experiments/results",
                                     summarize(experiments, results, "mini"))


def test_moved_ranks_verdicts_by_how_far_they_are_from_agreeing_with_the_paper():
    assert moved("contradicted", "not shown") == "toward the paper"
    assert moved("not shown", "shown") == "toward the paper"
    assert moved("shown", "contradicted") == "away from it"
    assert moved("not shown", "not shown") == "stayed"
    assert moved("not run", "shown") == "not comparable"
    assert moved("shown", "not run") == "not comparable"


def test_against_lays_two_scales_claims_side_by_side(tmp_path, capsys):
    experiments, results = _micro_tables(tmp_path)
    for path in experiments.glob("*.yaml"):  # a second scale, `wide`, in both table files
        table = yaml.safe_load(path.read_text())
        table["scales"]["wide"] = table["scales"]["micro"]
        path.write_text(yaml.safe_dump(table))
    with open(results / "table4_size" / "micro" / "results.json") as f:
        report = json.load(f)
    verdicts = {(v["text"], v["metric"]): v for v in report["verdicts"]}
    # At `wide`: downstream falls from shown to not shown, MLM rises from not shown to
    # shown, and `c beats b`, not run at micro, is contradicted.
    verdicts["a beats b", "downstream_average"].update(outcome="not shown", low=-0.01)
    verdicts["a beats b", "mlm_accuracy"].update(outcome="shown", low=0.01)
    verdicts["c beats b", "mlm_accuracy"].update(outcome="contradicted", difference=-0.04,
                                                 low=-0.06, high=-0.02)
    folder = results / "table4_size" / "wide"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(report))
    assert experiment_main(["summary", "--scale", "wide", "--against", "micro",
                            "--experiments_dir", str(experiments), "--results_root",
                            str(results)]) == 0
    printed = capsys.readouterr().out
    assert (results / "summary-wide.md").read_text() == printed
    section = printed[printed.index("## Against the micro scale"):].splitlines()
    assert ("Of 3 claim-measures, the verdict moved from the micro to the wide scale toward "
            "the paper's in 1, away from it in 1 and stayed in 0; 1 are not run at one of "
            "the two scales.") in section
    assert ("| 4 | a beats b | downstream_average | +3.0 [+1.0, +5.0] shown | "
            "+3.0 [-1.0, +5.0] not shown | away from it |") in section
    assert ("| 4 | a beats b | mlm_accuracy | +5.2 [-1.0, +11.4] not shown | "
            "+5.2 [+1.0, +11.4] shown | toward the paper |") in section
    assert ("| 4 | c beats b | mlm_accuracy | – not run | -4.0 [-6.0, -2.0] contradicted | "
            "not comparable |") in section
    # A claim measured at micro only (the wide report lost it) is listed as not run there.
    report["verdicts"] = report["verdicts"][1:]
    (folder / "results.json").write_text(json.dumps(report))
    assert experiment_main(["summary", "--scale", "wide", "--against", "micro",
                            "--experiments_dir", str(experiments), "--results_root",
                            str(results)]) == 0
    assert ("| 4 | a beats b | downstream_average | +3.0 [+1.0, +5.0] shown | not run | "
            "not comparable |") in capsys.readouterr().out.splitlines()
    # Without --against the page has no such section.
    assert experiment_main(["summary", "--scale", "wide", "--experiments_dir",
                            str(experiments), "--results_root", str(results)]) == 0
    assert "## Against" not in capsys.readouterr().out


def test_the_readme_rows_against_another_scale_put_each_tables_rows_together(tmp_path, capsys):
    """Table 4 is run at `wide` (which cuts nothing) and `micro`; Table 12 has no `wide`
    scale: its `micro` row stands under a line that says so."""
    experiments, results = _micro_tables(tmp_path)
    path = experiments / "table4_size.yaml"
    table = yaml.safe_load(path.read_text())
    table["scales"]["wide"] = {key: value for key, value in table["scales"]["micro"].items()
                               if key != "cut_variants"}
    path.write_text(yaml.safe_dump(table))
    path = experiments / "table12_dropout.yaml"
    table = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**table, "not_run_at": {"wide": "too wide for this machine"}}))
    (results / "table4_size" / "wide").mkdir()
    (results / "table4_size" / "wide" / "results.json").write_text(
        (results / "table4_size" / "micro" / "results.json").read_text())
    readme = tmp_path / "README.md"
    begin, end = readme_markers("wide", "micro")
    assert begin == "<!-- albert-experiment summary --scale wide --against micro: begin -->"
    readme.write_text(f"{begin}\n{end}\n")
    assert experiment_main(["summary", "--scale", "wide", "--against", "micro",
                            "--experiments_dir", str(experiments), "--results_root",
                            str(results), "--readme", str(readme)]) == 0
    capsys.readouterr()
    lines = readme.read_text().splitlines()
    headline = ("a beats b: downstream +3.0 [+1.0, +5.0] shown, MLM +5.2 [-1.0, +11.4] "
                "not shown")
    assert lines[3:7] == [
        f"| [Title of table4_size](results/table4_size/wide/results.md) (wide) | 2 of 4 | "
        f"1 of 4 | {headline} |",
        f"| ↳ [micro](results/table4_size/micro/results.md) | 2 of 4 (1 cut) | 1 of 4 | "
        f"{headline} |",
        "| Title of table12_dropout (wide) | not at this scale | – | too wide for this machine |",
        "| ↳ micro | 0 of 4 (1 cut) | – | – |"]
    assert lines[8:10] == ["Fine-tunes stuck at the majority class over the wide tables: "
                           "1 of 4.", "Fine-tunes stuck at the majority class over the "
                           "micro tables: 1 of 4."]
