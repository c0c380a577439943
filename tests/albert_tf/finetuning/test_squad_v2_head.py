"""The original ALBERT's SQuAD 2.0 head (XLNet's): its outputs against numpy, its loss by hand,
its beam post-processing on a hand-made example, and the dev threshold tuning as the
original's `evaluate_v2` and the official script do it."""

import numpy as np
import pytest
import tensorflow as tf
from helpers import randomize_weights
from seeding import seed_draws
from thresholds import above, at_least, below

from albert_tf.layers.task_heads import AnswerabilitySpanHead
from albert_tf.models.task_models import AlbertAnswerabilitySpanLabeler, answer_mask
from albert_tf.task_data.examples import SquadExample
from albert_tf.task_data.squad_postprocess import (
    apply_no_answer_threshold,
    predict_answers_with_answerability,
)

B, L, H = 2, 7, 6


def numpy_log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def numpy_layer_norm(x, gamma, beta, epsilon=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


@pytest.fixture(scope="module")
def head_and_inputs():
    head = AnswerabilitySpanHead(H, start_n_top=3, end_n_top=2, dropout_rate=0.1)
    rng = np.random.default_rng(0)
    sequence = rng.standard_normal((B, L, H)).astype(np.float32)
    p_mask = np.array([[0, 1, 1, 0, 0, 0, 1], [0, 1, 0, 0, 0, 1, 1]], np.float32)
    head(tf.constant(sequence), tf.constant(p_mask))
    randomize_weights(head, seed=1)
    return head, sequence, p_mask


def numpy_head(head, sequence, p_mask, starts):
    """The original's formulas: masked start log-probs, end log-probs for each start in
    `starts` (batch, K), and the answerability logit."""
    w = {layer.name: [v.numpy() for v in layer.weights] for layer in
         (head.start_dense, head.end_hidden, head.end_layer_norm, head.end_dense,
          head.answer_hidden, head.answer_dense)}
    start = (sequence @ w["start"][0] + w["start"][1])[..., 0]
    start = start * (1 - p_mask) - 1e30 * p_mask
    start_log_probs = numpy_log_softmax(start)
    end_log_probs = []
    for b in range(B):
        rows = []
        for s in starts[b]:
            joined = np.concatenate([sequence[b], np.tile(sequence[b, s], (L, 1))], -1)
            hidden = np.tanh(joined @ w["end_hidden"][0] + w["end_hidden"][1])
            hidden = numpy_layer_norm(hidden, *w["end_layer_norm"])
            logits = (hidden @ w["end"][0] + w["end"][1])[:, 0]
            rows.append(numpy_log_softmax(logits * (1 - p_mask[b]) - 1e30 * p_mask[b]))
        end_log_probs.append(rows)
    probabilities = np.exp(start_log_probs)
    expected = np.einsum("blh,bl->bh", sequence, probabilities)
    hidden = np.tanh(np.concatenate([expected, sequence[:, 0]], -1) @ w["answer_hidden"][0]
                     + w["answer_hidden"][1])
    cls_logits = (hidden @ w["answer"][0])[:, 0]
    return start_log_probs, np.array(end_log_probs), cls_logits


def test_training_outputs_condition_the_end_on_the_true_start(head_and_inputs):
    head, sequence, p_mask = head_and_inputs
    starts = np.array([3, 0])
    outputs = head(tf.constant(sequence), tf.constant(p_mask), tf.constant(starts))
    start, end, cls = numpy_head(head, sequence, p_mask, starts[:, None])
    np.testing.assert_allclose(outputs["start_log_probs"], start, atol=1e-5)
    np.testing.assert_allclose(outputs["end_log_probs"], end[:, 0], atol=1e-5)
    np.testing.assert_allclose(outputs["cls_logits"], cls, atol=1e-5)
    assert np.all(outputs["start_log_probs"].numpy()[p_mask == 1] < -1e29)
    assert "answer" in head.answer_dense.name and not head.answer_dense.use_bias


def test_inference_searches_the_beam_of_starts_and_their_ends(head_and_inputs):
    head, sequence, p_mask = head_and_inputs
    outputs = {k: v.numpy() for k, v in head(tf.constant(sequence), tf.constant(p_mask)).items()}
    start, _, cls = numpy_head(head, sequence, p_mask, np.zeros((B, 1), int))
    top_starts = np.argsort(-start, -1)[:, :3]
    np.testing.assert_array_equal(outputs["start_top_index"], top_starts)
    np.testing.assert_allclose(outputs["start_top_log_probs"],
                               np.take_along_axis(start, top_starts, -1), atol=1e-5)
    _, end, _ = numpy_head(head, sequence, p_mask, top_starts)  # (B, 3 starts, L)
    top_ends = np.argsort(-end, -1)[..., :2]
    np.testing.assert_array_equal(outputs["end_top_index"], top_ends.reshape(B, 6))
    np.testing.assert_allclose(outputs["end_top_log_probs"],
                               np.take_along_axis(end, top_ends, -1).reshape(B, 6), atol=1e-5)
    np.testing.assert_allclose(outputs["cls_logits"], cls, atol=1e-5)
    # No masked position is ever in the beam.
    assert not p_mask[np.arange(B)[:, None], outputs["start_top_index"]].any()
    assert not p_mask[np.arange(B)[:, None], outputs["end_top_index"]].any()


def test_answer_mask_allows_cls_and_the_context_only():
    # [CLS] q q [SEP] c c c [SEP] pad
    mask = tf.constant([[1, 1, 1, 1, 1, 1, 1, 1, 0]])
    types = tf.constant([[0, 0, 0, 0, 1, 1, 1, 1, 0]])
    np.testing.assert_array_equal(answer_mask(mask, types), [[0, 1, 1, 1, 0, 0, 0, 1, 1]])


def test_loss_is_the_originals(tiny_config):
    model = AlbertAnswerabilitySpanLabeler(tiny_config, start_n_top=2, end_n_top=2)
    log_probs = np.log(np.array([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5]], np.float32))
    outputs = {"start_log_probs": log_probs, "end_log_probs": log_probs[::-1],
               "cls_logits": np.array([2.0, -1.0], np.float32)}
    features = {"start_position": np.array([0, 2]), "end_position": np.array([0, 1])}
    loss = model.per_example_loss(features, outputs).numpy()
    # Row 0 has no answer (start 0): sigmoid cross-entropy with label 1 at logit 2 is
    # log(1 + e^-2); row 1 has one: label 0 at logit -1 gives log(1 + e^-1).
    expected = [0.5 * -(np.log(0.5) + np.log(0.2)) + 0.5 * np.log1p(np.exp(-2.0)),
                0.5 * -(np.log(0.5) + np.log(0.25)) + 0.5 * np.log1p(np.exp(-1.0))]
    np.testing.assert_allclose(loss, expected, rtol=1e-6)


def test_a_tiny_model_trains_and_predicts_the_beam(tiny_config, seed, record_property):
    from albert_tf.loop.optimization import OptimizerConfig, create_optimizer

    seed_draws(seed)  # the initial weights
    model = AlbertAnswerabilitySpanLabeler(tiny_config, start_n_top=2, end_n_top=3)
    ids = np.array([[2, 7, 8, 3, 9, 10, 11, 3], [2, 7, 3, 12, 13, 3, 0, 0]], np.int32)
    batch = {"input_word_ids": ids, "input_mask": (ids > 0).astype(np.int32),
             "input_type_ids": np.array([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 0, 0]]),
             "start_position": np.array([5, 0]), "end_position": np.array([6, 0])}
    model.compile(optimizer=create_optimizer(OptimizerConfig(type="adamw", learning_rate=3e-3,
                                                             warmup_steps=0), 100),
                  jit_compile=False)
    history = model.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=30,
                        epochs=1, verbose=0).history
    below(record_property, "loss after 30 steps", history["loss"][-1], 1.0)
    outputs = model.predict_step(batch)
    assert set(outputs) == set(model.task_outputs)
    assert outputs["end_top_index"].shape == (2, 6)
    assert outputs["start_top_index"][0, 0] == 5
    above(record_property, "answerability logit of the row without an answer",
          outputs["cls_logits"][1], 0)
    below(record_property, "answerability logit of the row with one", outputs["cls_logits"][0], 0)
    evaluated = model.evaluate(tf.data.Dataset.from_tensors(batch), return_dict=True, verbose=0)
    at_least(record_property, "start accuracy after training", evaluated["start_accuracy"], 1)
    at_least(record_property, "answerability accuracy after training",
             evaluated["answerable_accuracy"], 1)
    below(record_property, "loss after training / the 30 steps' mean loss",
          evaluated["loss"] / history["loss"][-1], 1)


# ------------------------------------------------------------------ post-processing


def _windows():
    """One example "alpha beta gamma delta" in two windows: [CLS] q [SEP] then alpha beta
    gamma delta [SEP] (window 0, where alpha and beta have the most context) and gamma delta
    [SEP] (window 1, where gamma and delta do)."""
    example = SquadExample("hand", "q", "alpha beta gamma delta")
    features = {
        "example_index": np.zeros(2, np.int32),
        "token_char_start": np.array([[-1, -1, -1, 0, 6, 11, 17, -1],
                                      [-1, -1, -1, 11, 17, -1, -1, -1]]),
        "token_char_end": np.array([[-1, -1, -1, 5, 10, 16, 22, -1],
                                    [-1, -1, -1, 16, 22, -1, -1, -1]]),
        "token_is_max_context": np.array([[0, 0, 0, 1, 1, 0, 0, 0],
                                          [0, 0, 0, 1, 1, 0, 0, 0]], np.int8)}
    # Beam of 2 starts x 2 ends per window (ends of start k at 2k, 2k + 1).
    outputs = {
        "start_top_index": np.array([[3, 5], [3, 1]]),
        "start_top_log_probs": np.array([[-0.5, -0.1], [-0.2, -0.3]]),
        "end_top_index": np.array([[4, 6, 6, 7], [4, 3, 4, 2]]),
        "end_top_log_probs": np.array([[-0.4, -0.9, -0.2, -0.3], [-0.1, -0.8, -0.6, -0.5]]),
        "cls_logits": np.array([1.5, -0.5])}
    return example, features, outputs


def test_beam_candidates_are_ranked_by_log_probability_over_the_windows():
    """By hand: window 0: (alpha, beta) -0.9, (alpha, delta) -1.4; (gamma, ...) starts where
    window 0 is not the max context. Window 1: (gamma, delta) -0.3, (gamma, gamma) -1.0;
    start 1 is in the question. Null odds: the smaller answerability logit, -0.5."""
    example, features, outputs = _windows()
    predicted = predict_answers_with_answerability([example], features, outputs)
    nbest = predicted.nbest["hand"]
    assert [entry["text"] for entry in nbest] == ["gamma delta", "alpha beta", "gamma",
                                                  "alpha beta gamma delta"]
    assert [entry["start_log_prob"] + entry["end_log_prob"] for entry in nbest] == \
        pytest.approx([-0.3, -0.9, -1.0, -1.4])
    assert predicted.answers == {"hand": "gamma delta"}
    assert predicted.null_odds == {"hand": -0.5}
    short = predict_answers_with_answerability([example], features, outputs,
                                               max_answer_length=1)
    assert [entry["text"] for entry in short.nbest["hand"]] == ["gamma"]
    # "" where the null odds exceed the threshold, as the official script abstains.
    assert apply_no_answer_threshold(predicted, -0.6).answers == {"hand": ""}
    assert apply_no_answer_threshold(predicted, -0.5).answers == {"hand": "gamma delta"}


def test_dev_threshold_is_tuned_for_f1_and_applied_as_the_original_does(tmp_path):
    """Four questions, hand-scored. Best spans: q1 right (answerability logit -2), q2 wrong
    (0.5), q3 and q4 unanswerable (0.8 and 3.0) yet answered. The official search (answer ""
    above t): t = -inf abstains everywhere, 2 of 4; t = -2 answers q1 too: 3 of 4; t = 0.5
    answers q2 (no gain), t = 0.8 and 3.0 lose q3, q4. Best F1 75% at t = -2; answering ""
    above -2 and scoring again (the script's fixed threshold 1.0 changes nothing here) gives
    75%."""
    from albert_tf.config.finetuning import load_finetune_config
    from albert_tf.finetuning.task_kinds import get_task

    config = load_finetune_config(None, ["data.data_dir=" + str(tmp_path)], task="squad_v2")
    task = get_task(config)
    assert config.squad.v2_head == "answerability" and task.answerability_head
    context = "red green blue"
    examples = [SquadExample("q1", "?", context, (("red", 0),)),
                SquadExample("q2", "?", context, (("blue", 10),)),
                SquadExample("q3", "?", context), SquadExample("q4", "?", context)]
    features = {"example_index": np.arange(4, dtype=np.int32),
                "token_char_start": np.tile([-1, 0, 4, 10, -1], (4, 1)),
                "token_char_end": np.tile([-1, 3, 9, 14, -1], (4, 1)),
                "token_is_max_context": np.tile([0, 1, 1, 1, 0], (4, 1)).astype(np.int8)}
    outputs = {"start_top_index": np.array([[1], [2], [3], [1]]),
               "start_top_log_probs": np.full((4, 1), -0.1),
               "end_top_index": np.array([[1], [2], [3], [1]]),
               "end_top_log_probs": np.full((4, 1), -0.1),
               "cls_logits": np.array([-2.0, 0.5, 0.8, 3.0])}
    scores = task.evaluate(examples, features, outputs)
    assert scores["best_f1"] == pytest.approx(75.0) and scores["best_f1_threshold"] == -2.0
    assert scores["null_score_threshold"] == -2.0 and task.tuned_threshold == -2.0
    assert scores["f1"] == pytest.approx(75.0) and scores["exact"] == pytest.approx(75.0)
    assert scores["HasAns_total"] == 2 and scores["NoAns_total"] == 2
    # The tuned threshold carries over to the predictions written afterwards.
    written = task.write_predictions("test", examples, features, outputs, str(tmp_path))
    import json
    answers = json.loads(open([p for p in written if p.endswith("/predictions.json")][0]).read())
    assert answers == {"q1": "red", "q2": "", "q3": "", "q4": ""}
