"""Point clouds from ray-cast distances: the returns one 3D lidar keeps, with their noise, beam and azimuth.

:func:`assemble_cloud` turns the distances of one sensor's rays (from
:meth:`~mvsim_core.sensors.raycast.rays3d.RaycastScene3D.cast`) into the arrays of a
:class:`~mvsim_core.sensors.lidar3d.PointCloud3D`, in one compiled call (one loop counts the returns, one fills).
"""

from __future__ import annotations

import numpy as np

from mvsim_core.jit import njit


@njit(cache=True)
def assemble_cloud(dist: np.ndarray, inten: np.ndarray, dirs: np.ndarray, noise: np.ndarray, r0: int, r1: int,
                   sigma: float, min_range: float, max_range: float, n_rings: int,
                   with_intensity: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The returns of rays r0 .. r1 − 1 (one sensor): range = dist + sigma·noise (m; noise ignored when sigma is 0),
    kept when min_range ≤ range ≤ max_range (a miss, inf, never is).

    Args:
        dist: (N,) hit distances (m, inf: none). inten: (N,) float32 surface intensities. dirs: (N, 3) unit ray
            directions in the sensor frame. noise: (N,) standard normal draws (unused when sigma is 0).
        n_rings: beams per azimuth (ray r is azimuth (r − r0) // n_rings, ring (r − r0) % n_rings).

    Returns:
        points (K, 3) float32 (m, sensor frame), intensity (K,) float32 (0 when not ``with_intensity``), ring (K,)
        uint16, azimuth index (K,) uint32, range (K,) float32.
    """
    use_noise = sigma > 0.0
    k = 0
    for r in range(r0, r1):
        d = dist[r] + sigma * noise[r] if use_noise else dist[r]
        if min_range <= d <= max_range:
            k += 1
    pts = np.empty((k, 3), dtype=np.float32)
    out_i = np.zeros(k, dtype=np.float32)
    ring = np.empty(k, dtype=np.uint16)
    az = np.empty(k, dtype=np.uint32)
    rng = np.empty(k, dtype=np.float32)
    k = 0
    for r in range(r0, r1):
        d = dist[r] + sigma * noise[r] if use_noise else dist[r]
        if min_range <= d <= max_range:
            pts[k, 0] = dirs[r, 0] * d
            pts[k, 1] = dirs[r, 1] * d
            pts[k, 2] = dirs[r, 2] * d
            if with_intensity:
                out_i[k] = inten[r]
            j = r - r0
            ring[k] = j % n_rings
            az[k] = j // n_rings
            rng[k] = d
            k += 1
    return pts, out_i, ring, az, rng
