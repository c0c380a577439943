"""The export tests' model: a tiny pretrainer with realistic weights, saved as our model folder
with the released-style SentencePiece model (built once per test file)."""

import pytest
from export_cases import MAX_SEQ_LENGTH
from helpers import randomize_weights

from albert_tf.checkpoints.model_folder import save_model_folder
from albert_tf.checkpoints.original import build_model
from albert_tf.config import AlbertConfig
from albert_tf.tokenization import AlbertTokenizer


@pytest.fixture(scope="module")
def python_tokenizer(released_style_model):
    return AlbertTokenizer(released_style_model)


@pytest.fixture(scope="module")
def pretrainer(python_tokenizer):
    config = AlbertConfig(vocab_size=python_tokenizer.vocab_size, embedding_size=16,
                          hidden_size=32, num_layers=2, num_attention_heads=4,
                          intermediate_size=64, max_position_embeddings=64,
                          hidden_dropout=0.0, attention_dropout=0.0)
    model = build_model(config, masked_lm=True, sentence_objective="sop")
    randomize_weights(model, seed=3)
    return model


@pytest.fixture
def seeded_pretrainer(pretrainer, seed):
    """The pretrainer's architecture with weights drawn from the test's seed (the same
    weights as `pretrainer` at seed 0), for tests that bound how far an export drifts."""
    model = build_model(pretrainer.config, masked_lm=True, sentence_objective="sop")
    randomize_weights(model, seed=3 + seed)
    return model


@pytest.fixture(scope="module")
def model_folder(pretrainer, released_style_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("export") / "run"
    save_model_folder(pretrainer, str(folder), global_step=7, spm_model=released_style_model,
                      max_seq_length=MAX_SEQ_LENGTH)
    return folder
