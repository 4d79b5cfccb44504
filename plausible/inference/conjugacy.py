"""Which free variables of a model an exact Gibbs step covers.

A model builder knows its conjugate structure; :func:`plausible.sample` does not. The
builder records it with :func:`declare_gibbs` on the ``pm.Model`` it returns, and
``sample`` instantiates the declared steps and leaves every other free variable to
PyMC's automatic assignment (NUTS, slice, ...).
"""

from dataclasses import dataclass, field
from typing import Any

import pymc as pm

_ATTRIBUTE = "_plausible_gibbs"


@dataclass(frozen=True)
class GibbsDeclaration:
    """A Gibbs step class, the random variables it updates, and its keyword arguments."""

    step: type
    vars: tuple
    kwargs: dict[str, Any] = field(default_factory=dict)

    def instantiate(self, model: pm.Model):
        return self.step(list(self.vars), model=model, **self.kwargs)


def declare_gibbs(model: pm.Model, step: type, vars, *, first: bool = False, **kwargs) -> None:
    """Record that ``step(vars, **kwargs)`` samples ``vars`` exactly given the rest (after the
    steps declared before it in each iteration, or before all of them with ``first``)."""
    declared = getattr(model, _ATTRIBUTE, ())
    new = GibbsDeclaration(step, tuple(vars), kwargs)
    setattr(model, _ATTRIBUTE, (new, *declared) if first else (*declared, new))


def declared_gibbs(model: pm.Model) -> tuple[GibbsDeclaration, ...]:
    """The Gibbs steps a model builder declared, in the order they run in an iteration."""
    return getattr(model, _ATTRIBUTE, ())
