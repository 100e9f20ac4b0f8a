"""``<sensor class="..." name="...">``: what every sensor declares (reference §1.12).

A sensor is described by its class (``laser``, ``lidar3d``, ``camera``, ``rgbd_camera``, ``imu``, ``gnss``), a name, the
vehicle it rides on (``parent``; "" for a standalone sensor placed in the world), a sampling period, its pose on the
vehicle and a table of class parameters with upstream's defaults. Each class lives in its own module and registers
itself here through :meth:`Sensor.__init_subclass__`; :func:`sensor_from_xml` picks the class from ``class="..."``.

Substitution: every value inside a sensor is read with two extra variables, ``NAME`` (the sensor's name) and
``PARENT_NAME`` (its vehicle's name), so ``<publish_topic>/${PARENT_NAME}/${NAME}</publish_topic>`` becomes
``/r1/laser1``. Included definition files keep these two untouched during text substitution for exactly this reason.

Frames and units: ``pose`` is (x, y, z, yaw, pitch, roll) of the sensor in its vehicle's frame (the world frame for a
standalone sensor), metres and radians, yaw-pitch-roll order as everywhere in MVSim. ``period`` is in seconds of
simulated time.

Each class samples through :meth:`Sensor.sample_batch` (all its sensors due at one step together, so rays are cast
and images rendered in batches); :attr:`Sensor.last` holds the latest observation, None before the first.

Who reads a sensor (:mod:`mvsim_core.sensors.demand`): :meth:`Sensor.want` / :meth:`Sensor.unwant` by reader,
:attr:`Sensor.enabled`; where the world samples on demand, a sensor nobody wants costs nothing. Each sensor draws
its noise from its own generator, :attr:`Sensor.rng`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import numpy as np

from mvsim_core import arguments as arg
from mvsim_core.memory_budget import budget_message, over_budget
from mvsim_core.objects.visual import Visual, parse_visuals
from mvsim_core.sensors import demand, stream_normals
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.world_options import MIN_TIMESTEP
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import (
    Kind,
    Param,
    ParamValues,
    parse_value,
    read_params,
    table_names,
    warn_unknown_children,
)

if TYPE_CHECKING:
    from mvsim_core.sensors.scheduler import SensorContext


RowT = TypeVar("RowT")


def class_row(table: Mapping[type, RowT], sensor: Sensor | type[Sensor]) -> RowT | None:
    """The row of an adapter table keyed by sensor class (ZMQ topics, ROS publishers) for ``sensor`` (an instance or
    a class): its class's row, else the nearest base class's; None when there is none."""
    cls = sensor if isinstance(sensor, type) else type(sensor)
    for c in cls.__mro__:
        row = table.get(c)
        if row is not None:
            return row
    return None


def own_normals(sensors: Sequence[Sensor], spans: Iterable[tuple[int, int]], n: int,
                sigma: Sequence[float] | None = None) -> np.ndarray:
    """(n,) standard normals of several sensors sampled together: sensor ``i``'s rays ``spans[i]`` = (start, stop)
    from its own generator (:attr:`Sensor.rng`), so that each sensor's draws do not depend on which others sample.
    With ``sigma`` (one per sensor), sensors whose σ is 0 draw nothing (their rays get 0)."""
    out = np.zeros(n) if sigma is not None else np.empty(n)
    if len(sensors) >= stream_normals.BATCH:  # (a fleet's: one compiled call, the same numbers)
        span = np.array(spans if isinstance(spans, Sequence) else list(spans), dtype=np.int64).reshape(-1, 2)
        if len(span) != len(sensors):
            raise ValueError(f"own_normals: {len(sensors)} sensors but {len(span)} spans")
        draw = np.ones(len(sensors), dtype=np.bool_) if sigma is None else np.asarray(sigma, dtype=np.float64) > 0.0
        stream_normals.draw_normals([s.stream() for s in sensors], span, draw, out)
        return out
    for k, (s, (a, b)) in enumerate(zip(sensors, spans, strict=True)):
        if sigma is None or sigma[k] > 0.0:
            s.stream().standard_normal(out=out[a:b])
    return out


class Observation(Protocol):
    """What every observation has: ``stamp``, the simulated time (s) it was taken at. Each sensor class returns its
    own observation type (:class:`~mvsim_core.sensors.lidar2d.LaserScan`, ...)."""

    @property
    def stamp(self) -> float: ...


Pose3D = tuple[float, float, float, float, float, float]
"""(x, y, z, yaw, pitch, roll): metres and radians."""

ZERO_POSE: Pose3D = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

COMMON_PARAMS: tuple[Param, ...] = (
    Param("sensor_period", Kind.FLOAT, 0.1, "s", min=MIN_TIMESTEP,
          doc="time between two samples; at least the shortest physics step"),
    Param("save_to_rawlog", Kind.STRING, "", doc="MRPT rawlog file to save every observation to (\"\" = none)"),
)
"""Parameters read by every sensor class."""

# Pose tags. Which of them a class reads is its POSE_TAGS; they are applied in document order (see _read_pose).
POSE_2D = Param("pose", Kind.POSE2D, None, "m, rad", doc="x y yaw_deg on the vehicle; z from <height>")
POSE_3D = Param("pose_3d", Kind.POSE3D, None, "m, rad", doc="x y z yaw_deg pitch_deg roll_deg on the vehicle")
HEIGHT = Param("height", Kind.FLOAT, None, "m", doc="z of the sensor on the vehicle")
_POSE_PARAMS = {p.name: p for p in (POSE_2D, POSE_3D, HEIGHT)}

PUBLISH_TOPIC = Param("publish_topic", Kind.STRING, "", doc="ZMQ topic (not ROS)")
_ENABLED = Param("enabled", Kind.BOOL, True)


def count_param(name: str, default: int, doc: str = "", *, unit: str = "") -> Param:
    """A count (rays, pixels) read the way upstream reads ``%i``/``%u``: as a number whose fraction is dropped.

    Shipped presets compute counts with ``$f{}`` (``horz_nrays`` of the VLP-16 is ``$f{0.1/55.296e-6}`` = ``1808.45``
    after ``%g`` formatting); upstream's ``sscanf`` keeps the integer part, and so do we. The value must be ≥ 1.
    """
    return Param(name, Kind.FLOAT, default, unit, doc=doc or "count (≥ 1; a fractional part is dropped)")


class Sensor:
    """Base of every sensor class.

    Class attributes (set by each subclass):
        xml_class: the value of ``class="..."`` that selects the subclass.
        name_prefix: prefix of default names (``laser`` → ``laser1``, ``laser2``, ...).
        PARAMS: class-specific parameters (the common ones are :data:`COMMON_PARAMS`).
        COUNTS: names in PARAMS that are counts (see :func:`count_param`); stored as ``int``.
        POSE_TAGS: which of ``pose``, ``pose_3d``, ``height`` the class reads.
        DEFAULT_POSE: pose on the vehicle when none is written.
        registry: xml class -> subclass, filled automatically.

    Attributes:
        name: unique label of the sensor (also its ROS frame / topic stem).
        parent: name of the vehicle carrying it, "" for a standalone sensor.
        params: typed values of COMMON_PARAMS + PARAMS (angles in rad, lengths in m, times in s).
        node: the ``<sensor>`` element (for messages).
        period: s between samples (> 0).
        pose: (x, y, z, yaw, pitch, roll) on the vehicle, m / rad.
        publish_topic: ZMQ topic the observations go to, or None when not published.
        visuals: custom 3D models drawn for the sensor.
        last: the latest observation, None until the simulation produces one.
        rng: the sensor's own random generator (noise), given when the world starts (None before).
    """

    xml_class: ClassVar[str] = ""
    name_prefix: ClassVar[str] = ""
    registry: ClassVar[dict[str, type[Sensor]]] = {}
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    COUNTS: ClassVar[tuple[str, ...]] = ()
    POSE_TAGS: ClassVar[tuple[str, ...]] = ("pose_3d",)
    DEFAULT_POSE: ClassVar[Pose3D] = ZERO_POSE
    RAY_BYTES: ClassVar[int] = 0
    """Bytes the simulator allocates per ray at each sample (range sensors; :meth:`_check_ray_count`)."""
    simulated: ClassVar[bool] = False
    """Whether the class produces observations (:meth:`sample_batch`); a class without is parsed, then warned about."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.xml_class:
            Sensor.registry[cls.xml_class] = cls

    def __init__(self, *, name: str, parent: str, params: ParamValues, node: XmlNode, pose: Pose3D,
                 publish_topic: str | None = None, visuals: list[Visual] | None = None) -> None:
        self.name = name
        self.parent = parent
        self.params = params
        self.node = node
        self.period: float = float(params["sensor_period"])
        self.pose: Pose3D = pose
        self.publish_topic = publish_topic
        self.visuals: list[Visual] = visuals if visuals is not None else []
        self.last: Any = None
        """The latest :class:`Observation` (of the class's own observation type), None before the first."""
        self.rng: np.random.Generator | None = None
        """The sensor's own generator: every noise draw of its samples comes from it
        (:meth:`WorldRandom.stream <mvsim_core.rng.WorldRandom.stream>`; set when the world starts)."""
        self._enabled = True
        self._readers: set[Hashable] = set()

    # ------------------------------------------------------------------ demand (mvsim_core.sensors.demand)
    @property
    def enabled(self) -> bool:
        """False stops the sensor whoever wants it (True by default)."""
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        value = arg.flag("enabled", "value", value, self._owner())
        if value != self._enabled:
            self._enabled = value
            demand.changed()

    @property
    def readers(self) -> frozenset[Hashable]:
        """Who wants this sensor's observations now (:meth:`want`)."""
        return frozenset(self._readers)

    def want(self, reader: Hashable) -> None:
        """``reader`` (any hashable label: ``"ros"``, ``"record"``, a script's own) reads this sensor: where the
        world samples on demand, the sensor samples while somebody wants it. Wanting twice is wanting once.

        Raises:
            ArgumentTypeError: ``reader`` is unhashable (a list, a dict).
        """
        arg.hashable("want", "reader", reader, self._owner())
        if reader not in self._readers:
            self._readers.add(reader)
            demand.changed()

    def unwant(self, reader: Hashable) -> None:
        """``reader`` no longer reads this sensor (nothing happens if it did not).

        Raises:
            ArgumentTypeError: ``reader`` is unhashable (a list, a dict).
        """
        arg.hashable("unwant", "reader", reader, self._owner())
        if reader in self._readers:
            self._readers.discard(reader)
            demand.changed()

    def wanted(self, reader: Hashable, yes: bool) -> None:
        """:meth:`want` when ``yes``, else :meth:`unwant`.

        Raises:
            ArgumentTypeError: ``reader`` is unhashable, ``yes`` not True or False.
        """
        arg.hashable("wanted", "reader", reader, self._owner())
        if arg.flag("wanted", "yes", yes, self._owner()):
            self.want(reader)
        else:
            self.unwant(reader)

    def _owner(self) -> str:
        """Who refuses a bad argument, as an error message starts."""
        return f"sensor '{self.key}'"

    def stream(self) -> np.random.Generator:
        """:attr:`rng`; a sensor that samples outside a started world (a test's context) gets the stream of seed 0."""
        if self.rng is None:
            from mvsim_core.rng import WorldRandom

            self.rng = WorldRandom(0).stream(self.key)
        return self.rng

    @property
    def key(self) -> str:
        """``parent/name`` (``/name`` for a standalone sensor): unique in a world; seeds :attr:`rng`."""
        return f"{self.parent}/{self.name}"

    # ------------------------------------------------------------------ simulation
    def reset(self, t: float = 0.0) -> None:
        """Forget everything measured (:attr:`last` None) and start afresh as at simulated time ``t`` (s): classes
        with a history (the IMU's previous velocity and noise biases) clear it (``World.reset``, spawning)."""
        self.last = None

    def skipped(self, t: float) -> None:
        """A due time ``t`` (s) passed without a sample (nobody wanted it, :mod:`~mvsim_core.sensors.demand`): classes
        that difference consecutive samples (the IMU) forget the previous one, so the next sample is not a
        difference across the gap."""

    def save_state(self) -> dict[str, Any]:
        """What the sensor carries from one sample to the next, as plain data (a copy), for a world snapshot: the
        latest observation and its generator's state; classes with a history (the IMU) add theirs."""
        rng = None if self.rng is None else copy.deepcopy(self.rng.bit_generator.state)
        return {"last": copy.deepcopy(self.last), "rng": rng}

    def restore_state(self, saved: dict[str, Any]) -> None:
        """Go back to a :meth:`save_state` result (copied: ``saved`` is not changed, and can be restored again)."""
        self.last = copy.deepcopy(saved["last"])
        state = saved.get("rng")
        if state is not None:
            if self.rng is None:
                self.rng = np.random.Generator(np.random.PCG64())
            self.rng.bit_generator.state = copy.deepcopy(state)

    def shift_clock(self, dt: float) -> None:
        """The simulated clock jumped by ``dt`` seconds while the world went on (a reset of the time only): classes
        that remember when they last sampled move that time with it."""

    @classmethod
    def sample_batch(cls, sensors: list[Sensor], ctx: SensorContext, t: float) -> Sequence[Observation | None]:
        """Observations of several sensors of this class due at simulated time ``t`` (s), one per sensor (None: no
        observation this time, e.g. GNSS without a fix); default: one by one."""
        return [s.sample(ctx, t) for s in sensors]

    def sample(self, ctx: SensorContext, t: float) -> Observation | None:
        """One observation at simulated time ``t`` (s)."""
        raise NotImplementedError(f"{type(self).__name__} produces no observations")

    # ------------------------------------------------------------------ construction
    @classmethod
    def all_params(cls) -> tuple[Param, ...]:
        """COMMON_PARAMS followed by the class's PARAMS."""
        return COMMON_PARAMS + cls.PARAMS

    @classmethod
    def known_tags(cls) -> frozenset[str]:
        """Every child tag the class reads (anything else is warned about and skipped)."""
        return table_names(cls.all_params()) | frozenset(cls.POSE_TAGS) | {"publish", "visual"}

    @classmethod
    def from_xml(cls, node: XmlNode, ctx: ParseContext, parent: str) -> Sensor:
        """Build a sensor from its ``<sensor>`` element.

        Called on :class:`Sensor` itself, dispatches on ``class="..."`` (see :func:`sensor_from_xml`).

        Args:
            node: the ``<sensor>`` element (already text-substituted if it came from an include).
            ctx: parse context (variables, counters for default names, warnings).
            parent: name of the carrying vehicle, "" for a standalone sensor.

        Raises:
            WorldFileError: a bad value, located at its file and line.
        """
        if cls is Sensor:
            return sensor_from_xml(node, ctx, parent)
        name = _read_name(node, ctx, parent, cls.name_prefix)
        extra = {"NAME": name, "PARENT_NAME": parent}
        warn_unknown_children(node, cls.known_tags(), ctx, f'<sensor class="{cls.xml_class}">')
        params = read_params(cls.all_params(), [node], ctx, extra=extra)
        if str(params["save_to_rawlog"]).strip():
            from mvsim_core.world_options import RAWLOG_NOTE

            ctx.warn(params.where.get("save_to_rawlog", node), RAWLOG_NOTE)
        for count in cls.COUNTS:
            params[count] = _to_count(params, count, node, ctx)
        pose = _read_pose(node, ctx, cls.POSE_TAGS, cls.DEFAULT_POSE, extra)
        topic = _read_publish(node, ctx, extra)
        visuals = parse_visuals(node, ctx, extra=extra)
        sensor = cls(name=name, parent=parent, params=params, node=node, pose=pose, publish_topic=topic,
                     visuals=visuals)
        sensor._validate(ctx)
        return sensor

    def _validate(self, ctx: ParseContext) -> None:
        """Cross-parameter checks of the subclass (single-value ranges are in the Param tables)."""

    # ------------------------------------------------------------------ helpers for subclasses
    def where(self, *names: str) -> XmlNode:
        """The element where the first of ``names`` that was written explicitly is, else the ``<sensor>`` itself."""
        for n in names:
            w = self.params.where.get(n)
            if w is not None:
                return w
        return self.node

    def _check_range_limits(self, ctx: ParseContext) -> None:
        """``min_range`` < ``max_range`` (range sensors), else a located error."""
        lo, hi = float(self.params["min_range"]), float(self.params["max_range"])
        if not lo < hi:
            raise ctx.error(self.where("min_range", "max_range"),
                            f"<min_range> ({lo:g} m) must be smaller than <max_range> ({hi:g} m)")

    def _check_ray_count(self, ctx: ParseContext, n_rays: int, what: str, fix: str, *names: str) -> None:
        """``n_rays`` rays within the memory budget (:mod:`mvsim_core.memory_budget`, :attr:`RAY_BYTES` each),
        else a located error at the first of ``names`` written explicitly.

        Args:
            n_rays: rays per sample. what: them described (``"2D lidar of 100000000 rays"``).
            fix: how to change the file. names: the parameters that set the count.
        """
        if over_budget(n_rays, self.RAY_BYTES):
            raise ctx.error(self.where(*names), budget_message(what, n_rays, self.RAY_BYTES, fix))

    # ------------------------------------------------------------------ outputs
    def outputs(self) -> tuple[Output, ...]:
        """What this sensor puts out (:mod:`mvsim_core.sensors.outputs`): none here; every class that samples
        declares its own, and every adapter encodes them by their kind."""
        return ()

    def output(self, kind: OutputKind) -> Output:
        """A sensor's output of ``kind`` named and timed as the sensor, in its own frame."""
        return Output(kind, self.name, self.name, self.period)

    # ------------------------------------------------------------------ description
    @property
    def rate(self) -> float:
        """Samples per second (Hz)."""
        return 1.0 / self.period

    def details(self) -> str:
        """Class-specific part of :meth:`summary` (e.g. ``181 rays, 180°``); "" for none."""
        return ""

    def summary(self) -> str:
        """One line: ``laser1 (laser, 181 rays, 180°, 20 Hz)``."""
        parts = [self.xml_class]
        d = self.details()
        if d:
            parts.append(d)
        parts.append(f"{self.rate:.4g} Hz")
        return f"{self.name} ({', '.join(parts)})"

    def __repr__(self) -> str:
        owner = f" on {self.parent}" if self.parent else ""
        return f"<{type(self).__name__} {self.summary()}{owner}>"


def sensor_from_xml(node: XmlNode, ctx: ParseContext, parent: str) -> Sensor:
    """Build the sensor described by a ``<sensor class="...">`` element (class chosen by the attribute).

    Raises:
        WorldFileError: missing or unknown ``class`` (the message lists the known classes), or a bad value.
    """
    known = ", ".join(sorted(Sensor.registry))
    cls_name = ctx.attr(node, "class", extra={"PARENT_NAME": parent})
    if not cls_name:
        raise ctx.error(node, f'<sensor> needs the attribute class="..."; known sensor classes: {known}')
    cls = Sensor.registry.get(cls_name)
    if cls is None:
        raise ctx.error(node, f'unknown sensor class "{cls_name}"; known sensor classes: {known}', attr="class")
    return cls.from_xml(node, ctx, parent)


# ---------------------------------------------------------------------- reading pieces
def _read_name(node: XmlNode, ctx: ParseContext, parent: str, prefix: str) -> str:
    """``name="..."`` (substituted, with PARENT_NAME available), or the next default ``<prefix><n>``.

    Default names are numbered per prefix over the whole world (``laser1``, ``laser2``, ... across vehicles); upstream
    numbers them by the count of sensors already on the same vehicle, which gives duplicates across vehicles.
    """
    raw = ctx.attr(node, "name", extra={"PARENT_NAME": parent})
    if raw:
        return raw
    return f"{prefix}{ctx.next_index(prefix)}"


def _to_count(params: ParamValues, name: str, node: XmlNode, ctx: ParseContext) -> int:
    v = params[name]
    where = params.where.get(name, node)
    label = f"<{name}>"
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ctx.error(where, f"{label} must be a whole number ≥ 1 (got {v})")
    n = int(v)  # drop the fraction, as C's %i does
    if n < 1:
        raise ctx.error(where, f"{label} must be a whole number ≥ 1 (got {v:g})")
    return n


def _read_pose(node: XmlNode, ctx: ParseContext, tags: Iterable[str], default: Pose3D,
               extra: dict[str, str]) -> Pose3D:
    """The sensor pose from ``pose`` / ``pose_3d`` / ``height``, applied in the order they are written.

    ``pose_3d`` sets all six values; ``pose`` sets x, y, yaw and zeroes pitch and roll; ``height`` sets z.
    Upstream's ``pose`` also resets z to 0, so a ``<height>`` written *before* ``<pose>`` is lost there; here ``pose``
    keeps z, so ``<height>`` counts wherever it is written.
    """
    allowed = set(tags)
    x, y, z, yaw, pitch, roll = default
    for c in node.children:
        if c.tag not in allowed:
            continue
        v = parse_value(_POSE_PARAMS[c.tag], c.text, c, ctx, extra=extra)
        if c.tag == "pose_3d":
            x, y, z, yaw, pitch, roll = v
        elif c.tag == "pose":
            x, y, yaw = v
            pitch = roll = 0.0
        else:
            z = v
    return (x, y, z, yaw, pitch, roll)


def _read_publish(node: XmlNode, ctx: ParseContext, extra: dict[str, str]) -> str | None:
    """``<publish enabled="true|false"><publish_topic>...</publish_topic></publish>`` -> topic or None."""
    pub = node.child("publish")
    if pub is None:
        return None
    if "enabled" in pub.attrs:
        enabled = parse_value(_ENABLED, pub.attrs["enabled"], pub, ctx, attr="enabled", extra=extra)
    else:
        enabled = True
    warn_unknown_children(pub, {PUBLISH_TOPIC.name}, ctx, "<publish> of a sensor")
    if not enabled:
        return None
    topic = read_params((PUBLISH_TOPIC,), [pub], ctx, extra=extra)[PUBLISH_TOPIC.name]
    return topic or None
