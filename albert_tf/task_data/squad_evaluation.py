"""SQuAD exact match and F1, defined as the official v1.1 and v2.0 evaluation scripts do.

Both scores compare normalized texts. Normalizing lower-cases the text, deletes every ASCII
punctuation character, deletes the words "a", "an" and "the", and rewrites all whitespace as
single spaces. Exact match is 1 when the normalized prediction equals the normalized gold
answer; F1 treats both as bags of whitespace-separated tokens and takes the harmonic mean of
the overlap's precision and recall. An empty text only matches an empty text, which is how a
v2.0 "no answer" prediction (the empty string) scores on an unanswerable question.

A question with several gold answers gets its best score over them. Gold answers whose text
normalizes to nothing are ignored; a question left without any (an unanswerable v2.0
question) has the empty string as its only gold answer. Dataset scores are the mean over
questions, in percent (0-100) like the official scripts, not fractions like
`albert_tf.task_data.metrics`. A question without a prediction scores 0, as in the v1.1 script.

Nothing here imports TensorFlow or numpy.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
import re
import string
from typing import Callable, Mapping, Optional, Sequence

from albert_tf.task_data.examples import SquadExample

_PUNCTUATION_DELETER = str.maketrans("", "", string.punctuation)
_ARTICLE = re.compile(r"\b(a|an|the)\b")
# Running sums of F1 values pick up rounding noise; a gain smaller than this is a tie.
_SCORE_TOLERANCE = 1e-9


def normalize_answer(text: str) -> str:
    """The text as SQuAD compares it: lower case, no punctuation, no articles, single spaces.

    Args:
        text: an answer or prediction.

    Returns:
        The normalized text (possibly empty).

    Example:
        >>> normalize_answer("The  Cat's, an apple!")
        'cats apple'
    """
    text = text.lower()
    text = text.translate(_PUNCTUATION_DELETER)
    text = _ARTICLE.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 if the normalized prediction equals the normalized gold answer, else 0.0.

    Example:
        >>> exact_match("The Eiffel tower.", "eiffel Tower")
        1.0
    """
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    """F1 of the token overlap of the normalized prediction and gold answer.

    Tokens are compared as multisets: a token found twice in both counts twice.

    Args:
        prediction: the predicted answer text ("" for no answer).
        gold: one gold answer text ("" for an unanswerable question).

    Returns:
        A float in [0, 1]. When either side has no tokens, 1.0 if both have none and 0.0
        otherwise (the v2.0 rule; the v1.1 script scores two empty texts 0.0, but
        `squad_scores` compares with an empty gold answer only when a question has no
        answer that normalizes to a non-empty text, i.e. an unanswerable one).

    Example:
        >>> token_f1("the cat sat", "a cat sat on")
        0.8
    """
    predicted_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not predicted_tokens or not gold_tokens:
        return float(predicted_tokens == gold_tokens)
    overlap = collections.Counter(predicted_tokens) & collections.Counter(gold_tokens)
    shared = sum(overlap.values())
    if shared == 0:
        return 0.0
    precision = shared / len(predicted_tokens)
    recall = shared / len(gold_tokens)
    return 2.0 * precision * recall / (precision + recall)


@dataclasses.dataclass(frozen=True)
class _QuestionScores:
    """One question's exact match and F1 for its own prediction and for answering ""."""

    qas_id: str
    has_answer: bool
    has_prediction: bool
    exact: float
    f1: float
    no_answer_exact: float
    no_answer_f1: float


def gold_texts(example: SquadExample) -> list[str]:
    """The answers a prediction is compared with: texts that normalize to something, or
    `[""]` when there are none (an unanswerable question)."""
    texts = [text for text, _ in example.answers if normalize_answer(text)]
    return texts or [""]


def _best_over_gold(metric: Callable[[str, str], float], prediction: str,
                    golds: Sequence[str]) -> float:
    return max(metric(prediction, gold) for gold in golds)


def _score_question(example: SquadExample, prediction: Optional[str]) -> _QuestionScores:
    golds = gold_texts(example)
    # The v2.0 script calls a question answerable when its answer list is non-empty.
    has_answer = bool(example.answers)
    no_answer_exact = _best_over_gold(exact_match, "", golds)
    no_answer_f1 = _best_over_gold(token_f1, "", golds)
    if prediction is None:
        return _QuestionScores(example.qas_id, has_answer, False, 0.0, 0.0,
                               no_answer_exact, no_answer_f1)
    return _QuestionScores(example.qas_id, has_answer, True,
                           _best_over_gold(exact_match, prediction, golds),
                           _best_over_gold(token_f1, prediction, golds),
                           no_answer_exact, no_answer_f1)


def _check_examples(examples: Sequence[SquadExample]) -> None:
    if not examples:
        raise ValueError("examples is empty; expected at least one SquadExample to score")
    seen: set[str] = set()
    for example in examples:
        if example.qas_id in seen:
            raise ValueError(f"qas_id {example.qas_id!r} occurs twice in examples; expected "
                             f"each question once (predictions are keyed by qas_id)")
        seen.add(example.qas_id)
        if example.is_impossible and example.answers:
            raise ValueError(f"example {example.qas_id!r} has is_impossible=True but "
                             f"{len(example.answers)} answers; expected no answers for an "
                             f"unanswerable question")


def _check_probabilities(questions: Sequence[_QuestionScores],
                         no_answer_probabilities: Mapping[str, float]) -> None:
    lacking = [question.qas_id for question in questions
               if question.has_prediction and question.qas_id not in no_answer_probabilities]
    if lacking:
        raise ValueError(f"no_answer_probabilities lacks {len(lacking)} predicted questions, "
                         f"e.g. {lacking[:3]}; expected a probability for every qas_id that "
                         f"has a prediction")


def _abstains(question: _QuestionScores, no_answer_probabilities: Optional[Mapping[str, float]],
              threshold: float) -> bool:
    return (no_answer_probabilities is not None and question.has_prediction
            and no_answer_probabilities[question.qas_id] > threshold)


def _mean_percent(values: Sequence[float]) -> float:
    # Plain left-to-right sum, as the official scripts add, so v1.1 numbers match to the bit.
    return 100.0 * sum(values) / len(values)


def _summary(exact: Sequence[float], f1: Sequence[float], prefix: str = "") -> dict[str, float]:
    return {f"{prefix}exact": _mean_percent(exact), f"{prefix}f1": _mean_percent(f1),
            f"{prefix}total": len(exact)}


def best_no_answer_threshold(own_scores: Sequence[float], no_answer_scores: Sequence[float],
                             probabilities: Sequence[float],
                             num_questions: int) -> tuple[float, float]:
    """The no-answer threshold that maximizes a dataset score, as v2.0's threshold search.

    At threshold t a question answers "" when its no-answer probability exceeds t and keeps
    its own prediction otherwise. Candidates are -inf (every question answers "") and each
    probability; raising t past a probability switches all questions with that probability to
    their own predictions at once. Of equally good thresholds the smallest wins. (The official
    script reports 0.0 rather than -inf when answering "" everywhere is best, and when
    probabilities tie it may credit a score reached half-way through the tied questions,
    which no threshold gives.)

    Args:
        own_scores: each predicted question's score with its own prediction,
            shape `(num_predicted,)`.
        no_answer_scores: its score when it answers "", shape `(num_predicted,)`.
        probabilities: its no-answer probability, shape `(num_predicted,)`.
        num_questions: the dataset size the percentage is taken over (questions without a
            prediction score 0 at every threshold and appear only here).

    Returns:
        (best score in percent, the threshold reaching it).
    """
    total = math.fsum(no_answer_scores)
    best_total, best_threshold = total, -math.inf
    by_probability = sorted(zip(probabilities, own_scores, no_answer_scores),
                            key=lambda item: item[0])
    for probability, tied in itertools.groupby(by_probability, key=lambda item: item[0]):
        total += math.fsum(own - no_answer for _, own, no_answer in tied)
        if total > best_total + _SCORE_TOLERANCE:
            best_total, best_threshold = total, float(probability)
    return 100.0 * best_total / num_questions, best_threshold


def _threshold_search(questions: Sequence[_QuestionScores],
                      no_answer_probabilities: Mapping[str, float]) -> dict[str, float]:
    predicted = [question for question in questions if question.has_prediction]
    probabilities = [no_answer_probabilities[question.qas_id] for question in predicted]
    best_exact, exact_threshold = best_no_answer_threshold(
        [q.exact for q in predicted], [q.no_answer_exact for q in predicted], probabilities,
        len(questions))
    best_f1, f1_threshold = best_no_answer_threshold(
        [q.f1 for q in predicted], [q.no_answer_f1 for q in predicted], probabilities,
        len(questions))
    return {"best_exact": best_exact, "best_exact_threshold": exact_threshold,
            "best_f1": best_f1, "best_f1_threshold": f1_threshold}


def squad_scores(examples: Sequence[SquadExample], predictions: Mapping[str, str],
                 no_answer_probabilities: Optional[Mapping[str, float]] = None,
                 no_answer_threshold: float = 1.0) -> dict[str, float]:
    """Exact match and F1 of a SQuAD v1.1 or v2.0 prediction set, in percent.

    Args:
        examples: the labelled questions (`albert_tf.task_data.examples.SquadExample`), each
            `qas_id` once.
        predictions: qas_id -> predicted answer text, "" for "no answer". Ids not in
            `examples` are ignored.
        no_answer_probabilities: optional qas_id -> the model's no-answer probability (or any
            score that grows with it), for every question that has a prediction.
        no_answer_threshold: a question whose no-answer probability exceeds this answers ""
            regardless of its prediction. Unused without `no_answer_probabilities`.

    Returns:
        `exact`, `f1` (means in percent), `total` (number of questions), `missing` (questions
        without a prediction, scored 0) and `exact_match` (= `exact`, the v1.1 script's
        name). For a v2.0 set (both answerable and unanswerable questions) also
        `HasAns_exact`, `HasAns_f1`, `HasAns_total`, `NoAns_exact`, `NoAns_f1`,
        `NoAns_total`. With `no_answer_probabilities` also `best_exact`,
        `best_exact_threshold`, `best_f1`, `best_f1_threshold` (see
        `best_no_answer_threshold`), computed from the predictions before thresholding.

    Raises:
        ValueError: `examples` is empty, repeats a qas_id or holds an unanswerable example
            with answers, or `no_answer_probabilities` lacks a predicted question.
    """
    _check_examples(examples)
    questions = [_score_question(example, predictions.get(example.qas_id))
                 for example in examples]
    if no_answer_probabilities is not None:
        _check_probabilities(questions, no_answer_probabilities)
    exact, f1 = [], []
    for question in questions:
        abstains = _abstains(question, no_answer_probabilities, no_answer_threshold)
        exact.append(question.no_answer_exact if abstains else question.exact)
        f1.append(question.no_answer_f1 if abstains else question.f1)
    scores = _summary(exact, f1)
    scores["exact_match"] = scores["exact"]
    scores["missing"] = sum(not question.has_prediction for question in questions)
    answerable = [question.has_answer for question in questions]
    if any(answerable) and not all(answerable):
        for prefix, wanted in (("HasAns_", True), ("NoAns_", False)):
            chosen = [index for index, flag in enumerate(answerable) if flag == wanted]
            scores.update(_summary([exact[i] for i in chosen], [f1[i] for i in chosen], prefix))
    if no_answer_probabilities is not None:
        scores.update(_threshold_search(questions, no_answer_probabilities))
    return scores
