"""The GL-free scene description (mvsim_core.sensors.render.scene_geometry) and pinhole math (camera_model):
closed solids wound outwards, merged occupancy rectangles, node poses from the simulation, packing into draw calls,
projection matrices — and none of it imports OpenGL."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.rotations import rotation
from mvsim_core.sensors.camera import PinholeModel
from mvsim_core.sensors.render import camera_model as cm
from mvsim_core.sensors.render import scene_geometry as sg

REPO = Path(__file__).resolve().parents[4]
L_SHAPE = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=float)  # CCW, area 3


def signed_volume(tris: np.ndarray) -> float:
    """Divergence theorem: positive for a closed surface wound counter-clockwise seen from outside."""
    t = np.asarray(tris, dtype=float).reshape(-1, 3, 3)
    return float(np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum() / 6.0)


def part_triangles(part: sg.MeshPart) -> np.ndarray:
    return part.positions[part.indices.reshape(-1, 3)]


def is_closed_and_consistent(tris: np.ndarray) -> bool:
    """Every directed edge appears once and its reverse once: a closed, consistently wound surface."""
    keys: dict[tuple, int] = {}
    for t in np.round(np.asarray(tris), 9):
        for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            k = (tuple(a), tuple(b))
            keys[k] = keys.get(k, 0) + 1
    return all(n == 1 and keys.get((k[1], k[0])) == 1 for k, n in keys.items())


# ---------------------------------------------------------------------------------------------- builders
@pytest.mark.parametrize("footprint", [L_SHAPE, L_SHAPE[::-1], np.array([[-1, -1], [1, -1], [1, 1], [-1, 1.0]])])
def test_prisms_are_closed_and_wound_outwards_whatever_the_footprint_order(footprint):
    tris = sg.prism_triangles(footprint, 0.5, 2.0)
    area = 3.0 if len(footprint) == 6 else 4.0
    assert signed_volume(tris) == pytest.approx(area * 1.5)
    assert is_closed_and_consistent(tris)
    part = sg.prism(footprint, 0.5, 2.0, (10, 20, 30))
    assert part.cull == "back" and part.primitive == "triangles"
    assert (part.colors == (10, 20, 30, 255)).all()
    # flat normals: each triangle's three normals equal its face normal
    t = part_triangles(part)
    n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    np.testing.assert_allclose(part.normals.reshape(-1, 3, 3)[:, 0], n, atol=1e-6)


def test_flat_block_is_a_double_sided_top():
    part = sg.prism(L_SHAPE, 1.0, 1.0, (1, 2, 3))
    assert part.cull == "none"
    assert np.allclose(part.positions[:, 2], 1.0)


def test_primitive_solids_have_their_volumes():
    cyl = sg.wheel_cylinder(0.4, 0.2, (50, 50, 50))
    t = part_triangles(cyl)
    n = sg.WHEEL_SIDES
    assert signed_volume(t) == pytest.approx(0.5 * n * 0.2 ** 2 * math.sin(2 * math.pi / n) * 0.2)
    assert np.abs(t[..., 1]).max() == pytest.approx(0.1)  # axle along y
    assert np.hypot(t[..., 0], t[..., 2]).max() == pytest.approx(0.2)
    assert signed_volume(part_triangles(sg.sphere(0.5, (1, 2, 3), (0, 0, 0)))) == pytest.approx(
        4 / 3 * math.pi * 0.125, rel=0.1)
    ramp = part_triangles(sg.ramp(2.0, 1.0, 0.5, 0.1, (0, 0, 0)))
    assert signed_volume(ramp) == pytest.approx(2.0 * 1.0 * 0.5 / 2)
    assert is_closed_and_consistent(ramp)
    top = ramp[..., 2].max(axis=1) > 0.1 + 1e-9
    assert ramp[..., 2].max() == pytest.approx(0.6) and ramp[top][..., 0].max() == pytest.approx(2.0)
    bump = part_triangles(sg.bump(2.0, 1.0, 0.3, 0.0, (0, 0, 0), n=40))
    assert signed_volume(bump) == pytest.approx(math.pi / 4 * 1.0 * 0.3 * 2.0, rel=0.01)


def test_box_triangles_volume():
    rects = np.array([[0, 1, 0, 2], [5, 6, 5, 5.5]], dtype=float)
    tris = sg.box_triangles(rects, 0.0, 3.0)
    assert tris.shape == (24, 3, 3)
    assert signed_volume(tris) == pytest.approx(3.0 * (2.0 + 0.5))


def test_occupied_rectangles_cover_exactly_the_occupied_cells():
    rng = np.random.default_rng(3)
    occ = rng.random((40, 50)) < 0.3
    occ[5:20, 10:30] = True  # a block that must merge into few rectangles
    rects = sg.occupied_rectangles(occ)
    cover = np.zeros(occ.shape, dtype=int)
    for x0, x1, y0, y1 in rects:
        cover[y0:y1, x0:x1] += 1
    np.testing.assert_array_equal(cover, occ.astype(int))  # disjoint, and exactly the occupied cells
    runs = int((np.diff(np.pad(occ.astype(np.int8), ((0, 0), (1, 0))), axis=1) == 1).sum())
    assert len(rects) < runs
    assert sg.occupied_rectangles(np.zeros((3, 3), bool)).shape == (0, 4)
    assert sg.occupied_rectangles(np.ones((3, 4), bool)).tolist() == [[0, 4, 0, 3]]


def test_height_field_vertices_and_normals():
    h = np.add.outer(0.1 * np.arange(4), np.zeros(3))  # rises 0.1 per row (+x), resolution 1 m
    part = sg.height_field(h, -1.0, 2.0, 1.0, (0, 255, 0))
    assert part.positions.shape == (12, 3) and part.indices.size == 2 * 3 * 2 * 3
    np.testing.assert_allclose(part.positions[4], (0.0, 3.0, 0.1))  # vertex (i=1, j=1)
    np.testing.assert_allclose(part.normals, np.tile(np.array([-0.1, 0, 1]) / math.sqrt(1.01), (12, 1)), atol=1e-6)
    t = part_triangles(part)
    assert (np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])[:, 2] > 0).all()  # CCW from above


# ---------------------------------------------------------------------------------------------- a world
WORLD = """<mvsim_world version="1.0">
  <element class="horizontal_plane"><x_min>-10</x_min><x_max>10</x_max><y_min>-5</y_min><y_max>5</y_max>
    <color>#102030</color><texture>checker.png</texture><texture_size_x>2</texture_size_x>
    <texture_size_y>4</texture_size_y></element>
  <element class="vertical_plane"><x0>0</x0><y0>6</y0><x1>4</x1><y1>6</y1><height>2</height>
    <door position="0.5" width="1" z_max="1.5"/></element>
  <element class="ground_grid"><floating>false</floating><interval>5</interval></element>
  <block name="crate"><static>true</static><init_pose>3 1 30</init_pose><geometry type="box" lx="1" ly="1" lz="1"/>
    <color>#ff8000</color></block>
  <block name="ball"><init_pose>-3 1 0</init_pose><geometry type="sphere" radius="0.5"/></block>
  <block name="model"><static>true</static><init_pose>0 -3 0</init_pose><zmin>0</zmin><zmax>1</zmax>
    <visual><model_uri>tetra.obj</model_uri><model_color>#00ff00</model_color></visual></block>
  <vehicle name="r1"><dynamics class="differential"/><init_pose>1 2 90</init_pose>
    <sensor class="camera" name="cam"/></vehicle>
</mvsim_world>
"""


@pytest.fixture
def world(tmp_path: Path) -> mv.World:
    from PIL import Image

    Image.fromarray(np.array([[0, 255], [255, 0]], dtype=np.uint8)).save(tmp_path / "checker.png")
    (tmp_path / "tetra.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    path = tmp_path / "g.world.xml"
    path.write_text(WORLD)
    return mv.load_world(path, seed=0)


def test_scene_of_a_world(world):
    scene = sg.SceneGeometry(world)
    assert scene.node_names == ["world", "vehicle:r1", "wheel:r1/l_wheel", "wheel:r1/r_wheel", "block:crate",
                                "block:ball", "block:model", ]
    by_node: dict[int, list[sg.MeshPart]] = {}
    for node, part in scene.parts:
        by_node.setdefault(node, []).append(part)
    world_parts = by_node[0]
    plane = next(p for p in world_parts if p.texture is not None)
    assert plane.texture.pixels.shape == (2, 2, 4)
    assert tuple(plane.texture.pixels[0, 0, :3]) == (255, 255, 255)  # bottom-left of the picture is row 0
    assert (plane.colors == 255).all()  # a texture replaces the colour
    np.testing.assert_allclose(plane.uv, plane.positions[:, :2] / [2.0, 4.0])
    lines = [p for p in world_parts if p.primitive == "lines"]
    assert len(lines) == 1 and not lines[0].lit
    wall = next(p for p in world_parts if p.primitive == "triangles" and p.texture is None)
    assert is_closed_and_consistent(part_triangles(wall)[:12])  # the first piece is a closed box
    assert wall.positions[:, 2].max() == pytest.approx(2.0)
    # the door (x in [1.5, 2.5], z < 1.5) is open: no triangle there
    c = part_triangles(wall).mean(axis=1)
    assert not ((c[:, 0] > 1.55) & (c[:, 0] < 2.45) & (c[:, 2] < 1.45)).any()
    chassis, = by_node[1]
    assert tuple(chassis.colors[0]) == (255, 0, 0, 255) and chassis.cull == "back"
    model, = by_node[6]
    assert model.cull == "none" and len(model.positions) == 12 and tuple(model.colors[0]) == (0, 255, 0, 255)
    crate, = by_node[4]
    assert signed_volume(part_triangles(crate)) == pytest.approx(1.0)
    assert scene.warnings == []


def test_node_transforms_follow_declared_and_live_poses(world):
    scene = sg.SceneGeometry(world)
    tf = scene.node_poses()
    assert tf.shape == (7, 3, 4)
    np.testing.assert_allclose(tf[0], np.hstack([np.eye(3), np.zeros((3, 1))]))
    np.testing.assert_allclose(tf[1, :, :3], rotation(math.pi / 2, 0, 0), atol=1e-12)
    np.testing.assert_allclose(tf[1, :, 3], (1, 2, 0), atol=1e-12)
    # l_wheel at (0, 0.5) in the vehicle frame, centre 0.2 m up: world (1 − 0.5, 2, 0.2)
    np.testing.assert_allclose(tf[2, :, 3], (0.5, 2.0, 0.2), atol=1e-12)
    np.testing.assert_allclose(tf[4, :, 3], (3, 1, 0), atol=1e-12)
    np.testing.assert_allclose(tf[4, :, :3], rotation(math.radians(30), 0, 0), atol=1e-12)
    # what is uploaded: anchors and origin folded in
    up = scene.node_transforms()
    np.testing.assert_allclose(up[:, :, 3], np.einsum("nij,nj->ni", tf[:, :, :3], scene.anchors) + tf[:, :, 3]
                               - scene.origin)
    np.testing.assert_allclose(scene.anchors[0], scene.origin)
    # with physics: a teleported vehicle and a spinning wheel
    ph = world.start().physics
    live = sg.SceneGeometry(world, ph)
    world.set_pose("r1", -2.0, 0.5, 0.0)
    ph.wheels.phi[0] = 0.7
    ph.z[0], ph.pitch[0] = 0.3, 0.1
    tf = live.node_poses()
    np.testing.assert_allclose(tf[1, :, 3], (-2.0, 0.5, 0.3), atol=1e-9)
    np.testing.assert_allclose(tf[1, :, :3], rotation(0.0, 0.1, 0.0), atol=1e-9)
    np.testing.assert_allclose(tf[2, :, :3], rotation(0.0, 0.1, 0.0) @ rotation(0.0, 0.7, 0.0), atol=1e-9)
    world.set_pose("ball", 4.0, -4.0, 1.0)
    np.testing.assert_allclose(live.node_poses()[5, :2, 3], (4.0, -4.0), atol=1e-6)


def test_pack_groups_draws_and_offsets_indices(world):
    scene = sg.SceneGeometry(world)
    packed = scene.pack()
    n = len(packed.positions)
    assert packed.positions.dtype == np.float32 and packed.colors.dtype == np.uint8
    assert len(packed.normals) == len(packed.uv) == len(packed.node) == n
    assert packed.indices.max() < n
    total = sum(p.indices.size for _, p in scene.parts)
    assert sum(d.count for d in packed.draws) == total == packed.indices.size
    firsts = [d.first for d in packed.draws]
    assert firsts == sorted(firsts) and firsts[0] == 0
    keys = [(d.primitive, d.cull, id(d.texture), d.size, d.lit) for d in packed.draws]
    assert len(keys) == len(set(keys))  # one draw per state
    assert set(np.unique(packed.node).astype(int)) == set(range(scene.n_nodes))
    # vertices are stored relative to their node's anchor (the origin for node 0)
    lo = packed.positions[packed.node == 0].astype(float) + scene.origin
    assert lo[:, 0].min() == pytest.approx(-25.0)  # the ground grid (default x_min)


def test_floating_grid_follows_its_vehicle(tmp_path):
    path = tmp_path / "f.world.xml"
    path.write_text('<mvsim_world version="1.0"><element class="ground_grid"><interval>2</interval></element>'
                    '<vehicle name="v"><dynamics class="differential"/><init_pose>5.5 -3.1 0</init_pose></vehicle>'
                    "</mvsim_world>")
    scene = sg.SceneGeometry(mv.load_world(path))
    assert "ground_grid:v" in scene.node_names
    node = scene.node_names.index("ground_grid:v")
    np.testing.assert_allclose(scene.node_poses()[node, :, 3], (4.0, -4.0, 0.0))


def test_occupancy_grid_becomes_boxes(tmp_path):
    from PIL import Image

    img = np.full((10, 20), 255, np.uint8)
    img[2:5, 3:12] = 0  # occupied
    Image.fromarray(img).save(tmp_path / "m.png")
    path = tmp_path / "o.world.xml"
    path.write_text('<mvsim_world version="1.0"><element class="occupancy_grid"><file>m.png</file>'
                    "<resolution>0.5</resolution></element></mvsim_world>")
    w = mv.load_world(path)
    scene = sg.SceneGeometry(w)
    (node, part), = scene.parts
    t = part_triangles(part)
    assert len(t) == 12  # one merged box
    assert signed_volume(t) == pytest.approx(9 * 3 * 0.25 * sg.OCCUPANCY_HEIGHT)
    assert tuple(part.colors[0]) == sg.OCCUPANCY_COLOR


# ---------------------------------------------------------------------------------------------- camera model
def test_projection_matrix_maps_pixels_and_depth_range():
    k = PinholeModel(400, 300, 190.3, 160.7, 350.0, 420.0)
    for zero_to_one in (True, False):
        p = cm.projection_matrix(k, 0.1, 50.0, zero_to_one=zero_to_one)
        pts = np.array([[-1.0, -0.5, 6.0], [0.3, 0.2, 0.1], [2.0, -1.0, 50.0]])
        u, v, z = cm.project(pts, k)
        clip = np.column_stack([pts, np.ones(3)]) @ p.T
        ndc = clip[:, :3] / clip[:, 3:]
        np.testing.assert_allclose((ndc[:, 0] + 1) * 200 - 0.5, u)  # window x = u + ½
        np.testing.assert_allclose((ndc[:, 1] + 1) * 150 - 0.5, v)  # window row = v + ½ (row 0 = top)
        near, far = (1.0, 0.0) if zero_to_one else (-1.0, 1.0)
        assert ndc[1, 2] == pytest.approx(near) and ndc[2, 2] == pytest.approx(far)


def test_view_matrix_and_optical_frame():
    rot = rotation(0.3, -0.2, 0.1) @ cm.OPTICAL_WRT_BODY
    pos = np.array([1.0, 2.0, 3.0])
    origin = np.array([10.0, 0.0, 0.0])
    v = cm.view_matrix(rot, pos, origin)
    world_pts = np.array([[4.0, 2.0, 3.5], [0.0, 0.0, 0.0]])
    rel = np.column_stack([world_pts - origin, np.ones(2)]) @ v.T
    np.testing.assert_allclose(rel[:, :3], cm.world_to_optical(world_pts, rot, pos), atol=1e-12)
    np.testing.assert_allclose(cm.OPTICAL_WRT_BODY, rotation(*cm.OPTICAL_WRT_BODY_YPR), atol=1e-15)
    # straight ahead of an x-forward body is the optical axis
    np.testing.assert_allclose(cm.world_to_optical([[5, 0, 0]], cm.OPTICAL_WRT_BODY, [0, 0, 0]), [[0, 0, 5]])
    np.testing.assert_allclose(cm.world_to_optical([[5, -1, -2]], cm.OPTICAL_WRT_BODY, [0, 0, 0]), [[1, 2, 5]])


def test_scene_description_does_not_import_opengl(tmp_path):
    code = ("import sys\n"
            "import mvsim_core.sensors.render, mvsim_core.sensors.render.scene_geometry\n"
            "import mvsim_core.sensors.render.camera_model, mvsim_core.sensors.render.gl_context\n"
            "import mvsim_core.sensors.camera, mvsim_core.sensors.rgbd_camera\n"
            "print(any(m == 'OpenGL' or m.startswith('OpenGL.') for m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_actors_without_a_model_that_loads_are_drawn_as_the_person_stand_in(tmp_path):
    """An actor whose animated FBX cannot be read, one whose model file is missing and one with none are all drawn
    as the 0.5 × 0.5 × 1.8 m figure in the stand-in colour, at the pose their walk has them."""
    (tmp_path / "walker.fbx").write_bytes(b"Kaydara FBX Binary  \x00")
    body = ''.join(f'<actor name="{n}"><init_pose>{x} 0 0</init_pose>{vis}</actor>' for n, x, vis in (
        ("fbx", 0, "<visual><model_uri>walker.fbx</model_uri></visual>"),
        ("gone", 2, "<visual><model_uri>no_such_model.dae</model_uri></visual>"),
        ("plain", 4, "")))
    body += ('<actor name="walker"><walking_speed>1</walking_speed><path><waypoint>0 5 0</waypoint>'
             '<waypoint>4 5 0</waypoint></path></actor>')
    path = tmp_path / "w.world.xml"
    path.write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    w = mv.load_world(path)
    scene = sg.SceneGeometry(w, w.start().physics)
    assert any("walker.fbx" in m and "FBX" in m for m in scene.warnings)
    for name in ("fbx", "gone", "plain", "walker"):
        node = scene.node_names.index(f"actor:{name}")
        parts = [p for n, p in scene.parts if n == node]
        pos = np.vstack([p.positions for p in parts])
        assert np.ptp(pos, axis=0) == pytest.approx([0.5, 0.5, 1.8], abs=1e-9), name
        assert pos[:, 2].min() == pytest.approx(0.0, abs=1e-12)
        assert all((p.colors == sg.rgba(sg.ACTOR_COLOR)).all() for p in parts)
        assert all(is_closed_and_consistent(part_triangles(p)) for p in parts)
    node = scene.node_names.index("actor:walker")
    w.run(2.0)
    assert scene.node_poses()[node, :, 3] == pytest.approx([2.0, 5.0, 0.0], abs=1e-6)  # 1 m/s along +x
