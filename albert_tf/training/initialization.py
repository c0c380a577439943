"""Weights a pretraining run sets before step 1 beyond each layer's own initializer."""

from __future__ import annotations

from albert_tf.data.target_frequencies import log_prior, masked_target_counts
from albert_tf.models.pretrainer import AlbertPretrainer
from albert_tf.training.config import PretrainConfig


def initialize_from_data(model: AlbertPretrainer, config: PretrainConfig,
                         train_files: list[str]) -> str | None:
    """Applies `config.init` to the built `model`; returns what it did, for the log (None
    when nothing was asked beyond the layers' initializers).

    `init.mlm_output_bias: unigram` sets the masked-LM output bias to the log prior of the
    targets in the first `init.prior_examples` examples of `train_files`. A resumed run
    restores its weights afterwards, so this only matters for a fresh start.
    """
    if config.init.mlm_output_bias != "unigram":
        return None
    counts, examples = masked_target_counts(
        train_files, config.data.max_predictions_per_seq, config.model.vocab_size,
        config.init.prior_examples)
    model.masked_lm.output_bias.assign(log_prior(counts))
    return (f"masked-LM output bias set to the log frequencies of {int(counts.sum()):,} "
            f"targets in {examples:,} training examples")
