"""The sweep spec: a YAML file read into a :class:`SweepSpec`, every mistake reported as ``file:line: what is wrong,
how to fix it`` (:class:`SpecError`).

The smallest spec is three keys::

    world: friction.world.xml   # relative to the spec's folder
    duration: 10                # simulated seconds per run
    seeds: [0, 1, 2]            # one run per seed; a run's seed is its world's seed

All keys (defaults in brackets)::

    world: PATH                 # the world file
    duration: SECONDS           # simulated time of each run (s, > 0)
    seeds: [0, 1, 2]            # or {range: [0, 10]} (0..9)
    vehicle: bot1               # [the world's first vehicle] the vehicle driven and measured
    variables:                  # [none] world variables (<variable>, ${NAME}, $f{NAME}): NAME: VALUES
      mu: [0.1, 0.4, 0.8]       # VALUES: a list, one value, or {linspace: [start, stop, count]}
    include_params:             # [none] <include> parameters: FILE-PATTERN: {PARAM: VALUES}
      lidar2d.sensor.xml:
        noise: [0.0, 0.05]
    controller:                 # [type: none] what drives the vehicle, one command per control period
      type: goto                # none | twists | goto | policy
    goal: {x: 4, y: 0}          # [none] goal position (m); optional yaw_deg, tolerance [0.1 m],
                                # yaw_tolerance_deg [10]
    metrics: [final_pose_error, time_to_goal, collisions, min_obstacle_distance, my_module:my_metric]
                                # [collisions, and final_pose_error + time_to_goal with a goal]
    control_period: 0.05        # [0.05] s between controller commands (whole physics steps)
    timeout: 600                # [600] wall-clock seconds a run may take (world loading included)
    record: false               # [false] record each run to MCAP next to the results

Controllers: ``type: twists`` with ``twists: [{until: 2.0, vx: 1.0, vy: 0, wz: 0}, ...]`` (each twist held until
its simulated time, the last one to the end); ``type: goto`` drives to ``goal`` (``speed`` [0.5 m/s], ``turn_rate``
[1.0 rad/s], gains ``k_rho`` [1.0 1/s] and ``k_alpha`` [2.0 1/s]); ``type: policy`` calls ``function:
module:function`` as ``function(world, ctx) -> (vx, vy, wz) | (vx, wz) | None`` with ``params: {...}`` in
``ctx.params`` (:class:`~mvsim_core.sweep.context.RunContext`). A custom metric is ``module:function`` or
``{name: NAME, function: module:function}``, called once at the end as ``function(world, ctx)`` and returning a number
(column NAME) or a dict (columns NAME.KEY). Modules are imported with the spec's folder first on ``sys.path``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from mvsim_core.errors import MvsimError, one_line

Value = str | int | float | bool
"""A parameter value as YAML gives it."""

MAX_RUNS = 1_000_000
DEFAULT_CONTROL_PERIOD = 0.05  # s
DEFAULT_TIMEOUT = 600.0  # s, wall clock
DEFAULT_TOLERANCE = 0.1  # m
DEFAULT_YAW_TOLERANCE_DEG = 10.0
BUILTIN_METRICS = ("final_pose_error", "time_to_goal", "collisions", "min_obstacle_distance")
GOAL_METRICS = ("final_pose_error", "time_to_goal")
CONTROLLER_TYPES = ("none", "twists", "goto", "policy")
RESERVED_COLUMNS = ("run_id", "status", "error", "seed", "final_x", "final_y", "final_yaw", "final_yaw_error",
                    "sim_time", "load_s", "sim_s", "wall_s", "cpu_s", "attempt", "started_at", "finished_at", "worker",
                    "mcap", "spec_hash", "mvsim_version")
"""Columns every results file has (:mod:`mvsim_core.sweep.results`); a custom metric cannot take these names."""

_TOP_KEYS = ("world", "duration", "seeds", "vehicle", "variables", "include_params", "controller", "goal", "metrics",
             "control_period", "timeout", "record")
_CALLABLE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_NAME = re.compile(r"[A-Za-z_]\w*")


class SpecError(MvsimError):
    """A sweep spec is wrong.

    Attributes:
        file: the spec file (as given).
        line: 1-based line of the problem, or 0 when it has none.
        message: what is wrong and how to fix it.
    """

    def __init__(self, file: str, line: int, message: str) -> None:
        self.file, self.line, self.message = str(file), int(line), message
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"

    def __reduce__(self):  # keep pickling working with the 3-argument constructor
        return (type(self), (self.file, self.line, self.message))


@dataclass(frozen=True)
class Parameter:
    """One swept parameter.

    Attributes:
        kind: ``variable`` (a world variable) or ``include`` (an ``<include>`` parameter).
        name: the variable's or the include parameter's name.
        values: its values, in the spec's order.
        pattern: for ``include``, the file pattern (:mod:`mvsim_core.xml.overrides`); "" for a variable.
        line: where the spec names it.
    """

    kind: str
    name: str
    values: tuple[Value, ...]
    pattern: str = ""
    line: int = 0

    @property
    def column(self) -> str:
        """Its column in the results: ``var.NAME`` or ``include[PATTERN].NAME``."""
        return f"var.{self.name}" if self.kind == "variable" else f"include[{self.pattern}].{self.name}"


@dataclass(frozen=True)
class TimedTwist:
    """A twist held until simulated time ``until`` (s): ``vx``, ``vy`` (m/s), ``wz`` (rad/s), vehicle frame."""

    until: float
    vx: float
    vy: float = 0.0
    wz: float = 0.0


@dataclass(frozen=True)
class ControllerSpec:
    """What drives the vehicle (see the module docstring).

    Attributes:
        type: ``none``, ``twists``, ``goto`` or ``policy``.
        twists: the schedule of ``twists``.
        speed: ``goto``'s top forward speed (m/s). turn_rate: its top turn rate (rad/s).
        k_rho: ``goto``'s speed gain (1/s: m/s per m to go). k_alpha: its heading gain (1/s: rad/s per rad).
        function: ``policy``'s ``module:function``. params: data for it (``ctx.params``).
    """

    type: str = "none"
    twists: tuple[TimedTwist, ...] = ()
    speed: float = 0.5
    turn_rate: float = 1.0
    k_rho: float = 1.0
    k_alpha: float = 2.0
    function: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Goal:
    """The goal of a run: position (m, world frame), optional heading ``yaw`` (rad), ``tolerance`` (m) and
    ``yaw_tolerance`` (rad) for "reached"."""

    x: float
    y: float
    yaw: float | None = None
    tolerance: float = DEFAULT_TOLERANCE
    yaw_tolerance: float = math.radians(DEFAULT_YAW_TOLERANCE_DEG)


@dataclass(frozen=True)
class MetricSpec:
    """A metric: a built-in (``function`` "") or a custom ``module:function`` whose column is ``name``."""

    name: str
    function: str = ""
    line: int = 0


@dataclass(frozen=True)
class SweepSpec:
    """A parsed, checked sweep spec (see the module docstring for the keys and their defaults).

    Attributes:
        path: the spec file. base_dir: its folder (relative paths, custom modules).
        world: the world file (resolved). duration: simulated seconds per run. seeds: one run per seed and setting.
        vehicle: the vehicle's name, or None (the world's first).
        parameters: the swept parameters (variables first, then include parameters, in the spec's order).
        controller, goal, metrics: as written (defaults filled in).
        control_period: s between commands. timeout: wall seconds per run. record: MCAP per run.
        lines: where each key was written (``world``, ``vehicle``, ``controller``, ``controller.function``,
            ``goal``, ``metrics``, ``control_period``, ...), for errors found later.
        spec_hash: what decides the runs' results, hashed (:func:`spec_hash`).
    """

    path: Path
    base_dir: Path
    world: Path
    duration: float
    seeds: tuple[int, ...]
    vehicle: str | None = None
    parameters: tuple[Parameter, ...] = ()
    controller: ControllerSpec = field(default_factory=ControllerSpec)
    goal: Goal | None = None
    metrics: tuple[MetricSpec, ...] = ()
    control_period: float = DEFAULT_CONTROL_PERIOD
    timeout: float = DEFAULT_TIMEOUT
    record: bool = False
    lines: Mapping[str, int] = field(default_factory=dict)
    spec_hash: str = ""

    @property
    def run_count(self) -> int:
        """How many runs the sweep has: every combination of the parameters' values, for every seed."""
        return math.prod(len(p.values) for p in self.parameters) * len(self.seeds)

    def error(self, key: str, message: str) -> SpecError:
        """A :class:`SpecError` at the line of ``key`` (see :attr:`lines`; line 0 when it was not written)."""
        return SpecError(str(self.path), self.lines.get(key, 0), message)


def spec_hash(spec: SweepSpec) -> str:
    """16 hex digits of the SHA-256 of what decides the runs' results: the world file's bytes, duration, seeds,
    vehicle, parameters, controller, goal, metrics and control period. Not ``timeout`` or ``record`` (a re-run may
    change them), nor the files the world includes."""
    canon = {
        "world_sha256": hashlib.sha256(spec.world.read_bytes()).hexdigest(),
        "duration": spec.duration, "seeds": list(spec.seeds), "vehicle": spec.vehicle,
        "parameters": [[p.kind, p.pattern, p.name, list(p.values)] for p in spec.parameters],
        "controller": asdict(spec.controller), "goal": None if spec.goal is None else asdict(spec.goal),
        "metrics": [[m.name, m.function] for m in spec.metrics], "control_period": spec.control_period,
    }
    return hashlib.sha256(json.dumps(canon, sort_keys=True, default=str).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------- reading YAML with line numbers
class _Reader:
    """Typed reads of YAML nodes; every error at the node's line."""

    def __init__(self, file: str) -> None:
        self.file = file
        self._constructor = SafeConstructor()

    def error(self, node: yaml.Node | None, message: str) -> SpecError:
        return SpecError(self.file, node.start_mark.line + 1 if node is not None else 0, message)

    def data(self, node: yaml.Node) -> Any:
        """The plain Python value of ``node`` (YAML's safe types)."""
        try:
            return self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError as e:
            raise self.error(node, f"cannot read this value: {one_line(str(e))}") from None

    def mapping(self, node: yaml.Node, what: str, allowed: tuple[str, ...] | None = None,
                required: tuple[str, ...] = ()) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """``key -> (key node, value node)`` of a mapping; unknown, repeated and missing keys are errors."""
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping of `key: value` lines, not {self.kind(node)}")
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for k, v in node.value:
            key = self.data(k)
            if not isinstance(key, str):
                raise self.error(k, f"{what}: key {key!r} must be text")
            if key in out:
                raise self.error(k, f"{what}: '{key}' is given twice (first at line "
                                    f"{out[key][0].start_mark.line + 1}); keep one")
            if allowed is not None and key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                raise self.error(k, f"unknown key '{key}' in {what}; {hint}known keys: {', '.join(allowed)}")
            out[key] = (k, v)
        for key in required:
            if key not in out:
                raise self.error(node, f"{what} needs the key '{key}'")
        return out

    @staticmethod
    def kind(node: yaml.Node) -> str:
        if isinstance(node, yaml.MappingNode):
            return "a mapping"
        if isinstance(node, yaml.SequenceNode):
            return "a list"
        if node.tag.endswith(":null"):
            return "empty"
        return f"'{one_line(str(node.value))[:60]}'"

    def sequence(self, node: yaml.Node, what: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, f"{what} must be a list ([a, b] or lines starting with '- '), not {self.kind(node)}")
        return list(node.value)

    def scalar(self, node: yaml.Node, what: str) -> Value:
        if not isinstance(node, yaml.ScalarNode) or node.tag.endswith(":null"):
            raise self.error(node, f"{what} must be a number, text or true/false, not {self.kind(node)}")
        value = self.data(node)
        if not isinstance(value, str | int | float | bool):
            raise self.error(node, f"{what} must be a number, text or true/false, not a {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(node, f"{what} must be finite, not {value}")
        return value

    def number(self, node: yaml.Node, what: str, unit: str = "", *, positive: bool = False,
               nonnegative: bool = False) -> float:
        value = self.data(node) if isinstance(node, yaml.ScalarNode) else None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.error(node, f"{what} must be a number{' of ' + unit if unit else ''}, not "
                                   f"{self.kind(node)}")
        if positive and value <= 0:
            raise self.error(node, f"{what} must be > 0{' ' + unit if unit else ''} (got {value:g})")
        if nonnegative and value < 0:
            raise self.error(node, f"{what} must be >= 0{' ' + unit if unit else ''} (got {value:g})")
        return float(value)

    def integer(self, node: yaml.Node, what: str, *, minimum: int | None = None) -> int:
        value = self.data(node) if isinstance(node, yaml.ScalarNode) else None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{what} must be a whole number, not {self.kind(node)}")
        if minimum is not None and value < minimum:
            raise self.error(node, f"{what} must be >= {minimum} (got {value})")
        return value

    def boolean(self, node: yaml.Node, what: str) -> bool:
        value = self.data(node) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(value, bool):
            raise self.error(node, f"{what} must be true or false, not {self.kind(node)}")
        return value

    def text(self, node: yaml.Node, what: str) -> str:
        value = self.data(node) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(value, str) or not value.strip():
            raise self.error(node, f"{what} must be non-empty text, not {self.kind(node)}")
        return value.strip()

    def callable_ref(self, node: yaml.Node, what: str) -> str:
        value = self.text(node, what)
        if not _CALLABLE.fullmatch(value):
            raise self.error(node, f"{what} '{one_line(value)[:80]}' must name a function as module:function "
                                   f"(e.g. my_metrics:energy; the module is imported from the spec's folder or "
                                   f"sys.path)")
        return value


# ---------------------------------------------------------------------- the spec
def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a sweep spec (syntax, keys, types, ranges; the world file exists).

    What needs the world (the vehicle's name, that every parameter is used, custom functions) is checked by
    :func:`mvsim_core.sweep.validate.check_against_world`.

    Raises:
        SpecError: ``file:line: message`` of the first problem.
    """
    p = Path(path)
    shown = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(shown, 0, "sweep spec not found; check the path") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(shown, 0, f"cannot read the sweep spec: {getattr(e, 'strerror', None) or e}") from None
    r = _Reader(shown)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise SpecError(shown, line, f"not valid YAML: {one_line(e.problem or str(e))}") from None
    except yaml.YAMLError as e:
        raise SpecError(shown, 0, f"not valid YAML: {one_line(str(e))}") from None
    if root is None:
        raise SpecError(shown, 1, "empty spec; the smallest spec is `world: PATH`, `duration: SECONDS`, "
                                  "`seeds: [0, 1, 2]`")
    keys = r.mapping(root, "the sweep spec", _TOP_KEYS, required=("world", "duration", "seeds"))
    lines = {k: kn.start_mark.line + 1 for k, (kn, _) in keys.items()}
    base = p.resolve().parent

    world_node = keys["world"][1]
    world = Path(r.text(world_node, "world")).expanduser()
    world = world if world.is_absolute() else base / world
    if not world.is_file():
        raise r.error(world_node, f"world file not found: {world}; the path is relative to the spec's folder "
                                  f"({base})")
    duration = r.number(keys["duration"][1], "duration", "simulated seconds", positive=True)
    seeds = _seeds(r, keys["seeds"][1])
    vehicle = r.text(keys["vehicle"][1], "vehicle") if "vehicle" in keys else None

    parameters: list[Parameter] = []
    if "variables" in keys:
        for name, (kn, vn) in r.mapping(keys["variables"][1], "variables").items():
            if not _NAME.fullmatch(name):
                raise r.error(kn, f"variable name '{name}': letters, digits and _ (not first)")
            parameters.append(Parameter("variable", name, _values(r, vn, f"variable '{name}'"),
                                        line=kn.start_mark.line + 1))
    if "include_params" in keys:
        for pattern, (pn, params) in r.mapping(keys["include_params"][1], "include_params").items():
            if not pattern.strip():
                raise r.error(pn, "include_params: the file pattern is empty; write the included file's name")
            for name, (kn, vn) in r.mapping(params, f"include_params '{pattern}'").items():
                if not _NAME.fullmatch(name):
                    raise r.error(kn, f"include parameter name '{name}': letters, digits and _ (not first)")
                parameters.append(Parameter("include", name, _values(r, vn, f"include parameter '{name}'"),
                                            pattern=pattern, line=kn.start_mark.line + 1))
    goal = _goal(r, keys["goal"][1]) if "goal" in keys else None
    controller = ControllerSpec()
    if "controller" in keys:
        controller = _controller(r, keys["controller"][1], lines)
        if controller.type == "goto" and goal is None:
            raise SpecError(shown, lines["controller"], "controller type goto drives to the goal: add "
                                                        "`goal: {x: X, y: Y}`")
    metrics = _metrics(r, keys["metrics"][1], goal, parameters) if "metrics" in keys else \
        tuple(MetricSpec(m) for m in (("collisions", *GOAL_METRICS) if goal else ("collisions",)))
    control_period = DEFAULT_CONTROL_PERIOD
    if "control_period" in keys:
        control_period = r.number(keys["control_period"][1], "control_period", "seconds", positive=True)
    timeout = r.number(keys["timeout"][1], "timeout", "wall-clock seconds", positive=True) \
        if "timeout" in keys else DEFAULT_TIMEOUT
    record = r.boolean(keys["record"][1], "record") if "record" in keys else False

    spec = SweepSpec(path=p, base_dir=base, world=world.resolve(), duration=duration, seeds=seeds, vehicle=vehicle,
                     parameters=tuple(parameters), controller=controller, goal=goal, metrics=metrics,
                     control_period=control_period, timeout=timeout, record=record, lines=lines)
    if spec.run_count > MAX_RUNS:
        raise SpecError(shown, lines["seeds"], f"the sweep has {spec.run_count} runs (parameter values x seeds), "
                                               f"more than {MAX_RUNS}; split it into several specs")
    return replace(spec, spec_hash=spec_hash(spec))


def _seeds(r: _Reader, node: yaml.Node) -> tuple[int, ...]:
    if isinstance(node, yaml.MappingNode):
        m = r.mapping(node, "seeds", ("range",), required=("range",))
        rn = m["range"][1]
        items = r.sequence(rn, "seeds: range")
        if len(items) != 2:
            raise r.error(rn, "seeds: range is [first, stop] (stop not included), e.g. {range: [0, 10]}")
        lo, hi = (r.integer(n, "seeds: range bound", minimum=0) for n in items)
        if hi <= lo:
            raise r.error(rn, f"seeds: range [{lo}, {hi}] is empty; the stop must be above the first seed")
        return tuple(range(lo, hi))
    seen: dict[int, int] = {}
    for n in r.sequence(node, "seeds"):
        s = r.integer(n, "a seed", minimum=0)
        if s in seen:
            raise r.error(n, f"seed {s} is listed twice (first at line {seen[s]}); seeds must differ")
        seen[s] = n.start_mark.line + 1
    if not seen:
        raise r.error(node, "seeds is empty; give at least one, e.g. [0]")
    return tuple(seen)


def _values(r: _Reader, node: yaml.Node, what: str) -> tuple[Value, ...]:
    if isinstance(node, yaml.MappingNode):
        m = r.mapping(node, what, ("linspace",), required=("linspace",))
        ln = m["linspace"][1]
        items = r.sequence(ln, f"{what}: linspace")
        if len(items) != 3:
            raise r.error(ln, f"{what}: linspace is [start, stop, count], e.g. [0.1, 0.8, 4]")
        a = r.number(items[0], f"{what}: linspace start")
        b = r.number(items[1], f"{what}: linspace stop")
        n = r.integer(items[2], f"{what}: linspace count", minimum=2)
        return tuple(float(f"{a + (b - a) * i / (n - 1):.12g}") for i in range(n))
    nodes = r.sequence(node, what) if isinstance(node, yaml.SequenceNode) else [node]
    values: list[Value] = []
    for n in nodes:
        v = r.scalar(n, f"a value of {what}")
        if any(type(v) is type(u) and v == u for u in values):
            raise r.error(n, f"{what}: value {v!r} is listed twice")
        values.append(v)
    if not values:
        raise r.error(node, f"{what} has no value; give at least one")
    return tuple(values)


def _goal(r: _Reader, node: yaml.Node) -> Goal:
    m = r.mapping(node, "goal", ("x", "y", "yaw_deg", "tolerance", "yaw_tolerance_deg"), required=("x", "y"))
    yaw = r.number(m["yaw_deg"][1], "goal yaw_deg", "degrees") if "yaw_deg" in m else None
    tol = r.number(m["tolerance"][1], "goal tolerance", "m", positive=True) if "tolerance" in m \
        else DEFAULT_TOLERANCE
    yaw_tol = r.number(m["yaw_tolerance_deg"][1], "goal yaw_tolerance_deg", "degrees", positive=True) \
        if "yaw_tolerance_deg" in m else DEFAULT_YAW_TOLERANCE_DEG
    return Goal(x=r.number(m["x"][1], "goal x", "m"), y=r.number(m["y"][1], "goal y", "m"),
                yaw=None if yaw is None else math.radians(yaw), tolerance=tol, yaw_tolerance=math.radians(yaw_tol))


_CONTROLLER_KEYS = {
    "none": ("type",),
    "twists": ("type", "twists"),
    "goto": ("type", "speed", "turn_rate", "k_rho", "k_alpha"),
    "policy": ("type", "function", "params"),
}


def _controller(r: _Reader, node: yaml.Node, lines: dict[str, int]) -> ControllerSpec:
    m0 = r.mapping(node, "controller", None, required=("type",))
    tn = m0["type"][1]
    kind = r.text(tn, "controller type")
    if kind not in CONTROLLER_TYPES:
        raise r.error(tn, f"unknown controller type '{kind}'; one of: {', '.join(CONTROLLER_TYPES)}")
    m = r.mapping(node, f"controller (type {kind})", _CONTROLLER_KEYS[kind])
    for k, (kn, _) in m.items():
        lines[f"controller.{k}"] = kn.start_mark.line + 1
    if kind == "twists":
        if "twists" not in m:
            raise r.error(node, "controller type twists needs `twists: [{until: SECONDS, vx: M/S, wz: RAD/S}, ...]`")
        twists: list[TimedTwist] = []
        for n in r.sequence(m["twists"][1], "controller twists"):
            t = r.mapping(n, "a twist", ("until", "vx", "vy", "wz"), required=("until",))
            until = r.number(t["until"][1], "twist until", "simulated seconds", positive=True)
            if twists and until <= twists[-1].until:
                raise r.error(t["until"][1], f"twist until {until:g} s must come after the previous one "
                                             f"({twists[-1].until:g} s)")
            vel = {k: r.number(t[k][1], f"twist {k}", "m/s" if k != "wz" else "rad/s") if k in t else 0.0
                   for k in ("vx", "vy", "wz")}
            twists.append(TimedTwist(until, **vel))
        if not twists:
            raise r.error(m["twists"][1], "controller twists is empty; give at least one twist")
        return ControllerSpec(type=kind, twists=tuple(twists))
    if kind == "goto":
        d = ControllerSpec()

        def gain(k: str, unit: str, default: float) -> float:
            return r.number(m[k][1], f"controller {k}", unit, positive=True) if k in m else default

        return ControllerSpec(type=kind, speed=gain("speed", "m/s", d.speed),
                              turn_rate=gain("turn_rate", "rad/s", d.turn_rate), k_rho=gain("k_rho", "1/s", d.k_rho),
                              k_alpha=gain("k_alpha", "1/s", d.k_alpha))
    if kind == "policy":
        if "function" not in m:
            raise r.error(node, "controller type policy needs `function: module:function` (called as "
                                "function(world, ctx) every control period)")
        params: dict[str, Any] = {}
        if "params" in m:
            pn = m["params"][1]
            r.mapping(pn, "controller params")
            params = r.data(pn)
        return ControllerSpec(type=kind, function=r.callable_ref(m["function"][1], "controller function"),
                              params=params)
    return ControllerSpec(type=kind)


def _metrics(r: _Reader, node: yaml.Node, goal: Goal | None, parameters: list[Parameter]) -> tuple[MetricSpec, ...]:
    out: list[MetricSpec] = []
    for n in r.sequence(node, "metrics"):
        line = n.start_mark.line + 1
        if isinstance(n, yaml.MappingNode):
            m = r.mapping(n, "a custom metric", ("name", "function"), required=("function",))
            fn = r.callable_ref(m["function"][1], "metric function")
            name = r.text(m["name"][1], "metric name") if "name" in m else fn.rsplit(".", 1)[-1].rsplit(":", 1)[-1]
            metric = MetricSpec(name, fn, line)
        else:
            text = r.text(n, "a metric")
            if ":" in text:
                fn = r.callable_ref(n, "metric function")
                metric = MetricSpec(fn.rsplit(":", 1)[-1].rsplit(".", 1)[-1], fn, line)
            elif text in BUILTIN_METRICS:
                if text in GOAL_METRICS and goal is None:
                    raise r.error(n, f"metric {text} is measured against the goal: add `goal: {{x: X, y: Y}}`")
                metric = MetricSpec(text, "", line)
            else:
                close = difflib.get_close_matches(text, BUILTIN_METRICS, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                raise r.error(n, f"unknown metric '{text}'; {hint}built-in metrics: {', '.join(BUILTIN_METRICS)}, "
                                 f"or a custom one as module:function")
        if not _NAME.fullmatch(metric.name):
            raise r.error(n, f"metric name '{metric.name}': letters, digits and _ (not first)")
        if any(o.name == metric.name for o in out):
            raise r.error(n, f"metric '{metric.name}' is listed twice; give a custom one another `name:`")
        if metric.function and (metric.name in RESERVED_COLUMNS or metric.name in BUILTIN_METRICS):
            raise r.error(n, f"custom metric name '{metric.name}' is taken by a results column; give it another "
                             f"`name:`")
        out.append(metric)
    return tuple(out)
