"""Plane polygons: area, orientation, vertex cleaning, convexity and triangulation (numpy only).

Conventions: a polygon is a (P, 2) float array of vertices (x, y) in metres, P >= 3 for a polygon with an inside;
the last vertex connects back to the first (the first vertex is not repeated at the end). Counter-clockwise (CCW)
order, seen from +z, is positive: its signed area is > 0. A corner ``a -> b -> c`` *turns left* when the cross
product ``(b - a) x (c - a)`` (m², twice the signed area of triangle abc) is > 0. Triangles and pieces are returned
as lists or arrays of vertex indices into the polygon they came from.

Users: the Box2D fixtures of footprints (:mod:`mvsim_core.dynamics.convex_pieces`), footprint parsing
(:mod:`mvsim_core.objects.block`) and the drawn prisms (:mod:`mvsim_core.sensors.render.mesh_primitives`).
"""

from __future__ import annotations

import math

import numpy as np

RENDER_MIN_EAR_TURN = 1e-15
"""m²: smallest left turn of an ear that :func:`triangulate_polygon` cuts."""
RENDER_FAN_TOLERANCE = 1e-12
"""m²: :func:`triangulate_polygon` fans a polygon whose corners turn right by at most this."""


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """``(a - o) x (b - o)`` (m²) of three points (2,): > 0 when o -> a -> b turns left."""
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


# ---------------------------------------------------------------------------------------------------- area
def signed_area(poly: np.ndarray) -> float:
    """Signed area (m²) of a polygon (P, 2) by the shoelace formula: > 0 counter-clockwise, < 0 clockwise, 0 for
    fewer than 3 vertices or collinear ones."""
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def area(poly: np.ndarray) -> float:
    """Area (m², >= 0) of a simple polygon (P, 2) in either order."""
    return abs(signed_area(poly))


# ---------------------------------------------------------------------------------------------------- orientation
def is_ccw(poly: np.ndarray) -> bool:
    """Whether the polygon (P, 2) is counter-clockwise (signed area > 0; False for a zero-area one)."""
    return signed_area(poly) > 0


def make_ccw(poly: np.ndarray) -> np.ndarray:
    """The polygon (P, 2, float64) counter-clockwise: a reversed copy when it is clockwise (signed area < 0), else the
    input as a float64 (P, 2) array (not copied when it already is float64)."""
    p = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    return p[::-1].copy() if signed_area(p) < 0 else p


def clean(poly: np.ndarray) -> np.ndarray:
    """Counter-clockwise copy (P', 2, float64) of a polygon (any order, anything reshapable to (P, 2)) without
    repeated vertices and without vertices on a straight line between their neighbours.

    With ``s`` the larger side (m) of the bounding box, a vertex goes when it is within ``1e-9 s`` of the previous
    one or when its corner's turn is at most ``1e-12 s²`` (m²) in magnitude; each removal restarts the scan. Fewer
    than 3 vertices may remain (degenerate input)."""
    p = make_ccw(poly)
    scale = max(float(np.ptp(p, axis=0).max()) if len(p) else 0.0, 1e-12)
    pts = [q for q in p]
    changed = True
    while changed and len(pts) >= 3:
        changed = False
        out: list[np.ndarray] = []
        n = len(pts)
        for i in range(n):
            a, b, c = pts[i - 1], pts[i], pts[(i + 1) % n]
            if np.hypot(*(b - a)) <= 1e-9 * scale or abs(_cross(a, b, c)) <= 1e-12 * scale * scale:
                changed = True
                pts = out + pts[i + 1:]  # drop b, rescan
                break
            out.append(b)
    return np.array(pts, dtype=np.float64).reshape(-1, 2)


# ---------------------------------------------------------------------------------------------------- convexity
def is_convex(poly: np.ndarray, *, tolerance: float | None = None) -> bool:
    """Whether a counter-clockwise polygon (P, 2) is convex (a clockwise polygon is not).

    Args:
        poly: the vertices, counter-clockwise.
        tolerance: None: strictly convex -- every corner ``v[i-1] -> v[i] -> v[i+1]`` turns left,
            ``(v[i] - v[i-1]) x (v[i+1] - v[i-1]) > 0``, so a straight corner fails. A number (m²): no corner turns
            right by more than it -- the cross product of consecutive edges ``(v[i] - v[i-1]) x (v[i+1] - v[i])``
            (the same turn up to rounding, computed vectorised) is ``>= -tolerance``, so straight corners pass.

    Fewer than 3 vertices: False.
    """
    n = len(poly)
    if n < 3:
        return False
    if tolerance is None:
        return all(_cross(poly[i - 1], poly[i], poly[(i + 1) % n]) > 0 for i in range(n))
    e = np.roll(poly, -1, axis=0) - poly
    turn = e[:, 0] * np.roll(e, -1, axis=0)[:, 1] - e[:, 1] * np.roll(e, -1, axis=0)[:, 0]
    return bool(np.all(turn >= -tolerance))


def in_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> bool:
    """Whether point ``p`` (2,) lies in the closed counter-clockwise triangle abc (its edges and corners count)."""
    return _cross(a, b, p) >= 0 and _cross(b, c, p) >= 0 and _cross(c, a, p) >= 0


# ---------------------------------------------------------------------------------------------------- triangulation
def _clip_ears(poly: np.ndarray, min_turn: float, nan_ears: bool) -> tuple[list[list[int]], list[int]]:
    """Cut ears off a CCW polygon (P, 2) until 3 vertices remain or no ear is left.

    An ear is a corner ``idx[k-1] -> idx[k] -> idx[k+1]`` of the remaining polygon that turns left by more than
    ``min_turn`` (m²) and holds no other remaining vertex (closed triangle); corners are tried in order from k = 0
    and the first ear found is cut, then the search restarts. A corner whose turn is NaN (non-finite coordinates)
    passes the turn test when ``nan_ears``. Returns the cut triangles (CCW index triples) and the indices of the
    vertices left (3 when clipping finished, more when it got stuck)."""
    idx = list(range(len(poly)))
    tris: list[list[int]] = []
    while len(idx) > 3:
        m = len(idx)
        for k in range(m):
            ia, ib, ic = idx[k - 1], idx[k], idx[(k + 1) % m]
            a, b, c = poly[ia], poly[ib], poly[ic]
            turn = _cross(a, b, c)
            if turn <= min_turn or (not nan_ears and math.isnan(turn)):
                continue
            if any(in_triangle(poly[j], a, b, c) for j in idx if j not in (ia, ib, ic)):
                continue
            tris.append([ia, ib, ic])
            del idx[k]
            break
        else:
            break
    return tris, idx


def ear_clip(poly: np.ndarray, *, min_turn: float = 0.0) -> list[list[int]] | None:
    """Triangulation of a simple counter-clockwise polygon (P, 2) by ear clipping.

    Args:
        poly: the vertices, counter-clockwise, P >= 3.
        min_turn: an ear's corner must turn left by more than this (m²); a corner whose turn is NaN (non-finite
            coordinates) passes.

    Returns:
        P - 2 triangles as CCW index triples into ``poly`` (in cutting order, the last one made of the three vertices
        left), or None when no ear is left before three vertices remain (clockwise input, some self-intersecting
        ones; a self-intersecting polygon may also get triangles that overlap). Fewer than 3 vertices: [].
    """
    if len(poly) < 3:
        return []
    tris, rest = _clip_ears(poly, min_turn, nan_ears=True)
    if len(rest) > 3:
        return None
    tris.append(rest)
    return tris


def triangulate_polygon(poly: np.ndarray) -> np.ndarray:
    """Triangles (T, 3) int64 of vertex indices covering a simple counter-clockwise polygon (P, 2), each CCW.

    A polygon none of whose corners turns right by more than :data:`RENDER_FAN_TOLERANCE` is fanned from vertex 0:
    ``[0, i, i + 1]`` for i = 1 .. P-2 (straight corners give zero-area triangles). Others are ear-clipped as by
    :func:`ear_clip` with ``min_turn`` = :data:`RENDER_MIN_EAR_TURN` (O(P³) worst case, P is small for footprints),
    except that a corner whose turn is NaN is never an ear and that when no ear is left (degenerate or
    self-intersecting input) the remaining vertices are fanned. Always P - 2 triangles for P >= 3; none for fewer
    vertices.
    """
    p = np.asarray(poly, dtype=np.float64)
    n = len(p)
    if n < 3:
        return np.zeros((0, 3), dtype=np.int64)
    if is_convex(p, tolerance=RENDER_FAN_TOLERANCE):
        return np.array([[0, i, i + 1] for i in range(1, n - 1)], dtype=np.int64)
    tris, rest = _clip_ears(p, RENDER_MIN_EAR_TURN, nan_ears=False)
    for i in range(1, len(rest) - 1):
        tris.append([rest[0], rest[i], rest[i + 1]])
    return np.array(tris, dtype=np.int64).reshape(-1, 3)
