"""`albert-model`: the parameter table, the forward pass, and errors as exit code 2."""

import pathlib
import subprocess
import sys

from albert_tf.cli.model import main


def test_prints_the_parameter_table_and_runs_a_batch(capsys):
    assert main(["--preset", "tiny", "--forward", "--seq_length", "8"]) == 0
    out = capsys.readouterr().out
    assert "preset tiny: V=384 E=16 H=32 L=3" in out
    assert "18,400" in out  # the total, as the tiny preset's comment states
    assert "sequence_output  shape (2, 8, 32)" in out
    assert "pooled_output    shape (2, 32)" in out


def test_yaml_file_with_overrides(tmp_path, capsys):
    path = tmp_path / "model.yaml"
    path.write_text("vocab_size: 100\nembedding_size: 8\nhidden_size: 16\nnum_layers: 2\n"
                    "num_attention_heads: 2\nintermediate_size: 32\n")
    assert main(["--config", str(path), "--override", "sharing=none"]) == 0
    out = capsys.readouterr().out
    assert "sharing=none" in out
    # (100 + 512 + 2) * 8 + 2 * 8 embedding parameters
    assert "4,928" in out


def test_bad_override_is_a_clear_error(capsys):
    assert main(["--preset", "tiny", "--override", "num_heads=3"]) == 2
    assert "'num_heads' is not a field of AlbertConfig" in capsys.readouterr().err


def test_list_presets(capsys):
    assert main(["--list"]) == 0
    assert "albert_xxlarge" in capsys.readouterr().out.split()


def test_console_script_is_installed():
    script = pathlib.Path(sys.executable).parent / "albert-model"
    result = subprocess.run([str(script), "--list"], capture_output=True, text=True, check=True)
    assert "tiny" in result.stdout.split()
