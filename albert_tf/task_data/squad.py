"""SQuAD v1.1/v2.0: the JSON reader, character offsets of tokens, and sliding-window features.

Answers are located by character offsets into the original context, so every context token
carries the [start, end) span of original characters it came from
(`albert_tf.task_data.offsets`: normalization and SentencePiece both keep the map).
Post-processing then cuts predicted answers out of the original context, character for
character, instead of re-aligning normalized text as the original BERT code had to.

Windows follow the original BERT/ALBERT `run_squad.py`: `[CLS] question [SEP] window [SEP]`,
windows advancing by `doc_stride` tokens, and each token scored for the window that gives it
the most context on both sides. No TensorFlow here: conversion runs anywhere numpy does.
"""

from __future__ import annotations

import json
from typing import Sequence

import numpy as np
from tqdm import tqdm

from albert_tf.io.files import read_bytes
from albert_tf.task_data.examples import SquadExample, TaskDataError
from albert_tf.task_data.offsets import token_spans
from albert_tf.tokenization import AlbertTokenizer

_REQUIRED = object()


# ---------------------------------------------------------------------------------- reading

def read_squad(path: str) -> list[SquadExample]:
    """Reads a SQuAD v1.1 or v2.0 JSON file into one `SquadExample` per question.

    Answers keep (text, answer_start) as given; an `is_impossible` question (v2.0) gets no
    answers (its `plausible_answers` are ignored). Raises `TaskDataError` naming the file and
    the JSON path (e.g. `data[3].paragraphs[0].qas[2].answers[0].answer_start`) of the problem.
    """
    try:
        document = json.loads(read_bytes(path))
    except OSError as error:
        raise TaskDataError(f"{path}: cannot read the SQuAD file ({error.strerror or error})") \
            from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        raise TaskDataError(f"{path}: not a SQuAD JSON file ({error})") from None
    examples: list[SquadExample] = []
    seen_ids: dict[str, str] = {}
    for article_index, article in enumerate(_field(document, "data", list, path, "")):
        where = f"data[{article_index}]"
        title = _field(article, "title", str, path, where, default="")
        for paragraph_index, paragraph in enumerate(_field(article, "paragraphs", list, path,
                                                           where)):
            paragraph_where = f"{where}.paragraphs[{paragraph_index}]"
            context = _field(paragraph, "context", str, path, paragraph_where)
            for question_index, qa in enumerate(_field(paragraph, "qas", list, path,
                                                       paragraph_where)):
                qa_where = f"{paragraph_where}.qas[{question_index}]"
                example = _read_question(qa, context, title, path, qa_where)
                if example.qas_id in seen_ids:
                    raise TaskDataError(f"{path}: {qa_where}.id: question id {example.qas_id!r} "
                                        f"is already used at {seen_ids[example.qas_id]}")
                seen_ids[example.qas_id] = qa_where
                examples.append(example)
    return examples


def _read_question(qa, context: str, title: str, path: str, where: str) -> SquadExample:
    is_impossible = _field(qa, "is_impossible", bool, path, where, default=False)
    answers = []
    if not is_impossible:
        for answer_index, answer in enumerate(_field(qa, "answers", list, path, where,
                                                     default=[])):
            answer_where = f"{where}.answers[{answer_index}]"
            text = _field(answer, "text", str, path, answer_where)
            start = _field(answer, "answer_start", int, path, answer_where)
            if start < 0 or start + len(text) > len(context):
                raise TaskDataError(
                    f"{path}: {answer_where}.answer_start: {start} puts the {len(text)}-character "
                    f"answer outside the {len(context)}-character context")
            answers.append((text, start))
    return SquadExample(qas_id=_field(qa, "id", str, path, where),
                        question=_field(qa, "question", str, path, where), context=context,
                        answers=tuple(answers), is_impossible=is_impossible, title=title)


def _field(container, key: str, expected: type, path: str, where: str, default=_REQUIRED):
    if not isinstance(container, dict):
        raise TaskDataError(f"{path}: {where or 'the top level'}: expected a JSON object, found "
                            f"{type(container).__name__}")
    if key not in container:
        if default is _REQUIRED:
            raise TaskDataError(f"{path}: {where + '.' if where else ''}{key}: missing")
        return default
    value = container[key]
    # bool is an int subclass; an answer_start of `true` is still a mistake.
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise TaskDataError(f"{path}: {where + '.' if where else ''}{key}: expected "
                            f"{_JSON_TYPE_NAMES[expected]}, found {json.dumps(value)[:60]}")
    return value


_JSON_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}


def answer_matches_context(example: SquadExample) -> bool:
    """True when every answer's text is the context at its answer_start (the metric uses the
    text, so a mismatched answer is kept, but its training span may be off)."""
    return all(example.context[start:start + len(text)] == text
               for text, start in example.answers)


# ----------------------------------------------------------------------- window features

def convert_examples(examples: Sequence[SquadExample], tokenizer: AlbertTokenizer,
                     max_seq_length: int = 384, doc_stride: int = 128,
                     max_query_length: int = 64, is_training: bool = False
                     ) -> dict[str, np.ndarray]:
    """Model inputs for SQuAD: one row per (question, context window); N rows in all.

    Args:
        examples: from `read_squad`.
        tokenizer: the model's tokenizer; each distinct context is tokenized once.
        max_seq_length: row length; `[CLS] question [SEP] window [SEP]` then zero padding.
        doc_stride: tokens between the starts of consecutive windows.
        max_query_length: question pieces kept (the first ones).
        is_training: compute `start_position`/`end_position` from each example's first answer
            (zeros otherwise).

    Returns:
        int32 arrays `example_index`, `window_index`, `start_position`, `end_position` (N,);
        `input_word_ids`, `input_mask`, `input_type_ids`, `token_char_start`, `token_char_end`
        (N, max_seq_length), the last two the context span of each context token and -1
        elsewhere; int8 `token_is_max_context` (N, max_seq_length).
    """
    if doc_stride < 1:
        raise ValueError(f"doc_stride must be at least 1, got {doc_stride}")
    questions = [ids[:max_query_length]
                 for ids in tokenizer.encode_batch([example.question for example in examples])]
    context_tokens: dict[str, tuple] = {}  # context -> (ids, char_start, char_end)
    plans: dict[tuple[int, int], tuple] = {}  # (context tokens, window size) -> windows
    layout = []
    for index, example in enumerate(tqdm(examples, desc="SQuAD windows", unit="question",
                                         disable=len(examples) <= 1000)):
        tokens = context_tokens.get(example.context)
        if tokens is None:
            tokens = context_tokens[example.context] = token_spans(tokenizer, example.context)
        window_size = max_seq_length - len(questions[index]) - 3
        if window_size < 1:
            raise ValueError(
                f"max_seq_length={max_seq_length} leaves no room for context after the "
                f"{len(questions[index])}-piece question of {example.qas_id!r} and 3 special "
                f"tokens; raise max_seq_length or lower max_query_length={max_query_length}")
        key = (len(tokens[0]), window_size)
        if key not in plans:
            plans[key] = _window_plan(len(tokens[0]), window_size, doc_stride)
        layout.append((tokens, plans[key]))
    features = _empty_features(sum(len(plan[0]) for _, plan in layout), max_seq_length)
    row = 0
    for index, (tokens, plan) in enumerate(layout):
        answer = _answer_tokens(examples[index], tokens) if is_training else None
        for window, (start, length) in enumerate(zip(*plan[:2])):
            _fill_row(features, row, tokenizer, questions[index], tokens, start, length,
                      plan[2][window, :length], answer)
            features["example_index"][row], features["window_index"][row] = index, window
            row += 1
    return features


def _window_plan(num_tokens: int, window_size: int, doc_stride: int):
    """(starts, lengths, is_max_context (num_windows, window_size) int8) of one context.

    An empty context still gets one (empty) window, so every question gets a row."""
    starts, lengths = [], []
    start = 0
    while True:
        length = min(num_tokens - start, window_size)
        starts.append(start)
        lengths.append(length)
        if start + length >= num_tokens:
            break
        start += min(length, doc_stride)
    first = np.array(starts)[:, None]
    last = first + np.array(lengths)[:, None] - 1
    positions = np.arange(num_tokens)[None, :]
    # The original's score: the context on the token's shorter side, plus 0.01 per token of
    # the window, so a longer window wins a tie; argmax keeps the first window on equal scores.
    score = np.minimum(positions - first, last - positions) + 0.01 * (last - first + 1)
    score = np.where((positions >= first) & (positions <= last), score, -np.inf)
    best = np.argmax(score, axis=0) if num_tokens else np.zeros(0, np.int64)
    is_max = np.zeros((len(starts), window_size), np.int8)
    for window, (start, length) in enumerate(zip(starts, lengths)):
        is_max[window, :length] = best[start:start + length] == window
    return starts, lengths, is_max


def _answer_tokens(example: SquadExample, tokens) -> tuple[int, int] | None:
    """Context token indices [first, last] covering the first answer, or None (no answer)."""
    if example.is_impossible:
        return None
    if not example.answers:
        raise TaskDataError(f"question {example.qas_id!r}: is_training needs an answer or "
                            f"is_impossible, found neither")
    text, answer_start = example.answers[0]
    answer_end = answer_start + len(text)
    _, char_start, char_end = tokens
    after_start = np.flatnonzero(char_end > answer_start)
    before_end = np.flatnonzero(char_start < answer_end)
    if not after_start.size or not before_end.size or before_end[-1] < after_start[0]:
        return None
    return int(after_start[0]), int(before_end[-1])


def _empty_features(num_rows: int, max_seq_length: int) -> dict[str, np.ndarray]:
    features = {name: np.zeros(num_rows, np.int32) for name in
                ("example_index", "window_index", "start_position", "end_position")}
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        features[name] = np.zeros((num_rows, max_seq_length), np.int32)
    for name in ("token_char_start", "token_char_end"):
        features[name] = np.full((num_rows, max_seq_length), -1, np.int32)
    features["token_is_max_context"] = np.zeros((num_rows, max_seq_length), np.int8)
    return features


def _fill_row(features, row, tokenizer, question, tokens, start, length, is_max, answer):
    """Writes one window's row; `tokens` are the context's (ids, char_start, char_end)."""
    ids, char_start, char_end = tokens
    first = len(question) + 2  # position of the window's first token
    stop = first + length
    features["input_word_ids"][row, :first] = [tokenizer.cls_id, *question, tokenizer.sep_id]
    features["input_word_ids"][row, first:stop] = ids[start:start + length]
    features["input_word_ids"][row, stop] = tokenizer.sep_id
    features["input_mask"][row, :stop + 1] = 1
    features["input_type_ids"][row, first:stop + 1] = 1
    features["token_char_start"][row, first:stop] = char_start[start:start + length]
    features["token_char_end"][row, first:stop] = char_end[start:start + length]
    features["token_is_max_context"][row, first:stop] = is_max
    if answer is not None and start <= answer[0] and answer[1] < start + length:
        features["start_position"][row] = answer[0] - start + first
        features["end_position"][row] = answer[1] - start + first
