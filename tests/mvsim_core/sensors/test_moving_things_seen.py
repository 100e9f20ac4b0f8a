"""Sensors see what moves (issue 16): walking actors and keyframed blocks are read by a 3D lidar and drawn for
cameras where they are at each sample, not where they started. Expected distances come from the paths and keyframes
written in each test (1 m/s walks, linear keyframes), not from the engine's tracks.

An actor without written collision dims is its person-shaped stand-in for the 3D lidar and (its model missing) for
cameras: a 0.5 m wide 12-sided body with a vertex ahead along its heading, 1.8 m tall with a 0.18 m wide head
above 1.566 m. With ``collision_radius`` written the figure is that wide (2 r).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.objects.actor import STAND_IN_COLOR
from mvsim_core.sensors.lidar3d import PointCloud3D
from mvsim_core.sensors.render import gl_context
from mvsim_core.sensors.rgbd_camera import RgbdObservation

FLOOR = ('<element class="horizontal_plane"><x_min>-20</x_min><y_min>-20</y_min><x_max>20</x_max>'
         '<y_max>20</y_max><color>#808080</color></element>\n')
TOWARDS = ('<actor name="bob"><walking_speed>1.0</walking_speed><path loop="true"><waypoint>6 0 180</waypoint>'
           '<waypoint>2 0 180</waypoint></path></actor>\n')
"""Walks from (6, 0) to (2, 0) in 4 s facing the sensors at the origin (x = 6 − t for t ≤ 4 s), then back."""
ACROSS = ('<actor name="ann"><walking_speed>1.0</walking_speed><collision_radius>0.3</collision_radius>'
          '<path loop="true"><waypoint>3 -2 90</waypoint><waypoint>3 2 90</waypoint></path></actor>\n')
"""Crosses in front, along x = 3 from y = −2 to y = 2 in 4 s (y = t − 2), 0.6 m wide."""
SLIDER = ('<block name="slider"><init_pose>3 0 0</init_pose><mass>5</mass><zmin>0</zmin><zmax>2</zmax><shape>'
          '<pt>-0.25 -0.25</pt><pt>0.25 -0.25</pt><pt>0.25 0.25</pt><pt>-0.25 0.25</pt></shape>'
          '<animation type="keyframes"><time_pose>0 0 0 0</time_pose><time_pose>2 2 0 0</time_pose>'
          '<time_pose>4 0 0 0</time_pose></animation></block>\n')
"""A 0.5 m square keyframed from x = 3 to x = 5 and back every 4 s (x = 3 + t for t ≤ 2 s, 7 − t after)."""


def make_world(tmp_path: Path, body: str) -> mv.World:
    path = tmp_path / "moving.world.xml"
    path.write_text(f'<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>\n{FLOOR}{body}'
                    '</mvsim_world>\n')
    return mv.load_world(path)


def lidar3d(angles: str = "0 13.5 20") -> str:
    """A standalone 3D lidar 1 m above the origin, 360 azimuths (index 180 looks along +x), no noise."""
    return ('<sensor class="lidar3d" name="lidar"><pose_3d>0 0 1 0 0 0</pose_3d>'
            f'<vertical_ray_angles>{angles}</vertical_ray_angles><horz_nrays>360</horz_nrays>'
            '<max_range>20</max_range><sensor_period>0.05</sensor_period><range_std_noise>0</range_std_noise>'
            '</sensor>\n')


def ray_of(pc: PointCloud3D, ring: int, k: int) -> np.ndarray | None:
    """The return (sensor frame, m) of ring ``ring`` at azimuth index ``k``, or None."""
    m = (pc.ring == ring) & (pc.azimuth_index == k)
    return pc.points[m][0].astype(np.float64) if m.any() else None


def circle_range(azimuth: float, cx: float, cy: float, r: float) -> float:
    """Horizontal distance from the origin along ``azimuth`` (rad) to a circle of radius r at (cx, cy) (m), inf if
    the ray misses it."""
    ux, uy = math.cos(azimuth), math.sin(azimuth)
    along = cx * ux + cy * uy
    off2 = (cx * cx + cy * cy) - along * along
    return along - math.sqrt(r * r - off2) if off2 < r * r else math.inf


def run_to(w: mv.World, t: float) -> None:
    w.run(t - w.time)
    assert w.time == pytest.approx(t)


# ---------------------------------------------------------------------------------------------- 3D lidar
def test_a_3d_lidar_reads_an_actor_walking_towards_it_with_its_stand_in_height(tmp_path):
    """The horizontal ring reads 6 − t − 0.25 (the body's front vertex) at t = 1 s and 3 s; at 3 s the 13.5° ring
    passes over the body and hits the head (0.09 m radius, 1.566 .. 1.8 m) at 2.91 m; the 20° ring passes over the
    1.8 m figure (1 + 2.75·tan 20° = 2.0 m): a 1 m box would have let the 13.5° ring through too."""
    w = make_world(tmp_path, TOWARDS + lidar3d())
    for t in (1.0, 3.0):
        run_to(w, t)
        pc = w.sensors["lidar"].last
        assert isinstance(pc, PointCloud3D) and pc.stamp == pytest.approx(t)
        x = 6.0 - t
        assert w.actors["bob"].pose[0] == pytest.approx(x, abs=1e-6)
        assert ray_of(pc, 0, 180) == pytest.approx([x - 0.25, 0.0, 0.0], abs=0.02)
    head = ray_of(pc, 1, 180)
    assert head is not None and head[0] == pytest.approx(3.0 - 0.09, abs=0.02)
    assert 1.566 - 0.02 < 1.0 + head[2] < 1.8
    assert ray_of(pc, 2, 180) is None


def test_a_3d_lidar_reads_an_actor_crossing_in_front_at_its_collision_width(tmp_path):
    """``ann`` (collision radius 0.3 m) crosses along x = 3: the horizontal ring reads the circle of 0.3 m around
    where her path has her, on the rays that meet it (within 2 cm: the figure is a 12-gon; grazing rays may pass
    beside it), at t = 2 s (straight
    ahead, 2.7 m) and t = 1 s (at y = −1, seen 18° to the right); the rays that miss her read nothing."""
    w = make_world(tmp_path, ACROSS + lidar3d("0"))
    for t, cy in ((1.0, -1.0), (2.0, 0.0)):
        run_to(w, t)
        pc = w.sensors["lidar"].last
        assert isinstance(pc, PointCloud3D)
        hits = 0
        for k in range(120, 241):
            az = math.radians(k - 180)
            want = circle_range(az, 3.0, cy, 0.3)
            p = ray_of(pc, 0, k)
            if math.isinf(circle_range(az, 3.0, cy, 0.3 * math.cos(math.pi / 12))):  # misses the inscribed circle
                assert p is None or math.isfinite(want), (t, k)  # grazing rays may pass beside a 12-gon's edges
                continue
            assert p is not None and math.hypot(p[0], p[1]) == pytest.approx(want, abs=0.02), (t, k)
            hits += 1
        assert 9 <= hits <= 12  # 0.6 m seen from ~3 m: about 11 one-degree rays
    assert ray_of(pc, 0, 180) == pytest.approx([2.7, 0.0, 0.0], abs=0.02)


def test_a_3d_lidar_reads_a_keyframed_block_at_its_moved_distance(tmp_path):
    """The slider's front face is at 3 + t − 0.25 (t = 1 s: 3.75 m) and 7 − t − 0.25 (t = 3.5 s: 3.25 m)."""
    w = make_world(tmp_path, SLIDER + lidar3d("0"))
    for t, want in ((1.0, 3.75), (3.5, 3.25)):
        run_to(w, t)
        pc = w.sensors["lidar"].last
        assert isinstance(pc, PointCloud3D)
        assert ray_of(pc, 0, 180) == pytest.approx([want, 0.0, 0.0], abs=0.02)
        for k in (177, 183):  # ±3°: the same face (it spans ±3.8° at 3.75 m)
            assert ray_of(pc, 0, k)[0] == pytest.approx(want, abs=0.02)


# ---------------------------------------------------------------------------------------------- cameras
@pytest.fixture
def gl() -> None:
    ok, why = gl_context.available()
    if not ok:
        pytest.skip(f"no offscreen OpenGL context on this machine: {why}")


def rgbd() -> str:
    """A standalone RGB-D camera 1 m above the origin looking along +x (640 × 480, f = 500), no noise."""
    return ('<sensor class="rgbd_camera" name="cam"><pose_3d>0 0 1 0 0 0</pose_3d><sensor_period>0.05'
            '</sensor_period><depth_noise_sigma>0</depth_noise_sigma></sensor>\n')


LIGHT = "<lights><light_ambient>1</light_ambient></lights>\n"


def test_a_depth_camera_sees_an_actor_walking_towards_it(gl, tmp_path):
    """Depth at the image centre: 6 − t − 0.25 at t = 1 s and 3 s, the stand-in's colour there (full ambient
    light); the figure's top (1.8 m) is where the pinhole model puts it: row 240 − 500·0.8/(x − 0.25) ± 2 px."""
    w = make_world(tmp_path, LIGHT + TOWARDS + rgbd())
    for t in (1.0, 3.0):
        run_to(w, t)
        obs = w.sensors["cam"].last
        assert isinstance(obs, RgbdObservation) and obs.stamp == pytest.approx(t)
        d = 6.0 - t - 0.25
        assert obs.depth[240, 320] == pytest.approx(d, abs=0.02)
        assert tuple(obs.rgb[240, 320]) == STAND_IN_COLOR[:3]
        col = obs.depth[:, 320]
        top = int(np.argmax(col > 0))  # the first row with a return: the head's front (x − 0.09)
        assert top == pytest.approx(240 - 500 * 0.8 / (6.0 - t - 0.09), abs=2)


def test_a_depth_camera_sees_a_keyframed_block_where_it_has_moved(gl, tmp_path):
    w = make_world(tmp_path, SLIDER + rgbd())
    for t, want in ((1.0, 3.75), (3.5, 3.25)):
        run_to(w, t)
        obs = w.sensors["cam"].last
        assert isinstance(obs, RgbdObservation)
        assert obs.depth[240, 320] == pytest.approx(want, abs=0.02)
