"""Where a raw-text model starts: the encoder of any checkpoint `albert-convert` reads, with
the SentencePiece model and casing found beside it.

    our pretraining runs and model folders (or one `checkpoints/ckpt-N`), an albert-finetune
    run (its best checkpoint's encoder), a released TF1 folder, a transformers folder, a
    keras-hub preset folder, a Model Garden checkpoint (with `source_format="model_garden"`
    and `model_config`), or a saved raw-text model (`.keras`, its encoder and tokenizer).

The format is read from the files (`albert_tf.checkpoints.detection`) unless named.
"""

from __future__ import annotations

import dataclasses
import os

import tf_keras

from albert_tf.checkpoints.detection import detect_format
from albert_tf.checkpoints.model_folder import load_run_config, split_checkpoint_path
from albert_tf.checkpoints.reading import CheckpointError, check_finite
from albert_tf.config import AlbertConfig
from albert_tf.config.finetuning import ModelSection
from albert_tf.finetuning.initialization import load_start
from albert_tf.finetuning.restore import is_finetune_run, read_finetune_config
from albert_tf.preprocessing.text_preprocessor import TextPreprocessor
from albert_tf.text_models.task import TextTask

DEFAULT_MAX_SEQ_LENGTH = 512


@dataclasses.dataclass
class TextStart:
    """A loaded encoder and what its texts need.

    Attributes:
        encoder: the `AlbertEncoder`, weights loaded.
        spm_model: the SentencePiece model: a path, or its bytes (from a `.keras` file).
        lower_case: whether its tokenizer lower-cases.
        max_seq_length: the length it was trained at when the source records one, else 512
            (at most `max_position_embeddings`).
        source: where the weights came from, for messages.
    """

    encoder: object
    spm_model: str | bytes
    lower_case: bool
    max_seq_length: int
    source: str

    @property
    def config(self) -> AlbertConfig:
        return self.encoder.config


def load_text_start(path: str, source_format: str | None = None,
                    model_config: str | None = None, spm_model: str | None = None,
                    lower_case: bool | None = None) -> TextStart:
    """The encoder at `path` (see the module docstring).

    Args:
        path: the checkpoint.
        source_format: `ours`, `original`, `huggingface`, `keras_hub` or `model_garden`;
            None reads it from the files.
        model_config: a model config (preset name, YAML or JSON): needed for Model Garden,
            and overrides the one beside other sources.
        spm_model: the SentencePiece model, when not the one beside the checkpoint.
        lower_case: whether to lower-case; None takes what the source records (else True).
    """
    path = os.fspath(path)
    if path.endswith(".keras"):
        saved = read_saved_text_model(path)
        preprocessor = saved.preprocessor
        return TextStart(saved.encoder, spm_model or preprocessor.proto,
                         preprocessor.lower_case if lower_case is None else lower_case,
                         preprocessor.max_seq_length, f"saved model {path}")
    source_format = source_format or detect_format(path)
    section = ModelSection(init_checkpoint=path, init_format=source_format,
                           config=model_config or "", spm_model=spm_model or "",
                           lower_case=True if lower_case is None else lower_case)
    start = load_start(section)
    if lower_case is not None:
        start.lower_case = lower_case
    spm = spm_model or start.spm_model
    if not spm:
        raise ValueError(f"{path}: no SentencePiece model found beside it; give spm_model "
                         f"(the one the weights were trained with)")
    length = min(_recorded_length(path, source_format) or DEFAULT_MAX_SEQ_LENGTH,
                 start.config.max_position_embeddings)
    return TextStart(start.encoder, spm, start.lower_case, length, start.source)



def read_saved_text_model(path: str) -> TextTask:
    """The raw-text model a `.keras` file holds (`model.save`), checked: a missing file, a
    file holding another kind of model, and weights holding NaN or infinity (all of them
    listed) are CheckpointErrors naming the file."""
    if not os.path.isfile(path):
        raise CheckpointError(f"{path}: no such file")
    model = tf_keras.models.load_model(path)
    if not isinstance(model, TextTask):
        raise CheckpointError(f"{path}: holds a {type(model).__name__}, not a raw-text "
                              f"model of albert_tf.text_models")
    check_finite({weight.name: weight.numpy() for weight in model.weights}, path)
    return model

def _recorded_length(path: str, source_format: str) -> int | None:
    """The sequence length our run folders were trained at."""
    if source_format != "ours":
        return None
    folder, _ = split_checkpoint_path(path)
    if is_finetune_run(folder):
        return read_finetune_config(folder).data.max_seq_length
    return load_run_config(folder).data.max_seq_length


class StartMixin:
    """`from_checkpoint`, for the raw-text models."""

    @classmethod
    def from_checkpoint(cls, path: str, *, source_format: str | None = None,
                        model_config: str | None = None, spm_model: str | None = None,
                        lower_case: bool | None = None, max_seq_length: int | None = None,
                        pad_to_multiple_of: int = 16, **task_arguments):
        """This model on the pretrained encoder at `path`, with a fresh head, compiled with
        the default optimizer (`compile()` again to change it).

        Args:
            path: any checkpoint `load_text_start` reads (see `albert_tf.text_models`).
            source_format, model_config, spm_model, lower_case: as `load_text_start`'s.
            max_seq_length: the longest packed input (default: what the source was trained
                at when it records it, else 512; at most its `max_position_embeddings`).
            pad_to_multiple_of: batches are padded to a multiple of this.
            **task_arguments: the model's own (`num_classes`, `labels`, `dropout_rate`,
                `pooling`, ...).

        Example:
            classifier = TextClassifier.from_checkpoint("runs/base", num_classes=3)
        """
        start = load_text_start(path, source_format, model_config, spm_model, lower_case)
        preprocessor = TextPreprocessor(start.spm_model, start.lower_case,
                                        max_seq_length or start.max_seq_length,
                                        pad_to_multiple_of)
        model = cls(start.encoder, preprocessor=preprocessor, **task_arguments)
        model.build_from_config({})
        model.compile()
        return model
