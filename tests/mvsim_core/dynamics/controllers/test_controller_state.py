"""``Controller.save_state`` / ``restore_state``: what ``World.reset`` uses to put every controller back as it was,
generically (setpoints, PID state, a controller's own clock, helpers built while running)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mvsim_core as mv

WORLD = """<mvsim_world version="1.0">
  <vehicle name="pid"><init_pose>0 0 0</init_pose>
    <dynamics class="differential">
      <controller class="twist_pid"><V>0.2</V><enable_reference_filter>true</enable_reference_filter></controller>
    </dynamics>
  </vehicle>
  <vehicle name="steer"><init_pose>0 5 0</init_pose>
    <dynamics class="ackermann"><controller class="front_steer_pid"><V>1</V><STEER_ANG>5</STEER_ANG></controller>
    </dynamics>
  </vehicle>
  <vehicle name="path"><init_pose>0 -5 0</init_pose>
    <dynamics class="differential"><controller class="trajectory">
      <waypoint t="0" x="0" y="-5"/><waypoint t="4" x="2" y="-5"/>
    </controller></dynamics>
  </vehicle>
  <vehicle name="raw"><init_pose>5 0 0</init_pose><dynamics class="differential"/></vehicle>
</mvsim_world>
"""


@pytest.fixture
def world(tmp_path: Path) -> mv.World:
    p = tmp_path / "ctl.world.xml"
    p.write_text(WORLD)
    return mv.load_world(p)


def test_restore_brings_back_setpoints_and_drops_what_running_built(world: mv.World) -> None:
    ctl = {n: v.controller for n, v in world.vehicles.items()}
    saved = {n: c.save_state() for n, c in ctl.items()}
    assert "params" not in saved["pid"] and "node" not in saved["pid"] and "family" not in saved["pid"]
    world.vehicles["pid"].set_twist(1.0, 0.0, 0.5)
    world.vehicles["steer"].drive(2.0, 0.1)
    world.vehicles["raw"].set_torques([-1.0, -2.0])
    world.run(0.3)
    assert hasattr(ctl["pid"], "_pids") and hasattr(ctl["steer"], "_inner") and ctl["path"]._steps > 0
    for n, c in ctl.items():
        c.restore_state(saved[n])
    assert ctl["pid"].setpoint == (0.2, 0.0, 0.0) and not hasattr(ctl["pid"], "_pids")
    assert (ctl["steer"].speed, ctl["steer"].steer_angle) == (1.0, pytest.approx(0.0872664626))
    assert not hasattr(ctl["steer"], "_inner")
    assert ctl["path"]._steps == 0 and ctl["path"].twist == (0.0, 0.0, 0.0)
    assert ctl["raw"].torques == (0.0, 0.0)


def test_restore_copies_so_that_one_saved_state_serves_many_restores(world: mv.World) -> None:
    c = world.vehicles["pid"].controller
    saved = c.save_state()
    c.restore_state(saved)
    world.run(0.2)  # builds and advances the PID pair
    c.restore_state(saved)
    world.run(0.1)
    assert "_pids" not in saved and saved["setpoint"] == (0.2, 0.0, 0.0)
    # (the PID settings are frozen numbers: shared, not copied)
    pid = next(v for v in saved.values() if type(v).__name__ == "PidConfig")
    assert c.save_state()[next(k for k, v in saved.items() if v is pid)] is pid


def test_a_batched_controller_writes_the_restored_setpoint_into_its_batch_row(tmp_path: Path) -> None:
    p = tmp_path / "batch.world.xml"
    p.write_text(WORLD.replace("<enable_reference_filter>true</enable_reference_filter>", ""))
    w = mv.load_world(p)
    w.start()
    c = w.vehicles["pid"].controller
    assert w.physics.pid_batch is not None and c._bound is not None
    saved = c.save_state()
    c.set_twist(1.0, 0.0, 0.4)
    assert w.physics.pid_batch.sp[0].tolist() == [1.0, 0.4]
    c.restore_state(saved)
    assert w.physics.pid_batch.sp[0].tolist() == [0.2, 0.0]
