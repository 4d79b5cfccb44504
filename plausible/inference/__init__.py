"""Inference: the kernel protocol and its one driver, conjugate Gibbs steps, exact slice scans,
the compiled samplers' kernels, :func:`steps` (a model's PyMC step methods), the
:func:`sample` entry point and simulation-based calibration of a sampler."""

from plausible.inference.annotator_beta_collapsed import AnnotatorBetaCollapsedGibbs
from plausible.inference.annotator_beta_gibbs import AnnotatorBetaGibbs
from plausible.inference.declarations import (
    declare_gibbs,
    declare_log_likelihood,
    declared_gibbs,
    declared_log_likelihood,
)
from plausible.inference.latent_class_gibbs import ClassGibbs
from plausible.inference.difficulty_slice import DifficultySlice
from plausible.inference.dirichlet_gibbs import DirichletGibbs
from plausible.inference.driver import sample_kernel
from plausible.inference.kernel import Kernel, PyMCKernel, Variable
from plausible.inference.kernel_step import KernelStep, steps
from plausible.inference.nig_gibbs import NIGGibbs
from plausible.inference.plackett_luce_gibbs import PlackettLuceGibbs
from plausible.inference.plackett_luce_sampler import sample_candidates
from plausible.inference.sampling import add_log_likelihood, sample
from plausible.inference.sbc import SBCResult, simulation_based_calibration

__all__ = [
    "AnnotatorBetaCollapsedGibbs",
    "AnnotatorBetaGibbs",
    "ClassGibbs",
    "DifficultySlice",
    "DirichletGibbs",
    "Kernel",
    "KernelStep",
    "NIGGibbs",
    "PlackettLuceGibbs",
    "PyMCKernel",
    "SBCResult",
    "Variable",
    "add_log_likelihood",
    "declare_gibbs",
    "declare_log_likelihood",
    "declared_gibbs",
    "declared_log_likelihood",
    "sample",
    "sample_candidates",
    "sample_kernel",
    "simulation_based_calibration",
    "steps",
]
