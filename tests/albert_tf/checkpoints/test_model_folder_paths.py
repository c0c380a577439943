"""What `--init_checkpoint` / `init.checkpoint` may name in our format: a model folder, or one
of its checkpoints (which names the folder two levels up); anything else is an error that
names the path, not a missing config.yaml somewhere above it."""

import re

import pytest

from albert_tf.checkpoints.model_folder import split_checkpoint_path
from albert_tf.checkpoints.reading import CheckpointError


def test_a_folder_names_itself_and_a_checkpoint_its_folder(tmp_path, monkeypatch):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "ckpt-300.index").write_bytes(b"")
    (run / "best").mkdir()
    (run / "best" / "ckpt-40.index").write_bytes(b"")
    assert split_checkpoint_path(str(run)) == (str(run), None)
    for checkpoint in ("checkpoints/ckpt-300", "best/ckpt-40"):
        path = str(run / checkpoint)
        assert split_checkpoint_path(path) == (str(run), path)
    monkeypatch.chdir(tmp_path)  # a relative checkpoint path names its folder absolutely
    assert split_checkpoint_path("run/checkpoints/ckpt-300") == (
        str(run), "run/checkpoints/ckpt-300")


@pytest.mark.parametrize("given", ["norun", "run/checkpoints/ckpt-999"])
def test_a_path_that_is_neither_is_named_in_the_error(tmp_path, monkeypatch, given):
    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError, match=f"^{given}: no such model folder or checkpoint"):
        split_checkpoint_path(given)


@pytest.fixture(scope="module")
def converted_folder(released_style_model, tmp_path_factory):
    """A converted model folder holding the released-style SentencePiece model, and a second
    model of another size."""
    import sentencepiece as spm

    from albert_tf.checkpoints.model_folder import save_model_folder
    from albert_tf.config import AlbertConfig
    from albert_tf.models.encoder import AlbertEncoder
    from albert_tf.text.vocabulary import train_sentencepiece

    pieces = spm.SentencePieceProcessor(model_file=released_style_model).get_piece_size()
    encoder = AlbertEncoder(AlbertConfig(vocab_size=pieces, embedding_size=8, hidden_size=16,
                                         num_layers=1, num_attention_heads=2,
                                         intermediate_size=16, max_position_embeddings=16))
    root = tmp_path_factory.mktemp("converted")
    save_model_folder(encoder, str(root / "model"), spm_model=released_style_model)
    other = train_sentencepiece((f"word{i % 7} and text{i % 5} here." for i in range(300)),
                                str(root / "other"), vocab_size=25)
    return root / "model", other


def with_facts(folder, tmp_path, **changes):
    """A copy of `folder` with `changes` to its conversion.json (None removes a key)."""
    import json
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    facts = json.loads((copy / "conversion.json").read_text())
    facts.update(changes)
    facts = {key: value for key, value in facts.items() if value is not None}
    (copy / "conversion.json").write_text(json.dumps(facts))
    return copy


def test_a_converted_folder_records_its_tokenizers_checksum_and_checks_it(converted_folder,
                                                                         tmp_path):
    import json
    import shutil

    from albert_tf.checkpoints.model_folder import folder_tokenizer
    from albert_tf.text.vocabulary import model_checksum

    folder, other = converted_folder
    facts = json.loads((folder / "conversion.json").read_text())
    spm_file = folder / facts["spm_model"]
    assert facts["spm_checksum"] == model_checksum(spm_file.read_bytes())
    assert folder_tokenizer(str(folder))[0] == str(spm_file)
    copy = with_facts(folder, tmp_path)
    shutil.copy(other, copy / facts["spm_model"])  # another model under the recorded name
    found = model_checksum(open(other, "rb").read())
    with pytest.raises(CheckpointError, match=re.escape(
            f"{copy / facts['spm_model']}: its checksum is {found}, but "
            f"{copy}/conversion.json records {facts['spm_checksum']} for it")):
        folder_tokenizer(str(copy))


@pytest.mark.parametrize("name", ["../outside.model", "/etc/passwd", "sub/x.model"])
def test_a_tokenizer_name_that_leaves_the_folder_is_refused(converted_folder, tmp_path, name):
    from albert_tf.checkpoints.model_folder import folder_tokenizer

    copy = with_facts(converted_folder[0], tmp_path, spm_model=name)
    with pytest.raises(CheckpointError, match=re.escape(
            f"{copy}/conversion.json: spm_model: {name!r} is not a plain file name")):
        folder_tokenizer(str(copy))


def test_without_a_recorded_checksum_the_tokenizer_must_parse_and_fit_the_model(
        converted_folder, tmp_path):
    """A folder converted before checksums were recorded: what can still be checked."""
    import shutil

    from albert_tf.checkpoints.model_folder import folder_tokenizer

    folder, other = converted_folder
    copy = with_facts(folder, tmp_path, spm_checksum=None)
    name = [path.name for path in copy.iterdir() if path.suffix == ".model"][0]
    assert folder_tokenizer(str(copy))[0] == str(copy / name)
    shutil.copy(other, copy / name)
    with pytest.raises(CheckpointError, match=r"a SentencePiece model of 25 pieces, but the "
                                              r"model has vocab_size \d+ \(.*conversion.json "
                                              r"records no checksum for it\)"):
        folder_tokenizer(str(copy))
    (copy / name).write_bytes(b"not a model")
    with pytest.raises(CheckpointError, match=re.escape(f"{copy / name}: not a SentencePiece "
                                                        "model")):
        folder_tokenizer(str(copy))
