"""The report's sections (`albert_lab.ablations.report`): the paper's table beside ours, the
unigram plateau, the sentence accuracies against chance and the checkpoint trend."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from experiment_results import sentence_result
from experiment_tables import micro_table_document

from albert_lab.ablations.report import markdown_table, millions, table_command
from albert_lab.ablations.table_spec import experiment_from_mapping
from albert_tf.config import ConfigError


def test_markdown_table_puts_our_numbers_beside_the_papers(tmp_path):
    spec = experiment_from_mapping(micro_table_document(tmp_path), "micro", "f.yaml")
    results = [{"name": "sop", "parameters": {"total": 123_456},
                "metrics": {"mlm_accuracy": 0.4321, "nsp_accuracy": 0.61,
                            "sop_accuracy": 0.9, "train_hours": 0.0123}}]
    table = markdown_table(spec, results, {"nsp": 11_683_584, "sop": 11_683_584}).splitlines()
    assert not spec.downstream
    assert table[0] == ("|  | paper NSP | paper SOP | params, paper sizes (ours) | "
                        "params (micro) | MLM acc. % (micro) | NSP acc. % (micro) | "
                        "SOP acc. % (micro) | train time (h) (micro) |")
    assert table[2] == "| NSP | 90.5 | 52.0 | 11.7M | not run | not run | not run | not run " \
                       "| not run |"
    assert table[3] == "| SOP | 78.9 | 86.5 | 11.7M | 0.12M | 43.2 | 61.0 | 90.0 | 0.012 |"
    assert (millions(334_000_000), millions(17_600_000)) == ("334M", "17.6M")


def test_the_command_names_the_variants_the_table_holds(tmp_path):
    """A table made one variant at a time shows the line that makes all its finished rows."""
    document = micro_table_document(tmp_path)
    spec = experiment_from_mapping(document, "micro", "f.yaml")
    run = "albert-experiment run f.yaml --scale micro"
    assert table_command(f"{run} --variants sop --no_progress", spec, ["sop", "nsp"]) == run \
        + " --no_progress"  # both finished: no --variants
    assert table_command(f"{run} --variants=nsp", spec, ["nsp"]) == f"{run} --variants nsp"
    assert table_command(f"{run} --override 'corpus.sources=[a b]' --variants nsp -v", spec,
                         ["sop"]) == f"{run} --override 'corpus.sources=[a b]' -v --variants sop"
    assert table_command(f"{run} --variants nsp", spec, []) == f"{run} --variants nsp"
    assert table_command("", spec, ["sop"]) == ""
    document["scales"]["micro"]["cut_variants"] = {"nsp": "over the budget"}
    cut = experiment_from_mapping(document, "micro", "f.yaml")
    assert table_command(f"{run} --variants sop", cut, ["sop"]) == run


def test_a_variant_the_scale_cuts_is_shown_cut_with_its_reason(tmp_path):
    document = micro_table_document(tmp_path)
    document["scales"]["micro"]["cut_variants"] = {"nsp": "over the budget"}
    spec = experiment_from_mapping(document, "micro", "f.yaml")
    assert spec.cut == {"nsp": "over the budget"}
    table = markdown_table(spec, [], {"nsp": 1, "sop": 1}).splitlines()
    assert table[2].endswith("| cut | cut | cut | cut | cut |")
    assert table[3].endswith("| not run | not run | not run | not run | not run |")
    from albert_lab.ablations.runner import variants_to_run
    assert [v.name for v in variants_to_run(spec)] == ["sop"]
    assert [v.name for v in variants_to_run(spec, ["nsp"])] == ["nsp"]  # named: run anyway
    for cut, message in (({"tsp": "x"}, "no variant named 'tsp'"),
                         ({"nsp": ""}, "give the reason"),
                         ({"nsp": "x", "sop": "y"}, "cuts every variant")):
        document["scales"]["micro"]["cut_variants"] = cut
        with pytest.raises(ConfigError, match=message):
            experiment_from_mapping(document, "micro", "f.yaml")


def test_the_unigram_plateau_is_always_predicting_the_most_frequent_held_out_target():
    from albert_lab.ablations.report import plateau_markdown
    from albert_lab.ablations.statistics.heldout_outcomes import (
        above_unigram_plateau,
        unigram_plateau,
    )
    # Targets 8 (four times), 5 and 9 (twice each: a tie, which the lower id wins), 11.
    labels = np.array([8, 5, 8, 9, 8, 5, 9, 11, 8, 7], np.int32)
    token, plateau = unigram_plateau(labels)
    assert token == 8 and plateau.tolist() == [label == 8 for label in labels]
    assert unigram_plateau(np.array([9, 5, 5, 9]))[0] == 5
    with pytest.raises(ValueError, match="at least one"):
        unigram_plateau(np.array([], np.int32))
    # A model right on the 8s and on two others: 6 of 10 against the plateau's 4 of 10; the
    # per-prediction differences are two 1s and eight 0s (mean 0.2, sd 0.4216).
    correct = (labels == 8) | np.isin(np.arange(10), [1, 3])
    found = above_unigram_plateau({"mlm_correct": correct, "mlm_labels": labels})
    assert (found["token"], found["plateau"], found["accuracy"]) == (8, 0.4, 0.6)
    half = 1.959964 * np.sqrt(0.2 * 0.8 * 10 / 9) / np.sqrt(10)
    assert (found["difference"], found["low"], found["high"]) == pytest.approx(
        (0.2, 0.2 - half, 0.2 + half))
    assert not found["above"]  # ten predictions cannot show it: the interval reaches below 0
    many = above_unigram_plateau({"mlm_correct": np.tile(correct, 100),
                                  "mlm_labels": np.tile(labels, 100)})
    assert many["difference"] == pytest.approx(0.2) and many["above"]
    assert above_unigram_plateau(None) is None
    assert above_unigram_plateau({"sop_correct": correct, "sop_labels": labels}) is None
    # The report's rows: one per variant with outcomes, a variant below the plateau in bold.
    stuck = above_unigram_plateau({"mlm_correct": labels == 8, "mlm_labels": labels})
    markdown = plateau_markdown([{"name": "a", "label": "A"}, {"name": "b", "label": "B"},
                                 {"name": "c", "label": "C"}],
                                {"a": many, "b": stuck, "c": None})
    assert "| A | 60.0 | 40.0 (id 8) | +20.0 [+17.5, +22.5] | yes |" in markdown
    assert "| B | 40.0 | 40.0 (id 8) | +0.0 [+0.0, +0.0] | **no** |" in markdown
    assert "| C |" not in markdown
    assert plateau_markdown([{"name": "c", "label": "C"}], {"c": None}) == ""


def test_the_report_tests_each_sentence_accuracy_against_chance_and_lists_the_trend():
    from albert_lab.ablations.report import chance_markdown, trend_markdown
    results = [sentence_result("sop", "SOP", nsp=0.6, sop=0.8),
               {**sentence_result("none", "None"), "trend": [
                   {"step": 500, "mlm_accuracy": 0.1, "nsp_accuracy": None,
                    "sop_accuracy": None},
                   {"step": 1000, "mlm_accuracy": 0.15, "nsp_accuracy": None,
                    "sop_accuracy": None}]}]
    lines = chance_markdown(results).splitlines()
    assert len(lines) == 4  # header, rule, the SOP model's two cells; None has no head
    from albert_lab.ablations.statistics.intervals import binomial_p_value
    assert lines[2] == f"| SOP | NSP | 240 / 400 | 60.0 | {binomial_p_value(240, 400):.2g} |"
    assert lines[3].startswith("| SOP | SOP | 160 / 200 | 80.0 |")
    trend = trend_markdown(results).splitlines()
    assert trend[2:] == ["| None | 500 | 10.0 | – | – |", "| None | 1,000 | 15.0 | – | – |"]
    assert chance_markdown([sentence_result("none", "None")]) == ""


def test_stuck_fine_tunes_and_superseded_recipes_are_named_with_what_changed():
    from albert_lab.ablations.report import stuck_markdown
    from albert_lab.comparison.recipes import SMALL_MODEL, SUPERSEDED_RECIPES

    def row(label, recipe, stuck_seeds):
        seeds = {str(seed): {"value": 0.5, "stuck": seed in stuck_seeds} for seed in (1, 2, 3)}
        return {"label": label, "downstream": {
            "bbc-news": {"settings": {"recipe": recipe}, "seeds": seeds}}}

    current = stuck_markdown([row("E=16", SMALL_MODEL, ())], ["bbc-news"])
    assert current == ""  # nothing stuck, the recipe in use: nothing to say
    text = stuck_markdown([row("E=16", "small_model_v2", (2,)),
                           row("E=32", "small_model", (1, 3))], ["bbc-news"])
    assert text.startswith("3 of the 6 fine-tunes are stuck")
    assert "- E=16, bbc-news: seed 2 of 3" in text
    assert "- E=32, bbc-news: seeds 1, 3 of 3" in text
    for old in ("small_model", "small_model_v2"):
        assert f"recipe `{old}` ({SUPERSEDED_RECIPES[old]})" in text
    assert text.count(f"the recipe in use is `{SMALL_MODEL}`") == 2
    assert SMALL_MODEL not in SUPERSEDED_RECIPES
    older = stuck_markdown([row("E=16", "small_model_v2", ())], ["bbc-news"])
    assert older.startswith("None of the 3 fine-tunes is stuck.\n\nThe downstream columns")


def test_the_data_section_says_which_rows_were_made_from_which_build():
    from albert_lab.ablations.report import data_markdown

    def build(linux_doc, tokenizer):
        return {"corpus": {"debian-prose": {"bible": "sword-text-web 426.0-1",
                                            "linux-kernel-docs": f"linux-doc-6.1 {linux_doc}"}},
                "tokenizer": tokenizer}

    old, new = build("6.1.158-1", "aaaa"), build("6.1.192-3", "bbbb")
    random_start = {"label": "random start (E=16 sizes)", "data": {"tokenizer": "aaaa"}}
    assert data_markdown([{"label": "E=16"}]) == ""  # nothing recorded: nothing to say
    same = data_markdown([{"label": "E=16", "data": old}, {"label": "E=32", "data": old},
                          random_start, {"label": "E=64"}])
    assert same == ("Every row with a record was made from the same data: debian-prose "
                    "(2 parts), tokenizer aaaa (the packages' versions and the files' digests "
                    "are in results.json). Not recorded for E=64 (made before each run kept "
                    "its data's record).")
    # A table resumed on a machine with a newer point release: two builds, each row named.
    mixed = data_markdown([{"label": "E=16", "data": old}, {"label": "E=32", "data": new},
                           random_start]).splitlines()
    assert mixed == [
        "The rows were made from 2 builds of the data (the table ran on machines with other "
        "package versions):",
        "- build 1: E=16, random start (E=16 sizes); tokenizer aaaa",
        "- build 2: E=32; tokenizer bbbb",
        "- they differ in: linux-kernel-docs (linux-doc-6.1 6.1.158-1 / linux-doc-6.1 "
        "6.1.192-3), the tokenizer"]


def test_each_downstream_claim_is_broken_down_task_by_task_once_per_pair():
    from experiment_results import variant_scores

    from albert_lab.ablations.report import claim_differences
    from albert_lab.ablations.statistics.verdicts import Claim

    def claim(metric, first, second):
        return Claim("c", metric, first, second, "higher")

    results = [{**variant_scores("big", {"bbc": {"1": 0.9, "2": 0.8}, "rt": {"1": 0.7,
                                                                             "2": 0.7}}),
                "label": "Big"},
               {**variant_scores("small", {"bbc": {"1": 0.6, "2": 0.6}, "rt": {"1": 0.7,
                                                                               "2": 0.5}}),
                "label": "Small"}]
    by_name = {result["name"]: result for result in results}
    claims = [claim("downstream_average", "big", "small"),
              claim("mlm_accuracy", "small", "big"),  # held out: not by task
              claim("downstream_average", "big", "small"),  # the same pair again
              claim("downstream_average", "big", "absent")]  # one side not run
    pairs = claim_differences(claims, by_name, ["bbc", "rt"])
    assert [(pair["first"], pair["second"]) for pair in pairs] == [("big", "small")]
    # bbc by seed: +.3, +.2 -> +.25; rt: 0, +.2 -> +.1; the average by seed: +.15, +.2.
    differences = pairs[0]["differences"]
    assert differences["bbc"]["gain"] == pytest.approx(0.25)
    assert differences["rt"]["gain"] == pytest.approx(0.1)
    assert differences["downstream_average"]["gain"] == pytest.approx(0.175)
    # t(1) 12.706 x sd .0353553 / sqrt 2 on the average: +17.5 [-14.3, +49.3] points.
    assert differences["downstream_average"]["low"] == pytest.approx(
        0.175 - 12.706 * 0.0353553 / 2 ** 0.5, abs=1e-4)
    assert claim_differences(claims[1:2], by_name, ["bbc", "rt"]) == []

    from types import SimpleNamespace

    from albert_lab.ablations.report.sections import ReportParts, _claims_by_task_section
    tasks = SimpleNamespace(downstream=[SimpleNamespace(name="bbc"), SimpleNamespace(name="rt")])
    parts = ReportParts(tasks, results, None, {}, "", {}, {}, pairs, {}, [], "")
    section = _claims_by_task_section(parts)
    assert section[1] == "## The downstream claims task by task"
    assert section[-1].splitlines()[0] == "| compared | bbc | rt | downstream avg. |"
    assert section[-1].splitlines()[2].startswith(
        "| Big minus Small | +25.0 [-38.5, +88.5] | +10.0 [-117.1, +137.1] | +17.5 [")
    assert _claims_by_task_section(dataclasses.replace(parts, claim_differences=[])) == []


def test_the_metrics_plot_has_a_panel_for_each_metric_some_variant_measured(tmp_path,
                                                                            monkeypatch):
    from albert_lab.ablations import plots
    titles = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, path: titles.append(
        [axes.get_title() for axes in figure.axes]) or path)
    spec = experiment_from_mapping(micro_table_document(tmp_path), "micro", "f.yaml")
    assert spec.metrics[-1] == "train_hours"
    measured = [{"name": "sop", "metrics": {"mlm_accuracy": 0.4, "nsp_accuracy": 0.6,
                                            "sop_accuracy": 0.9, "train_hours": None}}]
    plots.plot_metrics(spec, measured, str(tmp_path / "metrics.png"))
    assert titles[-1] == ["MLM acc. %", "NSP acc. %", "SOP acc. %"]  # no empty time panel
    plots.plot_metrics(spec, [{"name": "sop", "metrics": {}}], str(tmp_path / "none.png"))
    assert len(titles[-1]) == 4  # nothing measured at all: every panel, each saying n/a
