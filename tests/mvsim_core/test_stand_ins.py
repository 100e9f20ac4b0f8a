"""Models from the mirror, and stand-ins that never jam a world (issue 17, Deliver 3).

With the mirror (the test suite's ``MVSIM_ASSET_MIRROR``) a ``<shape_from_visual/>`` footprint comes from the real
mesh. Without it (a user offline with an empty cache), a block with nothing to measure becomes a small intangible
square and a vehicle's chassis the outline of its wheels, so that no stand-in traps what the world places around it.
"""

from __future__ import annotations

import numpy as np
import pytest

import mvsim_core as mv


def colliding(path) -> set[str]:
    w = mv.load_world(path).start()
    for _ in range(3):
        w.step()
    return {n for n, v in w.vehicles.items() if v.had_collision}


def test_the_turtlebot_takes_its_footprint_from_its_mesh_and_drives_2_m(worlds_dir):
    w = mv.load_world(worlds_dir / "mvsim_tutorial" / "demo_turtlebot_world.world.xml").start()
    r1 = w.vehicles["r1"]
    fp = np.asarray(r1.chassis.footprint)
    np.testing.assert_allclose(np.ptp(fp, axis=0), [0.14, 0.14], atol=0.02)
    x0 = r1.pose[0]
    while r1.pose[0] - x0 < 2.0 and w.time < 15.0:
        r1.set_twist(0.2, 0.0, 0.0)
        w.step()
    assert r1.pose[0] - x0 >= 2.0 and abs(r1.pose[1] + 0.5) < 0.01 and not r1.had_collision


def test_offline_stand_ins_trap_nothing(worlds_dir, monkeypatch, tmp_path):
    """Every shared world, loaded offline with an empty cache and no mirror: the vehicles in collision after the
    first steps are those in collision with every model present (demo_many_robots places some robots on each
    other); the turtlebot's chassis is its wheels' outline, not a 1 m box."""
    worlds = sorted(worlds_dir.rglob("*.world.xml"))
    with_models = {p.name: colliding(p) for p in worlds}
    monkeypatch.delenv("MVSIM_ASSET_MIRROR")
    monkeypatch.setenv("MVSIM_CACHE_DIR", str(tmp_path / "empty"))
    for p in worlds:
        assert colliding(p) <= with_models[p.name], p.name
    w = mv.load_world(worlds_dir / "mvsim_tutorial" / "demo_turtlebot_world.world.xml")
    np.testing.assert_allclose(np.ptp(np.asarray(w.vehicles["r1"].chassis.footprint), axis=0), [0.066, 0.19],
                               atol=1e-9)
    assert any("outline of its wheels" in m for m in w.warnings)


def test_a_block_with_nothing_to_measure_is_small_and_intangible(tmp_path, no_asset_mirror):
    p = tmp_path / "w.world.xml"
    p.write_text('<mvsim_world version="1.0">\n<block name="pole"><static>true</static><init_pose>1 0 0</init_pose>'
                 '<zmax>2.5</zmax>\n<shape_from_visual/><visual><model_uri>https://mrpt.github.io/mvsim-models/none.dae'
                 '</model_uri></visual></block>\n</mvsim_world>\n')
    w = mv.load_world(p)
    b = w.blocks["pole"]
    assert b.is_intangible and np.ptp(np.asarray(b.footprint), axis=0).tolist() == pytest.approx([0.1, 0.1])
    assert (b.zmin, b.zmax) == (0.0, 2.5)  # the written height
    assert any("w.world.xml:3: <shape_from_visual/>: block 'pole' has no visual model" in m for m in w.warnings)
