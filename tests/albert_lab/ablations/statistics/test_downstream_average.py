"""The Avg column and each variant's gain over the random start, by hand
(`albert_lab.ablations.statistics.downstream_average`, `.task_differences`)."""

from __future__ import annotations

import pytest
from experiment_results import variant_scores

from albert_lab.ablations.statistics.downstream_average import (
    as_fraction,
    downstream_average,
    seed_averages,
)


def test_the_average_column_and_the_seed_averages_by_hand():
    result = variant_scores("a", {"news": {"1": 0.80, "2": 0.90, "3": 0.70},
                            "squad": {"1": 60.0, "2": 70.0}})  # SQuAD prints percent
    assert as_fraction(85.0) == 0.85 and as_fraction(-0.2) == -0.2
    # news: mean 0.80; squad: 0.65 -> Avg 0.725. Per seed: (0.8+0.6)/2, (0.9+0.7)/2.
    assert downstream_average(result, ["news", "squad"]) == pytest.approx(0.725)
    assert seed_averages(result, ["news", "squad"]) == pytest.approx({"1": 0.7, "2": 0.8})
    assert downstream_average(result, ["news", "race"]) is None
    assert seed_averages(result, ["news", "race"]) == {}


def _scores(**tasks):
    """A result's stored downstream scores: task name -> dev score by seed."""
    return {"downstream": {task: {"seeds": {seed: {"value": value} for seed, value
                                            in scores.items()}}
                           for task, scores in tasks.items()}}


def test_pretraining_gains_pair_each_task_and_the_average_by_seed():
    from albert_lab.ablations.statistics.task_differences import (
        task_differences,
        task_differences_markdown,
    )
    ours = _scores(bbc={"1": 0.60, "2": 0.70, "3": 0.65},
                   rt={"1": 0.60, "2": 0.60, "3": 0.57})
    # Seed 3 of rt is missing from the random start: bbc pairs three seeds, the average two.
    start = _scores(bbc={"1": 0.50, "2": 0.50, "3": 0.50}, rt={"1": 0.58, "2": 0.62})
    gains = task_differences(ours, start, ["bbc", "rt"])
    # bbc by hand: differences .10, .20, .15: mean .15, sd .05, t(2) 4.303 * .05 / sqrt 3.
    assert gains["bbc"]["gain"] == pytest.approx(0.15)
    assert gains["bbc"]["high"] - 0.15 == pytest.approx(4.303 * 0.05 / 3 ** 0.5)
    assert gains["bbc"]["seeds"] == 3
    # rt: .02, -.02; the average by seed: (.60+.60)/2 - (.50+.58)/2 = .06, (.70+.60)/2 -
    # (.50+.62)/2 = .09: mean .075, sd .0212132, t(1) 12.706 * .0212132 / sqrt 2.
    assert gains["rt"]["gain"] == pytest.approx(0.0) and gains["rt"]["seeds"] == 2
    average = gains["downstream_average"]
    assert average["gain"] == pytest.approx(0.075) and average["seeds"] == 2
    assert average["low"] == pytest.approx(0.075 - 12.706 * 0.0212132 / 2 ** 0.5)
    one_seed = task_differences(_scores(bbc={"1": 0.6}), _scores(bbc={"1": 0.5}), ["bbc"])
    assert one_seed["bbc"] == {"gain": pytest.approx(0.1), "low": pytest.approx(0.1),
                               "high": pytest.approx(0.1), "seeds": 1}
    assert task_differences(_scores(bbc={"1": 0.6}), _scores(bbc={"2": 0.5}), ["bbc"]) == {}

    table = task_differences_markdown([("E 16", gains), ("E 32", one_seed), ("none", {})],
                                       ["bbc", "rt"], "avg.").splitlines()
    assert table[0] == "| trained with | bbc | rt | avg. |"
    assert table[2] == "| E 16 | +15.0 [+2.6, +27.4] | +0.0 [-25.4, +25.4] | +7.5 [-11.6, +26.6] |"
    assert table[3] == "| E 32 | +10.0 (1 seed) | – | +10.0 (1 seed) |"
    assert len(table) == 4  # a variant without fine-tunes gets no row
    assert task_differences_markdown([("none", {})], ["bbc"], "avg.") == ""
