"""Every upstream example world in ../shared/worlds loads; counts match what the files declare."""

from __future__ import annotations

import math
from collections import Counter

import pytest

import mvsim_core as mv

# world -> (vehicles {name: (class, [sensor names])}, element counts, blocks, standalone sensors, joints)
EXPECTED = {
    "mvsim_tutorial/demo_1robot.world.xml": (
        {"r1": ("car_ackermann", ["laser1", "laser2"])}, {"occupancy_grid": 1, "ground_grid": 1}, 0, 0, 0),
    "mvsim_tutorial/demo_2robots.world.xml": (
        {"r1": ("small_robot", ["laser1", "camera1"]), "r2": ("car_ackermann", ["laser1", "camera1"])},
        {"horizontal_plane": 1, "ground_grid": 1}, 3, 1, 0),
    "mvsim_tutorial/demo_articulated_vehicle.world.xml": (
        {"tractor": ("tractor_class", []), "trailer": ("trailer_class", [])}, {"elevation_map": 11, "skybox": 1},
        0, 0, 1),
    "mvsim_tutorial/demo_camera.world.xml": (
        {"r1": ("small_robot", ["camera1"])}, {"horizontal_plane": 1}, 2, 0, 0),
    "mvsim_tutorial/demo_depth_camera.world.xml": (
        {"r1": ("small_robot", ["laser1", "camera1"])}, {"horizontal_plane": 1}, 2, 0, 0),
    "mvsim_tutorial/demo_elevation_map.world.xml": (
        {"r1": ("jackal", ["lidar1", "camera1", "gps1"])}, {"elevation_map": 1, "skybox": 1}, 17, 0, 0),
    "mvsim_tutorial/demo_friction_zones.world.xml": (
        {"robot": ("jackal", [])}, {"skybox": 1, "horizontal_plane": 3, "property_region": 2}, 4, 0, 0),
    "mvsim_tutorial/demo_jackal.world.xml": (
        {"r1": ("jackal", ["laser1", "laser2", "camera1"])}, {"occupancy_grid": 1}, 4, 0, 0),
    "mvsim_tutorial/demo_turtlebot_world.world.xml": (
        {"r1": ("turtlebot3_burger", ["laser1", "camera1", "imu1"])}, {"horizontal_plane": 1}, 14 + 6, 0, 0),
    "mvsim_tutorial/demo_walls.world.xml": (
        {"robot1": ("jackal", ["scanner1", "lidar1", "cam1"])}, {"horizontal_plane": 1, "vertical_plane": 5}, 0, 0,
        0),
    "mvsim_tutorial/mvsim_slam.world.xml": (
        {"r1": ("small_robot", ["laser1"])}, {"occupancy_grid": 1, "ground_grid": 1}, 0, 0, 0),
    "tests/test-still-lidar2d.world.xml": (
        {"r1": ("car_ackermann", ["laser1"])}, {"ground_grid": 1, "horizontal_plane": 2}, 7, 0, 0),
}



@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_world_counts(worlds_dir, rel):
    vehicles, elements, nblocks, nstandalone, njoints = EXPECTED[rel]
    w = mv.load_world(worlds_dir / rel)
    assert {n: (v.class_name, list(v.sensors)) for n, v in w.vehicles.items()} == vehicles
    assert Counter(e.xml_class for e in w.elements) == Counter(elements)
    assert len(w.blocks) == nblocks
    assert len(w.sensors) == nstandalone
    assert len(w.joints) == njoints
    # the summary printed by `mvsim check` carries the same counts
    s = w.summary()
    assert f"vehicles: {len(vehicles)} ({sum(len(x[1]) for x in vehicles.values())} sensors)" in s
    assert f"blocks: {nblocks}" in s


def test_every_world_is_covered(worlds_dir):
    files = {str(p.relative_to(worlds_dir)) for p in worlds_dir.rglob("*.world.xml")}
    assert files == set(EXPECTED) | {"mvsim_tutorial/demo_many_robots.world.xml"}


def test_demo_many_robots(worlds_dir):
    f = worlds_dir / "mvsim_tutorial/demo_many_robots.world.xml"
    w = mv.load_world(f, seed=1)
    assert list(w.vehicles) == [f"veh{i}" for i in range(1, 26)]
    assert all(list(v.sensors) == ["laser1"] for v in w.vehicles.values())
    assert sum(len(v.sensors) for v in w.vehicles.values()) == 25
    lidar = w.vehicles["veh7"].sensors["laser1"]
    assert lidar.xml_class == "laser" and lidar.nrays == 100 and lidar.fov == pytest.approx(2 * math.pi)
    assert lidar.publish_topic == "/veh7/laser1"
    xs = [v.pose[0] for v in w.vehicles.values()]
    ys = [v.pose[1] for v in w.vehicles.values()]
    # init_pose = $f{-11+rand()*10} $f{-3+rand()*10}: every robot inside that box, all different
    assert all(-11 <= x <= -1 for x in xs) and all(-3 <= y <= 7 for y in ys)
    assert len(set(xs)) == 25
    # same seed -> same world; another seed -> other poses
    again = mv.load_world(f, seed=1)
    assert [v.pose for v in again.vehicles.values()] == [v.pose for v in w.vehicles.values()]
    other = mv.load_world(f, seed=2)
    assert [v.pose for v in other.vehicles.values()] != [v.pose for v in w.vehicles.values()]
    assert w.timestep == pytest.approx(0.005)
    grid = w.elements[0].grid
    assert grid.resolution == pytest.approx(0.2)


def test_demo_1robot_gridmap(worlds_dir):
    w = mv.load_world(worlds_dir / "mvsim_tutorial/demo_1robot.world.xml")
    (grid_el,) = [e for e in w.elements if e.xml_class == "occupancy_grid"]
    g = grid_el.grid
    assert (g.nx, g.ny) == (1888, 2738)
    assert g.resolution == pytest.approx(0.08)
    assert (g.x_min, g.y_min) == pytest.approx((-10.0, -127.04))
    r1 = w.vehicles["r1"]
    assert r1.dynamics.xml_class == "ackermann"
    assert r1.controller.xml_class == "twist_front_steer_pid"
    # ackermann.vehicle.xml: KP 150.3, KI 59.2, max_torque 400.9; friction mu 0.7, C_damping 0.5, C_rr 0.01
    assert r1.controller.params["KP"] == pytest.approx(150.3, abs=0.05)
    assert r1.controller.params["max_torque"] == pytest.approx(400.9, abs=0.05)
    assert (r1.friction.xml_class, r1.friction.params["mu"]) == ("default", pytest.approx(0.7))


def test_still_lidar_world_walls(worlds_dir):
    w = mv.load_world(worlds_dir / "tests/test-still-lidar2d.world.xml")
    walls = [b for n, b in w.blocks.items() if n.startswith("wall_")]
    assert len(walls) == 7 and all(b.is_static for b in walls)
    laser = w.vehicles["r1"].sensors["laser1"]
    assert laser.nrays == 181 and laser.params["raytrace_3d"] is True
    x, y, _, yaw, _, _ = w.vehicles["r1"].pose
    assert (x, y, yaw) == pytest.approx((5.0, 10.0, 0.0))


def test_shipped_worlds_load_fast(worlds_dir):
    """Loading is cheap enough to repeat: the benchmark (benchmarks/bench_load.py) prints the figures."""
    for rel in EXPECTED:
        mv.load_world(worlds_dir / rel)


def test_loading_and_checking_worlds_leave_numba_unimported(worlds_dir):
    """Loading is plain Python: numba (~0.4 s to import, ~0.6 s more for its first kernel) waits for the first step,
    so that ``mvsim check`` and a load that never steps do not pay for it (issue 20). ``mvsim check`` places the
    objects on the ground as the physics will (a few calls of the kernels built ahead of time, which need no numba):
    run as users do, with those kernels (``MVSIM_JIT=aot``; the suite's check mode imports numba to check types)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    files = sorted(str(p) for p in (repo / "worlds").glob("*.world.xml"))
    files += sorted(str(worlds_dir / rel) for rel in EXPECTED)
    code = ("import sys, mvsim_core\n"
            "from mvsim_core.cli import main\n"
            "worlds = sys.argv[1:]\n"
            "for f in worlds: mvsim_core.load_world(f)\n"
            "try:\n"
            "    main(['check', worlds[0]])\n"
            "except SystemExit as e:\n"
            "    assert not e.code, e.code\n"
            "print('numba' in sys.modules, len(worlds))\n")
    out = subprocess.run([sys.executable, "-c", code, *files], capture_output=True, text=True, timeout=300,
                         cwd=repo, env={**__import__("os").environ, "MVSIM_OFFLINE": "1", "MVSIM_JIT": "aot"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-2:] == ["False", str(len(files))]
