"""``QuickTable`` prints exactly what rich prints for the same table: over generated tables
(widths, wrapping, boxes, padding, grids with a ratio column, wide and escaped text) and
the ``score`` report, on a plain console and a colour terminal."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich import box
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from txcheck.cli import main, quick_table
from txcheck.cli.quick_table import QuickTable, table_lines

WORDS = st.text(
    alphabet=st.sampled_from(["a", "b", "Z", "-", "_", ".", "字", "é", "\u0301", "[", "]"]),
    min_size=0,
    max_size=12,
)
CELLS = st.lists(WORDS, min_size=1, max_size=4).map(" ".join) | st.lists(
    WORDS.filter(bool), min_size=1, max_size=3
).map("\n".join)


def _printed(renderable: RenderableType, width: int, **options: Any) -> str:
    out = io.StringIO()
    Console(file=out, width=width, **options).print(renderable)
    return out.getvalue()


@st.composite
def tables(draw: st.DrawFn) -> Table:
    grid = draw(st.booleans())
    columns = draw(st.integers(1, 4))
    if grid:
        table = Table.grid(padding=draw(st.sampled_from([0, (0, 1), (0, 2)])), expand=True)
    else:
        table = Table(
            title=draw(st.none() | WORDS.map(lambda w: Text(w, style="table.title"))),
            box=draw(st.sampled_from([box.SIMPLE_HEAD, box.HEAVY_HEAD, box.ASCII, None])),
            show_header=draw(st.booleans()),
            show_edge=draw(st.booleans()),
            pad_edge=draw(st.booleans()),
            collapse_padding=draw(st.booleans()),
        )
    for index in range(columns):
        table.add_column(
            draw(st.sampled_from(["case", "strict", "legacy", "x"])),
            justify=draw(st.sampled_from(["left", "right", "center", "default"])),
            overflow=draw(st.sampled_from(["fold", "ellipsis", "crop"])),
            no_wrap=draw(st.booleans()),
            min_width=draw(st.none() | st.integers(0, 4)),
            ratio=1 if grid and index == columns - 1 else None,
        )
    for _ in range(draw(st.integers(1, 5))):
        table.add_row(*(Text(draw(CELLS)) for _ in range(columns)))
    return table


@settings(max_examples=300, deadline=None)
@given(table=tables(), width=st.integers(8, 90))
def test_a_quick_table_prints_what_rich_prints(table: Table, width: int) -> None:
    assert _printed(QuickTable(table), width) == _printed(table, width)


def test_the_quick_layout_is_taken_for_most_tables_that_fit() -> None:
    """Not a vacuous equality: the plain layout really runs (and matches) on the tables
    a plain console can take at their natural width."""
    taken = []

    @settings(max_examples=150, deadline=None, database=None)
    @given(table=tables())
    def count(table: Table) -> None:
        console = Console(file=io.StringIO(), width=200)
        taken.append(table_lines(table, console, console.options) is not None)

    count()
    assert sum(taken) > len(taken) // 2


def _score_table(rows: int) -> Table:
    table = Table(title=Text("Scored cases: x.jsonl", style="table.title"), box=box.SIMPLE_HEAD)
    table.add_column("case", overflow="fold")
    table.add_column("strict", no_wrap=True)
    table.add_column("legacy", justify="right", no_wrap=True)
    for n in range(rows):
        table.add_row(Text(f"case-{n}"), Text("FAIL 0\nVETO"), Text(f"{n / 7:.2f}"))
    return table


def test_a_colour_terminal_gets_rich_itself() -> None:
    table = _score_table(3)
    console = Console(file=io.StringIO(), width=80, force_terminal=True, color_system="truecolor")
    assert table_lines(table, console, console.options) is None
    options = {"force_terminal": True, "color_system": "truecolor"}
    assert _printed(QuickTable(table), 80, **options) == _printed(table, 80, **options)
    assert "\x1b[" in _printed(QuickTable(table), 80, **options)


def test_a_table_wider_than_the_console_is_left_to_rich() -> None:
    table = _score_table(2)
    table.add_row(Text("x" * 100), Text("pass 1"), Text("1.00"))
    console = Console(file=io.StringIO(), width=60)
    assert table_lines(table, console, console.options) is None
    assert _printed(QuickTable(table), 60) == _printed(table, 60)
    assert table_lines(_score_table(2), console, console.options) is not None


ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
HOSTILE_IDS = [
    "\x1b[31mred\x1b[0m",
    "[bold]not markup[/bold]",
    "字" * 20,
    "right\u202eleft",
    "x" * 150,
    "a b  c\td",
]


def _bench_text(count: int) -> str:
    spec = importlib.util.spec_from_file_location("bench_score", ROOT / "benchmarks/bench_score.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text: str = module.build(count)[0]
    return text


def _hostile_text() -> str:
    audit = (ROOT / "examples/audit/cases.jsonl").read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in audit]
    for index, case_id in enumerate(HOSTILE_IDS):
        cases.append(dict(cases[index % len(cases)], id=case_id))
    return "".join(json.dumps(case) + "\n" for case in cases)


@pytest.mark.parametrize("name", ["bench", "hostile"])
def test_score_prints_what_rich_printed(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The human report of ``txcheck score`` is byte for byte what it was with rich's
    layout: 1,200 benchmark cases (two chunks of the case table, more failing cases than
    the details show), and escaped, wide and over-long ids."""
    path = tmp_path / "cases.jsonl"
    path.write_text(_bench_text(1200) if name == "bench" else _hostile_text(), encoding="utf-8")
    laid_out: list[bool] = []

    def counted(*args: Any) -> tuple[int, list[str]] | None:
        result = table_lines(*args)
        laid_out.append(result is not None)
        return result

    monkeypatch.setattr(quick_table, "table_lines", counted)
    quick_code = main(["score", CONTRACT, str(path)])
    quick = capsys.readouterr().out
    monkeypatch.setattr(quick_table, "table_lines", lambda *args: None)
    assert main(["score", CONTRACT, str(path)]) == quick_code == 1
    assert quick == capsys.readouterr().out
    assert any(laid_out)
    if name == "hostile":
        assert not laid_out[0]  # the 150-character id does not fit: rich lays it out
        assert "\\x1b[31mred" in quick and "[bold]not markup[/bold]" in quick
