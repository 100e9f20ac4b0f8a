"""A timestep or sensor period that makes a simulated second cost minutes is warned about at load, with the cost."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import mvsim_core as mv
from mvsim_core.costly_periods import costly_parts, format_duration


def world(tmp_path: Path, worlds_dir: Path, timestep: str, period: str) -> Path:
    defs = worlds_dir / "definitions"
    w = tmp_path / "w.world.xml"
    w.write_text(f"""<mvsim_world version="1.0">
  <simul_timestep>{timestep}</simul_timestep>
  <include file="{defs}/small_robot.vehicle.xml"/>
  <vehicle name="r1" class="small_robot">
    <init_pose>0 0 0</init_pose>
    <include file="{defs}/rgbd_camera.sensor.xml" sensor_period_sec="{period}"/>
  </vehicle>
</mvsim_world>
""")
    return w


def costly(warnings: list[str]) -> list[str]:
    return [x for x in warnings if "per simulated second" in x]


def test_a_depth_camera_at_the_minimum_period_is_named_with_its_cost(tmp_path, worlds_dir):
    w = mv.load_world(world(tmp_path, worlds_dir, "1e-4", "1e-4"))
    sensor_file = worlds_dir / "definitions" / "rgbd_camera.sensor.xml"
    assert costly(w.warnings) == [
        f"{sensor_file}:1: sensor 'r1/camera1' (rgbd_camera) with sensor_period 0.0001 s runs 10000 times per "
        f"simulated second: an estimated 4.9 min of computing per simulated second (run(1.0) takes about that "
        f"long); allowed, but make the period longer unless this is meant"]


def test_usual_periods_are_not_warned_about(tmp_path, worlds_dir):
    assert costly(mv.load_world(world(tmp_path, worlds_dir, "1e-4", "0.1")).warnings) == []
    assert costly(mv.load_world(world(tmp_path, worlds_dir, "0", "0.1")).warnings) == []


def test_a_short_timestep_with_many_vehicles_is_named():
    node = SimpleNamespace(file="w.xml", line=3)
    parts = costly_parts(1e-4, node, 1000, [], lambda s: 0)
    assert [(p.what, p.per_second, round(p.seconds, 6), p.node) for p in parts] == [
        ("simul_timestep 0.0001 s with 1000 vehicles", 10000.0, 100.2, node)]
    assert costly_parts(1e-4, node, 100, [], lambda s: 0) == []  # 10.2 s per simulated second
    lidar = SimpleNamespace(period=1e-4, xml_class="laser", node=None)
    assert costly_parts(5e-3, None, 1, [("r1/laser1", lidar)], lambda s: 10_000_000, 1.0)[0].seconds == \
        pytest.approx(200 * (2e-5 + 2e-2))  # sampled at most once per 5 ms step


@pytest.mark.parametrize(("seconds", "text"), [(45.2, "45 s"), (306.0, "5.1 min"), (8280.0, "2.3 h")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text
