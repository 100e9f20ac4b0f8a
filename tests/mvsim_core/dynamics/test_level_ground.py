"""Vehicles resting level on one-level ground, out of reach of every block, skip the terrain fit (issue 20): the
world runs bit for bit as with the fit done for every vehicle at every step (poses, z, pitch and roll to the sign of
zero), while vehicles come near blocks, climb a ramp, come down and drive away again."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import mvsim_core as mv


def ramp_world(tmp_path: Path, defs: Path) -> Path:
    """One plane at z = 0, a 0.3 m ramp rising along +x from x = 1 to x = 3, a wall block, a two-wheel small_robot
    (one axle: its chassis ends are fitted too) and a four-wheel Jackal."""
    path = tmp_path / "level.world.xml"
    path.write_text(f'''<mvsim_world version="1.0">
<include file="{defs}/small_robot.vehicle.xml"/>
<include file="{defs}/jackal.vehicle.xml"/>
<element class="horizontal_plane"><x_min>-20</x_min><x_max>20</x_max><y_min>-20</y_min><y_max>20</y_max></element>
<block name="ramp"><static>true</static><init_pose>1 -1 0</init_pose><geometry type="ramp" lx="2" ly="2" lz="0.3"/>
</block>
<block name="wall"><static>true</static><init_pose>0 6 0</init_pose><zmin>0</zmin><zmax>1</zmax>
<shape><pt>-3 -0.1</pt><pt>3 -0.1</pt><pt>3 0.1</pt><pt>-3 0.1</pt></shape></block>
<vehicle name="r" class="small_robot"><init_pose>-1.5 0 0</init_pose></vehicle>
<vehicle name="j" class="jackal"><init_pose>-8 3 0</init_pose></vehicle>
</mvsim_world>''')
    return path


def run(path: Path, schedule, steps: int, skip: bool) -> tuple[list[bytes], int, int]:
    """Every step's vehicle states and z, pitch, roll as bytes; and the vehicle-steps that skipped the fit and that
    were fitted."""
    w = mv.load_world(path).start()
    ph = w.physics
    if not skip:
        ph._level = None
    counts = [0, 0]
    inner = ph._on_level_ground

    def counting():
        level = inner()
        if level is not None:
            counts[0] += int(level.sum())
            counts[1] += int((~level).sum())
        return level

    ph._on_level_ground = counting
    out = []
    for k in range(steps):
        schedule(w, k)
        w.step()
        ph = w.physics
        out.append(ph.state.tobytes() + ph.z.tobytes() + ph.pitch.tobytes() + ph.roll.tobytes())
    return out, counts[0], counts[1]


def drive_over_the_ramp(w: mv.World, k: int) -> None:
    """1 m/s towards and up the ramp for 4 s, then back down and away for 9 s; the Jackal circles in the open."""
    if k == 0:
        w.vehicles["j"].set_twist(0.8, 0.0, 0.5)
    if k in (0, 800):
        w.vehicles["r"].set_twist(1.0 if k == 0 else -1.0, 0.0, 0.0)


def test_the_skip_changes_nothing_while_vehicles_meet_blocks(tmp_path, shared_dir):
    path = ramp_world(tmp_path, shared_dir / "worlds" / "definitions")
    fast, skipped, fitted = run(path, drive_over_the_ramp, 2600, skip=True)
    slow, _, _ = run(path, drive_over_the_ramp, 2600, skip=False)
    assert skipped > 2900 and fitted > 800  # both kinds of step happen
    first = next((k for k, (a, b) in enumerate(zip(fast, slow, strict=True)) if a != b), None)
    assert first is None, f"step {first} differs"
    w = mv.load_world(path).start()
    top = 0.0
    for k in range(2600):
        drive_over_the_ramp(w, k)
        w.step()
        top = max(top, w.vehicles["r"].pose[2])
    assert top > 0.1  # up the ramp: the fit ran where it had to
    assert w.vehicles["r"].pose[0] < -3.0 and w.vehicles["r"].pose[2] == 0.0  # back down and away


def test_upstream_turtlebot_world_runs_the_same(shared_dir):
    """Its robot drives among the world's pillars and walls, now near one, now clear of all: the same as with every
    step fitted. Pillars (0.5 m, 2 m) and walls (1 m) stand taller than any point its wheels' fit asks about (its
    ground plus a wheel radius, 0.033 m): none can be its ground, so no step needs the fit (218 of 600 were fitted
    when every block within reach counted)."""
    path = shared_dir / "worlds" / "mvsim_tutorial" / "demo_turtlebot_world.world.xml"

    def circles(w: mv.World, k: int) -> None:
        if k == 0:
            for v in w.vehicles.values():
                v.set_twist(0.6, 0.0, 0.4)

    fast, skipped, fitted = run(path, circles, 600, skip=True)
    slow, _, _ = run(path, circles, 600, skip=False)
    assert fast == slow
    assert (skipped, fitted) == (600, 0)


def test_a_robot_in_the_open_never_fits(tmp_path, shared_dir):
    path = ramp_world(tmp_path, shared_dir / "worlds" / "definitions")
    w = mv.load_world(path).start()
    w.set_pose("r", -10.0, -10.0, 0.0)
    w.set_pose("j", 10.0, -10.0, 0.0)
    w.step()
    level = w.physics._on_level_ground()
    assert level is not None and level.tolist() == [True, True]
    w.set_pose("r", 0.6, 0.0, 0.0)  # its chassis end 0.6 m ahead reaches over the ramp's foot at x = 1
    w.step()
    assert w.physics._on_level_ground().tolist() == [False, True]
    assert np.signbit(w.physics.pitch).tolist() == [True, False]  # -atan(0) for the one-axle robot, as the fit
    w.set_pose("r", 2.5, 4.5, 0.0)  # 1.4 m from the 6 m wall's side, though 1.5 m from its middle: clear of it
    w.step()
    assert w.physics._on_level_ground().tolist() == [True, True]
