"""Texts every export test feeds its format (singles, pairs, truncated, empty, non-ASCII), the
environment of a fresh serving process that cannot import albert_tf from the checkout, and
the check that a format's ids and outputs are the Python tokenizer's and the Keras model's."""

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


def env_without_repo():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return env


def run_fresh_process(script: str, model_path, inputs: dict, folder) -> dict:
    """Runs `script` as `python serve.py MODEL inputs.json out.npz` in `folder`, in a Python
    that cannot import albert_tf from the checkout, and returns the arrays it saved. The
    inputs hold the pairs' columns as `first` and `second` besides `inputs`."""
    first, second = [list(column) for column in zip(*PAIRS)]
    (folder / "serve.py").write_text(script)
    (folder / "inputs.json").write_text(json.dumps(
        {"texts": TEXTS, "first": first, "second": second, **inputs}))
    subprocess.run([sys.executable, "serve.py", str(model_path), "inputs.json", "out.npz"],
                   cwd=folder, env=env_without_repo(), check=True, timeout=300)
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
