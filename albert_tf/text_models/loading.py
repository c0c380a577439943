"""A trained raw-text model from where it was kept: a `.keras` file (`model.save`) or an
`albert-finetune` run folder (its best checkpoint, head included).

    model = load_text_model("runs/mrpc")        # a TextClassifier with MRPC's labels
    model = load_text_model("sentiment.keras")  # what TextClassifier.save wrote
"""

from __future__ import annotations

import os

from albert_tf.checkpoints.model_folder import split_checkpoint_path
from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.finetuning.restore import is_finetune_run, load_finetuned
from albert_tf.finetuning.task_kinds import get_task
from albert_tf.preprocessing.text_preprocessor import TextPreprocessor
from albert_tf.text_models.classifier import TextClassifier, TextRegressor
from albert_tf.text_models.multiple_choice import TextMultipleChoice
from albert_tf.text_models.span_extractor import TextSpanExtractor
from albert_tf.text_models.starts import read_saved_text_model
from albert_tf.text_models.task import TextTask


def load_text_model(path: str, checkpoint: str | None = None) -> TextTask:
    """The raw-text model at `path`: a `.keras` file, or a fine-tuning run folder (or one of
    its `best/ckpt-N`) with the weights dev chose (or `checkpoint`).

    Raises:
        CheckpointError: `path` is neither, or a `.keras` file `read_saved_text_model`
            refuses; or the run's task has no raw-text model (SQuAD 2.0 with the original's
            answerability head).
    """
    path = os.fspath(path)
    if path.endswith(".keras"):
        return read_saved_text_model(path)
    folder, found = (path, None) if os.path.isdir(path) else split_checkpoint_path(path)
    if not is_finetune_run(folder):
        raise CheckpointError(f"{path}: not a .keras file nor an albert-finetune run folder "
                              f"(no finetune.yaml)")
    return text_model_of_run(folder, checkpoint or found)


def text_model_of_run(folder: str, checkpoint: str | None = None) -> TextTask:
    """The raw-text model of a fine-tuning run, sharing the run's restored weights."""
    run = load_finetuned(folder, checkpoint)
    config, task = run.config, get_task(run.config)
    preprocessor = TextPreprocessor(config.model.spm_model, config.model.lower_case,
                                    config.data.max_seq_length)
    ids_model = run.model
    common = {"preprocessor": preprocessor}
    if task.kind == "classification":
        model = TextClassifier(ids_model.encoder, labels=task.labels,
                               dropout_rate=ids_model.dropout_rate,
                               pooling=ids_model.pooling, **common)
    elif task.kind == "regression":
        model = TextRegressor(ids_model.encoder, dropout_rate=ids_model.dropout_rate,
                              pooling=ids_model.pooling, **common)
    elif task.kind == "multiple_choice":
        model = TextMultipleChoice(ids_model.encoder, ids_model.num_choices,
                                   max_qa_length=config.data.max_qa_length,
                                   dropout_rate=ids_model.dropout_rate,
                                   pooling=ids_model.pooling, **common)
    elif task.kind == "span" and not task.answerability_head:
        squad = config.squad
        model = TextSpanExtractor(ids_model.encoder, doc_stride=config.data.doc_stride,
                                  max_query_length=config.data.max_query_length,
                                  max_answer_length=squad.max_answer_length,
                                  n_best_size=squad.n_best_size,
                                  allow_no_answer=task.version_2,
                                  null_score_threshold=squad.null_score_threshold, **common)
    else:
        raise CheckpointError(f"{folder}: task {config.task} with the answerability head "
                              f"(squad.v2_head: answerability) has no raw-text model yet; "
                              f"albert-export serves it as a SavedModel")
    model.build_from_config({})
    model.head.set_weights(ids_model.head.get_weights())
    return model
