"""Frustum culling (mvsim_core.sensors.render.frustum) and the renderer's use of it: parts out of view are skipped,
the images stay bit-identical, and the shadow map of the parts that never move is kept between frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.camera import PinholeModel
from mvsim_core.sensors.render import gl_context
from mvsim_core.sensors.render.camera_model import OPTICAL_WRT_BODY, projection_matrix, view_matrix
from mvsim_core.sensors.render.frustum import boxes_in_view, draw_runs
from mvsim_core.sensors.render.scene_geometry import SceneGeometry

K = PinholeModel(320, 240, 160.0, 120.0, 250.0, 250.0)
P = projection_matrix(K, 0.1, 100.0, zero_to_one=False)
IDENTITY = np.hstack([np.eye(3), np.zeros((3, 1))])[None]  # one node, the optical frame itself


def boxes(*lohi: tuple[tuple[float, float, float], tuple[float, float, float]]) -> np.ndarray:
    return np.array(lohi, dtype=np.float64).reshape(-1, 2, 3)


def test_boxes_in_front_behind_aside_and_across():
    """Optical frame (x right, y down, z forward), 320 × 240 px, f = 250 px: the image spans |x/z| ≤ 0.64 and
    |y/z| ≤ 0.48."""
    b = boxes(((-0.1, -0.1, 4), (0.1, 0.1, 5)),   # straight ahead: kept
              ((-0.1, -0.1, -5), (0.1, 0.1, -4)),  # behind: culled
              ((10, -0.1, 4), (11, 0.1, 5)),       # right of the image (x/z ≥ 2): culled
              ((-11, -0.1, 4), (-10, 0.1, 5)),     # left: culled
              ((-0.1, 3, 4), (0.1, 4, 5)),         # below (y/z ≥ 0.6): culled
              ((0.5, -0.1, 5), (10, 0.1, 5.5)),    # from inside the image to far right: kept
              ((-1, -1, -1), (1, 1, 1)),           # around the eye: kept
              ((3.1, -0.1, 5), (3.3, 0.1, 5)),     # just right of the edge (x/z = 0.62 .. 0.66): kept
              ((3.3, -0.1, 5), (3.5, 0.1, 5)),     # just beyond it (x/z ≥ 0.66): culled
              ((np.nan, 0, 0), (1, 1, 1)))         # not finite: kept
    keep = boxes_in_view(b, np.zeros(len(b), dtype=int), IDENTITY, P)
    assert keep.tolist() == [True, False, False, False, False, True, True, True, False, True]


def test_node_transforms_carry_the_boxes():
    """A box behind the camera in its node frame is kept once its node is turned half round (about y)."""
    b = boxes(((-0.1, -0.1, -5), (0.1, 0.1, -4)))
    turned = np.array([[[-1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, -1, 0]]])
    assert not boxes_in_view(b, np.array([0]), IDENTITY, P)[0]
    assert boxes_in_view(b, np.array([0]), turned, P)[0]
    moved = IDENTITY.copy()
    moved[0, 2, 3] = 10.0  # 10 m forward
    assert boxes_in_view(b, np.array([0]), moved, P)[0]


def test_a_culled_box_has_no_point_in_view():
    """Random boxes and views: no point inside a culled box projects into the image in front of the camera."""
    rng = np.random.default_rng(7)
    lo = rng.uniform(-20, 20, (400, 3))
    b = np.stack([lo, lo + rng.uniform(0.01, 3, (400, 3))], axis=1)
    keep = boxes_in_view(b, np.zeros(400, dtype=int), IDENTITY, P)
    assert 30 < keep.sum() < 370
    for k in np.flatnonzero(~keep):
        pts = b[k, 0] + rng.uniform(0, 1, (500, 3)) * (b[k, 1] - b[k, 0])
        z = pts[:, 2]
        u = 160.0 + 250.0 * pts[:, 0] / z
        v = 120.0 + 250.0 * pts[:, 1] / z
        seen = (z > 0) & (u >= 0) & (u <= 320) & (v >= 0) & (v <= 240)
        assert not seen.any(), k


def test_draw_runs_merge_neighbours_per_draw():
    spans = np.array([[0, 0, 6], [0, 6, 3], [0, 9, 3], [1, 12, 6], [1, 18, 6], [2, 24, 3]])
    keep = np.array([True, True, False, True, True, False])
    assert draw_runs(spans, keep, 3) == [[(0, 9)], [(12, 12)], []]
    keep = np.array([True, False, True, False, True, True])
    assert draw_runs(spans, keep, 3) == [[(0, 6), (9, 3)], [(18, 6)], [(24, 3)]]
    assert draw_runs(spans, np.zeros(6, dtype=bool), 3) == [[], [], []]


# ------------------------------------------------------------------------------------------------ with the renderer
@pytest.fixture(scope="module")
def gl() -> None:
    ok, why = gl_context.available()
    if not ok:
        pytest.skip(f"no offscreen OpenGL context on this machine: {why}")


def ring_world(tmp_path: Path) -> mv.World:
    """24 coloured boxes on a ring of 6 m around the origin, a floor plane, and shadows on."""
    blocks = []
    for i in range(24):
        a = 2 * np.pi * i / 24
        x, y = 6 * np.cos(a), 6 * np.sin(a)
        pts = "".join(f"<pt>{x + dx:.3f} {y + dy:.3f}</pt>" for dx, dy in ((-.4, -.4), (.4, -.4), (.4, .4), (-.4, .4)))
        blocks.append(f'<block name="b{i}"><static>true</static><init_pose>0 0 0</init_pose><zmin>0</zmin>'
                      f"<zmax>{1 + 0.1 * i:.1f}</zmax><color>#{(i * 40) % 256:02x}66cc</color><shape>{pts}</shape>"
                      "</block>")
    path = tmp_path / "ring.world.xml"
    path.write_text('<mvsim_world version="1.0"><element class="horizontal_plane"><x_min>-10</x_min>'
                    "<x_max>10</x_max><y_min>-10</y_min><y_max>10</y_max><z>0</z></element>"
                    "<lights><enable_shadows>true</enable_shadows><light_elevation_deg>40</light_elevation_deg>"
                    f"</lights>{''.join(blocks)}</mvsim_world>")
    return mv.load_world(path)


def test_culled_images_equal_full_ones(gl, tmp_path):
    """From the ring's centre, looking along +x, a camera sees a few boxes: only those (and the floor) are drawn, and
    colour and depth equal those of a render of every part, bit for bit, with shadows on."""
    from mvsim_core.sensors.render.renderer import SceneRenderer

    world = ring_world(tmp_path)
    r = SceneRenderer(SceneGeometry(world))
    assert r.shadows
    pos = np.array([0.0, 0.0, 1.0])
    for yaw in (0.0, 1.3, 3.0):
        c, s = np.cos(yaw), np.sin(yaw)
        rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ OPTICAL_WRT_BODY
        clip = projection_matrix(K, 0.01, 1e4, zero_to_one=r.reversed_z) @ view_matrix(rot, pos, r.scene.origin)
        kept = r._keep(clip)
        assert 3 <= kept.sum() <= 12 < len(kept)  # a 65° view of 24 boxes and the floor
        r.culling = True
        a = r.render(rot, pos, K, 0.01, 1e4)
        r.culling = False
        b = r.render(rot, pos, K, 0.01, 1e4)
        r.culling = True
        assert (a.depth > 0).mean() > 0.5
        np.testing.assert_array_equal(a.rgb, b.rgb)
        np.testing.assert_array_equal(a.depth, b.depth)


def test_kept_shadow_map_equals_a_fresh_one(gl, tmp_path):
    """A box that moves leaves the still parts' shadow map; the frames after it equal those of a renderer built from
    scratch (which draws everything into one map), and the shadow of the moved box moves with it."""
    from mvsim_core.sensors.render.renderer import SceneRenderer

    world = ring_world(tmp_path)
    r = SceneRenderer(SceneGeometry(world))
    rot = OPTICAL_WRT_BODY
    pos = np.array([0.0, 0.0, 1.5])
    first = r.render(rot, pos, K, 0.01, 1e4)
    key = r._static_key
    r.update_nodes()
    again = r.render(rot, pos, K, 0.01, 1e4)
    assert r._static_key == key and not r._moving.any()  # nothing moved: the still map is kept
    np.testing.assert_array_equal(first.rgb, again.rgb)
    block = world.blocks["b0"]
    for dy in (0.5, 1.0):
        x, y, z, yaw, pitch, roll = block.sim.pose
        block.state_pose = (x, y + dy, z, yaw, pitch, roll)
        r.update_nodes()
        kept = r.render(rot, pos, K, 0.01, 1e4)
        assert r._moving.sum() == 1
        fresh = SceneRenderer(SceneGeometry(world)).render(rot, pos, K, 0.01, 1e4)
        np.testing.assert_array_equal(kept.rgb, fresh.rgb)
        np.testing.assert_array_equal(kept.depth, fresh.depth)
    assert (kept.rgb != first.rgb).any()
