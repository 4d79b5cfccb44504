"""The memory guard: a trace's size is known before it is sampled, and compared with a budget.

The default budget is a fixed :data:`DEFAULT_BUDGET` bytes, whatever the machine has free:
a notebook that fits ten models in a row gets the same traces as ten fresh processes, and a
run neither grows with the memory it finds nor is killed for taking it; ``memory_budget=``
bytes overrides it per call. :func:`plausible.sample` then switches to a storage that fits
(candidate form, or exact draws streamed to a Zarr store) or refuses with a
:class:`MemoryBudgetError` that names the size and the options, before any work, instead of
being killed by the operating system half-way.
"""

from __future__ import annotations

DEFAULT_BUDGET = 10**9
"""Bytes a trace may take by default (1 GB): modest beside the laptops and the 2-core, 24 GB
machines the project is measured on, and ample for 100,000 labels
(``benchmarks/crowd_panel.py``)."""


class MemoryBudgetError(ValueError):
    """A trace would not fit the memory budget (raised before sampling starts)."""


def memory_budget(budget: float | None = None) -> int:
    """``budget`` bytes (finite and > 0), or :data:`DEFAULT_BUDGET`."""
    if budget is None:
        return DEFAULT_BUDGET
    if isinstance(budget, bool) or not budget > 0 or budget == float("inf"):
        raise ValueError(f"memory_budget must be a number of bytes > 0, got {budget!r}")
    return int(budget)


def format_bytes(n: float) -> str:
    """``n`` bytes as ``'3.2 GB'`` (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")
