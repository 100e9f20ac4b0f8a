"""Blow-up handling (mvsim_core.dynamics.blowups), called on a real world's physics: a flagged vehicle and a block with
a NaN pose are put back at their last finite pose, at rest, and reported; a strict world raises instead."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.dynamics import blowups, physics
from mvsim_core.dynamics.blowups import RUNAWAY_SPEED, SimulationError, block_blowup, vehicle_blowups
from mvsim_core.dynamics.faults import Blowup

WORLD = """<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>
<element class="horizontal_plane"><x_min>-50</x_min><y_min>-50</y_min><x_max>50</x_max><y_max>50</y_max></element>
<vehicle name="r"><dynamics class="differential"><controller class="twist_pid"/></dynamics>
  <init_pose>1 2 30</init_pose></vehicle>
<block name="crate"><init_pose>-5 0 0</init_pose><mass>5</mass>
  <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>
</mvsim_world>"""


def started(tmp_path: Path) -> mv.World:
    p = tmp_path / "blowups.world.xml"
    p.write_text(WORLD)
    return mv.load_world(p).start()


def test_the_names_physics_had_are_these() -> None:
    assert physics.SimulationError is SimulationError
    assert physics.RUNAWAY_SPEED is RUNAWAY_SPEED
    assert RUNAWAY_SPEED == 1000.0
    assert issubclass(SimulationError, mv.MvsimError)


def test_a_flagged_vehicle_goes_back_to_its_last_finite_pose_at_rest(tmp_path: Path) -> None:
    w = started(tmp_path)
    ph = w.physics
    ph.odo_prev[0] = (1.5, 2.5, 0.25)
    ph.state[0] = (math.nan, 2.0, 0.5, 3.0, 0.0, 1.0)
    ph.wheels.omega[:] = 7.0
    ph.faulty[0] = True
    out = vehicle_blowups(ph)
    assert len(out) == 1
    b = out[0]
    assert (b.name, b.kind, b.what, b.reset_to) == ("r", "vehicle", "NaN/inf in its state", (1.5, 2.5, 0.25))
    assert b.state[1:] == (2.0, 0.5, 3.0, 0.0, 1.0) and math.isnan(b.state[0])
    assert ph.state[0].tolist() == [1.5, 2.5, 0.25, 0.0, 0.0, 0.0]
    assert ph.twist[0].tolist() == [0.0, 0.0, 0.0]
    assert ph.wheels.omega.tolist() == [0.0, 0.0]
    assert not ph.faulty.any()
    body = ph.bodies.vehicle_bodies["r"]
    assert (body.position.x, body.position.y) == pytest.approx((1.5, 2.5), abs=1e-6)


def test_a_runaway_vehicle_is_named_so(tmp_path: Path) -> None:
    w = started(tmp_path)
    ph = w.physics
    ph.state[0, 3] = 2.0 * RUNAWAY_SPEED
    ph.faulty[0] = True
    assert vehicle_blowups(ph)[0].what == "a runaway velocity (beyond 1000 m/s or rad/s)"


def test_a_block_goes_back_to_its_pose_and_a_strict_world_raises(tmp_path: Path) -> None:
    w = started(tmp_path)
    ph = w.physics
    body = ph.bodies.block_bodies["crate"]
    body.linearVelocity = (math.nan, 0.0)
    b = block_blowup(ph, "crate", body)
    assert isinstance(b, Blowup)
    assert (b.name, b.kind, b.what, b.reset_to) == ("crate", "block", "NaN/inf in its state", (-5.0, 0.0, 0.0))
    assert (body.linearVelocity.x, body.linearVelocity.y, body.angularVelocity) == (0.0, 0.0, 0.0)
    w.strict = True
    body.linearVelocity = (math.nan, 0.0)
    with pytest.raises(blowups.SimulationError, match=r"^block 'crate' has NaN/inf in its state at step 1 "
                                                      r"\(t = 0\.0050 s\)"):
        block_blowup(ph, "crate", body)
    ph.faulty[0] = True
    with pytest.raises(SimulationError, match=r"^vehicle 'r': NaN/inf in its state at step 1"):
        ph.state[0, 0] = math.inf
        vehicle_blowups(ph)
