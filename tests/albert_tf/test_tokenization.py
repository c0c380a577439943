"""The released-model tokenizer: id layout, the original normalization, the digit-comma rule.

The released `30k-clean.model` cannot be downloaded here; the `released_style_model` fixture
(conftest) is trained with the flags the ALBERT authors published for it.
"""

import io
import pickle

import pytest
import sentencepiece as spm
from helpers import RELEASED_USER_SYMBOLS

from albert_tf.text.options import DataPrepError
from albert_tf.tokenization import AlbertTokenizer


def test_id_layout_of_the_released_model(released_style_model):
    tokenizer = AlbertTokenizer(released_style_model)
    pieces = tokenizer._tokenizer.pieces(range(13))
    assert pieces == ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]", *RELEASED_USER_SYMBOLS]
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
            tokenizer.mask_id) == (0, 1, 2, 3, 4)
    assert tokenizer.sep_id not in tokenizer.encode("a [SEP] b")  # control: never from text


def test_original_normalization(released_style_model):
    tokenizer = AlbertTokenizer(released_style_model)
    assert tokenizer.normalize("  The  Caf\u00e9 ``D\u00e9j\u00e0'' Vu\t") == 'the cafe "deja" vu'
    assert tokenizer.encode("The CAF\u00c9") == tokenizer.encode("the cafe")
    cased = AlbertTokenizer(released_style_model, lower_case=False)
    assert cased.normalize("Caf\u00e9") == "Cafe"


def test_digit_comma_pieces_are_split_as_the_original_did(released_style_model):
    tokenizer = AlbertTokenizer(released_style_model)
    raw = tokenizer._tokenizer.processor.encode("in 1995, a", out_type=str)
    assert "5," in raw  # SentencePiece alone keeps the number's comma attached
    pieces = tokenizer.tokenize("In 1995, a")
    at = raw.index("5,")
    assert pieces[:at] == raw[:at] and pieces[at:at + 2] == ["5", ","]
    assert pieces[at + 2:] == raw[at + 1:]
    assert tokenizer.decode(tokenizer.encode("in 1995, a")) == "in 1995, a"


def test_a_model_without_the_layout_is_refused(tmp_path):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(["some words here and there"] * 50), model_writer=model,
        vocab_size=20, hard_vocab_limit=False, minloglevel=2)
    path = tmp_path / "other.model"
    path.write_bytes(model.getvalue())
    with pytest.raises(DataPrepError, match="id 2 must be '\\[CLS\\]'"):
        AlbertTokenizer(str(path))


@pytest.mark.parametrize("buffers", [True, False], ids=["id buffers", "public encode"])
def test_encode_flat_is_encode_end_to_end_digit_commas_split(released_style_model, buffers):
    from albert_tf.text.vocabulary import SentencePieceTokenizer, flat_ids

    tokenizer = SentencePieceTokenizer(released_style_model)
    if buffers:  # the installed sentencepiece has the buffer call, and it passed its probe
        assert hasattr(tokenizer.processor._processor, "_EncodeAsBufferBatch")
        assert tokenizer._encodes_to_buffers
        tokenizer = pickle.loads(pickle.dumps(tokenizer))  # a tokenizer still pickles
    else:
        tokenizer._encodes_to_buffers = False
    sentences = ["in 1990, the cafe", "", "no digits here", "years 1990, 1991,1992, and 5,5,",
                 "the end"]
    encoded = tokenizer.encode(sentences)
    assert any(len(ids) > len(tokenizer.processor.encode(text))
               for ids, text in zip(encoded, sentences)), "the digit-comma split was exercised"
    ids, lengths = tokenizer.encode_flat(sentences)
    assert ids.dtype == "int32" and lengths.tolist() == [len(piece_ids) for piece_ids in encoded]
    assert ids.tolist() == [piece for piece_ids in encoded for piece in piece_ids]
    assert [array.tolist() for array in flat_ids(encoded)] == [ids.tolist(), lengths.tolist()]
    assert [array.tolist() for array in tokenizer.encode_flat([])] == [[], []]
