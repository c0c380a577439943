"""The paper's claims of a table, judged on our held-out accuracies and downstream averages
with 95% intervals.

A table file lists its claims:

    claims:
      - claim: "sharing every layer costs accuracy"   # what the paper says
        metric: [downstream_average, mlm_accuracy]    # one verdict per metric
        compare: [not_shared, all_shared]             # first - second; `chance` = 50%
        expect: higher                                # higher, lower or same
        margin: 0.01                                  # for `same`: what counts as no difference

Metrics: `mlm_accuracy`, `sop_accuracy`, `nsp_accuracy` (held out) and `downstream_average`
(the table's Avg column over its downstream tasks).

The difference of two held-out accuracies gets a 95% normal interval. When both variants'
per-prediction outcomes are stored (`albert_lab.ablations.statistics.heldout_outcomes`) and were
made on the same held-out examples, the interval is paired over the examples: it is the
interval of the mean per-example difference, and examples both models get right or both get
wrong add nothing to it, so it is far narrower than one of independent samples. Otherwise
(older runs, another tokenizer, one model's score on one task against another's on another, or
chance) it is the interval of independent samples from the held-out sample sizes (masked
predictions for MLM, examples for SOP and NSP, read from the held-out manifests when the
variant was scored), which is wider than a paired one would be. The difference of two
downstream averages is paired by fine-tuning seed (the same seed orders the same examples and
starts the same task head) and gets Student's t-interval over the seeds both variants finished;
with fewer than two such seeds there is no interval and the verdict is `not shown`. Verdicts:

- higher / lower: `shown` when the whole interval lies on the expected side of 0,
  `contradicted` when it lies on the other side, else `not shown`;
- same: `shown` when the interval lies within +-margin, `contradicted` when it lies wholly
  outside it, else `not shown`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from albert_lab.ablations.statistics.downstream_average import (
    DOWNSTREAM_AVERAGE,
    seed_averages,
    stuck_count,
)
from albert_lab.ablations.statistics.heldout_outcomes import paired_outcomes
from albert_lab.ablations.statistics.intervals import (
    paired_difference,
    paired_outcomes_difference,
    proportions_difference,
)
from albert_lab.comparison.gain import points_interval

EXPECTATIONS = ("higher", "lower", "same")
CHANCE = "chance"
# Which held-out set and which count each metric is measured on.
SAMPLES = {"mlm_accuracy": ("sop", "masked_tokens", "masked predictions"),
           "sop_accuracy": ("sop", "examples", "examples"),
           "nsp_accuracy": ("nsp", "examples", "examples"),
           DOWNSTREAM_AVERAGE: (None, "seeds", "fine-tuning seeds")}


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of the paper about a table: `first` - `second` is `expect` on `metric`
    (`second` on `second_metric` when that is given: one model's score on one task against
    another model's on another task, as in Table 6's asymmetry)."""

    text: str
    metric: str
    first: str
    second: str
    expect: str
    margin: float = 0.01
    second_metric: str = ""
    headline: bool = False  # quoted in the table's row of docs/results.md (`summary --readme`)

    @property
    def other_metric(self) -> str:
        """The metric of the second side."""
        return self.second_metric or self.metric


@dataclasses.dataclass(frozen=True)
class Verdict:
    claim: Claim
    difference: float | None  # first - second, as a fraction
    low: float | None
    high: float | None
    samples: int
    outcome: str  # shown, not shown, contradicted, not run
    paired: bool = False  # the interval pairs the two sides example by example (or by seed)
    stuck: int = 0  # downstream: fine-tunes of both sides (task x seed) stuck at one answer


def parse_claims(value: Any, variant_names: Sequence[str], where: str,
                 error: type[Exception]) -> tuple[Claim, ...]:
    """The `claims` list of a table file, checked: known metric, variants and expectation."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise error(f"{where}: claims must be a list")
    claims = []
    for index, item in enumerate(value):
        place = f"{where}: claims[{index}]"
        if not isinstance(item, Mapping) or set(item) - {"claim", "metric", "compare", "expect",
                                                          "margin", "second_metric",
                                                          "headline"}:
            raise error(f"{place}: expected claim, metric, compare, expect, margin, "
                        f"second_metric and headline")
        compare = item.get("compare")
        if not (isinstance(compare, list) and len(compare) == 2):
            raise error(f"{place}: compare must name two variants (or `chance`)")
        unknown = [name for name in compare if name not in (*variant_names, CHANCE)]
        if unknown:
            raise error(f"{place}: no variant named {unknown[0]!r}")
        metrics = item.get("metric")
        metrics = metrics if isinstance(metrics, list) else [metrics]
        for metric in metrics:
            if metric not in SAMPLES:
                raise error(f"{place}: metric must be one of {', '.join(SAMPLES)} (or a list "
                            f"of them), got {metric!r}")
        if DOWNSTREAM_AVERAGE in metrics and CHANCE in compare:
            raise error(f"{place}: {DOWNSTREAM_AVERAGE} has no chance level; compare two "
                        f"variants")
        second_metric = item.get("second_metric", "")
        if second_metric and (len(metrics) != 1 or second_metric not in SAMPLES
                              or DOWNSTREAM_AVERAGE in (metrics[0], second_metric)
                              or CHANCE in compare):
            raise error(f"{place}: second_metric compares one held-out accuracy of the first "
                        f"variant with another of the second (one metric each, not "
                        f"{DOWNSTREAM_AVERAGE}, not chance), got {metrics} and "
                        f"{second_metric!r}")
        if item.get("expect") not in EXPECTATIONS:
            raise error(f"{place}: expect must be one of {', '.join(EXPECTATIONS)}")
        if not isinstance(item.get("headline", False), bool):
            raise error(f"{place}: headline must be true or false, got {item['headline']!r}")
        claims += [Claim(str(item.get("claim", "")), metric, compare[0], compare[1],
                         item["expect"], float(item.get("margin", 0.01)), second_metric,
                         bool(item.get("headline", False)))
                   for metric in metrics]
    return tuple(claims)


def _measured(result: Mapping[str, Any] | None, metric: str) -> tuple[float, int] | None:
    """(accuracy, sample size) of a variant's result, None if not run or not measured."""
    if result is None:
        return None
    value = result["metrics"].get(metric)
    heldout, count, _ = SAMPLES[metric]
    samples = result.get("heldout_counts", {}).get(heldout, {}).get(count, 0)
    return None if value is None or not samples else (float(value), int(samples))


def _interval(claim: Claim, results: Mapping[str, Mapping[str, Any]],
              task_names: Sequence[str], outcomes: Mapping[str, Mapping[str, Any] | None]
              ) -> tuple[float, float, float, int, bool, int] | None:
    """(difference, low, high, samples, paired, stuck fine-tunes) of `claim`'s two sides,
    None if one is not measured."""
    if claim.metric == DOWNSTREAM_AVERAGE:
        first, second = (seed_averages(results[name], task_names) if name in results else {}
                         for name in (claim.first, claim.second))
        seeds = sorted(set(first) & set(second), key=int)
        if not seeds:
            return None
        stuck = sum(stuck_count(results[name], task_names, seeds)
                    for name in (claim.first, claim.second))
        return (*paired_difference([first[seed] for seed in seeds],
                                   [second[seed] for seed in seeds]), len(seeds), True, stuck)
    first = _measured(results.get(claim.first), claim.metric)
    second = (0.5, 0) if claim.second == CHANCE else _measured(results.get(claim.second),
                                                              claim.other_metric)
    if first is None or second is None:
        return None
    if claim.second != CHANCE and not claim.second_metric:
        pair = paired_outcomes(outcomes.get(claim.first), outcomes.get(claim.second),
                               claim.metric, (first[0], second[0]))
        if pair is not None:
            return (*paired_outcomes_difference(*pair), len(pair[0]), True, 0)
    return (*proportions_difference(first[0], first[1], *second), first[1], False, 0)


def judge(claim: Claim, results: Mapping[str, Mapping[str, Any]],
          task_names: Sequence[str] = (),
          outcomes: Mapping[str, Mapping[str, Any] | None] | None = None) -> Verdict:
    """The verdict of `claim` on the finished variants' `results` (by variant name);
    `task_names` are the table's downstream tasks (for `downstream_average`); `outcomes` (by
    variant name, see `albert_lab.ablations.statistics.heldout_outcomes`) pair held-out
    accuracies example by example where they can."""
    measured = _interval(claim, results, task_names, outcomes or {})
    if measured is None:
        return Verdict(claim, None, None, None, 0, "not run")
    difference, low, high, samples, paired, stuck = measured
    if samples < 2 and claim.metric == DOWNSTREAM_AVERAGE:
        outcome = "not shown"  # one seed gives no interval
    elif claim.expect == "same":
        if -claim.margin <= low and high <= claim.margin:
            outcome = "shown"
        elif low > claim.margin or high < -claim.margin:
            outcome = "contradicted"
        else:
            outcome = "not shown"
    else:  # orient the interval so that the expected direction is positive
        toward_low, toward_high = (low, high) if claim.expect == "higher" else (-high, -low)
        outcome = ("shown" if toward_low > 0 else
                   "contradicted" if toward_high < 0 else "not shown")
    return Verdict(claim, difference, low, high, samples, outcome, paired, stuck)


def verdict_record(verdict: Verdict) -> dict[str, Any]:
    """A verdict as `results.json` stores it (differences as fractions)."""
    return {**dataclasses.asdict(verdict.claim), "difference": verdict.difference,
            "low": verdict.low, "high": verdict.high, "samples": verdict.samples,
            "outcome": verdict.outcome, "paired": verdict.paired, "stuck": verdict.stuck}


def verdicts_markdown(verdicts: Sequence[Verdict], of_paper: bool = True) -> str:
    """The verdicts as a markdown table (differences in points: accuracy, or the downstream
    average's scores x100); `of_paper` False heads the claims as the file's own."""
    lines = [f"| {'the paper' if of_paper else 'the file'}'s claim | metric | compared | "
             f"expected | ours: difference, 95% interval | samples | verdict |",
             "|---|---|---|---|---|---:|---|"]
    for verdict in verdicts:
        claim = verdict.claim
        expected = (f"same within {100 * claim.margin:.1f} points"
                    if claim.expect == "same" else claim.expect)
        samples = f"{verdict.samples:,} {SAMPLES[claim.metric][2]}"
        if verdict.paired and claim.metric != DOWNSTREAM_AVERAGE:  # seeds are always paired
            samples += ", paired"
        if verdict.stuck:
            samples += f", {verdict.stuck} fine-tunes stuck"
        if verdict.difference is None:
            measured, samples = "–", "–"
        elif verdict.low == verdict.high:
            measured = f"{100 * verdict.difference:+.1f} (no interval)"
        else:
            measured = points_interval(verdict.difference, verdict.low, verdict.high)
        compared = (f"{claim.first} - {claim.second}" if not claim.second_metric else
                    f"{claim.first} on {claim.metric} - {claim.second} on {claim.other_metric}")
        metric = claim.metric if not claim.second_metric else "(cross-task)"
        lines.append(f"| {claim.text} | {metric} | {compared} | {expected} | {measured} | "
                     f"{samples} | **{verdict.outcome}** |")
    return "\n".join(lines)
