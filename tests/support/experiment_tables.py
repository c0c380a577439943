"""A micro table file and the parameter count of an ALBERT by hand, for the
`albert_lab.ablations` tests."""

import os

from repository import REPOSITORY

PAPER_SCALE = os.path.abspath(os.path.join(REPOSITORY, "experiments", "scales", "paper.yaml"))

# Fine-tuning a micro variant on a few SST-2-shaped rows in seconds.
SST2_OVERRIDES = ["data.max_seq_length=64", "train.train_steps=20", "train.eval_every_steps=10",
                  "train.global_batch_size=32", "train.eval_batch_size=32",
                  "optimizer.warmup_steps=2", "train.verbose=0"]


def micro_table_document(text_dir, steps=20, downstream=(), **extra):
    """A micro experiment: two variants (SOP, NSP) of a 2-layer H=32 model, 20 steps."""
    return {
        "name": "micro_table", "title": "Micro table",
        "paper": {"table": "6", "setting": "ALBERT-base",
                  "columns": [["nsp", "NSP"], ["sop", "SOP"]]},
        "report": {"metrics": ["mlm_accuracy", "nsp_accuracy", "sop_accuracy",
                               "train_hours"]},
        "scales": {
            "paper": {"include": PAPER_SCALE},
            "micro": {
                "corpus": {"sources": [{"name": "ordered",
                                        "train_files": [str(text_dir / "train.txt")],
                                        "heldout_files": [str(text_dir / "heldout.txt")]}]},
                "tokenizer": {"vocab_size": 48},
                "shards": {"max_seq_length": 64, "max_predictions_per_seq": 10,
                           "dupe_factor": 1, "num_shards": 1},
                "evaluation": {"batch_size": 32},
                "downstream": list(downstream),
                "pretrain": {
                    "model": {"embedding_size": 16, "hidden_size": 32, "num_layers": 2,
                              "num_attention_heads": 2, "intermediate_size": 64,
                              "max_position_embeddings": 64},
                    "optimizer": {"type": "adamw", "learning_rate": 0.002,
                                  "warmup_steps": 5},
                    "train": {"global_batch_size": 32, "train_steps": steps,
                              "steps_per_epoch": 10, "steps_per_execution": 5,
                              "backup_every_steps": 10, "eval_steps": 2,
                              "log_every_steps": 5, "verbose": 0}}}},
        "variants": [
            {"name": "nsp", "label": "NSP", "pretrain": {"sentence_objective": "nsp"},
             "paper": {"nsp": 90.5, "sop": 52.0}},
            {"name": "sop", "label": "SOP", "pretrain": {"sentence_objective": "sop"},
             "paper": {"nsp": 78.9, "sop": 86.5}}],
        **extra,
    }


def parameters_by_hand(config) -> int:
    """Distinct encoder parameters by hand: factorized embedding, one attention and one FFN
    sub-block per distinct copy (LayerNorms included), the pooler."""
    vocab, embedding, hidden = config.vocab_size, config.embedding_size, config.hidden_size
    inner, layers = config.intermediate_size, config.num_layers
    tables = (vocab + config.max_position_embeddings + config.type_vocab_size) * embedding
    embeddings = tables + 2 * embedding + (embedding * hidden + hidden
                                           if embedding != hidden else 0)
    attention = 4 * (hidden * hidden + hidden) + 2 * hidden
    feed_forward = hidden * inner + inner + inner * hidden + hidden + 2 * hidden
    copies = {"all": (1, 1), "attention": (1, layers), "ffn": (layers, 1),
              "none": (layers, layers)}[config.sharing]
    return (embeddings + copies[0] * attention + copies[1] * feed_forward
            + hidden * hidden + hidden)
