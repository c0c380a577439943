"""The report's tables in Markdown: the paper's table with our columns beside its figures, and
the tables of sentence accuracies against chance, of held-out MLM against the unigram
plateau and of the checkpoint trend. Each takes the finished variants' results.
"""

from __future__ import annotations

from typing import Any

from albert_lab.ablations.plots import TREND_METRICS
from albert_lab.ablations.statistics.downstream_average import (
    DOWNSTREAM_AVERAGE,
    as_fraction,
)
from albert_lab.ablations.statistics.intervals import binomial_p_value
from albert_lab.ablations.table_spec import (
    METRICS,
    PERCENT_METRICS,
    ExperimentSpec,
    row_name,
)
from albert_lab.comparison.gain import points_interval


def millions(count: int | None) -> str:
    """A parameter count the way the paper prints it (12M), with more digits when small."""
    if count is None:
        return "–"
    value = count / 1e6
    return f"{value:.0f}M" if value >= 100 else f"{value:.1f}M" if value >= 10 else (
        f"{value:.2f}M")


def _format(metric: str, value) -> str:
    if value is None:
        return "–"
    if metric in PERCENT_METRICS:
        return f"{100 * value:.1f}"
    if metric == "train_hours":
        return f"{value:.3f}" if value < 1 else f"{value:.1f}"
    if metric == "examples_per_second":
        return f"{value:,.0f}"
    return f"{value:.3f}"


def _downstream_cell(score: dict[str, Any] | None) -> str:
    """A task's score in percent, the mean over the seeds run so far: on test (at the
    checkpoint dev chose) with dev beside it, or dev alone for runs made before test scores
    were kept; the metric's name, how many seeds when that is not one, and how many of them
    are stuck at the constant answer."""
    if score is None or "value" not in score:
        return "not run"
    runs = list(score.get("seeds", {}).values())
    dev = f"{100 * as_fraction(score['value']):.1f}"
    shown = (f"test {100 * as_fraction(score['test']):.1f} (dev {dev})"
             if score.get("test") is not None else f"dev {dev}")
    notes = [f"{len(runs)} seeds"] if len(runs) > 1 else []
    stuck = sum(bool(run.get("stuck")) for run in runs)
    if stuck:
        notes.append(f"**{stuck} stuck**")
    return f"{shown} {score['metric']}" + (f" ({', '.join(notes)})" if notes else "")


def markdown_table(spec: ExperimentSpec, results: list[dict[str, Any]],
                   paper_parameters: dict[str, int | None],
                   reference: dict[str, Any] | None = None) -> str:
    """One row per variant: the paper's figures, then parameter counts and our metrics; then
    the `reference` row (a random start: downstream columns only), if given."""
    by_name = {result["name"]: result for result in results}
    average_column = bool(spec.downstream) and DOWNSTREAM_AVERAGE not in spec.metrics
    headers = ["", *(f"paper {header}" for _, header in spec.paper_columns)]
    if spec.paper_models:
        headers.append("params, paper sizes (ours)")
    headers += [f"params ({spec.scale})", *(f"{METRICS[m]} ({spec.scale})"
                                            for m in spec.metrics),
                *(f"{task.name} ({spec.scale})" for task in spec.downstream)]
    if average_column:
        headers.append(f"{METRICS[DOWNSTREAM_AVERAGE]} ({spec.scale})")
    rows = []
    for variant in spec.variants:
        cells = [variant.row_label]
        cells += ["–" if variant.paper.get(key) is None else str(variant.paper[key])
                  for key, _ in spec.paper_columns]
        if spec.paper_models:
            cells.append(millions(paper_parameters.get(variant.name)))
        ours = _our_cells(spec, by_name.get(variant.name), average_column)
        if variant.name in spec.cut and variant.name not in by_name:
            ours = ["cut"] * len(ours)
        rows.append(cells + ours)
    if reference is not None:
        rows.append([reference["label"], *["–"] * (len(spec.paper_columns)
                                                   + bool(spec.paper_models)),
                     *_our_cells(spec, reference, average_column)])
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows])


def _our_cells(spec: ExperimentSpec, result: dict[str, Any] | None,
               average_column: bool) -> list[str]:
    """The cells of our columns for one row (a row without a result: `not run`)."""
    count = 1 + len(spec.metrics) + len(spec.downstream) + average_column
    if result is None:
        return ["not run"] * count
    cells = [millions(result.get("parameters", {}).get("total"))]
    cells += [_format(metric, result["metrics"].get(metric)) for metric in spec.metrics]
    cells += [_downstream_cell(result["downstream"].get(task.name))
              for task in spec.downstream]
    if average_column:
        cells.append(_format(DOWNSTREAM_AVERAGE, result["metrics"].get(DOWNSTREAM_AVERAGE)))
    return cells


def row_label(result: dict[str, Any]) -> str:
    """A finished variant's name in the report's tables: its group (if any), then its label,
    as `VariantSpec.row_label` names its row."""
    return row_name(result.get("group") or "", result["label"])


SENTENCE_TASKS = (("nsp_accuracy", "nsp", "NSP"), ("sop_accuracy", "sop", "SOP"))


def chance_markdown(results: list[dict[str, Any]]) -> str:
    """Each held-out sentence accuracy against chance: correct / examples and the exact
    two-sided binomial p-value against 50% (empty when no variant has one)."""
    rows = []
    for result in results:
        for metric, heldout, name in SENTENCE_TASKS:
            accuracy = result["metrics"].get(metric)
            examples = result.get("heldout_counts", {}).get(heldout, {}).get("examples", 0)
            if accuracy is None or not examples:
                continue
            correct = round(accuracy * examples)
            rows.append(f"| {row_label(result)} | {name} | {correct:,} / {examples:,} | "
                        f"{100 * accuracy:.1f} | {binomial_p_value(correct, examples):.2g} |")
    if not rows:
        return ""
    return "\n".join(["| trained with | held-out task | correct / examples | accuracy % | "
                      "p (binomial, two-sided, vs 50%) |", "|---|---|---:|---:|---:|", *rows])


def plateau_markdown(results: list[dict[str, Any]],
                     plateaus: dict[str, dict[str, Any] | None]) -> str:
    """Each variant's held-out MLM accuracy against the unigram plateau of the same
    predictions (`above_unigram_plateau`; empty when no variant has its outcomes)."""
    rows = []
    for result in results:
        found = plateaus.get(result["name"])
        if found is None:
            continue
        rows.append(f"| {row_label(result)} | {100 * found['accuracy']:.1f} | "
                    f"{100 * found['plateau']:.1f} (id {found['token']}) | "
                    f"{points_interval(found['difference'], found['low'], found['high'])} | "
                    f"{'yes' if found['above'] else '**no**'} |")
    if not rows:
        return ""
    return "\n".join([
        "A model that ignores its input can at best always predict the most frequent masked "
        "target of the held-out set: the unigram plateau. Each variant's held-out MLM "
        "accuracy against it, paired over the same predictions (difference in points, 95% "
        "interval):", "",
        "| trained with | MLM acc. % | plateau % (target) | difference | above the plateau |",
        "|---|---:|---:|---|---|", *rows])


def trend_markdown(results: list[dict[str, Any]]) -> str:
    """The held-out accuracies at every checkpoint each variant kept (empty without any)."""
    rows = [f"| {row_label(result)} | {point['step']:,} | "
            + " | ".join(_format(metric, point.get(metric)) for metric in TREND_METRICS) + " |"
            for result in results for point in result.get("trend", ())]
    if not rows:
        return ""
    return "\n".join(["| trained with | step | " + " | ".join(
        METRICS[metric] for metric in TREND_METRICS) + " |", "|---|---:|---:|---:|---:|",
        *rows])
