"""`TaskSource`, the registry's entry for a task: its package, reader, layout and labels."""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

from albert_lab.task_folders.examples import Example


@dataclasses.dataclass(frozen=True)
class TaskSource:
    """One task: where its data comes from, how it is read and split, how it is written.

    Attributes:
        name: the `--source` name.
        kind: what the task asks, in words.
        package: the pip or apt package that ships the data.
        installer: `pip` or `apt`.
        resources: pip: the data's path inside the installed distribution; apt: absolute
            paths tried in order.
        read: the reader: data path -> examples.
        layout: the GLUE task whose columns the files use (`sst2`: one text; `stsb`: a pair
            and a score in [0, 5]).
        labels: the label strings written, in class-id order; empty for a score.
        label_names: what each written label means.
        finetune_task: the `albert-finetune --task` that reads the folder as it is
            (`classify` takes its labels from the folder's source.json).
        unit: what one group is (for reports).
        fractions: train/dev/test shares of the examples (of the groups for pair tasks).
        licence: the package's licence as checked, and who owns the texts.
        origin: where the data was made, by whom.
        notes: what the reader changes (cleaning, label mapping).
    """

    name: str
    kind: str
    package: str
    installer: str
    resources: tuple[str, ...]
    read: Callable[[str], Iterable[Example]]
    layout: str
    labels: tuple[str, ...]
    label_names: dict
    finetune_task: str
    unit: str
    fractions: tuple[float, float, float]
    licence: str
    origin: str
    notes: str = ""

    @property
    def is_regression(self) -> bool:
        """Whether the label is a score (no label strings)."""
        return not self.labels

    @property
    def install_command(self) -> str:
        """The command that installs the package."""
        return (f"pip install {self.package}" if self.installer == "pip"
                else f"apt-get install {self.package}")
