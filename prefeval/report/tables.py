"""Tables for people: one :class:`Table`, rendered as aligned text, Markdown or LaTeX.

A table has label columns (left-aligned: runs, pairs, samples) followed by value columns
(right-aligned). A cell may carry a significance marker, shown as ↑ (significantly better) or ↓
(significantly worse) after its text (``$^{\\uparrow}$`` / ``$^{\\downarrow}$`` in LaTeX), and may be
emphasised (bold in Markdown and LaTeX; plain text has no bold). Notes (the legend) follow the table:
as lines in text, as a paragraph in Markdown, and as the caption in LaTeX. The LaTeX table uses the
``booktabs`` rules (``\\usepackage{booktabs}``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

BETTER = "better"
WORSE = "worse"
MISSING = "—"

_MARKERS = {
    "table": {BETTER: "↑", WORSE: "↓", "": ""},
    "markdown": {BETTER: "↑", WORSE: "↓", "": ""},
    "latex": {BETTER: r"$^{\uparrow}$", WORSE: r"$^{\downarrow}$", "": ""},
}
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", MISSING: "---",
    "<": r"\textless{}", ">": r"\textgreater{}",
}


class Cell(NamedTuple):
    """One cell: its text, a significance marker (:data:`BETTER`, :data:`WORSE` or none), emphasis."""

    text: str
    marker: str = ""
    bold: bool = False


def number(value: float | None, marker: str = "", bold: bool = False) -> Cell:
    """A value cell with 4 decimals (as trec_eval prints them); NaN or None shows as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Cell(MISSING)
    return Cell(f"{value:.4f}", marker, bold)


@dataclass
class Table:
    """``header`` and ``rows`` of cells (strings are plain cells); the first ``labels`` columns are labels."""

    header: list[str]
    rows: list[list[Cell | str]]
    labels: int = 1
    notes: list[str] = field(default_factory=list)

    def cells(self) -> list[list[Cell]]:
        return [[cell if isinstance(cell, Cell) else Cell(str(cell)) for cell in row] for row in self.rows]


def render(table: Table, style: str) -> str:
    """The table as ``table`` (aligned text), ``markdown`` or ``latex``, ending with a newline."""
    if style == "table":
        return _text(table)
    if style == "markdown":
        return _markdown(table)
    if style == "latex":
        return _latex(table)
    raise ValueError(f"unknown table style {style!r}")


def _text(table: Table) -> str:
    markers = _MARKERS["table"]
    cells = table.cells()
    marked = [any(row[c].marker for row in cells) for c in range(len(table.header))]
    pad = [" " if m else "" for m in marked]  # keeps the digits of a column aligned, marked or not
    body = [[cell.text + (markers[cell.marker] or pad[c]) for c, cell in enumerate(row)] for row in cells]
    widths = [max(len(text) for text in column) for column in zip(table.header, *body)]

    def line(texts: list[str]) -> str:
        aligned = [t.ljust(w) if c < table.labels else t.rjust(w) for c, (t, w) in enumerate(zip(texts, widths))]
        return "  ".join(aligned).rstrip()

    out = [line(table.header), "  ".join("-" * w for w in widths)]
    out += [line(texts) for texts in body]
    out += ["", *table.notes] if table.notes else []
    return "\n".join(out) + "\n"


def _markdown(table: Table) -> str:
    markers = _MARKERS["markdown"]

    def text(cell: Cell) -> str:
        shown = cell.text.replace("|", r"\|")
        shown = f"**{shown}**" if cell.bold else shown
        return shown + markers[cell.marker]

    header = "| " + " | ".join(h.replace("|", r"\|") for h in table.header) + " |"
    rule = "|" + "|".join("---" if c < table.labels else "---:" for c in range(len(table.header))) + "|"
    rows = ["| " + " | ".join(text(cell) for cell in row) + " |" for row in table.cells()]
    notes = ["", " ".join(table.notes)] if table.notes else []
    return "\n".join([header, rule, *rows, *notes]) + "\n"


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def _latex(table: Table) -> str:
    markers = _MARKERS["latex"]

    def text(cell: Cell) -> str:
        shown = latex_escape(cell.text)
        return (rf"\textbf{{{shown}}}" if cell.bold else shown) + markers[cell.marker]

    spec = "l" * table.labels + "r" * (len(table.header) - table.labels)
    out = [r"\begin{table}", r"  \centering", rf"  \begin{{tabular}}{{{spec}}}", r"    \toprule",
           "    " + " & ".join(latex_escape(h) for h in table.header) + r" \\", r"    \midrule"]
    out += ["    " + " & ".join(text(cell) for cell in row) + r" \\" for row in table.cells()]
    out += [r"    \bottomrule", r"  \end{tabular}"]
    if table.notes:
        caption = latex_escape(" ".join(table.notes)).replace("↑", markers[BETTER]).replace("↓", markers[WORSE])
        out.append(rf"  \caption{{{caption}}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"
