"""Each variant's right or wrong answer on every held-out prediction, kept beside its result so
that two variants scored on the same held-out examples are compared example by example.

`<run folder>/heldout_outcomes.npz` holds, for the model the run trained (never a sentence
probe), `mlm_correct` / `mlm_labels`, one per masked prediction of the held-out SOP set (the
set the reports' MLM accuracy comes from), and for a model with a sentence head `sop_correct`
/ `sop_labels` and `nsp_correct` / `nsp_labels`, one per example of each held-out set
(`albert_tf.training.evaluation.example_outcomes` makes them). Two variants are paired on a
metric only when their label arrays are equal (the same examples, masked the same way, in
the same order) and each one's outcomes reproduce the accuracy its result reports; otherwise
the comparison stays one of independent samples.

    save_outcomes(run_folder, {"mlm_correct": ..., "mlm_labels": ...})
    pair = paired_outcomes(load_outcomes(a), load_outcomes(b), "mlm_accuracy")
    above_unigram_plateau(load_outcomes(a))  # is the model's MLM better than no context?
"""

from __future__ import annotations

import io
import os
from typing import Mapping

import numpy as np

from albert_lab.ablations.statistics.intervals import paired_outcomes_difference
from albert_tf.io.files import atomic_write_bytes

OUTCOMES_FILE = "heldout_outcomes.npz"
# Which arrays of the file hold each held-out metric's outcomes.
METRIC_PREFIXES = {"mlm_accuracy": "mlm", "sop_accuracy": "sop", "nsp_accuracy": "nsp"}


def save_outcomes(folder: str, outcomes: Mapping[str, np.ndarray]) -> None:
    """Writes `outcomes` (name -> array) to `folder`'s outcomes file, whole or not at all."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **outcomes)
    atomic_write_bytes(os.path.join(folder, OUTCOMES_FILE), buffer.getvalue())


def load_outcomes(folder: str) -> dict[str, np.ndarray] | None:
    """The outcomes stored in `folder`, or None when it has none (an older run)."""
    path = os.path.join(folder, OUTCOMES_FILE)
    if not os.path.exists(path):
        return None
    with np.load(path) as stored:
        return {name: stored[name] for name in stored.files}


def paired_outcomes(first: Mapping[str, np.ndarray] | None,
                    second: Mapping[str, np.ndarray] | None, metric: str,
                    accuracies: tuple[float, float] | None = None
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """The two variants' right/wrong outcomes on `metric`'s held-out predictions when they
    were made on the same examples (equal labels) and, given `accuracies` (each variant's
    reported value), reproduce them; None when they cannot be paired."""
    prefix = METRIC_PREFIXES.get(metric)
    if prefix is None or first is None or second is None:
        return None
    correct, labels = f"{prefix}_correct", f"{prefix}_labels"
    if not all(name in side for side in (first, second) for name in (correct, labels)):
        return None
    if not len(first[labels]) or not np.array_equal(first[labels], second[labels]):
        return None  # np.array_equal is False for arrays of different shapes too
    pair = (np.asarray(first[correct], bool), np.asarray(second[correct], bool))
    if accuracies is not None and any(abs(float(outcomes.mean()) - accuracy) > 1e-4
                                      for outcomes, accuracy in zip(pair, accuracies)):
        return None
    return pair


def unigram_plateau(labels: np.ndarray) -> tuple[int, np.ndarray]:
    """The masked-LM plateau on the held-out predictions whose targets are `labels`: the most
    frequent target id (the lowest among ties) and the right/wrong outcomes of always
    predicting it. No model that ignores its input does better on these predictions; a
    model stuck on the unigram plateau predicts about this."""
    labels = np.asarray(labels)
    if not len(labels):
        raise ValueError("unigram_plateau needs at least one held-out prediction")
    token = int(np.argmax(np.bincount(labels)))
    return token, labels == token


def above_unigram_plateau(outcomes: Mapping[str, np.ndarray] | None
                          ) -> dict[str, float | int | bool] | None:
    """A variant's held-out MLM accuracy against the unigram plateau of the same predictions,
    paired over them: {"token", "plateau", "accuracy", "difference", "low", "high", "above"}
    (fractions; `above`: the 95% interval lies above the plateau), or None without MLM
    outcomes."""
    if outcomes is None or len(outcomes.get("mlm_labels", ())) < 2:
        return None
    token, plateau = unigram_plateau(outcomes["mlm_labels"])
    correct = np.asarray(outcomes["mlm_correct"], bool)
    difference, low, high = paired_outcomes_difference(correct, plateau)
    return {"token": token, "plateau": float(plateau.mean()), "accuracy": float(correct.mean()),
            "predictions": len(correct), "difference": difference, "low": low, "high": high,
            "above": low > 0}
