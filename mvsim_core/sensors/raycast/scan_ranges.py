"""The last pass of a 2D scan: cast distances to lidar readings, in one compiled loop over all rays of a batch.

For each ray with cast distance d (``inf`` = nothing hit within reach), maximum range ``reach``, standard normal draw z
and range-noise standard deviation σ (m): a hit reads ``min(max(d + z·σ, 0), reach)`` and is valid; a miss reads
``reach`` and is invalid. Readings are float32 (what observations carry). The same arithmetic, in the same order, as
the numpy expression it replaces — ``minimum(maximum(where(valid, d, reach) + where(valid, z·σ, 0), 0), reach)`` —
so results are bit-identical, in one pass instead of six over the batch.
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.jit import njit


@njit(cache=True)
def finish_ranges(dist: np.ndarray, reach: np.ndarray, normals: np.ndarray, sigma: np.ndarray, ranges: np.ndarray,
                  valid: np.ndarray) -> None:
    """Readings of R rays (see the module docstring).

    Args:
        dist: (R,) float64 cast distances (m; ``inf`` where nothing was hit).
        reach: (R,) float64 maximum range of each ray (m).
        normals, sigma: (R,) float64 standard normal draws and noise standard deviations (m), or both empty for no
            range noise.
        ranges: (R,) float32 out: the readings (m).
        valid: (R,) bool out: True where the ray hit something.
    """
    noisy = normals.shape[0] > 0
    for i in range(dist.shape[0]):
        d = dist[i]
        if math.isfinite(d):
            valid[i] = True
            r = d + normals[i] * sigma[i] if noisy else d
            if r < 0.0:
                r = 0.0
            if r > reach[i]:
                r = reach[i]
            ranges[i] = r
        else:
            valid[i] = False
            ranges[i] = reach[i]
