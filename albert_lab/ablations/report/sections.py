"""The sections of `results.md`, in order (`SECTIONS`): each is a function of the report's
parts (`ReportParts`) that gives its lines, or none when it has nothing to say.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from albert_lab.ablations.report.provenance import data_markdown, stuck_markdown
from albert_lab.ablations.report.tables import (
    chance_markdown,
    markdown_table,
    plateau_markdown,
    row_label,
    trend_markdown,
)
from albert_lab.ablations.statistics.downstream_average import (
    DOWNSTREAM_AVERAGE,
)
from albert_lab.ablations.statistics.task_differences import (
    task_differences_markdown,
)
from albert_lab.ablations.statistics.verdicts import (
    verdicts_markdown,
)
from albert_lab.ablations.table_spec import (
    METRICS,
    ExperimentSpec,
)


def _setting(results: list[dict[str, Any]], of_paper: bool) -> str:
    if not results:
        return ""
    settings = results[0]["settings"]
    model, train, data = settings["model"], settings["train"], settings["data"]
    changes = "what the paper's rows change" if of_paper else "what they name"
    return (f"H={model['hidden_size']}, E={model['embedding_size']}, L={model['num_layers']}, "
            f"V={model['vocab_size']}, sequence {data['max_seq_length']}, batch "
            f"{train['global_batch_size']}, {train['train_steps']:,} steps, "
            f"{settings['optimizer']['type']} at {settings['optimizer']['learning_rate']:g} "
            f"(the first variant; the rows change {changes})")


@dataclasses.dataclass(frozen=True)
class ReportParts:
    """What the sections of `results.md` are made from."""
    spec: ExperimentSpec
    results: list[dict[str, Any]]  # the finished variants' results
    reference: dict[str, Any] | None  # the random start's, if it ran
    paper_parameters: dict[str, int | None]
    command: str
    plots: dict[str, str]  # name -> path
    gains: dict[str, Any]  # variant -> its gains over the random start
    claim_differences: list[dict[str, Any]]  # each downstream claim's sides, task by task
    plateaus: dict[str, Any]  # variant -> how far it left the unigram plateau
    verdicts: list[Any]
    notes_path: str  # the reader's notes, kept when the report is rewritten

    @property
    def of_paper(self) -> bool:
        """Whether the file is a table of the paper (a file of our own states its own claims
        and changes its own settings)."""
        return bool(self.spec.paper_table)

    @property
    def task_names(self) -> list[str]:
        return [task.name for task in self.spec.downstream]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The finished variants' results, then the random start's if it ran."""
        return [*self.results, *([self.reference] if self.reference else [])]


def _header(parts: ReportParts) -> list[str]:
    spec, lines = parts.spec, [f"# {parts.spec.title or parts.spec.name} "
                               f"({parts.spec.scale} scale)", ""]
    if spec.paper_setting:
        lines += [f"Paper: {spec.paper_setting} (paper's Table {spec.paper_table}).", ""]
    if parts.results:
        lines += [f"Ours: {_setting(parts.results, parts.of_paper)}.", ""]
    if parts.command:
        lines += ["Made by:", "", f"    {parts.command}", ""]
    return lines


def _table(parts: ReportParts) -> list[str]:
    lines = [markdown_table(parts.spec, parts.results, parts.paper_parameters,
                            parts.reference), ""]
    cut = {name: reason for name, reason in parts.spec.cut.items()
           if name not in {result["name"] for result in parts.results}}
    if cut:
        lines += [f"Not run at the {parts.spec.scale} scale (`cut_variants` in its file): " +
                  "; ".join(f"{parts.spec.variant(name).row_label}: {reason}"
                            for name, reason in cut.items()) + ".", ""]
    if parts.reference is not None:
        lines += ["The last row fine-tunes a random start of the first variant's sizes with "
                  "the same recipe and seeds: the downstream columns without pretraining.",
                  ""]
    return lines


def _probe_notes(parts: ReportParts) -> list[str]:
    lines = []
    for result in (result for result in parts.results if result.get("sentence_probe")):
        steps = next(iter(result["sentence_probe"].values()))["steps"]
        lines += [f"The {row_label(result)} row was trained without a sentence objective: its "
                  f"SOP and NSP columns are probes, a fresh sentence head and the pooler "
                  f"trained {steps} steps on each objective's training shards with the rest "
                  f"of the model frozen, then scored on the same held-out sets.", ""]
    return lines


def _gains_section(parts: ReportParts) -> list[str]:
    table = task_differences_markdown(
        [(row_label(result), parts.gains.get(result["name"], {})) for result in parts.results],
        parts.task_names, METRICS[DOWNSTREAM_AVERAGE])
    if not table:
        return []
    return ["## Pretraining against a random start", "",
            "Each variant's scores minus the random start's (test scores at the "
            "checkpoint dev chose, dev scores for runs made before test scores were "
            "kept), paired by fine-tuning seed (points, with a 95% t-interval over the "
            "seeds both finished; the random start has the first variant's sizes):", "",
            table, ""]


def _titled(title: str, body: str) -> list[str]:
    return [f"## {title}", "", body, ""] if body else []


def _data_section(parts: ReportParts) -> list[str]:
    return _titled("The data", data_markdown(parts.rows))


def _stuck_section(parts: ReportParts) -> list[str]:
    return _titled("Stuck fine-tunes", stuck_markdown(parts.rows, parts.task_names))


def _chance_section(parts: ReportParts) -> list[str]:
    return _titled("Sentence accuracies against chance", chance_markdown(parts.results))


def _plateau_section(parts: ReportParts) -> list[str]:
    return _titled("Off the unigram plateau", plateau_markdown(parts.results, parts.plateaus))


def _trend_section(parts: ReportParts) -> list[str]:
    return _titled("Held-out accuracies at each kept checkpoint", trend_markdown(parts.results))


def _plots(parts: ReportParts) -> list[str]:
    return [f"![{name}]({os.path.basename(path)})" for name, path in parts.plots.items()]


def _verdicts_section(parts: ReportParts) -> list[str]:
    if not parts.verdicts:
        return []
    return ["", "## Verdicts", "",
            ("Each claim of the paper about this table" if parts.of_paper else
             "Each claim of this file") + ", tested on our held-out accuracies "
            "and downstream averages (difference in points with a 95% interval; see "
            "`albert_lab/ablations/statistics/verdicts.py` for the rule).", "",
            verdicts_markdown(parts.verdicts, parts.of_paper)]


def _claims_by_task_section(parts: ReportParts) -> list[str]:
    by_name = {result["name"]: result for result in parts.results}
    table = task_differences_markdown(
        [(f"{row_label(by_name[pair['first']])} minus {row_label(by_name[pair['second']])}",
          pair["differences"]) for pair in parts.claim_differences],
        parts.task_names, METRICS[DOWNSTREAM_AVERAGE], row_header="compared")
    if not table:
        return []
    return ["", "## The downstream claims task by task", "",
            "The two sides of each downstream claim, one's scores minus the other's on each "
            "task and on the average, paired by fine-tuning seed (points, with a 95% "
            "t-interval over the seeds both finished): which tasks the average's verdict "
            "comes from.", "", table]


def _notes(parts: ReportParts) -> list[str]:
    if not os.path.exists(parts.notes_path):
        return []
    with open(parts.notes_path, encoding="utf-8") as f:
        return ["", f.read().rstrip()]


# The sections of results.md, in order; each gives no lines when it has nothing to say.
SECTIONS = (_header, _table, _data_section, _probe_notes, _gains_section, _stuck_section,
            _chance_section, _plateau_section, _trend_section, _plots, _verdicts_section,
            _claims_by_task_section, _notes)
