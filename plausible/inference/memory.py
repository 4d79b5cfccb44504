"""The memory guard: a trace's size is known before it is sampled, and compared with a budget.

The default budget is :data:`DEFAULT_FRACTION` of the memory available when sampling starts
(``MemAvailable`` of ``/proc/meminfo``, else the free physical pages); ``memory_budget=``
bytes overrides it per call. :func:`plausible.sample` then switches to a storage that fits
(candidate form, or exact draws streamed to a Zarr store) or refuses with a
:class:`MemoryBudgetError` that names the size and the options, before any work, instead of
being killed by the operating system half-way.
"""

from __future__ import annotations

import os

DEFAULT_FRACTION = 0.5
"""Share of the available memory a trace may take by default."""


class MemoryBudgetError(ValueError):
    """A trace would not fit the memory budget (raised before sampling starts)."""


def available_memory() -> int:
    """Bytes of memory available to new allocations now."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def memory_budget(budget: float | None = None) -> int:
    """``budget`` bytes (finite and > 0), or :data:`DEFAULT_FRACTION` of the available memory."""
    if budget is None:
        return int(DEFAULT_FRACTION * available_memory())
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
