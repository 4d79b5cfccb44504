"""The kernel protocol: what a model's sampler is, to the one driver and to PyMC.

A **kernel** is the part of a sampler that knows the model: one sweep of its full
conditionals, each written once. Everything else — seeds, chains in threads, warm-up and
thinning, preallocated draws, the DataTree — is the driver's
(:func:`plausible.inference.driver.sample_kernel`), and the same kernel runs inside PyMC's
``pm.sample`` through :class:`plausible.inference.bridges.as_pymc_step.KernelStep`.

A kernel declares

* ``variables``: the posterior variables a kept sweep records, name -> :class:`Variable`
  (dims, shape, dtype), in the order the trace lists them;
* ``stats``: the per-sweep statistics recorded beside them (``sample_stats``; may be empty);
* ``default_tune`` and ``default_thin``: the warm-up sweeps and the sweeps per kept draw it
  needs by default;

and implements

* ``start(rng) -> state``: a chain's first state, dispersed between chains by ``rng`` (its
  chain's own generator);
* ``sweep(rng, state, out) -> state``: one sweep, every random number from ``rng``; when
  ``out`` is given (a kept sweep), the new draw is written into its views, ``out[name][...] =
  value`` for every name of ``variables`` and ``stats`` that ``out`` holds (a variable left
  out is not wanted: the kernel may skip computing it). ``state`` may be updated in place.

A kernel subclasses :class:`Kernel` (or :class:`PyMCKernel`), as a PyMC step method
subclasses ``BlockedStep``; the optional members below have defaults there that mean "the
kernel does not do this", so the driver reads them without probing.

Optional: ``max_threads`` caps the threads its chains run in (1: one after another);
``close(state)`` releases what ``start`` acquired (thread pools);
``chain_stats`` (name -> :class:`Variable`) are statistics of a whole chain, which
``finish(state, out)`` writes after its last sweep (acceptance rates of adapted moves, a
chain's final state); ``resume(values, rng) -> state`` starts a chain from such values of an
earlier run (``{name: (*shape)}``, a warm start);
``split_at``, an attribute of a kernel that summarises its own kept draws, is set by the
driver before each block of draws to the index of the kept draw that begins each chain's
second half (None when it lies in an earlier block), for the summaries' split R-hat;
``lazy_variables`` names variables that ``compute_when_read(values) -> {name: dask array}``
computes from the stored ones ``values`` (name: ``(chain, draw, ...)``) when read, for when
their per-draw arrays would not fit in memory (the driver then leaves them out of ``out``). For PyMC (:class:`PyMCKernel`): ``load(values, rng) -> state`` builds a
state from the model's free variables (constrained values, by name), drawing any
augmentation the model sums out from its exact conditional, and ``to_point(state, draw) ->
{name: value}`` gives the model's free variables after a sweep that recorded ``draw`` (the
``out`` of that sweep).

Exact independent draws (Dirichlet, PrIRN, Normal–Inverse-Gamma with fixed hyper-parameters)
are kernels whose sweep ignores the state: such a kernel sets ``independent = True``, and
its ``sweep`` writes a whole block of draws at once, ``out[name]`` of shape ``(n, *shape)``
(no warm-up, no thinning; :class:`plausible.inference.exact.ExactKernel`).

A kernel whose sweeps adapt during the warm-up (slice widths, fitted proposals) is built
with the warm-up's length and gives it as ``default_tune``; it stops adapting after that
many sweeps of a chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from abc import ABC, abstractmethod
from types import MappingProxyType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Variable:
    """One recorded variable of a kernel: ``dims`` and ``shape`` of one draw, ``dtype``."""

    dims: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: Any = np.float64

    def __post_init__(self):
        if len(self.dims) != len(self.shape):
            raise ValueError(f"dims {self.dims} and shape {self.shape} differ in length")

    @property
    def nbytes(self) -> int:
        """Bytes of one draw."""
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


class Kernel(ABC):
    """One model's sweep (module docstring). A subclass sets ``name``, ``variables``,
    ``stats``, ``default_tune`` and ``default_thin`` and implements :meth:`start` and
    :meth:`sweep`; every other member has the default of a kernel without it."""

    name: str
    variables: Mapping[str, Variable]
    stats: Mapping[str, Variable]
    default_tune: int
    default_thin: int
    independent: bool = False
    """Whether a sweep ignores the state and writes a whole block of independent draws."""
    max_threads: int | None = None
    """The most threads its chains may run in (None: no cap)."""
    chain_stats: Mapping[str, Variable] = MappingProxyType({})
    """Statistics of a whole chain, written by :meth:`finish`."""
    lazy_variables: tuple[str, ...] = ()
    """Variables :meth:`compute_when_read` computes from the stored ones when read."""
    split_at: int | None = None
    """Set by the driver before each block of draws: the index of the kept draw that begins
    each chain's second half (None when it lies in an earlier block)."""

    @abstractmethod
    def start(self, rng: np.random.Generator) -> Any:
        """A chain's first state, dispersed between chains by ``rng`` (module docstring)."""

    @abstractmethod
    def sweep(self, rng: np.random.Generator, state: Any,
              out: Mapping[str, np.ndarray] | None) -> Any:
        """One sweep from ``state``, writing the draw into ``out`` on a kept sweep (module
        docstring)."""

    def resume(self, values: Mapping[str, np.ndarray], rng: np.random.Generator) -> Any:
        """A chain's state from an earlier run's final values (a warm start); a kernel that
        resumes overrides it (:attr:`resumes`)."""
        raise NotImplementedError(f"the {self.name} kernel does not resume")

    @property
    def resumes(self) -> bool:
        """Whether the kernel starts a chain from an earlier run's values (:meth:`resume`)."""
        return type(self).resume is not Kernel.resume

    def finish(self, state: Any, out: Mapping[str, np.ndarray]) -> None:
        """Write the chain's ``chain_stats`` into ``out`` after its last sweep (none by
        default)."""

    def close(self, state: Any) -> None:
        """Release what :meth:`start` acquired (nothing by default)."""

    def compute_when_read(self, values: Mapping[str, Any]) -> dict:
        """``{name: dask array}`` of the ``lazy_variables`` from the stored ``values``."""
        raise NotImplementedError(f"the {self.name} kernel computes no variable when read")


class PyMCKernel(Kernel):
    """A kernel that also runs as a PyMC step: its state can be built from the model's free
    variables and read back as them (module docstring)."""

    @abstractmethod
    def load(self, values: Mapping[str, np.ndarray], rng: np.random.Generator) -> Any:
        """A state built from the model's free variables ``values`` (module docstring)."""

    @abstractmethod
    def to_point(self, state: Any, draw: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]:
        """The model's free variables after the sweep that recorded ``draw`` (module docstring)."""


def nbytes_per_draw(kernel: Kernel, skip=()) -> int:
    """Bytes one kept draw of one chain takes in the trace (``skip``: variables left out)."""
    return sum(v.nbytes for name, v in {**kernel.variables, **kernel.stats}.items()
               if name not in skip)


__all__ = ["Kernel", "PyMCKernel", "Variable", "nbytes_per_draw"]
