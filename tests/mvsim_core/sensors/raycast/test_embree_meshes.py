"""Static mesh models through Embree (mvsim_core.sensors.raycast.embree_meshes): distances, reach, intensities,
precision far from the origin, the engine switch, and agreement with our own trees on a scene of chair models."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.raycast import embree_meshes
from mvsim_core.sensors.raycast.embree_meshes import EmbreeMeshes, use_embree
from mvsim_core.sensors.raycast.rays3d import RaycastScene3D

pytestmark = pytest.mark.skipif(embree_meshes._embreex() is None, reason="embreex not installed")

REPO = Path(__file__).resolve().parents[4]
MODELS = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared")) / "assets" / "mvsim-models"

SQUARE_V = np.array([[0.0, -1, -1], [0, 1, -1], [0, 1, 1], [0, -1, 1]])
SQUARE_F = np.array([[0, 1, 2], [0, 2, 3]])


def square_at(x: float) -> tuple[np.ndarray, np.ndarray]:
    """A 2 m square facing the x axis at ``x`` m."""
    return SQUARE_V + (x, 0.0, 0.0), SQUARE_F


def test_distances_reach_and_intensities():
    em = EmbreeMeshes([square_at(2.0), square_at(5.0)], [0.25, 0.75])
    assert em.n_triangles == 4
    o = np.zeros((6, 3))
    d = np.array([[1.0, 0, 0], [1, 0, 0], [-1, 0, 0], [1, 0.1, 0.1], [1, 0, 0], [math.nan, 0, 0]])
    d[3] /= np.linalg.norm(d[3])
    o[4] = (3.0, 0.0, 0.5)  # between the squares: meets the far one
    reach = np.array([10.0, 1.5, 10.0, 10.0, 10.0, 10.0])
    t, inten = em.cast(o, d, reach)
    np.testing.assert_allclose(t[[0, 3, 4]], [2.0, 2.0 / d[3, 0], 2.0], rtol=1e-6)
    assert np.isinf(t[[1, 2, 5]]).all()  # beyond reach, behind, not finite
    np.testing.assert_array_equal(inten, np.array([0.25, 0, 0, 0.25, 0.75, 0], dtype=np.float32))


def test_both_sides_are_seen():
    em = EmbreeMeshes([square_at(2.0)], [0.5])
    t, _ = em.cast(np.array([[4.0, 0.3, -0.2]]), np.array([[-1.0, 0, 0]]), np.array([10.0]))
    assert t[0] == pytest.approx(2.0, abs=1e-6)


def test_far_from_the_origin_keeps_micrometres():
    """A square 2 m in front of a ray, both 1000 km from the world origin: float32 about the scene's own centre
    keeps the distance to a few µm (float32 world coordinates there would step by 6 cm)."""
    far = np.array([1e6, -2e6, 30.0])
    v, f = square_at(2.0)
    em = EmbreeMeshes([(v + far, f)], [1.0])
    t, _ = em.cast(far[None] + (0.0, 0.3, 0.2), np.array([[1.0, 0, 0]]), np.array([10.0]))
    assert t[0] == pytest.approx(2.0, abs=1e-5)


def test_non_finite_vertices_drop_their_triangles():
    v, f = square_at(2.0)
    v = v.copy()
    v[3] = math.nan  # the second triangle (0, 2, 3) goes
    em = EmbreeMeshes([(v, f)], [1.0])
    assert em.n_triangles == 1
    t, _ = em.cast(np.zeros((2, 3)), np.array([[1.0, 0, 0], [1.0, 0, 0]]), np.array([10.0, 10.0]))
    assert t[0] == pytest.approx(2.0)


def test_engine_switch(monkeypatch):
    monkeypatch.delenv("MVSIM_MESH_ENGINE", raising=False)
    assert use_embree()
    monkeypatch.setenv("MVSIM_MESH_ENGINE", "numba")
    assert not use_embree()
    monkeypatch.setenv("MVSIM_MESH_ENGINE", "Embree")
    assert use_embree()


def chairs_world(tmp_path: Path) -> mv.World:
    """A robot-free world of 3 × 3 static chairs (chair_x3.dae, 2748 triangles each) 1.6 m apart, the middle one
    missing, turned and tilted differently."""
    parts = []
    for i in (-1, 0, 1):
        for j in (-1, 0, 1):
            if i == 0 and j == 0:
                continue
            parts.append(f'<block name="c{i}{j}"><static>true</static><init_pose3d>{1.6 * i} {1.6 * j} 0 '
                         f'{37 * i + 71 * j} {5 * j} {90 + 3 * i}</init_pose3d><skip_elevation_adjust/>'
                         f'<shape_from_visual/><visual><model_uri>{MODELS}/chair_x3.dae</model_uri></visual></block>')
    path = tmp_path / "chairs.world.xml"
    path.write_text('<mvsim_world version="1.0">' + "".join(parts) + "</mvsim_world>")
    return mv.load_world(path, seed=0)


def vlp16() -> np.ndarray:
    az = np.linspace(-math.pi, math.pi, 1800, endpoint=False)
    el = np.deg2rad(np.linspace(-15.0, 15.0, 16))
    a, e = np.meshgrid(az, el)
    return np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], -1).reshape(-1, 3)


@pytest.mark.skipif(not (MODELS / "chair_x3.dae").is_file(), reason="model mirror not present")
def test_embree_and_our_trees_agree_on_chairs(tmp_path):
    """VLP-16 sweeps from three places among 8 chairs (21 984 triangles): Embree and our trees hit the same rays
    (all but a handful that graze an edge) at the same distances within 20 µm, with the same intensities; a second
    Embree scene gives bit-identical distances."""
    w = chairs_world(tmp_path)
    dirs = vlp16()
    a = RaycastScene3D(w, embree=True)
    b = RaycastScene3D(w, embree=False)
    assert a.static_meshes[0].n_triangles == 8 * 2748 and b.meshes.n_triangles == 2748  # ours: one shared tree
    for origin in ((0.0, 0.0, 0.45), (0.8, -0.3, 0.2), (-2.5, 2.0, 1.0)):
        args = (np.array([origin]), np.eye(3)[None], dirs, np.array([0, len(dirs)]), np.array([30.0]),
                np.array([-1]))
        ta, ia = a.cast(*args)
        tb, ib = b.cast(*args)
        again, _ = RaycastScene3D(w, embree=True).cast(*args)  # Embree builds with threads: same hits regardless
        np.testing.assert_array_equal(again, ta)
        hit_a, hit_b = np.isfinite(ta), np.isfinite(tb)
        chairs = hit_b & (np.abs(np.array(origin)[2] + tb * dirs[:, 2]) > 1e-6)  # not the floor
        assert chairs.sum() > 500
        assert (hit_a != hit_b).sum() <= 5
        both = hit_a & hit_b
        assert np.abs(ta[both] - tb[both]).max() < 2e-5
        assert (ia[both] == ib[both]).mean() > 0.999


@pytest.mark.skipif(not (MODELS / "chair_x3.dae").is_file(), reason="model mirror not present")
def test_a_static_model_moved_by_set_pose_is_seen_where_it_went(tmp_path):
    """World.set_pose on a static chair: the next cast rebuilds the Embree scene, and no ray meets the chair where
    it was."""
    w = chairs_world(tmp_path)
    scene = RaycastScene3D(w, embree=True)
    el = np.linspace(-0.4, 0.4, 81)
    az = np.linspace(-0.5, 0.5, 41)
    e, a = np.meshgrid(el, az)
    d = np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], -1).reshape(-1, 3)
    o = np.array([0.0, -1.6, 0.45])
    args = (o[None], np.eye(3)[None], d, np.array([0, len(d)]), np.array([30.0]), np.array([-1]))

    def on_chair(t: np.ndarray) -> int:  # returns above the floor within 1 m of c1-1's place (1.6, -1.6)
        p = o + np.where(np.isfinite(t), t, 0.0)[:, None] * d
        return int((np.isfinite(t) & (p[:, 2] > 0.01) & (np.hypot(p[:, 0] - 1.6, p[:, 1] + 1.6) < 1.0)).sum())

    t0, _ = scene.cast(*args)
    assert on_chair(t0) > 100
    x, y, _, yaw, _, _ = w.blocks["c1-1"].pose
    w.set_pose("c1-1", x, y - 5.0, yaw)
    t1, _ = scene.cast(*args)
    assert on_chair(t1) == 0
