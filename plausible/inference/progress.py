"""Progress of the driver's chains on a terminal, quiet anywhere else.

:func:`reporting` opens a progress bar for the sweeps that :class:`~plausible.inference.driver.Chains`
run inside it (every chain, warm-up included; a ``draws="auto"`` run adds each block's sweeps
to the total as it starts it) and :func:`current` gives it to the chains. The bar is drawn
only on a terminal (rich's own test of the console: stderr by default), so a run in a pipe, a
log file or a notebook's captured output stays quiet, and a run without :func:`reporting`
(every library call that does not ask for progress) pays one context-variable read per block.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading

_CURRENT: contextvars.ContextVar[SweepProgress | None] = contextvars.ContextVar(
    "plausible_sweep_progress", default=None)

EVERY = 16
"""Sweeps a chain runs between two reports (a report takes a lock and redraws nothing: rich
refreshes the bar on its own clock)."""


class SweepProgress:
    """A rich progress bar counting sweeps, safe to advance from the chains' threads."""

    def __init__(self, progress, description: str):
        self._progress, self._lock = progress, threading.Lock()
        self._task = progress.add_task(description, total=0)

    def add(self, sweeps: int) -> None:
        """``sweeps`` more to run (a new block of draws)."""
        with self._lock:
            total = self._progress.tasks[self._task].total or 0
            self._progress.update(self._task, total=total + sweeps)

    def advance(self, sweeps: int) -> None:
        """``sweeps`` more done."""
        with self._lock:
            self._progress.advance(self._task, sweeps)


@contextlib.contextmanager
def reporting(enabled: bool = True, description: str = "sampling", console=None):
    """Show the sweeps of the chains run inside the block on a progress bar when
    ``enabled`` and ``console`` (default: rich's console on stderr) is a terminal; the bar is
    removed when the block ends. Nested blocks keep the outer bar."""
    if not enabled or _CURRENT.get() is not None:
        yield
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)

    console = Console(stderr=True) if console is None else console
    if not console.is_terminal:
        yield
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("sweeps"), TimeElapsedColumn(), console=console,
                  transient=True) as progress:
        token = _CURRENT.set(SweepProgress(progress, description))
        try:
            yield
        finally:
            _CURRENT.reset(token)


def current() -> SweepProgress | None:
    """The progress bar of the enclosing :func:`reporting` block, if it shows one."""
    return _CURRENT.get()


__all__ = ["EVERY", "SweepProgress", "current", "reporting"]
