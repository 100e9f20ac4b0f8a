"""The shipped rover world (``worlds/rover.world.xml``): a robot whose class comes straight from its own URDF
(``worlds/definitions/rover.urdf``). Its wheels, frames and sensor mounts are the URDF's; it drives; its laser,
on the URDF's ``base_scan`` link, sees the room's wall where the geometry puts it."""

from __future__ import annotations

import math

import pytest

import mvsim_core as mv
from mvsim_core.sensors.lidar2d import LaserScan


def test_the_rover_comes_from_its_urdf_and_drives(repo_dir):
    w = mv.load_world(repo_dir / "worlds" / "rover.world.xml", seed=0)
    assert w.warnings == [] and w.missing_assets == {}
    v = w.vehicles["rover1"]
    assert v.dynamics.xml_class == "differential" and v.base_frame == "base_footprint"
    assert v.description is not None and v.description.height == pytest.approx(0.0, abs=1e-12)
    wheels = [c for wh in v.wheels for c in (wh.x, wh.y, wh.diameter)]
    assert wheels == pytest.approx([0.0, 0.18, 0.12, 0.0, -0.18, 0.12])
    # the sensors sit on the URDF links: base_link is 0.06 m up, base_scan 0.155 m above it, imu_link 0.1 m
    assert v.sensors["base_scan"].pose == pytest.approx((0.1, 0.0, 0.215, 0.0, 0.0, 0.0), abs=1e-12)
    assert v.sensors["imu_link"].pose == pytest.approx((-0.05, 0.0, 0.16, 0.0, 0.0, 0.0), abs=1e-12)

    w.run(0.1)
    scan = v.sensors["base_scan"].last
    assert isinstance(scan, LaserScan) and scan.frame == "base_scan" and len(scan.ranges) == 271
    ahead = int(abs(scan.angles).argmin())  # the ray along +x hits the east wall's inner face at x = 4.95
    assert scan.angles[ahead] == pytest.approx(0.0, abs=1e-6)
    assert scan.ranges[ahead] == pytest.approx(4.95 - 0.1, abs=0.04)  # noise σ = 1 cm

    v.set_twist(0.3, 0.0, 0.0)
    w.run(3.0)
    x, y = v.pose[:2]
    assert 0.8 <= x <= 0.95 and abs(y) < 0.01 and not v.had_collision
    js = v.joint_state()
    assert js.names == ("left_wheel_joint", "right_wheel_joint")
    for angle in js.positions:  # wheel angle = distance / radius, within 5 %
        assert angle == pytest.approx(x / 0.06, rel=0.05)
    assert math.isfinite(sum(js.velocities))
