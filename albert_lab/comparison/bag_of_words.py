"""The bag-of-words baseline of the downstream suite: what words alone reach on a task.

- classification: multinomial naive Bayes over lower-cased word unigrams and bigrams with
  add-one smoothing, trained on `train`, scored by accuracy on dev (or test);
- similarity (`stsb`): the Pearson correlation on dev (or test) between the gold score and
  the cosine similarity of the two texts' unigram + bigram count vectors (no training: a
  correlation does not depend on the scale of the prediction).
"""

from __future__ import annotations

import collections
import math
import re
from typing import Iterable

from albert_tf.config.finetuning import FOLDER_CLASSIFICATION
from albert_tf.task_data.glue import GLUE_TASKS, read_glue, read_labelled_test
from albert_tf.task_data.glue_table import folder_classification_task
from albert_tf.task_data.metrics import accuracy, pearson

_WORD = re.compile(r"\w+")


def features(text: str) -> collections.Counter:
    """Counts of the text's lower-cased words and adjacent word pairs.

    >>> sorted(features("Good film, good.").items())
    [('film', 1), ('film good', 1), ('good', 2), ('good film', 1)]
    """
    words = _WORD.findall(text.lower())
    return collections.Counter([*words, *(" ".join(pair) for pair in zip(words, words[1:]))])


class NaiveBayes:
    """Multinomial naive Bayes with add-one smoothing over `features`."""

    def __init__(self, texts: Iterable[str], labels: Iterable[str]):
        self.counts: dict[str, collections.Counter] = collections.defaultdict(
            collections.Counter)
        documents = collections.Counter()
        for text, label in zip(texts, labels):
            self.counts[label].update(features(text))
            documents[label] += 1
        total = sum(documents.values())
        self.log_prior = {label: math.log(count / total) for label, count in documents.items()}
        self.vocabulary = len(set().union(*self.counts.values()))
        self.totals = {label: sum(counts.values()) for label, counts in self.counts.items()}

    def predict(self, text: str) -> str:
        found = features(text)

        def score(label):
            counts, denominator = self.counts[label], self.totals[label] + self.vocabulary
            return self.log_prior[label] + sum(
                times * math.log((counts[feature] + 1) / denominator)
                for feature, times in found.items())
        return max(self.log_prior, key=score)


def _cosine(first: collections.Counter, second: collections.Counter) -> float:
    dot = sum(count * second[feature] for feature, count in first.items())
    norms = math.sqrt(sum(c * c for c in first.values()) * sum(c * c for c in second.values()))
    return dot / norms if norms else 0.0


def baseline_score(folder: str, task: str, split: str = "dev") -> float:
    """The baseline's score on the task folder's `split` (accuracy, or Pearson for `stsb`):
    `dev`, or `test` when the folder has its labels (`test_labels.tsv`)."""
    spec = folder_classification_task(folder) if task == FOLDER_CLASSIFICATION \
        else GLUE_TASKS[task]
    scored = read_labelled_test(spec, folder) if split == "test" else read_glue(spec, folder,
                                                                               split)
    if spec.is_regression:
        return pearson([example.label for example in scored],
                       [_cosine(features(example.text_a), features(example.text_b or ""))
                        for example in scored])
    train = read_glue(spec, folder, "train")
    model = NaiveBayes((example.text_a for example in train),
                       (example.label for example in train))
    return accuracy([example.label for example in scored],
                    [model.predict(example.text_a) for example in scored])
