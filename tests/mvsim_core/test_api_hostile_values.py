"""Every public method of World and Vehicle (and the controllers' verbs, the sensors' want/unwant, blocks' and
actors' methods) given hostile values raises only the documented errors, and a refusal changes nothing.

Each parameter of each method gets, one at a time, 13 hostile values (the other arguments valid); three worlds
(a greenhouse with 128 blocks, a world with actors and animated blocks, one with raw and front_steer_pid
controllers). A call may

* raise a documented error (:data:`DOCUMENTED`): then ``world.snapshot()`` must pickle to the same bytes as before
  (nothing changed), and no sensor's readers changed;
* or succeed, where the value is one the parameter takes (:func:`may_accept`: None for an optional argument,
  True for a flag, a str for a name, any hashable for a reader label, 10**400 for a seed): the world is then put
  back (spawned objects removed, readers unwanted, snapshot restored) for the next call.

Afterwards the world steps 0.2 s and every pose and twist is finite.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import pickle
from pathlib import Path
from typing import Any

import pytest

import mvsim_core as mv
from mvsim_core.objects.vehicles.base import Vehicle
from mvsim_core.world import Spawn
from tests.fuzz.api_fuzzer import RAW_WORLD  # the same world of raw and front_steer_pid controllers

ROOT = Path(__file__).resolve().parents[2]

HOSTILE: list[tuple[str, Any]] = [
    ("None", None), ("str", "x"), ("numeric str", "1.0"), ("bytes", b""), ("10**400", 10**400),
    ("-10**400", -10**400), ("nan", math.nan), ("inf", math.inf), ("list", [1, 2]), ("dict", {}),
    ("object", object()), ("True", True), ("complex", 1 + 2j),
]

DOCUMENTED = (mv.ArgumentTypeError, mv.ArgumentValueError, mv.CommandValueError, mv.StateValueError,
              mv.ControllerError, mv.WorldFileError, mv.MvsimError)
"""The errors README.md documents for the Python API; exactly these types (an ``mv.MvsimError`` itself: an unknown
object's name)."""

HASHABLE = {"None", "str", "numeric str", "bytes", "10**400", "-10**400", "nan", "inf", "object", "True", "complex"}

ACCEPTS: dict[tuple[str, str], set[str]] = {
    # (method, parameter) -> the hostile values that parameter takes as valid
    ("World.spawn", "name"): {"None", "str", "numeric str"},
    ("World.spawn", "pose"): {"None"},
    ("World.spawn", "source"): {"None", "str", "numeric str"},
    ("World.spawn", "allow_shell"): {"True"},
    ("World.spawn_many", "source"): {"None", "str", "numeric str"},
    ("World.spawn_many", "allow_shell"): {"True"},
    ("World.reset", "objects"): {"True"},
    ("World.reset", "state"): {"True"},
    ("World.reset", "time"): {"True"},
    ("World.summary", "extents"): {"True"},
    ("World.can_move", "name"): {"str", "numeric str"},  # False: no such object
    ("World.reseed", "seed"): {"10**400"},
    ("Vehicle.extent", "pose"): {"None"},
    ("Vehicle.set_torques", "steer"): {"None"},
    ("Vehicle.set_torques", "torques"): {"list"},  # [1, 2]: two torques
    ("Vehicle.set_joint_commands", "velocities"): {"dict"},  # {}: no joint commanded
    ("Vehicle.set_joint_commands", "positions"): {"dict"},
    ("Controller.set_torques", "steer"): {"None"},
    ("Controller.set_torques", "torques"): {"list"},
    ("Controller.drive", "wheelbase"): {"None"},
    ("Sensor.want", "reader"): HASHABLE,
    ("Sensor.unwant", "reader"): HASHABLE,
    ("Sensor.wanted", "reader"): HASHABLE,
    ("Sensor.wanted", "yes"): {"True"},
    ("Sensor.enabled=", "value"): {"True"},
    ("Block.extent", "pose"): {"None"},
    ("Block.summary", "pose"): {"None"},
    ("Actor.extent", "pose"): {"None"},
}


def may_accept(method: str, param: str, label: str) -> bool:
    """Whether ``method`` may take the hostile value ``label`` for ``param`` as a valid one."""
    return label in ACCEPTS.get((method, param), set())


BLOCK = ('<block><mass>2</mass><init_pose>30 30 0</init_pose>'
         '<shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape></block>')


WORLDS = ["greenhouse", "moving", "raw"]


def load(which: str, tmp_path: Path) -> mv.World:
    """One of :data:`WORLDS`, started."""
    if which == "raw":
        path = tmp_path / "raw.world.xml"
        path.write_text(RAW_WORLD.format(defs=ROOT / "worlds" / "definitions"))
    else:
        path = ROOT / "worlds" / f"{which}.world.xml"
    world = mv.load_world(path, seed=0)
    world.step()
    return world


def digest(world: mv.World) -> bytes:
    """What evolves in ``world``, as one hash of its snapshot's pickle."""
    return hashlib.sha256(pickle.dumps(world.snapshot(), protocol=5)).digest()


Call = tuple[str, Any, str, dict[str, Any]]
"""(method key for :data:`ACCEPTS`, the object, the method or ``attr=`` setter, valid keyword arguments)."""


def world_calls(world: mv.World) -> list[Call]:
    """Valid arguments for every public World method that has parameters."""
    v = next(iter(world.vehicles))
    block = next(iter(world.blocks))
    sensors = world.all_sensors()[:1]
    valid: dict[str, dict[str, Any]] = {
        "run": {"seconds": 0.0},
        "add_step_listener": {"listener": print},
        "remove_step_listener": {"listener": print},
        "object": {"name": v},
        "velocity": {"name": block},
        "can_move": {"name": block},
        "set_pose": {"name": v, "x": 0.5, "y": 0.5, "yaw": 0.1},
        "set_velocity": {"name": v, "vx": 0.1, "vy": 0.0, "wz": 0.0},
        "spawn": {"what": BLOCK, "name": None, "pose": None, "source": None, "allow_shell": False},
        "spawn_many": {"items": [Spawn(BLOCK, "sweep_block")], "source": None, "allow_shell": False},
        "remove": {"name": "no such object"},
        "remove_many": {"names": []},
        "reset": {"objects": False, "state": False, "time": False},
        "restore": {"state": world.snapshot()},
        "reseed": {"seed": 0},
        "set_random_state": {"state": world.random_state()},
        "sensor_poses": {"sensors": sensors},
        "summary": {"extents": False},
    }
    return [(f"World.{m}", world, m, kw) for m, kw in valid.items()]


def vehicle_calls(veh: Vehicle) -> list[Call]:
    """Valid arguments for every public Vehicle method that has parameters, and the command_limits setter."""
    physics = veh._physics
    valid: dict[str, dict[str, Any]] = {
        "set_twist": {"vx": 0.1, "vy": 0.0, "wz": 0.0},
        "drive": {"speed": 0.1, "steer": 0.0},
        "set_torques": {"torques": [0.0] * len(veh.controller.TORQUE_NAMES)
                        if hasattr(veh.controller, "TORQUE_NAMES") else [0.0, 0.0], "steer": None},
        "extent": {"pose": None},
        "set_joint_commands": {"velocities": {}, "positions": {}},
        "attach_physics": {"physics": physics, "index": veh._index},
        "attach_wheel_state": {"torques": veh.torques, "omega": veh.omega, "phi": veh.phi, "k_motor": veh.k_motor},
        "command_limits=": {"limits": veh.command_limits},
    }
    return [(f"Vehicle.{m}", veh, m, kw) for m, kw in valid.items()]


def other_calls(world: mv.World) -> list[Call]:
    """The controllers' verbs, the first sensor's want/unwant/wanted/enabled, a block's and an actor's methods."""
    calls: list[Call] = []
    for veh in world.vehicles.values():
        c = veh.controller
        verbs = {"set_twist": {"vx": 0.0, "vy": 0.0, "omega": 0.0},
                 "drive": {"speed": 0.0, "steer": 0.0, "wheelbase": None},
                 "set_torques": {"torques": [0.0] * len(getattr(c, "TORQUE_NAMES", (0, 0))), "steer": None}}
        if hasattr(c, "set_command"):
            verbs["set_command"] = {"speed": 0.0, "steer_angle": 0.0}
        calls += [(f"Controller.{m}", c, m, kw) for m, kw in verbs.items()]
    s = world.all_sensors()[0]
    calls += [("Sensor.want", s, "want", {"reader": "sweep"}), ("Sensor.unwant", s, "unwant", {"reader": "sweep"}),
              ("Sensor.wanted", s, "wanted", {"reader": "sweep", "yes": False}),
              ("Sensor.enabled=", s, "enabled=", {"value": True})]
    physics = world.physics
    for b in list(world.blocks.values())[:2]:
        calls += [("Block.extent", b, "extent", {"pose": None}), ("Block.summary", b, "summary", {"pose": None})]
        if b._track is not None:
            calls.append(("Block.attach_track", b, "attach_track", {"physics": physics, "k": b._track[1]}))
    for a in list(world.actors.values())[:1]:
        calls.append(("Actor.extent", a, "extent", {"pose": None}))
        if a._track is not None:
            calls.append(("Actor.attach_track", a, "attach_track", {"physics": physics, "k": a._track[1]}))
    return calls


def invoke(obj: Any, method: str, kwargs: dict[str, Any]) -> None:
    """Call ``obj.method(**kwargs)``, or set the property ``method`` (``name=``) to the one keyword's value."""
    if method.endswith("="):
        (value,) = kwargs.values()
        setattr(obj, method[:-1], value)
    else:
        getattr(obj, method)(**kwargs)


def readers(world: mv.World) -> list[frozenset[Any]]:
    return [s.readers for s in world.all_sensors()]


def sweep(world: mv.World) -> dict[str, Any]:
    """Send every hostile value to every parameter of every call; returns counts and what was wrong."""
    calls = world_calls(world) + [c for v in world.vehicles.values() for c in vehicle_calls(v)] + other_calls(world)
    ref_state = world.snapshot()
    ref = digest(world)
    ref_readers = readers(world)
    out: dict[str, Any] = {"calls": 0, "refused": 0, "accepted": 0, "errors": {}, "problems": []}
    for key, obj, method, valid in calls:
        for param in valid:
            for label, value in HOSTILE:
                kwargs = dict(valid, **{param: value})
                out["calls"] += 1
                where = f"{key}({param}={label})"
                try:
                    invoke(obj, method, kwargs)
                except DOCUMENTED as e:
                    if type(e) not in DOCUMENTED:
                        out["problems"].append(f"{where}: undocumented {type(e).__name__}: {e}")
                    out["refused"] += 1
                    out["errors"][type(e).__name__] = out["errors"].get(type(e).__name__, 0) + 1
                    if digest(world) != ref or readers(world) != ref_readers:
                        out["problems"].append(f"{where}: refused ({type(e).__name__}) but the world changed")
                        world.restore(ref_state)
                    continue
                except Exception as e:  # noqa: BLE001 - what the test is looking for
                    out["problems"].append(f"{where}: undocumented {type(e).__name__}: {e}")
                    world.restore(ref_state)
                    continue
                out["accepted"] += 1
                if not may_accept(key, param, label):
                    out["problems"].append(f"{where}: accepted")
                world.remove_spawned()
                if method in ("want", "wanted"):
                    obj.unwant(kwargs["reader"])
                world.restore(ref_state)
                if digest(world) != ref or readers(world) != ref_readers:
                    out["problems"].append(f"{where}: the world could not be put back")
    return out


def finite_after_steps(world: mv.World) -> list[str]:
    world.run(0.2)
    bad = [f"vehicle {n}" for n, v in world.vehicles.items()
           if not all(math.isfinite(x) for x in (*v.pose, *v.twist, *v.odometry))]
    bad += [f"block {n}" for n, b in world.blocks.items() if not all(math.isfinite(x) for x in b.pose)]
    return bad


# calls, refused and accepted per world, as measured (a new public method or parameter changes them: add it to
# the tables above and update these)
EXPECTED = {"greenhouse": (858, 797, 61), "moving": (897, 835, 62), "raw": (1183, 1118, 65)}


@pytest.mark.parametrize("which", WORLDS)
def test_hostile_values_raise_only_documented_errors_and_change_nothing(which: str, tmp_path: Path) -> None:
    world = load(which, tmp_path)
    out = sweep(world)
    assert out["problems"] == []
    assert (out["calls"], out["refused"], out["accepted"]) == EXPECTED[which]
    assert out["errors"]["ArgumentTypeError"] > 500
    assert finite_after_steps(world) == []


def test_the_sweep_covers_every_public_method_with_parameters(tmp_path: Path) -> None:
    """A new public method of World or Vehicle fails here until the sweep gives it valid arguments."""
    world = load("raw", tmp_path)

    def public(cls: type, skip: set[str]) -> set[str]:
        out = set()
        for n, f in inspect.getmembers(cls, callable):
            if n.startswith("_") or n in skip or isinstance(inspect.getattr_static(cls, n), (classmethod,
                                                                                               staticmethod)):
                continue
            if len(inspect.signature(f).parameters) > 1:  # more than self
                out.add(n)
        return out

    swept_world = {m for _, _, m, _ in world_calls(world)}
    assert public(mv.World, set()) - swept_world == set()
    swept_vehicle = {m for _, _, m, _ in vehicle_calls(world.vehicles["raw1"])}
    assert public(Vehicle, set()) - swept_vehicle == set()
    assert {"set_command", "set_torques", "drive", "set_twist"} <= {m for k, _, m, _ in other_calls(world)
                                                                    if k.startswith("Controller.")}


def test_errors_name_the_method_and_the_argument(tmp_path: Path) -> None:
    world = load("raw", tmp_path)
    car = world.vehicles["car1"]
    with pytest.raises(mv.ArgumentTypeError) as e:
        car.drive(None, 0.0)
    assert (e.value.method, e.value.argument, e.value.given) == ("drive", "speed", "NoneType None")
    assert str(e.value) == ("vehicle 'car1': drive(): speed must be a real number (int or float), got NoneType None; "
                            "refused, nothing changed")
    assert isinstance(e.value, TypeError)
    with pytest.raises(mv.CommandValueError) as c:
        car.drive(10**400, 0.0)
    assert (c.value.field, c.value.value) == ("speed", math.inf)
    with pytest.raises(mv.StateValueError) as s:
        world.set_pose("box1", 0.0, -10**400, 0.0)
    assert (s.value.field, s.value.value) == ("y", -math.inf)
    with pytest.raises(mv.StateValueError, match=r"^run\('world'\): seconds is inf"):
        world.run(10**400)
    with pytest.raises(mv.ArgumentValueError) as v:
        world.run(-1)
    assert isinstance(v.value, ValueError) and str(v.value) == ("run(): seconds must be a duration >= 0 s, not -1; "
                                                                "refused, nothing changed")
    with pytest.raises(mv.ArgumentTypeError, match=r"torques\[1\] must be a real number .* got str '1.0'"):
        world.vehicles["raw1"].set_torques([0.0, "1.0"])
    with pytest.raises(mv.ArgumentValueError, match=r"spawn\(\): pose must be 3 numbers, not 2"):
        world.spawn(BLOCK, pose=(1.0, 2.0))
    e2 = pickle.loads(pickle.dumps(e.value))
    assert (type(e2), str(e2), e2.given) == (mv.ArgumentTypeError, str(e.value), "NoneType None")


def test_numpy_numbers_and_fractions_are_numbers(tmp_path: Path) -> None:
    import fractions

    import numpy as np

    world = load("raw", tmp_path)
    bot = world.vehicles["raw1"]
    assert bot.set_torques(np.array([1.0, -2.0], dtype=np.float32)) == ((1.0, -2.0), None)
    assert world.vehicles["car1"].drive(np.float32(0.5), fractions.Fraction(1, 4)) == (0.5, 0.25)
    world.set_pose("box1", np.int64(2), np.float64(1.5), 0)
    assert world.blocks["box1"].pose[:2] == pytest.approx((2.0, 1.5))
    world.reseed(np.uint32(7))
    assert world.rng.seed == 7


