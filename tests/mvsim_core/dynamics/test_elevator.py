"""Elevators (issue 16, Deliver 3): an animated horizontal plane carries the vehicles on it; they drive off onto the
floor it reaches; sensors see the plane where it is.

The world: a ground floor (z = 0) everywhere, an upper floor (z = 3 m) over x >= 6, and a 2 x 2 m platform centred
at (5, 0) that waits at z = 0 for 8 s, rises 3 m over the next 8 s and stays up. A small_robot drives onto it, rides
it up and drives off onto the upper floor, where its VLP-16 sees a crate that stands on that floor.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.errors import WorldFileError

PLATFORM = '''<element class="horizontal_plane"><name>lift</name>
  <x_min>-1</x_min><x_max>1</x_max><y_min>-1</y_min><y_max>1</y_max><z>0</z>
  <init_pose3d>5 0 0 0 0 0</init_pose3d>
  <animation type="keyframes">
    <time_pose3d>0 0 0 0 0 0 0</time_pose3d><time_pose3d>8 0 0 0 0 0 0</time_pose3d>
    <time_pose3d>16 0 0 3 0 0 0</time_pose3d><time_pose3d>600 0 0 3 0 0 0</time_pose3d>
  </animation></element>'''


def elevator_world(tmp_path: Path, shared_dir: Path, lidar: bool = True) -> mv.World:
    defs = shared_dir / "worlds" / "definitions"
    sensor = (f'<include file="{defs}/velodyne-vlp16.sensor.xml" sensor_x="0" sensor_z="0.7" '
              f'sensor_std_noise="0" horz_resolution_factor="0.1"/>') if lidar else ""
    path = tmp_path / "elevator.world.xml"
    path.write_text(f'''<mvsim_world version="1.0">
<include file="{defs}/small_robot.vehicle.xml"/>
<element class="horizontal_plane"><name>ground</name><x_min>-5</x_min><x_max>14</x_max><z>0</z></element>
<element class="horizontal_plane"><name>upper</name><x_min>6</x_min><x_max>14</x_max><y_min>-4</y_min>
  <y_max>4</y_max><z>3</z></element>
{PLATFORM}
<block name="crate"><static>true</static><init_pose3d>11 0 3 0 0 0</init_pose3d><zmax>1.0</zmax>
  <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>
<vehicle name="r" class="small_robot"><init_pose>2 0 0</init_pose>{sensor}</vehicle>
</mvsim_world>''')
    return mv.load_world(path).start()


def run_until(w: mv.World, t: float, vx: float) -> None:
    w.vehicles["r"].controller.set_twist(vx, 0.0, 0.0)
    while w.time < t - 1e-9:
        w.step()


def test_the_platform_follows_its_keyframes(tmp_path, shared_dir):
    w = elevator_world(tmp_path, shared_dir, lidar=False)
    lift = next(e for e in w.elements if getattr(e, "params", {}).get("name") == "lift")
    assert lift.is_animated and lift.rect == (4.0, 6.0, -1.0, 1.0) and lift.z == 0.0
    run_until(w, 12.0, 0.0)
    assert lift.z == pytest.approx(1.5, abs=1e-9)  # half way through the 8 s rise
    h = w.physics.terrain.height_at(np.array([5.0, 3.0]), np.zeros(2), np.full(2, 10.0))
    np.testing.assert_allclose(h, [1.5, 0.0])
    run_until(w, 22.0, 0.0)
    assert lift.z == pytest.approx(3.0, abs=1e-9)


def test_a_robot_rides_the_lift_to_the_upper_floor_and_sees_it(tmp_path, shared_dir):
    w = elevator_world(tmp_path, shared_dir)
    v = w.vehicles["r"]
    lidar = next(iter(v.sensors.values()))
    run_until(w, 6.0, 0.5)  # onto the platform's middle: about x = 5
    run_until(w, 8.0, 0.0)
    x0 = v.pose[0]
    assert 4.5 < x0 < 5.5 and v.pose[2] == pytest.approx(0.0, abs=1e-9)
    run_until(w, 12.0, 0.0)
    assert v.pose[2] == pytest.approx(1.5, abs=0.01)  # carried: half way up with the platform
    run_until(w, 16.5, 0.0)
    assert v.pose[2] == pytest.approx(3.0, abs=0.01)
    assert v.pose[0] == pytest.approx(x0, abs=0.01)  # it stood still on the way up
    run_until(w, 26.0, 0.5)  # off the platform, onto the upper floor, up to the crate
    x, _, z, _, pitch, _ = v.pose
    assert x > 7.0 and z == pytest.approx(3.0, abs=1e-6) and abs(pitch) < 1e-6
    obs = lidar.last
    assert obs is not None and obs.stamp > 25.0
    sx, _, sz = obs.sensor_pose[:3]
    assert sz == pytest.approx(3.7, abs=0.01)
    pts = np.asarray(obs.points, dtype=np.float64).reshape(-1, 3)  # sensor frame (level: the robot is level)
    crate_face = 10.5 - sx  # the crate's near face, from the lidar
    on_crate = pts[(np.abs(pts[:, 1]) < 0.3) & (np.abs(pts[:, 0] - crate_face) < 0.03)]
    assert len(on_crate) >= 8  # several rings hit it
    assert np.all(sz + on_crate[:, 2] > 3.0 - 1e-6) and np.all(sz + on_crate[:, 2] < 4.0 + 1e-6)
    # the upper floor is seen too, ahead of the robot at its height
    floor = pts[(pts[:, 0] > 0.5) & (pts[:, 0] < crate_face - 0.2)]
    assert len(floor) and np.allclose(sz + floor[:, 2], 3.0, atol=0.02)


def test_the_rising_lift_is_a_wall_then_a_ceiling(tmp_path, shared_dir):
    """A robot waiting beside the platform meets its edge as a wall while it is a step too high to climb and lower
    than the chassis, and drives under it once it is overhead: the walls follow the moving ground even for a
    robot that does not move."""
    w = elevator_world(tmp_path, shared_dir, lidar=False)
    w.set_pose("r", 3.32, 0.0, 0.0)  # its front (x + 0.6) 8 cm from the edge
    walls = w.physics.terrain_obstacles
    run_until(w, 8.0, 0.0)
    assert walls.count == 0  # the platform is level with the floor
    run_until(w, 9.0, 0.0)  # 0.375 m up: more than 0.55 wheel diameters (0.22 m), less than the chassis (0.63 m)
    assert walls.count > 0
    assert walls.centers()[:, 0].min() > 3.9  # at the platform's edge (x = 4)
    run_until(w, 9.6, 0.5)  # still below the chassis top (0.6 m up); unstopped, it would be 0.2 m further
    x, _, z = w.vehicles["r"].pose[:3]
    front = float(np.asarray(w.vehicles["r"].chassis.footprint)[:, 0].max())
    assert z == 0.0 and x + front < 4.0 and x > 3.3  # it stayed to the edge and stopped there
    run_until(w, 20.0, 0.0)
    assert walls.count == 0  # 3 m up: a ceiling
    run_until(w, 28.0, 0.5)
    x, _, z = w.vehicles["r"].pose[:3]
    assert x > 7.0 and z == 0.0  # under the platform and on, under the upper floor


def test_a_plane_that_turns_is_refused(tmp_path):
    path = tmp_path / "bad.world.xml"
    path.write_text('<mvsim_world version="1.0">\n<element class="horizontal_plane">\n'
                    '<init_pose>0 0 30</init_pose></element>\n</mvsim_world>\n')
    with pytest.raises(WorldFileError, match=r"bad.world.xml:3: a horizontal_plane only moves by translation"):
        mv.load_world(path)


def test_lidars_cameras_and_the_viewer_see_the_lift_where_it_is(tmp_path, shared_dir):
    """A 3D ray cast straight down onto the platform from 10 m up meets it at 10 − z; the camera / viewer scene
    puts the platform's node at its pose."""
    from mvsim_core.sensors.raycast.rays3d import RaycastScene3D
    from mvsim_core.sensors.render.scene_geometry import SceneGeometry

    w = elevator_world(tmp_path, shared_dir, lidar=False)
    rays = RaycastScene3D(w, w.physics)
    scene = SceneGeometry(w, w.physics)
    node = scene.node_names.index("plane:lift")
    down = np.array([[0.0, 0.0, -1.0]])
    for t, z in ((4.0, 0.0), (12.0, 1.5), (20.0, 3.0)):
        run_until(w, t, 0.0)
        dist, _ = rays.cast(np.array([[5.2, 0.3, 10.0]]), np.eye(3)[None], down, np.array([0, 1]), np.array([20.0]),
                            np.array([-1]))
        assert dist[0] == pytest.approx(10.0 - z, abs=1e-9), t
        assert scene.node_poses()[node, :, 3] == pytest.approx([5.0, 0.0, z], abs=1e-9)
