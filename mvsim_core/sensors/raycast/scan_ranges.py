"""The last pass of a 2D scan: cast distances to lidar readings, in one compiled loop over all rays of a batch.

For each ray with cast result d (its nearest hit, or its maximum range ``reach`` when nothing was hit within it),
standard normal draw z and range-noise standard deviation σ (m): a hit (d < reach) reads ``min(max(d + z·σ, 0),
reach)`` and is valid unless that reading is below the lidar's ``min_range``; a miss reads ``reach`` and is invalid.
Readings are float32 (what observations carry). The same arithmetic, in the same order, as the numpy expression it
replaces — ``minimum(maximum(where(hit, d, reach) + where(hit, z·σ, 0), 0), reach)``, then ``valid &= ranges >=
min_range`` on the float32 readings — so results are bit-identical, in one pass instead of eight over the batch.
"""

from __future__ import annotations

import numpy as np

from mvsim_core.jit import njit


@njit(cache=True)
def finish_ranges(dist: np.ndarray, reach: np.ndarray, normals: np.ndarray, sigma: np.ndarray, near: np.ndarray,
                  ranges: np.ndarray, valid: np.ndarray) -> None:
    """Readings of R rays (see the module docstring).

    Args:
        dist: (R,) float64 cast results (m): the nearest hit, or ``reach`` where nothing was hit.
        reach: (R,) float64 maximum range of each ray (m).
        normals, sigma: (R,) float64 standard normal draws and noise standard deviations (m), or both empty for no
            range noise.
        near: (R,) float32 minimum valid reading of each ray (m), or empty for none.
        ranges: (R,) float32 out: the readings (m).
        valid: (R,) bool out: True where the ray hit something at ``near`` or farther.
    """
    noisy = normals.shape[0] > 0
    limited = near.shape[0] > 0
    for i in range(dist.shape[0]):
        d = dist[i]
        if d < reach[i]:
            r = d + normals[i] * sigma[i] if noisy else d
            if r < 0.0:
                r = 0.0
            if r > reach[i]:
                r = reach[i]
            ranges[i] = r
            valid[i] = ranges[i] >= near[i] if limited else True
        else:
            valid[i] = False
            ranges[i] = reach[i]
