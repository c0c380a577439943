"""What the task readers produce: one plain record per labelled (or test) example.

Readers turn the files users have on disk (GLUE TSVs, SQuAD JSON, RACE folders) into these;
feature conversion turns them into model inputs; metrics and prediction writers read them
back. They hold text, never token ids, so one reader serves every tokenizer.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence, Union


class TaskDataError(ValueError):
    """A task file is missing or malformed; the message names the file, line or field and
    what was expected there."""


@dataclasses.dataclass(frozen=True)
class TextExample:
    """One sentence or sentence pair of a GLUE-style task.

    Attributes:
        guid: the example's id: `<split>-<row>` or, for test sets, the file's own `index`
            column (what the leaderboard files are keyed by).
        text_a: the first (or only) text.
        text_b: the second text of a pair task, else None.
        label: a label string of the task's label list, a float for regression (STS-B), or
            None for unlabelled test examples.
    """

    guid: str
    text_a: str
    text_b: Optional[str] = None
    label: Union[str, float, None] = None


@dataclasses.dataclass(frozen=True)
class SquadExample:
    """One SQuAD question about one context paragraph.

    Attributes:
        qas_id: the question's id (what prediction files are keyed by).
        question: the question text.
        context: the paragraph, exactly as in the JSON (answer offsets index into it).
        answers: (text, start character in `context`) of each gold answer; for training
            files the first one is the training target. Empty for unanswerable questions
            and for unlabelled files.
        is_impossible: SQuAD v2.0's "no answer in the context".
        title: the article title (for reports only).
    """

    qas_id: str
    question: str
    context: str
    answers: Sequence[tuple[str, int]] = ()
    is_impossible: bool = False
    title: str = ""


@dataclasses.dataclass(frozen=True)
class MultipleChoiceExample:
    """One RACE question: a passage, a question and its options.

    Attributes:
        guid: `<file id>-<question index>`, e.g. `high1234.txt-0`.
        context: the passage.
        question: the question (a cloze question holds "_" where the option goes).
        options: the answer options (four in RACE).
        label: index of the correct option, or None when unknown.
        level: `middle` or `high` (the RACE subset), for per-level accuracy.
    """

    guid: str
    context: str
    question: str
    options: Sequence[str]
    label: Optional[int] = None
    level: str = ""
