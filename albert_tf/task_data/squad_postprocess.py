"""SQuAD answers from start/end logits (or from the original ALBERT's v2.0 beam,
`predict_answers_with_answerability`), and the prediction files the official scripts read.

The span search is BERT's `write_predictions` (which the original ALBERT v1 code reuses): in
each window, pair the `n_best_size` highest start and end positions, keep pairs of context
tokens in order, not too long, starting at a token this window gives the most context, and
rank them by start logit + end logit over all windows of the question. The answer text is cut
from the original context by the tokens' character spans (`squad.convert_examples`), so it is
exactly the characters of the context, accents, quotes and spacing included.

Example:

    examples = read_squad("dev-v2.0.json")
    features = convert_examples(examples, AlbertTokenizer("30k-clean.model"))
    start_logits, end_logits = ...  # the model's outputs on the rows of `features`
    predictions = predict_answers(examples, features, start_logits, end_logits, version_2=True)
    write_squad_predictions(predictions, "out/", version_2=True)
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
from typing import Mapping, Sequence

import numpy as np

from albert_tf.io.files import atomic_write_bytes
from albert_tf.task_data.examples import SquadExample

_LOGGER = logging.getLogger(__name__)


@dataclasses.dataclass
class SquadPredictions:
    """Predicted answers keyed by question id.

    Attributes:
        answers: the answer text ("" predicts "no answer" in v2.0).
        null_odds: v2.0 only: null score minus the best span's score (what the official
            v2.0 script reads as `na_prob` to tune a threshold), +inf when no span was valid;
            with the answerability head, the smallest answerability logit of its windows.
        nbest: the ranked candidates: dicts of `text`, `start_logit`, `end_logit` and
            `probability` (softmax over the listed candidates' scores).
    """

    answers: dict[str, str]
    null_odds: dict[str, float]
    nbest: dict[str, list[dict]]


def predict_answers(examples: Sequence[SquadExample], features: Mapping[str, np.ndarray],
                    start_logits: np.ndarray, end_logits: np.ndarray, n_best_size: int = 20,
                    max_answer_length: int = 30, version_2: bool = False,
                    null_score_threshold: float = 0.0) -> SquadPredictions:
    """Answers for `examples` from the model's logits over the rows of `features`.

    Args:
        examples: the examples `features` were made from (`squad.convert_examples`).
        features: needs `example_index`, `token_char_start`, `token_char_end` and
            `token_is_max_context`.
        start_logits, end_logits: float arrays (num_rows, max_seq_length) aligned with
            `features` rows.
        n_best_size: start and end positions tried per window, and candidates kept.
        max_answer_length: longest answer in tokens.
        version_2: predict "" when the null score (min over windows of the [CLS] start + end
            logits) exceeds the best span's score by more than `null_score_threshold`.
    """
    start_logits, end_logits = np.asarray(start_logits), np.asarray(end_logits)
    expected = features["token_char_start"].shape
    if start_logits.shape != expected or end_logits.shape != expected:
        raise ValueError(f"start_logits {start_logits.shape} and end_logits "
                         f"{end_logits.shape} must match the features' rows {expected}")
    rows_of = _rows_by_example(features)
    predictions = SquadPredictions({}, {}, {})
    for example_index, example in enumerate(examples):
        rows = rows_of.get(example_index, [])
        spans = _ranked_spans(example.context, features, rows, start_logits, end_logits,
                              n_best_size, max_answer_length)
        best = spans[0] if spans else None
        nbest = spans
        if version_2:
            null = _null_candidate(rows, start_logits, end_logits)
            if null is not None:
                nbest = _with_null(spans, null, n_best_size)
            null_score = null["score"] if null is not None else math.inf
            odds = null_score - best["score"] if best is not None else math.inf
            predictions.null_odds[example.qas_id] = odds
            no_answer = best is None or odds > null_score_threshold
            predictions.answers[example.qas_id] = "" if no_answer else best["text"]
        else:
            if best is None:
                _LOGGER.warning("SQuAD question %r: no valid answer span in %d window(s); "
                                "predicting the empty string", example.qas_id, len(rows))
            predictions.answers[example.qas_id] = best["text"] if best is not None else ""
        predictions.nbest[example.qas_id] = _with_probabilities(nbest)
    return predictions


def _ranked_spans(context, features, rows, start_logits, end_logits, n_best_size,
                  max_answer_length) -> list[dict]:
    """The best `n_best_size` distinct non-empty answer texts over the windows in `rows`."""
    found = []  # (score, start logit, end logit, row, start, end) arrays per window
    for row in rows:
        starts, ends = _window_candidates(features, row, start_logits[row], end_logits[row],
                                          n_best_size, max_answer_length)
        start_scores = start_logits[row, starts].astype(np.float64)
        end_scores = end_logits[row, ends].astype(np.float64)
        found.append((start_scores + end_scores, start_scores, end_scores,
                      np.full(starts.shape, row), starts, ends))
    return _distinct_texts(context, features, found, n_best_size)


def _distinct_texts(context, features, found, n_best_size) -> list[dict]:
    """`found` (per window: score, start score, end score, row, start, end arrays) ranked by
    score, one entry per distinct non-empty text, the first `n_best_size`."""
    if not found:
        return []
    score, start_score, end_score, row, start, end = (np.concatenate(column)
                                                      for column in zip(*found))
    spans, seen = [], set()
    for index in np.argsort(-score, kind="stable").tolist():  # ties keep window order
        text = context[features["token_char_start"][row[index], start[index]]:
                       features["token_char_end"][row[index], end[index]]]
        if text and text not in seen:
            seen.add(text)
            spans.append({"text": text, "score": float(score[index]),
                          "start_logit": float(start_score[index]),
                          "end_logit": float(end_score[index])})
            if len(spans) == n_best_size:
                break
    return spans


def _window_candidates(features, row, start_row, end_row, n_best_size, max_answer_length):
    """Token positions (starts, ends) of the valid spans among one window's top positions."""
    top_starts = np.argsort(-start_row, kind="stable")[:n_best_size]
    top_ends = np.argsort(-end_row, kind="stable")[:n_best_size]
    start, end = np.broadcast_arrays(top_starts[:, None], top_ends[None, :])
    valid = _valid_spans(features, row, start, end, max_answer_length)
    start_index, end_index = np.nonzero(valid)
    return top_starts[start_index], top_ends[end_index]


def _valid_spans(features, row, start, end, max_answer_length) -> np.ndarray:
    """Whether each (start, end) of one window is an answer: both in the window's context,
    the start where this window gives it the most context, in order, not too long."""
    is_context = features["token_char_start"][row] >= 0
    return (is_context[start] & is_context[end]
            & (features["token_is_max_context"][row][start] == 1)
            & (end >= start) & (end - start + 1 <= max_answer_length))


def predict_answers_with_answerability(
        examples: Sequence[SquadExample], features: Mapping[str, np.ndarray],
        outputs: Mapping[str, np.ndarray], n_best_size: int = 20,
        max_answer_length: int = 30) -> SquadPredictions:
    """SQuAD 2.0 answers from the original ALBERT's head (`AlbertAnswerabilitySpanLabeler`),
    as its `run_squad_v2.py` makes them, before any no-answer threshold.

    In each window, the beam's `start_n_top x end_n_top` (start, end) pairs that are valid
    answers (as for `predict_answers`) are ranked over all windows by start log-probability
    + end log-probability; the best distinct texts are kept. The answer is always the best
    span's text ("" only when no window has a valid span); `null_odds` is the question's
    smallest answerability logit over its windows, which `apply_no_answer_threshold` compares
    with a threshold (the original tunes it on dev for the best F1).

    Args:
        outputs: the model's `start_top_log_probs`, `start_top_index`,
            `end_top_log_probs`, `end_top_index`, `cls_logits` on the rows of `features`.
    """
    start_index = np.asarray(outputs["start_top_index"])
    start_log_probs = np.asarray(outputs["start_top_log_probs"], np.float64)
    end_index = np.asarray(outputs["end_top_index"])
    end_log_probs = np.asarray(outputs["end_top_log_probs"], np.float64)
    cls_logits = np.asarray(outputs["cls_logits"], np.float64)
    start_beam = start_index.shape[1]
    end_beam = end_index.shape[1] // start_beam
    rows_of = _rows_by_example(features)
    predictions = SquadPredictions({}, {}, {})
    for example_index, example in enumerate(examples):
        rows = rows_of.get(example_index, [])
        found = []
        for row in rows:
            starts = np.repeat(start_index[row], end_beam)  # start k for ends k*J .. k*J+J-1
            start_scores = np.repeat(start_log_probs[row], end_beam)
            valid = _valid_spans(features, row, starts, end_index[row], max_answer_length)
            found.append((start_scores[valid] + end_log_probs[row][valid], start_scores[valid],
                          end_log_probs[row][valid], np.full(valid.sum(), row), starts[valid],
                          end_index[row][valid]))
        spans = _distinct_texts(example.context, features, found, n_best_size)
        predictions.answers[example.qas_id] = spans[0]["text"] if spans else ""
        predictions.null_odds[example.qas_id] = (float(min(cls_logits[row] for row in rows))
                                                 if rows else math.inf)
        predictions.nbest[example.qas_id] = _with_probabilities(
            spans, ("start_log_prob", "end_log_prob"))
    return predictions


def apply_no_answer_threshold(predictions: SquadPredictions,
                              threshold: float) -> SquadPredictions:
    """`predictions` answering "" where the null odds exceed `threshold`, as the official
    v2.0 evaluation abstains. (The original's `write_predictions_v2` answers "" from the
    threshold itself up, `>=`: with the threshold tuned on dev, which is the null odds of
    one of its questions, that question is dropped and the final F1 falls one question short
    of the best F1 the search found.)"""
    answers = {qas_id: "" if predictions.null_odds[qas_id] > threshold else answer
               for qas_id, answer in predictions.answers.items()}
    return SquadPredictions(answers, predictions.null_odds, predictions.nbest)


def _rows_by_example(features) -> dict[int, list[int]]:
    rows_of: dict[int, list[int]] = {}
    for row, example_index in enumerate(features["example_index"].tolist()):
        rows_of.setdefault(example_index, []).append(row)
    return rows_of


def _null_candidate(rows, start_logits, end_logits) -> dict | None:
    """The "no answer" candidate: the [CLS] scores of the window where they are lowest."""
    best = None
    for row in rows:
        start, end = float(start_logits[row, 0]), float(end_logits[row, 0])
        if best is None or start + end < best["score"]:
            best = {"text": "", "score": start + end, "start_logit": start, "end_logit": end}
    return best


def _with_null(spans: list[dict], null: dict, n_best_size: int) -> list[dict]:
    """`spans` with the null candidate at its rank; it stays even when that is last (BERT)."""
    ranked = sorted([*spans, null], key=lambda candidate: -candidate["score"])
    if len(ranked) > n_best_size and ranked[-1] is not null:
        ranked.pop()  # the lowest span makes room for the null candidate
    return ranked


def _with_probabilities(candidates: list[dict],
                        names: tuple[str, str] = ("start_logit", "end_logit")) -> list[dict]:
    """The n-best entries with the softmax of their scores; `names`: what the start and end
    scores are called in the file (logits, or log-probabilities for the v2.0 head)."""
    if not candidates:
        return []
    scores = np.array([candidate["score"] for candidate in candidates])
    weights = np.exp(scores - scores.max())
    probabilities = weights / weights.sum()
    return [{"text": candidate["text"], names[0]: candidate["start_logit"],
             names[1]: candidate["end_logit"], "probability": float(probability)}
            for candidate, probability in zip(candidates, probabilities)]


def write_squad_predictions(predictions: SquadPredictions, output_dir: str,
                            version_2: bool) -> dict[str, str]:
    """Writes `predictions.json` ({qas_id: text}, what the official evaluation scripts and the
    leaderboard read), `nbest_predictions.json` and, for v2.0, `null_odds.json`.

    Each file appears whole or not at all (written to a temporary, then renamed). Returns
    {file name: path}.
    """
    contents = {"predictions.json": predictions.answers,
                "nbest_predictions.json": predictions.nbest}
    if version_2:
        contents["null_odds.json"] = predictions.null_odds
    paths = {}
    for name, content in contents.items():
        paths[name] = os.path.join(output_dir, name)
        atomic_write_bytes(paths[name], json.dumps(content, indent=2).encode("utf-8"))
    return paths
