"""An experiment's report: `results.json`, `results.md` (the paper's table with our numbers
beside its figures) and the plots, made from the finished variants' `result.json` files.

Parameter counts come from built models: the trained model of each variant at the run's
scale, and the variant's model at the paper's sizes built without allocating its weights
(`albert_tf.models.parameters.count_parameters`), so the paper's count can be checked in the same
row.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import time
from typing import Any, Mapping, Sequence

from albert_experiments.plots import TREND_METRICS, plot_losses, plot_metrics, plot_trend
from albert_experiments.records import RECORDS_DIR
from albert_experiments.result_store import read_result
from albert_experiments.spec import (
    METRICS,
    PERCENT_METRICS,
    ExperimentError,
    ExperimentSpec,
    row_name,
)
from albert_experiments.statistics.downstream_average import (
    DOWNSTREAM_AVERAGE,
    as_fraction,
    downstream_average,
)
from albert_experiments.statistics.heldout_outcomes import above_unigram_plateau, load_outcomes
from albert_experiments.statistics.intervals import binomial_p_value
from albert_experiments.statistics.task_differences import (
    task_differences,
    task_differences_markdown,
)
from albert_experiments.statistics.verdicts import (
    Claim,
    judge,
    verdict_record,
    verdicts_markdown,
)
from albert_tf.comparison.gain import points_interval
from albert_tf.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPES, SUPERSEDED_RECIPES
from albert_tf.config.pretraining import model_config_from_mapping
from albert_tf.io.files import atomic_write_bytes
from albert_tf.models.parameters import count_parameters

RANDOM_START = "random_start"  # the folder of the downstream reference row in the work dir
RESULTS_JSON = "results.json"
RESULTS_MARKDOWN = "results.md"
# Written by hand after a run (what the verdicts mean, what the scale cannot show and what
# would): appended to results.md every time the report is written.
NOTES_MARKDOWN = "notes.md"


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


def paper_scale_parameters(spec: ExperimentSpec, variant_name: str) -> int | None:
    model = spec.paper_models.get(variant_name)
    if model is None:
        return None
    return count_parameters(model_config_from_mapping(model, f"{spec.source} (paper scale)")
                            ).total


def load_results(spec: ExperimentSpec, work_dir: str) -> list[dict[str, Any]]:
    """The finished variants' results, in the file's order (unfinished ones left out), with
    the downstream average over the scale's tasks among their metrics."""
    results = []
    for variant in spec.variants:
        result = read_result(os.path.join(work_dir, variant.name))
        if result is not None:
            if spec.downstream:
                result["metrics"][DOWNSTREAM_AVERAGE] = downstream_average(
                    result, [task.name for task in spec.downstream])
            results.append(result)
    return results


def load_random_start(spec: ExperimentSpec, work_dir: str) -> dict[str, Any] | None:
    """The random start's downstream scores (the reference row), with their average, or
    None when it has not run."""
    result = read_result(os.path.join(work_dir, RANDOM_START))
    if not spec.downstream or result is None:
        return None
    result["metrics"][DOWNSTREAM_AVERAGE] = downstream_average(
        result, [task.name for task in spec.downstream])
    return result


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


def stuck_markdown(rows: Sequence[dict[str, Any]], task_names: Sequence[str]) -> str:
    """The fine-tunes stuck at the constant answer, a line per row and task that has any;
    then which small-model recipe made the downstream columns when it is not the one in use.
    Empty when there is nothing to say."""
    lines, recipes, stuck_runs, total = [], set(), 0, 0
    for result in rows:
        for name in task_names:
            entry = result.get("downstream", {}).get(name, {})
            recipes.add(entry.get("settings", {}).get("recipe"))
            seeds = entry.get("seeds", {})
            stuck = sorted((seed for seed, run in seeds.items() if run.get("stuck")), key=int)
            total += len(seeds)
            stuck_runs += len(stuck)
            if stuck:
                lines.append(f"- {row_label(result)}, {name}: seed{'s' * (len(stuck) > 1)} "
                             f"{', '.join(stuck)} of {len(seeds)}")
    old = sorted(recipe for recipe in recipes
                 if recipe in SMALL_MODEL_RECIPES and recipe != SMALL_MODEL)
    text = []
    if lines:
        text += [f"{stuck_runs} of the {total} fine-tunes are stuck: their best dev score is "
                 f"within a point of one answer for every example (the majority class).", "",
                 *lines]
    elif old:  # the section is there for the recipe: say that nothing is stuck first
        text.append(f"None of the {total} fine-tunes is stuck.")
    if old:
        text += ([""] if text else []) + [
            f"The downstream columns were made with the earlier fine-tuning recipe "
            f"`{recipe}` ({SUPERSEDED_RECIPES[recipe]}); the recipe in use is "
            f"`{SMALL_MODEL}`." for recipe in old]
    return "\n".join(text)


def data_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Whether the rows were made from the same data (`ExperimentData.provenance`, recorded
    since 2026-12): one line when they were, else which rows were made from which build and
    what differs (package versions, the tokenizer); rows made before the record was kept are
    named. Empty when no row has a record."""
    builds: list[tuple[dict[str, Any], list[str]]] = []
    unrecorded = []
    for result in rows:
        data = result.get("data")
        if data is None:
            unrecorded.append(row_label(result))
            continue
        for build, labels in builds:
            if _same_data(build, data):
                labels.append(row_label(result))
                break
        else:
            builds.append((data, [row_label(result)]))
    if not builds:
        return ""
    corpus = next((build["corpus"] for build, _ in builds if build.get("corpus")), {})
    parts = ", ".join(f"{name} ({len(found)} part{'s' * (len(found) != 1)})"
                      for name, found in corpus.items())
    lines = []
    if len(builds) == 1:
        lines.append(f"Every row with a record was made from the same data: "
                      f"{parts + ', ' if parts else ''}tokenizer "
                      f"{builds[0][0]['tokenizer']} (the packages' versions and the files' "
                      f"digests are in results.json).")
    else:
        lines.append(f"The rows were made from {len(builds)} builds of the data (the table "
                     f"ran on machines with other package versions):")
        for number, (build, labels) in enumerate(builds, 1):
            lines.append(f"- build {number}: {', '.join(labels)}; tokenizer "
                         f"{build['tokenizer']}")
        lines.append(f"- they differ in: {', '.join(_data_differences(builds))}")
    if unrecorded:
        note = (f"Not recorded for {', '.join(unrecorded)} (made before each run kept its "
                f"data's record).")
        if len(builds) == 1:
            lines[0] += " " + note
        else:
            lines += ["", note]
    return "\n".join(lines)


def _same_data(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Two records of the same build: the same tokenizer, and the same corpus where both
    have one (a random start's record has only the tokenizer)."""
    return one["tokenizer"] == other["tokenizer"] and (
        "corpus" not in one or "corpus" not in other or one["corpus"] == other["corpus"])


def _data_differences(builds: Sequence[tuple[dict[str, Any], list[str]]]) -> list[str]:
    """What differs between the builds: `part (version / version)` per corpus part, and the
    tokenizer."""
    found = []
    corpora = [build["corpus"] for build, _ in builds if "corpus" in build]
    for source in sorted({name for corpus in corpora for name in corpus}):
        for part in sorted({name for corpus in corpora for name in corpus.get(source, {})}):
            values = [corpus.get(source, {}).get(part, "absent") for corpus in corpora]
            if len(set(values)) > 1:
                found.append(f"{part} ({' / '.join(values)})")
    if len({build["tokenizer"] for build, _ in builds}) > 1:
        found.append("the tokenizer")
    return found


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
            "`albert_experiments/statistics/verdicts.py` for the rule).", "",
            verdicts_markdown(parts.verdicts, parts.of_paper)]


def claim_differences(claims: Sequence[Claim], by_name: Mapping[str, dict[str, Any]],
                      task_names: Sequence[str]) -> list[dict[str, Any]]:
    """Each pair of variants a downstream claim compares (once, in the claims' order, when
    both sides finished; `by_name` holds the finished variants' results): `first`, `second`
    and `differences`, the first's scores minus the second's task by task
    (`task_differences`)."""
    pairs = dict.fromkeys((claim.first, claim.second) for claim in claims
                          if claim.metric == DOWNSTREAM_AVERAGE)
    found = [{"first": first, "second": second,
              "differences": task_differences(by_name[first], by_name[second], task_names)}
             for first, second in pairs if first in by_name and second in by_name]
    return [pair for pair in found if pair["differences"]]


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


def written_report(results_dir: str) -> dict[str, Any]:
    """The `results.json` in `results_dir` as written before, or {} when there is none."""
    path = os.path.join(results_dir, RESULTS_JSON)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_no_row_is_lost(spec: ExperimentSpec, folders, remade: Sequence[str] = ()) -> None:
    """Raises ExperimentError when the report in `folders.results_dir` shows rows (variants of
    `spec`, or the random start) that the work folder does not hold and that will not be
    `remade`: a report written now would drop them. Call it after `sync_records`, which
    brings back the rows kept as records."""
    shown = written_report(folders.results_dir)
    in_spec = {variant.name for variant in spec.variants}
    names = [variant["name"] for variant in shown.get("variants", [])
             if variant["name"] in in_spec]
    if shown.get("random_start"):
        names.append(RANDOM_START)
    lost = [name for name in names if name not in remade
            and read_result(os.path.join(folders.work_dir, name)) is None]
    if lost:
        raise ExperimentError(
            f"{os.path.join(folders.results_dir, RESULTS_JSON)} shows {', '.join(lost)}, "
            f"which neither {folders.work_dir} nor the "
            f"records in {os.path.join(folders.results_dir, RECORDS_DIR)} hold (as happens to runs "
            f"made before records were kept once their folders are gone): a report written now "
            f"would drop those rows, so nothing was written. Put the run folders back, run "
            f"the variants again, or give another --results_dir")


def table_command(command: str, spec: ExperimentSpec, finished: Sequence[str]) -> str:
    """`command`, an `albert-experiment run` line, with its `--variants` naming the finished
    variants: the line that makes the table as the report shows it, however many commands
    made its rows (it skips finished variants, so it trains nothing more). Without
    `--variants` when every variant the scale keeps is finished; unchanged when none is."""
    done = set(finished)
    names = [variant.name for variant in spec.variants if variant.name in done]
    if not command or not names:
        return command
    kept, in_variants = [], False
    for word in shlex.split(command):
        if word == "--variants" or word.startswith("--variants="):
            in_variants = word == "--variants"
            continue
        if in_variants and not word.startswith("-"):
            continue
        in_variants = False
        kept.append(word)
    if names != [variant.name for variant in spec.variants if variant.name not in spec.cut]:
        kept += ["--variants", *names]
    return " ".join(shlex.quote(word) for word in kept)


def write_report(spec: ExperimentSpec, folders, command: str = "") -> dict[str, Any]:
    """Writes results.json, results.md and the plots to `folders.results_dir`; without a
    `command` the one of the report there before is kept. Its `--variants` name the finished
    variants (`table_command`). A report rewritten from the same runs keeps its `written`
    time, so its files do not change."""
    results = load_results(spec, folders.work_dir)
    previous = written_report(folders.results_dir)
    command = command or previous.get("command", "")  # a rewritten report keeps its command
    command = table_command(command, spec, [result["name"] for result in results])
    paper_parameters = {variant.name: paper_scale_parameters(spec, variant.name)
                        for variant in spec.variants}
    reference = load_random_start(spec, folders.work_dir)
    by_name = {result["name"]: result for result in results}
    outcomes = {name: load_outcomes(os.path.join(folders.work_dir, name)) for name in by_name}
    plateaus = {name: above_unigram_plateau(found) for name, found in outcomes.items()}
    task_names = [task.name for task in spec.downstream]
    verdicts = [judge(claim, by_name, task_names, outcomes) for claim in spec.claims]
    gains = ({result["name"]: task_differences(result, reference, task_names)
              for result in results} if reference is not None else {})
    by_task = claim_differences(spec.claims, by_name, task_names)
    os.makedirs(folders.results_dir, exist_ok=True)
    plots = {}
    if results:
        plots["losses"] = plot_losses(spec, results, os.path.join(folders.results_dir,
                                                                  "losses.png"))
        plots["metrics"] = plot_metrics(spec, results, os.path.join(folders.results_dir,
                                                                    "metrics.png"))
    if any(result.get("trend") for result in results):
        plots["trend"] = plot_trend(spec, results, os.path.join(folders.results_dir,
                                                                "trend.png"))
    report = {
        "experiment": spec.name, "title": spec.title, "scale": spec.scale,
        "file": spec.source, "command": command, "paper_table": spec.paper_table,
        "paper_setting": spec.paper_setting,
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "variants": [{**{key: value for key, value in result.items() if key != "curves"},
                      "paper": spec.variant(result["name"]).paper,
                      "paper_scale_parameters": paper_parameters[result["name"]]}
                     for result in results],
        "not_run": [v.name for v in spec.variants
                    if v.name not in {result["name"] for result in results}],
        "cut": spec.cut,
        "plots": {name: os.path.basename(path) for name, path in plots.items()},
        "verdicts": [verdict_record(verdict) for verdict in verdicts],
        "unigram_plateau": {name: found for name, found in plateaus.items() if found},
        "random_start": reference,
        "pretraining_gains": gains,
        "claim_task_differences": by_task,
    }
    if json.loads(json.dumps({**report, "written": previous.get("written")})) == previous:
        report["written"] = previous["written"]  # the same report again: its file unchanged
    atomic_write_bytes(os.path.join(folders.results_dir, RESULTS_JSON),
                       json.dumps(report, indent=1).encode())
    parts = ReportParts(spec, results, reference, paper_parameters, command, plots, gains,
                        by_task, plateaus, verdicts,
                        os.path.join(folders.results_dir, NOTES_MARKDOWN))
    lines = [line for section in SECTIONS for line in section(parts)]
    atomic_write_bytes(os.path.join(folders.results_dir, RESULTS_MARKDOWN),
                       ("\n".join(lines) + "\n").encode())
    print(f"albert-experiment: wrote {RESULTS_MARKDOWN}, {RESULTS_JSON} and "
          f"{len(plots)} plots to {folders.results_dir}")
    return report
