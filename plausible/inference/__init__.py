"""Inference shared by every model: the kernel protocol (:mod:`.kernel`) and its one driver
(:mod:`.driver`), the :func:`sample` entry point (:mod:`.sampling`), the two bridges between
PyMC and kernels (:mod:`.bridges`: :func:`steps`, a model's PyMC step methods), the step
methods and exact draws several families share (:mod:`.step_methods`), and simulation-based
calibration of a sampler (:mod:`.sbc`). Each family's own samplers live in its folder,
``plausible.models.<family>``."""

from plausible.inference.declarations import (
    declare_gibbs,
    declare_log_likelihood,
    declared_gibbs,
    declared_log_likelihood,
)
from plausible.inference.step_methods.latent_class_gibbs import ClassGibbs
from plausible.inference.step_methods.difficulty_slice import DifficultySlice
from plausible.inference.step_methods.dirichlet_gibbs import DirichletGibbs
from plausible.inference.driver import sample_kernel
from plausible.inference.kernel import Kernel, PyMCKernel, Variable
from plausible.inference.bridges.as_pymc_step import KernelStep, steps
from plausible.inference.step_methods.nig_gibbs import NIGGibbs
from plausible.inference.sampling import add_log_likelihood, sample
from plausible.inference.sbc import SBCResult, simulation_based_calibration

__all__ = [
    "ClassGibbs",
    "DifficultySlice",
    "DirichletGibbs",
    "Kernel",
    "KernelStep",
    "NIGGibbs",
    "PyMCKernel",
    "SBCResult",
    "Variable",
    "add_log_likelihood",
    "declare_gibbs",
    "declare_log_likelihood",
    "declared_gibbs",
    "declared_log_likelihood",
    "sample",
    "sample_kernel",
    "simulation_based_calibration",
    "steps",
]
