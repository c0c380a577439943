"""The user's own table files: CSV, TSV and JSON Lines read row by row with the line each
row starts on, written back with added columns; the checks name file and line."""

import json

import pytest

from albert_tf.cli.finetune import main as finetune_main
from albert_tf.task_data import own_files, predicted_rows, table_files
from albert_tf.task_data.examples import TaskDataError, TextExample
from albert_tf.task_data.table_files import TableWriter, read_table

AWKWARD = ['a, "quoted" text', "two\nlines", "tab\there", "caf\u00e9 \u00e9t\u00e9", "x"]


@pytest.mark.parametrize("extension", [".csv", ".jsonl"])
def test_rows_round_trip_through_the_writer_with_their_lines(tmp_path, extension):
    path = str(tmp_path / f"t{extension}")
    with TableWriter(path, ["text", "label"]) as writer:
        for index, text in enumerate(AWKWARD):
            writer.write({"text": text, "label": str(index)})
    rows = list(read_table(path))
    assert [row.values for row in rows] == [{"text": text, "label": str(index)}
                                            for index, text in enumerate(AWKWARD)]
    # A quoted line break keeps its row on one record; the next row starts a line later.
    expected_lines = [2, 3, 5, 6, 7] if extension == ".csv" else [1, 2, 3, 4, 5]
    assert [row.line for row in rows] == expected_lines
    assert not list(tmp_path.glob(".*tmp*"))  # written under a temporary name, renamed


def test_tsv_is_unquoted_as_glue_writes_it(tmp_path):
    """A quote is an ordinary character (a GLUE sentence may open with one); a tab or a line
    break cannot be written."""
    path = tmp_path / "glue.tsv"
    path.write_text('sentence\tlabel\n"quoted" start, no end"\t1\n\'\'single\t0\n')
    assert [row.values["sentence"] for row in read_table(str(path))] == [
        '"quoted" start, no end"', "''single"]
    with TableWriter(str(tmp_path / "out.tsv"), ["text"]) as writer:
        writer.write({"text": AWKWARD[0]})
    assert [row.values for row in read_table(str(tmp_path / "out.tsv"))] == [
        {"text": AWKWARD[0]}]
    with pytest.raises(TaskDataError, match="column 'text' holds a tab or a line break"):
        with TableWriter(str(tmp_path / "bad.tsv"), ["text"]) as writer:
            writer.write({"text": "tab\there"})
    assert not (tmp_path / "bad.tsv").exists()


def test_excel_csv_blank_lines_and_a_byte_order_mark(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbftext,label\r\nfine film,pos\r\n\r\n\"dull, long\",neg\r\n")
    rows = list(read_table(str(path)))
    assert [(row.line, row.values) for row in rows] == [
        (2, {"text": "fine film", "label": "pos"}), (4, {"text": "dull, long", "label": "neg"})]
    assert table_files.table_columns(str(path)) == ["text", "label"]


@pytest.mark.parametrize("name, content, message", [
    ("a.csv", "text,label\na,b,c\n", "a.csv:2: 3 fields, but the header names 2 columns"),
    ("a.csv", "text,text\na,b\n", "a.csv:1: the header must name every column once; "
                                  "repeated: text"),
    ("a.csv", "", "a.csv: the file is empty; expected a header row"),
    ("a.csv", 'text\n"open\n', "a.csv:2: unexpected end of data"),
    ("a.jsonl", '{"text": "a"}\n["a"]\n', "a.jsonl:2: expected a JSON object (one row), "
                                           "found list"),
    ("a.jsonl", '{"text": "a"}\n\n{"text": \n', "a.jsonl:3: not JSON"),
    ("a.tsv", b"text\nok\n\xff\xfe\n", "a.tsv:3: not UTF-8 text (byte 1 of the line)"),
    ("a.txt", "text\n", "a.txt: unknown table format '.txt'; expected a file ending in "
                        ".csv, .tsv, .jsonl"),
])
def test_broken_files_are_named_by_file_and_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(TaskDataError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace(".", r"\.")):
        list(read_table(str(path)))


def test_a_line_longer_than_the_limit_is_refused_without_reading_it_whole(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(table_files, "MAX_LINE_BYTES", 64)
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"text": "a"}) + "\n" + json.dumps({"text": "b" * 100}) + "\n")
    with pytest.raises(TaskDataError, match="long.jsonl:2: a line of 113 bytes, more than "
                                            "the 64 a line may hold"):
        list(read_table(str(path)))


def test_label_sets_sort_numbers_as_numbers_and_json_values_read_as_csv_text(tmp_path):
    examples = [TextExample(str(i), "t", None, label) for i, label in
                enumerate(["10", "2", "1", "2"])]
    assert own_files.label_set(examples) == ("1", "2", "10")
    assert own_files.label_set([TextExample("0", "t", None, "b"),
                                TextExample("1", "t", None, "a")]) == ("a", "b")
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"t": "x", "y": 1}\n{"t": "z", "y": true}\n')
    columns = own_files.OwnColumns("t", None, "y")
    assert [example.label for example in own_files.read_split(str(path), columns, False)] == [
        "1", "true"]
    with pytest.raises(TaskDataError, match="mixed.jsonl:2: column 'y' holds true; a "
                                            "regression label must be a finite number"):
        own_files.read_split(str(path), columns, True)


def test_prediction_columns_never_overwrite_the_inputs(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("text,prediction\na,b\n")
    with pytest.raises(TaskDataError, match="in.csv:1: the input already has a column "
                                            "'prediction'"):
        predicted_rows.output_columns(str(path), predicted_rows.prediction_columns(
            "regression"))
    rows = predicted_rows.prediction_values(
        "classification", {"probabilities": [[0.25, 0.75]]}, ["neg", "pos"])
    assert rows == [{"prediction": "pos", "probability_neg": 0.25, "probability_pos": 0.75}]


def test_files_are_for_classify_and_regress_which_help_lists(capsys):
    assert finetune_main(["--task", "rte", "--train_file", "train.csv", "--print_config"]) == 2
    assert "field 'data.train_file' must be given only for the tasks classify and regress" in (
        capsys.readouterr().err)
    assert finetune_main(["--task", "regress", "--train_file", "train.csv", "--dev_file",
                          "dev.jsonl", "--label_column", "score", "--print_config"]) == 0
    printed = capsys.readouterr().out
    assert "train_file: train.csv" in printed and "label_column: score" in printed
    with pytest.raises(SystemExit):
        finetune_main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "squad_v2, race, classify or regress" in shown and "--text_pair_column" in shown
