"""A rich ``Table`` laid out without rich's layout machinery, when the result is the same.

rich measures every cell of a table through its renderable protocol, then renders each
cell through a padding, a wrap and a crop: the report of a 2,000-case ``txcheck score``
took about 1.3 s of CPU to lay out, twice what the whole command takes with ``--json``.
``QuickTable(table)`` prints
exactly the characters rich would, computing the column widths and the cell lines directly
from the cells' text, whenever

- nothing is styled on output (the console has no color system: a file, a pipe, a dumb
  terminal), so the characters are the whole output;
- the table uses no feature outside the plain subset below (no footer, caption, row
  styles, section lines, fixed widths, vertical alignment or top and bottom padding; cells
  that are ``Text`` with no tab, no blank line and no line break but ``\\n``); and
- its columns fit at their natural widths (rich would not shrink or fold any of them),
  except for the columns that take a share of the width (``ratio``), whose cells are
  wrapped by rich's own ``Text.wrap``.

Otherwise it renders the table with rich, as it always did. tests/test_quick_table.py holds
the two to the same bytes, over generated tables and the ``score`` reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich._ratio import ratio_distribute
from rich.box import Box
from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.table import Column, Table
from rich.text import Text

__all__ = ["QuickTable", "table_lines"]

_LINE_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\t")
"""Characters rich treats as line breaks (``str.splitlines``) or tabs: a cell holding one
is left to rich."""


class QuickTable:
    """``table`` rendered as rich renders it, faster where ``table_lines`` applies."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        laid_out = table_lines(self.table, console, options)
        if laid_out is None:
            yield self.table
            return
        width, lines = laid_out
        table = self.table
        if table.title:
            title = table.title
            if isinstance(title, str):
                title = console.render_str(
                    title, style=Style.pick_first(table.title_style, "table.title"), highlight=False
                )
            title_options = options.update(width=width, highlight=table.highlight, height=None)
            yield from console.render(title, title_options.update(justify=table.title_justify))
        new_line = Segment.line()
        for line in lines:
            yield Segment(line)
            yield new_line


def _plain_subset(table: Table) -> bool:
    """Whether ``table`` uses only what ``table_lines`` lays out."""
    top, _, bottom, _ = table.padding
    return not (
        top
        or bottom
        or table.show_footer
        or table.caption
        or table.row_styles
        or table.show_lines
        or table.leading
        or table.width is not None
        or table.min_width is not None
        or any(row.end_section for row in table.rows)
        or any(c.width is not None or c.max_width is not None for c in table.columns)
        or any(c.vertical != "top" for c in table.columns)
    )


def _cell_text(cell: object) -> Text | None:
    """The cell as a ``Text`` of plain lines, or None (left to rich)."""
    if isinstance(cell, str):
        if "[" in cell or ":" in cell:  # markup or an emoji code: rich reads it
            return None
        cell = Text(cell)
    if not isinstance(cell, Text) or cell.justify or cell.overflow or cell.no_wrap is not None:
        return None
    if cell.tab_size is not None or cell.end != "\n":
        return None
    plain = cell.plain
    if "\n\n" in plain or plain.startswith("\n") or plain.endswith("\n"):
        return None
    if not _LINE_BREAKS.isdisjoint(plain):
        return None
    return cell


def _padding(table: Table, index: int) -> tuple[int, int]:
    """The left and right padding of column ``index``'s cells (rich's ``_get_cells``)."""
    _, right, _, left = table.padding
    first, last = index == 0, index == len(table.columns) - 1
    if table.collapse_padding and not first:
        left = max(0, left - right)
    if not table.pad_edge:
        if first:
            left = 0
        if last:
            right = 0
    return left, right


def _padding_width(table: Table, index: int) -> int:
    """What rich adds to a column's minimum width (``Table._get_padding_width``)."""
    _, right, _, left = table.padding
    if table.collapse_padding:
        left = 0
        right = abs(left - right)
    if not table.pad_edge:
        if index == 0:
            left = 0
        if index == len(table.columns) - 1:
            right = 0
    return left + right


def _widths(table: Table, cells: Sequence[Sequence[Text]], max_width: int) -> list[int] | None:
    """Each column's width with its padding, as rich computes it, or None when rich would
    shrink a column (or could not fit the table at all)."""
    measured: list[int] = []
    for index, (column, column_cells) in enumerate(zip(table.columns, cells, strict=True)):
        if not column_cells:
            return None
        left, right = _padding(table, index)
        widest = max(max(map(cell_len, t.plain.split("\n"))) for t in column_cells)
        width = widest + left + right
        if column.min_width is not None:
            width = max(width, column.min_width + _padding_width(table, index))
        measured.append(width)
    widths = [width or 1 for width in measured]
    columns = table.columns
    if table.expand:
        ratios = [c.ratio or 0 for c in columns if c.flexible]
        if not any(ratios):
            return None
        fixed = [0 if c.flexible else w for c, w in zip(columns, measured, strict=True)]
        minimums = [
            (c.width or 1) + _padding_width(table, i) for i, c in enumerate(columns) if c.flexible
        ]
        if max_width - sum(fixed) < sum(minimums):
            return None
        shares = iter(ratio_distribute(max_width - sum(fixed), ratios, minimums))
        widths = [
            f + next(shares) if c.flexible else w
            for c, f, w in zip(columns, fixed, widths, strict=True)
        ]
        if sum(widths) != max_width:
            return None
    elif sum(widths) > max_width:
        return None
    if any(w - sum(_padding(table, i)) < 1 for i, w in enumerate(widths)):
        return None  # a cell with no room for its text: rich renders nothing of it
    return widths


def _cell_lines(
    console: Console, column: Column, text: Text, width: int, *, padding: tuple[int, int]
) -> list[str]:
    """The cell's lines, each ``width`` cells wide, as rich renders them."""
    left, right = padding
    inner = width - left - right
    lines = text.plain.split("\n")
    if all(cell_len(line) <= inner for line in lines) and column.justify in ("left", "right"):
        if column.justify == "right":
            lines = [line.rstrip() for line in lines]
            lines = [" " * (inner - cell_len(line)) + line for line in lines]
    else:
        wrapped = text.wrap(
            console,
            inner,
            justify=column.justify,
            overflow=column.overflow,
            tab_size=console.tab_size or 8,
            no_wrap=column.no_wrap,
        )
        lines = [set_cell_size(line.plain, inner) for line in wrapped]
    pad_left, pad_right = " " * left, " " * right
    return [pad_left + line + " " * (inner - cell_len(line)) + pad_right for line in lines]


def table_lines(
    table: Table, console: Console, options: ConsoleOptions
) -> tuple[int, list[str]] | None:
    """The table's width and its lines below the title, exactly as rich renders them, or
    None when rich must lay it out (see the module's docstring)."""
    if console.color_system is not None or not table.columns or not _plain_subset(table):
        return None
    columns = table.columns
    cells: list[list[Text]] = []
    for column in columns:
        column_cells = [*([column.header] if table.show_header else []), *column.cells]
        texts = [_cell_text(c) for c in column_cells]
        if any(t is None for t in texts):
            return None
        cells.append(texts)  # type: ignore[arg-type]
    extra = (2 if table.box and table.show_edge else 0) + (len(columns) - 1 if table.box else 0)
    widths = _widths(table, cells, options.max_width - extra)
    if widths is None:
        return None
    rendered = [
        [_cell_lines(console, c, t, w, padding=_padding(table, i)) for t in texts]
        for i, (c, texts, w) in enumerate(zip(columns, cells, widths, strict=True))
    ]
    safe = console.safe_box if table.safe_box is None else table.safe_box
    box = table.box.substitute(options, safe=safe) if table.box else None
    if box is not None and not table.show_header:
        box = box.get_plain_headed_box()
    lines: list[str] = []
    if box is not None and table.show_edge:
        lines.append(box.get_top(widths))
    rows = list(zip(*rendered, strict=True))
    for index, row in enumerate(rows):
        header = index == 0 and table.show_header
        height = max(len(cell) for cell in row)
        shaped = [
            _shape(cell, width, height, bottom=header)
            for cell, width in zip(row, widths, strict=True)
        ]
        place = "head" if index == 0 else "foot" if index == len(rows) - 1 else "mid"
        lines.extend(_joined(box, table.show_edge, shaped, place, height))
        if box is not None and header:
            lines.append(box.get_row(widths, "head", edge=table.show_edge))
    if box is not None and table.show_edge:
        lines.append(box.get_bottom(widths))
    return sum(widths) + extra, lines


def _shape(cell: list[str], width: int, height: int, *, bottom: bool) -> list[str]:
    """``cell`` made ``height`` lines tall (blank lines below it, or above a header's)."""
    blank = [" " * width] * (height - len(cell))
    return [*blank, *cell] if bottom else [*cell, *blank]


def _joined(
    box: Box | None, edge: bool, cells: Sequence[Sequence[str]], place: str, height: int
) -> Iterator[str]:
    """The row's lines: its cells side by side, between the box's edges and dividers
    (rich draws the first row with the box's head characters, the last with its foot's)."""
    if box is None:
        for line in range(height):
            yield "".join(cell[line] for cell in cells)
        return
    left, right, divider = {
        "head": (box.head_left, box.head_right, box.head_vertical),
        "mid": (box.mid_left, box.mid_right, box.mid_vertical),
        "foot": (box.foot_left, box.foot_right, box.foot_vertical),
    }[place]
    for line in range(height):
        middle = divider.join(cell[line] for cell in cells)
        yield f"{left}{middle}{right}" if edge else middle
