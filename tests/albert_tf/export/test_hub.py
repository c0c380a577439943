"""The TF Hub text pair: `hub.KerasLayer`s over the exported preprocessor and encoder give the
Python tokenizer's ids and the Keras encoder's outputs (also in a fresh process where albert_tf
cannot be imported), and a classifier built of them fine-tunes the encoder, as users do with
TF Hub's own ALBERT."""

import json
import textwrap

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_hub as hub
import tf_keras
from export_cases import (
    MAX_SEQ_LENGTH,
    PAIRS,
    TEXTS,
    assert_same_encoding,
    run_fresh_process,
)
from thresholds import above, below

from albert_tf.cli.export import main as export_main
from albert_tf.export.loading import register_text_ops


@pytest.fixture(scope="module")
def hub_folder(model_folder, tmp_path_factory):
    output = tmp_path_factory.mktemp("export") / "hub"
    assert export_main(["--checkpoint", str(model_folder), "--format", "hub",
                        "--output", str(output)]) == 0
    return output


@pytest.fixture(scope="module")
def preprocessor(hub_folder):
    register_text_ops()
    return hub.load(str(hub_folder / "preprocessor"))


def padded(ids, length):
    return {name: np.pad(value, [(0, 0), (0, length - value.shape[1])])
            for name, value in ids.items()}


def test_the_preprocessor_gives_python_ids_at_the_length_asked(preprocessor, python_tokenizer):
    outputs = preprocessor(tf.constant(TEXTS))
    expected = python_tokenizer.encode_for_model(TEXTS, max_seq_length=MAX_SEQ_LENGTH)
    for name, value in padded(expected, MAX_SEQ_LENGTH).items():
        np.testing.assert_array_equal(outputs[name], value, err_msg=name)
    tokenize = hub.KerasLayer(preprocessor.tokenize)
    pack = hub.KerasLayer(preprocessor.bert_pack_inputs, arguments={"seq_length": 16})
    first, second = [list(column) for column in zip(*PAIRS)]
    outputs = pack([tokenize(tf.constant(first)), tokenize(tf.constant(second))])
    expected = python_tokenizer.encode_for_model(first, second, max_seq_length=16)
    for name, value in padded(expected, 16).items():
        np.testing.assert_array_equal(outputs[name], value, err_msg=name)
    special = {name: int(value) for name, value in
               preprocessor.tokenize.get_special_tokens_dict().items()}
    assert special == {"vocab_size": python_tokenizer.vocab_size, "start_of_sequence_id": 2,
                       "end_of_segment_id": 3, "padding_id": 0, "mask_id": 4}


HUB_PROCESS = textwrap.dedent("""
    import json
    import numpy as np
    import tensorflow as tf
    import tensorflow_hub as hub
    import tensorflow_text  # registers the SentencePiece and trimming ops

    path, inputs, output = sys.argv[1:]
    with open(inputs) as f:
        inputs = json.load(f)
    preprocessor = hub.load(f"{path}/preprocessor")
    encoder = hub.KerasLayer(f"{path}/encoder")
    tokenize = hub.KerasLayer(preprocessor.tokenize)
    pack = hub.KerasLayer(preprocessor.bert_pack_inputs, arguments={"seq_length": 16})
    results = {}
    for prefix, ids in (
            ("texts", hub.KerasLayer(preprocessor)(tf.constant(inputs["texts"]))),
            ("pairs", pack([tokenize(tf.constant(inputs["first"])),
                            tokenize(tf.constant(inputs["second"]))]))):
        outputs = encoder(ids)
        for name, value in [*ids.items(), *outputs.items()]:
            if name in ("input_word_ids", "input_mask", "input_type_ids", "pooled_output",
                        "sequence_output"):
                results[f"{prefix}/{name}"] = value.numpy()
    np.savez(output, **results)
""")


def test_a_fresh_process_without_albert_tf_serves_the_hub_pair(hub_folder, pretrainer,
                                                               python_tokenizer, tmp_path):
    """The two modules, loaded with `hub` where importing albert_tf fails: the preprocessor
    gives the Python tokenizer's ids (single texts at the default length, pairs packed at
    16), the encoder the Keras encoder's outputs on them."""
    outputs = run_fresh_process(HUB_PROCESS, hub_folder, {}, tmp_path)
    texts = padded(python_tokenizer.encode_for_model(TEXTS, max_seq_length=MAX_SEQ_LENGTH),
                   MAX_SEQ_LENGTH)
    assert_same_encoding(outputs, "texts", texts, pretrainer.encoder)
    first, second = [list(column) for column in zip(*PAIRS)]
    pairs = padded(python_tokenizer.encode_for_model(first, second, max_seq_length=16), 16)
    assert_same_encoding(outputs, "pairs", pairs, pretrainer.encoder)


def test_a_classifier_of_two_hub_layers_gives_our_outputs_and_fine_tunes(
        hub_folder, preprocessor, pretrainer, python_tokenizer, seed, record_property):
    """The seed draws the classifier's head and the labels; the encoder is the export
    tests' one fixed, seeded model (the bound is about fine-tuning it)."""
    text = tf_keras.Input(shape=(), dtype=tf.string)
    encoder = hub.KerasLayer(str(hub_folder / "encoder"), trainable=True)
    encoded = encoder(hub.KerasLayer(preprocessor)(text))
    logits = tf_keras.layers.Dense(
        2, kernel_initializer=tf_keras.initializers.GlorotUniform(seed=1 + seed))(
            encoded["pooled_output"])
    classifier = tf_keras.Model(text, {"logits": logits, **encoded})

    outputs = classifier(tf.constant(TEXTS))
    ids = padded(python_tokenizer.encode_for_model(TEXTS, max_seq_length=MAX_SEQ_LENGTH),
                 MAX_SEQ_LENGTH)
    reference = pretrainer.encoder(ids, training=False)
    for name in ("pooled_output", "default"):
        np.testing.assert_allclose(outputs[name], reference["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(outputs["sequence_output"], reference["sequence_output"],
                               atol=1e-5)
    assert len(outputs["encoder_outputs"]) == pretrainer.config.num_layers
    np.testing.assert_array_equal(outputs["encoder_outputs"][-1], outputs["sequence_output"])

    assert len(encoder.trainable_weights) == len(pretrainer.encoder.trainable_variables)
    labels = tf.constant(np.random.default_rng(seed).integers(0, 2, len(TEXTS)))
    texts = tf.constant(TEXTS)

    def loss():
        return tf.reduce_mean(tf_keras.losses.sparse_categorical_crossentropy(
            labels, classifier(texts, training=True)["logits"], from_logits=True))

    before = [weight.numpy() for weight in encoder.trainable_weights]
    first_loss = float(loss())
    learning_rate = 1e-3
    optimizer = tf_keras.optimizers.SGD(learning_rate=learning_rate)
    with tf.GradientTape() as tape:
        step_loss = loss()
    gradients = tape.gradient(step_loss, classifier.trainable_variables)
    assert all(gradient is not None for gradient in gradients)
    optimizer.apply_gradients(zip(gradients, classifier.trainable_variables))
    unchanged = [weight.name for old, weight in zip(before, encoder.trainable_weights)
                 if np.array_equal(old, weight.numpy())]
    # The step moves every encoder variable but the attention's key bias: it adds q.b to all
    # of a query's scores, which the softmax ignores, so its gradient is zero up to rounding
    # (about 1e-9 here) and a step may leave it as it was.
    assert all("attention/key/bias" in name for name in unchanged), unchanged
    # One small step along the gradient lowers the loss by about learning_rate * |gradient|^2
    # (first order): a gradient that is wrong or lost on the way through the hub layers
    # would not.
    predicted = learning_rate * sum(float(tf.reduce_sum(tf.square(tf.convert_to_tensor(g))))
                                    for g in gradients)
    ratio = (first_loss - float(loss())) / predicted
    above(record_property, "loss decrease / learning_rate * |gradient|^2", ratio, 0.5)
    below(record_property, "loss decrease / learning_rate * |gradient|^2, high", ratio, 1.5)


def test_the_folder_records_how_it_was_made(hub_folder):
    facts = json.loads((hub_folder / "albert_export.json").read_text())
    assert facts["format"] == "hub" and facts["default_seq_length"] == MAX_SEQ_LENGTH
    assert facts["global_step"] == 7
    assert sorted(path.name for path in hub_folder.iterdir()) == [
        ".albert-folder.json", "albert_export.json", "encoder", "preprocessor"]
    encoder = tf.saved_model.load(str(hub_folder / "encoder"))  # no tensorflow-text needed
    signature = encoder.signatures["serving_default"]
    assert sorted(signature.structured_outputs) == ["default", "pooled_output",
                                                    "sequence_output"]
