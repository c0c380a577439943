"""The paper's claims judged (`albert_lab.ablations.statistics.verdicts`): the claims parsed and
checked, held-out accuracies compared independently or paired by example, downstream
averages paired by seed, cross-task and chance claims."""

from __future__ import annotations

import os

import numpy as np
import pytest
from experiment_results import agreeing_outcomes, sentence_result, variant_scores

from albert_lab.ablations.statistics.downstream_average import DOWNSTREAM_AVERAGE
from albert_lab.ablations.statistics.verdicts import Claim, judge, parse_claims, verdicts_markdown
from albert_lab.ablations.table_spec import ExperimentError


def _result(name, accuracy, masked_tokens=10_000, metric="mlm_accuracy"):
    return {"name": name, "metrics": {metric: accuracy},
            "heldout_counts": {"sop": {"masked_tokens": masked_tokens, "examples": 400},
                               "nsp": {"examples": 400}}}


def test_verdicts_use_the_normal_interval_of_two_accuracies():
    from albert_lab.ablations.statistics.verdicts import Claim, judge
    results = {"a": _result("a", 0.20), "b": _result("b", 0.18)}
    verdict = judge(Claim("a beats b", "mlm_accuracy", "a", "b", "higher"), results)
    # By hand: se = sqrt(.2 * .8 / 1e4 + .18 * .82 / 1e4) = 0.0055426; 1.96 se = 0.010864.
    assert verdict.difference == pytest.approx(0.02)
    assert (verdict.low, verdict.high) == pytest.approx((0.009136, 0.030864), abs=1e-5)
    assert verdict.outcome == "shown" and verdict.samples == 10_000
    assert judge(Claim("", "mlm_accuracy", "a", "b", "lower"), results).outcome == \
        "contradicted"
    close = {"a": _result("a", 0.20), "b": _result("b", 0.195)}
    assert judge(Claim("", "mlm_accuracy", "a", "b", "higher"), close).outcome == "not shown"
    assert judge(Claim("", "mlm_accuracy", "a", "b", "same", 0.02), close).outcome == "shown"
    assert judge(Claim("", "mlm_accuracy", "a", "b", "same", 0.001), results).outcome == \
        "contradicted"
    assert judge(Claim("", "mlm_accuracy", "a", "missing", "same"), results).outcome == \
        "not run"


def test_verdicts_pair_the_outcomes_of_the_same_held_out_examples(tmp_path):
    from albert_lab.ablations.statistics.heldout_outcomes import load_outcomes, save_outcomes
    from albert_lab.ablations.statistics.verdicts import Claim, judge, verdicts_markdown
    first, second = agreeing_outcomes()
    for name, outcomes in (("a", first), ("b", second)):
        os.makedirs(tmp_path / name)
        save_outcomes(str(tmp_path / name), outcomes)
    outcomes = {name: load_outcomes(str(tmp_path / name)) for name in ("a", "b", "c")}
    assert outcomes["c"] is None
    np.testing.assert_array_equal(outcomes["b"]["mlm_correct"], second["mlm_correct"])
    results = {"a": _result("a", 0.20), "b": _result("b", 0.18)}
    claim = Claim("a beats b", "mlm_accuracy", "a", "b", "higher")
    paired = judge(claim, results, (), outcomes)
    unpaired = judge(claim, results)
    # The same difference; the paired interval is the per-example one, under a third as wide.
    assert paired.paired and not unpaired.paired and paired.samples == 10_000
    assert paired.difference == pytest.approx(unpaired.difference)
    assert paired.high - paired.low == pytest.approx(2 * 1.959964 * 0.1400070 / 100, abs=1e-6)
    assert paired.high - paired.low < 0.3 * (unpaired.high - unpaired.low)
    assert "10,000 masked predictions, paired |" in verdicts_markdown([paired])
    assert "10,000 masked predictions |" in verdicts_markdown([unpaired])
    # Not paired: other examples (labels differ), outcomes that do not give the reported
    # accuracy, a metric without stored outcomes, a variant without them.
    other = dict(outcomes, b={**outcomes["b"], "mlm_labels": outcomes["b"]["mlm_labels"] + 1})
    assert not judge(claim, results, (), other).paired
    wrong = {"a": _result("a", 0.21), "b": _result("b", 0.18)}
    assert not judge(claim, wrong, (), outcomes).paired
    sop = {name: _result(name, value, metric="sop_accuracy")
           for name, value in (("a", 0.6), ("b", 0.5))}
    assert not judge(Claim("", "sop_accuracy", "a", "b", "higher"), sop, (), outcomes).paired
    assert not judge(claim, results, (), {"a": outcomes["a"]}).paired


def test_a_claim_against_chance_uses_the_sentence_examples():
    from albert_lab.ablations.statistics.verdicts import Claim, judge
    results = {"sop": _result("sop", 0.58, metric="nsp_accuracy")}
    verdict = judge(Claim("", "nsp_accuracy", "sop", "chance", "higher"), results)
    # se = sqrt(.58 * .42 / 400) = 0.024678; the interval is 0.08 +- 0.048368.
    assert (verdict.low, verdict.high) == pytest.approx((0.031632, 0.128368), abs=1e-5)
    assert verdict.outcome == "shown" and verdict.samples == 400


@pytest.mark.parametrize("claim, message", [
    ({"metric": "mlm_accuracy", "compare": ["a", "nowhere"], "expect": "higher"},
     "no variant named 'nowhere'"),
    ({"metric": "f1", "compare": ["a", "b"], "expect": "higher"}, "metric must be one of"),
    ({"metric": "mlm_accuracy", "compare": ["a", "b"], "expect": "better"},
     "expect must be one of"),
    ({"metric": "mlm_accuracy", "compare": ["a"], "expect": "higher"}, "compare must name two"),
    ({"metric": "mlm_accuracy", "compare": ["a", "b"], "expect": "higher", "headline": "yes"},
     "headline must be true or false, got 'yes'"),
])
def test_bad_claims_are_named(claim, message):
    from albert_lab.ablations.statistics.verdicts import parse_claims
    from albert_lab.ablations.table_spec import ExperimentError
    with pytest.raises(ExperimentError, match=message):
        parse_claims([claim], ["a", "b"], "table.yaml", ExperimentError)


def test_downstream_claims_pair_the_variants_by_seed():
    results = {"a": variant_scores("a", {"t1": {"1": 0.80, "2": 0.82, "3": 0.90},
                                   "t2": {"1": 0.60, "2": 0.62, "3": 0.60}}),
               "b": variant_scores("b", {"t1": {"1": 0.70, "2": 0.74, "3": 0.80},
                                   "t2": {"1": 0.60, "2": 0.60, "3": 0.56}})}
    claim = Claim("a beats b", DOWNSTREAM_AVERAGE, "a", "b", "higher")
    verdict = judge(claim, results, ["t1", "t2"])
    # Per-seed averages a: .70 .72 .75, b: .65 .67 .68 -> differences .05 .05 .07:
    # mean 0.056667, sd 0.011547, t(2) 4.303 -> half width 0.028687.
    assert (verdict.difference, verdict.low, verdict.high) == pytest.approx(
        (0.056667, 0.027980, 0.085354), abs=1e-5)
    assert verdict.outcome == "shown" and verdict.samples == 3
    assert judge(Claim("", DOWNSTREAM_AVERAGE, "a", "b", "lower"), results,
                 ["t1", "t2"]).outcome == "contradicted"
    # Seeds that only one side finished are left out; one common seed gives no interval.
    del results["b"]["downstream"]["t1"]["seeds"]["2"]
    del results["b"]["downstream"]["t1"]["seeds"]["3"]
    single = judge(claim, results, ["t1", "t2"])
    assert single.samples == 1 and single.outcome == "not shown"
    assert "(no interval)" in verdicts_markdown([single])
    assert judge(claim, {"a": results["a"]}, ["t1", "t2"]).outcome == "not run"
    # A file of our own (no paper table) heads the claims as its own.
    assert verdicts_markdown([single]).startswith("| the paper's claim |")
    assert verdicts_markdown([single], of_paper=False).startswith("| the file's claim |")


def test_a_claim_may_name_several_metrics_but_downstream_has_no_chance():
    claims = parse_claims([{"claim": "x", "metric": [DOWNSTREAM_AVERAGE, "mlm_accuracy"],
                            "compare": ["a", "b"], "expect": "higher"}], ["a", "b"], "t.yaml",
                          ExperimentError)
    assert [claim.metric for claim in claims] == [DOWNSTREAM_AVERAGE, "mlm_accuracy"]
    with pytest.raises(ExperimentError, match="has no chance level"):
        parse_claims([{"metric": DOWNSTREAM_AVERAGE, "compare": ["a", "chance"],
                       "expect": "higher"}], ["a"], "t.yaml", ExperimentError)


def test_a_cross_task_claim_compares_one_models_task_with_anothers():
    results = {"sop": sentence_result("sop", "SOP", nsp=0.60, sop=0.80),
               "nsp": sentence_result("nsp", "NSP", nsp=0.90, sop=0.52)}
    claims = parse_claims([{"claim": "one-way", "metric": "nsp_accuracy",
                            "second_metric": "sop_accuracy", "compare": ["sop", "nsp"],
                            "expect": "higher"}], ["sop", "nsp"], "t.yaml", ExperimentError)
    verdict = judge(claims[0], results)
    # SOP model on NSP: .60 of 400; NSP model on SOP: .52 of 200.
    # se = sqrt(.6 * .4 / 400 + .52 * .48 / 200) = sqrt(.001848) = 0.042988;
    # 1.96 se = 0.084256.
    assert (verdict.difference, verdict.low, verdict.high) == pytest.approx(
        (0.08, -0.004256, 0.164256), abs=1e-5)
    assert verdict.outcome == "not shown" and verdict.samples == 400
    assert "| sop on nsp_accuracy - nsp on sop_accuracy |" in verdicts_markdown([verdict])
    with pytest.raises(ExperimentError, match="second_metric compares one held-out accuracy"):
        parse_claims([{"metric": "nsp_accuracy", "second_metric": DOWNSTREAM_AVERAGE,
                       "compare": ["sop", "nsp"], "expect": "higher"}], ["sop", "nsp"],
                     "t.yaml", ExperimentError)
