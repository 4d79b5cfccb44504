"""Settings of the metric layer (chunk size), in the style of ``xarray.set_options``.

The metrics stream over plausibility draws in chunks of at most ``chunk_elements``
(sample x item x class) values, so the extra memory a metric needs is bounded by a few
chunks, whatever the number of draws. ``2**24`` elements is 128 MiB of float64.
"""

from __future__ import annotations

OPTIONS: dict[str, int] = {"chunk_elements": 2**24}


def _validate_chunk_elements(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"chunk_elements must be a positive int, got {value!r}")
    return value


_VALIDATORS = {"chunk_elements": _validate_chunk_elements}


class set_options:  # noqa: N801 - lower case like xarray.set_options
    """Set metric options globally or, as a context manager, temporarily.

    ``chunk_elements``: largest number of plausibility values (sample x item x class)
    processed at once (default ``2**24``).

    >>> with set_options(chunk_elements=1000):
    ...     pass
    """

    def __init__(self, **kwargs):
        self._old = {}
        for key, value in kwargs.items():
            if key not in OPTIONS:
                raise ValueError(f"unknown option {key!r}; valid options: {sorted(OPTIONS)}")
            value = _VALIDATORS[key](value)
            self._old[key] = OPTIONS[key]
            OPTIONS[key] = value

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        OPTIONS.update(self._old)


def get_options() -> dict[str, int]:
    """A copy of the current metric options."""
    return dict(OPTIONS)
