"""Tiny pretraining runs for the tests: shards of ordered documents (a 48-piece vocabulary,
sequences of 64) and the run config of a two-layer model trained on them."""

from __future__ import annotations

import yaml
from data_helpers import ordered_documents

SEQ, PREDICTIONS, VOCAB = 64, 10, 48


def build_shards(root) -> dict[str, str]:
    """{"train", "heldout_sop", "heldout_nsp"}: globs of shards built under `root`."""
    from data_prep.cli import main as data_main

    (root / "train.txt").write_text(ordered_documents(600, seed=1))
    (root / "heldout.txt").write_text(ordered_documents(60, seed=2))
    assert data_main(["train-spm", "--input", str(root / "train.txt"), "--model_prefix",
                      str(root / "spm"), "--vocab_size", str(VOCAB)]) == 0
    for name, source, objective, dupe in (("train", "train", "sop", 2),
                                          ("heldout_sop", "heldout", "sop", 1),
                                          ("heldout_nsp", "heldout", "nsp", 1)):
        assert data_main(["build", "--input", str(root / f"{source}.txt"), "--spm_model",
                          str(root / "spm.model"), "--output_dir", str(root / name),
                          "--sentence_objective", objective, "--dupe_factor", str(dupe),
                          "--max_seq_length", str(SEQ), "--max_predictions_per_seq",
                          str(PREDICTIONS), "--num_shards", "2", "--no_progress"]) == 0
    return {name: str(root / name / "*.tfrecord")
            for name in ("train", "heldout_sop", "heldout_nsp")}


def run_mapping(shards, model_dir, **train):
    """A tiny run: AdamW (LAMB's layer-wise steps are too small for a model this size to
    learn SOP within a test's budget), XLA as `train.jit_compile` leaves it (off on CPUs)
    unless `train` asks."""
    return {
        "model": {"vocab_size": VOCAB, "embedding_size": 16, "hidden_size": 32,
                  "num_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
                  "max_position_embeddings": SEQ},
        "sentence_objective": "sop",
        "data": {"train_files": [shards["train"]], "eval_files": [shards["heldout_sop"]],
                 "max_seq_length": SEQ, "max_predictions_per_seq": PREDICTIONS,
                 "shuffle_buffer": 1000},
        "optimizer": {"type": "adamw", "learning_rate": 0.002, "warmup_steps": 20},
        "train": {"model_dir": str(model_dir), "global_batch_size": 32, "train_steps": 400,
                  "steps_per_epoch": 50, "steps_per_execution": 10, "backup_every_steps": 50,
                  "eval_steps": 10, "log_every_steps": 10, "verbose": 0, **train},
    }


def write_config(path, mapping):
    path.write_text(yaml.safe_dump(mapping))
    return str(path)
