"""The ray-casting kernels never crash on bad input (issue 14, item 4): rays whose origin, direction, height or
sensor rotation is NaN, infinite or absurdly large read "no hit" — numba does no bounds checks, so before the guards a
NaN direction became a sector index and a 2D lidar with a NaN yaw killed the process (exit 139).

Each case runs in a child process, so that a segmentation fault fails the test instead of ending the test session.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]

WORLD = """<mvsim_world version="1.0">
<element class="vertical_plane"><x0>-5</x0><y0>3</y0><x1>5</x1><y1>3</y1><height>2</height></element>
<element class="elevation_map"><resolution>1</resolution><corner_min_x>-4</corner_min_x>
  <corner_min_y>-4</corner_min_y><elevation_data_matrix>[0 0.1 0.2; 0.1 0.2 0.3; 0.2 0.3 0.1]</elevation_data_matrix>
</element>
<block name="b1"><static>true</static><init_pose>2 -2 0</init_pose><zmin>0</zmin><zmax>1</zmax>
  <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>
<vehicle name="r0"><dynamics class="differential"/><init_pose>-2 0 0</init_pose>
  <sensor class="laser" name="flat"><nrays>31</nrays><sensor_period>0.01</sensor_period></sensor>
  <sensor class="laser" name="tall"><nrays>31</nrays><raytrace_3d>true</raytrace_3d>
    <sensor_period>0.01</sensor_period></sensor>
  <sensor class="lidar3d" name="cloud"><horz_nrays>36</horz_nrays><vert_nrays>4</vert_nrays>
    <sensor_period>0.01</sensor_period></sensor>
</vehicle>
<vehicle name="r1"><dynamics class="differential"/><init_pose>0 -1 90</init_pose></vehicle>
</mvsim_world>
"""

SCRIPT = r'''
import math, sys
import numpy as np
import mvsim_core as mv
from mvsim_core.sensors.raycast.grid import GridCaster
from mvsim_core.sensors.lidar3d import scene_3d

BAD = (math.nan, math.inf, -math.inf, 1e300, -1e300)
w = mv.load_world(sys.argv[1])
w.step()
ctx = w.sensor_scheduler.ctx
scene = ctx.raycast_scene
occ = np.zeros((100, 100))
occ[60:70, 10:90] = 1.0
scene.grids.append(GridCaster(occ, -5.0, -5.0, 0.1))
n = 16
ang = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
good = scene.cast(np.zeros((n, 2)), ang, np.full(n, 0.5), 10.0, -1, True, True)
assert np.isfinite(good).sum() >= 4, good  # the scene is seen from the origin
cases = 0
for v in BAD:
    for which in ("ox", "oy", "dx", "dy", "all"):
        o = np.zeros((n, 2))
        dx, dy = np.cos(ang), np.sin(ang)
        if which in ("ox", "all"):
            o[:, 0] = v
        if which in ("oy", "all"):
            o[:, 1] = v
        if which in ("dx", "all"):
            dx = np.full(n, v)
        if which in ("dy", "all"):
            dy = np.full(n, v)
        for trace_3d in (False, True):
            d = scene.cast(o, None, np.full(n, 0.5), 10.0, -1, True, trace_3d, directions=(dx, dy))
            if not (abs(v) == 1e300 and which in ("dx", "dy")):  # a huge finite direction component is not a
                assert not np.isfinite(d).any(), (which, v, d)  # unit vector: anything finite may come back
            cases += 1
    d = scene.cast(np.zeros((n, 2)), ang, np.full(n, v), 10.0, -1, True, True)  # any height: a distance or a miss
    assert ((d >= 0.0) & (d <= 10.0) | (d == math.inf)).all(), (v, d)
# 3D scene: bad origins, rotations and directions
s3 = scene_3d(ctx)
dirs = np.column_stack([np.cos(ang), np.sin(ang), np.full(n, -0.2)])
dirs /= np.linalg.norm(dirs, axis=1)[:, None]
bounds = np.array([0, n])
ok_t, _ = s3.cast(np.array([[0.0, 0.0, 1.0]]), np.eye(3)[None], dirs, bounds, np.array([20.0]), np.array([-1]))
assert np.isfinite(ok_t).sum() >= 4, ok_t  # the block, the plane, the vehicles
for v in BAD:
    for which in ("origin", "rot", "dirs"):
        o, r, d = np.array([[0.0, 0.0, 1.0]]), np.eye(3)[None].copy(), dirs.copy()
        if which == "origin":
            o[0, 1] = v
        elif which == "rot":
            r[0, 0, 1] = v
        else:
            d[:, 0] = v
        t, inten = s3.cast(o, r, d, bounds, np.array([20.0]), np.array([-1]))
        if abs(v) != 1e300 or which == "origin":
            assert not np.isfinite(t).any() and not inten.any(), (which, v, t)
        cases += 1
# whole sensors: a NaN sensor yaw and a NaN vehicle pose give empty scans, and the world goes on
r0 = w.vehicles["r0"]
for s in r0.sensors.values():
    s.pose = (0.0, 0.0, 0.3, math.nan, 0.0, 0.0)
w.sensor_scheduler.ctx._constants.clear()
w.step()
for s in r0.sensors.values():
    o = s.last
    hits = o.valid.sum() if hasattr(o, "valid") else len(o.points)
    assert hits == 0, (s.name, hits)
print("OK", cases)
'''


def test_kernels_survive_nan_inf_and_huge_rays(tmp_path):
    world = tmp_path / "bad_rays.world.xml"
    world.write_text(WORLD)
    env = {**os.environ, "PYTHONPATH": str(REPO), "MVSIM_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(world)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    assert p.stdout.split() == ["OK", "65"]
