"""Named array attributes of an object, saved and put back in place: the parts of a world snapshot that are numpy
arrays (the physics' state rows, wheel spins, PID integrators, animation tracks, the sensors' schedule).

Arrays are put back *into* the arrays the object holds (``np.copyto``), never swapped for others: other objects keep
views of some of them (a vehicle's ``omega`` is a slice of the wheel arrays).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from mvsim_core.errors import SnapshotError


def save_arrays(obj: Any, names: Iterable[str]) -> dict[str, np.ndarray]:
    """A copy of each array attribute ``names`` of ``obj``."""
    return {n: np.array(getattr(obj, n), copy=True) for n in names}


def restore_arrays(obj: Any, saved: Mapping[str, np.ndarray]) -> None:
    """Copy each saved array into the attribute of the same name of ``obj``.

    Raises:
        SnapshotError: an array of another shape or type (the snapshot comes from another world); nothing is
            copied then.
    """
    for name, src in saved.items():
        dst = getattr(obj, name)
        if not isinstance(dst, np.ndarray) or dst.shape != src.shape or dst.dtype != src.dtype:
            shape = getattr(dst, "shape", None)
            raise SnapshotError(f"{type(obj).__name__}.{name} has shape {shape}, the snapshot's {src.shape}: the "
                                f"snapshot comes from another world")
    for name, src in saved.items():
        np.copyto(getattr(obj, name), src)
