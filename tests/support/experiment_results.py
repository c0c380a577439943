"""Made-up experiment results for the `albert_lab.ablations` tests: a variant's per-seed
downstream scores, a variant's sentence accuracies, two models' held-out outcomes."""

import numpy as np


def variant_scores(name, scores):
    """A finished variant with per-task, per-seed dev scores."""
    return {"name": name, "metrics": {}, "downstream": {
        task: {"metric": "accuracy", "value": sum(by_seed.values()) / len(by_seed),
               "seeds": {seed: {"value": value} for seed, value in by_seed.items()}}
        for task, by_seed in scores.items()}}


def sentence_result(name, label, nsp=None, sop=None):
    """A finished variant with held-out NSP and SOP accuracies and sample sizes."""
    metrics = {"nsp_accuracy": nsp, "sop_accuracy": sop}
    return {"name": name, "label": label, "metrics": metrics,
            "heldout_counts": {"sop": {"examples": 200, "masked_tokens": 5000},
                               "nsp": {"examples": 400}}}


def agreeing_outcomes(first_right=2000, second_loses=200, count=10_000, label_seed=0):
    """Two models' outcomes on `count` predictions: the first right on `first_right`, the
    second right on the same ones but `second_loses` of them."""
    labels = np.random.default_rng(label_seed).integers(5, 1000, count).astype(np.int32)
    first = np.zeros(count, bool)
    first[:first_right] = True
    second = first.copy()
    second[:second_loses] = False
    return ({"mlm_correct": first, "mlm_labels": labels},
            {"mlm_correct": second, "mlm_labels": labels.copy()})
