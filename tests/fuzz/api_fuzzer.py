"""The Python API fuzzer (issue 37): random sequences of public calls with random arguments, valid and hostile.

Beside the world-file fuzzer (``python -m tests.fuzz``), this one drives loaded worlds through their API: vehicles'
verbs (``set_twist``, ``drive``, ``set_torques``, ``stop``), the World's (``set_pose``, ``set_velocity``, ``run``,
``step``, ``spawn``, ``remove``, ``reset``, ``snapshot`` / ``restore``, ``reseed``, queries), the controllers' verbs
and the sensors' ``want`` / ``unwant``. Each argument is valid (a number in a sensible range, a known name) or, with
probability ``--hostile``, one of :data:`HOSTILE` (None, strings, bytes, 10**400, NaN, inf, lists, dicts, ...).

Every call ends in one class:

========================  =====================================================================================
``ok``                    returned; every pose, twist and odometry stays finite
``documented_error``      raised one of the errors README.md documents (:data:`DOCUMENTED`) and changed nothing
                          (``world.snapshot()`` pickles to the same bytes as before the call)
``uncaught``              raised anything else (bucket: call and exception type)
``changed_on_error``      raised a documented error, but the world changed
``nan``                   returned, and some pose, twist or odometry is NaN/inf
========================  =====================================================================================

The last three are failures (exit status 1). Call ``k`` of seed ``S`` is the same everywhere
(``random.Random("mvsim-api-fuzz:S")``, worlds loaded with seed 0)::

    .venv/bin/python -m tests.fuzz.api_fuzzer --n 10000 --seed 0      # or: make fuzz-api N=10000 SEED=0
"""

from __future__ import annotations

import argparse
import hashlib
import math
import pickle
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mvsim_core as mv
from mvsim_core.world import World

ROOT = Path(__file__).resolve().parents[2]

HOSTILE: tuple[Any, ...] = (None, "x", "1.0", b"", 10**400, -10**400, math.nan, math.inf, -math.inf, [1, 2], {},
                            object(), True, 1 + 2j, (), [math.nan])

DOCUMENTED = (mv.ArgumentTypeError, mv.ArgumentValueError, mv.CommandValueError, mv.StateValueError,
              mv.ControllerError, mv.WorldFileError, mv.MvsimError, mv.SnapshotError)
"""The errors README.md documents for the Python API (exactly these types)."""

FAILURES = ("uncaught", "changed_on_error", "nan")
CLASSES = ("ok", "documented_error", *FAILURES)

BLOCK = ('<block><mass>2</mass><init_pose>0 0 0</init_pose>'
         '<shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape></block>')

RAW_WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle name="raw1">
    <init_pose>0 0 0</init_pose>
    <dynamics class="differential"><controller class="raw"/></dynamics>
    <include file="{defs}/lidar2d.sensor.xml" name="laser1" x="0.25" z="0.45"/>
  </vehicle>
  <vehicle name="car1">
    <init_pose>-6 5 0</init_pose>
    <dynamics class="ackermann"><controller class="front_steer_pid"/></dynamics>
  </vehicle>
  <block name="box1">
    <mass>5</mass> <init_pose>1.2 0 0</init_pose>
    <shape><pt>-0.2 -0.3</pt><pt>0.2 -0.3</pt><pt>0.2 0.3</pt><pt>-0.2 0.3</pt></shape>
  </block>
</mvsim_world>
"""

WORLDS = ("greenhouse", "moving", "raw")


def load_worlds(folder: Path) -> list[World]:
    """The fuzzed worlds (shipped ``greenhouse`` and ``moving``, and one with ``raw`` and ``front_steer_pid``
    controllers written into ``folder``), seed 0, started."""
    out = []
    for which in WORLDS:
        if which == "raw":
            path = folder / "raw.world.xml"
            path.write_text(RAW_WORLD.format(defs=ROOT / "worlds" / "definitions"))
        else:
            path = ROOT / "worlds" / f"{which}.world.xml"
        w = mv.load_world(path, seed=0)
        w.start()
        out.append(w)
    return out


class Args:
    """Draws arguments: a valid one, or with probability ``hostile`` one of :data:`HOSTILE`."""

    def __init__(self, rng: random.Random, hostile: float) -> None:
        self.rng = rng
        self.hostile = hostile

    def bad(self) -> bool:
        return self.rng.random() < self.hostile

    def num(self, low: float, high: float) -> Any:
        """A float in [low, high] (sometimes an int), or a hostile value."""
        if self.bad():
            return self.rng.choice(HOSTILE)
        v = self.rng.uniform(low, high)
        return round(v) if self.rng.random() < 0.1 else v

    def pick(self, options: list[Any]) -> Any:
        """One of ``options``, or a hostile value."""
        if self.bad() or not options:
            return self.rng.choice(HOSTILE)
        return self.rng.choice(options)

    def flag(self) -> Any:
        return self.rng.choice(HOSTILE) if self.bad() else self.rng.random() < 0.5


Action = Callable[[World, Args], tuple[str, Callable[[], Any]]]
"""Draws one call on a world: (its label for buckets, the call)."""


def _vehicle(w: World, a: Args) -> Any:
    return w.vehicles[a.rng.choice(list(w.vehicles))]


def _set_twist(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    v, args = _vehicle(w, a), (a.num(-2, 2), a.num(-0.5, 0.5), a.num(-2, 2))
    return "Vehicle.set_twist", lambda: v.set_twist(*args)


def _drive(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    v, args = _vehicle(w, a), (a.num(-3, 3), a.num(-0.6, 0.6))
    return "Vehicle.drive", lambda: v.drive(*args)


def _set_torques(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    v = _vehicle(w, a)
    n = len(getattr(v.controller, "TORQUE_NAMES", (0, 0)))
    torques = a.rng.choice(HOSTILE) if a.bad() else [a.num(-2, 2) for _ in range(n)]
    steer = a.num(-0.5, 0.5) if a.rng.random() < 0.5 else None
    return "Vehicle.set_torques", lambda: v.set_torques(torques, steer)


def _stop(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    v = _vehicle(w, a)
    return "Vehicle.stop", v.stop


def _controller_verb(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    c = _vehicle(w, a).controller
    verb = a.rng.choice(["set_twist", "drive", "set_torques"])
    if verb == "set_twist":
        args: tuple[Any, ...] = (a.num(-1, 1), a.num(-0.2, 0.2), a.num(-1, 1))
    elif verb == "drive":
        args = (a.num(-2, 2), a.num(-0.5, 0.5), a.rng.choice([None, a.num(0.5, 3)]))
    else:
        args = ([a.num(-1, 1) for _ in range(len(getattr(c, "TORQUE_NAMES", (0, 0))))],)
    return f"Controller.{verb}", lambda: getattr(c, verb)(*args)


def _names(w: World) -> list[str]:
    return [n for n in w.object_names() if not n.startswith("wall_")][:40]


def _set_pose(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    name, args = a.pick(_names(w)), (a.num(-10, 10), a.num(-10, 10), a.num(-3.2, 3.2))
    return "World.set_pose", lambda: w.set_pose(name, *args)


def _set_velocity(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    name, args = a.pick(_names(w)), (a.num(-1, 1), a.num(-1, 1), a.num(-1, 1))
    return "World.set_velocity", lambda: w.set_velocity(name, *args)


def _run(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    seconds = a.num(0, 0.05)
    return "World.run", lambda: w.run(seconds)


def _step(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    return "World.step", w.step


def _spawn(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    what = a.pick([BLOCK])
    pose = a.rng.choice(HOSTILE) if a.bad() else (a.num(-8, 8), a.num(-8, 8), a.num(-3, 3))
    name, allow = a.pick([None, f"fz{a.rng.randrange(1000)}"]), a.flag()
    return "World.spawn", lambda: w.spawn(what, name=name, pose=pose, allow_shell=allow)


def _remove(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    name = a.pick(w.spawned_names())
    return "World.remove", lambda: w.remove(name)


def _reset(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    flags = (a.flag(), a.flag(), a.flag())
    return "World.reset", lambda: w.reset(objects=flags[0], state=flags[1], time=flags[2])


def _restore(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    state = w.snapshot() if not a.bad() else a.rng.choice(HOSTILE)
    return "World.restore", lambda: w.restore(state)


def _reseed(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    seed = a.rng.choice(HOSTILE) if a.bad() else a.rng.randrange(2**32)
    return "World.reseed", lambda: w.reseed(seed)


def _query(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    kind = a.rng.choice(["velocity", "can_move", "object", "extent", "summary"])
    name = a.pick(_names(w))
    if kind == "extent":
        obj = w.object(a.rng.choice(_names(w)))
        pose = a.rng.choice(HOSTILE) if a.bad() else None
        return "Object.extent", lambda: obj.extent(pose)
    if kind == "summary":
        extents = a.flag()
        return "World.summary", lambda: w.summary(extents=extents)
    return f"World.{kind}", lambda: getattr(w, kind)(name)


def _want(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    sensors = w.all_sensors()
    s = a.rng.choice(sensors)
    reader = a.rng.choice(HOSTILE) if a.bad() else a.rng.choice(["fuzz", "ros", ("a", 1)])
    verb = a.rng.choice(["want", "unwant"])
    return f"Sensor.{verb}", lambda: getattr(s, verb)(reader)


ACTIONS: tuple[tuple[Action, int], ...] = (
    (_set_twist, 12), (_drive, 6), (_set_torques, 6), (_stop, 2), (_controller_verb, 6), (_set_pose, 8),
    (_set_velocity, 6), (_run, 8), (_step, 6), (_spawn, 3), (_remove, 2), (_reset, 2), (_restore, 2),
    (_reseed, 2), (_query, 6), (_want, 4),
)
"""Each call and its weight."""


def _finite(w: World) -> bool:
    for v in w.vehicles.values():
        if not all(math.isfinite(x) for x in (*v.pose, *v.twist, *v.odometry)):
            return False
    return all(math.isfinite(x) for b in w.blocks.values() for x in b.pose)


def _digest(w: World) -> bytes:
    return hashlib.sha256(pickle.dumps(w.snapshot(), protocol=5)).digest()


@dataclass
class Summary:
    """What a campaign found."""

    calls: int = 0
    seconds: float = 0.0
    classes: Counter[str] = field(default_factory=Counter)
    per_call: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    failures: dict[str, list[str]] = field(default_factory=dict)
    """bucket (class: call: exception type) -> examples (``k=...: message``), at most 3 each."""

    @property
    def failed(self) -> int:
        return sum(self.classes[c] for c in FAILURES)

    def text(self) -> str:
        rate = self.calls / self.seconds if self.seconds else 0.0
        lines = [f"api fuzzer: {self.calls} calls in {self.seconds:.1f} s ({rate:.0f} calls/s)"]
        lines += [f"  {c}: {self.classes[c]}" for c in CLASSES]
        lines.append("documented errors: " + ", ".join(f"{k} {n}" for k, n in self.errors.most_common()))
        lines.append("calls: " + ", ".join(f"{k} {n}" for k, n in sorted(self.per_call.items())))
        for bucket, examples in self.failures.items():
            lines.append(f"FAIL {bucket}")
            lines += [f"    {e}" for e in examples]
        return "\n".join(lines)


def campaign(n: int, seed: int, *, hostile: float = 0.3, worlds: list[World] | None = None,
             actions: tuple[tuple[Action, int], ...] = ACTIONS) -> Summary:
    """``n`` calls of seed ``seed`` spread over ``worlds`` (default: :func:`load_worlds`), drawn from ``actions``
    (call, weight)."""
    if worlds is None:
        worlds = load_worlds(Path(tempfile.mkdtemp(prefix="mvsim-api-fuzz-")))
    rng = random.Random(f"mvsim-api-fuzz:{seed}")
    args = Args(rng, hostile)
    draws, weights = zip(*actions, strict=True)
    out = Summary()
    t0 = time.perf_counter()
    for k in range(n):
        w = rng.choice(worlds)
        label, call = rng.choices(draws, weights)[0](w, args)
        before = _digest(w)
        out.calls += 1
        out.per_call[label] += 1
        try:
            call()
        except DOCUMENTED as e:
            if type(e) not in DOCUMENTED:
                _fail(out, "uncaught", label, e, k)
            elif _digest(w) != before:
                _fail(out, "changed_on_error", label, e, k)
            else:
                out.classes["documented_error"] += 1
                out.errors[type(e).__name__] += 1
            continue
        except Exception as e:  # noqa: BLE001 - what the fuzzer looks for
            _fail(out, "uncaught", label, e, k)
            continue
        if _finite(w):
            out.classes["ok"] += 1
        else:
            out.classes["nan"] += 1
            out.failures.setdefault(f"nan: {label}", []).append(f"k={k}")
            w.reset()  # go on from a finite world
        if len(w.spawned_names()) > 20:
            w.remove_spawned()
    out.seconds = time.perf_counter() - t0
    return out


def _fail(out: Summary, cls: str, label: str, e: BaseException, k: int) -> None:
    out.classes[cls] += 1
    examples = out.failures.setdefault(f"{cls}: {label}: {type(e).__name__}", [])
    if len(examples) < 3:
        examples.append(f"k={k}: {e}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.api_fuzzer", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="calls (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the call sequence (default 0)")
    p.add_argument("--hostile", type=float, default=0.3, help="probability of a hostile argument (default 0.3)")
    ns = p.parse_args(argv)
    summary = campaign(ns.n, ns.seed, hostile=ns.hostile)
    print(summary.text())
    return 1 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main())
