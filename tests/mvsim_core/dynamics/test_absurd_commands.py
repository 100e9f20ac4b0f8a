"""Acceptance (issue 14): NaN, ±inf and ±1e30 in every field of every command of the Python API leave the world
running with finite poses, and a vehicle nobody touches drives on bit-identically to a run without the bad command.

Rule (mvsim_core.dynamics.command_limits): a NaN or infinite value is refused with an error naming the field
(CommandValueError for commands, StateValueError for placing an object); a finite value beyond its limit is clamped
(speeds, angular speeds, steering angles, torques) or refused (positions and angles beyond ±1e9).

One world for the module, every case in turn from one ``world.reset()`` (which replays a fresh load bit for bit) per
value; the witness is far from the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mvsim_core as mv
from mvsim_core.errors import StateValueError

VALUES = (math.nan, math.inf, -math.inf, 1e30, -1e30)
STEPS = 10  # steps after each bad command
WORLD = """<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>
<vehicle name="witness"><dynamics class="differential"><controller class="twist_pid"/></dynamics>
  <init_pose>0 -150 0</init_pose></vehicle>
<vehicle name="pid"><dynamics class="differential"><controller class="twist_pid"/></dynamics>
  <init_pose>-90 0 0</init_pose></vehicle>
<vehicle name="ideal"><dynamics class="differential"><controller class="twist_ideal"/></dynamics>
  <init_pose>-60 0 0</init_pose></vehicle>
<vehicle name="car"><dynamics class="ackermann"><controller class="twist_front_steer_pid"/></dynamics>
  <init_pose>-30 0 0</init_pose></vehicle>
<vehicle name="steer"><dynamics class="ackermann"><controller class="front_steer_pid"/></dynamics>
  <init_pose>0 0 0</init_pose></vehicle>
<vehicle name="raw"><dynamics class="ackermann"><controller class="raw"/></dynamics>
  <init_pose>30 0 0</init_pose></vehicle>
<vehicle name="rawd"><dynamics class="differential"><controller class="raw"/></dynamics>
  <init_pose>60 0 0</init_pose></vehicle>
<block name="crate"><init_pose>90 0 0</init_pose><mass>5</mass>
  <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>
<block name="wall" static="true"><init_pose>120 0 0</init_pose>
  <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>
</mvsim_world>
"""
SPAWNED = '<block><shape><pt>0 0</pt><pt>1 0</pt><pt>0 1</pt></shape><mass>1</mass></block>'


def _args(base: tuple[float, ...], i: int, v: float) -> tuple[float, ...]:
    return tuple(v if j == i else b for j, b in enumerate(base))


def _cases() -> list[tuple[str, str, str, Callable[[mv.World, float], Any]]]:
    """(id, field, kind, apply(world, value)); kind: "command" (refused if not finite, clamped if finite),
    "controller" (refused if not finite, given as it is if finite) or "place" (refused unless finite and within
    ±1e9)."""
    out: list[tuple[str, str, str, Callable[[mv.World, float], Any]]] = []
    twist = ("vx", "vy", "wz")
    for veh in ("pid", "ideal", "car"):
        for i, f in enumerate(twist):
            out.append((f"{veh}.set_twist.{f}", f, "command",
                        lambda w, v, veh=veh, i=i: w.vehicles[veh].set_twist(*_args((0.5, 0.0, 0.1), i, v))))
            out.append((f"{veh}.controller.set_twist.{f}", f, "controller",
                        lambda w, v, veh=veh, i=i: w.vehicles[veh].controller.set_twist(*_args((0.5, 0.0, 0.1), i,
                                                                                               v))))
    for veh in ("car", "steer"):
        for i, f in enumerate(("speed", "steer")):
            out.append((f"{veh}.drive.{f}", f, "command",
                        lambda w, v, veh=veh, i=i: w.vehicles[veh].drive(*_args((1.0, 0.1), i, v))))
    for i, f in enumerate(("speed", "steer")):
        out.append((f"steer.controller.drive.{f}", f, "controller",
                    lambda w, v, i=i: w.vehicles["steer"].controller.drive(*_args((1.0, 0.1), i, v))))
    for veh in ("raw", "rawd"):
        for i, f in enumerate(("torques[0]", "torques[1]")):
            out.append((f"{veh}.set_torques.{f}", f, "command",
                        lambda w, v, veh=veh, i=i: w.vehicles[veh].set_torques(_args((-1.0, -1.0), i, v))))
            out.append((f"{veh}.controller.set_torques.{f}", f, "controller",
                        lambda w, v, veh=veh, i=i: w.vehicles[veh].controller.set_torques(_args((-1.0, -1.0), i,
                                                                                                v))))
    out.append(("raw.set_torques.steer", "steer", "command",
                lambda w, v: w.vehicles["raw"].set_torques((-1.0, -1.0), v)))
    for name in ("pid", "ideal", "crate", "wall"):
        for i, f in enumerate(("x", "y", "yaw")):
            out.append((f"set_pose.{name}.{f}", f, "place",
                        lambda w, v, name=name, i=i: w.set_pose(name, *_args((1.0, 2.0, 0.3), i, v))))
    for name in ("pid", "car", "crate"):
        for i, f in enumerate(("vx", "vy", "wz")):
            out.append((f"set_velocity.{name}.{f}", f, "command",
                        lambda w, v, name=name, i=i: w.set_velocity(name, *_args((0.5, 0.0, 0.1), i, v))))
    for i, f in enumerate(("x", "y", "yaw")):
        out.append((f"spawn.pose.{f}", f, "place",
                    lambda w, v, i=i: w.spawn(SPAWNED, name="new", pose=_args((150.0, 0.0, 0.0), i, v))))
    return out


CASES = _cases()


def start(w: mv.World) -> None:
    """Back to the start, and everyone moving."""
    w.reset()
    w.vehicles["witness"].set_twist(0.8, 0.0, 0.4)
    drive_targets(w)


def drive_targets(w: mv.World) -> None:
    for name in ("pid", "ideal", "car"):
        w.vehicles[name].set_twist(0.5, 0.0, 0.1)
    w.vehicles["steer"].drive(1.0, 0.1)
    w.vehicles["raw"].set_torques((-1.0, -1.0), 0.05)
    w.vehicles["rawd"].set_torques((-1.0, -1.0))
    w.set_velocity("crate", 0.3, 0.0, 0.0)


def witness_trace(w: mv.World, steps: int) -> list[tuple]:
    out = []
    v = w.vehicles["witness"]
    for _ in range(steps):
        w.step()
        out.append((v.pose, v.twist, v.odometry))
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[mv.World, list[tuple]]:
    """The world, and the witness's trace over every case's steps without any bad command."""
    p = Path(tmp_path_factory.mktemp("absurd")) / "absurd.world.xml"
    p.write_text(WORLD)
    w = mv.load_world(p)
    w.start()
    start(w)
    reference = []
    for _ in CASES:
        drive_targets(w)
        reference += witness_trace(w, STEPS)
    return w, reference


@pytest.mark.parametrize("value", VALUES, ids=["nan", "inf", "-inf", "1e30", "-1e30"])
def test_a_bad_value_in_any_field_of_any_command_leaves_the_world_running(setup, value) -> None:
    """Every case in turn, STEPS steps each, from one start: each refused or clamped as the rule says, every pose,
    twist and odometry finite after each, and the witness's trace bit-identical to the reference."""
    w, reference = setup
    start(w)
    got = []
    for case_id, field, kind, apply in CASES:
        drive_targets(w)
        faults = len(w.faults)
        refused = not math.isfinite(value) or (kind == "place" and abs(value) > 1e9)
        if refused:
            error = StateValueError if kind == "place" or case_id.startswith("set_velocity") else mv.CommandValueError
            with pytest.raises(error) as e:
                apply(w, value)
            said = f"{field} is {value}" if not math.isfinite(value) else f"{field} = {value:g}"
            assert e.value.field == field and said in str(e.value), case_id
        else:
            apply(w, value)  # clamped to the limits (commands), or given as it is (controllers called directly)
        got += witness_trace(w, STEPS)
        for name in w.object_names():
            assert all(math.isfinite(c) for c in w.object(name).pose), (case_id, name)
        for v in w.vehicles.values():
            assert all(math.isfinite(c) for c in (*v.twist, *v.odometry)), (case_id, v.name)
        assert "new" not in w.blocks, case_id
        if kind != "controller":  # refused or clamped: nothing blows up (a controller given 1e30 as it is may)
            assert len(w.faults) == faults, case_id
    assert got == reference  # bit for bit, all along
    assert w.time == pytest.approx(len(CASES) * STEPS * w.timestep)
    assert len(CASES) == 57
