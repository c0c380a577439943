"""RACE reader, option text, per-level accuracy and prediction file on a hand-written folder."""

import json
import os

import numpy as np
import pytest

from albert_tf.task_data.examples import MultipleChoiceExample, TaskDataError
from albert_tf.task_data.race import option_text, race_accuracy, read_race, write_race_predictions

ARTICLE_1 = 'Tom went to the "Green" park. He came home tired.'
ARTICLE_2 = "Zoë lives in Zürich — near the lake."
PASSAGES = {
    "middle/1.txt": {
        "id": "middle1.txt", "article": ARTICLE_1,
        "questions": ["Where did Tom go?", "Tom was _ when he came home."],
        "options": [["Home", "The park", "School", "The lake"],
                    ["tired", "happy", "hungry", "late"]],
        "answers": ["B", "A"]},
    "middle/2.txt": {
        "id": "middle2.txt", "article": ARTICLE_2,
        "questions": ["Where does Zoë live?"],
        "options": [["Bern", "Basel", "Zürich", "Geneva"]], "answers": ["C"]},
    "middle/10.txt": {
        "id": "middle10.txt", "article": "Ten.", "questions": ["Which number?"],
        "options": [["1", "2", "5", "10"]], "answers": ["D"]},
    "high/3.txt": {
        "id": "high3.txt", "article": "Three.", "questions": ["First?", "Second?"],
        "options": [["a", "b", "c", "d"], ["e", "f", "g", "h"]], "answers": ["A", "C"]},
}


def _write_race(root, passages, split="dev"):
    for name, passage in passages.items():
        path = os.path.join(root, split, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = passage if isinstance(passage, str) else json.dumps(passage)
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    return str(root)


@pytest.fixture
def race_dir(tmp_path):
    root = _write_race(tmp_path / "RACE", PASSAGES)
    with open(os.path.join(root, "dev", "middle", "README"), "w") as file:
        file.write("not a passage")
    return root


M = MultipleChoiceExample


def test_examples_in_level_then_numeric_file_order_field_by_field(race_dir):
    assert read_race(race_dir, "dev") == [
        M("middle1.txt-0", ARTICLE_1, "Where did Tom go?",
          ("Home", "The park", "School", "The lake"), 1, "middle"),
        M("middle1.txt-1", ARTICLE_1, "Tom was _ when he came home.",
          ("tired", "happy", "hungry", "late"), 0, "middle"),
        M("middle2.txt-0", ARTICLE_2, "Where does Zoë live?",
          ("Bern", "Basel", "Zürich", "Geneva"), 2, "middle"),
        M("middle10.txt-0", "Ten.", "Which number?", ("1", "2", "5", "10"), 3, "middle"),
        M("high3.txt-0", "Three.", "First?", ("a", "b", "c", "d"), 0, "high"),
        M("high3.txt-1", "Three.", "Second?", ("e", "f", "g", "h"), 2, "high"),
    ]
    assert [e.guid for e in read_race(race_dir, "dev", levels=("high",))] == [
        "high3.txt-0", "high3.txt-1"]


def test_files_without_answers_give_unlabelled_examples(tmp_path):
    passage = {key: value for key, value in PASSAGES["high/3.txt"].items() if key != "answers"}
    root = _write_race(tmp_path, {"high/3.txt": passage}, split="test")
    examples = read_race(root, "test", levels=("high",))
    assert [example.label for example in examples] == [None, None]
    with pytest.raises(ValueError, match=r"example 0 \(high3.txt-0\) has no label"):
        race_accuracy(examples, [0, 0])


def test_option_text_fills_cloze_blanks_or_appends_the_option():
    assert option_text("Tom was _ when he came home.", "tired") == (
        "Tom was tired when he came home.")
    assert option_text("_ and _ are colours.", "red") == "red and red are colours."
    assert option_text("Where did Tom go?", "The park") == "Where did Tom go? The park"


def test_per_level_accuracy_by_hand(race_dir):
    examples = read_race(race_dir, "dev")
    # middle: 1 ok, 0 ok, 2 ok, 0 wrong (3/4); high: 0 ok, 1 wrong (1/2); all 4/6.
    predicted = [1, 0, np.int64(2), 0, 0, 1]
    assert race_accuracy(examples, predicted) == pytest.approx(
        {"accuracy": 4 / 6, "accuracy_middle": 0.75, "accuracy_high": 0.5})
    assert race_accuracy(examples[4:], [0, 2]) == {"accuracy": 1.0, "accuracy_high": 1.0}
    with pytest.raises(ValueError, match="6 examples but 5 predicted options"):
        race_accuracy(examples, predicted[:5])
    with pytest.raises(ValueError, match="no examples"):
        race_accuracy([], [])


def test_prediction_file_byte_for_byte(race_dir, tmp_path):
    examples = read_race(race_dir, "dev")
    path = str(tmp_path / "out" / "race_dev.json")
    assert write_race_predictions(examples, [1, 0, 2, np.int64(3), 0, 1], path) == path
    with open(path, "rb") as file:
        assert file.read() == (b'{\n  "middle1.txt-0": "B",\n  "middle1.txt-1": "A",\n'
                               b'  "middle2.txt-0": "C",\n  "middle10.txt-0": "D",\n'
                               b'  "high3.txt-0": "A",\n  "high3.txt-1": "B"\n}\n')
    assert os.listdir(tmp_path / "out") == ["race_dev.json"]


@pytest.mark.parametrize("predicted, expected", [
    ([0], "2 examples but 1 predicted options"),
    ([0, 4], r"prediction 1 \(high3.txt-1\) is 4; expected an option index in \[0, 3\]"),
    ([0, 1.0], "prediction 1 .* is 1.0"),
])
def test_prediction_errors(race_dir, tmp_path, predicted, expected):
    examples = read_race(race_dir, "dev", levels=("high",))
    with pytest.raises(ValueError, match=expected):
        write_race_predictions(examples, predicted, str(tmp_path / "p.json"))
    with pytest.raises(ValueError, match="guid 'high3.txt-0' appears twice"):
        write_race_predictions([examples[0]] * 2, [0, 0], str(tmp_path / "p.json"))
    assert not os.path.exists(tmp_path / "p.json")


def test_missing_folders_name_the_path_and_layout(race_dir):
    for split, levels, missing in (("train", ("middle",), "train/middle"),
                                   ("dev", ("middle", "hard"), "dev/hard")):
        with pytest.raises(TaskDataError) as raised:
            read_race(race_dir, split, levels)
        message = str(raised.value)
        assert os.path.join(race_dir, *missing.split("/")) + " not found" in message
        assert "<data_dir>/<split>/<level>/<n>.txt" in message


def _broken(**changes):
    passage = dict(PASSAGES["high/3.txt"], **changes)
    return {key: value for key, value in passage.items() if value is not None}


@pytest.mark.parametrize("passage, expected", [
    ('{"id": "high3.txt" "article": "x"}',
     "not valid JSON: Expecting ',' delimiter at line 1 column 20"),
    ('{"id": "high3.txt",\n "article": }',
     "not valid JSON: Expecting value at line 2 column 13"),
    ("[1, 2]", "expected a JSON object"),
    (_broken(article=None), "missing key 'article'"),
    (_broken(questions="First?"), "'questions' should be a JSON list, found str"),
    (_broken(options=[["a", "b", "c", "d"], ["e", "f", "g"]]),
     "question 1: expected 4 option strings, found ['e', 'f', 'g']"),
    (_broken(options=[["a", "b", "c", "d"], ["e", "f", "g", 7]]),
     "question 1: expected 4 option strings"),
    (_broken(answers=["A", "E"]), "question 1: answer 'E' is not one of A, B, C, D"),
    (_broken(options=[["a", "b", "c", "d"]]),
     "question 1: the file has 2 questions, 1 options, 2 answers"),
    (_broken(answers=["A"]), "question 1: the file has 2 questions, 2 options, 1 answers"),
    (_broken(questions=["First?", 2]), "question 1: the question should be a string"),
])
def test_malformed_files_are_named_with_the_problem(tmp_path, passage, expected):
    root = _write_race(tmp_path, {"high/3.txt": passage})
    with pytest.raises(TaskDataError) as raised:
        read_race(root, "dev", levels=("high",))
    message = str(raised.value)
    assert message.startswith(os.path.join(root, "dev", "high", "3.txt") + ": ")
    assert expected in message
