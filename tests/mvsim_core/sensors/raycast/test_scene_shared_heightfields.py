"""Copies of one elevation map share their heights; the 3D caster and the renderer prepare them once."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import mvsim_core as mv
from mvsim_core.sensors.raycast.rays3d import RaycastScene3D
from mvsim_core.sensors.render.scene_geometry import SceneGeometry


def write_world(tmp_path: Path, worlds_dir: Path, corners: list[float], sensor: str = "") -> Path:
    tut = worlds_dir / "mvsim_tutorial"
    els = "".join(f'<element class="elevation_map"><resolution>0.5</resolution><elevation_image>'
                  f'{tut / "elevation_mesh1.png"}</elevation_image><corner_min_x>{x}</corner_min_x>'
                  f'<corner_min_y>-25</corner_min_y></element>\n' for x in corners)
    w = tmp_path / f"em{len(corners)}.world.xml"
    w.write_text(f'<mvsim_world version="1.0">\n{els}<include file="{worlds_dir}/definitions/small_robot.vehicle.xml"/>'
                 f'\n<vehicle name="r1" class="small_robot"><init_pose>0 0 0</init_pose>{sensor}</vehicle>\n'
                 f'</mvsim_world>\n')
    return w


def test_copies_give_one_surface_and_one_mesh(tmp_path: Path, worlds_dir: Path) -> None:
    world = mv.load_world(write_world(tmp_path, worlds_dir, [-25.0, -25.0, -25.0, 75.0]))
    hs = [e.heights for e in world.elements]
    assert all(h is hs[0] for h in hs)
    hf = RaycastScene3D(world).heightfields
    assert (hf.n_surfaces, len(hf), hf.heights.size) == (1, 2, 100 * 100)  # 2 distinct corners, 1 grid stored
    assert hf.meta[:, 0].tolist() == [-25.0, 75.0] and hf.meta[0, 5:7].tolist() == hf.meta[1, 5:7].tolist()
    geo = SceneGeometry(world)
    nodes = [n for n, name in enumerate(geo.node_names) if name.startswith("elevation_map:")]
    parts = [p for n, p in geo.parts if n in nodes]
    assert len(nodes) == 2 and len(parts) == 2 and parts[0] is parts[1]
    tf = geo.node_poses()
    assert tf[nodes, :, 3].tolist() == [[-25.0, -25.0, 0.0], [75.0, -25.0, 0.0]]


def test_a_copy_elsewhere_is_hit_where_it_lies(tmp_path: Path, worlds_dir: Path) -> None:
    from mvsim_core.sensors.raycast.heightfield import cast_heightfield

    world = mv.load_world(write_world(tmp_path, worlds_dir, [-25.0, 75.0]))
    hf = RaycastScene3D(world).heightfields
    for m, x in ((0, 0.3), (1, 100.3)):  # straight down from 10 m over each copy, 100 m apart
        t = cast_heightfield(hf.meta, hf.levels, hf.heights, hf.bounds, m, x, 0.2, 10.0, 0.0, 0.0, -1.0, 100.0)
        z = world.elements[m].elevation_at(x, 0.2)
        assert abs((10.0 - t) - z) < 1e-9 and abs(z - 3.3904761904762) < 1e-9


def cpu_of_run(path: Path) -> float:
    world = mv.load_world(path)
    world.start()
    world.run(0.1)  # warm-up: compiled kernels, first scan
    t0 = time.process_time()
    world.run(0.1)
    return time.process_time() - t0


def test_two_hundred_copies_run_as_fast_as_one_with_a_3d_lidar(tmp_path: Path, worlds_dir: Path) -> None:
    lidar = (f'<include file="{worlds_dir}/definitions/velodyne-vlp16.sensor.xml" sensor_x="0" sensor_y="0" '
             f'sensor_z="0.8" sensor_period_sec="0.05"/>')
    one = cpu_of_run(write_world(tmp_path, worlds_dir, [-25.0], lidar))
    many = cpu_of_run(write_world(tmp_path, worlds_dir, [-25.0] * 200, lidar))
    assert many < 3.0 * one + 0.05, (one, many)
    assert np.isfinite(one)
