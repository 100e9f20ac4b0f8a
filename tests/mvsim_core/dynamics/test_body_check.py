"""rigid_body_problem builds the fixtures that Bodies would, on a scratch Box2D world, and names what Box2D refuses."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.dynamics.body_check import rigid_body_problem
from mvsim_core.objects.wheel import Wheel

SQUARE = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])


def test_ordinary_bodies_pass() -> None:
    assert rigid_body_problem(SQUARE, 10.0) is None
    assert rigid_body_problem(SQUARE, 10.0, [Wheel("l_wheel", 0.0, 0.5), Wheel("r_wheel", 0.0, -0.5)]) is None
    assert rigid_body_problem(SQUARE + 1000.0, 10.0) is None  # 1 m across at 1.4 km: Box2D still manages


def test_shape_far_from_its_origin() -> None:
    assert rigid_body_problem(SQUARE + 1e4, 10.0) == (
        "its shape lies 1.41e+04 m from its reference point but is only 1 m across: Box2D's single-precision mass "
        "properties cannot represent it; put the shape's points around the origin and place the object with "
        "<init_pose>")
    # a static body too: Box2D's polygon centroid, computed about the origin in float32, gives no area
    assert rigid_body_problem(SQUARE + 1e4, None) == rigid_body_problem(SQUARE + 1e4, 10.0)
    assert rigid_body_problem(SQUARE + 1e3, None) is None


def test_wheels() -> None:
    flat = Wheel("l_wheel", 0.0, 0.5, diameter=1e-5, width=1e-5)
    assert rigid_body_problem(SQUARE, 10.0, [flat]) == (
        "wheel <l_wheel> of 1e-05 x 1e-05 m has no area for Box2D; give it a larger diameter and width")
    assert rigid_body_problem(SQUARE, 10.0, [Wheel("r_wheel", 0.0, -5e5, diameter=0.1, width=0.05)]) is None
    far = Wheel("r_wheel", 0.0, -5e6, diameter=0.1, width=0.05)
    assert rigid_body_problem(SQUARE, 10.0, [far]) == (
        "wheel <r_wheel> at (0, -5e+06) m is too far from the reference point for its size (0.1 x 0.05 m): "
        "Box2D's single-precision mass properties cannot represent it; put the wheels around the origin")


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_degenerate_and_huge_footprints_still_give_a_body(scale: float) -> None:
    # a footprint below 1e-6 m² becomes a 1 cm box (convex_pieces); a 1000 km one is valid for Box2D
    assert rigid_body_problem(SQUARE * scale, 10.0) is None
