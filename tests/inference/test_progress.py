"""The sweep progress bar: drawn on a terminal, counting every chain's sweeps to its total
(warm-up, thinning, the blocks of a ``draws="auto"`` run, exact draws), silent elsewhere."""

import io
import re

import numpy as np
import pytest
from rich.console import Console

import plausible as pl
from plausible.inference.progress import reporting


def final_count(text: str) -> tuple[int, int]:
    """The last ``done/total`` the bar printed."""
    done, total = re.findall(r"(\d+)/(\d+)\S* sweeps", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text))[-1]
    return int(done), int(total)


def sampled(model, terminal=True, **options):
    """``(trace, what the bar printed)`` of ``pl.sample(model, **options)`` inside a
    progress block on a terminal (or not)."""
    out = io.StringIO()
    with reporting(True, console=Console(file=out, force_terminal=terminal, width=100)):
        trace = pl.sample(model, progressbar=False, check_convergence=False,
                          log_likelihood=False, **options)
    return trace, out.getvalue()


LABELS = pl.data.simulate_glad(60, 5, n_classes=3, seed=1).labels


@pytest.mark.parametrize("options, sweeps", [
    ({"draws": 200, "chains": 2}, 2 * (100 + 200)),             # the kernel's 100 warm-up sweeps
    ({"draws": 50, "chains": 3, "thin": 3, "tune": 10}, 3 * (10 + 150)),
])
def test_every_sweep_of_every_chain_is_counted(options, sweeps):
    _, text = sampled(pl.models.get("dawid-skene")(LABELS), seed=0, **options)
    assert final_count(text) == (sweeps, sweeps)


def test_auto_runs_count_each_block_and_exact_draws_one_sweep_per_chain():
    trace, text = sampled(pl.models.get("dawid-skene")(LABELS), draws="auto", chains=2, seed=0)
    kept = trace.posterior.sizes["draw"]
    assert final_count(text) == (2 * (100 + kept),) * 2
    votes = pl.data.Votes.from_counts(np.array([[3, 1], [0, 4], [2, 2]]))
    _, text = sampled(pl.models.get("dirichlet")(votes), draws=100, chains=2, seed=0)
    assert final_count(text) == (2, 2)


def test_nothing_is_drawn_off_a_terminal(capsys):
    _, text = sampled(pl.models.get("dawid-skene")(LABELS), terminal=False, draws=50, chains=2)
    assert text == ""
    pl.sample(pl.models.get("dawid-skene")(LABELS), draws=50, chains=2, progressbar=True,
              check_convergence=False, log_likelihood=False)  # stderr is captured: no terminal
    assert capsys.readouterr().err == ""
