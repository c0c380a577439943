"""SQuAD answers from start/end logits, and the prediction files the official scripts read.

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

from albert_tf.tasks.examples import SquadExample
from data_prep.files import atomic_write_bytes

_LOGGER = logging.getLogger(__name__)


@dataclasses.dataclass
class SquadPredictions:
    """Predicted answers keyed by question id.

    Attributes:
        answers: the answer text ("" predicts "no answer" in v2.0).
        null_odds: v2.0 only: null score minus the best span's score (what the official
            v2.0 script reads as `na_prob` to tune a threshold); +inf when no span was valid.
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
    rows_of: dict[int, list[int]] = {}
    for row, example_index in enumerate(features["example_index"].tolist()):
        rows_of.setdefault(example_index, []).append(row)
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
    is_context = features["token_char_start"][row] >= 0
    start, end = top_starts[:, None], top_ends[None, :]
    valid = (is_context[start] & is_context[end]
             & (features["token_is_max_context"][row][start] == 1)
             & (end >= start) & (end - start + 1 <= max_answer_length))
    start_index, end_index = np.nonzero(valid)
    return top_starts[start_index], top_ends[end_index]


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


def _with_probabilities(candidates: list[dict]) -> list[dict]:
    if not candidates:
        return []
    scores = np.array([candidate["score"] for candidate in candidates])
    weights = np.exp(scores - scores.max())
    probabilities = weights / weights.sum()
    return [{"text": candidate["text"], "start_logit": candidate["start_logit"],
             "end_logit": candidate["end_logit"], "probability": float(probability)}
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
