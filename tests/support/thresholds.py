"""Assertions of a bound on a random quantity that also record the quantity.

A test whose assertion bounds a quantity that depends on its random draws (initial weights,
sampled data, a training run) states the bound through `above`, `at_least`, `below` or
`at_most`: the measured value and the bound become a property of the test (pytest's
`record_property`, which `--junitxml` writes), so `scripts/check_thresholds.py` can run it
over 50 seeds (`--seeds 0:50`) and report how close to its bound the quantity ever comes.

Example:
    above(record_property, "pooled_spread", spreads["pooled_spread"], 0.2)
"""

from __future__ import annotations

import json
import operator

SIDES = {"above": (operator.gt, "more than"), "at least": (operator.ge, "at least"),
         "below": (operator.lt, "less than"), "at most": (operator.le, "at most")}


def bounded(record_property, name: str, value: float, side: str, bound: float) -> None:
    """Records `value` with its bound and asserts `value` is on the `side` of `bound`."""
    record_property(name, json.dumps({"value": float(value), "side": side, "bound": bound}))
    holds, words = SIDES[side]
    assert holds(value, bound), f"{name} = {value}, expected {words} {bound}"


def above(record_property, name: str, value: float, bound: float) -> None:
    bounded(record_property, name, value, "above", bound)


def at_least(record_property, name: str, value: float, bound: float) -> None:
    bounded(record_property, name, value, "at least", bound)


def below(record_property, name: str, value: float, bound: float) -> None:
    bounded(record_property, name, value, "below", bound)


def at_most(record_property, name: str, value: float, bound: float) -> None:
    bounded(record_property, name, value, "at most", bound)
