"""The band around a vehicle's outline where :mod:`.terrain_obstacles` looks for terrain steps, and what it costs.

The outline is the chassis polygon plus a disc around each wheel (which holds the wheel's box at any steering angle);
the band is every point outside it and at most :data:`BAND` m from it, sampled on a lattice of
:data:`SAMPLE_SPACING` m fixed in the vehicle frame (:func:`band_samples`). :func:`band_bytes` tells, without
building it, how much memory the sampling takes: the loader refuses a vehicle whose band would exceed the budget of
:mod:`mvsim_core.memory_budget`. Plain numpy, no compiled code (cheap to import while a world file is read).

Frames and units: vehicle frame (x forward, y left, origin = reference point), metres.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

BAND = 0.2
"""m: depth of the band around the vehicle outline in which steps are looked for."""
SAMPLE_SPACING = 0.035
"""m: lattice spacing of the band samples; <= HALF_SIZE · sqrt(2) of :mod:`.terrain_obstacles`, so every cell lying
in the band is hit."""


def polygon_signed_distance(points: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Distance (m) of each point (N×2) to the outline of a simple polygon (P×2, any orientation): positive outside,
    negative inside (even-odd rule)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    a = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    b = np.roll(a, -1, axis=0)
    e = b - a  # (P, 2)
    rel = pts[:, None, :] - a[None, :, :]  # (N, P, 2)
    ee = np.maximum((e ** 2).sum(axis=1), 1e-300)
    t = np.clip((rel * e[None]).sum(axis=2) / ee[None], 0.0, 1.0)
    dist = np.sqrt(((rel - t[..., None] * e[None]) ** 2).sum(axis=2)).min(axis=1)
    py = pts[:, 1:2]
    crosses = (a[None, :, 1] > py) != (b[None, :, 1] > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_at = a[None, :, 0] + (py - a[None, :, 1]) * e[None, :, 0] / e[None, :, 1]
    inside = (crosses & (pts[:, 0:1] < x_at)).sum(axis=1) % 2 == 1
    return np.where(inside, -dist, dist)


def band_discs(wheels: Sequence[Any]) -> list[tuple[float, float, float]]:
    """(x, y, r) per wheel for :func:`band_samples`: the disc around the wheel centre (m, vehicle frame) that holds
    its ``diameter`` x ``width`` box at any steering angle."""
    return [(float(w.x), float(w.y), math.hypot(0.5 * w.diameter, 0.5 * w.width)) for w in wheels]


def band_bytes(footprint: np.ndarray, wheels: Sequence[tuple[float, float, float]], band: float = BAND,
               spacing: float = SAMPLE_SPACING) -> float:
    """Bytes that :func:`band_samples` works with for these arguments (its lattice points times the outline pieces
    each is compared with): a float, as large as the arguments say (inf for a NaN extent)."""
    fp = np.asarray(footprint, dtype=np.float64).reshape(-1, 2).tolist()  # a few points: plain Python is faster
    edges = len(fp) if len(fp) >= 3 else 0
    xs = [p[0] for p in fp] if edges else []
    ys = [p[1] for p in fp] if edges else []
    for x, y, r in wheels:
        xs += [x - r, x + r]
        ys += [y - r, y + r]
    if not xs:
        return 0.0
    ex, ey = max(xs) - min(xs) + 2.0 * band + spacing, max(ys) - min(ys) + 2.0 * band + spacing
    points = (ex / spacing + 1.0) * (ey / spacing + 1.0)
    size = points * (48.0 + 64.0 * edges + 24.0 * len(wheels))  # polygon_signed_distance: ~4 (N, P, 2) float arrays
    return size if size == size else math.inf


def band_samples(footprint: np.ndarray, wheels: Sequence[tuple[float, float, float]], band: float = BAND,
                 spacing: float = SAMPLE_SPACING) -> tuple[np.ndarray, np.ndarray]:
    """Band samples of one vehicle, in its frame.

    Args:
        footprint: (P, 2) chassis polygon (m, vehicle frame); fewer than 3 vertices: no chassis.
        wheels: (x, y, r) per wheel: a disc of radius r (m) around the wheel centre, which holds its box at any
            steering angle.
        band: depth of the band (m). spacing: lattice spacing (m), the lattice being anchored at the origin.

    Returns:
        (points (N, 2), distance of each to the outline (N,)): the lattice points outside the chassis and every
        wheel disc and at most ``band`` from the nearest of them; both empty when there is no shape.
    """
    fp = np.asarray(footprint, dtype=np.float64).reshape(-1, 2)
    discs = np.asarray(wheels, dtype=np.float64).reshape(-1, 3)
    lo, hi = [], []
    if len(fp) >= 3:
        lo.append(fp.min(axis=0))
        hi.append(fp.max(axis=0))
    for x, y, r in discs:
        lo.append(np.array([x - r, y - r]))
        hi.append(np.array([x + r, y + r]))
    if not lo:
        return np.zeros((0, 2)), np.zeros(0)
    lo_xy = np.floor((np.min(lo, axis=0) - band) / spacing) * spacing
    hi_xy = np.max(hi, axis=0) + band
    gx = np.arange(lo_xy[0], hi_xy[0] + 0.5 * spacing, spacing)
    gy = np.arange(lo_xy[1], hi_xy[1] + 0.5 * spacing, spacing)
    pts = np.stack(np.meshgrid(gx, gy, indexing="ij"), axis=-1).reshape(-1, 2)
    d = np.full(len(pts), np.inf)
    if len(fp) >= 3:
        d = polygon_signed_distance(pts, fp)
    for x, y, r in discs:
        d = np.minimum(d, np.hypot(pts[:, 0] - x, pts[:, 1] - y) - r)
    keep = (d >= 0.0) & (d <= band)
    return pts[keep], d[keep]
