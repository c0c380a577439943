"""SQuAD exact match and F1: normalization, token F1, v1.1 and v2.0 dataset scores and the
no-answer threshold search, all against values worked out by hand in the comments."""

import math
import random

import pytest

from albert_tf.task_data.examples import SquadExample
from albert_tf.task_data.squad_evaluation import (
    best_no_answer_threshold,
    exact_match,
    gold_texts,
    normalize_answer,
    squad_scores,
    token_f1,
)


def _question(qas_id, *answer_texts, impossible=False):
    return SquadExample(qas_id=qas_id, question="?", context="",
                        answers=tuple((text, 0) for text in answer_texts),
                        is_impossible=impossible)


@pytest.mark.parametrize("text, normalized", [
    # lower -> "the  cat's, an apple!"; punctuation -> "the  cats an apple";
    # articles -> "   cats   apple"; whitespace -> "cats apple".
    ("The  Cat's, an apple!", "cats apple"),
    # Articles only as whole words.
    ("Theater: another Answer", "theater another answer"),
    # Punctuation goes before articles: "a-team" -> "ateam", no article left to remove.
    ("A-Team", "ateam"),
    # "The." -> "the" -> "" once the punctuation is gone.
    ("The.", ""),
    ("\tNew\n York  ", "new york"),
    # Only ASCII punctuation is removed; the em dash stays.
    ("café—ok", "café—ok"),
])
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_compares_normalized_text():
    assert exact_match("The Cat!", "cat") == 1.0
    assert exact_match("cat", "cats") == 0.0
    assert exact_match("", "the") == 1.0  # both normalize to ""


def test_token_f1_by_hand():
    # "cat sat" vs "cat sat on": 2 shared; precision 2/2, recall 2/3 -> 2*(2/3)/(5/3) = 0.8.
    assert token_f1("the cat sat", "a cat sat on") == pytest.approx(0.8)
    # Multisets: {cat:2, dog:1} & {cat:2} share 2 tokens: precision 2/3, recall 2/2 -> 0.8
    # (as sets they would share 1 token: 1/3 and 1/2 -> 0.4).
    assert token_f1("cat cat dog", "cat cat") == pytest.approx(0.8)
    # {cat:3} & {cat:1} share 1: precision 1/3, recall 1 -> 0.5.
    assert token_f1("cat cat cat", "cat") == pytest.approx(0.5)
    assert token_f1("red", "blue") == 0.0
    # Symmetric.
    assert token_f1("a cat sat on", "the cat sat") == pytest.approx(0.8)


def test_token_f1_of_empty_texts_follows_v2():
    assert token_f1("", "") == 1.0
    assert token_f1("The", "") == 1.0  # normalizes to no tokens
    assert token_f1("", "Paris") == 0.0
    assert token_f1("Paris", "") == 0.0


def test_gold_texts_drop_answers_that_normalize_to_nothing():
    assert gold_texts(_question("q", "the", "Paris")) == ["Paris"]
    assert gold_texts(_question("q", "a", "!")) == [""]
    assert gold_texts(_question("q", impossible=True)) == [""]


def _v1_examples():
    return [
        _question("q1", "Denver Broncos", "the Denver Broncos"),
        _question("q2", "1990"),
        _question("q3", "Santa Clara"),
        _question("q4", "gold"),
    ]


def test_v1_scores_by_hand():
    predictions = {
        "q1": "Broncos",       # EM 0; "broncos" vs "denver broncos": P 1, R 1/2 -> F1 2/3
        "q2": "in 1990",       # EM 0; P 1/2, R 1 -> F1 2/3
        "q3": "santa clara.",  # EM 1, F1 1
        # q4 has no prediction: 0 and 0
        "not-a-question": "ignored",
    }
    scores = squad_scores(_v1_examples(), predictions)
    assert scores["exact"] == pytest.approx(25.0)                 # 100 * 1/4
    assert scores["exact_match"] == scores["exact"]
    assert scores["f1"] == pytest.approx(100 * (7 / 3) / 4)       # 58.33...
    assert scores["total"] == 4
    assert scores["missing"] == 1
    assert not any(key.startswith(("HasAns", "NoAns", "best")) for key in scores)


def _v2_examples():
    return [
        _question("a1", "Normandy", "in Normandy"),
        _question("a2", "10th century"),
        _question("u1", impossible=True),
        _question("u2", impossible=True),
        _question("u3", impossible=True),
    ]


def test_v2_scores_with_unanswerable_and_missing_by_hand():
    predictions = {
        "a1": "Normandy",                      # EM 1, F1 1
        "a2": "the 10th and 11th centuries",   # 4 tokens, 1 shared with 2: P 1/4, R 1/2 -> 1/3
        "u1": "",                              # no answer, right: 1, 1
        "u2": "France",                        # answered an unanswerable question: 0, 0
        # u3 missing: 0, 0 (a prediction of "" would have scored 1)
    }
    scores = squad_scores(_v2_examples(), predictions)
    assert scores["exact"] == pytest.approx(40.0)                 # 2 of 5
    assert scores["f1"] == pytest.approx(100 * (7 / 3) / 5)       # (1 + 1/3 + 1) / 5
    assert (scores["total"], scores["missing"]) == (5, 1)
    assert scores["HasAns_exact"] == pytest.approx(50.0)
    assert scores["HasAns_f1"] == pytest.approx(100 * (4 / 3) / 2)
    assert scores["HasAns_total"] == 2
    assert scores["NoAns_exact"] == pytest.approx(100 / 3)
    assert scores["NoAns_f1"] == pytest.approx(100 / 3)
    assert scores["NoAns_total"] == 3


def _threshold_case():
    """Five questions: (example, prediction, no-answer probability).

    | id | answerable | own EM | own F1 | EM/F1 of "" | probability |
    | A  | yes        | 1      | 1      | 0           | 0.1 |
    | C  | yes        | 0      | 0.8    | 0           | 0.3 |
    | B  | no         | 0      | 0      | 1           | 0.6 |
    | E  | yes        | 0      | 0      | 0           | 0.6 |
    | D  | no         | 1      | 1      | 1           | 0.9 |
    """
    examples = [_question("A", "cat"), _question("B", impossible=True),
                _question("C", "big red dog"), _question("D", impossible=True),
                _question("E", "tree")]
    predictions = {"A": "cat", "B": "dog", "C": "red dog", "D": "", "E": "bush"}
    probabilities = {"A": 0.1, "B": 0.6, "C": 0.3, "D": 0.9, "E": 0.6}
    return examples, predictions, probabilities


def test_threshold_search_by_hand():
    examples, predictions, probabilities = _threshold_case()
    scores = squad_scores(examples, predictions, probabilities)
    # Questions with probability <= t keep their prediction, the others answer "".
    #   t     EM total            F1 total
    #   -inf  B + D = 2           2
    #   0.1   + A (1 - 0) = 3     3
    #   0.3   + C (0 - 0) = 3     + C (0.8 - 0) = 3.8
    #   0.6   + B (0 - 1) = 2     2.8       (E: 0 - 0)
    #   0.9   + D (1 - 1) = 2     2.8
    assert scores["best_exact"] == pytest.approx(60.0)
    assert scores["best_exact_threshold"] == 0.1
    assert scores["best_f1"] == pytest.approx(76.0)
    assert scores["best_f1_threshold"] == 0.3
    # Default threshold 1.0: nobody abstains. EM A, D -> 40; F1 1 + 0.8 + 1 -> 56.
    assert scores["exact"] == pytest.approx(40.0)
    assert scores["f1"] == pytest.approx(56.0)


def test_no_answer_threshold_replaces_predictions_before_scoring():
    examples, predictions, probabilities = _threshold_case()
    scores = squad_scores(examples, predictions, probabilities, no_answer_threshold=0.5)
    # B, E, D (> 0.5) answer "": A 1, B 1, C 0/0.8, D 1, E 0.
    assert scores["exact"] == pytest.approx(60.0)
    assert scores["f1"] == pytest.approx(76.0)
    assert scores["HasAns_exact"] == pytest.approx(100 / 3)      # A of A, C, E
    assert scores["HasAns_f1"] == pytest.approx(60.0)            # (1 + 0.8 + 0) / 3
    assert scores["NoAns_exact"] == pytest.approx(100.0)         # B and D
    # The threshold search still starts from the predictions themselves.
    assert scores["best_exact"] == pytest.approx(60.0)
    assert scores["best_f1_threshold"] == 0.3


def test_tied_probabilities_switch_together_and_missing_questions_count():
    examples = [_question("X", "yes"), _question("Y", impossible=True),
                _question("Z", impossible=True), _question("W", "later")]
    predictions = {"X": "yes", "Y": "no", "Z": ""}  # W missing: 0 at every threshold
    probabilities = {"X": 0.5, "Y": 0.5, "Z": 0.2}
    scores = squad_scores(examples, predictions, probabilities)
    # -inf: Y + Z = 2; 0.2: Z (1 - 1) -> 2; 0.5: X (+1) and Y (-1) together -> 2.
    # Nothing beats answering "" everywhere, so the threshold stays -inf. Scanning X alone
    # first would have claimed 3 at 0.5, which no threshold gives.
    assert scores["best_exact"] == pytest.approx(50.0)           # 2 of 4 (W counts)
    assert scores["best_exact_threshold"] == -math.inf
    assert scores["missing"] == 1


@pytest.mark.parametrize("seed", range(20))
def test_threshold_search_matches_trying_every_threshold(seed):
    rng = random.Random(seed)
    words = ["red", "dog", "cat", "big", "sat"]
    examples, predictions, probabilities = [], {}, {}
    for index in range(8):
        qas_id = f"q{index}"
        answerable = rng.random() < 0.6
        gold = " ".join(rng.sample(words, 2)) if answerable else None
        examples.append(_question(qas_id, gold) if answerable
                        else _question(qas_id, impossible=True))
        predictions[qas_id] = rng.choice(["", " ".join(rng.sample(words, rng.randint(1, 3)))])
        probabilities[qas_id] = rng.choice([0.1, 0.4, 0.7])  # few values: many ties
    scores = squad_scores(examples, predictions, probabilities)
    for metric in ("exact", "f1"):
        candidates = [-math.inf] + sorted(set(probabilities.values()))
        by_threshold = [squad_scores(examples, predictions, probabilities,
                                     no_answer_threshold=t)[metric] for t in candidates]
        best = max(by_threshold)
        first_best = next(t for t, score in zip(candidates, by_threshold)
                          if score > best - 1e-9)
        assert scores[f"best_{metric}"] == pytest.approx(best)
        assert scores[f"best_{metric}_threshold"] == first_best


def test_best_no_answer_threshold_directly():
    # Two questions, own scores 1 and 0, "" scores 0 and 1, probabilities 0.2 and 0.8:
    # -inf -> 1; 0.2 -> 2; 0.8 -> 1. Over 3 questions (one without a prediction).
    assert best_no_answer_threshold([1.0, 0.0], [0.0, 1.0], [0.2, 0.8], 3) == (
        pytest.approx(200 / 3), 0.2)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="examples is empty"):
        squad_scores([], {})
    with pytest.raises(ValueError, match="'q1' occurs twice"):
        squad_scores([_question("q1", "x"), _question("q1", "y")], {})
    with pytest.raises(ValueError, match="'q1' has is_impossible=True but 1 answers"):
        squad_scores([_question("q1", "x", impossible=True)], {})
    with pytest.raises(ValueError, match=r"lacks 1 predicted questions, e\.g\. \['q2'\]"):
        squad_scores([_question("q1", "x"), _question("q2", "y")], {"q1": "x", "q2": "y"},
                     no_answer_probabilities={"q1": 0.3})
