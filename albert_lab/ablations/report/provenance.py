"""What the report says of how its rows were made: which fine-tunes are stuck at the majority
class and which recipe made the downstream columns, and whether every row was made from the
same build of the data.
"""

from __future__ import annotations

from typing import Any, Sequence

from albert_lab.ablations.report.tables import row_label
from albert_lab.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPES, SUPERSEDED_RECIPES


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
