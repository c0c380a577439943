"""PNG plots of an experiment: loss curves per variant, bar charts of the metrics.

matplotlib runs with its file-only backend (no display needed), and each figure is written
to a temporary name and renamed.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot  # noqa: E402  (the backend is chosen first)

from albert_lab.ablations.table_spec import (  # noqa: E402
    METRICS,
    PAPER_KEYS,
    PERCENT_METRICS,
    ExperimentSpec,
)
from albert_tf.io.files import atomic_output  # noqa: E402

CHANCE = {"nsp_accuracy": 0.5, "sop_accuracy": 0.5}


def save_figure(figure, path: str) -> str:
    """Writes `figure` as a PNG to `path` (atomically) and closes it."""
    try:
        with atomic_output(path) as file:
            figure.savefig(file, format="png", dpi=110, bbox_inches="tight")
    finally:
        pyplot.close(figure)
    return path


def plot_losses(spec: ExperimentSpec, results: list[dict[str, Any]], path: str) -> str:
    """Training loss (lines) and held-out loss (dots) against the step, one colour per
    variant."""
    figure, axes = pyplot.subplots(figsize=(7.5, 4.5))
    for index, result in enumerate(results):
        color = f"C{index % 10}"
        train = result["curves"]["train_loss"]
        if train:
            steps, losses = zip(*train)
            axes.plot(steps, losses, color=color, linewidth=1.2,
                      label=spec.variant(result["name"]).row_label)
        held_out = result["curves"]["eval_loss"]
        if held_out:
            steps, losses = zip(*held_out)
            axes.plot(steps, losses, "o", color=color, markersize=4)
    axes.set_xlabel("step")
    axes.set_ylabel("loss (MLM + sentence)")
    axes.set_title(f"{spec.title or spec.name}\n{spec.scale} scale: training loss "
                   f"(lines), held-out loss (dots)", fontsize=9)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def plot_metrics(spec: ExperimentSpec, results: list[dict[str, Any]], path: str) -> str:
    """One panel per reported metric that some variant measured: a bar per variant, the
    paper's figure beside it (hatched) where the paper reports the same metric, chance as a
    dashed line."""
    metrics = [metric for metric in spec.shown_metrics
               if any(result["metrics"].get(metric) is not None for result in results)
               ] or list(spec.shown_metrics)  # nothing measured: the panels say n/a
    figure, panels = pyplot.subplots(1, len(metrics), figsize=(3.2 * len(metrics) + 1, 3.8),
                                     squeeze=False)
    labels = [spec.variant(result["name"]).row_label for result in results]
    for panel, metric in zip(panels[0], metrics):
        scale = 100.0 if metric in PERCENT_METRICS else 1.0
        ours = [result["metrics"].get(metric) for result in results]
        positions = range(len(results))
        paper_key = PAPER_KEYS.get(metric)
        paper = [spec.variant(result["name"]).paper.get(paper_key) if paper_key else None
                 for result in results]
        width = 0.4 if any(value is not None for value in paper) else 0.7
        panel.bar([p - (width / 2 if width < 0.5 else 0) for p in positions],
                  [scale * value if value is not None else 0 for value in ours], width,
                  color=[f"C{i % 10}" for i in positions], label=f"ours ({spec.scale})")
        if width < 0.5:
            reported = [(p, value) for p, value in zip(positions, paper) if value is not None]
            panel.bar([p + width / 2 for p, _ in reported], [value for _, value in reported],
                      width, color="white", edgecolor="gray", hatch="//", label="paper")
            panel.legend(fontsize=7)
        if metric in CHANCE:
            panel.axhline(100 * CHANCE[metric], color="gray", linestyle="--", linewidth=1)
        for position, value in zip(positions, ours):
            if value is None:
                panel.text(position, 0, "n/a", ha="center", va="bottom", fontsize=7)
        panel.set_xticks(list(positions))
        panel.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        panel.set_title(METRICS[metric], fontsize=9)
        panel.grid(axis="y", alpha=0.3)
    figure.suptitle(f"{spec.title or spec.name} ({spec.scale} scale)", fontsize=9)
    figure.tight_layout()
    return save_figure(figure, path)


TREND_METRICS = ("mlm_accuracy", "nsp_accuracy", "sop_accuracy")


def plot_trend(spec: ExperimentSpec, results: list[dict[str, Any]], path: str) -> str:
    """One panel per held-out accuracy: each variant's score at every checkpoint it kept,
    chance as a dashed line."""
    figure, panels = pyplot.subplots(1, len(TREND_METRICS), figsize=(11, 3.6), squeeze=False)
    for panel, metric in zip(panels[0], TREND_METRICS):
        for index, result in enumerate(results):
            points = [(point["step"], point[metric]) for point in result.get("trend", ())
                      if point.get(metric) is not None]
            if points:
                steps, values = zip(*points)
                panel.plot(steps, [100 * value for value in values], "o-", markersize=3,
                           color=f"C{index % 10}",
                           label=spec.variant(result["name"]).row_label)
        if metric in CHANCE:
            panel.axhline(100 * CHANCE[metric], color="gray", linestyle="--", linewidth=1)
        panel.set_xlabel("step")
        panel.set_title(f"held-out {METRICS[metric]}", fontsize=9)
        panel.grid(alpha=0.3)
    panels[0][0].legend(fontsize=7)
    figure.suptitle(f"{spec.title or spec.name} ({spec.scale} scale): accuracy at each kept "
                    f"checkpoint", fontsize=9)
    figure.tight_layout()
    return save_figure(figure, path)
