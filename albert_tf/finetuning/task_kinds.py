"""The fine-tuning tasks: what each reads, how it converts examples, its model, its metrics
and its leaderboard files.

    GLUE (`cola sst2 mrpc stsb qqp mnli qnli rte wnli`): `[CLS] a [SEP] (b [SEP])`, a head on
        the pooled output; MNLI is evaluated on matched (the kept score) and mismatched dev,
        and predicts test matched, mismatched and the AX diagnostic set (`glue_task`).
    `squad_v1`, `squad_v2`: `[CLS] question [SEP] context window [SEP]`, start/end logits.
    `race`: `[CLS] passage [SEP] question+option [SEP]` for each of the four options.
    `classify`, `regress` on your own files (`own_files`); `classify` also reads a task
        folder of `albert-data task` with its labels in source.json.
"""

from __future__ import annotations

import math
import os

import numpy as np

from albert_tf.config import ConfigError
from albert_tf.config.finetuning import (  # noqa: F401
    FOLDER_CLASSIFICATION,
    GLUE_NAMES,
    OWN_FILE_TASKS,
    TASK_NAMES,
)
from albert_tf.finetuning.glue_task import GlueTask
from albert_tf.finetuning.own_files import OwnFilesTask
from albert_tf.finetuning.task_base import FinetuneTask, pack_pairs  # noqa: F401
from albert_tf.models.task_models import (
    AlbertAnswerabilitySpanLabeler,
    AlbertMultipleChoice,
    AlbertSpanLabeler,
)
from albert_tf.task_data import race, squad, squad_evaluation, squad_postprocess
from albert_tf.task_data.examples import TaskDataError
from albert_tf.task_data.glue_table import folder_classification_task
from albert_tf.tokenization import truncate_pair


class SquadTask(FinetuneTask):
    """SQuAD v1.1 or v2.0 from `train-v*.json`, `dev-v*.json` (and `test-v*.json` when
    there is one) in data_dir."""

    kind = "span"
    primary_metric = "f1"
    label_features = ("start_position", "end_position")
    trims_eval_batches = False  # logits are per position; predict needs one width

    def __init__(self, name: str, config):
        super().__init__(name, config)
        self.version_2 = name == "squad_v2"
        self.version = "2.0" if self.version_2 else "1.1"
        self.tuned_threshold: float | None = None  # set by a dev evaluation

    def source_files(self, split: str) -> list[str]:
        return [os.path.join(self.data_dir, f"{split}-v{self.version}.json")]

    def read(self, split: str) -> list:
        path = self.source_files(split)[0]
        if not os.path.exists(path):
            raise TaskDataError(f"{path}: no such file; task {self.name} reads "
                                f"{split}-v{self.version}.json from data.data_dir")
        return squad.read_squad(path)

    def conversion_settings(self):
        data = self.config.data
        return {"max_seq_length": data.max_seq_length, "doc_stride": data.doc_stride,
                "max_query_length": data.max_query_length}

    def convert(self, examples, tokenizer, is_training):
        data = self.config.data
        return squad.convert_examples(examples, tokenizer, data.max_seq_length, data.doc_stride,
                                      data.max_query_length, is_training)

    @property
    def answerability_head(self) -> bool:
        """SQuAD 2.0 with the original ALBERT's head (`squad.v2_head: answerability`)."""
        return self.version_2 and self.config.squad.v2_head == "answerability"

    def build_model(self, model_config):
        if self.config.model.pooling != "cls":
            raise ConfigError(f"model.pooling: {self.config.model.pooling!r} is for sentence "
                              "tasks (classification, regression, RACE); SQuAD's span heads "
                              "read every position, so leave it at 'cls'")
        if self.answerability_head:
            squad = self.config.squad
            return AlbertAnswerabilitySpanLabeler(model_config, squad.start_n_top,
                                                  squad.end_n_top,
                                                  self.config.model.classifier_dropout)
        return AlbertSpanLabeler(model_config)

    def _predictions(self, examples, features, outputs):
        settings = self.config.squad
        if self.answerability_head:
            predictions = squad_postprocess.predict_answers_with_answerability(
                examples, features, outputs, settings.n_best_size, settings.max_answer_length)
            return squad_postprocess.apply_no_answer_threshold(
                predictions, self.tuned_threshold if self.tuned_threshold is not None
                else settings.null_score_threshold)
        return squad_postprocess.predict_answers(
            examples, features, outputs["start_logits"], outputs["end_logits"],
            settings.n_best_size, settings.max_answer_length, self.version_2,
            settings.null_score_threshold)

    def evaluate(self, examples, features, outputs):
        if self.answerability_head:
            return self._evaluate_with_answerability(examples, features, outputs)
        predictions = self._predictions(examples, features, outputs)
        # The answers already applied squad.null_score_threshold; the null odds only feed
        # the official best-threshold search (best_exact, best_f1 and their thresholds).
        scores = squad_evaluation.squad_scores(
            examples, predictions.answers, predictions.null_odds if self.version_2 else None,
            no_answer_threshold=math.inf)
        return {name: float(value) for name, value in scores.items()}

    def _evaluate_with_answerability(self, examples, features, outputs):
        """As the original's `evaluate_v2`: score the best spans with the official script
        (no-answer probability threshold 1.0 on the answerability logit) to find the
        threshold of the best F1, answer "" above it, and score those answers the same way.
        The threshold is kept for the test predictions written after this evaluation."""
        settings = self.config.squad
        spans = squad_postprocess.predict_answers_with_answerability(
            examples, features, outputs, settings.n_best_size, settings.max_answer_length)
        search = squad_evaluation.squad_scores(examples, spans.answers, spans.null_odds, 1.0)
        self.tuned_threshold = search["best_f1_threshold"]
        final = squad_postprocess.apply_no_answer_threshold(spans, self.tuned_threshold)
        scores = squad_evaluation.squad_scores(examples, final.answers, final.null_odds, 1.0)
        scores.update({name: search[name] for name in ("best_exact", "best_exact_threshold",
                                                       "best_f1", "best_f1_threshold")})
        scores["null_score_threshold"] = self.tuned_threshold
        return {name: float(value) for name, value in scores.items()}

    def write_predictions(self, split, examples, features, outputs, output_dir):
        written = squad_postprocess.write_squad_predictions(
            self._predictions(examples, features, outputs), os.path.join(output_dir, split),
            self.version_2)
        return sorted(written.values())


class RaceTask(FinetuneTask):
    """RACE from its `train/ dev/ test/` folders of `middle/` and `high/` JSON files."""

    kind = "multiple_choice"
    primary_metric = "accuracy"
    label_features = ("label",)

    def source_files(self, split: str) -> list[str]:
        return [os.path.join(self.data_dir, split)]

    def read(self, split: str) -> list:
        return race.read_race(self.data_dir, split)

    def conversion_settings(self):
        return {"max_seq_length": self.config.data.max_seq_length,
                "max_qa_length": self.config.data.max_qa_length}

    def convert(self, examples, tokenizer, is_training):
        """`[CLS] passage [SEP] question+option [SEP]` per option: the question+option keeps
        its last `max_qa_length` pieces, then the pair is truncated as for GLUE."""
        length, qa_length = self.config.data.max_seq_length, self.config.data.max_qa_length
        passages = {}
        first, second = [], []
        for example in examples:
            if example.context not in passages:
                passages[example.context] = tokenizer.encode(example.context)
            options = tokenizer.encode_batch([race.option_text(example.question, option)
                                              for option in example.options])
            for option_ids in options:
                passage, option_ids = list(passages[example.context]), option_ids[-qa_length:]
                truncate_pair(passage, option_ids, length - 3)
                first.append(passage)
                second.append(option_ids)
        arrays = pack_pairs(tokenizer, first, second, length)
        choices = len(examples[0].options) if examples else 4
        arrays = {name: value.reshape(len(examples), choices, length)
                  for name, value in arrays.items()}
        arrays["label"] = np.array([example.label or 0 for example in examples], np.int32)
        return arrays

    def build_model(self, model_config):
        return AlbertMultipleChoice(model_config, 4, self.config.model.classifier_dropout,
                                    self.config.model.pooling)

    def evaluate(self, examples, features, outputs):
        return race.race_accuracy(examples, list(np.argmax(outputs["choice_logits"], -1)))

    def write_predictions(self, split, examples, features, outputs, output_dir):
        path = os.path.join(output_dir, f"race_{split}_predictions.json")
        return [race.write_race_predictions(examples,
                                            list(np.argmax(outputs["choice_logits"], -1)),
                                            path)]


def get_task(config) -> FinetuneTask:
    """The task `config.task` names, bound to the run's config."""
    if config.task in GLUE_NAMES:
        return GlueTask(config.task, config)
    if config.task in ("squad_v1", "squad_v2"):
        return SquadTask(config.task, config)
    if config.task == "race":
        return RaceTask(config.task, config)
    if config.task in OWN_FILE_TASKS and (config.data.has_own_files
                                          or config.task != FOLDER_CLASSIFICATION):
        return OwnFilesTask(config.task, config)
    if config.task == FOLDER_CLASSIFICATION:
        return GlueTask(config.task, config,
                        folder_classification_task(config.data.data_dir))
    raise TaskDataError(f"unknown task '{config.task}' (known: {', '.join(TASK_NAMES)})")
