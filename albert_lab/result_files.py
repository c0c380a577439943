"""The one writer of the lab's result files: a record as JSON, the Markdown page made from it,
and the Markdown tables those pages are built of. The benchmarks and the ablation runner write
their results, tables and summaries through here.

Each file is written whole or not at all (under a temporary name in its folder, then renamed;
the folder made when missing; a `gs://` path works too), so a crash leaves the file as it was
before or as it is after, never half of either.

    write_result("benchmarks/results/vm.json", run, page=summary_markdown(run))
    write_page("experiments/results/summary-mini.md", text)
    markdown_table("task:l|gain:r", [["bbc-news", "+0.8"]])

JSON comes in the two forms the committed files have, so a file written again from the same
record is byte for byte the file before: the benchmarks' (`indent=2`, a final newline, the
default) and the ablation runner's (`indent=1, final_newline=False`). Text is UTF-8 and
written as is (no `\\u` escapes).
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

from albert_tf.io.files import atomic_write_bytes


def json_text(record: Any, indent: int = 2, final_newline: bool = True) -> str:
    """`record` as JSON text, `indent` spaces a level, non-ASCII characters as themselves."""
    return json.dumps(record, indent=indent, ensure_ascii=False) + ("\n" if final_newline
                                                                      else "")


def write_page(path: str | os.PathLike, text: str) -> str:
    """Writes the Markdown (or any text) `text` to `path`; returns the path."""
    path = os.fspath(path)
    atomic_write_bytes(path, text.encode("utf-8"))
    return path


def write_result(path: str | os.PathLike, record: Any, page: str | None = None, *,
                 indent: int = 2, final_newline: bool = True) -> str:
    """Writes `record` as JSON to `path` (`json_text`) and, given a `page`, that Markdown
    beside it (the same name ending in `.md`, written second); returns the JSON's path."""
    path = os.fspath(path)
    write_page(path, json_text(record, indent, final_newline))
    if page is not None:
        write_page(os.path.splitext(path)[0] + ".md", page)
    return path


def markdown_table(columns: str, rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table: `columns` is "title:l|title:r|..." (each column left or right
    aligned), each row its cells as text.

    >>> print(markdown_table("task:l|gain:r", [["bbc-news", "+0.8"]]))
    | task | gain |
    |---|---:|
    | bbc-news | +0.8 |
    """
    titles, aligns = zip(*(column.rsplit(":", 1) for column in columns.split("|")))
    if set(aligns) - {"l", "r"}:
        raise ValueError(f"markdown_table: columns {columns!r}: expected each as title:l or "
                         f"title:r")
    lines = ["| " + " | ".join(titles) + " |",
             "|" + "|".join("---:" if align == "r" else "---" for align in aligns) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)
