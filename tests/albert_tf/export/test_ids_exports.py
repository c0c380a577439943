"""The exports that take ids, LiteRT and ONNX: a fresh process with only numpy,
sentencepiece and the runtime (the LiteRT interpreter, onnxruntime) turns text into the Python
tokenizer's ids and gets the Keras model's outputs.

The reference side is the Keras model in this process fed with ids from `AlbertTokenizer`;
the exported side is the folder's own client (`albert_client.py`) and model file, run in a
separate Python that never imports albert_tf, TensorFlow or tensorflow-text.
"""

import json
import textwrap
import warnings

import numpy as np
import pytest
import tensorflow as tf
from export_cases import (
    MAX_SEQ_LENGTH,
    PAIRS,
    TEXTS,
    assert_same_encoding,
    run_fresh_process,
)
from helpers import random_inputs
from thresholds import above, below

from albert_tf.cli.export import main as export_main
from albert_tf.export.litert import convert
from albert_tf.export.representative import representative_inputs


@pytest.fixture(scope="module", params=["tflite", "onnx"])
def ids_folder(request, model_folder, tmp_path_factory):
    """The model folder exported with the CLI (float32), tokenizer and client beside."""
    output = tmp_path_factory.mktemp("export") / request.param
    assert export_main(["--checkpoint", str(model_folder), "--format", request.param,
                        "--output", str(output)]) == 0
    return output


FRESH_PROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np

    folder, inputs, output = sys.argv[1:]
    sys.path.insert(0, folder)
    from albert_client import AlbertClient

    with open(inputs) as f:
        inputs = json.load(f)
    model = AlbertClient(folder)
    results = {}
    for name, outputs in (("singles", model(inputs["texts"])),
                          ("pairs", model(inputs["first"], inputs["second"]))):
        results.update({f"{name}/{key}": value for key, value in outputs.items()})
    for batch, length in inputs["shapes"]:
        ids = {name: np.ones((batch, length), np.int32)
               for name in ("input_word_ids", "input_mask", "input_type_ids")}
        results[f"shape/{batch}x{length}"] = model.run_ids(ids)["sequence_output"]
    try:
        model.run_ids({name: np.ones((1, model.max_seq_length + 1), np.int32)
                       for name in ("input_word_ids", "input_mask", "input_type_ids")})
    except ValueError as error:
        results["too_long"] = np.array(str(error))
    loaded = sorted(name for name in sys.modules if name.split(".")[0] in
                    ("albert_tf", "data_prep", "tensorflow", "tensorflow_text", "tf_keras"))
    assert not loaded, loaded
    np.savez(output, **results)
""")
SHAPES = [(0, 5), (1, 2), (3, 7), (2, MAX_SEQ_LENGTH)]


@pytest.fixture(scope="module")
def fresh_process_outputs(ids_folder, tmp_path_factory):
    return run_fresh_process(FRESH_PROCESS, ids_folder, {"shapes": SHAPES},
                             tmp_path_factory.mktemp("fresh"))


def test_text_through_the_client_gives_python_ids_and_keras_outputs(
        fresh_process_outputs, pretrainer, python_tokenizer):
    singles = python_tokenizer.encode_for_model(TEXTS, max_seq_length=MAX_SEQ_LENGTH)
    assert singles["input_word_ids"].shape[1] == MAX_SEQ_LENGTH  # the long text was truncated
    assert_same_encoding(fresh_process_outputs, "singles", singles, pretrainer.encoder)
    first, second = [list(column) for column in zip(*PAIRS)]
    pairs = python_tokenizer.encode_for_model(first, second, max_seq_length=MAX_SEQ_LENGTH)
    assert_same_encoding(fresh_process_outputs, "pairs", pairs, pretrainer.encoder)
    assert fresh_process_outputs["singles/pooled_output"].dtype == np.float32


def test_any_batch_and_length_up_to_the_limit_and_a_clear_error_past_it(
        fresh_process_outputs, pretrainer):
    for batch, length in SHAPES:
        ids = {name: tf.ones((batch, length), tf.int32)
               for name in ("input_word_ids", "input_mask", "input_type_ids")}
        expected = pretrainer.encoder(ids, training=False)["sequence_output"].numpy()
        np.testing.assert_allclose(fresh_process_outputs[f"shape/{batch}x{length}"], expected,
                                   rtol=0, atol=1e-5)
    assert str(fresh_process_outputs["too_long"]) == (
        f"length {MAX_SEQ_LENGTH + 1} is outside 1..{MAX_SEQ_LENGTH}, the lengths this model "
        f"was exported for (max_seq_length)")


def test_the_folder_holds_the_model_its_tokenizer_and_client(ids_folder):
    facts = json.loads((ids_folder / "albert_export.json").read_text())
    assert facts["max_seq_length"] == MAX_SEQ_LENGTH and facts["global_step"] == 7
    assert facts["digit_comma_pieces"]  # the released-style vocabulary has "5,"
    model_file = {"tflite": "model.tflite", "onnx": "model.onnx"}[facts["format"]]
    assert sorted(path.name for path in ids_folder.iterdir()) == sorted([
        ".albert-folder.json", "30k-clean.model", "albert_export.json", "albert_client.py",
        model_file])
    if facts["format"] == "tflite":
        from ai_edge_litert.interpreter import Interpreter

        assert facts["quantize"] == "none"
        interpreter = Interpreter(model_path=str(ids_folder / model_file))
        assert interpreter.get_signature_list() == {"serving_default": {
            "inputs": ["input_mask", "input_type_ids", "input_word_ids"],
            "outputs": ["pooled_output", "sequence_output"]}}
        ops = {op["op_name"] for op in interpreter._get_ops_details()}
        assert ops and all(op.isupper() for op in ops), ops  # builtins only: no custom ops
    else:
        import onnxruntime

        session = onnxruntime.InferenceSession(str(ids_folder / model_file),
                                               providers=["CPUExecutionProvider"])
        assert [(value.name, value.shape) for value in session.get_inputs()] == [
            (name, ["batch", "sequence"])
            for name in ("input_word_ids", "input_mask", "input_type_ids")]
        assert [(value.name, value.shape) for value in session.get_outputs()] == [
            ("pooled_output", ["batch", 32]), ("sequence_output", ["batch", "sequence", 32])]


@pytest.fixture(scope="module")
def task_folder(tmp_path_factory):
    """A GLUE SST-2 folder whose training texts calibrate int8."""
    folder = tmp_path_factory.mktemp("tasks") / "SST-2"
    folder.mkdir()
    rows = [f"the cafe was {'open' if i % 2 else 'in the year'} {1990 + i}, he\t{i % 2}"
            for i in range(40)]
    (folder / "train.tsv").write_text("sentence\tlabel\n" + "\n".join(rows) + "\n")
    return folder


def quantized_outputs(flatbuffer, inputs):
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=flatbuffer)
    tensor_types = {detail["dtype"] for detail in interpreter.get_tensor_details()}
    return interpreter.get_signature_runner()(**inputs), tensor_types


def test_quantized_files_are_smaller_and_stay_close(seeded_pretrainer, python_tokenizer,
                                                    task_folder, record_property):
    pretrainer = seeded_pretrainer
    representative = representative_inputs(str(task_folder), python_tokenizer,
                                           MAX_SEQ_LENGTH, count=30)
    assert len(representative) == 30 and representative[0]["input_word_ids"][0, 0] == 2
    texts = (task_folder / "train.tsv").read_text().splitlines()[1:6]
    inputs = python_tokenizer.encode_for_model([line.split("\t")[0] for line in texts],
                                               max_seq_length=MAX_SEQ_LENGTH)
    expected = pretrainer.encoder(inputs, training=False)["pooled_output"].numpy()
    sizes, errors, correlations = {}, {}, {}
    for quantize in ("none", "float16", "dynamic_int8", "int8"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            flatbuffer = convert(pretrainer, quantize, representative)
        # convert() keeps int8 calibration's TensorFlow-internal interpreter from warning.
        assert not [str(warning.message) for warning in caught
                    if "tf.lite.Interpreter is deprecated" in str(warning.message)], quantize
        outputs, tensor_types = quantized_outputs(flatbuffer, inputs)
        sizes[quantize] = len(flatbuffer)
        errors[quantize] = np.abs(outputs["pooled_output"] - expected).max()
        correlations[quantize] = min(np.corrcoef(row, reference)[0, 1] for row, reference
                                     in zip(outputs["pooled_output"], expected))
        assert outputs["pooled_output"].dtype == np.float32
        assert (np.float16 in tensor_types) == (quantize == "float16"), quantize
        assert (np.int8 in tensor_types) == quantize.endswith("int8"), quantize
    assert sizes["none"] > sizes["float16"] > sizes["dynamic_int8"]
    below(record_property, "float32 file's largest error", errors["none"], 1e-5)
    for quantize, (low, high) in {"float16": (1e-5, 1e-2), "dynamic_int8": (1e-2, 0.1)}.items():
        above(record_property, f"{quantize} file's largest error, low bound", errors[quantize],
              low)  # rounded: close, not equal
        below(record_property, f"{quantize} file's largest error, high bound",
              errors[quantize], high)
    # Full-integer int8 of a 32-wide random-weight model is coarse (every activation on 256
    # levels); calibrated on the task's texts it still points the same way on them (over
    # seeds 0-49 its lowest correlation was 0.58, median 0.93; 0 would be no relation).
    above(record_property, "dynamic_int8 file's lowest correlation",
          correlations["dynamic_int8"], 0.999)
    above(record_property, "int8 file's lowest correlation", correlations["int8"], 0.5)


def test_representative_shards_are_cut_to_their_lengths(tmp_path):
    def feature(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    with tf.io.TFRecordWriter(str(tmp_path / "shard-0.tfrecord")) as writer:
        for length in (4, 0, 6):
            mask = [1] * length + [0] * (8 - length)
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "input_ids": feature([2] + [7] * (length - 2) + [3] + [0] * (8 - length)
                                     if length else [0] * 8),
                "input_mask": feature(mask), "segment_ids": feature([0] * 8),
                "next_sentence_labels": feature([0])})).SerializeToString())
    examples = representative_inputs(str(tmp_path), None, max_seq_length=5)
    assert [example["input_mask"].tolist() for example in examples] == [[[1] * 4], [[1] * 5]]
    assert examples[0]["input_word_ids"].tolist() == [[2, 7, 7, 3]]
    assert examples[1]["input_word_ids"].dtype == np.int32


@pytest.mark.parametrize("flags, message", [
    (["--format", "tflite", "--quantize", "int8"], "--quantize int8 needs --representative"),
    (["--format", "tflite", "--precision", "mixed_float16"], "choose their precision with"),
    (["--format", "onnx", "--precision", "mixed_bfloat16"], "made from the float32 model"),
    (["--quantize", "float16"], "are for --format tflite"),
    (["--format", "tflite", "--jit_compile"], "are for --format saved_model"),
])
def test_flags_a_format_would_ignore_are_refused(model_folder, tmp_path, capsys, flags,
                                                 message):
    assert export_main(["--checkpoint", str(model_folder), "--output", str(tmp_path / "x"),
                        *flags]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_mean_pooled_classifier_converts_with_its_probabilities(pretrainer):
    from ai_edge_litert.interpreter import Interpreter

    from albert_tf.models.task_models import AlbertClassifier

    classifier = AlbertClassifier(pretrainer.config, num_classes=3, pooling="mean")
    inputs = {name: np.asarray(value) for name, value in random_inputs(
        [5, 9, 2], 9, pretrainer.config.vocab_size, seed=6).items()}
    expected = classifier(inputs, training=False)["probabilities"].numpy()
    runner = Interpreter(model_content=convert(classifier)).get_signature_runner()
    np.testing.assert_allclose(runner(**inputs)["probabilities"], expected, atol=1e-6)
