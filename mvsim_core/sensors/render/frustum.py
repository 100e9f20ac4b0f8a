"""Frustum culling for the renderer: which parts of a packed scene can show in a view, and the index runs to draw.

A part is skipped when its box, carried by its node's transform, lies entirely outside one plane of the view volume
in clip space: x > w, x < −w, y > w, y < −w (the image's sides) or w ≤ 0 (behind the eye of a perspective view).
The test is conservative — a part it keeps may still be out of view — and never drops a part with a pixel in view,
since a box outside one half-space of a convex volume cannot meet it. Near and far planes are not used: every
projection of the renderer has w > 0 in view, whatever its depth mapping.
"""

from __future__ import annotations

import numpy as np

_CORNERS = np.array([[(i >> 0) & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=np.float64)
"""(8, 3) 0/1 selectors of a box's corners: corner = lo + sel · (hi − lo)."""

MARGIN = 1e-6
"""Relative slack of the plane tests (clip units per unit of |w| + 1): float rounding never culls an edge-on part."""


def boxes_in_view(box: np.ndarray, node: np.ndarray, transforms: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """Which boxes may show in the view.

    Args:
        box: (S, 2, 3) lo and hi of each part's vertices (m, its node's packed frame); NaN: always kept.
        node: (S,) int node of each part.
        transforms: (n_nodes, 3, 4) ``[R | t]`` from a node's packed frame to the rendered frame (m).
        clip: 4×4 rendered frame → clip space (projection · view).

    Returns:
        (S,) bool, True where the part may have a pixel in view.
    """
    if box.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    lo, hi = box[:, 0], box[:, 1]
    corners = lo[:, None, :] + _CORNERS[None] * (hi - lo)[:, None, :]  # (S, 8, 3)
    t = transforms[node]
    world = np.einsum("sij,skj->ski", t[:, :, :3], corners) + t[:, None, :, 3]
    h = world @ clip[:3, :3].T + clip[:3, 3]  # (S, 8, 3): x, y, z
    w = world @ clip[3, :3] + clip[3, 3]  # (S, 8)
    slack = MARGIN * (np.abs(w) + 1.0)
    x, y = h[..., 0], h[..., 1]
    out = ((x > w + slack).all(axis=1) | (x < -w - slack).all(axis=1) | (y > w + slack).all(axis=1)
           | (y < -w - slack).all(axis=1) | (w < -slack).all(axis=1))
    return ~out | ~np.isfinite(box).all(axis=(1, 2))


def draw_runs(spans: np.ndarray, keep: np.ndarray, n_draws: int) -> list[list[tuple[int, int]]]:
    """Per draw, the (first index, index count) runs of its kept parts, neighbouring parts merged.

    Args:
        spans: (S, 3) int (draw index, first index, count) of each part, in index order.
        keep: (S,) bool parts to draw.
        n_draws: number of draws.
    """
    runs: list[list[tuple[int, int]]] = [[] for _ in range(n_draws)]
    s = spans[keep]
    if s.shape[0] == 0:
        return runs
    d, first, count = s[:, 0], s[:, 1], s[:, 2]
    start = np.ones(len(s), dtype=bool)
    start[1:] = (d[1:] != d[:-1]) | (first[1:] != first[:-1] + count[:-1])
    begin = np.flatnonzero(start)
    end = np.append(begin[1:], len(s)) - 1
    for b, e in zip(begin.tolist(), end.tolist(), strict=True):
        runs[int(d[b])].append((int(first[b]), int(first[e] + count[e] - first[b])))
    return runs
