"""`GlueTask`: a GLUE task (or a task folder in GLUE's layout) to the runner: its reader,
conversion, classifier or regressor, metrics and leaderboard file."""

from __future__ import annotations

import numpy as np

from albert_tf.finetuning.task_base import FinetuneTask, pack_pairs
from albert_tf.models.task_models import AlbertClassifier
from albert_tf.task_data import glue, metrics


class GlueTask(FinetuneTask):
    """A GLUE task from its TSV folder (`albert_tf.task_data.glue`)."""

    label_features = ("label",)
    writes_dev_predictions = False

    def __init__(self, name: str, config, spec: glue.GlueTask | None = None):
        super().__init__(name, config)
        self.spec = spec or glue.GLUE_TASKS[name]
        self.kind = "regression" if self.spec.is_regression else "classification"
        self.labels = self.spec.labels or None
        self.primary_metric = self.spec.metrics[0]  # what picks the best checkpoint
        if name == "mnli":
            self.eval_splits = ("dev", "dev_mismatched")
            self.predict_splits = ("test", "test_mismatched", "ax")

    def source_files(self, split: str) -> list[str]:
        files = [glue.split_file(self.spec, self.data_dir, split)]
        if self.has_labels(split):  # the labels are part of the converted features
            files.append(glue.test_labels_path(self.data_dir))
        return files

    def has_split(self, split: str) -> bool:
        return split in glue.available_splits(self.spec, self.data_dir)

    def has_labels(self, split: str) -> bool:
        return split == "test" and glue.test_labels_path(self.data_dir) is not None

    def read(self, split: str) -> list:
        if self.has_labels(split):
            return glue.read_labelled_test(self.spec, self.data_dir)
        return glue.read_glue(self.spec, self.data_dir, split)

    def constant_score(self, examples, features):
        labels, count = features["label"], len(features["label"])
        if self.spec.is_regression:
            answers = [{"predictions": np.full(count, float(np.mean(labels)), np.float32)}]
        else:
            answers = [{"logits": np.tile(np.eye(len(self.spec.labels), dtype=np.float32)[
                label], (count, 1))} for label in range(len(self.spec.labels))]
        return max(self.evaluate(examples, features, outputs)[self.primary_metric]
                   for outputs in answers)

    def convert(self, examples, tokenizer, is_training):
        first = tokenizer.encode_batch([example.text_a for example in examples])
        second = None
        if examples and examples[0].text_b is not None:
            second = tokenizer.encode_batch([example.text_b or "" for example in examples])
        arrays = pack_pairs(tokenizer, first, second, self.config.data.max_seq_length)
        if self.spec.is_regression:
            arrays["label"] = np.array([example.label or 0.0 for example in examples],
                                       np.float32)
        else:
            arrays["label"] = np.array(
                [0 if example.label is None else self.spec.labels.index(example.label)
                 for example in examples], np.int32)
        return arrays

    def build_model(self, model_config):
        classes = 1 if self.spec.is_regression else len(self.spec.labels)
        return AlbertClassifier(model_config, classes, self.config.model.classifier_dropout,
                                self.config.model.pooling)

    def _predicted(self, outputs):
        if self.spec.is_regression:
            return outputs["predictions"]
        return np.argmax(outputs["logits"], -1)

    def evaluate(self, examples, features, outputs):
        """The task's leaderboard metrics (`GlueTask.metrics`), plus accuracy for the
        classification tasks and the mean squared error for STS-B."""
        predicted, labels = self._predicted(outputs), features["label"]
        extra = ("mse",) if self.spec.is_regression else ("accuracy",)
        scores = {}
        for name in dict.fromkeys(self.spec.metrics + extra):
            if name == "mse":
                scores[name] = float(np.mean((labels - predicted) ** 2))
            else:
                scores[name] = getattr(metrics, name)(labels, predicted)
        return scores

    def write_predictions(self, split, examples, features, outputs, output_dir):
        return [glue.write_glue_predictions(self.spec, split, examples,
                                            list(self._predicted(outputs)), output_dir)]
