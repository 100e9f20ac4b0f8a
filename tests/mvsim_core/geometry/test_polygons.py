"""Plane polygons (mvsim_core.geometry.polygons): areas, orientation, cleaning, convexity, point in triangle, ear
clipping and the triangulation of drawn footprints."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.geometry.polygons import (
    area,
    clean,
    ear_clip,
    in_triangle,
    is_ccw,
    is_convex,
    make_ccw,
    signed_area,
    triangulate_polygon,
)

UNIT_SQUARE = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)  # CCW, 1 m²
TRIANGLE = np.array([[0, 0], [4, 0], [0, 3]], dtype=float)  # CCW, 6 m²
L_SHAPE = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=float)  # CCW, 3 m², reflex at (1, 1)


def star(n_tips: int = 6, r_out: float = 1.0, r_in: float = 0.4) -> np.ndarray:
    a = np.arange(2 * n_tips) * math.pi / n_tips
    r = np.where(np.arange(2 * n_tips) % 2 == 0, r_out, r_in)
    return np.column_stack([r * np.cos(a), r * np.sin(a)])


def star_area(n_tips: int = 6, r_out: float = 1.0, r_in: float = 0.4) -> float:
    # 2n triangles (centre, tip, notch) with angle pi/n at the centre
    return 2 * n_tips * 0.5 * r_out * r_in * math.sin(math.pi / n_tips)


def tri_areas(poly: np.ndarray, tris) -> np.ndarray:
    p = np.asarray(poly)[np.asarray(tris)]
    return 0.5 * ((p[:, 1, 0] - p[:, 0, 0]) * (p[:, 2, 1] - p[:, 0, 1])
                  - (p[:, 1, 1] - p[:, 0, 1]) * (p[:, 2, 0] - p[:, 0, 0]))


def inside_polygon(q: np.ndarray, poly: np.ndarray) -> bool:
    """Even-odd rule, an independent check."""
    x, y = q
    inside = False
    for (x0, y0), (x1, y1) in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    return inside


def check_triangulation(poly: np.ndarray, tris) -> None:
    """P - 2 CCW triangles of positive area, inside the polygon, covering its area."""
    tris = np.asarray(tris)
    assert tris.shape == (len(poly) - 2, 3)
    assert sorted(set(tris.ravel().tolist())) == list(range(len(poly)))
    areas = tri_areas(poly, tris)
    assert (areas > 0).all()
    assert areas.sum() == pytest.approx(signed_area(poly), rel=1e-12)
    for t in tris:
        assert inside_polygon(poly[t].mean(axis=0), poly)


# ---------------------------------------------------------------------------------------------------- area
@pytest.mark.parametrize(("poly", "want"), [(UNIT_SQUARE, 1.0), (UNIT_SQUARE[::-1], -1.0), (TRIANGLE, 6.0),
                                            (TRIANGLE[::-1], -6.0), (L_SHAPE, 3.0), (L_SHAPE[::-1], -3.0)])
def test_signed_and_absolute_area(poly, want):
    assert signed_area(poly) == want
    assert area(poly) == abs(want)


def test_area_does_not_depend_on_the_starting_vertex_or_a_translation():
    s = star()
    assert signed_area(s) == pytest.approx(star_area(), rel=1e-12)
    assert signed_area(np.roll(s, 5, axis=0)) == pytest.approx(star_area(), rel=1e-12)
    assert signed_area(s + (1e3, -2e3)) == pytest.approx(star_area(), rel=1e-9)


def test_degenerate_areas_are_zero():
    assert signed_area(np.array([[0, 0], [1, 1], [2, 2]], dtype=float)) == 0.0  # collinear
    assert signed_area(np.array([[0, 0], [1, 0]], dtype=float)) == 0.0  # a segment
    assert signed_area(np.zeros((0, 2))) == 0.0


# ---------------------------------------------------------------------------------------------------- orientation
def test_orientation():
    assert is_ccw(UNIT_SQUARE) and is_ccw(L_SHAPE)
    assert not is_ccw(UNIT_SQUARE[::-1]) and not is_ccw(np.array([[0, 0], [1, 1], [2, 2]], dtype=float))
    ccw = make_ccw(L_SHAPE)
    assert ccw.tolist() == L_SHAPE.tolist() and np.shares_memory(ccw, L_SHAPE)  # already CCW: not copied
    cw = L_SHAPE[::-1]
    fixed = make_ccw(cw)
    assert fixed.tolist() == L_SHAPE.tolist() and signed_area(fixed) == 3.0
    assert fixed.flags.c_contiguous and not np.shares_memory(fixed, cw)
    assert make_ccw([[0, 0], [0, 1], [1, 0]]).tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]  # lists too


# ---------------------------------------------------------------------------------------------------- cleaning
def test_clean_drops_repeated_and_collinear_vertices_and_orients_ccw():
    sq = np.array([[0, 0], [1, 0], [2, 0], [2, 1], [2, 2], [2, 2], [1, 2], [0, 2], [0, 1], [0, 0]], dtype=float)
    c = clean(sq[::-1])  # clockwise, midpoints on edges, a repeated vertex and the first one closing the ring
    assert c.shape == (4, 2) and signed_area(c) == 4.0
    assert {tuple(v) for v in c.tolist()} == {(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)}
    assert clean(L_SHAPE).tolist() == L_SHAPE.tolist()  # nothing to drop
    near = np.array([[0, 0], [1, 0], [1, 1], [1 + 1e-13, 1 + 1e-13], [0, 1]], dtype=float)
    assert len(clean(near)) == 4  # within 1e-9 of the bounding-box size: a repeat


def test_clean_of_degenerate_input_leaves_fewer_than_three_vertices():
    assert len(clean(np.array([[0, 0], [1, 1], [2, 2]], dtype=float))) < 3
    assert len(clean(np.array([[0, 0], [0, 0], [0, 0]], dtype=float))) < 3
    assert clean(np.zeros((0, 2))).shape == (0, 2)


# ---------------------------------------------------------------------------------------------------- convexity
def test_convexity():
    assert is_convex(UNIT_SQUARE) and is_convex(TRIANGLE)
    assert not is_convex(UNIT_SQUARE[::-1])  # clockwise
    assert not is_convex(L_SHAPE) and not is_convex(star())
    with_midpoint = np.array([[0, 0], [1, 0], [2, 0], [2, 2], [0, 2]], dtype=float)
    assert not is_convex(with_midpoint)  # strict: a straight corner fails
    assert is_convex(with_midpoint, tolerance=1e-12)  # weak: it passes
    dent = np.array([[0, 0], [1, 1e-6], [2, 0], [2, 2], [0, 2]], dtype=float)  # turns right by 2e-6 m²
    assert not is_convex(dent, tolerance=1e-12) and is_convex(dent, tolerance=1e-5)
    assert not is_convex(UNIT_SQUARE[:2]) and not is_convex(UNIT_SQUARE[:2], tolerance=1.0)


def test_point_in_closed_triangle():
    a, b, c = TRIANGLE
    assert in_triangle(np.array([1.0, 1.0]), a, b, c)
    assert in_triangle(np.array([2.0, 0.0]), a, b, c)  # on an edge
    assert in_triangle(np.array([4.0, 0.0]), a, b, c)  # a corner
    assert in_triangle(np.array([2.0, 1.5]), a, b, c)  # on the hypotenuse
    assert not in_triangle(np.array([2.0, 1.6]), a, b, c)
    assert not in_triangle(np.array([-0.1, 1.0]), a, b, c)
    assert not in_triangle(np.array([1.0, 1.0]), a, c, b)  # clockwise triangle: nothing is inside


# ---------------------------------------------------------------------------------------------------- ear clipping
@pytest.mark.parametrize("poly", [UNIT_SQUARE, TRIANGLE, L_SHAPE, star(), star(5, 2.0, 0.3),
                                  np.array([[0, 0], [3, 0], [3, 3], [2, 1], [1, 3], [0, 3]], dtype=float)])
def test_ear_clip_convex_and_concave(poly):
    check_triangulation(poly, ear_clip(poly))


def test_ear_clip_cuts_the_first_ear_in_vertex_order():
    # at vertex 0 the corner 5 -> 0 -> 1 holds the reflex vertex 3 on its edge (closed triangle): not an ear
    assert ear_clip(L_SHAPE) == [[0, 1, 2], [0, 2, 3], [5, 0, 3], [3, 4, 5]]
    assert ear_clip(UNIT_SQUARE) == [[3, 0, 1], [1, 2, 3]]


def test_ear_clip_gets_stuck_on_clockwise_input():
    assert ear_clip(L_SHAPE[::-1]) is None  # only the reflex corner turns left; after it, none does
    assert ear_clip(UNIT_SQUARE[::-1]) is None
    assert ear_clip(UNIT_SQUARE[:2]) == []


def test_ear_clip_min_turn():
    assert ear_clip(UNIT_SQUARE, min_turn=0.99) == [[3, 0, 1], [1, 2, 3]]
    assert ear_clip(UNIT_SQUARE, min_turn=1.0) is None  # every corner turns by exactly 1 m²: not more
    assert ear_clip(L_SHAPE, min_turn=1.5) is None


# ---------------------------------------------------------------------------------------------------- drawn footprints
def test_triangulate_polygon_fans_convex_polygons():
    assert triangulate_polygon(UNIT_SQUARE).tolist() == [[0, 1, 2], [0, 2, 3]]
    hexagon = np.column_stack([np.cos(np.arange(6) * math.pi / 3), np.sin(np.arange(6) * math.pi / 3)])
    tris = triangulate_polygon(hexagon)
    assert tris.dtype == np.int64 and tris.tolist() == [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]]
    check_triangulation(hexagon, tris)
    # straight corners are fanned too, giving zero-area triangles
    with_midpoint = np.array([[0, 0], [1, 0], [2, 0], [2, 2], [0, 2]], dtype=float)
    tris = triangulate_polygon(with_midpoint)
    assert tris.tolist() == [[0, 1, 2], [0, 2, 3], [0, 3, 4]]
    assert tri_areas(with_midpoint, tris).tolist() == [0.0, 2.0, 2.0]


def test_triangulate_polygon_ear_clips_concave_polygons():
    tris = triangulate_polygon(L_SHAPE)
    assert tris.dtype == np.int64 and tris.tolist() == ear_clip(L_SHAPE)
    check_triangulation(L_SHAPE, tris)
    for poly in (star(), star(8, 1.0, 0.9), star(3, 5.0, 0.1)):
        check_triangulation(poly, triangulate_polygon(poly))


def test_triangulate_polygon_with_collinear_and_repeated_vertices():
    midpoint = np.array([[0, 0], [1, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=float)  # on the bottom edge
    tris = triangulate_polygon(midpoint)
    assert tris.tolist() == [[6, 0, 1], [1, 2, 3], [1, 3, 4], [6, 1, 4], [4, 5, 6]]
    check_triangulation(midpoint, tris)
    repeated = np.array([[0, 0], [2, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=float)  # a convex corner twice
    tris = triangulate_polygon(repeated)
    assert tris.shape == (5, 3)
    areas = tri_areas(repeated, tris)
    assert sorted(areas.tolist()) == [0.0, 0.5, 0.5, 1.0, 1.0] and areas.sum() == 3.0
    for t in tris[areas > 0]:
        assert inside_polygon(repeated[t].mean(axis=0), repeated)


L_FROM_2_0 = np.array([[2, 0], [2, 1], [1, 1], [1, 2], [0, 2], [0, 0]], dtype=float)  # the L, not star-shaped from v0
NOTCH = np.array([1.2, 1.5])  # outside the L, inside the fan triangle (2, 0), (1, 2), (0, 2)


def test_triangulate_polygon_covers_only_the_polygon():
    tris = triangulate_polygon(L_FROM_2_0)
    check_triangulation(L_FROM_2_0, tris)
    assert not any(in_triangle(NOTCH, *L_FROM_2_0[t]) for t in tris)


@pytest.mark.xfail(strict=True, reason="a repeated reflex vertex gives zero turns around it, so the fan test passes")
def test_triangulate_polygon_with_a_repeated_reflex_vertex():
    poly = np.insert(L_FROM_2_0, 2, L_FROM_2_0[2], axis=0)
    assert not any(in_triangle(NOTCH, *poly[t]) for t in triangulate_polygon(poly))


def test_triangulate_polygon_of_degenerate_input():
    assert triangulate_polygon(UNIT_SQUARE[:2]).shape == (0, 3)
    assert triangulate_polygon(np.zeros((0, 2))).shape == (0, 3)
    line = np.array([[0, 0], [1, 1], [2, 2], [3, 3]], dtype=float)
    tris = triangulate_polygon(line)
    assert tris.tolist() == [[0, 1, 2], [0, 2, 3]] and tri_areas(line, tris).tolist() == [0.0, 0.0]
    # clockwise input: its reflex corner is cut, then clipping gets stuck and the rest is fanned (P - 2 triangles)
    assert triangulate_polygon(L_SHAPE[::-1]).tolist() == [[1, 2, 3], [0, 1, 3], [0, 3, 4], [0, 4, 5]]


def test_nan_corners_are_ears_for_ear_clip_but_not_for_triangulate_polygon():
    poly = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, np.nan]], dtype=float)
    with np.errstate(invalid="ignore"):
        assert ear_clip(poly) == [[5, 0, 1], [5, 1, 2], [5, 2, 3], [3, 4, 5]]
        assert triangulate_polygon(poly).tolist() == [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]]
