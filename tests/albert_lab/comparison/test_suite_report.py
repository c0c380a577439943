"""The downstream suite's report (`albert_lab.comparison.suite`): the average over tasks
(failed tasks left out, every stuck run counted) and the recipe it names."""

from __future__ import annotations

import pytest

from albert_lab.comparison.gain import compare_starts
from albert_lab.comparison.suite import suite_average


def _suite_row(pretrained, random, stuck=()):
    """A suite task row by hand: dev scores by seed (no test labels), `stuck` random seeds."""
    seeds = {start: {str(seed): {"metric": "accuracy", "value": value, "test": None,
                                 "stuck": start == "random" and seed in stuck}
                     for seed, value in enumerate(values, 1)}
             for start, values in (("pretrained", pretrained), ("random", random))}
    return {"task": "classify", "metric": "accuracy", "seeds": seeds, "baseline": {"dev": 0.9},
            "comparison": compare_starts(seeds["pretrained"], seeds["random"]).to_dict()}


def test_the_suite_average_leaves_out_failed_tasks_and_counts_every_stuck_run():
    rows = {"news": _suite_row([0.6, 0.8], [0.5, 0.5]),
            "reviews": _suite_row([0.9, 0.9], [0.57, 0.7], stuck=(1,))}
    assert rows["reviews"]["comparison"]["verdict"] == "failed"
    average = suite_average(rows)
    # Only news: differences 0.1 and 0.3 (as the t-interval test above).
    assert (average["gain"], average["gain_low"], average["gain_high"]) == pytest.approx(
        (0.2, -1.0706, 1.4706), abs=1e-4)
    assert average["failed"] == ["reviews"] and average["stuck"] == {"pretrained": 0,
                                                                     "random": 1}
    assert average["split"] == "dev" and average["pretrained"] == pytest.approx(0.7)
    assert suite_average({"reviews": rows["reviews"]}) is None


def test_the_report_names_its_recipe_and_the_overrides_a_suite_run_added():
    from albert_lab.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPE
    from albert_lab.comparison.suite import recipe_description

    plain = {"recipe_name": SMALL_MODEL, "recipe": list(SMALL_MODEL_RECIPE)}
    assert recipe_description(plain) == f"Recipe `{SMALL_MODEL}`"
    changed = {**plain, "recipe": [*SMALL_MODEL_RECIPE, "optimizer.learning_rate=1e-3"]}
    assert recipe_description(changed) == (f"Recipe `{SMALL_MODEL}` with "
                                           "`optimizer.learning_rate=1e-3`")
