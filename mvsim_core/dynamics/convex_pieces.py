"""Polygons cut into convex pieces that Box2D takes as polygon fixtures (reference §2.1, §2.4).

This binding's ``b2_maxPolygonVertices`` is **16** (upstream's fork: 12, stock Box2D: 8), so every upstream shape fits
one fixture; larger convex polygons are split into fans of at most 16 vertices, non-convex ones into convex pieces by
ear clipping plus a greedy merge of neighbouring triangles (:func:`convex_pieces`) -- Box2D itself would silently
replace a non-convex polygon by its convex hull. Degenerate polygons (|area| < 1e-6 m²) become a 1 cm box at their
vertex mean. Box2D 2.3 keeps its 1 cm polygon skin (``b2_polygonRadius``; upstream's fork: 2.5 mm): shapes touch when
their cores are 2 cm apart.
"""

from __future__ import annotations

import logging

import Box2D
import numpy as np

from mvsim_core.geometry.polygons import area, clean, ear_clip, is_convex, signed_area

log = logging.getLogger("mvsim_core.dynamics")

MAX_POLYGON_VERTICES = int(Box2D.b2_maxPolygonVertices)
"""Most vertices one Box2D polygon takes in this binding (16; upstream's fork 12, stock Box2D 8)."""
DEGENERATE_AREA = 1e-6
"""m²: polygons with less area become a :data:`TINY_BOX_HALF` box."""
TINY_BOX_HALF = 0.005
"""m: half side of the stand-in box of a degenerate polygon."""


def _merge_pieces(poly: np.ndarray, pieces: list[list[int]], max_vertices: int) -> list[list[int]]:
    """Greedily merge pieces (CCW index lists into ``poly``, P×2) that share an edge while the union stays strictly
    convex and within ``max_vertices``; ``pieces`` is changed in place and returned."""
    merged = True
    while merged:
        merged = False
        for i in range(len(pieces)):
            p = pieces[i]
            edges_p = {(p[k], p[(k + 1) % len(p)]): k for k in range(len(p))}
            for j in range(i + 1, len(pieces)):
                q = pieces[j]
                for kq in range(len(q)):
                    u, v = q[kq], q[(kq + 1) % len(q)]
                    kp = edges_p.get((v, u))
                    if kp is None:
                        continue
                    # p has v -> u at kp; walk p from u around to v, then q strictly between v and u
                    start = (kp + 1) % len(p)
                    walk_p = [p[(start + t) % len(p)] for t in range(len(p))]  # u ... v
                    walk_q = [q[(kq + 1 + t) % len(q)] for t in range(1, len(q) - 1)]  # after v ... before u
                    cand = walk_p + walk_q
                    if len(cand) <= max_vertices and is_convex(poly[cand]):
                        pieces[i] = cand
                        del pieces[j]
                        merged = True
                        break
                if merged:
                    break
            if merged:
                break
    return pieces


def convex_pieces(poly: np.ndarray, max_vertices: int = MAX_POLYGON_VERTICES) -> list[np.ndarray]:
    """Split a simple polygon (P×2, m, any orientation) into convex CCW pieces (each k×2, 3 <= k <= ``max_vertices``).

    Convex input: one piece, or a fan of pieces sharing vertex 0 when it has too many vertices. Non-convex input: ear
    clipping, then neighbouring triangles merged while convex. The pieces tile the polygon (same total area).
    Input on which ear clipping gets stuck (self-intersecting) falls back to the convex hull (logged). Degenerate
    input (|area| < 1e-6 m²) gives a 1 cm box at the vertex mean.
    """
    if max_vertices < 3:
        raise ValueError("max_vertices must be at least 3")
    raw = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    key = (raw.tobytes(), max_vertices)
    known = _KNOWN.get(key)
    if known is None:
        known, simple = _pieces(raw, max_vertices)
        if not simple:  # (said each time: a self-intersecting polygon logs its warning at every use)
            return known
        if len(_KNOWN) >= KNOWN_MAX:
            _KNOWN.clear()
        _KNOWN[key] = [q.copy() for q in known]
        return known
    return [q.copy() for q in known]


KNOWN_MAX = 1024
"""Polygons whose pieces :func:`convex_pieces` keeps (a fleet's vehicles share a handful of outlines; 10,000
small_robots spent 1.9 s of their start splitting the same chassis)."""

_KNOWN: dict[tuple[bytes, int], list[np.ndarray]] = {}


def _pieces(raw: np.ndarray, max_vertices: int) -> tuple[list[np.ndarray], bool]:
    """:func:`convex_pieces` of ``raw`` (P×2 float64), and False where the polygon was self-intersecting."""
    p = clean(raw)
    if len(p) < 3 or area(p) < DEGENERATE_AREA:
        c = raw.mean(axis=0) if len(raw) else np.zeros(2)
        h = TINY_BOX_HALF
        return [c + np.array([[-h, -h], [h, -h], [h, h], [-h, h]])], True
    if is_convex(p):
        n = len(p)
        if n <= max_vertices:
            return [p], True
        pieces = []
        k = 1
        while k < n - 1:
            pieces.append(p[[0, *range(k, min(k + max_vertices - 1, n))]])
            k += max_vertices - 2
        return pieces, True
    tris = ear_clip(p)
    if tris is None:
        from mvsim_core.io.meshes import convex_hull_2d

        log.warning("polygon with %d vertices is self-intersecting; using its convex hull for collisions", len(p))
        return convex_pieces(convex_hull_2d(p), max_vertices), False
    return [p[idx] for idx in _merge_pieces(p, tris, max_vertices) if signed_area(p[idx]) > 1e-12], True
