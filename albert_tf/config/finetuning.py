"""A fine-tuning run's configuration: one dataclass per concern, read from a task YAML.

```yaml
task: mrpc                      # a name of albert_tf.finetuning.task_kinds.TASKS
model: {init_checkpoint: runs/base, classifier_dropout: 0.1, hidden_dropout: 0.0}
data: {data_dir: glue_data/MRPC, max_seq_length: 512}
optimizer: {type: adamw, learning_rate: 2.0e-5, warmup_steps: 200}
train: {model_dir: runs/mrpc, global_batch_size: 32, train_steps: 800, eval_every_steps: 100}
squad: {n_best_size: 20, max_answer_length: 30, v2_head: answerability}
distribution: {strategy: default}
```

`configs/finetune/<task>.yaml` hold the paper's per-task recipes (appendix A.4, Table 14);
`--override section.field=value` changes one field.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Sequence

from albert_tf.config.checkpoint_formats import CHECKPOINT_FORMATS
from albert_tf.config.distribution import DistributionConfig
from albert_tf.config.loop import TrainingLoopConfig
from albert_tf.config.model import SENTENCE_POOLINGS
from albert_tf.config.optimizer import OptimizerConfig
from albert_tf.config.schema import (
    ConfigError,
    apply_overrides,
    dataclass_from_mapping,
    load_yaml_mapping,
    plain_dict,
    require,
    require_positive,
)


@dataclasses.dataclass(frozen=True)
class ModelSection:
    """Where the pretrained weights come from, and the fine-tuning dropout.

    Attributes:
        init_checkpoint: our model folder (or one of its `checkpoints/ckpt-N`), or a
            checkpoint in `init_format`. Empty: random initialization (smoke tests only).
        init_format: `ours`, `original` (TF1 release), `huggingface` or `model_garden`.
        config: the model config (a preset name, YAML or JSON): required for `model_garden`
            and for random initialization; otherwise it comes with the checkpoint.
        spm_model: the SentencePiece model; empty: the one found beside the checkpoint.
        lower_case: lower-case text before SentencePiece (the released models are uncased).
        hidden_dropout, attention_dropout: the encoder's dropout while fine-tuning (the
            paper's "ALBERT DR"); null keeps the checkpoint's.
        classifier_dropout: dropout on the pooled output before the task head.
        pooling: what a sentence task's head reads (classification, regression, multiple
            choice): `cls`, the pooled [CLS] output (the original's), or `mean`, the
            sequence output averaged over the real pieces, which the masked LM trains (the
            pooled output is trained by the sentence objective alone).
        head_bias_prior: start a sentence head's bias at the training labels' prior (their
            mean for regression, the log of each class's share for classification) instead
            of zero (`albert_tf.finetuning.head_prior`).
    """

    init_checkpoint: str = ""
    init_format: str = "ours"
    config: str = ""
    spm_model: str = ""
    lower_case: bool = True
    hidden_dropout: float | None = None
    attention_dropout: float | None = None
    classifier_dropout: float = 0.1
    pooling: str = "cls"
    head_bias_prior: bool = False

    def __post_init__(self):
        require(self.init_format in CHECKPOINT_FORMATS, "model.init_format",
               f"one of {', '.join(CHECKPOINT_FORMATS)}", self.init_format)
        for name in ("hidden_dropout", "attention_dropout", "classifier_dropout"):
            value = getattr(self, name)
            require(value is None or 0.0 <= value < 1.0, f"model.{name}", "in [0, 1)", value)
        require(self.pooling in SENTENCE_POOLINGS, "model.pooling",
                f"one of {', '.join(SENTENCE_POOLINGS)}", self.pooling)


@dataclasses.dataclass(frozen=True)
class TaskDataConfig:
    """The task's files and how examples become model inputs.

    Attributes:
        data_dir: the task's folder as distributed (GLUE task folder, SQuAD JSON folder,
            RACE root with train/dev/test).
        max_seq_length: longest packed input; longer inputs are truncated (SQuAD: windowed).
        doc_stride: SQuAD: context tokens between the starts of consecutive windows.
        max_query_length: SQuAD: question tokens kept.
        max_qa_length: RACE: question+option tokens kept (the last ones).
        cache_dir: where converted features are cached as TFRecords; empty:
            `<train.model_dir>/features`.
        shuffle_buffer: training examples held for shuffling.
        pad_to_multiple_of: batches are cut to their longest row rounded up to this (fewer
            padded positions; bounded shapes for XLA).
        static_shapes: pad every batch to max_seq_length (TPUs need fixed shapes).
        train_file, dev_file, test_file: `classify` and `regress` on your own files instead
            of a task folder: CSV, TSV or JSON Lines (by extension); the best checkpoint is
            chosen on dev, and a test file with the label column is scored with it.
        text_column, text_pair_column, label_column: the files' columns (JSON keys): the
            text, the second text of a pair task (empty: single texts) and the label.
        labels: `classify` on files: the classes, in class-index order; empty: the training
            file's labels, sorted (numbers in numeric order). The run keeps the list it used.
    """

    data_dir: str = ""
    max_seq_length: int = 512
    doc_stride: int = 128
    max_query_length: int = 64
    max_qa_length: int = 128
    cache_dir: str = ""
    shuffle_buffer: int = 10_000
    pad_to_multiple_of: int = 16
    static_shapes: bool = False
    train_file: str = ""
    dev_file: str = ""
    test_file: str = ""
    text_column: str = "text"
    text_pair_column: str = ""
    label_column: str = "label"
    labels: Sequence[str] = ()

    def __post_init__(self):
        for name in ("max_seq_length", "doc_stride", "max_query_length", "max_qa_length",
                     "shuffle_buffer", "pad_to_multiple_of"):
            value = getattr(self, name)
            require(value > 0, f"data.{name}", "positive", value)
        require(self.max_seq_length >= 8, "data.max_seq_length", "at least 8",
               self.max_seq_length)
        require(not isinstance(self.labels, str), "data.labels", "a list of class names",
                self.labels)
        object.__setattr__(self, "labels", tuple(str(label) for label in self.labels))
        require(len(set(self.labels)) == len(self.labels), "data.labels",
                "distinct class names", list(self.labels))

    @property
    def has_own_files(self) -> bool:
        """Whether the task reads the user's own files (`train_file`, ...)."""
        return bool(self.train_file or self.dev_file or self.test_file)


@dataclasses.dataclass(frozen=True)
class FinetuneTrainConfig(TrainingLoopConfig):
    """The `train` section of a fine-tuning run: `TrainingLoopConfig` and its dev evaluations.

    Attributes:
        eval_batch_size: examples per evaluation/prediction batch.
        eval_every_steps: steps between dev evaluations; the best one is kept.
        early_stopping_evals: stop once this many dev evaluations in a row have not beaten
            the best one (0: run all `train_steps`). Counted from `best.json`, so a resumed
            run stops where an uninterrupted one would; the learning-rate schedule still
            spans `train_steps`.
    """

    model_dir: str = "runs/finetune"
    eval_batch_size: int = 64
    eval_every_steps: int = 100
    log_every_steps: int = 50
    early_stopping_evals: int = 0

    def __post_init__(self):
        super().__post_init__()
        require_positive("train", self, ("eval_batch_size", "eval_every_steps"))
        require(self.early_stopping_evals >= 0, "train.early_stopping_evals",
                "0 (off) or a positive number of evaluations", self.early_stopping_evals)
        self.require_multiple_of_execution("eval_every_steps")


# Every task albert-finetune runs: the GLUE tasks (their readers and files:
# `albert_tf.task_data.glue_table.GLUE_TASKS`, in this order), SQuAD v1.1 / v2.0, RACE,
# `classify` (your own files, or a folder of `albert-data task` with its own labels) and
# `regress` (your own files).
GLUE_NAMES = ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli")
FOLDER_CLASSIFICATION = "classify"
OWN_REGRESSION = "regress"
OWN_FILE_TASKS = (FOLDER_CLASSIFICATION, OWN_REGRESSION)
TASK_NAMES = GLUE_NAMES + ("squad_v1", "squad_v2", "race") + OWN_FILE_TASKS
SQUAD_V2_HEADS = ("answerability", "cls")


@dataclasses.dataclass(frozen=True)
class SquadConfig:
    """SQuAD answer post-processing.

    Attributes:
        n_best_size: start and end candidates per window, and answers kept per question.
        max_answer_length: longest answer in tokens.
        v2_head: the SQuAD 2.0 model: `answerability` (the original ALBERT's: XLNet's start,
            start-conditioned end and answerability heads, the no-answer threshold tuned on
            dev for the best F1) or `cls` (BERT's rule: no answer is the [CLS] span).
        start_n_top, end_n_top: the `answerability` head's beam of starts, and of ends per
            start.
        null_score_threshold: v2.0 with `cls`: answer "no answer" when the [CLS] span's score
            beats the best span's by more than this. With `answerability`: the threshold on
            the answerability logit for test predictions made before any dev evaluation.
    """

    n_best_size: int = 20
    max_answer_length: int = 30
    v2_head: str = "answerability"
    start_n_top: int = 5
    end_n_top: int = 5
    null_score_threshold: float = 0.0

    def __post_init__(self):
        require(self.v2_head in SQUAD_V2_HEADS, "squad.v2_head",
               f"one of {', '.join(SQUAD_V2_HEADS)}", self.v2_head)
        require(self.start_n_top > 0, "squad.start_n_top", "positive", self.start_n_top)
        require(self.end_n_top > 0, "squad.end_n_top", "positive", self.end_n_top)
        require(self.n_best_size > 0, "squad.n_best_size", "positive", self.n_best_size)
        require(self.max_answer_length > 0, "squad.max_answer_length", "positive",
               self.max_answer_length)


@dataclasses.dataclass(frozen=True)
class FinetuneOptimizerConfig(OptimizerConfig):
    """`OptimizerConfig` with fine-tuning defaults: AdamW (the original's
    `AdamWeightDecay`), so a YAML that sets only the learning rate does not get the
    pretraining LAMB and its 3,125 warm-up steps."""

    type: str = "adamw"
    learning_rate: float = 2e-5
    warmup_steps: int = 100


@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Everything one fine-tuning run needs."""

    task: str = ""
    model: ModelSection = dataclasses.field(default_factory=ModelSection)
    data: TaskDataConfig = dataclasses.field(default_factory=TaskDataConfig)
    optimizer: FinetuneOptimizerConfig = dataclasses.field(
        default_factory=FinetuneOptimizerConfig)
    train: FinetuneTrainConfig = dataclasses.field(default_factory=FinetuneTrainConfig)
    squad: SquadConfig = dataclasses.field(default_factory=SquadConfig)
    distribution: DistributionConfig = dataclasses.field(default_factory=DistributionConfig)

    def __post_init__(self):
        require(self.task in TASK_NAMES, "task", f"one of {', '.join(TASK_NAMES)}", self.task)
        require(self.optimizer.warmup_steps < self.train.train_steps, "optimizer.warmup_steps",
               f"below train.train_steps ({self.train.train_steps})",
               self.optimizer.warmup_steps)
        self._check_own_files()

    def _check_own_files(self) -> None:
        """Files only for the tasks that read them (the run checks that both the training and
        the dev file are given: a recipe YAML names neither)."""
        data = self.data
        for name in ("train_file", "dev_file", "test_file"):
            require(not getattr(data, name) or self.task in OWN_FILE_TASKS, f"data.{name}",
                    f"given only for the tasks {' and '.join(OWN_FILE_TASKS)} (task "
                    f"{self.task} reads its folder, data.data_dir)", getattr(data, name))
        require(not data.labels or self.task == FOLDER_CLASSIFICATION, "data.labels",
                "given only for classify on your own files", list(data.labels))

    def to_dict(self) -> dict[str, Any]:
        return plain_dict(self)


def recipe_path(task: str) -> str:
    """`configs/finetune/<task>.yaml`: the paper's recipe for `task`."""
    from albert_tf.config.presets import config_dir

    path = config_dir() / "finetune" / f"{task}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown task '{task}' (known: {', '.join(TASK_NAMES)})")
    return str(path)


def load_finetune_config(path: str | os.PathLike | None, overrides: Sequence[str] = (),
                         **fields: Any) -> FinetuneConfig:
    """Reads a task YAML (or none), applies `section.field=value` overrides, then `fields`
    given as `section.field` keyword-style pairs from the command line, and validates."""
    mapping = load_yaml_mapping(os.fspath(path)) if path else {}
    source = os.fspath(path) if path else "the command line"
    flag_overrides = [f"{name}={value}" for name, value in fields.items() if value is not None]
    mapping = apply_overrides(mapping, list(overrides) + flag_overrides)
    if overrides or flag_overrides:
        source += " with overrides " + " ".join(list(overrides) + flag_overrides)
    return dataclass_from_mapping(FinetuneConfig, mapping, source)
