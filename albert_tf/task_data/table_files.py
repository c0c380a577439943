"""A user's own table files: CSV, TSV and JSON Lines (by extension), read row by row and
written back with columns added. No TensorFlow.

    .csv    comma-separated, a header row naming the columns, fields quoted as Excel and
            Python's csv module quote them (a field in double quotes may hold commas, line
            breaks and doubled quotes)
    .tsv    tab-separated with a header row, unquoted, as GLUE's files and the IANA
            text/tab-separated-values type have it: a quote is an ordinary character, and a
            field can hold neither a tab nor a line break
    .jsonl  one JSON object per line, its keys the columns

Rows stream from the file (memory holds one row), each with the line it starts on, so every
error names the file and line: a line that is not UTF-8, a row with another number of fields
than the header, a line that is not a JSON object, or one longer than `MAX_LINE_BYTES`.
Blank lines are skipped. A UTF-8 byte-order mark (as Excel writes) is ignored.

Example:
    for row in read_table("reviews.csv"):
        row.line, row.values["text"]
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from typing import Any, Iterator, NamedTuple, Sequence

from albert_tf.io.files import atomic_output, open_read
from albert_tf.io.lines import decoded_lines
from albert_tf.task_data.examples import TaskDataError

TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl"}
MAX_LINE_BYTES = 1 << 24  # 16 MiB: a longer line is an error, never read whole
_DIALECTS = {"csv": {"delimiter": ",", "strict": True},
             "tsv": {"delimiter": "\t", "quoting": csv.QUOTE_NONE}}


class TableRow(NamedTuple):
    """One row: the (1-based) line it starts on, and its values by column name (strings for
    CSV and TSV; any JSON value for JSON Lines)."""

    line: int
    values: dict[str, Any]


def table_format(path: str) -> str:
    """`csv`, `tsv` or `jsonl`, from the file's extension."""
    extension = os.path.splitext(path)[1].lower()
    if extension not in TABLE_FORMATS:
        raise TaskDataError(f"{path}: unknown table format {extension or '(no extension)'!r}; "
                            f"expected a file ending in {', '.join(TABLE_FORMATS)}")
    return TABLE_FORMATS[extension]


def table_columns(path: str) -> list[str] | None:
    """The header's column names of a CSV or TSV file (None for JSON Lines, whose rows name
    their own keys); an empty file is an error."""
    if table_format(path) == "jsonl":
        return None
    with contextlib.closing(_TableReader(path)) as reader:
        return reader.header()


def read_table(path: str) -> Iterator[TableRow]:
    """The rows of `path`, in order (see the module docstring)."""
    reader = _TableReader(path)
    try:
        yield from reader.rows()
    finally:
        reader.close()


class _TableReader:
    def __init__(self, path: str):
        self.path, self.format = path, table_format(path)
        try:
            self.stream = open_read(path)
        except FileNotFoundError:
            raise TaskDataError(f"{path}: no such file") from None
        self.line_number = 0

    def close(self) -> None:
        self.stream.close()

    def _lines(self) -> Iterator[str]:
        """Decoded lines (with their newlines), counting them."""
        for number, text in decoded_lines(self.stream, self.path, MAX_LINE_BYTES,
                                           TaskDataError):
            self.line_number = number
            yield text.removeprefix("\ufeff") if self.line_number == 1 else text

    def _records(self):
        """(first line, fields) of each non-blank CSV/TSV record."""
        reader = csv.reader(self._lines(), **_DIALECTS[self.format])
        while True:
            start = self.line_number + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                raise TaskDataError(f"{self.path}:{start}: {error}") from None
            if any(field.strip() for field in fields):
                yield start, fields

    def header(self, records=None) -> list[str]:
        """The header's names (the first record of `records`, or of the file)."""
        first = next(records or self._records(), None)
        if first is None:
            raise TaskDataError(f"{self.path}: the file is empty; expected a header row "
                                f"naming the columns")
        names = [name.strip() for name in first[1]]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated or "" in names:
            raise TaskDataError(f"{self.path}:{first[0]}: the header must name every column "
                                f"once; " + (f"repeated: {', '.join(repeated)}" if repeated
                                             else "a column has no name"))
        return names

    def rows(self) -> Iterator[TableRow]:
        if self.format == "jsonl":
            yield from self._json_rows()
            return
        records = self._records()
        names = self.header(records)
        for line, fields in records:
            if len(fields) != len(names):
                raise TaskDataError(f"{self.path}:{line}: {len(fields)} fields, but the "
                                    f"header names {len(names)} columns")
            yield TableRow(line, dict(zip(names, fields)))

    def _json_rows(self) -> Iterator[TableRow]:
        for text in self._lines():
            if not text.strip():
                continue
            where = f"{self.path}:{self.line_number}"
            try:
                values = json.loads(text)
            except ValueError as error:
                raise TaskDataError(f"{where}: not JSON ({error})") from None
            if not isinstance(values, dict):
                raise TaskDataError(f"{where}: expected a JSON object (one row), found "
                                    f"{type(values).__name__}")
            yield TableRow(self.line_number, values)


class TableWriter:
    """Writes rows to `path` (format from its extension) under a temporary name, renamed into
    place when closed without error (`albert_tf.io.files.atomic_output`).

    Args:
        path: the output file.
        columns: the columns in order, which CSV and TSV write as the header (JSON Lines
            writes each row's own keys).

    Example:
        with TableWriter("out.csv", ["text", "prediction"]) as writer:
            writer.write({"text": "a fine film", "prediction": "pos"})
    """

    def __init__(self, path: str, columns: Sequence[str]):
        self.path, self.format, self.columns = path, table_format(path), list(columns)
        self._output = atomic_output(path)

    def __enter__(self) -> TableWriter:
        binary = self._output.__enter__()
        self._text = io.TextIOWrapper(binary, encoding="utf-8", newline="", write_through=True)
        if self.format == "csv":
            self._csv = csv.writer(self._text, lineterminator="\n")
            self._csv.writerow(self.columns)
        elif self.format == "tsv":
            self._write_tsv(self.columns)
        return self

    def write(self, values: dict[str, Any]) -> None:
        if self.format == "jsonl":
            self._text.write(json.dumps(values, ensure_ascii=False) + "\n")
        elif self.format == "csv":
            self._csv.writerow([_cell(values.get(name)) for name in self.columns])
        else:
            self._write_tsv([_cell(values.get(name)) for name in self.columns])

    def _write_tsv(self, cells: list[str]) -> None:
        for name, cell in zip(self.columns, cells):
            if "\t" in cell or "\n" in cell or "\r" in cell:
                raise TaskDataError(f"{self.path}: column {name!r} holds a tab or a line "
                                    f"break, which a TSV field cannot; write .csv or .jsonl")
        self._text.write("\t".join(cells) + "\n")

    def __exit__(self, *error) -> None:
        self._text.flush()
        self._text.detach()  # the binary file is closed by atomic_output
        self._output.__exit__(*error)


def _cell(value: Any) -> str:
    """A CSV/TSV cell: strings as they are, other JSON values as JSON (None: empty)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)
