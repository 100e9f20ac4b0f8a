"""Keyframe animation in the physics (mvsim_core.dynamics.animation): the animated objects' rows are set up at the
physics' build, and stage 0 gives a keyframed block's kinematic body the velocity to its track's next pose."""

from __future__ import annotations

from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.dynamics import animation

DT = 0.005
WORLD = f"""<mvsim_world version="1.0"><simul_timestep>{DT}</simul_timestep>
<element class="horizontal_plane"><x_min>-20</x_min><y_min>-20</y_min><x_max>20</x_max><y_max>20</y_max></element>
<vehicle name="r"><dynamics class="differential"><controller class="twist_pid"/></dynamics>
  <init_pose>3 0.8 0</init_pose></vehicle>
<block name="mover"><init_pose>3 0 0</init_pose><mass>5</mass><zmax>1</zmax>
  <shape><pt>-0.25 -0.25</pt><pt>0.25 -0.25</pt><pt>0.25 0.25</pt><pt>-0.25 0.25</pt></shape>
  <animation type="keyframes"><time_pose>0 0 0 0</time_pose><time_pose>2 2 0 0</time_pose></animation></block>
<block name="ghost"><init_pose>-4 0 0</init_pose><intangible>true</intangible>
  <shape><pt>-0.25 -0.25</pt><pt>0.25 -0.25</pt><pt>0.25 0.25</pt><pt>-0.25 0.25</pt></shape>
  <animation type="keyframes"><time_pose>0 0 0 0</time_pose><time_pose>1 0 1 0</time_pose></animation></block>
</mvsim_world>"""


def started(tmp_path: Path) -> mv.World:
    p = tmp_path / "animation.world.xml"
    p.write_text(WORLD)
    return mv.load_world(p).start()


def test_the_rows_are_the_bodies_then_what_has_none(tmp_path: Path) -> None:
    ph = started(tmp_path).physics
    assert ph.animated == ["mover"]  # rows with a kinematic body
    assert len(ph.tracks) == 2
    assert ph.anim_poses.tolist() == [[3.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-4.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    assert ph._loose_blocks == []


def test_stage_0_drives_the_body_toward_its_next_pose(tmp_path: Path) -> None:
    w = started(tmp_path)
    ph = w.physics
    animation.animate(ph, 0.0, DT)
    assert ph._anim_next is not None
    assert ph._anim_next[0, :2].tolist() == pytest.approx([3.005, 0.0], abs=1e-12)
    assert ph._anim_next[1, :2].tolist() == pytest.approx([-4.0, 0.005], abs=1e-12)
    assert ph.anim_poses[1, :2].tolist() == pytest.approx([-4.0, 0.005], abs=1e-12)  # no body: there at once
    body = ph.bodies.block_bodies["mover"]
    assert (body.linearVelocity.x, body.linearVelocity.y) == pytest.approx((1.0, 0.0), abs=1e-3)  # 5 mm in 5 ms
    assert body.angularVelocity == 0.0


def test_a_world_step_leaves_the_block_where_its_track_says(tmp_path: Path) -> None:
    w = started(tmp_path)
    for _ in range(200):
        w.step()
    assert w.blocks["mover"].pose[:2] == pytest.approx((4.0, 0.0), abs=1e-12)  # 1 s: halfway to +2 m
    assert w.blocks["ghost"].pose[:2] == pytest.approx((-4.0, 0.0), abs=1e-9)  # 1 s: its period, back at the start


def test_stage_0_runs_only_in_a_world_with_animated_objects_and_a_spawn_brings_it_in(tmp_path: Path) -> None:
    """World.step skips stage 0 when the physics has nothing animated (``Physics.animates``, decided at each
    build); an animated block spawned while running makes the rebuilt physics animate it."""
    p = tmp_path / "still.world.xml"
    p.write_text(WORLD.replace("<animation", "<!--").replace("</animation>", "-->"))
    w = mv.load_world(p).start()
    assert w.physics.animates is False
    w.run(0.1)
    mover = WORLD[WORLD.index('<block name="mover">'):WORLD.index('<block name="ghost">')]
    w.spawn(mover.replace('name="mover"', 'name="mover2"').replace("<init_pose>3 0 0", "<init_pose>-3 -3 0"))
    assert w.physics.animates is True
    for _ in range(200):  # 1 s after the spawn at t = 0.1 s: the track's time is the world's
        w.step()
    assert w.time == pytest.approx(1.1, abs=1e-12)
    assert w.blocks["mover2"].pose[:2] == pytest.approx((-3.0 + 1.1, -3.0), abs=1e-9)
    assert started(tmp_path).physics.animates is True
