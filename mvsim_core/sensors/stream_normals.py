"""Standard normals from many sensors' own generators in one compiled call (a fleet's noise draws).

Each sensor draws its noise from its own ``numpy.random.Generator`` (:attr:`~mvsim_core.sensors.base.Sensor.rng`).
One ``standard_normal(out=...)`` call per sensor costs about 3 µs of Python and numpy overhead, 3 ms per scan for a
fleet of a thousand lidars; :func:`draw_normals` makes every sensor's draws in one numba kernel instead. numba's
``Generator`` methods run numpy's own algorithms on the generator's own bit-generator state, so the draws are the
same numbers, and the generators are left where numpy would leave them (the tests compare both byte for byte).

The kernel is never in the ahead-of-time build (a ``Generator`` is no type it can export): its first use in a
process imports numba (about a second) and loads it from numba's cache, so :func:`~mvsim_core.sensors.base.own_normals`
uses it only for batches of at least :data:`BATCH` sensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mvsim_core.jit import njit

BATCH = 256
"""Fewer sensors than this draw one numpy call each (see the module docstring)."""

_LISTS: dict[tuple[int, ...], Any] = {}
"""numba typed lists of generators, by the generators' ids (a list holds its generators: the ids stay theirs)."""

_LISTS_MAX = 8


@njit(cache=True, built=False)
def _fill(gens: Any, spans: np.ndarray, draw: np.ndarray, out: np.ndarray) -> None:
    """``out[spans[k, 0]:spans[k, 1]]`` = standard normals from ``gens[k]``, for each k where ``draw[k]``."""
    for k in range(len(gens)):
        if draw[k]:
            g = gens[k]
            for j in range(spans[k, 0], spans[k, 1]):
                out[j] = g.standard_normal()


def draw_normals(gens: Sequence[np.random.Generator], spans: np.ndarray, draw: np.ndarray, out: np.ndarray) -> None:
    """What ``gens[k].standard_normal(out=out[a:b])`` for each ``(a, b) = spans[k]`` where ``draw[k]`` would do,
    in one compiled call (the same numbers; each generator advanced the same).

    Args:
        gens: the generators (all ``numpy.random.Generator``). spans: (S, 2) int64 start and stop per generator.
        draw: (S,) bool, which generators draw. out: float64, written at the spans of those that draw.
    """
    from numba.typed import List

    key = tuple(map(id, gens))
    typed = _LISTS.get(key)
    if typed is None:
        if len(_LISTS) >= _LISTS_MAX:
            _LISTS.clear()
        typed = _LISTS[key] = List(gens)
    _fill(typed, spans, draw, out)
