"""The 3D scene: one cast of several sensors gives, ray by ray, the nearest of all planes, solids and elevation maps
tested one by one (the per-sensor sector filing drops nothing), a sensor never sees its own vehicle, the threaded
kernel gives the same answers, and a static block moved with ``World.set_pose`` is seen at its new place."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.rotations import rotations
from mvsim_core.sensors.raycast.heightfield import cast_heightfield
from mvsim_core.sensors.raycast.rays3d import RaycastScene3D
from mvsim_core.sensors.raycast.solids import C_OWNER, hit_solid


def random_world(tmp_path: Path, seed: int) -> mv.World:
    rng = np.random.default_rng(seed)
    hm = rng.uniform(-0.5, 0.8, (21, 21))
    matrix = ";".join(" ".join(f"{v:.3f}" for v in row) for row in hm)
    parts = [f'<element class="elevation_map"><resolution>1</resolution>'
             f"<elevation_data_matrix>[{matrix}]</elevation_data_matrix></element>",
             '<element class="horizontal_plane"><x_min>-30</x_min><x_max>30</x_max><y_min>-30</y_min>'
             "<y_max>30</y_max><z>-0.2</z></element>",
             '<element class="vertical_plane"><x0>-8</x0><y0>12</y0><x1>8</x1><y1>12</y1><height>2.5</height>'
             '<door position="0.3" width="1.5" z_min="0" z_max="2"/><window position="0.7" width="2" z_min="1" '
             'z_max="1.8"/></element>']
    for k in range(60):
        x, y = rng.uniform(-14, 14, 2)
        sx, sy, lz = rng.uniform(0.2, 2.0), rng.uniform(0.2, 2.0), rng.uniform(0.2, 2.5)
        if k % 3 == 0:
            geom = f'<geometry type="cylinder" radius="{sx / 2:.3f}" length="{lz:.3f}"/>'
        elif k % 3 == 1:
            geom = f'<geometry type="ramp" lx="{sx:.3f}" ly="{sy:.3f}" lz="{lz:.3f}"/>'
        else:
            pts = "".join(f"<pt>{a * sx / 2:.3f} {b * sy / 2:.3f}</pt>" for a, b in ((-1, -1), (1, -1), (0, 1)))
            geom = f"<zmin>0.1</zmin><zmax>{lz:.3f}</zmax><shape>{pts}</shape>"
        z, yaw, pitch = rng.uniform(-0.5, 1.0), rng.uniform(-180, 180), rng.uniform(-20, 20)
        parts.append(f'<block name="b{k}"><static>{"true" if k % 4 else "false"}</static><init_pose3d>{x:.3f} '
                     f"{y:.3f} {z:.3f} {yaw:.1f} {pitch:.1f} 0</init_pose3d><skip_elevation_adjust/>{geom}</block>")
    for k in range(4):
        x, y = rng.uniform(-12, 12, 2)
        parts.append(f'<vehicle name="r{k}"><dynamics class="differential"/><init_pose>{x:.3f} {y:.3f} '
                     f"{rng.uniform(-180, 180):.1f}</init_pose></vehicle>")
    path = tmp_path / f"r{seed}.world.xml"
    path.write_text('<mvsim_world version="1.0">\n' + "\n".join(parts) + "\n</mvsim_world>\n")
    return mv.load_world(path, seed=seed)


def brute_force(scene: RaycastScene3D, o: np.ndarray, d: np.ndarray, reach: float, owner: int) -> float:
    best = reach
    for p in scene.planes:
        if d[2] != 0:
            t = (p[4] - o[2]) / d[2]
            x, y = o[0] + t * d[0], o[1] + t * d[1]
            if 0 <= t < best and p[0] <= x <= p[1] and p[2] <= y <= p[3]:
                best = t
    for k in range(len(scene.tab)):
        if owner >= 0 and scene.tab[k, C_OWNER] == owner:
            continue
        best = min(best, hit_solid(scene.tab, scene.verts, k, *o, *d, best))
    hf = scene.heightfields
    for m in range(len(hf)):
        best = min(best, cast_heightfield(hf.meta, hf.levels, hf.heights, hf.bounds, m, *o, *d, best))
    return best if best < reach else math.inf


@pytest.mark.parametrize("seed", [0, 1])
def test_one_cast_equals_testing_everything(tmp_path, seed):
    w = random_world(tmp_path, seed)
    w.step()
    ph = w.start().physics
    scene = RaycastScene3D.from_world(w, ph, parallel=False)
    rng = np.random.default_rng(100 + seed)
    n_sensors, per = 5, 400
    owner = np.array([0, 1, -1, 2, -1])
    origins = np.empty((n_sensors, 3))
    for s in range(n_sensors):
        if owner[s] >= 0:  # on a vehicle, inside its chassis
            x, y, z, _, _, _ = ph.pose_of(int(owner[s]))
            origins[s] = (x, y, z + 0.3)
        else:
            origins[s] = (*rng.uniform(-10, 10, 2), rng.uniform(0.3, 3.0))
    rot = rotations(rng.uniform(-3, 3, n_sensors), rng.uniform(-0.3, 0.3, n_sensors),
                    rng.uniform(-0.3, 0.3, n_sensors))
    dirs = rng.normal(size=(n_sensors * per, 3))
    dirs[:, 2] *= 0.3
    dirs[::7] = [0.0, 0.0, -1.0]  # some straight down
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    start = np.arange(n_sensors + 1) * per
    reach = np.array([30.0, 15.0, 40.0, 8.0, 25.0])
    got, inten = scene.cast(origins, rot, dirs, start, reach, owner)
    n_hit = 0
    for s in range(n_sensors):
        for r in range(start[s], start[s + 1]):
            d = rot[s] @ dirs[r]
            want = brute_force(scene, origins[s], d, reach[s], int(owner[s]))
            assert (math.isinf(want) and math.isinf(got[r])) or got[r] == pytest.approx(want, abs=1e-9), (s, r)
            n_hit += math.isfinite(want)
    assert n_hit > 0.5 * len(dirs)
    assert np.all((inten > 0) == np.isfinite(got))
    # the threaded kernel agrees exactly
    from mvsim_core import threads
    from mvsim_core.sensors.raycast import rays3d

    scene.parallel = True
    threads.set_threads(2)
    try:
        got2, inten2 = scene.cast(origins, rot, dirs, start, reach, owner)
    finally:
        threads.set_threads(None)
    assert len(getattr(rays3d.trace_sensors_parallel, "signatures", ())) >= 1
    np.testing.assert_array_equal(got, got2)
    np.testing.assert_array_equal(inten, inten2)


def test_static_block_moved_by_set_pose_is_seen_at_its_new_place(tmp_path):
    path = tmp_path / "m.world.xml"
    path.write_text('<mvsim_world version="1.0"><block name="b"><static>true</static><init_pose>5 0 0</init_pose>'
                    "<zmin>0</zmin><zmax>2</zmax></block></mvsim_world>")
    w = mv.load_world(path, seed=0)
    scene = RaycastScene3D.from_world(w)
    cast = (np.array([[0.0, 0.0, 1.0]]), np.eye(3)[None], np.array([[1.0, 0.0, 0.0]]), np.array([0, 1]),
            np.array([20.0]), np.array([-1]))
    assert scene.cast(*cast)[0][0] == pytest.approx(4.5)
    w.set_pose("b", 8.0, 0.0, 0.0)
    assert scene.cast(*cast)[0][0] == pytest.approx(7.5)


def test_a_sensor_with_a_nan_pose_sees_nothing(tmp_path):
    """A non-finite sensor pose (a physics blow-up) gives misses, not a hang; the other sensors are unaffected."""
    w = random_world(tmp_path, 2)
    scene = RaycastScene3D.from_world(w)
    dirs = np.array([[1.0, 0.0, -0.2], [0.0, 0.0, -1.0]])
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    origins = np.array([[np.nan, 0.0, 1.0], [0.0, 0.0, 2.0]])
    t, i = scene.cast(origins, np.stack([np.eye(3)] * 2), np.vstack([dirs, dirs]), np.array([0, 2, 4]),
                      np.array([50.0, 50.0]), np.array([-1, -1]))
    assert np.all(np.isinf(t[:2])) and np.all(i[:2] == 0)
    assert np.all(np.isfinite(t[2:]))
