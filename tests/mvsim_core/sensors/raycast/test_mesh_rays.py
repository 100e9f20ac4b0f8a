"""Meshes in the 3D ray caster: the tree query equals testing every triangle, and a lidar facing blocks whose visual
models load (a chair, static; a tote, dynamic and turned) returns points on the triangles (within 1 cm), never on
the prisms of their footprints where the models are not; a block without a model keeps its prism. A depth camera
(OpenGL, whose scene already drew the models) does the same."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.rotations import rotation
from mvsim_core.sensors.raycast.bvh import STACK_SIZE, build_bvh, hit_bvh
from mvsim_core.sensors.raycast.rays3d import RaycastScene3D

REPO = Path(__file__).resolve().parents[4]
MODELS = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared")) / "assets" / "mvsim-models"
needs_models = pytest.mark.skipif(not (MODELS / "chair_x3.dae").is_file(), reason="model mirror not present")


def brute_triangles(tris: np.ndarray, o: np.ndarray, d: np.ndarray, best: float) -> float:
    """Nearest t in [0, best) over every triangle (Möller–Trumbore in numpy), inf if none."""
    v0, e1, e2 = tris[:, 0], tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
    p = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-14
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = o - v0
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    v = (q @ d) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= 0) & (u <= 1) & (v >= 0) & (u + v <= 1) & (t >= 0) & (t < best)
    return float(t[hit].min()) if hit.any() else math.inf


def test_tree_query_equals_every_triangle():
    rng = np.random.default_rng(3)
    centres = rng.uniform(-2.0, 2.0, (3000, 1, 3))
    tris = centres + rng.normal(0.0, 0.15, (3000, 3, 3))
    box, ref, tri = build_bvh(tris)
    assert len(tri) == 3000 and ref[0, 1] == 0  # the root is split
    stack = np.empty(STACK_SIZE, dtype=np.int64)
    n_hit = 0
    for _ in range(400):
        o = rng.uniform(-4.0, 4.0, 3)
        d = rng.uniform(-2.0, 2.0, 3) - o  # towards the cloud
        d /= np.linalg.norm(d)
        want = brute_triangles(tris, o, d, 6.0)
        got = hit_bvh(box, ref, tri, 0, stack, *o, *d, 6.0)
        if math.isinf(want):
            assert math.isinf(got)
        else:
            n_hit += 1
            assert got == pytest.approx(want, abs=1e-9)
    assert n_hit > 100


def vlp16() -> np.ndarray:
    """(16 × 1800, 3) unit directions of a VLP-16 (−15° … 15° elevation, 0.2° azimuth steps)."""
    az = np.linspace(-math.pi, math.pi, 1800, endpoint=False)
    el = np.deg2rad(np.linspace(-15.0, 15.0, 16))
    a, e = np.meshgrid(az, el)
    return np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], -1).reshape(-1, 3)


def world_triangles(block: mv.Block) -> np.ndarray:
    """(T, 3, 3) triangles of the visual model of ``block`` at its pose, world frame (m)."""
    mesh = block.visuals[0].mesh()
    x, y, z, yaw, pitch, roll = block.pose
    verts = np.asarray(mesh.vertices) @ rotation(yaw, pitch, roll).T + (x, y, z)
    return verts[np.asarray(mesh.faces)]


def _seg_dist2(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ab = b - a
    t = np.clip(np.einsum("...k,...k->...", p - a, ab) / np.maximum(np.einsum("...k,...k->...", ab, ab), 1e-30),
                0.0, 1.0)
    c = a + t[..., None] * ab
    return np.einsum("...k,...k->...", p - c, p - c)


def distance_to_triangles(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """(P,) distance (m) of each point to the nearest of the triangles: the nearer of the plane foot (when inside
    the triangle) and the three edges."""
    out = np.empty(len(points))
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    n = np.cross(b - a, c - a)
    nn = np.maximum(np.einsum("ij,ij->i", n, n), 1e-30)
    for i in range(0, len(points), 64):
        p = points[i:i + 64, None, :]
        h = np.einsum("pij,ij->pi", p - a, n) / nn
        f = p - h[..., None] * n  # the foot on the plane
        inside = ((np.einsum("pij,ij->pi", np.cross(b - a, f - a), n) >= 0)
                  & (np.einsum("pij,ij->pi", np.cross(c - b, f - b), n) >= 0)
                  & (np.einsum("pij,ij->pi", np.cross(a - c, f - c), n) >= 0))
        d2 = np.minimum(np.minimum(_seg_dist2(p, a, b), _seg_dist2(p, b, c)), _seg_dist2(p, c, a))
        d2 = np.where(inside, np.minimum(d2, h * h * nn), d2)
        out[i:i + 64] = np.sqrt(d2.min(axis=1))
    return out


@needs_models
@pytest.mark.parametrize("embree", [True, False], ids=["embree", "numba"])
def test_lidar_sees_the_triangles_of_visual_models_not_their_prisms(tmp_path, embree):
    """Both engines of static models (Embree, our trees) give returns on the triangles; the dynamic tote is always
    in our trees."""
    xml = f"""<mvsim_world version="1.0">
<block name="chair"><static>true</static><init_pose3d>2.2 0.4 0 25 0 90</init_pose3d><skip_elevation_adjust/>
  <shape_from_visual/><visual><model_uri>{MODELS}/chair_x3.dae</model_uri></visual></block>
<block name="tote"><init_pose>-0.3 -2.0 70</init_pose><shape_from_visual/>
  <visual><model_uri>{MODELS}/tote.dae</model_uri><model_roll>90</model_roll><model_offset_z>0.21</model_offset_z>
  </visual></block>
<block name="box"><static>true</static><init_pose>-2.5 1.0 0</init_pose><zmin>0</zmin><zmax>0.8</zmax>
  <shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape></block>
</mvsim_world>"""
    path = tmp_path / "m.world.xml"
    path.write_text(xml)
    w = mv.load_world(path, seed=0)
    dirs = vlp16()
    o = np.array([[0.0, 0.0, 0.45]])
    args = (o, np.eye(3)[None], dirs, np.array([0, len(dirs)]), np.array([20.0]), np.array([-1]))
    scene = RaycastScene3D(w, embree=embree)
    assert len(scene.static_meshes) == (1 if embree else 0)
    t_mesh, _ = scene.cast(*args)
    hit = np.isfinite(t_mesh)
    pts = o + np.where(hit, t_mesh, 0.0)[:, None] * dirs
    floor = hit & (np.abs(pts[:, 2]) < 1e-9)
    box = hit & (np.abs(pts[:, 0] + 2.5) <= 0.2 + 1e-9) & (np.abs(pts[:, 1] - 1.0) <= 0.2 + 1e-9)
    objects = hit & ~floor & ~box
    assert box.sum() > 50  # the block without a model: its prism, as before
    dist = np.full(len(dirs), np.inf)
    tris = np.concatenate([world_triangles(w.blocks["chair"]), world_triangles(w.blocks["tote"])])
    dist[objects] = distance_to_triangles(pts[objects], tris)
    assert objects.sum() > 300
    assert dist[objects].max() < 0.01  # every return of the models lies on their triangles

    # the same blocks as prisms: rays that met a prism where the model is not now go on (floor or nothing)
    for b in w.blocks.values():
        b.visuals = []
    t_prism, _ = RaycastScene3D(w).cast(*args)
    through = np.isfinite(t_prism) & (t_mesh > t_prism + 0.01)
    assert through.sum() > 200
    assert not objects[through].any() or dist[through & objects].max() < 0.01
    assert (t_mesh >= t_prism - 1e-5).all()  # the models lie within their prisms (Embree: float32 distances)


@needs_models
def test_depth_camera_sees_the_triangles_of_visual_models_not_their_prisms(tmp_path):
    """The same for a depth camera (OpenGL): every pixel off the floor unprojects to within 1 cm of the model's
    triangles, and pixels that would show the prism see through it."""
    from mvsim_core.sensors.camera import PinholeModel
    from mvsim_core.sensors.render import gl_context
    from mvsim_core.sensors.render.camera_model import OPTICAL_WRT_BODY
    from mvsim_core.sensors.render.renderer import SceneRenderer
    from mvsim_core.sensors.render.scene_geometry import SceneGeometry

    ok, why = gl_context.available()
    if not ok:
        pytest.skip(f"no offscreen OpenGL context on this machine: {why}")
    xml = f"""<mvsim_world version="1.0">
<block name="chair"><static>true</static><init_pose3d>2.2 0.4 0 25 0 90</init_pose3d><skip_elevation_adjust/>
  <shape_from_visual/><visual><model_uri>{MODELS}/chair_x3.dae</model_uri></visual></block>
</mvsim_world>"""
    path = tmp_path / "c.world.xml"
    path.write_text(xml)
    w = mv.load_world(path, seed=0)
    k = PinholeModel(320, 240, 160.0, 120.0, 200.0, 200.0)
    rot = rotation(0.15, 0.1, 0.0) @ OPTICAL_WRT_BODY  # a little to the left and down
    pos = np.array([0.0, 0.0, 0.6])
    depth = SceneRenderer(SceneGeometry(w)).render(rot, pos, k, 0.05, 20.0).depth.astype(np.float64)
    rows, cols = np.mgrid[0:depth.shape[0], 0:depth.shape[1]]
    opt = np.stack([(cols - k.cx) / k.fx, (rows - k.cy) / k.fy, np.ones_like(depth)], -1) * depth[..., None]
    pts = (opt.reshape(-1, 3) @ rot.T + pos)
    objects = depth.reshape(-1) > 0.0  # 0: nothing (the camera scene has no floor here)
    assert objects.sum() > 2000
    dist = distance_to_triangles(pts[objects], world_triangles(w.blocks["chair"]))
    assert dist.max() < 0.01

    w.blocks["chair"].visuals = []
    prism = SceneRenderer(SceneGeometry(w)).render(rot, pos, k, 0.05, 20.0).depth.astype(np.float64).reshape(-1)
    through = (prism > 0.0) & ((depth.reshape(-1) == 0.0) | (depth.reshape(-1) > prism + 0.01))
    assert through.sum() > 2000


def _scan_2d(tmp_path: Path, trace_3d: bool, height: float = 0.45) -> tuple[mv.World, np.ndarray, np.ndarray]:
    """A robot at the origin with a 2D lidar (120°, 481 rays, ``height`` m up) facing a chair model (a static
    block seen as its visual model, the prism of its footprint as outline) and a 2 m wall at x = 4 m (face at
    x = 4 m) behind it. Returns the world and the lidar's world x, y of each ray's return and its range (m)."""
    extra = ("<range_std_noise>0</range_std_noise><angle_std_noise_deg>0</angle_std_noise_deg>"
             f"<raytrace_3d>{str(trace_3d).lower()}</raytrace_3d>")
    xml = f"""<mvsim_world version="1.0">
<vehicle name="r1"><dynamics class="differential"/><init_pose>0 0 0</init_pose>
  <sensor class="laser" name="laser1"><pose>0 0 0</pose><height>{height}</height><fov_degrees>120</fov_degrees>
  <nrays>481</nrays><max_range>20</max_range><sensor_period>0.1</sensor_period>{extra}</sensor></vehicle>
<block name="chair"><static>true</static><init_pose3d>2.2 0.4 0 25 0 90</init_pose3d><skip_elevation_adjust/>
  <shape_from_visual/><visual><model_uri>{MODELS}/chair_x3.dae</model_uri></visual></block>
<block name="wall"><static>true</static><init_pose>0 0 0</init_pose><zmin>0</zmin><zmax>2</zmax>
  <shape><pt>4 -8</pt><pt>4.2 -8</pt><pt>4.2 8</pt><pt>4 8</pt></shape></block>
</mvsim_world>"""
    path = tmp_path / "l2.world.xml"
    path.write_text(xml)
    w = mv.load_world(path, seed=0)
    w.run(0.1)
    scan = w.vehicles["r1"].sensors["laser1"].last
    x, y, z, yaw = scan.sensor_pose[:4]
    assert z == pytest.approx(height, abs=1e-6)
    a = yaw + scan.angles.astype(np.float64)
    r = scan.ranges.astype(np.float64)
    assert scan.valid.all()  # the wall closes every ray
    return w, np.column_stack([x + r * np.cos(a), y + r * np.sin(a), np.full(len(r), z)]), r


def _outline_distance(block: mv.Block, pts: np.ndarray) -> np.ndarray:
    """(P,) x-y distance (m) of each point to the edges of the block's footprint at its pose."""
    x, y, _, yaw, _, _ = block.pose
    c, s = math.cos(yaw), math.sin(yaw)
    poly = np.asarray(block.footprint, dtype=np.float64) @ np.array([[c, s], [-s, c]]) + (x, y)
    a, b = poly, np.roll(poly, -1, axis=0)
    d2 = _seg_dist2(pts[:, None, :2], a[None], b[None])
    return np.sqrt(d2.min(axis=1))


@needs_models
@pytest.mark.parametrize("engine", ["embree", "numba"])
@pytest.mark.parametrize("height, n_chair", [(0.2, 13), (0.7, 35)])
def test_lidar2d_raytrace_3d_sees_the_triangles_of_a_visual_model_not_its_outline(tmp_path, monkeypatch, height,
                                                                                   n_chair, engine):
    """With ``raytrace_3d`` every return off the wall lies within 1 cm of the chair's triangles (at the scan's
    height), and rays that cross the chair's outline but miss its triangles return the wall behind (x = 4 m);
    without it the lidar sees the outline (upstream's Box2D fixture). (The block spans z in [−0.21, 0.27] m: at
    0.2 m its outline would be met by ``raytrace_3d`` rays, at 0.7 m not, but the model's back is.) The same with
    the static model in Embree and in our trees."""
    monkeypatch.setenv("MVSIM_MESH_ENGINE", engine)
    w, pts3, _ = _scan_2d(tmp_path, True, height)
    on_wall = np.abs(pts3[:, 0] - 4.0) < 1e-4
    chair = ~on_wall
    assert chair.sum() == n_chair
    tris = world_triangles(w.blocks["chair"])
    assert distance_to_triangles(pts3[chair], tris).max() < 0.01

    _, pts2, _ = _scan_2d(tmp_path, False, height)
    outline = np.abs(pts2[:, 0] - 4.0) >= 1e-4
    assert outline.sum() == 124
    assert _outline_distance(w.blocks["chair"], pts2[outline]).max() < 1e-4  # the 2D rays stop at the outline
    through = outline & on_wall  # crossed the outline, missed the triangles: the wall behind
    assert through.sum() >= 124 - n_chair


@needs_models
def test_lidar2d_raytrace_3d_follows_a_moving_model(tmp_path):
    """A dynamic block seen as its chair model, teleported 1 m sideways between two scans: each scan's returns off
    the wall lie within 1 cm of the chair's triangles where the chair is at that scan, and the second scan's
    returns are more than 30 cm from where the chair was."""
    _scan_2d(tmp_path, True, 0.2)  # writes the world file
    text = (tmp_path / "l2.world.xml").read_text().replace("<block name=\"chair\"><static>true</static>",
                                                         "<block name=\"chair\"><static>false</static>")
    (tmp_path / "l2.world.xml").write_text(text)
    w = mv.load_world(tmp_path / "l2.world.xml", seed=0)
    lidar = w.vehicles["r1"].sensors["laser1"]
    seen = []
    for y in (0.4, -0.6):
        x0, _, _, yaw, _, _ = w.blocks["chair"].pose
        w.set_pose("chair", x0, y, yaw)
        w.run(0.1)
        scan = lidar.last
        sx, sy, sz, syaw = scan.sensor_pose[:4]
        a = syaw + scan.angles.astype(np.float64)
        r = scan.ranges.astype(np.float64)
        pts = np.column_stack([sx + r * np.cos(a), sy + r * np.sin(a), np.full(len(r), sz)])
        chair = np.abs(pts[:, 0] - 4.0) >= 1e-4
        assert chair.sum() >= 10
        tris = world_triangles(w.blocks["chair"])
        assert abs(w.blocks["chair"].pose[1] - y) < 0.02
        assert distance_to_triangles(pts[chair], tris).max() < 0.01
        seen.append((pts[chair], tris))
    assert distance_to_triangles(seen[1][0], seen[0][1]).min() > 0.3
