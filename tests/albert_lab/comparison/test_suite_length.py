"""The downstream suite's sequence length (`albert_lab.comparison.suite.run_downstream`): by
default the run's pretraining length; a longer one the run's position table reaches is used
by both starts, and the random start is then the one a run pretrained at that length
shares; one beyond the table is refused before anything is fine-tuned. The fine-tunes are
replaced by a stand-in that keeps their overrides (the seed loop itself is real)."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from repository import REPOSITORY

from albert_lab.comparison import suite
from albert_tf.config import ConfigError
from albert_tf.config.pretraining import load_pretrain_config


@pytest.fixture
def fine_tunes(stand_in_fine_tunes):
    """The overrides of every fine-tune asked for; each scores by its seed."""
    return stand_in_fine_tunes(lambda overrides, seed: list(overrides))


def _run(folder, seq_length: int) -> str:
    """A pretraining run folder's config.yaml and tokenizer copy: `tiny_cpu.yaml` at
    `seq_length`, its position table of 128."""
    os.makedirs(folder)
    config = load_pretrain_config(os.path.join(REPOSITORY, "configs/pretrain/tiny_cpu.yaml"), [
        f"data.max_seq_length={seq_length}", "model.max_position_embeddings=128",
        "tokenizer.spm_model=albert.model"])
    with open(os.path.join(folder, "config.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump(config.to_dict(), f)
    with open(os.path.join(folder, "albert.model"), "wb") as f:
        f.write(b"the same tokenizer bytes")
    return str(folder)


@pytest.fixture
def tasks_dir(tmp_path):
    folder = tmp_path / "tasks" / "news"
    folder.mkdir(parents=True)
    (folder / "source.json").write_text(json.dumps({"albert_finetune": {"task": "classify"}}))
    (folder / "train.tsv").write_text("sentence\tlabel\n" + "".join(
        f"words {index}\t{index % 2}\n" for index in range(20)))
    (folder / "dev.tsv").write_text("sentence\tlabel\nwords\t1\n")
    return str(tmp_path / "tasks")


def _lengths(asked) -> set[str]:
    """The sequence length each fine-tune was given last (the one that holds)."""
    return {[item for item in overrides if item.startswith("data.max_seq_length=")][-1]
            for overrides in asked}


def test_the_fine_tunes_run_at_the_pretraining_length_unless_told(tmp_path, tasks_dir,
                                                                   fine_tunes):
    short = _run(tmp_path / "short", 64)
    report = suite.run_downstream(short, tasks_dir, seeds=(1, 2))
    assert _lengths(fine_tunes) == {"data.max_seq_length=64"}
    assert len(fine_tunes) == 4  # two seeds from each start
    fine_tunes.clear()
    shared = {"random_starts": str(tmp_path / "random"),
              "random_records": str(tmp_path / "records")}
    stretched = suite.run_downstream(short, tasks_dir, seeds=(1, 2), max_seq_length=128,
                                     **shared)
    # A suite of its own: the run at 64 fine-tuned again, not read from the first report.
    assert _lengths(fine_tunes) == {"data.max_seq_length=128"} and len(fine_tunes) == 4
    assert stretched["recipe"][-1] == "data.max_seq_length=128"
    assert os.path.exists(os.path.join(short, f"{suite.suite_name(['data.max_seq_length=128'])}"
                                              ".json"))
    # Its random start is the one a run pretrained at 128 (same sizes, same tokenizer
    # bytes) is compared with, so its seeds are fine-tuned once for both.
    fine_tunes.clear()
    full = suite.run_downstream(_run(tmp_path / "full", 128), tasks_dir, seeds=(1, 2),
                                **shared)
    assert full["random_start"] == stretched["random_start"] != report["random_start"]
    assert len(fine_tunes) == 2 and not any(
        item.startswith("model.config=") for overrides in fine_tunes for item in overrides)


def test_a_length_beyond_the_position_table_is_refused_before_any_fine_tune(
        tmp_path, tasks_dir, fine_tunes):
    run = _run(tmp_path / "run", 64)
    with pytest.raises(ConfigError, match=r"max_seq_length 256 .*max_position_embeddings 128"):
        suite.run_downstream(run, tasks_dir, seeds=(1,), max_seq_length=256)
    assert fine_tunes == []
