"""Writing a table's report (`write_report`): the finished variants' results read from the work
folder, the verdicts and differences computed, and `results.json`, `results.md` and the
plots written; and the checks around it (`check_no_row_is_lost`, `table_command`).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from typing import Any, Mapping, Sequence

from albert_lab.ablations.plots import plot_losses, plot_metrics, plot_trend
from albert_lab.ablations.records import RECORDS_DIR
from albert_lab.ablations.report.sections import SECTIONS, ReportParts
from albert_lab.ablations.result_store import read_result
from albert_lab.ablations.statistics.downstream_average import (
    DOWNSTREAM_AVERAGE,
    downstream_average,
)
from albert_lab.ablations.statistics.heldout_outcomes import above_unigram_plateau, load_outcomes
from albert_lab.ablations.statistics.task_differences import (
    task_differences,
)
from albert_lab.ablations.statistics.verdicts import (
    Claim,
    judge,
    verdict_record,
)
from albert_lab.ablations.table_spec import (
    ExperimentError,
    ExperimentSpec,
)
from albert_lab.result_files import write_result
from albert_tf.config.pretraining import model_config_from_mapping
from albert_tf.models.parameters import count_parameters

RANDOM_START = "random_start"  # the folder of the downstream reference row in the work dir


RESULTS_JSON = "results.json"
RESULTS_MARKDOWN = "results.md"  # results.json's page, so named by `write_result`


# Written by hand after a run (what the verdicts mean, what the scale cannot show and what
# would): appended to results.md every time the report is written.
NOTES_MARKDOWN = "notes.md"


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
    parts = ReportParts(spec, results, reference, paper_parameters, command, plots, gains,
                        by_task, plateaus, verdicts,
                        os.path.join(folders.results_dir, NOTES_MARKDOWN))
    lines = [line for section in SECTIONS for line in section(parts)]
    # results.md is results.json's page (`write_result` writes it beside the JSON).
    write_result(os.path.join(folders.results_dir, RESULTS_JSON), report,
                 page="\n".join(lines) + "\n", indent=1, final_newline=False)
    print(f"albert-experiment: wrote {RESULTS_MARKDOWN}, {RESULTS_JSON} and "
          f"{len(plots)} plots to {folders.results_dir}")
    return report
