"""A run's report: one self-contained HTML page to look at, with no server and no network.

:func:`report_html` reads a fitted :class:`plausible.Aggregation` and returns the page;
:meth:`plausible.Aggregation.report` writes it (atomically) and ``plausible report RUN.nc -o
report.html`` does the same from a saved run. The page holds, in order: the run and its
convergence (the worst quantities named), the certainty of the items, the annotators'
quality with intervals (confusion matrices, sensitivity and specificity, spammer flags where
the model has them), the items that need another label, the posterior predictive checks with
what they miss in words, and every item in a sortable, searchable table
(:mod:`plausible.report.sections`; the page itself: :mod:`plausible.report.page`).
"""

from __future__ import annotations

from plausible.report import sections
from plausible.report.page import document

SECTIONS = ("summary", "certainty", "annotators", "next", "checks", "items")
"""The sections' element ids, in page order."""
STAGES = ("convergence and predictive checks", "run summary", "certainty", "annotators",
          "next labels", "check figures", "item table")
"""What :func:`report_html` does, in order: the checks, then one stage per section."""


def report_html(result, *, budget: int = 20, threshold: float = 0.95, draws: int = 200,
                seed: int | None = 0, progress=None) -> str:
    """The report of ``result`` (a :class:`plausible.Aggregation`) as one HTML page.

    ``budget``: how many next annotations to propose; ``threshold``: the top-1 certainty at
    which an item is settled (for the proposals and the certainty counts); ``draws`` and
    ``seed``: the posterior predictive check's replicated data sets
    (:meth:`plausible.Aggregation.check`); ``progress``: called with each stage's name
    (:data:`STAGES`) as it starts, e.g. to move a progress bar."""
    progress = progress or (lambda stage: None)
    progress(STAGES[0])
    check = result.check(draws=draws, seed=seed)
    items = result.labels().reset_index()
    steps = (lambda: sections.summary(result, check),
             lambda: sections.certainty(result, items, threshold),
             lambda: sections.annotators(result),
             lambda: sections.next_labels(result, budget, threshold),
             lambda: sections.predictive(result, check),
             lambda: sections.item_table(result, items))
    parts = []
    for stage, step in zip(STAGES[1:], steps):
        progress(stage)
        parts.append(step())
    posterior = result.trace["posterior"]
    subtitle = (f"{result.model} model, {result.sizes['item']} items x "
                f"{result.sizes['class']} classes, {posterior.sizes['chain']} "
                f"chains x {posterior.sizes['draw']} draws")
    return document(f"plausible report: {result.model}", subtitle, parts)


__all__ = ["SECTIONS", "STAGES", "report_html"]
