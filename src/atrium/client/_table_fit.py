"""Tables that fit the output's width without cutting an id: `run_Lk5d…` cannot be copied.
Where a table is too wide, the cells that may be cut (a prompt, an error) shrink first, then its
optional columns are left out; a table whose ids alone are wider is printed wider, for the
terminal to wrap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Column, Table

_UNBOUNDED = 10_000


class RecordTable(Table):
    """A table of records, one a row, whose `optional` columns (by header, the first named the
    first to go) are left out where the table would not fit the output otherwise."""

    def __init__(self, *, optional: Sequence[str] = (), **options: Any) -> None:
        super().__init__(**options)
        self.optional = tuple(optional)


def fit(table: Table, console: Console, width: int) -> tuple[int, list[str]]:
    """Fit `table` to `width` columns, in place; the width it then needs (more than `width`
    where its ids alone are wider) and the headers of the columns it left out.

    A column with a `min_width` of its own may be cut down to it (its `overflow` says how), not
    below: optional columns go first. The other no-wrap columns hold ids, times and numbers,
    which are shown whole."""
    unbounded = console.options.update_width(_UNBOUNDED)

    def needed() -> int:
        return Measurement.get(console, unbounded, table).minimum

    cuttable: list[tuple[Column, int, int]] = []  # a column, its least and its whole width
    for column in table.columns:
        cells = [column.header, *column.cells]
        widest = max(Measurement.get(console, unbounded, cell).maximum for cell in cells)
        whole = min(widest, column.max_width or widest)
        if column.min_width is not None:
            # A set width: rich shares out what is left among the other wrapping columns.
            least = min(column.min_width, whole)
            column.width = least
            cuttable.append((column, least, whole))
        elif column.no_wrap:  # rich measures a cell by its longest word, as if it could wrap
            column.min_width = whole

    left_out: list[str] = []
    optional = list(table.optional) if isinstance(table, RecordTable) else []
    while optional and needed() > width:
        header = optional.pop(0)
        kept = [column for column in table.columns if column.header != header]
        if len(kept) < len(table.columns):
            table.columns = kept
            left_out.append(header)

    # What is left over goes to the cut columns, shared, the least wanting first.
    shown = [entry for entry in cuttable if any(entry[0] is column for column in table.columns)]
    shown.sort(key=lambda entry: entry[2] - entry[1])
    spare = max(0, width - needed())
    for index, (column, least, whole) in enumerate(shown):
        grown = min(whole, least + spare // (len(shown) - index))
        spare -= grown - least
        column.width = grown
    return needed(), left_out
