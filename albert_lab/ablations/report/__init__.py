"""An experiment's report: `results.json`, `results.md` (the paper's table with our numbers
beside its figures) and the plots, made from the finished variants' `result.json` files.

Parameter counts come from built models: the trained model of each variant at the run's
scale, and the variant's model at the paper's sizes built without allocating its weights
(`albert_tf.models.parameters.count_parameters`), so the paper's count can be checked in the same
row.

- `tables`: the Markdown tables (the paper's table with our columns, sentence accuracies
  against chance, held-out MLM against the unigram plateau, the checkpoint trend).
- `provenance`: stuck fine-tunes, the recipe behind the downstream columns, the data build.
- `sections`: `results.md`'s sections in order, each a function of `ReportParts`.
- `writer`: `write_report` and the checks around it.
"""

from albert_lab.ablations.report.provenance import data_markdown, stuck_markdown
from albert_lab.ablations.report.sections import SECTIONS, ReportParts
from albert_lab.ablations.report.tables import (
    chance_markdown,
    markdown_table,
    millions,
    plateau_markdown,
    row_label,
    trend_markdown,
)
from albert_lab.ablations.report.writer import (
    NOTES_MARKDOWN,
    RANDOM_START,
    RESULTS_JSON,
    RESULTS_MARKDOWN,
    check_no_row_is_lost,
    claim_differences,
    load_random_start,
    load_results,
    paper_scale_parameters,
    table_command,
    write_report,
    written_report,
)

__all__ = [
    "NOTES_MARKDOWN", "RANDOM_START", "RESULTS_JSON", "RESULTS_MARKDOWN", "SECTIONS",
    "ReportParts", "chance_markdown", "check_no_row_is_lost", "claim_differences",
    "data_markdown", "load_random_start", "load_results", "markdown_table", "millions",
    "paper_scale_parameters", "plateau_markdown", "row_label", "stuck_markdown",
    "table_command", "trend_markdown", "write_report", "written_report",
]
