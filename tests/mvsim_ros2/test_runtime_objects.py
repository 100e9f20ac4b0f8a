"""Markers to blocks (:mod:`mvsim_ros2.runtime_objects`), in this process: the geometry of each supported type, in
numbers, what a lidar then reads of it, and the refusals with their texts. The node itself: test_node_runtime_objects.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("visualization_msgs.msg", reason="visualization_msgs is not built (run `make setup`)")

from geometry_msgs.msg import Point  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

import mvsim_core as mv  # noqa: E402
from mvsim_ros2.runtime_objects import (  # noqa: E402
    FLAT_THICKNESS,
    ROUND_VERTICES,
    MarkerRefused,
    block_from_marker,
    convex_hull,
    object_name,
)

WORLD = Path(__file__).resolve().parent / "data" / "runtime.world.xml"  # r1 at the origin, lidar 0.2 m ahead


def marker(kind: int, *, pos: tuple[float, float, float] = (0.0, 0.0, 0.0), yaw: float = 0.0,
           size: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> Marker:
    m = Marker(type=kind)
    m.pose.position.x, m.pose.position.y, m.pose.position.z = pos
    m.pose.orientation.z, m.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    m.scale.x, m.scale.y, m.scale.z = size
    m.color.r, m.color.g, m.color.b, m.color.a = 1.0, 0.5, 0.0, 1.0
    return m


def built(m: Marker, overlay: bool = False) -> mv.World:
    """A started test world with the block of ``m`` added as 'x'."""
    w = mv.load_world(WORLD, seed=1)
    w.start()
    xml, pose = block_from_marker(m, overlay=overlay)
    w.spawn(xml, name="x", pose=pose)
    return w


def centre_range(w: mv.World) -> float:
    w.run(0.05)
    return float(w.vehicles["r1"].sensors["laser1"].last.ranges[90])


def test_names() -> None:
    assert object_name("runtime_objects", "cubes", 3) == "runtime_objects/cubes/3"
    assert object_name("runtime_overlays", "", 7) == "runtime_overlays/7"


def test_a_cube_is_a_box_of_its_full_sizes_centred_on_its_pose() -> None:
    w = built(marker(Marker.CUBE, pos=(3.2, 0.0, 0.5), yaw=math.pi / 2, size=(0.4, 1.0, 0.6)))
    b = w.blocks["x"]
    assert b.is_static and not b.is_intangible and not b.is_visual_only
    assert (b.zmin, b.zmax) == pytest.approx((0.2, 0.8))
    assert b.pose[:2] == pytest.approx((3.2, 0.0)) and b.pose[3] == pytest.approx(math.pi / 2)
    assert np.abs(b.footprint).max(axis=0) == pytest.approx([0.2, 0.5])
    assert b.params["color"] == (255, 128, 0, 255)
    assert centre_range(w) == pytest.approx(3.2 - 0.5 - 0.2, abs=0.01)  # turned 90°: its 1 m side across x


def test_cylinder_and_sphere_footprints_are_ellipses_of_their_diameters() -> None:
    w = built(marker(Marker.CYLINDER, pos=(4.0, 0.0, 0.5), size=(1.0, 0.6, 1.0)))
    fp = w.blocks["x"].footprint
    assert len(fp) == ROUND_VERTICES
    np.testing.assert_allclose((fp[:, 0] / 0.5) ** 2 + (fp[:, 1] / 0.3) ** 2, 1.0, atol=1e-9)
    assert centre_range(w) == pytest.approx(4.0 - 0.5 - 0.2, abs=0.01)
    s = built(marker(Marker.SPHERE, pos=(2.0, 0.0, 0.5), size=(0.5, 0.5, 0.5))).blocks["x"]
    assert (s.zmin, s.zmax) == pytest.approx((0.25, 0.75))
    assert np.hypot(*s.footprint.T) == pytest.approx(0.25)


def test_a_triangle_list_is_the_prism_of_its_convex_hull() -> None:
    m = marker(Marker.TRIANGLE_LIST, pos=(3.0, 0.0, 0.1), yaw=math.pi / 2, size=(2.0, 1.0, 1.0))
    # two triangles of a 0.5 x 1 quad (x 0..0.5 m before the scale doubles it), one corner raised to z = 0.6
    m.points = [Point(x=0.0, y=-0.5, z=0.0), Point(x=0.5, y=-0.5, z=0.0), Point(x=0.5, y=0.5, z=0.6),
                Point(x=0.0, y=-0.5, z=0.0), Point(x=0.5, y=0.5, z=0.6), Point(x=0.0, y=0.5, z=0.0),
                Point(x=0.25, y=0.0, z=0.3)]  # inside: not a vertex of the hull
    w = built(m)
    b = w.blocks["x"]
    assert b.pose[:2] == pytest.approx((3.0, 0.0)) and b.pose[3] == 0.0
    assert (b.zmin, b.zmax) == pytest.approx((0.1, 0.7))
    # scaled: x 0..1, y -0.5..0.5; turned 90°: x -0.5..0.5, y 0..1 around the marker's position
    assert sorted(map(tuple, np.round(b.footprint, 9))) == [(-0.5, 0.0), (-0.5, 1.0), (0.5, 0.0), (0.5, 1.0)]
    assert centre_range(w) == pytest.approx(2.5 - 0.2, abs=0.01)


def test_flat_decals_and_overlays() -> None:
    b = built(marker(Marker.CUBE, pos=(1.0, 2.0, 0.003), size=(0.5, 0.5, 0.0)), overlay=True).blocks["x"]
    assert b.is_intangible and b.is_visual_only  # drawn by the viewer only (tests/mvsim_core/test_visual_only_blocks)
    assert b.zmax - b.zmin == pytest.approx(FLAT_THICKNESS) and (b.zmin + b.zmax) / 2 == pytest.approx(0.003)
    w = built(marker(Marker.CUBE, pos=(3.0, 0.0, 0.5)), overlay=True)
    assert centre_range(w) == pytest.approx(8.0 - 0.2, abs=0.01)  # a 2D lidar sees through an overlay
    q = marker(Marker.CUBE)
    q.pose.orientation.w = 0.0  # all zeros: the identity, as RViz
    assert block_from_marker(q, overlay=False)[1] == (0.0, 0.0, 0.0)


def test_convex_hull() -> None:
    pts = np.array([[0, 0], [2, 0], [1, 0], [2, 2], [0, 2], [1, 1], [0, 1], [2, 2]], dtype=float)
    assert convex_hull(pts).tolist() == [[0, 0], [2, 0], [2, 2], [0, 2]]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda m: setattr(m.pose.position, "y", math.inf), "pose.position.y is inf; every number of a marker must be "
                                                         "finite"),
    (lambda m: setattr(m.color, "a", math.nan), "color.a is nan; every number of a marker must be finite"),
    (lambda m: setattr(m.scale, "y", -1.0), "scale.y is -1; a CUBE needs sizes > 0 m"),
    (lambda m: setattr(m.scale, "z", -0.1), r"scale.z is -0.1; a CUBE needs a height >= 0 m \(0: a flat decal\)"),
    (lambda m: setattr(m, "type", Marker.LINE_STRIP), r"type LINE_STRIP \(4\) is not supported"),
])
def test_refusals_say_why(edit, message) -> None:
    m = marker(Marker.CUBE)
    edit(m)
    with pytest.raises(MarkerRefused, match=f"^{message}$"):
        block_from_marker(m, overlay=False)


def test_triangle_list_refusals() -> None:
    m = marker(Marker.TRIANGLE_LIST)
    m.points = [Point(x=0.0), Point(x=1.0), Point(x=2.0)]
    with pytest.raises(MarkerRefused, match=r"no area seen from above"):
        block_from_marker(m, overlay=False)
    m.points = [Point(x=0.0), Point(x=1.0), Point(y=math.nan)]
    with pytest.raises(MarkerRefused, match=r"^points\[2\]\.y is nan; every number of a marker must be finite$"):
        block_from_marker(m, overlay=False)
    m.points = [Point(x=0.0), Point(x=1.0), Point(y=1.0)]
    m.scale.z = 0.0
    with pytest.raises(MarkerRefused, match=r"^scale.z is 0; a TRIANGLE_LIST's points are multiplied by scale"):
        block_from_marker(m, overlay=False)
