"""What `--init_checkpoint` / `init.checkpoint` may name in our format: a model folder, or one
of its checkpoints (which names the folder two levels up); anything else is an error that
names the path, not a missing config.yaml somewhere above it."""

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
