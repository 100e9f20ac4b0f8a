"""numba versions of :mod:`mvsim_core.geometry.rotations` for compiled kernels.

Kept apart from :mod:`.rotations` so that code that only needs numpy (loading a world) does not import numba. The
functions here are compiled from the same expressions (:func:`~mvsim_core.geometry.rotations.rotation_terms`), so a
kernel calling them gets the floats of the numpy functions whenever numba's ``cos``/``sin`` equal :mod:`math`'s
(both call the C library). They are inlined into the calling kernel (``inline="always"``): no call overhead, and
the caller evaluates the same operations in the same order as if they were written out in place.
"""

from __future__ import annotations

import math

from mvsim_core.geometry import rotations as _rotations
from mvsim_core.jit import njit

rotation_terms = njit(cache=True, inline="always")(_rotations.rotation_terms)
"""Compiled :func:`mvsim_core.geometry.rotations.rotation_terms` (float64 scalars → 9-tuple, row-major)."""


@njit(cache=True, inline="always")
def rotation_entries(yaw: float, pitch: float, roll: float) -> _rotations.Entries9:
    """The 9 entries, row-major (r00, r01, r02, r10, …, r22), of ``R = Rz(yaw) · Ry(pitch) · Rx(roll)`` (angles in
    rad): compiled :func:`mvsim_core.geometry.rotations.rotation_entries`."""
    return rotation_terms(math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch), math.cos(roll),
                          math.sin(roll))
