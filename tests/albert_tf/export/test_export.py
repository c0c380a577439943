"""SavedModel export: a fresh process without albert_tf serves raw text as the Keras model does.

The reference side is the Keras model in this process fed with ids from the Python tokenizer
(`AlbertTokenizer`, which follows the original code); the exported side tokenizes in the graph
with tensorflow-text and is loaded in a separate Python process that imports only tensorflow
and tensorflow_text.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from export_cases import (
    CHOICES,
    MASKED,
    MAX_SEQ_LENGTH,
    PAIRS,
    QA_LENGTH,
    TEXTS,
    assert_same_encoding,
    assert_same_rows,
    env_without_repo,
    race_training_ids,
    run_fresh_process,
)
from helpers import randomize_weights
from thresholds import below

from albert_tf.checkpoints.original import build_model
from albert_tf.cli.export import main as export_main
from albert_tf.config import precision as precision_rule
from albert_tf.config.precision import precision_policy
from albert_tf.export import ExportError, ExportOptions, export_saved_model, load_saved_model
from albert_tf.io import machine
from albert_tf.models.task_models import AlbertMultipleChoice


@pytest.fixture(scope="module")
def exported(model_folder, tmp_path_factory):
    """The model folder exported with the CLI (spm model and max_seq_length from the folder)."""
    output = tmp_path_factory.mktemp("export") / "saved_model"
    assert export_main(["--checkpoint", str(model_folder), "--output", str(output)]) == 0
    return output


FRESH_PROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # registers the SentencePiece and trimming ops

    path, inputs, output = sys.argv[1:]
    with open(inputs) as f:
        inputs = json.load(f)
    model = tf.saved_model.load(path)
    results = {}
    def run(name, **kwargs):
        outputs = model.signatures[name](**{k: tf.constant(v) for k, v in kwargs.items()})
        for key, value in outputs.items():
            results[f"{name}/{key}"] = value.numpy()
    run("serving_default", text=inputs["texts"])
    run("serving_pairs", text=inputs["first"], text_pair=inputs["second"])
    run("fill_mask", text=inputs["masked"])
    ids = model.signatures["preprocess"](text=tf.constant(inputs["texts"]))
    run("encode_ids", **{k: v.numpy() for k, v in ids.items()})
    loaded = sorted(name for name in sys.modules
                    if name.split(".")[0] in ("albert_tf", "data_prep"))
    assert not loaded, loaded
    np.savez(output, **results)
""")


@pytest.fixture(scope="module")
def fresh_process_outputs(exported, tmp_path_factory):
    return run_fresh_process(FRESH_PROCESS, exported, {"masked": MASKED},
                             tmp_path_factory.mktemp("fresh"))


def test_raw_text_in_a_fresh_process_matches_keras_on_python_ids(
        fresh_process_outputs, pretrainer, python_tokenizer):
    singles = python_tokenizer.encode_for_model(TEXTS, max_seq_length=MAX_SEQ_LENGTH)
    assert singles["input_word_ids"].shape[1] == MAX_SEQ_LENGTH  # LONG was truncated
    assert_same_encoding(fresh_process_outputs, "serving_default", singles, pretrainer.encoder)
    first, second = [list(column) for column in zip(*PAIRS)]
    pairs = python_tokenizer.encode_for_model(first, second, max_seq_length=MAX_SEQ_LENGTH)
    assert_same_encoding(fresh_process_outputs, "serving_pairs", pairs, pretrainer.encoder)
    assert pairs["input_mask"][4].sum() == MAX_SEQ_LENGTH  # both long: both truncated
    for name in ("pooled_output", "sequence_output"):
        assert fresh_process_outputs[f"serving_default/{name}"].dtype == np.float32
        np.testing.assert_array_equal(fresh_process_outputs[f"encode_ids/{name}"],
                                      fresh_process_outputs[f"serving_default/{name}"])


def test_fill_mask_in_a_fresh_process_matches_the_mlm_head(
        fresh_process_outputs, pretrainer, python_tokenizer):
    ids = python_tokenizer.pack([python_tokenizer.encode_with_masks(text) for text in MASKED],
                                max_seq_length=MAX_SEQ_LENGTH)
    word_ids = ids["input_word_ids"]
    positions = [np.flatnonzero(row == python_tokenizer.mask_id) for row in word_ids]
    assert [len(p) for p in positions] == [1, 2, 0, 0, 2]  # LONG's mask was truncated away
    padded = np.zeros((len(MASKED), 2), np.int32)
    for row, found in enumerate(positions):
        padded[row, :len(found)] = found
    encoded = pretrainer.encoder(ids, training=False)
    logits = pretrainer.masked_lm(encoded["sequence_output"], padded,
                                  pretrainer.encoder.get_embedding_table())
    probabilities = tf.nn.softmax(logits).numpy()
    probabilities[..., [0, 2, 3, 4]] = -1  # fill_mask never proposes pad/CLS/SEP/MASK
    out = {name.split("/")[1]: value for name, value in fresh_process_outputs.items()
           if name.startswith("fill_mask/")}
    assert out["top_k_ids"].shape == (len(MASKED), 2, 5)
    pieces = python_tokenizer._tokenizer.pieces
    for row, found in enumerate(positions):
        np.testing.assert_array_equal(out["mask_positions"][row][:len(found)], found)
        assert (out["mask_positions"][row][len(found):] == -1).all()
        for slot in range(len(found)):
            expected = np.argsort(-probabilities[row, slot])[:5]
            np.testing.assert_array_equal(out["top_k_ids"][row, slot], expected)
            np.testing.assert_allclose(out["top_k_probabilities"][row, slot],
                                       probabilities[row, slot, expected], atol=1e-5)
            assert [p.decode() for p in out["top_k_pieces"][row, slot]] == pieces(expected)
        assert (out["top_k_ids"][row, len(found):] == -1).all()


@pytest.fixture(scope="module")
def loaded(exported):
    return load_saved_model(str(exported))


@pytest.mark.parametrize("texts", [
    ["x"], [], ["", " ", "\n\t\u3000"], [b"\xff\xfe\xfd", b"caf\xc3", b"\x00\x00"],
    ["the cafe " * 200_000], ["a"] * 40])
def test_any_input_is_served(loaded, texts, python_tokenizer):
    outputs = loaded.signatures["serving_default"](text=tf.constant(texts, tf.string))
    batch, length = outputs["input_word_ids"].shape
    assert batch == len(texts) and 2 <= length <= MAX_SEQ_LENGTH
    assert outputs["sequence_output"].shape == (batch, length, 32)
    assert np.isfinite(outputs["sequence_output"].numpy()).all()
    assert np.isfinite(outputs["pooled_output"].numpy()).all()
    if texts and isinstance(texts[0], str):
        expected = python_tokenizer.encode_for_model(texts, max_seq_length=MAX_SEQ_LENGTH)
        np.testing.assert_array_equal(outputs["input_word_ids"], expected["input_word_ids"])


def test_saved_model_cli_lists_the_signatures(exported):
    cli = shutil.which("saved_model_cli", path=os.path.dirname(sys.executable)) or \
        shutil.which("saved_model_cli")
    assert cli, "saved_model_cli is installed with tensorflow"
    shown = subprocess.run([cli, "show", "--all", "--dir", str(exported)], check=True,
                           capture_output=True, text=True, env=env_without_repo()).stdout
    signatures = parse_saved_model_cli(shown)
    assert set(signatures) == {"serving_default", "serving_pairs", "encode_ids", "preprocess",
                               "preprocess_pairs", "fill_mask"}
    ids = {name: ("DT_INT32", "(-1, -1)")
           for name in ("input_word_ids", "input_mask", "input_type_ids")}
    encoded = {"pooled_output": ("DT_FLOAT", "(-1, 32)"),
               "sequence_output": ("DT_FLOAT", "(-1, -1, 32)")}
    text = ("DT_STRING", "(-1)")
    assert signatures["serving_default"] == ({"text": text}, {**ids, **encoded})
    assert signatures["serving_pairs"] == ({"text": text, "text_pair": text}, {**ids, **encoded})
    assert signatures["encode_ids"] == (ids, encoded)
    assert signatures["preprocess"] == ({"text": text}, ids)
    assert signatures["fill_mask"] == ({"text": text}, {
        "mask_positions": ("DT_INT32", "(-1, -1)"), "top_k_ids": ("DT_INT32", "(-1, -1, 5)"),
        "top_k_pieces": ("DT_STRING", "(-1, -1, 5)"),
        "top_k_probabilities": ("DT_FLOAT", "(-1, -1, 5)")})
    assert (exported / "assets" / "30k-clean.model").is_file()


def parse_saved_model_cli(shown: str) -> dict:
    """signature name -> ({input: (dtype, shape)}, {output: (dtype, shape)})."""
    signatures = {}
    for block in re.split(r"\nsignature_def\[", shown)[1:]:
        name = block[1:block.index("'", 1)]
        if name.startswith("__"):
            continue
        tensors = ({}, {})
        for kind, tensor, dtype, shape in re.findall(
                r"(inputs|outputs)\['(\w+)'\] tensor_info:\s+dtype: (\w+)\s+shape: (\([-\d, ]*\))",
                block):
            tensors[kind == "outputs"][tensor] = (dtype, shape)
        signatures[name] = tensors
    return signatures


def test_loading_says_what_is_missing_without_tensorflow_text(exported):
    script = textwrap.dedent(f"""
        import sys
        sys.modules["tensorflow_text"] = None  # as if tensorflow-text were not installed
        import tensorflow as tf
        try:
            tf.saved_model.load({str(exported)!r})
        except Exception as error:
            print("RAW:", error)
        from albert_tf.export import ExportError, load_saved_model
        try:
            load_saved_model({str(exported)!r})
        except ExportError as error:
            print("OURS:", error)
    """)
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")).stdout
    assert "RAW: Op type not registered 'Sentencepiece" in shown
    assert "OURS: cannot import tensorflow_text" in shown
    assert "import tensorflow_text` before tf.saved_model.load" in shown


def test_mixed_precision_xla_export_gives_float32_outputs(
        seeded_pretrainer, released_style_model, python_tokenizer, tmp_path, record_property):
    pretrainer = seeded_pretrainer
    with precision_policy("mixed_bfloat16"):
        encoder = build_model(pretrainer.config, masked_lm=False, sentence_objective="none")
    encoder.set_weights(pretrainer.encoder.get_weights())
    assert encoder.compute_dtype == "bfloat16"
    options = ExportOptions(max_seq_length=MAX_SEQ_LENGTH, jit_compile=True,
                            pad_to_multiple_of=8)
    export_saved_model(encoder, released_style_model, str(tmp_path / "bf16"), options)
    served = load_saved_model(str(tmp_path / "bf16"))
    assert "fill_mask" not in served.signatures  # an encoder has no MLM head
    texts = ["the cafe", "", "he was in"]
    outputs = served.signatures["serving_default"](text=tf.constant(texts))
    assert outputs["pooled_output"].dtype == tf.float32
    assert outputs["sequence_output"].dtype == tf.float32
    ids = python_tokenizer.encode_for_model(texts, max_seq_length=MAX_SEQ_LENGTH)
    assert 8 < ids["input_word_ids"].shape[1] < 16
    assert outputs["input_word_ids"].shape[1] == 16  # padded up to the multiple of 8
    reference = pretrainer.encoder(ids)
    difference = np.abs(outputs["pooled_output"].numpy() - reference["pooled_output"].numpy())
    assert difference.max() > 0  # bfloat16 compute: close, not equal
    # bfloat16 keeps 8 significant bits and its rounding adds up over the layers: over seeds
    # 0-49 the largest difference was 0.057 (median 0.016), so the bound leaves 0.04.
    below(record_property, "largest pooled_output difference to float32", difference.max(),
          0.1)
    with open(tmp_path / "bf16" / "assets.extra" / "albert_export.json") as f:
        assert json.load(f)["compute_dtype"] == "bfloat16"


class _Classifier(tf_keras.Model):
    """A task model as the export expects one: the encoder's outputs plus its own."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.classifier = tf_keras.layers.Dense(3)

    def call(self, inputs, training=None):
        outputs = self.encoder(inputs, training=training)
        return {**outputs,
                "probabilities": tf.nn.softmax(self.classifier(outputs["pooled_output"]))}


def test_a_task_model_exports_its_outputs(pretrainer, released_style_model, python_tokenizer,
                                          tmp_path):
    model = _Classifier(pretrainer.encoder)
    ids = python_tokenizer.encode_for_model(TEXTS, max_seq_length=MAX_SEQ_LENGTH)
    expected = model(ids)["probabilities"].numpy()
    export_saved_model(model, released_style_model, str(tmp_path / "task"),
                       ExportOptions(max_seq_length=MAX_SEQ_LENGTH))
    served = load_saved_model(str(tmp_path / "task"))
    outputs = served.signatures["serving_default"](text=tf.constant(TEXTS))
    np.testing.assert_allclose(outputs["probabilities"].numpy(), expected, atol=1e-6)


def test_a_multiple_choice_model_serves_rows_packed_as_its_training_packed_them(
        pretrainer, released_style_model, python_tokenizer, tmp_path):
    """serving_choices takes (passage, question, option) rows: its ids are albert-finetune's
    RACE rows (question+option cut to the run's last max_qa_length pieces, recorded in
    albert_export.json), its option_logits the Keras model's on them."""
    model = AlbertMultipleChoice(pretrainer.config, num_choices=2)
    expected = race_training_ids(python_tokenizer)
    model(expected, training=False)
    randomize_weights(model, seed=12)
    export_saved_model(model, released_style_model, str(tmp_path / "race"),
                       ExportOptions(max_seq_length=MAX_SEQ_LENGTH),
                       metadata={"max_qa_length": QA_LENGTH})
    facts = json.loads((tmp_path / "race" / "assets.extra" / "albert_export.json").read_text())
    assert facts["max_qa_length"] == QA_LENGTH
    contexts, questions, options = CHOICES
    rows = {"context": [c for c, row in zip(contexts, options) for _ in row],
            "question": [q for q, row in zip(questions, options) for _ in row],
            "option": [option for row in options for option in row]}
    served = load_saved_model(str(tmp_path / "race")).signatures["serving_choices"](
        **{name: tf.constant(texts) for name, texts in rows.items()})
    assert_same_rows({name: value.numpy() for name, value in served.items()}, expected)
    np.testing.assert_allclose(served["option_logits"].numpy(),
                               model(expected, training=False)["option_logits"].numpy(),
                               rtol=1e-6, atol=1e-5)


def test_cli_exports_one_checkpoint_without_the_head(model_folder, tmp_path):
    output = tmp_path / "encoder"
    assert export_main(["--checkpoint", str(model_folder / "checkpoints" / "ckpt-7"),
                        "--output", str(output), "--encoder_only",
                        "--max_seq_length", "16"]) == 0
    facts = json.loads((output / "assets.extra" / "albert_export.json").read_text())
    assert facts["global_step"] == 7 and facts["options"]["max_seq_length"] == 16
    assert "fill_mask" not in facts["signatures"]


@pytest.mark.parametrize("flags, policy", [("avx2 avx512f avx512_bf16", "mixed_bfloat16"),
                                           ("avx2 fma", "float32")])
def test_cli_precision_auto_resolves_for_this_cpu(model_folder, tmp_path, monkeypatch, capsys,
                                                  flags, policy):
    """auto as `train.precision` picks it (the size rule lowered to this model's 32): the
    model is built under that policy, its outputs stay float32."""
    (tmp_path / "cpuinfo").write_text(f"model name\t: Made-up CPU\nflags\t\t: {flags}\n")
    monkeypatch.setattr(machine, "CPUINFO", str(tmp_path / "cpuinfo"))
    monkeypatch.setattr(precision_rule, "CPU_BFLOAT16_MIN_HIDDEN_SIZE", 32)
    output = tmp_path / "auto"
    assert export_main(["--checkpoint", str(model_folder), "--output", str(output),
                        "--encoder_only", "--max_seq_length", "16", "--precision", "auto"]) == 0
    assert f"albert-export: precision auto -> {policy} (" in capsys.readouterr().out
    facts = json.loads((output / "assets.extra" / "albert_export.json").read_text())
    assert facts["precision"] == policy
    served = load_saved_model(str(output)).signatures["serving_default"]
    outputs = served(text=tf.constant(["a short text"]))
    assert {tensor.dtype for tensor in outputs.values() if tensor.dtype.is_floating} == {
        tf.float32}


def test_cli_errors_leave_nothing_behind(model_folder, tmp_path, capsys):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    assert export_main(["--checkpoint", str(model_folder), "--output", str(occupied)]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert os.listdir(occupied) == ["keep.txt"]

    other = tmp_path / "other.model"
    other.write_bytes(b"not a sentencepiece model")
    assert export_main(["--checkpoint", str(model_folder), "--spm_model", str(other),
                        "--output", str(tmp_path / "x")]) == 2
    assert "not a SentencePiece model" in capsys.readouterr().err
    assert export_main(["--checkpoint", str(model_folder), "--max_seq_length", "65",
                        "--output", str(tmp_path / "x")]) == 2
    assert "exceeds the model's max_position_embeddings 64" in capsys.readouterr().err
    assert export_main(["--checkpoint", str(model_folder), "--top_k", "0",
                        "--output", str(tmp_path / "x")]) == 2
    assert "top_k must be between 1 and" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["occupied", "other.model"]


def test_a_tokenizer_of_another_size_is_refused(pretrainer, tmp_path):
    import sentencepiece as spm

    from albert_tf.text.vocabulary import train_sentencepiece

    path = train_sentencepiece((f"word{i} and more words {i % 7}" for i in range(300)),
                               str(tmp_path / "small"), vocab_size=40)
    assert spm.SentencePieceProcessor(model_file=path).get_piece_size() != \
        pretrainer.config.vocab_size
    with pytest.raises(ExportError, match="40 pieces but the model's vocab_size"):
        export_saved_model(pretrainer, path, str(tmp_path / "out"))
