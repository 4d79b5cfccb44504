"""The report's HTML: one self-contained page (styles, scripts and figures inline).

Nothing is fetched: figures are PNG ``data:`` URLs, and the page's Content Security Policy
(``default-src 'none'``) makes the browser refuse any request a future edit might add. The
only script sorts and filters the tables marked ``sortable`` / ``searchable``.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'")
"""The page's Content Security Policy: inline styles and scripts, ``data:`` images, nothing
else."""


@dataclass
class Section:
    """One section of the report: an ``id`` (the anchor, also what the tests look for), a
    ``title`` and its body, a list of HTML fragments."""

    id: str
    title: str
    body: list[str] = field(default_factory=list)

    def add(self, fragment: str) -> Section:
        self.body.append(fragment)
        return self


def text(value) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value))


def paragraph(*sentences: str) -> str:
    """A ``<p>`` of plain-text sentences (escaped)."""
    return f"<p>{text(' '.join(sentences))}</p>"


def figure(fig, caption: str, *, dpi: int = 96) -> str:
    """A matplotlib figure as an inline PNG with its caption; the figure is closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<figure><img alt="{text(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{text(caption)}</figcaption></figure>")


def _cell(value) -> str:
    """A ``<td>``: numbers formatted, with their exact value in ``data-num`` (sorted as
    numbers); NaN, NA and None an empty cell."""
    if value is pd.NA or value is None:
        return "<td></td>"
    if isinstance(value, (bool, np.bool_)):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, (int, np.integer)):
        return f'<td data-num="{int(value)}">{int(value):d}</td>'
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "<td></td>"
        shown = f"{value:.3g}" if abs(value) >= 1e4 or 0 < abs(value) < 1e-3 else f"{value:.3f}"
        return f'<td data-num="{float(value)!r}">{shown}</td>'
    return f"<td>{text(value)}</td>"


def table(frame: pd.DataFrame, *, id: str, caption: str = "", sortable: bool = False,
          searchable: bool = False, index: bool = True) -> str:
    """``frame`` as an HTML table (``id`` its element id; the index as the first column when
    ``index``). ``sortable``: a click on a header sorts by it (numbers as numbers);
    ``searchable``: a box above it keeps the rows containing its text."""
    if index:
        frame = frame.reset_index()
    classes = " ".join(c for c, on in (("sortable", sortable), ("searchable", searchable)) if on)
    head = "".join(f"<th>{text(c)}</th>" for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False, name=None):
        rows.append("<tr>" + "".join(_cell(v) for v in values) + "</tr>")
    search = (f'<input type="search" class="filter" data-table="{text(id)}" '
              f'placeholder="filter rows" aria-label="filter the rows of {text(id)}">'
              if searchable else "")
    cap = f"<caption>{text(caption)}</caption>" if caption else ""
    return (f'{search}<div class="scroll"><table id="{text(id)}" class="{classes}">{cap}'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; }
header { background: #16324f; color: #fff; padding: 1em 2em; }
header h1 { margin: 0 0 .2em; font-size: 1.5em; }
nav { position: sticky; top: 0; background: #eef2f6; padding: .5em 2em; z-index: 1;
      border-bottom: 1px solid #ccd5df; }
nav a { margin-right: 1.2em; color: #16324f; text-decoration: none; }
main { padding: 0 2em 3em; max-width: 1200px; }
section { margin-top: 2em; }
h2 { border-bottom: 2px solid #16324f; padding-bottom: .2em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: .9em; }
pre { white-space: pre-wrap; }
.scroll { max-height: 32em; overflow: auto; border: 1px solid #ccd5df; }
table { border-collapse: collapse; font-size: .9em; }
th, td { padding: .25em .6em; border-bottom: 1px solid #e3e8ee; text-align: left; }
th { background: #eef2f6; position: sticky; top: 0; }
table.sortable th { cursor: pointer; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
.verdict { font-weight: bold; padding: .4em .8em; display: inline-block; border-radius: 4px; }
.verdict.ok { background: #dff3e4; } .verdict.bad { background: #fbe1e1; }
.verdict.unknown { background: #fdf3d7; }
input.filter { margin: .5em 0; padding: .3em; width: 20em; }
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column], y = b.cells[column], order;
        if ("num" in x.dataset && "num" in y.dataset) {
          order = parseFloat(x.dataset.num) - parseFloat(y.dataset.num);
        } else if (x.textContent === "" || y.textContent === "") {
          order = (x.textContent === "") - (y.textContent === "");  // empty cells last
          return order;
        } else {
          order = x.textContent.localeCompare(y.textContent, undefined, {numeric: true});
        }
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
document.querySelectorAll("input.filter").forEach(function (box) {
  var table = document.getElementById(box.dataset.table);
  box.addEventListener("input", function () {
    var needle = box.value.toLowerCase();
    Array.from(table.tBodies[0].rows).forEach(function (row) {
      row.hidden = needle !== "" && row.textContent.toLowerCase().indexOf(needle) < 0;
    });
  });
});
"""


def document(title: str, subtitle: str, sections: list[Section]) -> str:
    """The whole page: a header, a menu of the sections and the sections in order."""
    nav = "".join(f'<a href="#{text(s.id)}">{text(s.title)}</a>' for s in sections)
    body = "".join(f'<section id="{text(s.id)}"><h2>{text(s.title)}</h2>{"".join(s.body)}'
                   "</section>" for s in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{text(title)}</title><style>{STYLE}</style></head><body>"
            f"<header><h1>{text(title)}</h1><div>{text(subtitle)}</div></header>"
            f"<nav>{nav}</nav><main>{body}</main><script>{SCRIPT}</script></body></html>\n")


__all__ = ["CSP", "Section", "document", "figure", "paragraph", "table", "text"]
