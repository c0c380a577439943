"""GLUE metrics: hand-computed values, degenerate inputs, and cross-checks against scipy and
an independent multi-class MCC."""

import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from repository import REPOSITORY
from scipy import stats as scipy_stats
from thresholds import above

from albert_tf.task_data.metrics import (
    accuracy,
    average_ranks,
    f1_score,
    matthews_correlation,
    pearson,
    spearman,
)


def test_accuracy_by_hand():
    # 3 of 5 agree (positions 0, 1, 3).
    assert accuracy([0, 1, 1, 0, 1], [0, 1, 0, 0, 0]) == pytest.approx(0.6)
    assert accuracy(["entailment", "neutral"], ["entailment", "contradiction"]) == 0.5
    assert accuracy(np.array([2, 2]), np.array([2, 2])) == 1.0
    assert isinstance(accuracy([1], [1]), float)


def test_f1_of_either_class_by_hand():
    labels = [1, 1, 1, 0, 0]
    predictions = [1, 0, 0, 0, 0]
    # positive=1: tp=1, fp=0, fn=2 -> 2*1 / (2*1 + 0 + 2) = 0.5
    assert f1_score(labels, predictions) == pytest.approx(0.5)
    # positive=0: tp=2, fp=2 (gold 1 predicted 0), fn=0 -> 4 / (4 + 2) = 2/3
    assert f1_score(labels, predictions, positive=0) == pytest.approx(2 / 3)
    assert f1_score(["no", "yes"], ["yes", "yes"], positive="yes") == pytest.approx(2 / 3)


def test_f1_without_true_positives_is_zero():
    assert f1_score([1, 0], [0, 1]) == 0.0
    assert f1_score([0, 0, 0], [0, 0, 0]) == 0.0


def test_mcc_of_a_two_by_two_confusion_matrix_by_hand():
    # tp=3, fn=2, fp=1, tn=2.
    labels = [1, 1, 1, 1, 1, 0, 0, 0]
    predictions = [1, 1, 1, 0, 0, 1, 0, 0]
    # (tp*tn - fp*fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn)) = (6 - 2) / sqrt(4*5*3*4)
    assert matthews_correlation(labels, predictions) == pytest.approx(4 / math.sqrt(240))


def test_mcc_of_three_classes_by_hand():
    labels = [0, 0, 1, 1, 2, 2]
    predictions = [0, 1, 1, 1, 2, 0]
    # s=6, c=4, t=(2,2,2), p=(2,3,1): sum p*t = 12, sum p^2 = 14, sum t^2 = 12.
    # (4*6 - 12) / sqrt((36 - 14) * (36 - 12)) = 12 / sqrt(528)
    assert matthews_correlation(labels, predictions) == pytest.approx(12 / math.sqrt(528))


def test_mcc_extremes_and_zero_denominator():
    assert matthews_correlation([0, 1, 0, 1], [0, 1, 0, 1]) == pytest.approx(1.0)
    assert matthews_correlation([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    # One predicted class (or one gold class) makes a margin product 0: score 0, not NaN.
    assert matthews_correlation([0, 1, 0, 1], [1, 1, 1, 1]) == 0.0
    assert matthews_correlation([1, 1, 1], [0, 1, 0]) == 0.0
    # Class labels need not be numbers.
    assert matthews_correlation(["ok", "bad"], ["ok", "bad"]) == pytest.approx(1.0)


def _brute_force_mcc(labels, predictions):
    """MCC as the correlation of one-hot gold and prediction matrices (Gorodkin's definition
    via covariances), with explicit loops over examples and classes."""
    classes = sorted(set(labels) | set(predictions))
    n = len(labels)
    gold = [[1.0 if label == k else 0.0 for k in classes] for label in labels]
    pred = [[1.0 if p == k else 0.0 for k in classes] for p in predictions]

    def covariance(a, b):
        total = 0.0
        for k in range(len(classes)):
            mean_a = sum(row[k] for row in a) / n
            mean_b = sum(row[k] for row in b) / n
            total += sum((a[i][k] - mean_a) * (b[i][k] - mean_b) for i in range(n))
        return total

    denominator = math.sqrt(covariance(gold, gold) * covariance(pred, pred))
    return 0.0 if denominator == 0 else covariance(gold, pred) / denominator


def test_mcc_matches_brute_force_for_three_classes(seed, record_property):
    smallest = 1.0
    for draw in range(5):
        rng = np.random.default_rng(5 * seed + draw)
        labels = rng.integers(0, 3, size=40).tolist()
        # Mostly right, so the value is far from 0 and a wrong formula shows.
        predictions = [label if rng.random() < 0.6 else int(rng.integers(0, 3))
                       for label in labels]
        expected = _brute_force_mcc(labels, predictions)
        smallest = min(smallest, abs(expected))
        assert matthews_correlation(labels, predictions) == pytest.approx(expected, abs=1e-12)
    above(record_property, "smallest |MCC| of the 5 draws", smallest, 0.1)


def test_mcc_agrees_with_scikit_learn_when_installed():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, size=60)
    predictions = np.where(rng.random(60) < 0.5, labels, rng.integers(0, 4, size=60))
    assert matthews_correlation(labels, predictions) == pytest.approx(
        sklearn_metrics.matthews_corrcoef(labels, predictions), abs=1e-12)


def test_pearson_by_hand():
    # Centered: x -> (-1.5, -0.5, 0.5, 1.5), y -> (-0.5, -1.5, 1.5, 0.5);
    # sum of products 3, sums of squares 5 and 5 -> 3 / 5.
    assert pearson([1, 2, 3, 4], [2, 1, 4, 3]) == pytest.approx(0.6)
    assert pearson([1, 2, 3], [6, 4, 2]) == pytest.approx(-1.0)


def test_average_ranks_share_ties():
    # Sorted: 1 -> rank 1, 2 -> rank 2, the three 3s -> ranks 3, 4, 5, averaged to 4.
    assert average_ranks(np.array([3.0, 1.0, 3.0, 3.0, 2.0])).tolist() == [4, 1, 4, 4, 2]


def test_spearman_with_ties_by_hand():
    # Ranks: x -> (1, 2.5, 2.5, 4), y -> (1, 3, 2, 4); centered x (-1.5, 0, 0, 1.5),
    # y (-1.5, 0.5, -0.5, 1.5): products 4.5, squares 4.5 and 5 -> 4.5 / sqrt(22.5) = sqrt(0.9).
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(math.sqrt(0.9))


def test_spearman_sees_only_order():
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    y = [1.0, 8.0, 27.0, 64.0, 1000.0]
    assert spearman(x, y) == pytest.approx(1.0)
    assert pearson(x, y) < 0.9


@pytest.mark.parametrize("correlation", [pearson, spearman])
def test_constant_side_scores_zero_not_nan(correlation):
    assert correlation([2.5, 2.5, 2.5], [0.0, 1.0, 4.0]) == 0.0
    assert correlation([0.0, 1.0, 4.0], [3.0, 3.0, 3.0]) == 0.0
    assert correlation([1.0], [2.0]) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_correlations_match_scipy_on_data_with_ties(seed):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 6, size=50).astype(float)  # STS-B-like 0..5 with many ties
    predicted = np.round(gold + rng.normal(0.0, 1.5, size=50))  # rounded: ties here too
    assert len(np.unique(predicted)) < 50
    assert pearson(predicted, gold) == pytest.approx(
        scipy_stats.pearsonr(predicted, gold)[0], abs=1e-12)
    assert spearman(predicted, gold) == pytest.approx(
        scipy_stats.spearmanr(predicted, gold)[0], abs=1e-12)


@pytest.mark.parametrize("metric", [accuracy, f1_score, matthews_correlation, pearson, spearman])
def test_inputs_of_different_lengths_are_refused(metric):
    with pytest.raises(ValueError, match=r"3 values but .* 2"):
        metric([1, 0, 1], [1, 0])


@pytest.mark.parametrize("metric", [accuracy, f1_score, matthews_correlation, pearson, spearman])
def test_empty_inputs_are_refused(metric):
    with pytest.raises(ValueError, match="empty"):
        metric([], [])


def test_two_dimensional_inputs_are_refused():
    with pytest.raises(ValueError, match=r"shape \(2, 2\).*1-D"):
        accuracy([[0, 1], [1, 0]], [[0, 1], [1, 0]])


def test_metric_modules_do_not_import_tensorflow():
    # A fresh interpreter: this test session has TensorFlow loaded already (conftest).
    code = ("import sys, albert_tf.task_data.metrics, albert_tf.task_data.squad_evaluation; "
            "sys.exit('tensorflow' in sys.modules)")
    repository = pathlib.Path(REPOSITORY)
    assert subprocess.run([sys.executable, "-c", code], cwd=repository).returncode == 0
