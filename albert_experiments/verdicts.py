"""The paper's claims of a table, judged on our held-out accuracies with 95% intervals.

A table file lists its claims:

    claims:
      - claim: "sharing every layer costs accuracy"   # what the paper says
        metric: mlm_accuracy                          # mlm_accuracy, sop_accuracy, nsp_accuracy
        compare: [not_shared, all_shared]             # first - second; `chance` = 50%
        expect: higher                                # higher, lower or same
        margin: 0.01                                  # for `same`: what counts as no difference

The difference of two accuracies gets a 95% normal interval from the held-out sample sizes
(masked predictions for MLM, examples for SOP and NSP, read from the held-out manifests when
the variant was scored). Both variants are scored on the same held-out examples, so their
errors are positively correlated and the interval of independent samples used here is wider
than a paired one would be: a claim shown is shown with room to spare; one not shown might be
shown by a paired test over the examples. Verdicts:

- higher / lower: `shown` when the whole interval lies on the expected side of 0,
  `contradicted` when it lies on the other side, else `not shown`;
- same: `shown` when the interval lies within +-margin, `contradicted` when it lies wholly
  outside it, else `not shown`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

EXPECTATIONS = ("higher", "lower", "same")
CHANCE = "chance"
Z_95 = 1.959964
# Which held-out set and which count each metric is measured on.
SAMPLES = {"mlm_accuracy": ("sop", "masked_tokens", "masked predictions"),
           "sop_accuracy": ("sop", "examples", "examples"),
           "nsp_accuracy": ("nsp", "examples", "examples")}


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of the paper about a table: `first` - `second` is `expect` on `metric`."""

    text: str
    metric: str
    first: str
    second: str
    expect: str
    margin: float = 0.01


@dataclasses.dataclass(frozen=True)
class Verdict:
    claim: Claim
    difference: float | None  # first - second, as a fraction
    low: float | None
    high: float | None
    samples: int
    outcome: str  # shown, not shown, contradicted, not run


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
        if not isinstance(item, Mapping) or set(item) - {"claim", "metric", "compare",
                                                          "expect", "margin"}:
            raise error(f"{place}: expected claim, metric, compare, expect and margin")
        compare = item.get("compare")
        if not (isinstance(compare, list) and len(compare) == 2):
            raise error(f"{place}: compare must name two variants (or `chance`)")
        unknown = [name for name in compare if name not in (*variant_names, CHANCE)]
        if unknown:
            raise error(f"{place}: no variant named {unknown[0]!r}")
        if item.get("metric") not in SAMPLES:
            raise error(f"{place}: metric must be one of {', '.join(SAMPLES)}")
        if item.get("expect") not in EXPECTATIONS:
            raise error(f"{place}: expect must be one of {', '.join(EXPECTATIONS)}")
        claims.append(Claim(str(item.get("claim", "")), item["metric"], compare[0],
                            compare[1], item["expect"], float(item.get("margin", 0.01))))
    return tuple(claims)


def _measured(result: Mapping[str, Any] | None, metric: str) -> tuple[float, int] | None:
    """(accuracy, sample size) of a variant's result, None if not run or not measured."""
    if result is None:
        return None
    value = result["metrics"].get(metric)
    heldout, count, _ = SAMPLES[metric]
    samples = result.get("heldout_counts", {}).get(heldout, {}).get(count, 0)
    return None if value is None or not samples else (float(value), int(samples))


def judge(claim: Claim, results: Mapping[str, Mapping[str, Any]]) -> Verdict:
    """The verdict of `claim` on the finished variants' `results` (by variant name)."""
    first = _measured(results.get(claim.first), claim.metric)
    second = (0.5, 0) if claim.second == CHANCE else _measured(results.get(claim.second),
                                                              claim.metric)
    if first is None or second is None:
        return Verdict(claim, None, None, None, 0, "not run")
    (p1, n1), (p2, n2) = first, second
    variance = p1 * (1 - p1) / n1 + (p2 * (1 - p2) / n2 if n2 else 0.0)
    difference = p1 - p2
    half_width = Z_95 * math.sqrt(variance)
    low, high = difference - half_width, difference + half_width
    if claim.expect == "same":
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
    return Verdict(claim, difference, low, high, n1, outcome)


def verdicts_markdown(verdicts: Sequence[Verdict]) -> str:
    """The verdicts as a markdown table (differences in accuracy points)."""
    lines = ["| the paper's claim | metric | compared | expected | ours: difference, 95% "
             "interval | held-out samples | verdict |", "|---|---|---|---|---|---:|---|"]
    for verdict in verdicts:
        claim = verdict.claim
        expected = (f"same within {100 * claim.margin:.1f} points"
                    if claim.expect == "same" else claim.expect)
        if verdict.difference is None:
            measured, samples = "–", "–"
        else:
            measured = (f"{100 * verdict.difference:+.1f} [{100 * verdict.low:+.1f}, "
                        f"{100 * verdict.high:+.1f}]")
            samples = f"{verdict.samples:,} {SAMPLES[claim.metric][2]}"
        lines.append(f"| {claim.text} | {claim.metric} | {claim.first} - {claim.second} | "
                     f"{expected} | {measured} | {samples} | **{verdict.outcome}** |")
    return "\n".join(lines)
