"""Collision flags from Box2D's contacts (mvsim_core.dynamics.collision_flags): the compiled contact walk, its
pybox2d twin and the convex polygon distance."""

from __future__ import annotations

import math

import Box2D
import numpy as np
import pytest

from mvsim_core.dynamics.box2d_raw import body_address, memory
from mvsim_core.dynamics.collision_flags import (
    collision_flags_api,
    collision_flags_raw,
    polygon_distance,
    raw_contacts_ok,
)


def test_polygon_distance_matches_box2d():
    rng = np.random.default_rng(7)
    overlapping = 0
    for _ in range(300):
        polys = []
        for _ in range(2):
            n = int(rng.integers(3, 9))
            a = np.sort(rng.uniform(0, 2 * math.pi, n))
            r = rng.uniform(0.2, 1.0)
            polys.append(np.column_stack([r * np.cos(a), r * np.sin(a)]) + rng.uniform(-1.5, 1.5, 2))
        shapes = []
        for p in polys:
            try:
                shapes.append(Box2D.b2PolygonShape(vertices=[tuple(v) for v in p]))
            except AssertionError:
                break
        if len(shapes) < 2:
            continue
        verts = [np.array(s.vertices) for s in shapes]  # Box2D's own (hull, CCW) vertices
        identity = Box2D.b2Transform()
        identity.SetIdentity()
        want = Box2D.b2Distance(shapeA=shapes[0], idxA=0, shapeB=shapes[1], idxB=0, transformA=identity,
                                transformB=identity, useRadii=False).distance
        got = polygon_distance(verts[0], len(verts[0]), verts[1], len(verts[1]))
        assert got == pytest.approx(want, abs=1e-5)
        overlapping += want == 0
        if want > 0.05:  # a cutoff below the distance gives a lower bound that is still above the cutoff
            assert want + 1e-5 >= polygon_distance(verts[0], len(verts[0]), verts[1], len(verts[1]), 0.05) >= 0.05
    assert 10 < overlapping < 290


def test_polygon_distance_of_squares():
    sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    assert polygon_distance(sq, 4, sq + (3.0, 0.0), 4) == pytest.approx(2.0)
    assert polygon_distance(sq, 4, sq + (4.0, 5.0), 4) == pytest.approx(5.0)  # corner to corner: hypot(3, 4)
    assert polygon_distance(sq, 4, sq + (0.5, 0.5), 4) == 0.0
    assert polygon_distance(sq, 4, sq + (10.0, 0.0), 4, 1.0) == 9.0  # bounding-box gap beyond the cutoff


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "api"])
def test_flags_of_a_touching_pair_a_near_miss_and_a_lone_body(raw):
    if raw and not raw_contacts_ok():
        pytest.skip("this Box2D build has another contact layout")
    w = Box2D.b2World(gravity=(0, 0))
    bodies = []
    for x, y in ((0.0, 0.0), (0.99, 0.0), (0.0, 5.0), (1.045, 5.0), (0.0, -20.0)):
        b = w.CreateDynamicBody(position=(x, y))
        b.CreatePolygonFixture(box=(0.5, 0.5), density=1.0)
        bodies.append(b)
    w.Step(0.001, 8, 3)  # contacts for overlapping (skin-enlarged) boxes
    want = {0.0: [True, True, False, False, False], 0.05: [True, True, True, True, False]}  # cores 4.5 cm apart
    for thr, flags in want.items():
        if raw:
            out = np.zeros(len(bodies), dtype=np.bool_)
            hits = collision_flags_raw(*memory(), np.array([body_address(b) for b in bodies], dtype=np.int64), thr,
                                       out)
            assert hits == sum(flags)  # the bodies flagged
            got = out.tolist()
        else:
            got = collision_flags_api(w, {b: k for k, b in enumerate(bodies)}, thr)
        assert got == flags, thr


def test_raw_and_api_agree_among_robots_pressed_against_grid_walls(shared_dir):
    """25 robots of demo_many_robots after 2 s of circling: most touch a wall square or each other, some only come
    near one; the compiled walk (touching bits first, distances for the rest) flags what pybox2d flags."""
    if not raw_contacts_ok():
        pytest.skip("this Box2D build has another contact layout")
    from mvsim_core.loader import load_world

    w = load_world(shared_dir / "worlds" / "mvsim_tutorial" / "demo_many_robots.world.xml")
    for v in w.vehicles.values():
        v.set_twist(0.5, 0.0, 0.3)
    w.run(2.0)
    bodies = w.physics.bodies
    contact_bodies = bodies._contact_bodies
    addrs = np.array([body_address(b) for b in contact_bodies], dtype=np.int64)
    seen = set()
    for thr in (0.0, 0.03, 0.2):
        out = np.zeros(len(addrs), dtype=np.bool_)
        hits = collision_flags_raw(*memory(), addrs, thr, out)
        want = collision_flags_api(bodies.b2world, {b: k for k, b in enumerate(contact_bodies)}, thr)
        assert out.tolist() == want, thr
        assert hits == sum(want)
        seen.add(hits)
    assert len(seen) == 3 and 0 < min(seen) and max(seen) < len(addrs)  # each threshold flags a different count
