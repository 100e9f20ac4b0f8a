"""The batched twist_pid kernel reproduces the one-vehicle-at-a-time controller bit for bit."""

from __future__ import annotations

import mvsim_core as mv
from mvsim_core.dynamics.controllers.twist_pid import DifferentialTwistPid

WORLD = """<mvsim_world version="1.0">
<simul_timestep>0.005</simul_timestep>
<vehicle:class name="bot">
  <dynamics class="{dyn}">
    <controller class="twist_pid"><KP>5</KP><KI>10</KI><KD>0.01</KD><max_torque>3</max_torque></controller>
  </dynamics>
  <friction class="default"><mu>0.5</mu><C_rr>0.02</C_rr></friction>
</vehicle:class>
<vehicle name="a" class="bot"><init_pose>0 0 0</init_pose></vehicle>
<vehicle name="b" class="bot"><init_pose>0 5 90</init_pose></vehicle>
</mvsim_world>
"""


def trajectory(tmp_path, dyn, monkeypatch, batched: bool):
    monkeypatch.setattr(DifferentialTwistPid, "batchable", property(lambda self: batched))
    (tmp_path / "w.xml").write_text(WORLD.format(dyn=dyn))
    w = mv.load_world(tmp_path / "w.xml", seed=3)
    assert (w.start().physics.pid_batch is not None) is batched
    out = []
    for cmd in ((1.0, 0.0, 0.5), (0.0, 0.0, 0.0), (-0.5, 0.0, -1.0)):
        for v in w.vehicles.values():
            v.set_twist(*cmd)
        for _ in range(200):
            w.step()
            out.append([v.pose + v.twist + v.odometry for v in w.vehicles.values()])
    return out


def test_batch_equals_scalar(tmp_path, monkeypatch):
    for dyn in ("differential", "differential_3_wheels", "differential_4_wheels"):
        assert trajectory(tmp_path, dyn, monkeypatch, True) == trajectory(tmp_path, dyn, monkeypatch, False), dyn


def test_the_pid_state_names_are_views_of_the_kernels_array_and_a_snapshot_writes_through(tmp_path):
    """integ, prev, out, slope (the snapshot's names) are rows of the one array the kernel reads: a restore written
    into them is what the next steps use (the run continues bit for bit), and a member reset clears all four."""
    (tmp_path / "w.xml").write_text(WORLD.format(dyn="differential_4_wheels"))
    w = mv.load_world(tmp_path / "w.xml", seed=3).start()
    batch = w.physics.pid_batch
    assert batch is not None and batch.pid.shape == (4, 2, 2) and batch.wheel_map.shape == (8, 4)
    assert all(a.base is batch.pid for a in (batch.integ, batch.prev, batch.out, batch.slope))
    for v in w.vehicles.values():
        v.set_twist(1.0, 0.0, 0.5)
    w.run(0.5)
    saved = w.snapshot()
    state = batch.pid.copy()
    w.run(0.5)
    after = [v.pose for v in w.vehicles.values()]
    w.restore(saved)
    assert w.physics.pid_batch is batch and batch.pid.tolist() == state.tolist() and state[0].any()
    w.run(0.5)
    assert [v.pose for v in w.vehicles.values()] == after
    batch.reset_member(1)
    assert not batch.pid[:, 1].any() and batch.first[1].all() and batch.pid[:, 0].any()
