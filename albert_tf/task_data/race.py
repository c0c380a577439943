"""The RACE reading-comprehension data set: a reader for its folders, the text that stands
for a (question, option) pair, per-level accuracy and the prediction file. No TensorFlow.

RACE (Lai et al., 2017) ships as `<data_dir>/<split>/<level>/<n>.txt`, `split` one of
`train`, `dev`, `test` and `level` one of `middle`, `high` (middle- and high-school exams);
each file is one JSON passage with several four-option questions.

Example:

    examples = read_race("RACE", "dev")
    option_text(examples[0].question, examples[0].options[0])
"""

from __future__ import annotations

import json
import operator
import os
from typing import Any, Sequence

from albert_tf.io.files import atomic_write_bytes
from albert_tf.task_data.examples import MultipleChoiceExample, TaskDataError

ANSWER_LETTERS = "ABCD"
NUM_OPTIONS = len(ANSWER_LETTERS)
_LAYOUT = "<data_dir>/<split>/<level>/<n>.txt"


def _file_order(name: str) -> tuple:
    """Sort key: numbered files (`2.txt`) by number, before any others by name."""
    stem = os.path.splitext(name)[0]
    return (0, int(stem), name) if stem.isdigit() else (1, 0, name)


def _load_passage(path: str) -> dict[str, Any]:
    """One RACE file's JSON object, or a TaskDataError naming the file and the position."""
    try:
        with open(path, encoding="utf-8") as file:
            passage = json.load(file)
    except UnicodeDecodeError as error:
        raise TaskDataError(f"{path}: not UTF-8 text (byte {error.start + 1})") from None
    except json.JSONDecodeError as error:
        raise TaskDataError(f"{path}: not valid JSON: {error.msg} at line {error.lineno} "
                            f"column {error.colno}") from None
    if not isinstance(passage, dict):
        raise TaskDataError(f"{path}: expected a JSON object with id, article, questions, "
                            f"options and answers; found {type(passage).__name__}")
    for key, kind in (("id", str), ("article", str), ("questions", list), ("options", list),
                      ("answers", list)):
        if key not in passage:
            if key == "answers":  # unlabelled files
                continue
            raise TaskDataError(f"{path}: missing key {key!r} (a RACE file holds id, "
                                f"article, questions, options and answers)")
        if not isinstance(passage[key], kind):
            raise TaskDataError(f"{path}: {key!r} should be a JSON "
                                f"{'string' if kind is str else 'list'}, found "
                                f"{type(passage[key]).__name__}")
    return passage


def _passage_examples(path: str, level: str) -> list[MultipleChoiceExample]:
    """The examples of the questions of one RACE file, in order."""
    passage = _load_passage(path)
    questions, options = passage["questions"], passage["options"]
    answers = passage.get("answers")
    lengths = {"questions": len(questions), "options": len(options)}
    if answers is not None:
        lengths["answers"] = len(answers)
    if len(set(lengths.values())) > 1:
        shortest = min(lengths.values())
        counts = ", ".join(f"{count} {key}" for key, count in lengths.items())
        raise TaskDataError(f"{path}: question {shortest}: the file has {counts}; expected "
                            f"one option list and one answer per question")
    examples = []
    for index, question in enumerate(questions):
        where = f"{path}: question {index}"
        choices = options[index]
        if not isinstance(question, str):
            raise TaskDataError(f"{where}: the question should be a string, found "
                                f"{type(question).__name__}")
        if (not isinstance(choices, list) or len(choices) != NUM_OPTIONS
                or not all(isinstance(choice, str) for choice in choices)):
            raise TaskDataError(f"{where}: expected {NUM_OPTIONS} option strings, found "
                                f"{choices!r}")
        label = None
        if answers is not None:
            if answers[index] not in tuple(ANSWER_LETTERS):
                raise TaskDataError(f"{where}: answer {answers[index]!r} is not one of "
                                    f"{', '.join(ANSWER_LETTERS)}")
            label = ANSWER_LETTERS.index(answers[index])
        examples.append(MultipleChoiceExample(
            guid=f"{passage['id']}-{index}", context=passage["article"], question=question,
            options=tuple(choices), label=label, level=level))
    return examples


def read_race(data_dir: str, split: str,
              levels: Sequence[str] = ("middle", "high")) -> list[MultipleChoiceExample]:
    """The questions of one RACE split, one example per question.

    Args:
        data_dir: the RACE folder, holding `<split>/<level>/<n>.txt`.
        split: `train`, `dev` or `test`.
        levels: the subsets to read, in this order; default both.

    Returns:
        Examples level by level, files in numeric order (`2.txt` before `10.txt`),
        questions in file order. guid is `<file id>-<question index>` (`high1.txt-0`),
        label the index of the answer letter (None when the file has no `answers`),
        level the folder name.

    Raises:
        TaskDataError: a missing split or level folder, a file that is not JSON or lacks a
            key, options that are not four strings, an answer outside A-D, or question,
            option and answer lists of different lengths; the message names the file.
    """
    examples = []
    for level in levels:
        folder = os.path.join(data_dir, split, level)
        if not os.path.isdir(folder):
            raise TaskDataError(f"RACE folder {folder} not found; expected the layout "
                                f"{_LAYOUT} (split {split!r}, level {level!r})")
        names = sorted((name for name in os.listdir(folder) if name.endswith(".txt")),
                       key=_file_order)
        for name in names:
            examples.extend(_passage_examples(os.path.join(folder, name), level))
    return examples


def option_text(question: str, option: str) -> str:
    """The text standing for one (question, option) pair in the model's second segment.

    As ALBERT's original RACE recipe builds it: a cloze question (one holding "_") gets the
    option in place of every "_"; any other question is followed by a space and the option.

    Args:
        question: the question text.
        option: one answer option.

    Example:

        option_text("The sky is _ today.", "blue")  # "The sky is blue today."
        option_text("Who wrote it?", "Tom")         # "Who wrote it? Tom"
    """
    if "_" in question:
        return question.replace("_", option)
    return f"{question} {option}"


def _check_lengths(examples: Sequence[MultipleChoiceExample],
                   predicted_options: Sequence[int]) -> None:
    if len(examples) != len(predicted_options):
        raise ValueError(f"{len(examples)} examples but {len(predicted_options)} "
                         f"predicted options")


def race_accuracy(examples: Sequence[MultipleChoiceExample],
                  predicted_options: Sequence[int]) -> dict[str, float]:
    """Fraction of questions answered correctly, overall and per RACE level.

    Args:
        examples: labelled examples as `read_race` returns them.
        predicted_options: the predicted option index of each example.

    Returns:
        `accuracy` over all examples, and `accuracy_<level>` (e.g. `accuracy_middle`,
        `accuracy_high`) for each level present; fractions in [0, 1].

    Raises:
        ValueError: the lengths differ, there are no examples, or an example has no label.
    """
    _check_lengths(examples, predicted_options)
    if not examples:
        raise ValueError("accuracy of no examples is undefined")
    counts: dict[str, list[int]] = {}  # key -> [correct, total]
    for position, (example, predicted) in enumerate(zip(examples, predicted_options)):
        if example.label is None:
            raise ValueError(f"example {position} ({example.guid}) has no label")
        keys = ["accuracy"] + ([f"accuracy_{example.level}"] if example.level else [])
        for key in keys:
            tally = counts.setdefault(key, [0, 0])
            tally[0] += int(predicted == example.label)
            tally[1] += 1
    return {key: correct / total for key, (correct, total) in counts.items()}


def write_race_predictions(examples: Sequence[MultipleChoiceExample],
                           predicted_options: Sequence[int], path: str) -> str:
    """Write `{guid: answer letter}` as a JSON file, atomically.

    Args:
        examples: the examples predicted on.
        predicted_options: the predicted option index (0-3) of each example.
        path: the JSON file to write (its folder is created if missing).

    Returns:
        `path`.

    Raises:
        ValueError: the lengths differ, a prediction is not an option index of its
            example, or two examples share a guid.
    """
    _check_lengths(examples, predicted_options)
    answers: dict[str, str] = {}
    for position, (example, predicted) in enumerate(zip(examples, predicted_options)):
        choices = min(len(example.options), NUM_OPTIONS)
        try:
            option = operator.index(predicted)
        except TypeError:
            option = -1
        if option not in range(choices):
            raise ValueError(f"prediction {position} ({example.guid}) is {predicted!r}; "
                             f"expected an option index in [0, {choices - 1}]")
        if example.guid in answers:
            raise ValueError(f"guid {example.guid!r} appears twice")
        answers[example.guid] = ANSWER_LETTERS[option]
    atomic_write_bytes(path, (json.dumps(answers, indent=2) + "\n").encode("utf-8"))
    return path
