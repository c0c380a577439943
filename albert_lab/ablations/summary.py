"""`albert-experiment summary`: one page over every table's report at one scale.

    albert-experiment summary --scale mini   # writes experiments/results/summary-mini.md

Per table (from `experiments/table*.yaml` and its `results.json`): how many of the file's
variants have run (those the scale cuts counted and named: `6 of 8 (2 cut)`), the range of
held-out MLM accuracy and of the downstream average over them, how many of them are above
the unigram plateau on held-out MLM, how many beat the table's random start on the
downstream average (the interval paired by seed above 0) and by how much, and how many of
the paper's claims are shown, not shown, contradicted or not run yet; then every
claim with our difference and verdict. Reads only the reports, so it runs in a second.

    albert-experiment summary --scale mini --readme docs/results.md

also rewrites the page's block of headline rows for the scale (between the lines
`<!-- albert-experiment summary --scale mini: begin -->` and `<!-- ...: end -->`): per table
its link, the variants run, the stuck fine-tunes and the verdicts of the claims its file
marks `headline: true`. Each table's figures are so written once, in its report, and the
results index (docs/results.md) quotes them through this block (a test checks the committed
page against it).

    albert-experiment summary --scale small --against mini

adds a section that lays the two scales side by side: every claim measured at both, with
its difference and verdict at each, and whether the verdict moved toward the paper's
(contradicted -> not shown -> shown), away from it, or stayed; with `--readme` it fills the
block `<!-- albert-experiment summary --scale small --against mini: begin -->` ... `end -->`
with each table's row at the small scale and its mini row one line below.
"""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Any, Sequence

from albert_lab.ablations.report import RESULTS_JSON
from albert_lab.ablations.statistics.downstream_average import DOWNSTREAM_AVERAGE
from albert_lab.ablations.table_spec import (
    ExperimentError,
    load_experiment,
    not_run_reason,
    table_name,
)
from albert_lab.comparison.gain import points_interval
from albert_lab.result_files import markdown_table, write_page
from albert_tf.config.schema import load_yaml_mapping

OUTCOMES = ("shown", "not shown", "contradicted", "not run")
# How far a verdict is from agreeing with the paper (`moved`: a higher rank is closer).
AGREEMENT = {"contradicted": 0, "not shown": 1, "shown": 2}
MOVEMENTS = ("toward the paper", "away from it", "stayed", "not comparable")


def table_number(path: str) -> int:
    """4 for `table4_embedding_size` or `.../table4_embedding_size.yaml`: the paper's order."""
    match = re.match(r"table(\d+)", os.path.basename(path))
    return int(match.group(1)) if match else 10**6


def table_files(experiments_dir: str) -> list[str]:
    """The table files in the paper's order (table4 ... table12)."""
    return sorted(glob.glob(os.path.join(experiments_dir, "table*.yaml")), key=table_number)


def _range(values: Sequence[float | None]) -> str:
    present = [100 * value for value in values if value is not None]
    if not present:
        return "–"
    low, high = min(present), max(present)
    return f"{low:.1f}" if round(low, 1) == round(high, 1) else f"{low:.1f}-{high:.1f}"


def _difference(verdict: dict[str, Any]) -> str:
    if verdict["difference"] is None:
        return "–"
    if verdict["low"] == verdict["high"]:
        return f"{100 * verdict['difference']:+.1f}"
    return points_interval(verdict["difference"], verdict["low"], verdict["high"])


def _beats_random_start(gains: dict[str, dict[str, Any]]) -> str:
    """`k of n (gain low to high)` over the variants with a downstream average gain."""
    averages = [found[DOWNSTREAM_AVERAGE] for found in gains.values()
                if DOWNSTREAM_AVERAGE in found]
    if not averages:
        return "–"
    ahead = sum(found["low"] > 0 and found["seeds"] > 1 for found in averages)
    values = sorted(100 * found["gain"] for found in averages)
    spread = (f"{values[0]:+.1f}" if len(values) == 1 else
              f"{values[0]:+.1f} to {values[-1]:+.1f}")
    return f"{ahead} of {len(averages)} ({spread})"


def report_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """A table report's variant rows, then its random-start row when it has one."""
    return [*report.get("variants", []),
            *([report["random_start"]] if report.get("random_start") else [])]


def _stuck(report: dict[str, Any] | None) -> tuple[int, int]:
    """(stuck, fine-tunes): the report's fine-tunes and those stuck at the constant answer,
    random start included."""
    rows = report_rows(report) if report else []
    runs = [run for row in rows for entry in row.get("downstream", {}).values()
            for run in entry.get("seeds", {}).values()]
    return sum(bool(run.get("stuck")) for run in runs), len(runs)


def _variants_cell(table: dict[str, Any]) -> str:
    """`k of n` over every variant of the table file, cut ones included: `6 of 8 (2 cut)`."""
    cut = f" ({table['cut']} cut)" if table["cut"] else ""
    return f"{table['variants_run']} of {table['variants']}{cut}"


def _stuck_cell(table: dict[str, Any]) -> str:
    """`k of n`, or `–` for a table without fine-tunes."""
    stuck, runs = table["stuck"]
    return f"{stuck} of {runs}" if runs else "–"


def summarize(experiments_dir: str, results_root: str, scale: str) -> dict[str, Any]:
    """Per table: the spec's name and title, the report (None if not written) and counts."""
    tables, elsewhere = [], []
    for path in table_files(experiments_dir):
        document = load_yaml_mapping(path)
        reason = not_run_reason(document, scale, path)
        if reason is not None:
            elsewhere.append({"name": table_name(document, path),
                              "file": os.path.basename(path), "reason": reason})
            continue
        spec = load_experiment(path, scale)
        report_path = os.path.join(results_root, spec.name, scale, RESULTS_JSON)
        report = None
        if os.path.exists(report_path):
            with open(report_path, encoding="utf-8") as f:
                report = json.load(f)
        variants = report["variants"] if report else []
        verdicts = report.get("verdicts", []) if report else []
        plateaus = report.get("unigram_plateau", {}) if report else {}
        tables.append({
            "name": spec.name, "title": spec.title, "paper_table": spec.paper_table,
            "results": os.path.relpath(os.path.dirname(report_path), results_root)
            if report else None,
            "variants_run": len(variants), "variants": len(spec.variants),
            "cut": len(spec.cut),
            "mlm": _range([v["metrics"].get("mlm_accuracy") for v in variants]),
            "downstream": _range([v["metrics"].get(DOWNSTREAM_AVERAGE) for v in variants]),
            "above_plateau": (f"{sum(found['above'] for found in plateaus.values())} of "
                              f"{len(plateaus)}" if plateaus else "–"),
            "stuck": _stuck(report),
            "beats_random_start": _beats_random_start(
                report.get("pretraining_gains", {}) if report else {}),
            "outcomes": {outcome: sum(v["outcome"] == outcome for v in verdicts)
                         for outcome in OUTCOMES},
            "claims": len(spec.claims), "verdicts": verdicts,
            "headline": _headline_verdicts(spec.claims, verdicts)})
    if not tables:
        raise ExperimentError(f"{experiments_dir}: no scale {scale!r} in any table file")
    return {"scale": scale, "tables": tables, "not_at_this_scale": elsewhere}


def _headline_verdicts(claims, verdicts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report's verdicts on the claims marked `headline` (the first claim's when none
    is), in the table file's order."""
    marked = [claim for claim in claims if claim.headline]
    if not marked and claims:
        marked = [claim for claim in claims if claim.text == claims[0].text]
    keys = [(claim.text, claim.metric) for claim in marked]
    found = {(verdict["text"], verdict["metric"]): verdict for verdict in verdicts}
    return [found[key] for key in keys if key in found]


def _table_row(table: dict[str, Any]) -> list[str]:
    """A table's cells in the scale's page (`scale_markdown`)."""
    counts = table["outcomes"]
    if not table["verdicts"]:  # no report yet: every claim is still to run
        counts = {**counts, "not run": table["claims"]}
    title = table["title"] or table["name"]
    link = f"[{title}]({table['results']}/results.md)" if table["results"] else title
    return [link, _variants_cell(table), table["mlm"], table["above_plateau"],
            table["downstream"], _stuck_cell(table), table["beats_random_start"],
            " / ".join(str(counts[outcome]) for outcome in OUTCOMES)]


def _metric_name(verdict: dict[str, Any]) -> str:
    return verdict["metric"] + (f" / {verdict['second_metric']}"
                                if verdict.get("second_metric") else "")


def scale_markdown(summary: dict[str, Any]) -> str:
    """The page over every table at one scale (`summarize`): a row per table, the tables
    not run at the scale, then every claim with our difference and verdict."""
    lines = [f"# The ablation tables at the {summary['scale']} scale", "",
             "Made by `albert-experiment summary` from each table's `results.json`; the "
             "tables' own `results.md` have the rows and the paper's figures.", "",
             markdown_table(
                 "table:l|variants run:r|held-out MLM %:l|above the unigram plateau:l|"
                 "downstream avg.:l|fine-tunes stuck:l|ahead of a random start (gain in "
                 "points):l|claims: shown / not shown / contradicted / not run:l",
                 [_table_row(table) for table in summary["tables"]])]
    if summary.get("not_at_this_scale"):
        lines += ["", f"Not run at the {summary['scale']} scale:", ""]
        lines += [f"- `{table['file']}`: {table['reason']}"
                  for table in summary["not_at_this_scale"]]
    lines += ["", "## Every claim", "", markdown_table(
        "table:l|the paper's claim:l|metric:l|ours: difference [95%]:l|verdict:l",
        [[table["paper_table"].split(" ")[0], verdict["text"], _metric_name(verdict),
          _difference(verdict), verdict["outcome"]]
         for table in summary["tables"] for verdict in table["verdicts"]])]
    return "\n".join(lines) + "\n"


def _claim_key(verdict: dict[str, Any]) -> tuple[str, str, str]:
    return verdict["text"], verdict["metric"], verdict.get("second_metric", "")


def moved(before: str, after: str) -> str:
    """How a claim's verdict changed from one scale to the next: one of MOVEMENTS
    (`not comparable` when either scale has not run it)."""
    if before not in AGREEMENT or after not in AGREEMENT:
        return "not comparable"
    change = AGREEMENT[after] - AGREEMENT[before]
    return "toward the paper" if change > 0 else "away from it" if change < 0 else "stayed"


def compare_scales(summary: dict[str, Any], against: dict[str, Any]) -> list[dict[str, Any]]:
    """Every claim-measure of the tables at either scale, in the paper's order: rows of
    table, its verdict at `summary`'s scale and at `against`'s (None where that scale has
    no report of it) and the movement from `against` to `summary`."""
    verdicts: dict[tuple, dict[str, Any]] = {}
    for side, found in (("verdict", summary), ("against", against)):
        for table in found["tables"]:
            for verdict in table["verdicts"]:
                key = (table_number(table["name"]), table["name"], *_claim_key(verdict))
                row = verdicts.setdefault(key, {
                    "table": table["paper_table"].split(" ")[0], "verdict": None,
                    "against": None})
                row[side] = verdict
    rows = [verdicts[key] for key in sorted(verdicts, key=lambda key: key[0])]
    for row in rows:
        row["movement"] = moved(*((row[side] or {}).get("outcome", "not run")
                                  for side in ("against", "verdict")))
    return rows
def comparison_markdown(summary: dict[str, Any], against: dict[str, Any]) -> str:
    """The section `--against` adds: counts of each movement, then every claim."""
    rows = compare_scales(summary, against)
    scale, other = summary["scale"], against["scale"]
    counts = {movement: sum(row["movement"] == movement for row in rows)
              for movement in MOVEMENTS}
    lines = [f"## Against the {other} scale", "",
             f"Of {len(rows)} claim-measures, the verdict moved from the {other} to the "
             f"{scale} scale toward the paper's in {counts['toward the paper']}, away from it "
             f"in {counts['away from it']} and stayed in {counts['stayed']}; "
             f"{counts['not comparable']} are not run at one of the two scales.", "",
             markdown_table(f"table:l|the paper's claim:l|metric:l|{other}: difference "
                            f"[95%], verdict:l|{scale}: difference [95%], verdict:l|moved:l",
                            [_comparison_row(row) for row in rows])]
    return "\n".join(lines) + "\n"


def _comparison_row(row: dict[str, Any]) -> list[str]:
    """A claim-measure's cells in the section that compares two scales."""
    verdict, before = row["verdict"], row["against"]
    either = verdict or before
    return [row["table"], either["text"], _metric_name(either),
            *(f"{_difference(found)} {found['outcome']}" if found else "not run"
              for found in (before, verdict)), row["movement"]]


# How a headline names a metric.
SHORT_METRICS = {DOWNSTREAM_AVERAGE: "downstream", "mlm_accuracy": "MLM",
                 "sop_accuracy": "SOP", "nsp_accuracy": "NSP", "mlm_loss": "MLM loss"}


def _headline(verdicts: Sequence[dict[str, Any]]) -> str:
    """`claim: metric ours [95%] verdict, metric ...; next claim: ...`."""
    claims: dict[str, list[str]] = {}
    for verdict in verdicts:
        metric = SHORT_METRICS.get(verdict["metric"], verdict["metric"])
        if verdict.get("second_metric"):
            metric += " / " + SHORT_METRICS.get(verdict["second_metric"],
                                                verdict["second_metric"])
        claims.setdefault(verdict["text"], []).append(
            f"{metric} {_difference(verdict)} {verdict['outcome']}")
    return "; ".join(f"{text}: {', '.join(found)}" for text, found in claims.items()) or "–"


def _readme_row(table: dict[str, Any], label: str) -> list[str]:
    """label, variants run, stuck, headline: one table at one scale."""
    return [label, _variants_cell(table), _stuck_cell(table), _headline(table["headline"])]


def _linked(text: str, table: dict[str, Any], link_root: str) -> str:
    """`text` linked to the table's results.md (plain before the table has a report)."""
    if not table["results"]:
        return text
    return f"[{text}]({link_root}/{table['results']}/results.md)"


def _stuck_line(summary: dict[str, Any]) -> str:
    stuck = sum(table["stuck"][0] for table in summary["tables"])
    total = sum(table["stuck"][1] for table in summary["tables"])
    return (f"Fine-tunes stuck at the majority class over the {summary['scale']} tables: "
            f"{stuck} of {total}.")


def readme_block(summary: dict[str, Any], link_root: str,
                 against: dict[str, Any] | None = None) -> str:
    """A page's headline rows at one scale, links relative to the page (`link_root`: the
    results root as seen from the page's folder). With `against` (another scale's
    summary) each table's row at `summary`'s scale has its row at the other scale one line
    below it, and a table run at only one of the two scales says so."""
    columns = ("table:l|variants run:r|fine-tunes stuck:l|headline claims: ours, difference "
               "in points [95%], verdict:l")
    if against is None:
        rows = [_readme_row(table, _linked(table["title"] or table["name"], table, link_root))
                for table in summary["tables"]]
        return "\n".join([markdown_table(columns, rows), "", _stuck_line(summary)])
    scale, other = summary["scale"], against["scale"]
    first = {table["name"]: table for table in summary["tables"]}
    second = {table["name"]: table for table in against["tables"]}
    left_out = {table["name"]: table for table in summary.get("not_at_this_scale", [])}
    rows = []
    for name in sorted({*first, *second}, key=table_number):
        title = (first.get(name) or second[name])["title"] or name
        if name in first:
            rows.append(_readme_row(first[name], _linked(title, first[name], link_root)
                                    + f" ({scale})"))
        else:
            rows.append([f"{title} ({scale})", "not at this scale", "–",
                         left_out[name]["reason"]])
        if name in second:
            rows.append(_readme_row(second[name],
                                    "↳ " + _linked(other, second[name], link_root)))
    return "\n".join([markdown_table(columns, rows), "", _stuck_line(summary),
                      _stuck_line(against)])


def readme_markers(scale: str, against: str | None = None) -> tuple[str, str]:
    """The lines that open and close a page's generated block for `scale` (compared
    with `against`, when given)."""
    command = f"albert-experiment summary --scale {scale}" + (
        f" --against {against}" if against else "")
    return f"<!-- {command}: begin -->", f"<!-- {command}: end -->"


def replace_readme_block(text: str, markers: tuple[str, str], block: str, where: str) -> str:
    """`text` with the lines between `markers` (`readme_markers`) replaced by `block`;
    `where` names the file in the error raised when the markers are missing or out of
    order."""
    begin, end = markers
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ExperimentError(f"{where}: expected a line {begin!r} and, after it, a line "
                              f"{end!r} around the generated rows")
    return text[:start + len(begin)] + "\n" + block + "\n" + text[stop:]


def write_readme_block(readme: str, experiments_dir: str, results_root: str,
                       scale: str, against: str | None = None) -> None:
    """Rewrites the page's generated rows for `scale` (and `against`, the block whose
    markers name both) (`replace_readme_block`)."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    link_root = os.path.relpath(results_root, os.path.dirname(os.path.abspath(readme)))
    block = readme_block(summarize(experiments_dir, results_root, scale),
                         link_root.replace(os.sep, "/"),
                         summarize(experiments_dir, results_root, against) if against
                         else None)
    write_page(readme, replace_readme_block(text, readme_markers(scale, against), block,
                                            readme))


def write_summary(experiments_dir: str, results_root: str, scale: str,
                  against: str | None = None) -> str:
    """Writes `<results_root>/summary-<scale>.md` and returns its text; with `against`
    (another scale), the section that compares the two (`comparison_markdown`)."""
    summary = summarize(experiments_dir, results_root, scale)
    text = scale_markdown(summary)
    if against:
        text += "\n" + comparison_markdown(summary, summarize(experiments_dir, results_root,
                                                             against))
    write_page(os.path.join(results_root, f"summary-{scale}.md"), text)
    return text
