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
