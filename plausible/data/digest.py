"""Stable content hashes of the annotation containers.

:func:`content_hash` is the SHA-256 of a canonical encoding of every field of a container
dataclass, in field order: numeric and boolean arrays as their little-endian dtype, shape and
bytes; arrays of ids (strings, mixed objects) element by element as ``type name: repr``;
``None`` and scalars by their ``repr``. Equal data give equal hashes in every process and on
every machine (Python's own ``hash`` of a string changes per process); a sharded run records
the hash of its data and refuses to resume on other data.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np


def _encode(value) -> bytes:
    if value is None or isinstance(value, (bool, int, float, str, tuple)):
        return repr(value).encode()
    array = np.asarray(value)
    if array.dtype.kind in "biuf":
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        return f"{array.dtype.str}{array.shape}".encode() + array.tobytes()
    items = (x.item() if isinstance(x, np.generic) else x for x in array.ravel())
    return f"{array.shape}".encode() + "\x1f".join(
        f"{type(x).__name__}:{x!r}" for x in items).encode()


def content_hash(container) -> str:
    """Hex SHA-256 of every field of the dataclass ``container`` (see the module docstring)."""
    digest = hashlib.sha256(type(container).__name__.encode())
    for field in dataclasses.fields(container):
        encoded = _encode(getattr(container, field.name))
        digest.update(field.name.encode() + b"\x00" + str(len(encoded)).encode() + b"\x00")
        digest.update(encoded)
    return digest.hexdigest()
