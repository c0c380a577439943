"""The downstream suite's bag-of-words baseline: naive Bayes over words and word pairs, by
hand on a tiny task, and on the made-up sentiment task (one word of two sets decides the
label) it scores what the words decide."""

from data_helpers import write_sentiment_task
from thresholds import at_least

from albert_lab.comparison.bag_of_words import NaiveBayes, baseline_score


def test_naive_bayes_follows_the_smoothed_counts_by_hand():
    """Train "good film" (pos), "bad film" (neg), "good good" (pos). Features: words and
    word pairs; vocabulary {good, film, bad, good film, bad film, good good} = 6. pos counts
    good 3, film 1, good film 1, good good 1 (total 6); neg counts bad 1, film 1, bad film 1
    (total 3). "film": pos log(2/3) + log((1+1)/(6+6)) = log(1/9); neg log(1/3) +
    log((1+1)/(3+6)) = log(2/27): pos wins. "bad": pos log(2/3 * 1/12) = log(1/18), neg
    log(1/3 * 2/9) = log(2/27): neg wins."""
    model = NaiveBayes(["good film", "bad film", "good good"], ["pos", "neg", "pos"])
    assert model.vocabulary == 6 and model.totals == {"pos": 6, "neg": 3}
    assert model.predict("film") == "pos" and model.predict("bad") == "neg"
    assert model.predict("Bad, BAD!") == "neg"  # lower-cased words, punctuation dropped


def test_the_words_decide_the_sentiment_task(tmp_path, seed, record_property):
    """200 training rows, 64 dev and 40 test rows drawn from the seed (at seed 0 the folder
    of tests/albert_lab/ablations/test_runner.py's downstream test)."""
    folder = str(write_sentiment_task(tmp_path / "feelings", seed))
    at_least(record_property, "dev accuracy", baseline_score(folder, "sst2"), 0.9)
    at_least(record_property, "test accuracy", baseline_score(folder, "sst2", "test"), 0.9)
