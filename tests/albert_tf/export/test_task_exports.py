"""The fine-tuned task heads besides the classifier through LiteRT and ONNX: SQuAD's start and
end logits (BERT's no-answer rule), the original SQuAD 2.0 answerability head's beam, and
RACE's option scores. Each model is exported with its encoder; the folder's own client packs
question/context pairs into the Python tokenizer's ids and the runtime's outputs equal the
Keras model's; RACE's client packs (passage, question, option) rows as albert-finetune's
training does (the classifier's turn is in test_ids_exports.py and the fine-tuned run's in
tests/albert_tf/finetuning/test_finetune.py)."""

import importlib.util

import numpy as np
import pytest
from export_cases import (
    CHOICES,
    LONG,
    MAX_SEQ_LENGTH,
    PAIRS,
    QA_LENGTH,
    assert_same_rows,
    race_training_ids,
)
from helpers import randomize_weights

from albert_tf.export.litert import LiteRTOptions, export_litert
from albert_tf.export.onnx import OnnxOptions, export_onnx
from albert_tf.models.encoder import INPUT_NAMES
from albert_tf.models.task_models import (
    AlbertAnswerabilitySpanLabeler,
    AlbertMultipleChoice,
    AlbertSpanLabeler,
)
from albert_tf.task_data.examples import SquadExample
from albert_tf.task_data.squad import convert_examples
from albert_tf.task_data.squad_postprocess import predict_answers

# Beside the encoder's pooled_output and sequence_output, what each task model serves on
# one (batch, length) row per question/context (for RACE, per passage and option).
TASK_OUTPUTS = {
    "span": (lambda config: AlbertSpanLabeler(config), ("start_logits", "end_logits")),
    "answerability": (
        lambda config: AlbertAnswerabilitySpanLabeler(config, start_n_top=3, end_n_top=2),
        ("start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index",
         "cls_logits")),
    "multiple_choice": (lambda config: AlbertMultipleChoice(config, num_choices=2),
                        ("option_logits",)),
}
# (The run's max_qa_length, as albert-export passes it; only a multiple-choice model keeps it.)
EXPORTERS = {"tflite": lambda *args: export_litert(*args, LiteRTOptions(MAX_SEQ_LENGTH),
                                                   metadata={"max_qa_length": QA_LENGTH}),
             "onnx": lambda *args: export_onnx(*args, OnnxOptions(MAX_SEQ_LENGTH),
                                               metadata={"max_qa_length": QA_LENGTH})}


@pytest.fixture(scope="module", params=sorted(TASK_OUTPUTS))
def task(request, pretrainer, python_tokenizer):
    """(task model with trained-scale weights, its output names, the Python tokenizer's ids
    of the pairs, the Keras model's outputs on them)."""
    build, names = TASK_OUTPUTS[request.param]
    model = build(pretrainer.config)
    first, second = [list(column) for column in zip(*PAIRS)]
    ids = python_tokenizer.encode_for_model(first, second, max_seq_length=MAX_SEQ_LENGTH)
    model(ids, training=False)
    randomize_weights(model, seed=11)
    expected = {name: value.numpy() for name, value in model(ids, training=False).items()}
    return model, names, ids, expected


@pytest.mark.parametrize("export_format", sorted(EXPORTERS))
def test_task_outputs_through_the_client_equal_keras(task, export_format, released_style_model,
                                                      python_tokenizer, tmp_path):
    model, names, ids, expected = task
    folder = EXPORTERS[export_format](model, released_style_model, str(tmp_path / "export"))
    spec = importlib.util.spec_from_file_location(f"client_{export_format}",
                                                  f"{folder}/albert_client.py")
    client = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(client)
    first, second = [list(column) for column in zip(*PAIRS)]
    outputs = client.AlbertClient(folder)(first, second)

    for name, value in ids.items():
        np.testing.assert_array_equal(outputs[name], value, err_msg=name)
    assert set(names) | {"pooled_output", "sequence_output"} <= set(outputs)
    for name in names:
        if expected[name].dtype.kind == "i":  # the beam's positions
            np.testing.assert_array_equal(outputs[name], expected[name], err_msg=name)
        else:
            assert outputs[name].dtype == np.float32, name
            np.testing.assert_allclose(outputs[name], expected[name], rtol=1e-6, atol=1e-5,
                                       err_msg=name)
    if "start_logits" in names:  # SQuAD over a context of many windows, answers as text
        assert squad_answers(client.AlbertClient(folder).run_ids, python_tokenizer) == (
            squad_answers(lambda ids: model(ids, training=False), python_tokenizer))
    if "option_logits" in names:
        assert_choices_as_trained(client.AlbertClient(folder), model, python_tokenizer)


def assert_choices_as_trained(chooser, model, tokenizer):
    """The client's (passage, question, option) rows are albert-finetune's RACE rows
    (question+option cut to its last QA_LENGTH pieces, then the pair truncated), which
    packing passage and question+option as a plain pair does not give; its choice_logits
    are the Keras model's on those rows."""
    expected = race_training_ids(tokenizer)
    outputs = chooser.choose(*CHOICES)
    assert_same_rows(outputs, expected)
    contexts, questions, options = CHOICES
    plain = chooser.encode([c for c, row in zip(contexts, options) for _ in row],
                           [q.replace("_", o) if "_" in q else f"{q} {o}"
                            for q, row in zip(questions, options) for o in row])
    assert plain["input_word_ids"].shape[0] == len(expected["input_word_ids"])
    differing = [row for row in range(len(plain["input_word_ids"])) if not np.array_equal(
        plain["input_word_ids"][row][plain["input_mask"][row] > 0],
        expected["input_word_ids"][row][expected["input_mask"][row] > 0])]
    assert len(differing) >= 4, differing  # the cut to QA_LENGTH decided these rows
    reference = model({name: value.reshape(len(contexts), -1, MAX_SEQ_LENGTH)
                       for name, value in expected.items()}, training=False)
    np.testing.assert_allclose(outputs["choice_logits"], reference["choice_logits"].numpy(),
                               rtol=1e-6, atol=1e-5)


def squad_answers(run_ids, tokenizer) -> dict[str, list]:
    """Each question's ranked answer texts over `LONG` (windows of 24 pieces, 8 apart), from
    the start and end logits `run_ids` gives on the windows' ids."""
    examples = [SquadExample("year", "which year was he in the cafe?", LONG),
                SquadExample("words", "of and in to", LONG)]
    features = convert_examples(examples, tokenizer, max_seq_length=MAX_SEQ_LENGTH,
                                doc_stride=8, max_query_length=8)
    assert len(features["input_word_ids"]) > 20  # the context spans many windows
    logits = run_ids({name: features[name] for name in INPUT_NAMES})
    nbest = predict_answers(examples, features, np.asarray(logits["start_logits"]),
                            np.asarray(logits["end_logits"]), n_best_size=5).nbest
    answers = {key: [candidate["text"] for candidate in ranked] for key, ranked in nbest.items()}
    assert all(texts and texts[0] for texts in answers.values()), answers
    return answers
