"""GLUE readers and leaderboard writer on hand-written files in each task's exact layout."""

import logging
import os

import numpy as np
import pytest
from bounded_process import long_line_table, refusal

from albert_tf.task_data import glue
from albert_tf.task_data.examples import TaskDataError, TextExample
from albert_tf.task_data.glue import (
    GLUE_TASKS,
    available_splits,
    get_glue_task,
    read_glue,
    write_glue_predictions,
)

T = "\t"
MNLI_TRAIN_HEADER = T.join(
    "index promptID pairID genre sentence1_binary_parse sentence2_binary_parse "
    "sentence1_parse sentence2_parse sentence1 sentence2 label1 gold_label".split())
MNLI_DEV_HEADER = T.join(
    "index promptID pairID genre sentence1_binary_parse sentence2_binary_parse "
    "sentence1_parse sentence2_parse sentence1 sentence2 label1 label2 label3 label4 label5 "
    "gold_label".split())
MNLI_TEST_HEADER = T.join(
    "index promptID pairID genre sentence1_binary_parse sentence2_binary_parse "
    "sentence1_parse sentence2_parse sentence1 sentence2".split())
STSB_HEADER = T.join(
    "index genre filename year old_index source1 source2 sentence1 sentence2".split())
QUOTED = 'The "more" you eat, the "fatter you get.'  # an unbalanced quote too
ACCENTED = "Zoë a chanté à la fête — ça marche."


def _mnli_row(index, s1, s2, *labels):
    parses = ["( ( a ) b )", "( c )", "(ROOT (S a b))", "(ROOT (S c))"]
    return T.join([str(index), "31193", "31193n", "government", *parses, s1, s2, *labels])


# Each task's files (relative to its folder) and the examples they must give, per split.
FILES = {
    "cola": {
        "train.tsv": (f"gj04\t1\t\tOur friends won't buy this analysis.\n"
                      f"gj04\t0\t*\t{QUOTED}\n"),
        "dev.tsv": f"bc01\t1\t\t{ACCENTED}\n\n\n",  # blank trailing lines
        "test.tsv": "index\tsentence\n0\tBill whistled past the house.\n1\tIt's raining.\n",
    },
    "sst2": {
        "train.tsv": "sentence\tlabel\nhide new secretions from the parental units \t0\n"
                     f"{QUOTED}\t1\n",
        "dev.tsv": "sentence\tlabel\nit 's a charming journey . \t1\n",
        "test.tsv": "index\tsentence\n0\tuneasy mishmash of styles\n",
    },
    "mrpc": {
        # The MSR release has Windows line ends.
        "train.tsv": "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
                     "1\t702876\t702977\tAmrozi accused his brother.\tHe called him a liar.\r\n"
                     f"0\t2108705\t2108831\t{QUOTED}\t{ACCENTED}\r\n",
        "dev.tsv": "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                   "1\t1355540\t1355592\tHe said so.\tSo he said.\n",
        "test.tsv": "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                    "0\t1089874\t1089925\tPCCW 's chief.\tCurrent chief.\n",
    },
    "stsb": {
        "train.tsv": f"{STSB_HEADER}\tscore\n"
                     "0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\tA plane is taking "
                     "off.\tAn air plane is taking off.\t5.000\n"
                     f"1\tmain-news\tMSRpar\t2012test\t0004\tnone\tnone\t{ACCENTED}\t"
                     f"{QUOTED}\t0.8\n",
        "dev.tsv": f"{STSB_HEADER}\tscore\n"
                   "0\tmain-captions\tMSRvid\t2012test\t0000\tnone\tnone\tA man.\tA man.\t3.2\n",
        "test.tsv": f"{STSB_HEADER}\n"
                    "7\tmain-captions\tMSRvid\t2012test\t0024\tnone\tnone\tA girl.\tA boy.\n",
    },
    "qqp": {
        "train.tsv": "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                     "133273\t213221\t213222\tHow is life?\tIs life good?\t0\n"
                     # A question with a line break splits its row in two: both skipped.
                     "201841\t303951\t174364\tHow can I\n"
                     "create an app?\t1\n"
                     f"402555\t536040\t536041\t{QUOTED}\t{ACCENTED}\t1\n",
        "dev.tsv": "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                   "5\t11\t12\tWhy?\tWhy not?\t1\n",
        "test.tsv": "id\tquestion1\tquestion2\n0\tWhy do rockets look white?\tWhy are rockets "
                    "white?\n",
    },
    "mnli": {
        "train.tsv": f"{MNLI_TRAIN_HEADER}\n"
                     + _mnli_row(0, "Conceptually cream skimming.", "Product and geography.",
                                 "neutral", "neutral") + "\n"
                     + _mnli_row(1, QUOTED, ACCENTED, "entailment", "entailment") + "\n",
        "dev_matched.tsv": f"{MNLI_DEV_HEADER}\n"
                           + _mnli_row(0, "The new rights.", "Everyone loves them.", "neutral",
                                       "entailment", "neutral", "neutral", "neutral",
                                       "neutral") + "\n",
        "dev_mismatched.tsv": f"{MNLI_DEV_HEADER}\n"
                              + _mnli_row(0, "Your gift.", "Hundreds of students.", "neutral",
                                          "contradiction", "contradiction", "contradiction",
                                          "neutral", "contradiction") + "\n",
        "test_matched.tsv": f"{MNLI_TEST_HEADER}\n" + _mnli_row(0, "Hierbas.", "Herbs.") + "\n",
        "test_mismatched.tsv": f"{MNLI_TEST_HEADER}\n" + _mnli_row(9, "What?", "Who?") + "\n",
        "AX.tsv": "index\tsentence1\tsentence2\n0\tThe cat sat.\tThe cat did not sit.\n",
    },
    "qnli": {
        "train.tsv": "index\tquestion\tsentence\tlabel\n"
                     "0\tWhen did it open?\tIt opened in 1901.\tentailment\n",
        "dev.tsv": "index\tquestion\tsentence\tlabel\n"
                   f"0\tWhat?\t{QUOTED}\tnot_entailment\n",
        "test.tsv": "index\tquestion\tsentence\n0\tWho?\tNobody.\n",
    },
    "rte": {
        "train.tsv": "index\tsentence1\tsentence2\tlabel\n"
                     "0\tNo weapons were found.\tWeapons were found.\tnot_entailment\n"
                     f"1\t{ACCENTED}\t{QUOTED}\tentailment\n",
        "dev.tsv": "index\tsentence1\tsentence2\tlabel\n0\tA.\tB.\tentailment\n",
        "test.tsv": "index\tsentence1\tsentence2\n0\tMexico.\tMexico City.\n"
                    "1\tParis.\tFrance.\n2\tRome.\tItaly.\n",
    },
    "wnli": {
        "train.tsv": "index\tsentence1\tsentence2\tlabel\n"
                     "0\tI stuck a pin through a carrot.\tThe carrot had a hole.\t1\n",
        "dev.tsv": "index\tsentence1\tsentence2\tlabel\n0\tJohn.\tHe.\t0\n",
        "test.tsv": "index\tsentence1\tsentence2\n0\tMaude.\tShe.\n",
    },
}

E = TextExample
EXPECTED = {
    "cola": {
        "train": [E("train-1", "Our friends won't buy this analysis.", None, "1"),
                  E("train-2", QUOTED, None, "0")],
        "dev": [E("dev-1", ACCENTED, None, "1")],
        "test": [E("0", "Bill whistled past the house."), E("1", "It's raining.")],
    },
    "sst2": {
        "train": [E("train-2", "hide new secretions from the parental units ", None, "0"),
                  E("train-3", QUOTED, None, "1")],
        "dev": [E("dev-2", "it 's a charming journey . ", None, "1")],
        "test": [E("0", "uneasy mishmash of styles")],
    },
    "mrpc": {
        "train": [E("train-2", "Amrozi accused his brother.", "He called him a liar.", "1"),
                  E("train-3", QUOTED, ACCENTED, "0")],
        "dev": [E("dev-2", "He said so.", "So he said.", "1")],
        "test": [E("0", "PCCW 's chief.", "Current chief.")],
    },
    "stsb": {
        "train": [E("train-2", "A plane is taking off.", "An air plane is taking off.", 5.0),
                  E("train-3", ACCENTED, QUOTED, 0.8)],
        "dev": [E("dev-2", "A man.", "A man.", 3.2)],
        "test": [E("7", "A girl.", "A boy.")],
    },
    "qqp": {
        "train": [E("train-2", "How is life?", "Is life good?", "0"),
                  E("train-5", QUOTED, ACCENTED, "1")],
        "dev": [E("dev-2", "Why?", "Why not?", "1")],
        "test": [E("0", "Why do rockets look white?", "Why are rockets white?")],
    },
    "mnli": {
        "train": [E("train-2", "Conceptually cream skimming.", "Product and geography.",
                    "neutral"),
                  E("train-3", QUOTED, ACCENTED, "entailment")],
        "dev": [E("dev-2", "The new rights.", "Everyone loves them.", "neutral")],
        "dev_mismatched": [E("dev_mismatched-2", "Your gift.", "Hundreds of students.",
                             "contradiction")],
        "test": [E("0", "Hierbas.", "Herbs.")],
        "test_mismatched": [E("9", "What?", "Who?")],
        "ax": [E("0", "The cat sat.", "The cat did not sit.")],
    },
    "qnli": {
        "train": [E("train-2", "When did it open?", "It opened in 1901.", "entailment")],
        "dev": [E("dev-2", "What?", QUOTED, "not_entailment")],
        "test": [E("0", "Who?", "Nobody.")],
    },
    "rte": {
        "train": [E("train-2", "No weapons were found.", "Weapons were found.",
                    "not_entailment"),
                  E("train-3", ACCENTED, QUOTED, "entailment")],
        "dev": [E("dev-2", "A.", "B.", "entailment")],
        "test": [E("0", "Mexico.", "Mexico City."), E("1", "Paris.", "France."),
                 E("2", "Rome.", "Italy.")],
    },
    "wnli": {
        "train": [E("train-2", "I stuck a pin through a carrot.", "The carrot had a hole.",
                    "1")],
        "dev": [E("dev-2", "John.", "He.", "0")],
        "test": [E("0", "Maude.", "She.")],
    },
}


def _write_files(folder, files):
    os.makedirs(folder, exist_ok=True)
    for name, text in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as file:
            file.write(text)
    return str(folder)


def _task_dir(tmp_path, task):
    return _write_files(tmp_path / GLUE_TASKS[task].folder, FILES[task])


def test_task_table_matches_glue():
    from albert_tf.config.finetuning import GLUE_NAMES  # the settings name the same tasks
    assert list(GLUE_TASKS) == list(GLUE_NAMES) == ["cola", "sst2", "mrpc", "stsb", "qqp",
                                                    "mnli", "qnli", "rte", "wnli"]
    assert {name: task.folder for name, task in GLUE_TASKS.items()} == {
        "cola": "CoLA", "sst2": "SST-2", "mrpc": "MRPC", "stsb": "STS-B", "qqp": "QQP",
        "mnli": "MNLI", "qnli": "QNLI", "rte": "RTE", "wnli": "WNLI"}
    assert GLUE_TASKS["mnli"].labels == ("contradiction", "entailment", "neutral")
    assert GLUE_TASKS["qnli"].labels == GLUE_TASKS["rte"].labels == (
        "entailment", "not_entailment")
    assert GLUE_TASKS["wnli"].labels == GLUE_TASKS["cola"].labels == ("0", "1")
    assert GLUE_TASKS["stsb"].labels == () and GLUE_TASKS["stsb"].is_regression
    assert [name for name, task in GLUE_TASKS.items() if task.is_regression] == ["stsb"]
    assert [name for name, task in GLUE_TASKS.items() if task.skip_malformed_rows] == ["qqp"]
    assert sorted(name for task in GLUE_TASKS.values()
                  for name in task.submission_files.values()) == sorted(
        ["CoLA.tsv", "SST-2.tsv", "MRPC.tsv", "STS-B.tsv", "QQP.tsv", "MNLI-m.tsv",
         "MNLI-mm.tsv", "AX.tsv", "QNLI.tsv", "RTE.tsv", "WNLI.tsv"])
    assert GLUE_TASKS["cola"].metrics == ("matthews_correlation",)
    assert GLUE_TASKS["stsb"].metrics == ("pearson", "spearman")
    with pytest.raises(TypeError):  # the shared table is read-only
        GLUE_TASKS["rte"].split_files["dev"] = ("other.tsv",)


@pytest.mark.parametrize("task", list(FILES))
def test_every_split_of_every_task_parses_field_by_field(tmp_path, task):
    data_dir = _task_dir(tmp_path, task)
    assert available_splits(task, data_dir) == list(EXPECTED[task])
    for split, expected in EXPECTED[task].items():
        examples = read_glue(task, data_dir, split)
        assert examples == expected, split
        for example in examples:
            label_type = float if task == "stsb" else str
            assert isinstance(example.label, type(None) if "test" in split or split == "ax"
                              else label_type)
            assert "\r" not in (example.text_b or "") + example.text_a


def test_glue_root_and_folder_names_and_task_objects_work(tmp_path):
    _task_dir(tmp_path, "sst2")
    expected = EXPECTED["sst2"]["train"]
    assert read_glue("SST-2", str(tmp_path), "train") == expected
    assert read_glue(GLUE_TASKS["sst2"], str(tmp_path / "SST-2"), "train") == expected
    assert get_glue_task("STS-B") is GLUE_TASKS["stsb"]
    assert available_splits("rte", str(tmp_path)) == []


def test_diagnostic_set_falls_back_to_the_diagnostic_folder(tmp_path):
    files = {name: text for name, text in FILES["mnli"].items() if name != "AX.tsv"}
    mnli_dir = _write_files(tmp_path / "MNLI", files)
    assert "ax" not in available_splits("mnli", mnli_dir)
    _write_files(tmp_path / "diagnostic",
                 {"diagnostic.tsv": "index\tsentence1\tsentence2\n3\tA dog.\tAn animal.\n"})
    assert available_splits("mnli", mnli_dir)[-1] == "ax"
    assert read_glue("mnli", mnli_dir, "ax") == [E("3", "A dog.", "An animal.")]
    # AX.tsv in the task folder wins over the diagnostic folder.
    _write_files(tmp_path / "MNLI", {"AX.tsv": FILES["mnli"]["AX.tsv"]})
    assert read_glue("mnli", mnli_dir, "ax") == EXPECTED["mnli"]["ax"]


def test_qqp_skips_broken_rows_and_says_how_many(tmp_path, caplog):
    data_dir = _task_dir(tmp_path, "qqp")
    with caplog.at_level(logging.WARNING):
        read_glue("qqp", data_dir, "train")
    path = os.path.join(data_dir, "train.tsv")
    assert f"{path}: skipped 2 malformed rows" in caplog.text
    assert "first on line 3" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        read_glue("qqp", data_dir, "dev")
    assert "skipped" not in caplog.text


def _one_file(tmp_path, task, name, text):
    return _write_files(tmp_path / GLUE_TASKS[task].folder, {name: text}), name


def _error(task, data_dir, split):
    with pytest.raises(TaskDataError) as raised:
        read_glue(task, data_dir, split)
    return str(raised.value)


def test_unknown_task_and_split_are_named(tmp_path):
    message = _error("glue", str(tmp_path), "train")
    assert "'glue'" in message
    assert "known tasks: cola, sst2, mrpc, stsb, qqp, mnli, qnli, rte, wnli" in message
    message = _error("rte", str(tmp_path), "dev_mismatched")
    assert "'dev_mismatched'" in message and "its splits: train, dev, test" in message


def test_missing_file_names_the_expected_file(tmp_path):
    message = _error("mnli", str(tmp_path), "dev")
    assert "needs dev_matched.tsv in " + str(tmp_path) in message
    message = _error("mnli", str(tmp_path), "ax")
    assert "AX.tsv or " + os.path.join("..", "diagnostic", "diagnostic.tsv") in message


@pytest.mark.parametrize("task, name, text, line, expected", [
    ("cola", "train.tsv", "gj04\t1\t\tFine.\ngj04\t0\n", 2,
     "expected at least 4 tab-separated columns (text_a in column 4, label in column 2), "
     "found 2"),
    ("rte", "dev.tsv", "index\tsentence1\tsentence2\tlabel\n0\tA.\tB.\tentailment\n1\tA.\n",
     3, "expected at least 4 tab-separated columns (text_a in column 2, text_b in column 3, "
        "label in column 4), found 2"),
    ("rte", "test.tsv", "index\tsentence1\tsentence2\n0\tA.\n", 2,
     "(index in column 1, text_a in column 2, text_b in column 3), found 2"),
    ("mnli", "train.tsv", f"{MNLI_TRAIN_HEADER}\n" + _mnli_row(0, "A.", "B.") + "\n", 2,
     "expected at least 11 tab-separated columns (text_a in column 9, text_b in column 10, "
     "label in the last column), found 10"),
    ("rte", "train.tsv", "index\tsentence1\tsentence2\tlabel\n0\tA.\tB.\tentails\n", 2,
     "label 'entails' (column 4) is not one of the RTE labels 'entailment', "
     "'not_entailment'"),
    ("mnli", "train.tsv", f"{MNLI_TRAIN_HEADER}\n"
     + _mnli_row(0, "A.", "B.", "neutral", "-") + "\n", 2,
     "label '-' (the last column) is not one of the MNLI labels 'contradiction', "
     "'entailment', 'neutral'"),
    ("stsb", "dev.tsv", f"{STSB_HEADER}\tscore\n0\tg\tf\ty\t1\tn\tn\tA.\tB.\t4\n"
     "1\tg\tf\ty\t1\tn\tn\tA.\tB.\tn/a\n", 3,
     "score 'n/a' (column 10) is not a number in [0, 5]"),
    ("stsb", "dev.tsv", f"{STSB_HEADER}\tscore\n0\tg\tf\ty\t1\tn\tn\tA.\tB.\t5.5\n", 2,
     "score '5.5' (column 10) is not a number in [0, 5]"),
    ("qqp", "test.tsv", "id\tquestion1\tquestion2\n0\tA?\n", 2,
     "expected 3 tab-separated columns"),
    ("sst2", "dev.tsv", "", 1, "the file is empty; expected a header row"),
])
def test_row_errors_name_file_line_and_what_was_expected(tmp_path, task, name, text, line,
                                                         expected):
    data_dir, name = _one_file(tmp_path, task, name, text)
    split = {"dev_matched.tsv": "dev"}.get(name, name[:-len(".tsv")])
    message = _error(task, data_dir, split)
    assert message.startswith(f"{os.path.join(data_dir, name)}:{line}: ")
    assert expected in message


def test_bad_bytes_are_reported_with_their_line(tmp_path):
    folder = tmp_path / "RTE"
    folder.mkdir()
    (folder / "dev.tsv").write_bytes(b"index\tsentence1\tsentence2\tlabel\n"
                                     b"0\tA.\tB.\tentailment\n1\tA\xff.\tB.\tentailment\n")
    message = _error("rte", str(folder), "dev")
    assert message.startswith(f"{folder / 'dev.tsv'}:3: not UTF-8 text (byte 4")


def test_a_100_megabyte_line_is_refused_by_line_in_bounded_memory(tmp_path):
    """Read whole, the line alone would take more than the child's 96 MB."""
    folder = tmp_path / "SST-2"
    folder.mkdir()
    path = long_line_table(folder / "train.tsv", b"sentence\tlabel\n")
    said = refusal(f"""
        from albert_tf.task_data.examples import TaskDataError
        from albert_tf.task_data.glue import read_glue
        try:
            read_glue("sst2", {str(folder)!r}, "train")
        except TaskDataError as error:
            print("refused:", error)
        """)
    assert said == (f"refused: {path}:3: a line of 100,000,003 bytes, more than the "
                    f"{glue.MAX_LINE_BYTES:,} a line may hold")


def _read_back(path):
    with open(path, "rb") as file:
        return file.read()


def test_classification_predictions_file_byte_for_byte(tmp_path):
    examples = read_glue("rte", _task_dir(tmp_path, "rte"), "test")
    output_dir = tmp_path / "out"
    path = write_glue_predictions("rte", "test", examples, [0, np.int64(1), 0], str(output_dir))
    assert path == str(output_dir / "RTE.tsv")
    assert _read_back(path) == (b"index\tprediction\n0\tentailment\n1\tnot_entailment\n"
                                b"2\tentailment\n")
    assert os.listdir(output_dir) == ["RTE.tsv"]  # no temporary file left behind
    # Binary tasks write the label strings, which are digits.
    cola = [E("0", "a"), E("1", "b")]
    path = write_glue_predictions("cola", "test", cola, [1, 0], str(output_dir))
    assert _read_back(path) == b"index\tprediction\n0\t1\n1\t0\n"


def test_mnli_splits_have_their_own_leaderboard_files(tmp_path):
    examples = [E("0", "a", "b"), E("1", "c", "d")]
    names = {split: os.path.basename(write_glue_predictions("mnli", split, examples, [2, 0],
                                                            str(tmp_path)))
             for split in ("test", "test_mismatched", "ax")}
    assert names == {"test": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv", "ax": "AX.tsv"}
    assert _read_back(tmp_path / "AX.tsv") == (
        b"index\tprediction\n0\tneutral\n1\tcontradiction\n")


def test_stsb_scores_are_clipped_and_written_with_three_decimals(tmp_path):
    examples = [E(str(i), "a", "b") for i in (4, 5, 6, 8)]
    path = write_glue_predictions("stsb", "test", examples,
                                  [5.7, -0.2, 2.34567, np.float32(3)], str(tmp_path))
    assert _read_back(path) == (b"index\tprediction\n4\t5.000\n5\t0.000\n6\t2.346\n"
                                b"8\t3.000\n")


def test_an_existing_file_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    examples = [E("0", "a")]
    path = write_glue_predictions("sst2", "test", examples, [1], str(tmp_path))

    def failing_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(glue.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_glue_predictions("sst2", "test", examples, [0], str(tmp_path))
    assert os.listdir(tmp_path) == ["SST-2.tsv"]
    assert _read_back(path) == b"index\tprediction\n0\t1\n"


@pytest.mark.parametrize("task, split, predictions, expected", [
    ("rte", "dev", [0], "no leaderboard file for split 'dev'; splits with one: test"),
    ("rte", "test", [0, 1], "1 examples but 2 predictions"),
    ("rte", "test", [2], "prediction 0 is 2; expected a label index in [0, 1]"),
    ("rte", "test", [1.0], "prediction 0 is 1.0; expected a label index"),
    ("rte", "test", [-1], "prediction 0 is -1"),
    ("stsb", "test", [float("nan")], "prediction 0 is NaN"),
])
def test_prediction_errors(tmp_path, task, split, predictions, expected):
    with pytest.raises(ValueError) as raised:
        write_glue_predictions(task, split, [E("0", "a", "b")], predictions, str(tmp_path))
    assert expected in str(raised.value)
    assert os.listdir(tmp_path) == []
