"""Inference: conjugate Gibbs step methods and the :func:`sample` entry point."""

from plausible.inference.annotator_beta_gibbs import AnnotatorBetaGibbs
from plausible.inference import distributed
from plausible.inference.conjugacy import declare_gibbs, declared_gibbs
from plausible.inference.difficulty_gibbs import ClassGibbs
from plausible.inference.difficulty_slice import DifficultySlice
from plausible.inference.dirichlet_gibbs import DirichletGibbs
from plausible.inference.nig_gibbs import NIGGibbs
from plausible.inference.plackett_luce_gibbs import PlackettLuceGibbs
from plausible.inference.plackett_luce_sampler import sample_candidates
from plausible.inference.sampling import sample

__all__ = [
    "AnnotatorBetaGibbs",
    "ClassGibbs",
    "DifficultySlice",
    "DirichletGibbs",
    "NIGGibbs",
    "PlackettLuceGibbs",
    "declare_gibbs",
    "declared_gibbs",
    "distributed",
    "sample",
    "sample_candidates",
]
