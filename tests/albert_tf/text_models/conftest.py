"""A tiny ALBERT model folder with a SentencePiece model that knows the made-up tasks' words
(`data_helpers.sentiment_rows`), shared by the raw-text model, fine-tuning-on-files and
batch-prediction tests."""

import io

import pytest
import sentencepiece as spm
import tf_keras
from data_helpers import english_like_text, sentiment_rows
from text_tasks import SEQ

from albert_tf.checkpoints.model_folder import save_model_folder
from albert_tf.checkpoints.original import build_model
from albert_tf.config import AlbertConfig


@pytest.fixture(scope="session")
def sentiment_spm(tmp_path_factory):
    lines = [sentence for sentence, _ in sentiment_rows(600, 90)]
    lines += english_like_text(40, seed=91).splitlines()
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(line for line in lines if line), model_writer=model,
        model_type="unigram", vocab_size=200, pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
        control_symbols=["[CLS]", "[SEP]", "[MASK]"], hard_vocab_limit=False, minloglevel=2)
    path = tmp_path_factory.mktemp("spm") / "sentiment.model"
    path.write_bytes(model.getvalue())
    return str(path)


@pytest.fixture(scope="session")
def tiny_start(sentiment_spm, tmp_path_factory):
    """A model folder of a randomly initialized tiny pretrainer (as albert-convert writes
    one), recording sequences of `SEQ`: the start every test here fine-tunes."""
    vocab_size = spm.SentencePieceProcessor(model_file=sentiment_spm).get_piece_size()
    config = AlbertConfig(vocab_size=vocab_size, embedding_size=16, hidden_size=32,
                          num_layers=2, num_attention_heads=4, intermediate_size=64,
                          max_position_embeddings=64, hidden_dropout=0.0,
                          attention_dropout=0.0)
    tf_keras.utils.set_random_seed(5)
    model = build_model(config, masked_lm=True, sentence_objective="sop")
    folder = tmp_path_factory.mktemp("start") / "tiny"
    save_model_folder(model, str(folder), global_step=1, spm_model=sentiment_spm,
                      max_seq_length=SEQ)
    return str(folder)
