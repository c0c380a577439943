"""The quickstart's record (`scripts/quickstart_record.py`), from an `albert-eval` file and a
downstream check file written by hand in the forms those commands write."""

import json

import pytest
from repository import script_module


@pytest.fixture(scope="module")
def record_script():
    with script_module("scripts", "quickstart_record.py", name="quickstart_record") as module:
        yield module


def seed(dev, test):
    return {"metric": "accuracy", "value": dev, "test": test, "best_step": 300,
            "constant": 0.2394, "constant_test": 0.23584905660377358, "stuck": False}


EVALUATION = {
    "checkpoint": "quickstart/run/checkpoints/ckpt-1200",
    "sets": {"sop": {"mlm_accuracy": 0.104812345}, "nsp": {}},
    "accuracy": {"mlm": 0.104812345, "nsp": 0.5, "sop": 0.73076923},
    "representation_spread": {"sequence_spread": 0.912345, "pooled_spread": 0.80049}}
CHECK = {
    "task_dir": "quickstart/tasks/bbc-news/", "metric": "accuracy", "train_steps": 300,
    "recipe": "small_model_v4",
    "seeds": {"pretrained": {"10": seed(0.5, 0.51886792), "2": seed(0.4, 0.39622641)},
              "random": {"10": seed(0.45, 0.5), "2": seed(0.41, 0.41509434)}},
    "means": {"pretrained": 0.457547165, "random": 0.45754717},
    "split": "test", "gain": 0.0, "low": -0.2, "high": 0.2, "paired_seeds": 2,
    "stuck_pretrained": [], "stuck_random": ["2"], "verdict": "failed", "task": {}}


def write(folder, name, document):
    path = folder / name
    path.write_text(json.dumps(document))
    return str(path)


def test_the_record_holds_the_printed_figures_rounded_and_in_seed_order(tmp_path,
                                                                         record_script):
    output = tmp_path / "results" / "record.json"
    assert record_script.main([
        "--eval", write(tmp_path, "table6.json", EVALUATION),
        "--check", write(tmp_path, "check.json", CHECK), "--output", str(output),
        "--", "--override", "train.train_steps=400"]) == 0
    record = json.loads(output.read_text())
    assert record["made_by"] == "bash scripts/quickstart.sh --override train.train_steps=400"
    assert record["checkpoint"] == "ckpt-1200"
    assert record["heldout"] == {"mlm_accuracy": 0.1048, "sop_accuracy": 0.7308,
                                 "nsp_accuracy": 0.5, "pooled_spread": 0.8005,
                                 "sequence_spread": 0.9123}
    check = record["downstream_check"]
    assert (check["task"], check["split"], check["majority_class"]) == ("bbc-news", "test",
                                                                        0.2358)
    assert (check["pretrained"], check["random"], check["verdict"]) == (0.4575, 0.4575,
                                                                        "failed")
    assert check["stuck_random"] == ["2"]
    # Seeds in numeric order (2 before 10), each start's test score.
    assert list(check["scores_by_seed"]["pretrained"].items()) == [("2", 0.3962),
                                                                   ("10", 0.5189)]
    assert check["scores_by_seed"]["random"] == {"2": 0.4151, "10": 0.5}


def test_a_dev_only_check_records_dev_scores_and_no_check_records_none(tmp_path,
                                                                       record_script):
    dev_only = {**CHECK, "split": "dev"}
    output = tmp_path / "record.json"
    assert record_script.main(["--eval", write(tmp_path, "table6.json", EVALUATION),
                               "--check", write(tmp_path, "check.json", dev_only),
                               "--output", str(output)]) == 0
    check = json.loads(output.read_text())["downstream_check"]
    assert check["scores_by_seed"]["pretrained"] == {"2": 0.4, "10": 0.5}
    assert check["majority_class"] == 0.2394
    assert record_script.main(["--eval", write(tmp_path, "table6.json", EVALUATION),
                               "--output", str(output)]) == 0
    assert "downstream_check" not in json.loads(output.read_text())


def test_a_missing_file_or_field_is_named_and_nothing_is_written(tmp_path, record_script,
                                                                 capsys):
    output = tmp_path / "record.json"
    assert record_script.main(["--eval", str(tmp_path / "absent.json"),
                               "--output", str(output)]) == 2
    assert "absent.json: no such file" in capsys.readouterr().err
    broken = {**EVALUATION, "accuracy": {"mlm": 0.1, "nsp": 0.5}}
    path = write(tmp_path, "table6.json", broken)
    assert record_script.main(["--eval", path, "--output", str(output)]) == 2
    assert f"{path}: no field 'accuracy.sop'" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{\n  oops")
    assert record_script.main(["--eval", str(tmp_path / "bad.json"),
                               "--output", str(output)]) == 2
    assert "bad.json: line 2: not JSON" in capsys.readouterr().err
    assert not output.exists()
