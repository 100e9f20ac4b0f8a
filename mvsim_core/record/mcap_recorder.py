"""Record a simulation as a rosbag2-compatible MCAP file, without ROS: the topics the ROS node publishes, in ROS 2
message types (schema encoding ``ros2msg`` with the full definitions, message encoding ``cdr``, profile ``ros2``).

::

    with Recorder(world, "run.mcap") as rec:      # a step listener from here on
        world.run(60.0)

Topics (names from :mod:`mvsim_core.io.ros_names`, as the node's in the root namespace, so ``/odom`` for a lone
vehicle and ``/<V>/odom`` with several), stamped with simulated time (log time = publish time = stamp):

* ``/clock`` (rosgraph_msgs/Clock) at every step that records something, before it;
* every ``period_tf`` (0.02 s, the node's ``period_ms_publish_tf``): per vehicle its declared outputs
  (:func:`~mvsim_core.outputs.vehicle_roles`: ``odom``, nav_msgs/Odometry, the noisy wheel odometry, covariances as
  the node's; ``base_pose_ground_truth``, Odometry in ``world_frame``; ``collision``, std_msgs/Bool: any contact since
  the previous period) and ``tf`` (tf2_msgs/TFMessage: ``odom → base_link`` and, with ``fake_localization``,
  ``map → odom``). Their numbers are those of the outputs' samples, read for all vehicles at once from the physics
  arrays;
* once at the start: per vehicle ``tf_static`` (``base_link → base_footprint`` and every sensor's frames),
  ``simul_map`` (nav_msgs/OccupancyGrid) and ``simul_map_metadata`` per occupancy grid;
* every new sample of every sensor output, by its kind (:mod:`mvsim_core.sensors.outputs`; one writer per kind,
  :meth:`Recorder._writers`; the sample is the one ``Output.observe`` picks): a scan → LaserScan; a point cloud →
  ``L_points`` PointCloud2 (x, y, z, intensity, ring); an image → ``L/image_raw`` (rgb8) and ``L/camera_info``; an
  RGB-D pair → ``L_rgb/...``, ``L_depth/...`` images (depth 32FC1, metres, NaN = no return; the depth image only
  with the ``depth_image`` option) and infos, ``L_points``; an IMU sample → Imu (covariances from ``Output.noise``);
  a fix → NavSatFix (NO_FIX samples too);
* per vehicle ``cmd_vel`` (geometry_msgs/Twist): every twist given to the vehicle (``Vehicle.set_twist``, from ROS,
  ZMQ, Foxglove, the viewer's teleop, a script, or the node's watchdog stopping it), as given, before the command
  gate clamps or refuses it; logged at the simulated time it came (Twist has no header).

The recorder wants every sensor one of whose topics it records (reader :data:`READER`), so in a world that samples on
demand those sensors sample while it records (:mod:`mvsim_core.sensors.demand`); :meth:`Recorder.close` releases
them.

Not recorded (yet): the node's chassis markers and polygon, ``amcl_pose``/``particlecloud``, Ackermann commands and
coloured RGB-D clouds.

Options: ``include`` / ``exclude`` glob patterns on the topic names (``fnmatch``: ``/*/odom``, ``*image*``) and
``rates`` (pattern → most messages per simulated second, a throttle per topic). Cost: the periodic messages of all
vehicles are one :class:`~mvsim_core.io.mcap_writer.MessageBlock` of fixed layouts (:mod:`mvsim_core.io.ros2_cdr`)
whose changing fields one compiled pass fills from the physics arrays; the 2D scans of a step are one block too;
the sensors are only looked at when the scheduler sampled. With rates or excluded topics, one batch per kind and
group instead (:meth:`~mvsim_core.io.mcap_writer.McapWriter.add_batch`). Crash safety: see
:mod:`mvsim_core.io.mcap_writer` (chunks flushed at least every simulated second; :meth:`Recorder.close` writes the
summary).
"""

from __future__ import annotations

import fnmatch
import math
import queue
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.geometry.rotations import quaternion_from_ypr
from mvsim_core.io import ros2_cdr as cdr
from mvsim_core.io import ros_fields as rf
from mvsim_core.io import ros_names as names
from mvsim_core.io.mcap_writer import McapWriter, MessageBlock
from mvsim_core.jit import njit
from mvsim_core.output_kind import OutputKind
from mvsim_core.outputs import outputs_of, vehicle_roles

if TYPE_CHECKING:
    from mvsim_core.sensors.outputs import Output
    from mvsim_core.world import World

READER = "record"
"""The reader the recorder wants its sensors as (``Sensor.want``)."""

VARIANCE_FLOOR = rf.VARIANCE_FLOOR
"""Variance of an exact or noise-free value (:data:`mvsim_core.io.ros_fields.VARIANCE_FLOOR`, as the node's)."""
UNMEASURED_VARIANCE = 1e6
"""Variance of what planar odometry does not measure (as the node's ``conversions.UNMEASURED_VARIANCE``)."""
_DIAG = np.array([0, 7, 14, 21, 28, 35])
_PLANAR = np.array([0, 1, 5])
"""vx, vy, wz in a twist (x, y, yaw in a diagonal of six)."""

TYPES = {
    "clock": "rosgraph_msgs/msg/Clock", "odom": "nav_msgs/msg/Odometry", "bool": "std_msgs/msg/Bool",
    "tf": "tf2_msgs/msg/TFMessage", "scan": "sensor_msgs/msg/LaserScan", "cloud": "sensor_msgs/msg/PointCloud2",
    "image": "sensor_msgs/msg/Image", "info": "sensor_msgs/msg/CameraInfo", "imu": "sensor_msgs/msg/Imu",
    "fix": "sensor_msgs/msg/NavSatFix", "map": "nav_msgs/msg/OccupancyGrid", "meta": "nav_msgs/msg/MapMetaData",
    "twist": "geometry_msgs/msg/Twist",
}


def message_definition(msgtype: str) -> bytes:
    """The ``ros2msg`` text of ``msgtype`` with its dependencies (rosbag2's layout: ``===`` lines and ``MSG: type``),
    from ``rosbags``' ROS 2 Humble type store."""
    from rosbags.typesys import Stores, get_typestore

    text, _ = get_typestore(Stores.ROS2_HUMBLE).generate_msgdef(msgtype, ros_version=2)
    return text.encode()


def quaternions_from_ypr(yaw: np.ndarray, pitch: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """(n, 4) quaternions (x, y, z, w) of R = Rz(yaw)·Ry(pitch)·Rx(roll), as :func:`quaternion_from_ypr` per row."""
    cy, sy = np.cos(0.5 * yaw), np.sin(0.5 * yaw)
    cp, sp = np.cos(0.5 * pitch), np.sin(0.5 * pitch)
    cr, sr = np.cos(0.5 * roll), np.sin(0.5 * roll)
    return np.column_stack((sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy))


@njit(cache=True)
def _periodic_fields(x: np.ndarray, y: np.ndarray, z: np.ndarray, yaw: np.ndarray, pitch: np.ndarray,
                     roll: np.ndarray, tw: np.ndarray, odo: np.ndarray, odo_prev: np.ndarray, travelled: np.ndarray,
                     turned: np.ndarray, mult: np.ndarray, std: np.ndarray, std_xy: np.ndarray, od: np.ndarray,
                     gt: np.ndarray, m2o: np.ndarray) -> None:  # pragma: no cover (compiled)
    """The changing fields of every vehicle's periodic messages, in one compiled pass (same arithmetic, in the same
    order, as the numpy expressions they replace: bit-identical numbers).

    In: ground-truth pose (x, y, z m; yaw, pitch, roll rad), twist (n, 3: m/s, m/s, rad/s) and odometry (n, 3: m,
    m, rad); the odometry at the previous period, distance travelled (m) and turned (rad) since the start (updated
    here); odometry multipliers, std. devs. (n, 3) and max(std x, std y) (n,). Out: ``od`` (n, 85) odometry pose,
    covariance, twist, covariance; ``gt`` (n, 49) ground-truth pose, covariance (left alone), twist; ``m2o`` (n, 7)
    map -> odom = ground truth ⊕ odometry⁻¹ (SE(2), yaw wrapped to [-π, π) as compose2d does)."""
    tau = 2.0 * np.pi
    for i in range(x.shape[0]):
        ox, oy, oyaw = odo[i, 0], odo[i, 1], odo[i, 2]
        travelled[i] += np.hypot(ox - odo_prev[i, 0], oy - odo_prev[i, 1])
        turned[i] += abs(np.remainder(oyaw - odo_prev[i, 2] + np.pi, tau) - np.pi)
        odo_prev[i, 0], odo_prev[i, 1], odo_prev[i, 2] = ox, oy, oyaw
        h = 0.5 * oyaw
        od[i, 0], od[i, 1], od[i, 5], od[i, 6] = ox, oy, np.sin(h), np.cos(h)
        tx, ty, tz = tw[i, 0] * mult[i, 0], tw[i, 1] * mult[i, 1], tw[i, 2] * mult[i, 2]
        od[i, 43], od[i, 44], od[i, 48] = tx, ty, tz
        pos = std_xy[i] * travelled[i]
        od[i, 7] = od[i, 14] = pos * pos + VARIANCE_FLOOR
        v = std[i, 2] * turned[i]
        od[i, 42] = v * v + VARIANCE_FLOOR
        vx, vy, vz = std[i, 0] * abs(tx), std[i, 1] * abs(ty), std[i, 2] * abs(tz)
        od[i, 49], od[i, 56], od[i, 84] = vx * vx + VARIANCE_FLOOR, vy * vy + VARIANCE_FLOOR, vz * vz + VARIANCE_FLOOR
        hy, hp, hr = 0.5 * yaw[i], 0.5 * pitch[i], 0.5 * roll[i]
        cy, sy, cp, sp, cr, sr = np.cos(hy), np.sin(hy), np.cos(hp), np.sin(hp), np.cos(hr), np.sin(hr)
        a, b, e, f = cr * cp, sr * sp, sr * cp, cr * sp
        gt[i, 0], gt[i, 1], gt[i, 2] = x[i], y[i], z[i]
        gt[i, 3], gt[i, 4], gt[i, 5], gt[i, 6] = e * cy - f * sy, f * cy + e * sy, a * sy - b * cy, a * cy + b * sy
        gt[i, 43], gt[i, 44], gt[i, 48] = tw[i, 0], tw[i, 1], tw[i, 2]
        c, s = np.cos(oyaw), np.sin(oyaw)
        ix, iy = -c * ox - s * oy, s * ox - c * oy
        cg, sg = np.cos(yaw[i]), np.sin(yaw[i])
        hm = 0.5 * (np.remainder(yaw[i] - oyaw + np.pi, tau) - np.pi)
        m2o[i, 0], m2o[i, 1] = x[i] + cg * ix - sg * iy, y[i] + sg * ix + cg * iy
        m2o[i, 5], m2o[i, 6] = np.sin(hm), np.cos(hm)


SensorWriter = Callable[[Any, "Output", dict[str, str], str], Callable[[Any], None]]
"""(sensor, its output, the output's topics, its frame with the vehicle's frame prefix) → write(sample)."""


def _xyzq(p: Any) -> list[float]:
    """(x, y, z, qx, qy, qz, qw) of an mvsim pose (x, y, z, yaw, pitch, roll)."""
    return [float(p[0]), float(p[1]), float(p[2]), *quaternion_from_ypr(float(p[3]), float(p[4]), float(p[5]))]


@dataclass
class RosLayout:
    """The node's naming options (see :class:`mvsim_ros2.params.Options`; same defaults)."""

    world_frame: str = names.DEFAULT_WORLD_FRAME
    period_tf: float = 0.02  # s between odom / ground truth / collision / tf messages
    fake_localization: bool = True  # map -> odom on tf
    tf_odom_to_base: bool = True  # odom -> base_link on tf
    force_namespace: bool = False
    shared_tf_tree: bool = False


KINDS = ("odom", "gt", "collision", "tf")
"""The periodic messages of a vehicle, in the order they are written."""


@dataclass
class _Group:
    """Vehicles whose periodic messages share one layout per kind (same frame-name lengths): filled as numpy rows."""

    idx: np.ndarray  # indices into the recorder's vehicle list
    layouts: dict[str, cdr.Layout]
    rows: dict[str, np.ndarray]
    channels: dict[str, np.ndarray] = field(default_factory=dict)
    sel: slice | np.ndarray = field(default_factory=lambda: slice(None))  # idx, a slice when consecutive
    stamps: list[np.ndarray] = field(default_factory=list)  # (n, 2) uint32 views of every stamp field
    copies: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    """(view of consecutive fields, the recorder's array of them for all vehicles): what changes per period."""


@dataclass
class _Scans:
    """Scans written as one batch: the same layout sizes (frame-name length, ray count) on distinct channels."""

    layout: cdr.Layout  # the first scan's (the field offsets of all)
    channels: np.ndarray
    rows: np.ndarray  # (n, size) uint8: every scan's template
    stamp: np.ndarray  # (n, 2) uint32 view
    ranges: np.ndarray  # (n, rays) float32 view


@dataclass
class _ScanBlock:
    """The scans of a set of 2D lidars firing together (``rays`` each), as one :class:`MessageBlock`: per part (scans
    of one layout size) their positions in the set and views of their stamps and ranges."""

    block: MessageBlock
    rays: int
    parts: list[tuple[slice | list[int], np.ndarray, np.ndarray]]
    rmin: np.ndarray  # (n * rays,) float32: each scan's min_range (m), per ray


class Recorder:
    """A step listener writing an MCAP recording of ``world`` to ``path`` (see the module docstring).

    Args:
        world: the world (started here if it was not).
        path: the ``.mcap`` file (overwritten).
        include: glob patterns of topics to record (default: all).
        exclude: glob patterns of topics not to record.
        rates: pattern → the most messages per simulated second on each matching topic (a throttle).
        layout: the node's naming options.
        compression: chunk compression ``zstd`` (default), ``lz4`` or ``""``.
    """

    def __init__(self, world: World, path: str | Path, *, include: Iterable[str] = ("*",),
                 exclude: Iterable[str] = (), rates: dict[str, float] | None = None,
                 layout: RosLayout | None = None, compression: str = "zstd") -> None:
        self.world = world.start()
        self.layout = layout or RosLayout()
        self.include, self.exclude = list(include), list(exclude)
        self.rates = dict(rates or {})
        for pattern, hz in self.rates.items():
            if not (hz > 0 and math.isfinite(hz)):
                raise ValueError(f"record rate of {pattern!r} must be > 0 messages per second (got {hz})")
        self.writer = McapWriter(path, compression=compression)
        self._schemas: dict[str, int] = {}
        self._min_gap = np.zeros(0, np.int64)  # per channel: ns between throttled messages (0 = none)
        self._next_ok = np.zeros(0, np.int64)
        self._clock_ns = -1
        self.closed = False
        self._clock = self._channel("/clock", "clock")
        self._setup_vehicles()
        self._setup_sensors()
        self._plain = not self._min_gap.any() and all((g.channels[k] >= 0).all() for g in self._groups
                                                      for k in g.channels)  # nothing filtered per vehicle
        self._block = self._periodic_block()
        self._bulk_lasers = not self._min_gap.any() and all(ch >= 0 for ch, _ in self._lasers)
        self._write_static()
        self._note_collisions()
        self._next_periodic = stamp = cdr.stamp_ns(world.time)
        self._periodic(stamp)
        self._next_periodic = stamp + cdr.stamp_ns(self.layout.period_tf)
        world.add_step_listener(self)
        for v in self.vehicles:  # cmd_vel: every twist given to a vehicle, as given
            if self._cmd_ch.get(v.name, -1) >= 0:
                v.command_listeners.append(self._on_command)

    # ------------------------------------------------------------------ channels
    def selected(self, topic: str) -> bool:
        """Whether ``topic`` passes the include and exclude patterns."""
        return (any(fnmatch.fnmatchcase(topic, p) for p in self.include)
                and not any(fnmatch.fnmatchcase(topic, p) for p in self.exclude))

    def _channel(self, topic: str, kind: str) -> int:
        """The channel of ``topic`` (absolute name), or -1 when not selected."""
        if not self.selected(topic):
            return -1
        msgtype = TYPES[kind]
        if msgtype not in self._schemas:
            self._schemas[msgtype] = self.writer.add_schema(msgtype, "ros2msg", message_definition(msgtype))
        ch = self.writer.add_channel(topic, self._schemas[msgtype], "cdr")
        hz = next((r for p, r in self.rates.items() if fnmatch.fnmatchcase(topic, p)), 0.0)
        self._min_gap = np.append(self._min_gap, cdr.stamp_ns(1.0 / hz) if hz else 0)
        self._next_ok = np.append(self._next_ok, np.iinfo(np.int64).min)
        return ch

    def _output_channel(self, output: Output | None, prefix: str, kind: str) -> int:
        """The channel of a vehicle's declared output (its topic under the vehicle's ``prefix``), or -1 when it
        declares none or the topic is not selected."""
        if output is None:
            return -1
        return self._channel(f"/{names.output_topics(output, prefix)['main']}", kind)

    def _pass(self, ch: int, t: int) -> bool:
        """Throttle of one message on ``ch`` at ``t`` ns (and the rate bookkeeping)."""
        if ch < 0:
            return False
        gap = self._min_gap[ch]
        if gap:
            if t < self._next_ok[ch]:
                return False
            self._next_ok[ch] = t + gap - 1000  # 1 µs of slack for stamps rounded to the step
        return True

    def _write(self, ch: int, t: int, data: bytes | bytearray) -> None:
        if self._pass(ch, t):
            self._tick_clock(t)
            self.writer.add_message(ch, t, data)

    def _tick_clock(self, t: int) -> None:
        if t != self._clock_ns:
            self._clock_ns = t
            if self._pass(self._clock, t):
                self.writer.add_message(self._clock, t, self._clock_layout.fill({"stamp": t}))

    # ------------------------------------------------------------------ vehicles
    def _setup_vehicles(self) -> None:
        lay = self.layout
        self._clock_layout = cdr.clock_msg(0.0).layout()
        self.vehicles = list(self.world.vehicles.values())
        n = len(self.vehicles)
        self._collided = np.zeros(n, bool)
        self._odo_prev = np.zeros((n, 3))
        self._travelled = np.zeros(n)
        self._turned = np.zeros(n)
        self._physics: Any = None  # the physics whose rows self._rows are
        self._rows: np.ndarray | None = None  # each vehicle's row in it (None: some vehicle is not in it)
        self._same_rows = False  # the rows are 0, 1, ... n - 1
        self._noise_of: list[Any] = []  # the odometry multipliers and std. devs. that self._mult, _std are of
        self._mult, self._std, self._std_xy = np.ones((n, 3)), np.zeros((n, 3)), np.zeros(n)
        # per period: the changing fields of every vehicle's messages (the rest as in the templates, set up in
        # _periodic_block): odometry pose (7), its covariance (36), twist (6: odometry multipliers applied) and its
        # covariance (36); ground truth pose, covariance, twist; map -> odom
        self._odom = np.zeros((n, 85))
        self._gt = np.zeros((n, 49))
        self._m2o = np.zeros((n, 7))
        self._bump = np.zeros(n, np.uint8)  # collision since the previous period
        self._stamp = np.zeros(2, np.uint32)  # sec, nanosec of the period's stamp
        self._tf_static_ch: list[int] = []
        self._cmd_ch: dict[str, int] = {}  # vehicle -> its cmd_vel channel (-1: not recorded)
        self._cmds: queue.SimpleQueue[tuple[str, float, tuple[float, float, float]]] = queue.SimpleQueue()
        by_shape: dict[tuple[int, ...], list[int]] = {}
        per_veh: list[dict[str, Any]] = []
        for k, veh in enumerate(self.vehicles):
            prefix = names.vehicle_prefix(veh.name, n, lay.force_namespace)
            fp = names.frame_prefix(veh.name, lay.shared_tf_tree)
            est, truth, bump = vehicle_roles(outputs_of(veh))
            odom = fp + (est.options["parent"] if est is not None else names.ODOM_FRAME)
            base = fp + (est.frame if est is not None else names.BASE_FRAME)
            tf_topic, tf_static_topic = names.tf_topics(prefix, lay.shared_tf_tree)
            tfs = []
            if lay.tf_odom_to_base:
                tfs.append((odom, base, 0.0, [0.0] * 6 + [1.0]))
            if lay.fake_localization:
                tfs.append((lay.world_frame, odom, 0.0, [0.0] * 6 + [1.0]))
            gt = cdr.odometry_msg(lay.world_frame, fp + (truth.frame if truth is not None else names.BASE_FRAME),
                                  0.0).layout()
            exact = np.zeros(36)
            exact[_DIAG] = VARIANCE_FLOOR
            gt = cdr.Layout(bytes(gt.fill({"pose_cov": exact, "twist_cov": exact})), gt.fields)
            lays = {"odom": cdr.odometry_msg(odom, base, 0.0).layout(), "gt": gt,
                    "collision": cdr.bool_msg(False).layout(), "tf": cdr.tf_message(tfs).layout()}
            chans = {"odom": self._output_channel(est, prefix, "odom"),
                     "gt": self._output_channel(truth, prefix, "odom"),
                     "collision": self._output_channel(bump, prefix, "bool"),
                     "tf": self._channel(f"/{tf_topic}", "tf") if tfs else -1}
            self._tf_static_ch.append(self._channel(f"/{tf_static_topic}", "tf"))
            self._cmd_ch[veh.name] = self._channel(f"/{prefix}cmd_vel", "twist")
            per_veh.append({"lays": lays, "chans": chans})
            shape = tuple(len(lays[kind].template) for kind in ("odom", "gt", "tf"))
            by_shape.setdefault(shape, []).append(k)
        self._groups: list[_Group] = []
        for members in by_shape.values():
            first = per_veh[members[0]]["lays"]
            g = _Group(np.array(members), dict(first),
                       {kind: first[kind].rows([per_veh[k]["lays"][kind].template for k in members])
                        for kind in first})
            g.channels = {kind: np.array([per_veh[k]["chans"][kind] for k in members]) for kind in first}
            if members == list(range(members[0], members[-1] + 1)):
                g.sel = slice(members[0], members[-1] + 1)
            else:
                g.sel = g.idx
            self._groups.append(g)

    def _periodic_block(self) -> MessageBlock | None:
        """When nothing is filtered per vehicle: every group's periodic messages as one :class:`MessageBlock` (its
        payloads become the groups' rows), else None (batches per kind, throttled). Then the field views of every
        group (:attr:`_Group.copies`)."""
        block = None
        if self._plain and self._groups:
            block = MessageBlock([(g.channels[kind], g.rows[kind]) for g in self._groups for kind in KINDS])
            views = iter(block.payloads)
            for g in self._groups:
                g.rows = {kind: next(views) for kind in KINDS}
        lay = self.layout
        for g in self._groups:
            L, R = g.layouts, g.rows

            def col(kind: str, name: str, L: dict[str, cdr.Layout] = L, R: dict[str, np.ndarray] = R) -> np.ndarray:
                return L[kind].column(R[kind], name)

            odom, gt = L["odom"].column(R["odom"], "pose", "twist_cov"), L["gt"].column(R["gt"], "pose", "twist")
            self._odom[g.sel], self._gt[g.sel] = odom, gt  # the templates' numbers
            g.stamps = [col("odom", "stamp"), col("gt", "stamp")]
            g.copies = [(odom, self._odom), (gt, self._gt), (col("collision", "data"), self._bump[:, None])]
            tfs = ([self._odom[:, :7]] if lay.tf_odom_to_base else []) + ([self._m2o] if lay.fake_localization else [])
            for k, src in enumerate(tfs):
                g.stamps.append(col("tf", f"stamp{k}"))
                g.copies.append((col("tf", f"tf{k}"), src))
        self._odom[:, 7 + _DIAG[2:5]] = self._odom[:, 49 + _DIAG[2:5]] = UNMEASURED_VARIANCE
        return block

    def _physics_rows(self) -> np.ndarray | None:
        """Each vehicle's row in the world's physics arrays, or None when some vehicle is not in that physics (its
        properties then read elsewhere)."""
        ph = self.world.physics
        if ph is not self._physics:
            self._physics = ph
            where = {id(v): k for k, v in enumerate(ph.vehicles)}
            rows = [where.get(id(v)) for v in self.vehicles]
            self._rows = None if None in rows else np.array(rows, np.int64)
            self._same_rows = rows == list(range(len(ph.vehicles)))  # the arrays as they are
        return self._rows

    def _vehicle_state(self) -> tuple[np.ndarray, ...]:
        """x, y, z, yaw, pitch, roll (n,) each (m, rad), twist (n, 3: m/s, m/s, rad/s) and odometry (n, 3: m, m,
        rad) of every vehicle, the very numbers of their ``pose``, ``twist`` and ``odometry`` properties: read from
        the physics arrays in one go, or vehicle by vehicle when some vehicle is not in the world's physics."""
        rows = self._physics_rows()
        if rows is None:
            vs = self.vehicles
            gt = np.array([v.pose for v in vs], float).reshape(-1, 6)
            tw = np.array([v.twist for v in vs], float).reshape(-1, 3)
            odo = np.array([v.odometry for v in vs], float).reshape(-1, 3)
            return gt[:, 0], gt[:, 1], gt[:, 2], gt[:, 3], gt[:, 4], gt[:, 5], tw, odo
        ph = self._physics
        if self._same_rows:  # views, used before the next step
            st = ph.state
            return st[:, 0], st[:, 1], ph.z, st[:, 2], ph.pitch, ph.roll, ph.twist, ph.odometry
        st = ph.state[rows]
        return (st[:, 0], st[:, 1], ph.z[rows], st[:, 2], ph.pitch[rows], ph.roll[rows], ph.twist[rows],
                ph.odometry[rows])

    def _odometry_noise(self) -> None:
        """:attr:`_mult`, :attr:`_std` (n, 3) and :attr:`_std_xy` (n,) from the vehicles' odometry multipliers and
        std. devs. (rebuilt when one of them is not the same object as before)."""
        now = [v.odometry_multipliers for v in self.vehicles] + [v.odometry_std for v in self.vehicles]
        if now != self._noise_of:
            n = len(self.vehicles)
            self._noise_of = now
            self._mult = np.array(now[:n], float).reshape(-1, 3)
            self._std = np.array(now[n:], float).reshape(-1, 3)
            self._std_xy = np.maximum(self._std[:, 0], self._std[:, 1])

    def _note_collisions(self) -> None:
        """Remember which vehicles touch something now (``collision`` flags), until the next period."""
        ph = self.world.physics
        if ph is not None and not ph.colliding:  # nothing touches anything (the usual step)
            return
        for k, v in enumerate(self.vehicles):
            if v.collision:
                self._collided[k] = True

    def _periodic(self, t: int) -> None:
        """odom, ground truth, collision and tf of every vehicle at ``t`` ns: the changing fields computed for all
        vehicles at once, copied into each group's rows, written as one block (or one batch per kind and group)."""
        if not self.vehicles:
            return
        x, y, z, yaw, pitch, roll, tw, odo = self._vehicle_state()
        self._odometry_noise()
        _periodic_fields(x, y, z, yaw, pitch, roll, tw, odo, self._odo_prev, self._travelled, self._turned, self._mult,
                         self._std, self._std_xy, self._odom, self._gt, self._m2o)
        self._bump[:] = self._collided
        self._collided[:] = False
        self._stamp[:] = divmod(t, 1_000_000_000)
        for g in self._groups:
            for view in g.stamps:
                view[:] = self._stamp
            for view, full in g.copies:
                view[:] = full[g.sel]
        self._tick_clock(t)
        if self._block is not None:
            self.writer.add_block(self._block, t)
            return
        for g in self._groups:
            for kind in KINDS:
                self._batch(g.channels[kind], t, g.rows[kind])

    def _batch(self, ch: np.ndarray, t: int, rows: np.ndarray) -> None:
        if self._plain:
            self.writer.add_batch(ch, np.full(len(ch), t, np.int64), rows)
            return
        keep = ch >= 0
        gap = self._min_gap[np.where(keep, ch, 0)]
        throttled = keep & (gap > 0)
        if throttled.any():
            ok = t >= self._next_ok[ch[throttled]]
            keep[np.flatnonzero(throttled)[~ok]] = False
            upd = ch[throttled][ok]
            self._next_ok[upd] = t + self._min_gap[upd] - 1000
        if keep.all():
            self.writer.add_batch(ch, np.full(len(ch), t, np.int64), rows)
        elif keep.any():
            self.writer.add_batch(ch[keep], np.full(int(keep.sum()), t, np.int64), rows[keep])

    # ------------------------------------------------------------------ static topics
    def _write_static(self) -> None:
        t = cdr.stamp_ns(self.world.time)
        ts = self.world.time
        for veh, ch in zip(self.vehicles, self._tf_static_ch, strict=True):
            fp = names.frame_prefix(veh.name, self.layout.shared_tf_tree)
            ident = [0.0] * 6 + [1.0]
            tfs = [(fp + names.BASE_FRAME, fp + names.FOOTPRINT_FRAME, ts, ident)]
            for s in veh.sensors.values():
                tfs.append((fp + names.BASE_FRAME, fp + s.name, ts, _xyzq(s.pose)))
                for o in outputs_of(s):
                    if o.kind is OutputKind.RGBD:  # the optical frames (ros_fields: the node's too)
                        for f in rf.rgbd_optical_frames(fp + o.frame, o.options["rgb_pose_wrt_depth"]):
                            tfs.append((f.parent, f.child, ts, [*f.translation, *f.rotation]))
            self._write(ch, t, cdr.tf_message(tfs).bytes())
        grids = [e for e in getattr(self.world, "elements", ())
                 if type(e).__name__ == "OccupancyGrid" and getattr(e, "grid", None) is not None]
        if grids:
            ch_map, ch_meta = self._channel("/simul_map", "map"), self._channel("/simul_map_metadata", "meta")
            for e in grids:
                g = e.grid
                occ = np.asarray(g.occupancy, np.float32)
                data = np.rint(np.clip(occ, 0.0, 1.0) * 100.0).astype(np.int8)
                data[np.abs(occ - 0.5) <= 0.01] = -1
                origin = [float(g.x_min), float(g.y_min), 0.0, 0.0, 0.0, 0.0, 1.0]
                msg = cdr.occupancy_grid_msg(self.layout.world_frame, ts, float(g.resolution), int(g.nx),
                                             int(g.ny), origin, data)
                self._write(ch_map, t, msg.bytes())
                meta = cdr.CdrEncoder().stamp(ts).scalars("f", [float(g.resolution)])
                meta.scalars("I", [int(g.nx), int(g.ny)]).scalars("d", origin)
                self._write(ch_meta, t, meta.bytes())

    # ------------------------------------------------------------------ sensors
    def _setup_sensors(self) -> None:
        self._sensors: list[list[Any]] = []  # [sensor, observe, write, previous observation]
        self._scheduler: Any = None  # the sensor scheduler, and its run count, as of the last look at the sensors
        self._runs = -1
        self._scans: list[tuple[int, int, cdr.Layout, int, Any]] = []  # queued: (t ns, size, layout, channel, obs)
        self._scan_batches: dict[tuple[int, ...], _Scans] = {}
        self._lasers: list[tuple[int, Callable[[Any], cdr.Layout]]] = []  # per 2D lidar: channel, layout of a scan
        self._laser_entries: list[list[Any]] = []  # their entries in self._sensors
        self._scan_blocks: dict[tuple[int, ...], _ScanBlock] = {}
        self._wanted: list[Any] = []  # the sensors this recorder wants (reader READER)
        writers = self._writers()
        n = len(self.vehicles)
        for veh in self.vehicles:
            prefix = names.vehicle_prefix(veh.name, n, self.layout.force_namespace)
            fp = names.frame_prefix(veh.name, self.layout.shared_tf_tree)
            for s in veh.sensors.values():
                if not getattr(type(s), "simulated", True):
                    continue
                for o in outputs_of(s):
                    make = writers.get(o.kind)
                    if make is None:
                        continue
                    topics = names.output_topics(o, f"/{prefix}")
                    self._sensors.append([s, o.observe, make(s, o, topics, fp + o.frame), None])
                    if any(self.selected(tp) for tp in topics.values()):  # recorded: sampled where on demand
                        if not any(w is s for w in self._wanted):
                            s.want(READER)
                            self._wanted.append(s)
                    if o.kind is OutputKind.SCAN:
                        self._laser_entries.append(self._sensors[-1])
        self._other_entries = [e for e in self._sensors if not any(e is x for x in self._laser_entries)]

    def _writers(self) -> dict[OutputKind, SensorWriter]:
        """The writer of each output kind (sensor, output, topics, frame) → write(sample)."""
        return {OutputKind.SCAN: self._write_scan, OutputKind.POINT_CLOUD: self._write_point_cloud,
                OutputKind.IMAGE: self._write_image, OutputKind.RGBD: self._write_rgbd,
                OutputKind.IMU: self._write_imu, OutputKind.FIX: self._write_fix}

    def _write_scan(self, s: Any, o: Output, topics: dict[str, str], frame: str) -> Callable[[Any], None]:
        ch = self._channel(topics["main"], "scan")
        period = float(o.period)
        cache: dict[int, cdr.Layout] = {}

        def layout(obs: Any) -> cdr.Layout:
            """The scan's layout (built at its first scan of this many rays; the ranges are set at each scan)."""
            n = len(obs.ranges)
            lay = cache.get(n)
            if lay is None:
                lay = cache[n] = cdr.laser_scan_msg(
                    frame, 0.0, (obs.angle_min, obs.angle_max, obs.angle_increment), period,
                    float(getattr(obs, "min_range", 0.0)), float(obs.max_range), np.zeros(n, np.float32)).layout()
            return lay

        def write(obs: Any) -> None:
            """Queue the scan (written with the step's other scans by :meth:`_write_scans`)."""
            t = cdr.stamp_ns(obs.stamp)
            if self._pass(ch, t):
                lay = layout(obs)
                self._scans.append((t, len(lay.template), lay, ch, obs))

        self._lasers.append((ch, layout))
        return write

    def _look_lasers(self) -> None:
        """New scans of the 2D lidars (when nothing is throttled or left out): those of one stamp and ray count as
        one :class:`_ScanBlock` (cached per set of lidars), else queued one by one."""
        entries = self._laser_entries
        obs = [e[0].last for e in entries]
        new = [i for i, o in enumerate(obs) if o is not None and o is not entries[i][3]]
        if not new:
            return
        scans = [obs[i] for i in new]
        for i, o in zip(new, scans, strict=True):
            entries[i][3] = o
        stamp, rays = scans[0].stamp, len(scans[0].ranges)
        if any(o.stamp != stamp or len(o.ranges) != rays for o in scans):
            for i, o in zip(new, scans, strict=True):
                entries[i][2](o)
            return
        key = tuple(new)
        b = self._scan_blocks.get(key)
        if b is None or b.rays != rays:
            if len(self._scan_blocks) >= 64:  # the same lidars tend to fire together: a few sets in practice
                self._scan_blocks.clear()
            b = self._scan_blocks[key] = self._scan_block(new, scans, rays)
        ranges = np.concatenate([o.ranges for o in scans]).astype(np.float32, copy=False)  # a new array
        _rep117_in_place(ranges, np.concatenate([o.valid for o in scans]).astype(bool, copy=False), b.rmin)
        ranges = ranges.reshape(-1, rays)
        t = cdr.stamp_ns(stamp)
        sec_ns = divmod(t, 1_000_000_000)
        for pos, stamp_view, ranges_view in b.parts:
            stamp_view[:] = sec_ns
            ranges_view[:] = ranges[pos]
        self._tick_clock(t)
        self.writer.add_block(b.block, t)

    def _scan_block(self, new: list[int], scans: list[Any], rays: int) -> _ScanBlock:
        """The :class:`_ScanBlock` of the lidars ``new`` (positions in :attr:`_laser_entries`) from their scans."""
        lays = [self._lasers[i][1](o) for i, o in zip(new, scans, strict=True)]
        by_size: dict[tuple[int, int], list[int]] = {}
        for k, lay in enumerate(lays):
            by_size.setdefault((len(lay.template), lay.fields["ranges"][0]), []).append(k)
        groups = list(by_size.values())
        block = MessageBlock([(np.array([self._lasers[new[k]][0] for k in ks], np.int64),
                               lays[ks[0]].rows([lays[k].template for k in ks])) for ks in groups])
        parts: list[tuple[slice | list[int], np.ndarray, np.ndarray]] = []
        for ks, rows in zip(groups, block.payloads, strict=True):
            pos = slice(ks[0], ks[-1] + 1) if ks == list(range(ks[0], ks[-1] + 1)) else ks
            parts.append((pos, lays[ks[0]].column(rows, "stamp"), lays[ks[0]].column(rows, "ranges")))
        rmin = np.repeat(np.array([float(getattr(o, "min_range", 0.0)) for o in scans], np.float32), rays)
        return _ScanBlock(block, rays, parts, rmin)

    def _write_scans(self) -> None:
        """The queued scans, one batch per stamp and layout size (all 2D lidars firing at a step: usually one)."""
        by_kind: dict[tuple[int, int, int], list[tuple[cdr.Layout, int, Any]]] = {}
        for t, size, lay, ch, obs in self._scans:
            by_kind.setdefault((t, size, lay.fields["ranges"][0]), []).append((lay, ch, obs))
        self._scans.clear()
        for (t, _, _), scans in by_kind.items():
            key = tuple(id(lay) for lay, _, _ in scans)
            b = self._scan_batches.get(key)
            if b is None:
                b = self._scan_batches[key] = self._scan_batch([lay for lay, _, _ in scans],
                                                               [ch for _, ch, _ in scans])
            obs = [o for _, _, o in scans]
            rays = b.ranges.shape[1]
            ranges = np.array([np.asarray(o.ranges, np.float32) for o in obs], np.float32).reshape(-1, rays)
            valid = np.array([np.asarray(o.valid, bool) for o in obs], bool).reshape(-1, rays)
            b.ranges[:] = _rep117(ranges, valid, obs)
            b.stamp[:] = divmod(t, 1_000_000_000)
            self._tick_clock(t)
            self.writer.add_batch(b.channels, np.full(len(b.channels), t, np.int64), b.rows)

    def _scan_batch(self, layouts: list[cdr.Layout], channels: list[int]) -> _Scans:
        """The rows of a batch of scans (templates of ``layouts``, one size, each sensor's own channel)."""
        if len(self._scan_batches) >= 64:  # the same sensors tend to fire together: a few keys in practice
            self._scan_batches.clear()
        lay = layouts[0]
        rows = lay.rows([x.template for x in layouts])
        return _Scans(lay, np.array(channels, np.int64), rows, lay.column(rows, "stamp"), lay.column(rows, "ranges"))

    def _write_point_cloud(self, s: Any, o: Output, topics: dict[str, str], frame: str) -> Callable[[Any], None]:
        ch = self._channel(topics["points"], "cloud")

        def write(obs: Any) -> None:
            t = cdr.stamp_ns(obs.stamp)
            if self._pass(ch, t):
                self._tick_clock(t)
                self.writer.add_message(ch, t, _cloud(frame, obs.stamp, obs.points, obs.intensity, obs.ring))

        return write

    def _camera_pair(self, image: str, info: str) -> tuple[int, int]:
        return self._channel(image, "image"), self._channel(info, "info")

    def _write_image(self, s: Any, o: Output, topics: dict[str, str], frame: str) -> Callable[[Any], None]:
        ci, cn = self._camera_pair(topics["image"], topics["info"])

        def write(obs: Any) -> None:
            t = cdr.stamp_ns(obs.stamp)
            self._write(ci, t, cdr.image_msg(frame, obs.stamp, obs.rgb, "rgb8").bytes())
            self._write(cn, t, _info(frame, obs.stamp, obs.intrinsics))

        return write

    def _write_rgbd(self, s: Any, o: Output, topics: dict[str, str], frame: str) -> Callable[[Any], None]:
        ri, rn = self._camera_pair(topics["rgb_image"], topics["rgb_info"])
        want_depth = bool(o.options.get("depth_image", True))
        di, dn = self._camera_pair(topics["depth_image"], topics["depth_info"])
        di = di if want_depth else -1
        cp = self._channel(topics["points"], "cloud")
        rgb_frame, depth_frame = names.rgbd_frames(frame)

        def write(obs: Any) -> None:
            t = cdr.stamp_ns(obs.stamp)
            if obs.rgb is not None:
                self._write(ri, t, cdr.image_msg(rgb_frame, obs.stamp, obs.rgb, "rgb8").bytes())
                self._write(rn, t, _info(rgb_frame, obs.stamp, obs.rgb_intrinsics))
            if obs.depth is None:
                return
            if di >= 0:
                d = np.asarray(obs.depth, np.float32)
                d = np.where(d > 0.0, d, np.float32(np.nan)).astype(np.float32)
                self._write(di, t, cdr.image_msg(depth_frame, obs.stamp, d, "32FC1").bytes())
            self._write(dn, t, _info(depth_frame, obs.stamp, obs.depth_intrinsics))
            if cp >= 0:
                self._write(cp, t, _cloud(depth_frame, obs.stamp, obs.points()))

        return write

    def _write_imu(self, s: Any, o: Output, topics: dict[str, str], frame: str) -> Callable[[Any], None]:
        ch = self._channel(topics["main"], "imu")
        noise = dict(o.noise)

        def write(obs: Any) -> None:
            f = rf.imu_fields(obs.orientation, noise)  # REP 145 covariances, identity without an orientation
            msg = cdr.imu_msg(frame, obs.stamp, f.orientation, f.orientation_covariance, obs.angular_velocity,
                              f.angular_velocity_covariance, obs.linear_acceleration,
                              f.linear_acceleration_covariance)
            self._write(ch, cdr.stamp_ns(obs.stamp), msg.bytes())

        return write

    def _write_fix(self, s: Any, o: Output, topics: dict[str, str], frame: str) -> Callable[[Any], None]:
        ch = self._channel(topics["main"], "fix")

        def write(obs: Any) -> None:
            t = cdr.stamp_ns(obs.stamp)
            f = rf.nav_sat_fix_fields(obs)  # NO_FIX samples: NaN position, covariance type UNKNOWN
            msg = cdr.nav_sat_fix_msg(frame, obs.stamp, f.status, f.service, (f.latitude, f.longitude, f.altitude),
                                      list(f.position_covariance), f.position_covariance_type)
            self._write(ch, t, msg.bytes())

        return write

    # ------------------------------------------------------------------ the step listener
    def _on_command(self, vehicle: str, twist: tuple[float, float, float]) -> None:
        """A twist given to a vehicle (any thread): queued with the simulated time it came at."""
        self._cmds.put((vehicle, float(self.world.time), twist))

    def _write_commands(self) -> None:
        """The queued twists as ``geometry_msgs/Twist`` on their vehicle's ``cmd_vel``, as given (no header: the
        log time is the simulated time the command came at)."""
        while True:
            try:
                name, when, (vx, vy, wz) = self._cmds.get_nowait()
            except queue.Empty:
                return
            ch = self._cmd_ch.get(name, -1)
            if ch >= 0:
                self._write(ch, cdr.stamp_ns(when), cdr.CdrEncoder().scalars("d", [vx, vy, 0.0, 0.0, 0.0, wz]).bytes())

    def __call__(self, world: World) -> None:
        """After every step: commands given, new sensor observations, and the periodic vehicle topics when due."""
        t = cdr.stamp_ns(world.time)
        if not self._cmds.empty():
            self._write_commands()
        self._note_collisions()
        sch = world.sensor_scheduler
        if sch is not self._scheduler or sch.runs != self._runs:  # some sensor sampled since the last look
            # at the first look, observations from before the recorder may have various stamps: in sensor order
            one_by_one = self._scheduler is None
            self._scheduler, self._runs = sch, sch.runs
            bulk = not one_by_one and self._bulk_lasers
            for entry in self._other_entries if bulk else self._sensors:
                obs = entry[1](entry[0])
                if obs is not None and obs is not entry[3]:
                    entry[3] = obs
                    entry[2](obs)
                    if one_by_one and self._scans:
                        self._write_scans()
            if bulk:
                self._look_lasers()
            if self._scans:
                self._write_scans()
        if t >= self._next_periodic - 1000:
            self._periodic(t)
            step = cdr.stamp_ns(self.layout.period_tf)
            while self._next_periodic <= t + 1000:
                self._next_periodic += step

    def flush(self) -> None:
        """Write the open chunk to the file now."""
        self.writer.flush()

    def close(self) -> None:
        """Stop listening, write the last chunk, the summary and the footer. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.world.remove_step_listener(self)
        for s in self._wanted:
            s.unwant(READER)
        for v in self.vehicles:
            if self._on_command in v.command_listeners:
                v.command_listeners.remove(self._on_command)
        self._write_commands()
        self.writer.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_XYZ_IR = np.dtype({"names": ["x", "y", "z", "intensity", "ring"],
                    "formats": [np.float32, np.float32, np.float32, np.float32, np.uint16],
                    "offsets": [0, 4, 8, 12, 16], "itemsize": 20})
_XYZ = np.dtype({"names": ["x", "y", "z"], "formats": [np.float32] * 3, "offsets": [0, 4, 8], "itemsize": 12})
_DATATYPES = {"x": cdr.POINTFIELD_FLOAT32, "y": cdr.POINTFIELD_FLOAT32, "z": cdr.POINTFIELD_FLOAT32,
              "intensity": cdr.POINTFIELD_FLOAT32, "ring": cdr.POINTFIELD_UINT16}


def _cloud(frame: str, t: float, points: np.ndarray, intensity: np.ndarray | None = None,
           ring: np.ndarray | None = None) -> bytes:
    """PointCloud2 bytes as the node's ``point_cloud_msg``: x, y, z (+ intensity, ring at 12, 16; point_step 20)."""
    pts = np.asarray(points, np.float32).reshape(-1, 3)
    rows = np.empty(len(pts), _XYZ if intensity is None and ring is None else _XYZ_IR)
    if rows.dtype is _XYZ_IR:
        rows["intensity"] = 0.0 if intensity is None else np.asarray(intensity, np.float32)
        rows["ring"] = 0 if ring is None else np.asarray(ring, np.uint16)
    rows["x"], rows["y"], rows["z"] = pts[:, 0], pts[:, 1], pts[:, 2]
    return cdr.point_cloud2_msg(frame, t, rows, _DATATYPES).bytes()


def _info(frame: str, t: float, k: Any) -> bytes:
    return cdr.camera_info_msg(frame, t, rf.camera_info_fields(k)).bytes()


@njit(cache=True)
def _rep117_in_place(ranges: np.ndarray, valid: np.ndarray, rmin: np.ndarray) -> None:  # pragma: no cover
    """:func:`_rep117` on flat arrays, in place: ``ranges`` (float32, m), ``valid`` (bool) and every ray's
    ``min_range`` (float32, m), all (N,)."""
    for i in range(ranges.shape[0]):
        if not valid[i]:
            ranges[i] = -np.inf if ranges[i] < rmin[i] else np.inf


def _rep117(ranges: np.ndarray, valid: np.ndarray, scans: list[Any]) -> np.ndarray:
    """(n, rays) float32 ``ranges`` (m) of ``scans`` as ROS writes them (REP 117): an invalid reading (``valid`` (n,
    rays) False) is -inf when closer than the scan's ``min_range``, +inf when there was no return."""
    if valid.all():
        return ranges
    rmin = np.array([rf.scan_range_min(o) for o in scans], np.float32)[:, None]
    return rf.scan_ranges(ranges, valid, rmin)
