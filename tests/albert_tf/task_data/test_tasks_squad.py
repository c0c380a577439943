"""SQuAD reading, character offsets, sliding windows and answer post-processing."""

import json
import logging
import os
import random

import numpy as np
import pytest

from albert_tf.task_data.examples import SquadExample, TaskDataError
from albert_tf.task_data.offsets import normalize_with_offsets, tokenize_with_offsets
from albert_tf.task_data.squad import answer_matches_context, convert_examples, read_squad
from albert_tf.task_data.squad_postprocess import predict_answers, write_squad_predictions
from albert_tf.text.normalize import normalize_text
from albert_tf.text.vocabulary import train_sentencepiece
from albert_tf.tokenization import AlbertTokenizer

# Each of these becomes one "▁word" piece of the word-level model below.
WORDS = "the cafe in zurich was opened by a naive man what year when who where it is of and to"
WORDS = WORDS.split()


@pytest.fixture(scope="session")
def word_tokenizer(tmp_path_factory):
    """A 46-piece model holding every word of WORDS whole: token i of a WORDS text is word i."""
    rng = random.Random(0)
    lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(3000)]
    prefix = str(tmp_path_factory.mktemp("word_spm") / "words")
    return AlbertTokenizer(train_sentencepiece(lines, prefix, vocab_size=46))


@pytest.fixture(scope="session")
def piece_tokenizer(released_style_model):
    """56 pieces: most words split into several pieces, many characters unknown."""
    return AlbertTokenizer(released_style_model)


# ----------------------------------------------------------------------------------- reader

def _squad_json():
    context = "Le Café in Zürich opened in 1995."
    return {"version": "v2.0", "data": [{"title": "Cafes", "paragraphs": [
        {"context": context, "qas": [
            {"id": "v1", "question": "Which café?",  # v1.1 style: no is_impossible
             "answers": [{"text": "Café", "answer_start": 3},
                         {"text": "Le Café", "answer_start": 0}]},
            {"id": "v2-none", "question": "Who closed it?", "answers": [],
             "is_impossible": True,
             "plausible_answers": [{"text": "Zürich", "answer_start": 11}]},
            {"id": "v2-odd", "question": "When?", "is_impossible": False,
             "answers": [{"text": "1996", "answer_start": 28}]}]}]},
        {"paragraphs": [{"context": "Second article.", "qas": []}]}]}


def _write(tmp_path, document, name="squad.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document),
                    encoding="utf-8")
    return str(path)


def test_read_squad_v1_and_v2_questions(tmp_path):
    examples = read_squad(_write(tmp_path, _squad_json()))
    assert [example.qas_id for example in examples] == ["v1", "v2-none", "v2-odd"]
    first, impossible, odd = examples
    assert first.answers == (("Café", 3), ("Le Café", 0))
    assert not first.is_impossible and first.title == "Cafes"
    assert first.context == "Le Café in Zürich opened in 1995."
    assert impossible.is_impossible and impossible.answers == ()  # plausible ones ignored
    assert answer_matches_context(first) and answer_matches_context(impossible)
    assert odd.answers == (("1996", 28),) and not answer_matches_context(odd)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("data"), "data: missing"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][1].pop("question"),
     "data[0].paragraphs[0].qas[1].question: missing"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][1].update(answer_start=40),
     "data[0].paragraphs[0].qas[0].answers[1].answer_start: 40 puts the 7-character answer "
     "outside the 33-character context"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start=-1),
     "data[0].paragraphs[0].qas[0].answers[0].answer_start: -1"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][2]["answers"][0].update(answer_start="3"),
     "data[0].paragraphs[0].qas[2].answers[0].answer_start: expected an integer"),
    (lambda d: d["data"][1].update(paragraphs={}), "data[1].paragraphs: expected a list"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][2].update(id="v1"),
     "data[0].paragraphs[0].qas[2].id: question id 'v1' is already used at "
     "data[0].paragraphs[0].qas[0]"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][1].update(is_impossible="yes"),
     "data[0].paragraphs[0].qas[1].is_impossible: expected true or false"),
    (lambda d: d["data"].append([]), "data[2]: expected a JSON object"),
])
def test_read_squad_errors_name_the_file_and_json_path(tmp_path, edit, message):
    document = _squad_json()
    edit(document)
    path = _write(tmp_path, document)
    with pytest.raises(TaskDataError) as error:
        read_squad(path)
    assert str(error.value).startswith(path + ": ") and message in str(error.value)


def test_read_squad_rejects_non_json_and_missing_files(tmp_path):
    path = _write(tmp_path, '{"data": [', "broken.json")
    with pytest.raises(TaskDataError, match=r"broken\.json: not a SQuAD JSON file"):
        read_squad(path)
    with pytest.raises(TaskDataError, match=r"absent\.json: cannot read"):
        read_squad(str(tmp_path / "absent.json"))


# ------------------------------------------------------------------ offsets of normalization

_SCRIPTS = ["abcXYZ019", " \t\n\u00a0\u3000\u2002\x1c\u0085", "``''`'\".,;",
            "\u00c0\u00e9\u00ef\u0130",
            "\u0301\u0308\u0327\u0344", "\u03a3\u0391\u03c3\u0392", "\u0416\u0439", "\u65e5\u672c",
            "\ud55c\uad6d", "\ufb01\ufb02\uff21\uff45\u2460\ufdfa", "\u1e9e\u00df\u01c5\u00a8",
            "\U0001d49c\U0001f600", "\u200b\u00ad"]


def _random_text(rng, length):
    return "".join(rng.choice(rng.choice(_SCRIPTS)) for _ in range(length))


def test_normalize_with_offsets_equals_normalize_text_on_random_multiscript_text():
    rng = random.Random(7)
    for _ in range(1500):
        text = _random_text(rng, rng.randint(0, 25))
        for lower_case in (True, False):
            normalized, starts, ends = normalize_with_offsets(text, lower_case)
            assert normalized == normalize_text(text, lower_case), repr(text)
            assert len(starts) == len(ends) == len(normalized)
            assert np.all(np.diff(starts) >= 0) and np.all(starts <= ends)
            for position, character in enumerate(normalized):
                if character != " ":  # each character comes from its source span
                    source = normalize_text(text[starts[position]:ends[position]], lower_case)
                    # casefold: a lone "Σ" lower-cases to "σ", a word-final one to "ς".
                    assert character.casefold() in source.casefold(), repr(text)


def test_normalize_with_offsets_maps_accents_quotes_and_collapsed_space():
    text = "  Café  ``au lait''\t"
    normalized, starts, ends = normalize_with_offsets(text, lower_case=True)
    assert normalized == 'cafe "au lait"'
    spans = [text[start:end] for start, end in zip(starts, ends)]
    assert spans == ["C", "a", "f", "é", "  ", "``", "a", "u", " ", "l", "a", "i", "t", "''"]
    normalized, starts, ends = normalize_with_offsets("A \n\t b", lower_case=False)
    assert normalized == "A b" and (starts.tolist(), ends.tolist()) == ([0, 1, 5], [1, 5, 6])


# ------------------------------------------------------------------------ offsets of pieces

_TEXTS = ["Le Café in Zürich was opened in 1995, by a naïve man.", "1,000, 5, 1995,2, x5,",
          "In 1990, he (was) ``x'' and \"y\" \u2013 \u00a35 \u20ac3.", "  spaced \n\n out\t",
          "\u65e5\u672c\u8a9e \u2603 \U0001f600 cafe\u0301", "", "   ", "5,5,5,", "a,1,",
          "\ufb01ne \uff21\uff22 \u2460"]


@pytest.mark.parametrize("which", ["word_tokenizer", "piece_tokenizer"])
def test_tokenize_with_offsets_ids_equal_encode_and_spans_tile_the_text(which, request):
    tokenizer = request.getfixturevalue(which)
    rng = random.Random(3)
    texts = _TEXTS + [_random_text(rng, rng.randint(0, 40)) for _ in range(300)]
    for text in texts:
        ids, starts, ends = tokenize_with_offsets(tokenizer, text)
        assert ids == tokenizer.encode(text), repr(text)
        assert len(starts) == len(ends) == len(ids)
        assert all(0 <= start <= end <= len(text) for start, end in zip(starts, ends))
        # Never backwards. Pieces overlap only when they split what one character became
        # ("\ufb01" -> "fi" -> "f", "i", each spanning the ligature).
        filled_ends = [end for start, end in zip(starts, ends) if end > start]
        assert starts == sorted(starts) and filled_ends == sorted(filled_ends), repr(text)


@pytest.mark.parametrize("which", ["word_tokenizer", "piece_tokenizer"])
def test_each_known_piece_spans_the_characters_it_was_made_of(which, request):
    tokenizer = request.getfixturevalue(which)
    for text in _TEXTS[:4]:
        ids, starts, ends = tokenize_with_offsets(tokenizer, text)
        for piece, start, end in zip(tokenizer.piece_model.pieces(ids), starts, ends):
            if piece != "<unk>":
                assert normalize_text(text[start:end], True) == piece.replace("\u2581", "")


def _spans(tokenizer, text):
    ids, starts, ends = tokenize_with_offsets(tokenizer, text)
    return [(piece, text[start:end])
            for piece, start, end in zip(tokenizer.piece_model.pieces(ids), starts, ends)]


def test_offsets_recover_accents_quotes_space_and_digit_commas(word_tokenizer, piece_tokenizer):
    assert _spans(word_tokenizer, "Le  Café\n zurich") == [
        ("\u2581", ""), ("<unk>", "L"), ("e", "e"), ("\u2581cafe", "Café"),
        ("\u2581zurich", "zurich")]
    assert _spans(piece_tokenizer, "``x'' in 1995, 5, 1,0") == [
        ("\u2581", ""), ('"', "``"), ("x", "x"), ('"', "''"), ("\u2581i", "i"), ("n", "n"),
        ("\u2581199", "199"), ("5", "5"), (",", ","), ("\u2581", ""), ("5", "5"), (",", ","),
        ("\u2581", ""), ("1", "1"), (",", ","), ("0", "0")]


# ----------------------------------------------------------------------- window features

def _word_context(count):
    """`count` words of WORDS and each word's first character."""
    words = [WORDS[index % len(WORDS)] for index in range(count)]
    text = " ".join(words)
    return text, [len(" ".join(words[:index])) + (index > 0) for index in range(count)]


def _answer(text, starts, first, last):
    """(text, answer_start) of words first..last of a `_word_context`."""
    end = starts[last] + text[starts[last]:].index(" ") if last + 1 < len(starts) else len(text)
    return text[starts[first]:end], starts[first]


def test_windows_start_every_doc_stride_with_the_original_layout(word_tokenizer):
    context, word_starts = _word_context(23)
    context_ids = word_tokenizer.encode(context)
    assert len(context_ids) == 23  # one piece per word
    example = SquadExample("q", "what", context)
    features = convert_examples([example], word_tokenizer, max_seq_length=10, doc_stride=4)
    first_tokens = [word_starts.index(start) for start in features["token_char_start"][:, 3]]
    assert first_tokens == [0, 4, 8, 12, 16, 20]
    assert features["input_mask"].sum(axis=1).tolist() == [10, 10, 10, 10, 10, 7]
    assert features["window_index"].tolist() == list(range(6))
    assert features["example_index"].tolist() == [0] * 6
    cls, sep, what = word_tokenizer.cls_id, word_tokenizer.sep_id, word_tokenizer.encode("what")
    assert features["input_word_ids"][0].tolist() == [cls, *what, sep, *context_ids[:6], sep]
    assert features["input_word_ids"][5].tolist() == [cls, *what, sep, *context_ids[20:], sep,
                                                      0, 0, 0]
    assert features["input_type_ids"][5].tolist() == [0, 0, 0, 1, 1, 1, 1, 0, 0, 0]
    assert features["token_char_start"][5].tolist() == [-1, -1, -1, *word_starts[20:], -1, -1,
                                                        -1, -1]
    ends = features["token_char_end"][5, 3:6]
    assert [context[start:end] for start, end in zip(word_starts[20:], ends)] == WORDS[:3]
    assert all(array.dtype == np.int32 for name, array in features.items()
               if name != "token_is_max_context")


def test_max_context_flags_match_the_hand_computed_scores(word_tokenizer):
    # Windows of 6 tokens every 3 over 10 tokens: [0-5], [3-8], [6-9]. Token 4 scores
    # min(4, 1) + 0.06 in both of the first two windows: the tie goes to the first.
    context, _ = _word_context(10)
    features = convert_examples([SquadExample("q", "what", context)], word_tokenizer,
                                max_seq_length=10, doc_stride=3)
    flags = features["token_is_max_context"]
    assert flags[0, 3:9].tolist() == [1, 1, 1, 1, 1, 0]
    assert flags[1, 3:9].tolist() == [0, 0, 1, 1, 1, 0]
    assert flags[2, 3:7].tolist() == [0, 0, 1, 1]
    assert flags[:, :3].sum() == 0 and flags[2, 7:].sum() == 0


def test_answers_are_labelled_only_in_windows_holding_them_whole(word_tokenizer):
    context, starts = _word_context(23)
    crossing = SquadExample("crossing", "what", context, (_answer(context, starts, 5, 7),))
    twice = SquadExample("twice", "what", context, (_answer(context, starts, 4, 4),))
    impossible = SquadExample("none", "what", context, is_impossible=True)
    features = convert_examples([crossing, twice, impossible], word_tokenizer, max_seq_length=10,
                                doc_stride=4, is_training=True)
    rows = features["example_index"]
    # Windows [0-5], [4-9], [8-13], ...; a window's first context token sits at position 3.
    assert features["start_position"][rows == 0].tolist() == [0, 4, 0, 0, 0, 0]
    assert features["end_position"][rows == 0].tolist() == [0, 6, 0, 0, 0, 0]
    assert features["start_position"][rows == 1].tolist() == [7, 3, 0, 0, 0, 0]
    assert features["end_position"][rows == 1].tolist() == [7, 3, 0, 0, 0, 0]
    assert not features["start_position"][rows == 2].any()
    assert not features["end_position"][rows == 2].any()
    untrained = convert_examples([crossing], word_tokenizer, max_seq_length=10, doc_stride=4)
    assert untrained["start_position"].sum() == 0


def test_convert_examples_rejects_settings_without_room_for_context(word_tokenizer):
    example = SquadExample("q", "what year when who where", "the cafe")
    with pytest.raises(ValueError, match=r"max_seq_length=8 .* 5-piece question of 'q'"):
        convert_examples([example], word_tokenizer, max_seq_length=8)
    # 9 leaves one context token per window: "the", then "cafe".
    features = convert_examples([example], word_tokenizer, max_seq_length=9)
    assert features["input_mask"].shape == (2, 9)
    with pytest.raises(ValueError, match="doc_stride must be at least 1, got 0"):
        convert_examples([example], word_tokenizer, doc_stride=0)


def test_an_empty_context_still_gets_a_row_and_training_needs_answers(word_tokenizer):
    empty = SquadExample("empty", "what", "  ")
    features = convert_examples([empty], word_tokenizer, max_seq_length=8)
    cls, sep = word_tokenizer.cls_id, word_tokenizer.sep_id
    assert features["input_word_ids"].tolist() == [[cls, *word_tokenizer.encode("what"), sep,
                                                    sep, 0, 0, 0, 0]]
    assert features["token_char_start"].max() == -1
    with pytest.raises(TaskDataError, match="question 'empty': is_training needs an answer"):
        convert_examples([empty], word_tokenizer, max_seq_length=8, is_training=True)


# --------------------------------------------------------------------- answer recovery

_GOLD = "\u201cZ\u00fcrich\u2013Nord\u201d (a na\u00efve plan, 1,000)"


def _gold_example():
    filler = " ".join(f"the cafe {year}, and he was there" for year in range(1990, 1996))
    context = f"{filler} in {_GOLD} failed; {filler}."
    return SquadExample("gold", "which plan?", context, ((_GOLD, context.index(_GOLD)),))


def _pointing_logits(features, rows):
    """Logits that are 0 except 5 at the labelled start and end of each row in `rows`."""
    start_logits = np.zeros(features["input_word_ids"].shape, np.float32)
    end_logits = np.zeros_like(start_logits)
    for row in rows:
        start_logits[row, features["start_position"][row]] = 5.0
        end_logits[row, features["end_position"][row]] = 5.0
    return start_logits, end_logits


def test_gold_text_is_recovered_from_a_window_where_it_touches_the_border(piece_tokenizer):
    example = _gold_example()
    _, starts, ends = tokenize_with_offsets(piece_tokenizer, example.context)
    answer_start = example.answers[0][1]
    first = next(index for index, end in enumerate(ends) if end > answer_start)
    last = ends.index(answer_start + len(_GOLD))
    assert starts[first] == answer_start
    question_length = len(piece_tokenizer.encode(example.question))
    # Window 0 ends on the answer's last token; window 1 starts just after its first token.
    features = convert_examples([example], piece_tokenizer,
                                max_seq_length=last + 1 + question_length + 3,
                                doc_stride=first + 1, is_training=True)
    end = features["end_position"][0]
    assert end == features["input_mask"][0].sum() - 2  # the last context token of the window
    assert features["token_is_max_context"][0, features["start_position"][0]] == 1
    assert features["start_position"][1:].sum() == 0
    predictions = predict_answers([example], features, *_pointing_logits(features, [0]),
                                  max_answer_length=64)
    assert predictions.answers["gold"] == _GOLD


def test_gold_text_comes_from_the_max_context_window_only(piece_tokenizer):
    example = _gold_example()
    features = convert_examples([example], piece_tokenizer, max_seq_length=128, doc_stride=16,
                                is_training=True)
    labelled = np.flatnonzero(features["start_position"] > 0).tolist()
    starts = features["start_position"]
    is_max = [features["token_is_max_context"][row, starts[row]] == 1 for row in labelled]
    assert sum(is_max) == 1 and len(labelled) >= 3  # whole in several windows
    max_row = labelled[is_max.index(True)]
    for rows in ([max_row], labelled):
        predictions = predict_answers([example], features, *_pointing_logits(features, rows),
                                  max_answer_length=64)
        assert predictions.answers["gold"] == _GOLD
        assert predictions.nbest["gold"][0]["text"] == _GOLD
    other = [row for row in labelled if row != max_row]
    predictions = predict_answers([example], features, *_pointing_logits(features, other),
                                  max_answer_length=64)
    assert predictions.answers["gold"] != _GOLD


# --------------------------------------------------------------------- n-best and null

def _handmade(rows=1):
    """One example "alpha beta gamma delta": [CLS] q [SEP] alpha beta gamma delta [SEP]."""
    example = SquadExample("hand", "q", "alpha beta gamma delta")
    features = {
        "example_index": np.zeros(rows, np.int32),
        "token_char_start": np.tile([-1, -1, -1, 0, 6, 11, 17, -1], (rows, 1)),
        "token_char_end": np.tile([-1, -1, -1, 5, 10, 16, 22, -1], (rows, 1)),
        "token_is_max_context": np.tile([0, 0, 0, 1, 1, 1, 1, 0], (rows, 1)).astype(np.int8)}
    start_logits = np.tile([0, 0, 0, 3.0, 1.0, 2.0, 0.5, 0], (rows, 1))
    end_logits = np.tile([0, 0, 0, 0.5, 2.5, 1.0, 3.0, 0], (rows, 1))
    return example, features, start_logits, end_logits


def test_nbest_is_ranked_by_score_deduplicated_and_length_limited():
    example, features, start_logits, end_logits = _handmade(rows=2)  # same spans twice
    nbest = predict_answers([example], features, start_logits, end_logits).nbest["hand"]
    assert [entry["text"] for entry in nbest] == [
        "alpha beta gamma delta", "alpha beta", "gamma delta", "alpha beta gamma",
        "beta gamma delta", "alpha", "beta", "delta", "gamma", "beta gamma"]
    assert nbest[1]["start_logit"] == 3.0 and nbest[1]["end_logit"] == 2.5
    probabilities = [entry["probability"] for entry in nbest]
    assert abs(sum(probabilities) - 1) < 1e-9 and probabilities == sorted(probabilities)[::-1]
    short = predict_answers([example], features, start_logits, end_logits,
                            max_answer_length=2).nbest["hand"]
    assert [entry["text"] for entry in short] == [
        "alpha beta", "gamma delta", "alpha", "beta", "delta", "gamma", "beta gamma"]
    # Only the 3 best starts (alpha, gamma, beta) and ends (delta, beta, gamma) are paired.
    top3 = predict_answers([example], features, start_logits, end_logits, n_best_size=3,
                           max_answer_length=2)
    assert [entry["text"] for entry in top3.nbest["hand"]] == ["alpha beta", "gamma delta",
                                                              "beta"]
    assert top3.answers == {"hand": "alpha beta"} and top3.null_odds == {}


def test_spans_need_a_max_context_start():
    example, features, start_logits, end_logits = _handmade()
    features["token_is_max_context"][0, 3] = 0  # "alpha" is better seen in another window
    answers = predict_answers([example], features, start_logits, end_logits).answers
    assert answers["hand"] == "gamma delta"


def test_version_2_null_threshold_both_ways():
    example, features, start_logits, end_logits = _handmade(rows=2)
    start_logits[:, 0], end_logits[:, 0] = [4.0, 3.0], [4.0, 4.0]  # null = min(8, 7) = 7
    predicted = predict_answers([example], features, start_logits, end_logits, version_2=True)
    assert predicted.null_odds["hand"] == pytest.approx(7.0 - 6.0)
    assert predicted.answers["hand"] == ""
    assert {"text": "", "start_logit": 3.0, "end_logit": 4.0} == {
        key: predicted.nbest["hand"][0][key] for key in ("text", "start_logit", "end_logit")}
    lenient = predict_answers([example], features, start_logits, end_logits, version_2=True,
                              null_score_threshold=1.5)
    assert lenient.answers["hand"] == "alpha beta gamma delta"
    start_logits[:, 0] = -4.0
    assert predict_answers([example], features, start_logits, end_logits,
                           version_2=True).answers["hand"] == "alpha beta gamma delta"


def test_no_valid_span_predicts_empty_text(caplog):
    example, features, start_logits, end_logits = _handmade()
    features["token_is_max_context"][:] = 0
    with caplog.at_level(logging.WARNING):
        v1 = predict_answers([example], features, start_logits, end_logits)
    assert v1.answers == {"hand": ""} and "'hand': no valid answer span" in caplog.text
    v2 = predict_answers([example], features, start_logits, end_logits, version_2=True)
    assert v2.answers == {"hand": ""} and v2.null_odds["hand"] == float("inf")
    with pytest.raises(ValueError, match=r"start_logits \(1, 7\)"):
        predict_answers([example], features, start_logits[:, :7], end_logits)


def test_write_squad_predictions_writes_the_official_files(tmp_path):
    example, features, start_logits, end_logits = _handmade()
    predictions = predict_answers([example], features, start_logits, end_logits, version_2=True)
    paths = write_squad_predictions(predictions, str(tmp_path / "out"), version_2=True)
    assert sorted(paths) == ["nbest_predictions.json", "null_odds.json", "predictions.json"]
    with open(paths["predictions.json"], encoding="utf-8") as file:
        assert json.load(file) == {"hand": predictions.answers["hand"]}
    with open(paths["nbest_predictions.json"], encoding="utf-8") as file:
        assert json.load(file)["hand"][0]["text"] == predictions.nbest["hand"][0]["text"]
    v1 = write_squad_predictions(predictions, str(tmp_path / "v1"), version_2=False)
    assert "null_odds.json" not in v1
    assert sorted(os.listdir(tmp_path / "out")) == sorted(paths)  # no temporaries left
