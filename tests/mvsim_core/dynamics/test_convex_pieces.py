"""Polygons cut into Box2D-sized convex pieces (mvsim_core.dynamics.convex_pieces)."""

from __future__ import annotations

import logging
import math

import Box2D
import numpy as np
import pytest

from mvsim_core.dynamics.convex_pieces import MAX_POLYGON_VERTICES, convex_pieces
from mvsim_core.geometry.polygons import signed_area


def test_this_binding_takes_16_vertices():
    assert MAX_POLYGON_VERTICES == Box2D.b2_maxPolygonVertices == 16


def _star(n_tips: int, r_out: float, r_in: float) -> np.ndarray:
    a = np.arange(2 * n_tips) * math.pi / n_tips
    r = np.where(np.arange(2 * n_tips) % 2 == 0, r_out, r_in)
    return np.column_stack([r * np.cos(a), r * np.sin(a)])


def _check_pieces(poly: np.ndarray, pieces: list[np.ndarray], max_vertices: int) -> None:
    assert sum(signed_area(p) for p in pieces) == pytest.approx(abs(signed_area(poly)), rel=1e-9)
    for p in pieces:
        assert 3 <= len(p) <= max_vertices
        n = len(p)
        for i in range(n):
            a, b, c = p[i - 1], p[i], p[(i + 1) % n]
            assert (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]) > 0  # convex, CCW


def test_convex_pieces():
    a = np.arange(12) * 2 * math.pi / 12
    gon12 = np.column_stack([np.cos(a), np.sin(a)])
    assert len(convex_pieces(gon12)) == 1  # fits the binding's 16
    pieces = convex_pieces(gon12, max_vertices=8)  # stock Box2D's limit
    assert len(pieces) == 2
    _check_pieces(gon12, pieces, 8)
    star = _star(6, 1.0, 0.4)  # 12 vertices, not convex
    pieces = convex_pieces(star[::-1])  # clockwise input too
    assert len(pieces) >= 2
    _check_pieces(star, pieces, MAX_POLYGON_VERTICES)
    ell = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=float)
    pieces = convex_pieces(ell)
    assert len(pieces) == 2
    _check_pieces(ell, pieces, MAX_POLYGON_VERTICES)
    # vertices on straight edges are dropped
    sq = np.array([[0, 0], [1, 0], [2, 0], [2, 1], [2, 2], [1, 2], [0, 2], [0, 1]], dtype=float)
    (p,) = convex_pieces(sq)
    assert len(p) == 4 and signed_area(p) == pytest.approx(4.0)
    # degenerate: a tiny box at the vertex mean
    (p,) = convex_pieces(np.array([[0, 0], [1, 0], [2, 0]], dtype=float))
    assert signed_area(p) == pytest.approx(1e-4) and p.mean(axis=0) == pytest.approx((1.0, 0.0))


def test_big_convex_polygons_become_fans_from_vertex_0():
    a = np.arange(40) * 2 * math.pi / 40
    gon40 = np.column_stack([np.cos(a), np.sin(a)])
    pieces = convex_pieces(gon40)
    assert [len(p) for p in pieces] == [16, 16, 12]  # 1..15, 15..29, 29..39, each with vertex 0
    assert all((p[0] == gon40[0]).all() for p in pieces)
    _check_pieces(gon40, pieces, 16)
    pieces = convex_pieces(gon40, max_vertices=3)
    assert len(pieces) == 38 and all(len(p) == 3 for p in pieces)
    with pytest.raises(ValueError, match="at least 3"):
        convex_pieces(gon40, max_vertices=2)


def test_self_intersecting_polygons_fall_back_to_their_convex_hull(caplog):
    crossed = np.array([[2, 2], [1, 3], [1, 2], [2, 0], [0, 1]], dtype=float)  # edge (1, 2)-(2, 0) crosses two others
    with caplog.at_level(logging.WARNING, logger="mvsim_core.dynamics"):
        pieces = convex_pieces(crossed)
    assert "self-intersecting" in caplog.text
    hull = np.array([[2, 0], [2, 2], [1, 3], [0, 1]], dtype=float)  # 3.5 m²
    _check_pieces(hull, pieces, MAX_POLYGON_VERTICES)
    assert len(pieces) == 1 and {tuple(v) for v in pieces[0].tolist()} == {tuple(v) for v in hull.tolist()}


def test_a_polygon_seen_again_gives_the_same_pieces_as_new_arrays():
    """A fleet's vehicles share their outline: the pieces are computed once, and each caller gets its own copies."""
    import mvsim_core.dynamics.convex_pieces as cp

    ell = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=float)
    first = convex_pieces(ell)
    assert (ell.tobytes(), MAX_POLYGON_VERTICES) in cp._KNOWN
    first[0][:] = 99.0  # (a caller that changes its pieces changes nobody else's)
    again = convex_pieces(ell.copy())
    assert len(again) == len(first) >= 2 and all(q.tobytes() == r.tobytes() for q, r in
                                                  zip(again, convex_pieces(ell), strict=True))
    assert again[0] is not convex_pieces(ell)[0] and 99.0 not in again[0]
    assert sum(signed_area(q) for q in again) == pytest.approx(3.0)


def test_a_self_intersecting_polygon_warns_at_every_use(caplog):
    crossed = np.array([[2, 2], [1, 3], [1, 2], [2, 0], [0, 1]], dtype=float)
    with caplog.at_level(logging.WARNING, logger="mvsim_core.dynamics"):
        convex_pieces(crossed)
        convex_pieces(crossed)
    assert caplog.text.count("self-intersecting") == 2
