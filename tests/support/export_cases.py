"""Texts every export test feeds its format (singles, pairs, truncated, empty, non-ASCII;
multiple-choice questions), the environment of a fresh serving process that cannot import
albert_tf from the checkout, and the check that a format's ids and outputs are the Python
tokenizer's and the Keras model's."""

import json
import os
import subprocess
import sys

import numpy as np

MAX_SEQ_LENGTH = 24
LONG = " ".join(f"the cafe in {1990 + i % 9}, was he" for i in range(40))
TEXTS = ["The cafe was open.", "", "  \t ", "In 1995, a (deja) vu \"x\" - \u00a35.", LONG,
         "CAF\u00c9 ``DEJA''"]
PAIRS = [("the year", "he was in the cafe"), ("a month", ""), (LONG, "of and in to"),
         ("which are", LONG), (LONG, LONG), ("", "the")]
MASKED = ["the [MASK] was he.", "[MASK]. of [MASK]the cafe", "no mask", LONG + " [MASK]",
          "[MASK][MASK] in 1990,"]

# Multiple choice, two options per question: questions+options longer than QA_LENGTH pieces,
# a cloze question, a passage too long for MAX_SEQ_LENGTH and a short one.
QA_LENGTH = 5
CHOICES = ([LONG, "the year", "he was in the cafe"],
           ["which of these words was in the cafe in 1990, was he?", "in _ he was in the cafe",
            "of"],
           [["the month", "a year of and in to"], ["1995,", "the cafe and the year"],
            ["in", "to"]])


def race_training_ids(tokenizer, max_seq_length=MAX_SEQ_LENGTH, max_qa_length=QA_LENGTH):
    """`albert-finetune --task race`'s ids of CHOICES, flattened to one row per option
    (int32 `(questions * options, max_seq_length)`)."""
    from albert_tf.config.finetuning import load_finetune_config
    from albert_tf.finetuning.task_kinds import get_task
    from albert_tf.task_data.examples import MultipleChoiceExample

    race = get_task(load_finetune_config(None, [f"data.max_seq_length={max_seq_length}",
                                                f"data.max_qa_length={max_qa_length}"],
                                         task="race"))
    examples = [MultipleChoiceExample(str(index), *row, label=0)
                for index, row in enumerate(zip(*CHOICES))]
    arrays = race.convert(examples, tokenizer, is_training=False)
    return {name: arrays[name].reshape(-1, max_seq_length) for name in
            ("input_word_ids", "input_mask", "input_type_ids")}


def assert_same_rows(ids, expected):
    """Rows padded to the batch's longest (`ids`) against rows padded to max_seq_length."""
    for name, value in expected.items():
        width = ids[name].shape[-1]
        np.testing.assert_array_equal(ids[name], value[:, :width], err_msg=name)
        assert not value[:, width:].any(), name


def env_without_repo():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return env


# The first lines of every fresh serving process: the venv has albert_tf installed (editable),
# so leaving the checkout off sys.path is not enough; any import of it fails instead.
WITHOUT_ALBERT_TF = """\
import sys


class _NoAlbertTf:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("albert_tf", "data_prep"):
            raise ModuleNotFoundError(f"No module named {name!r}: a serving process runs "
                                      f"without albert-tf", name=name)
        return None


sys.meta_path.insert(0, _NoAlbertTf())
"""


def run_fresh_process(script: str, model_path, inputs: dict, folder) -> dict:
    """Runs `script` as `python -I -B serve.py MODEL inputs.json out.npz` in `folder`, in a
    Python where importing albert_tf or data_prep fails (`WITHOUT_ALBERT_TF`), and returns
    the arrays it saved. `-B`: importing an export folder's client leaves no `__pycache__`
    in it (`-I` ignores PYTHONDONTWRITEBYTECODE). The inputs hold the pairs' columns as
    `first` and `second` besides `inputs`."""
    first, second = [list(column) for column in zip(*PAIRS)]
    (folder / "serve.py").write_text(WITHOUT_ALBERT_TF + script)
    (folder / "inputs.json").write_text(json.dumps(
        {"texts": TEXTS, "first": first, "second": second, **inputs}))
    subprocess.run([sys.executable, "-I", "-B", "serve.py", str(model_path), "inputs.json",
                    "out.npz"], cwd=folder, env=env_without_repo(), check=True, timeout=300)
    with np.load(folder / "out.npz", allow_pickle=True) as outputs:
        return dict(outputs)


def assert_same_encoding(outputs, prefix, expected_ids, encoder):
    """`outputs["<prefix>/<name>"]` hold `expected_ids` and the encoder's outputs on them
    (to 1e-5; `sequence_output` at the unpadded positions)."""
    for name, value in expected_ids.items():
        np.testing.assert_array_equal(outputs[f"{prefix}/{name}"], value, err_msg=name)
    reference = encoder(expected_ids, training=False)
    mask = expected_ids["input_mask"].astype(bool)
    np.testing.assert_allclose(outputs[f"{prefix}/pooled_output"],
                               reference["pooled_output"].numpy(), rtol=0, atol=1e-5)
    np.testing.assert_allclose(outputs[f"{prefix}/sequence_output"][mask],
                               reference["sequence_output"].numpy()[mask], rtol=0, atol=1e-5)
