"""Running the chains of a compiled sampler in threads.

The compiled kernels release the GIL, so chains run in parallel threads of one process (no
pickling, shared read-only data). Every chain draws from its own generator, seeded from
child ``c`` of ``numpy.random.SeedSequence(seed).spawn(chains)``, so the draws depend on the
seed only, never on the number of threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor


def available_cores() -> int:
    """CPUs this process may run on (the affinity mask where the platform has one, else
    ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_cores(chains: int) -> int:
    """``min(chains, available_cores())``: more threads than chains would idle."""
    return max(1, min(int(chains), available_cores()))


def run_chains(run: Callable, jobs: Sequence[tuple], cores: int) -> None:
    """``run(*job, stop=event)`` for every job, on ``min(cores, len(jobs))`` threads (in the
    calling thread when that is one). ``run`` should return early once ``stop`` is set: the
    first exception (or a KeyboardInterrupt) sets it, cancels the jobs not started and is
    re-raised."""
    stop = threading.Event()
    if cores == 1 or len(jobs) == 1:
        for job in jobs:
            run(*job, stop=stop)
        return
    with ThreadPoolExecutor(max_workers=min(cores, len(jobs))) as pool:
        futures = [pool.submit(run, *job, stop=stop) for job in jobs]
        try:
            for future in futures:
                future.result()  # re-raises a chain's exception
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
