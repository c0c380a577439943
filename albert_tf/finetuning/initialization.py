"""The pretrained encoder a fine-tuning run starts from, with its config and tokenizer.

Any checkpoint `albert-convert` reads can start a run: our model folders (pretraining runs or
converted ones), the original TF1 releases, transformers folders and Model Garden encoders;
so can another fine-tuning run's folder (its best checkpoint, or one `best/ckpt-N`).
Only the encoder's weights are taken; the task head starts fresh, as in the original.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.config.finetuning import FinetuneConfig, ModelSection


@dataclasses.dataclass
class PretrainedEncoder:
    """What a run needs from its starting point.

    Attributes:
        config: the encoder's `AlbertConfig`, with the run's fine-tuning dropout applied.
        encoder: the loaded `AlbertEncoder` (its weights are copied by name into the task
            model's encoder, built under the run's strategy), or None for a random start.
        spm_model: path of the SentencePiece model.
        lower_case: whether the tokenizer lower-cases.
        source: a description of where the weights came from.
    """

    config: AlbertConfig
    encoder: Any
    spm_model: str
    lower_case: bool
    source: str


def load_start(model: ModelSection) -> PretrainedEncoder:
    """The encoder `model.init_checkpoint` (in `model.init_format`) holds, with its config,
    tokenizer and casing, as they are stored (no fine-tuning dropout applied)."""
    from albert_tf.checkpoints.convert import load_model, read_model_config
    from albert_tf.checkpoints.model_folder import folder_tokenizer, split_checkpoint_path
    from albert_tf.finetuning.restore import is_finetune_run, load_finetuned

    config = read_model_config(model.config) if model.config else None
    if model.init_format == "ours":
        folder, checkpoint = split_checkpoint_path(model.init_checkpoint)
        if is_finetune_run(folder):  # e.g. RTE from an MNLI run, as the paper's GLUE runs did
            run = load_finetuned(folder, checkpoint)
            return PretrainedEncoder(
                run.model.encoder.config, run.model.encoder, run.config.model.spm_model,
                run.config.model.lower_case,
                f"albert-finetune run {folder} ({run.config.task}, step {run.step})")
        loaded = load_model("ours", folder, config, checkpoint=checkpoint)
        recorded = folder_tokenizer(folder)[1]
        lower_case = model.lower_case if recorded is None else recorded
    else:
        loaded = load_model(model.init_format, model.init_checkpoint, config)
        lower_case = model.lower_case
    encoder = getattr(loaded.model, "encoder", loaded.model)
    source = f"{loaded.source_format} {loaded.source} (step {loaded.global_step})"
    return PretrainedEncoder(loaded.config, encoder, loaded.spm_model, lower_case, source)


def load_pretrained_encoder(config: FinetuneConfig) -> PretrainedEncoder:
    """Reads `config.model`'s checkpoint (or, without one, builds a random start from
    `config.model.config`) and applies the run's dropout settings."""
    from albert_tf.checkpoints.convert import read_model_config

    model = config.model
    if model.init_checkpoint:
        start = load_start(model)
        model_config, encoder, found_spm = start.config, start.encoder, start.spm_model
        lower_case, source = start.lower_case, start.source
    elif model.config:
        model_config, encoder, found_spm = read_model_config(model.config), None, None
        lower_case, source = model.lower_case, "random initialization"
    else:
        raise ConfigError("field 'model.init_checkpoint' is empty: name the pretrained model "
                          "(--init_checkpoint), or set model.config for a random start")
    spm_model = model.spm_model or found_spm
    if not spm_model:
        raise CheckpointError(f"{model.init_checkpoint or model.config}: no SentencePiece "
                              f"model found beside it; set model.spm_model (--spm_model)")
    if not os.path.exists(spm_model):
        raise ConfigError(f"field 'model.spm_model': {spm_model}: no such file")
    changes = {name: getattr(model, name) for name in ("hidden_dropout", "attention_dropout")
               if getattr(model, name) is not None}
    if config.data.max_seq_length > model_config.max_position_embeddings:
        raise ConfigError(f"field 'data.max_seq_length' ({config.data.max_seq_length}) exceeds "
                          f"the model's max_position_embeddings "
                          f"({model_config.max_position_embeddings}): fine-tune at most that "
                          f"long (--override data.max_seq_length="
                          f"{model_config.max_position_embeddings})")
    return PretrainedEncoder(model_config.replace(**changes), encoder, spm_model, lower_case,
                             source)
