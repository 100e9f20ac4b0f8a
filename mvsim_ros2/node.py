"""The ``mvsim_node`` executable: a ROS 2 node (name ``mvsim``) that runs an mvsim_core World and bridges it to ROS.

Run without launch files::

    mvsim_node --ros-args -p world_file:=worlds/demo.world.xml -p realtime_factor:=1.0
    mvsim_node worlds/demo.world.xml            # same (a plain argument is taken as world_file)

Parameters: upstream's (reference §3.1 and §9) plus ours, each declared once with its default and meaning in
:class:`mvsim_ros2.params.Options` (``mvsim_node --help`` lists them). ``realtime_factor``, ``lockstep``,
``lockstep_step``, ``base_watchdog_timeout`` and ``max_simul_catchup_time`` can be changed while running
(``ros2 param set``); the others are read at start.

Time: every stamp is simulated time, starting at 0 when the node starts, and ``/clock`` carries it: once per tick,
after every ``~/step``, and — so that no message is ever stamped ahead of ``/clock`` — right before the first
message stamped with a newer time (a step whose sensors or periodic topics are due publishes ``/clock`` first; a step
that publishes nothing does not).

Pacing is :class:`mvsim_core.runner.Runner`'s (the same as ``mvsim launch``), scheduled against a wall-clock
anchor — simulated time target = anchor + factor × (wall time since the anchor) — so there is no drift while the
CPU keeps up; when it cannot, at most ``max_simul_catchup_time`` is advanced per tick and the rest of the lag is
dropped (the anchor moves; the node then reports the dropped time in its status line).

Lockstep: with ``lockstep:=true`` the simulation waits; each call of ``~/step`` (std_srvs/Trigger, ``/mvsim/step`` by
default) advances ``lockstep_step`` simulated seconds, publishes everything due meanwhile and /clock, then answers
``success=true`` with ``message`` = the new simulated time in seconds. Setting ``lockstep`` false resumes real-time
pacing from the current time (so ``lockstep`` doubles as pause).

Run-time objects: ``runtime_objects`` and ``runtime_overlays`` (visualization_msgs/MarkerArray) in, each marker a
block, and ``objects_ground_truth`` (TFMessage, with ``objects_ground_truth_rate`` > 0) out
(:mod:`mvsim_ros2.runtime_objects`). Vehicles added or removed over ZMQ get (lose) their topics after the next step.

Services: ``~/step`` and the ``simulation_interfaces`` ones (reset, spawn, delete, get/set entity state, step, play /
pause, spawnables, entity bounds; :mod:`mvsim_ros2.simulation_services`), also under upstream's names; the
SimulateSteps action (:mod:`mvsim_ros2.simulate_steps`).

Diagnostics: ``/diagnostics`` every ``1 / diagnostics_rate`` wall seconds (real-time factor, step time, dropped lag,
blow-ups; :mod:`mvsim_ros2.diagnostics`).

Topics: see :mod:`mvsim_ros2.naming` for the names and QoS; per vehicle ``cmd_vel`` (Twist or TwistStamped) and
``ackermann_cmd`` (AckermannDriveStamped) in (:mod:`mvsim_ros2.commands`), ``joint_commands`` (JointState,
ros2_control style) in (:mod:`mvsim_ros2.joint_commands`), ``odom``, ``base_pose_ground_truth``,
``collision``, ``chassis_markers``, ``chassis_polygon``, ``tf``, ``tf_static``, ``amcl_pose`` and ``particlecloud``
out (:mod:`mvsim_ros2.vehicle_publishers`), plus one or more topics per sensor (:mod:`mvsim_ros2.sensor_publishers`);
``simul_map`` and ``simul_map_metadata`` per world; ``simul_chassis_markers`` (every vehicle's markers, when their
frames are distinct: ``shared_tf_tree`` or one vehicle); ``/clock``. ``shared_tf_tree`` puts every vehicle's frames,
prefixed ``<V>/``, on one tf tree (:mod:`mvsim_ros2.naming`). A volatile topic nobody subscribes to is neither built
nor published (a new subscriber gets the next message); latched ones are always published. A sensor none of whose
topics has a subscriber is not even sampled (the world samples on demand, :mod:`mvsim_core.sensors.demand`): the
node's cost follows what is read, and a new subscriber gets the sensor's next sample, at its own period.

Blow-ups: a vehicle or block that goes NaN/inf or runs away is reset to its last finite pose and logged as an error
(``vehicle 'bot1' blew up at t=...``, at most once per object per simulated second; :mod:`mvsim_core.dynamics.faults`)
while the others and the node go on; with ``strict:=true`` the first one stops the node (one line, exit status 2).

Errors in the parameters or the world file print one line and exit with status 2 (no traceback).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mvsim_core.errors import MvsimError
from mvsim_core.runner import Runner, StatusLine
from mvsim_ros2.entry import Stopped, stop_signals
from mvsim_ros2.params import PARAMS, ConfigError, Options, ParamSpec, resolve_world_file, usage

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.world import World

try:  # ROS 2 is optional at import time, so that `mvsim_node` can say clearly what is missing
    from nav_msgs.msg import MapMetaData
    from nav_msgs.msg import OccupancyGrid as OccupancyGridMsg
    from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
    from rclpy.node import Node
    from rosgraph_msgs.msg import Clock
    from std_srvs.srv import Trigger
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray

    from mvsim_ros2 import conversions as cv
    from mvsim_ros2 import diagnostics, naming, runtime_objects, simulate_steps, simulation_services, zmq_bridge
    from mvsim_ros2 import vehicle_publishers as vp
    from mvsim_ros2.audience import counted_publisher
    from mvsim_ros2.commands import CommandInputs
    from mvsim_ros2.joint_commands import JointCommandInputs
    from mvsim_ros2.sensor_publishers import (
        PublishContext,
        SensorLink,
        follow_audience,
        sensor_links,
        sensor_topics,
        unfollow_audience,
    )

    ROS_IMPORT_ERROR: ImportError | None = None
except ImportError as _e:  # pragma: no cover - exercised only on machines without ROS 2
    Node = object  # type: ignore[assignment,misc]
    ROS_IMPORT_ERROR = _e

__all__ = ["PARAMS", "ConfigError", "MvsimNode", "Options", "ParamSpec", "main", "make_executor",
           "resolve_world_file", "run_node"]

log = logging.getLogger("mvsim_ros2")



def make_executor(kind: str) -> Any:
    """The executor serving the node's callbacks between ticks.

    ``events`` (default): rclpy's C++ EventsExecutor — waiting costs nothing per entity, which matters here: the
    node has ~10 publishers per vehicle and the Python SingleThreadedExecutor rebuilds its wait set (with every
    publisher's QoS-event handlers) at each call, ~4 ms for 10 vehicles, 100 times a second. ``single_threaded``:
    the classic executor (the fallback when the EventsExecutor is not available).
    """
    from rclpy.executors import SingleThreadedExecutor

    if kind == "events":
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            log.info("rclpy has no EventsExecutor: using the SingleThreadedExecutor")
        else:
            return EventsExecutor()
    return SingleThreadedExecutor()


def run_node(argv: Sequence[str]) -> int:
    """Initialise rclpy, build the node, run it until Ctrl-C / SIGTERM / shutdown; the process exit status.

    A stop signal (:mod:`mvsim_ros2.entry`) abandons the start where it is, or ends the run loop at its next tick;
    either way the node is then closed (loggers, ZMQ) and the status is 0. rclpy installs no handler of its own.
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.signals import SignalHandlerOptions

    signals = stop_signals()
    node: MvsimNode | None = None
    try:
        rclpy.init(args=list(argv), signal_handler_options=SignalHandlerOptions.NO)
        from rclpy.utilities import remove_ros_args

        plain = remove_ros_args(args=list(argv))[1:]
        node = MvsimNode.__new__(MvsimNode)  # named before __init__, so that a start cut short can still be closed
        MvsimNode.__init__(node, plain_args=plain)
        executor = make_executor(node.opts.executor)
        executor.add_node(node)
        signals.running(node.request_stop)
        node.run(executor)
        if signals.received is not None:
            node.get_logger().info(f"{signals.name}: stopping")
    except (Stopped, KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        signals.start_closing()
        if node is not None:
            node.close()
        rclpy.try_shutdown()
    return 0


class MvsimNode(Node):
    """The bridge (see the module docstring). Single-threaded: the run loop steps the world, publishes and
    serves callbacks; the optional ZMQ server runs in its own threads and locks the world per step."""

    def __init__(self, plain_args: Sequence[str] = (), *, context: Any = None,
                 parameter_overrides: list[Any] | None = None) -> None:
        """Declare the parameters, load the world, create every publisher / subscription / service, publish the
        latched topics. ``plain_args``: non-ROS command-line arguments (the first is a world file);
        ``context``/``parameter_overrides``: as for ``rclpy.node.Node`` (in-process use, tests).

        Raises:
            ConfigError, WorldFileError: bad parameters or world file.
        """
        super().__init__("mvsim", context=context, parameter_overrides=parameter_overrides,
                         automatically_declare_parameters_from_overrides=False)
        for spec in PARAMS:
            self.declare_parameter(spec.name, spec.default, _descriptor(spec))
        values = {spec.name: self.get_parameter(spec.name).value for spec in PARAMS}
        if plain_args and not values["world_file"]:
            values["world_file"] = plain_args[0]
        self.opts = Options.from_values(values)
        self._sim_time_note()
        world_path = resolve_world_file(self.opts.world_file)

        import mvsim_core as mv

        self.world = mv.load_world(world_path, seed=self.opts.seed, allow_shell=self.opts.allow_shell)
        self.world.sensors_on_demand = True  # a sensor samples while somebody reads it (a subscriber, the recorder)
        for w in self.world.warnings:
            self.get_logger().warning(w)
        self.world.start()  # bodies and sensors now, not inside the first tick
        self.world.strict = self.opts.strict
        self.world.faults.add_listener(self._on_fault)
        self.dt = self.world.timestep  # s per physics step
        self.tf_period = self.opts.period_ms_publish_tf / 1000.0
        self._next_periodic = self.world.time
        self._vehicles: list[vp.VehicleLink] = []
        self._sensors: list[SensorLink] = []
        self._commands = CommandInputs(self, self.world, self.opts)
        self._commanded = self._commands.commanded  # the same list: vehicles whose commands are active
        self._joint_commands = JointCommandInputs(self, self._commands)
        self._stop = False
        self._clock_sent = -1.0  # simulated time of the latest /clock message (s); -1 before the first
        self.comms = None
        self._zmq_server = None
        self.published = 0
        self.viewer = None if self.opts.headless else self._open_viewer()
        o = self.opts
        self.runner = Runner(self.world, realtime_factor=o.realtime_factor, tick_rate=o.simul_rate,
                             max_catchup=o.max_simul_catchup_time, viewer=self.viewer, clock=time.monotonic,
                             status=StatusLine(mode=o.status_line, extra=self._status_fields))
        self.runner.paused = o.lockstep
        self._pub_ctx = PublishContext(self.counted_publisher, self.stamp_time, self._count,
                                       self.opts.depth_image_encoding)

        self._make_world_publishers()
        for veh in self.world.vehicles.values():
            self._make_vehicle(veh)
        self.recorder = self._start_recorder() if o.record else None

        self.create_service(Trigger, "~/step", self._srv_step)
        self.runtime_objects = runtime_objects.start(self)
        self.sim_services = simulation_services.start(self)  # simulation_interfaces; None without the package
        self.sim_steps = simulate_steps.start(self)  # the SimulateSteps action; None without the package
        self.diagnostics = diagnostics.start(self)  # /diagnostics; None with diagnostics_rate 0
        self._start_zmq()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.publish_clock()  # before anything stamped with it
        self._publish_static()
        self._publish_periodic()
        self._next_periodic = self.world.time + self.tf_period
        self.world.add_step_listener(self._after_step)
        self._rebuilds_seen = self.world.rebuilds
        self.runner.reanchor()
        n_sensors = len({id(s.sensor) for s in self._sensors})  # a sensor with several outputs: once
        self.get_logger().info(
            f"world {world_path}: {len(self._vehicles)} vehicles, {n_sensors} sensors published, "
            f"timestep {self.dt * 1000:g} ms, "
            + ("lockstep (call ~/step)" if self.opts.lockstep else f"realtime factor {self.opts.realtime_factor:g}"))

    # ------------------------------------------------------------------ setup
    def _sim_time_note(self) -> None:
        if self.get_parameter("use_sim_time").value:
            self.get_logger().info("use_sim_time is true: ignored by mvsim itself, which is the /clock source; "
                                   "its stamps are simulation time anyway")

    def _open_viewer(self) -> Any:
        """The 3D viewer window on the world (mvsim_core.gui.window.Viewer), or None when there is no display or no
        window can be opened (said once in the log)."""
        from mvsim_core.gui.window import Viewer, display_available

        if not display_available():
            self.get_logger().info("no display (DISPLAY / WAYLAND_DISPLAY unset): running without the 3D viewer")
            return None
        try:
            viewer = Viewer(self.world)
        except MvsimError as e:
            self.get_logger().warning(f"cannot open the 3D viewer ({e}); running without it")
            return None
        if self.opts.gui_refresh_period > 0:
            viewer.frame_period = self.opts.gui_refresh_period / 1000.0
        return viewer

    def stamp_time(self, t: float) -> float:
        """Stamp seconds of simulated time ``t``: ``t`` itself, or wall-clock now with disable_sim_time_clock."""
        return time.time() if self.opts.disable_sim_time_clock else t

    def _make_world_publishers(self) -> None:
        from mvsim_core.elements.occupancy_grid import OccupancyGrid

        self._clock_pub = None
        if not self.opts.disable_sim_time_clock:
            self._clock_pub = self.create_publisher(Clock, "/clock", naming.qos_clock())
            self._clock_msg = Clock()
        self._grids = [e for e in self.world.elements if isinstance(e, OccupancyGrid) and e.grid is not None]
        depth = max(1, len(self._grids))
        self._map_pub = self.create_publisher(OccupancyGridMsg, "simul_map", naming.qos_latched(depth))
        self._map_meta_pub = self.create_publisher(MapMetaData, "simul_map_metadata", naming.qos_latched(depth))
        self._gt_pub, self._gt_msg = None, None  # objects_ground_truth, when asked for
        self._gt_period = 1.0 / self.opts.objects_ground_truth_rate if self.opts.objects_ground_truth_rate > 0 else 0.0
        self._next_gt = self.world.time
        if self._gt_period:
            self._gt_pub = self.create_publisher(TFMessage, "objects_ground_truth",
                                                 naming.qos_state(self.opts.publisher_history_len))
        self._all_markers_pub = None  # simul_chassis_markers: only where the vehicles' frames are distinct
        if self.world.vehicles and (self.opts.shared_tf_tree or len(self.world.vehicles) == 1):
            self._all_markers_pub = self.create_publisher(MarkerArray, naming.CHASSIS_MARKERS_ALL,
                                                          naming.qos_latched(1))

    def _make_vehicle(self, veh: Vehicle) -> None:
        o = self.opts
        prefix = naming.vehicle_prefix(veh.name, len(self.world.vehicles), o.force_publish_vehicle_namespace)
        link = vp.make_vehicle_link(self.counted_publisher, veh, prefix, o)
        self._commands.subscribe(link)
        self._joint_commands.subscribe(link)
        self._vehicles.append(link)
        for sensor in veh.sensors.values():
            self._make_sensor(link, sensor)

    def _make_sensor(self, link: vp.VehicleLink, sensor: Sensor) -> None:
        """The sensor's publishers: one link per output, from its kind's row in
        :data:`mvsim_ros2.sensor_publishers.KIND_PUBLISHERS` (the class name only names the sensor in warnings)."""
        if not type(sensor).simulated:
            self.get_logger().warning(f"sensor '{sensor.name}' ({getattr(sensor, 'xml_class', '')}) of "
                                      f"'{link.vehicle.name}' is not simulated in this build: not published")
            return
        ctx = dataclasses.replace(self._pub_ctx, frame_prefix=link.frame_prefix)
        links = sensor_links(ctx, sensor, link.prefix)
        if not links:
            self.get_logger().warning(f"sensor '{sensor.name}' of class '{getattr(sensor, 'xml_class', '')}': no "
                                      f"ROS message for it; not published")
            return
        for s in links:
            follow_audience(s)
        self._sensors.extend(links)

    def counted_publisher(self, msg_type: Any, topic: str, qos: Any) -> Any:
        """A publisher whose subscriber count is kept from its matched events (:mod:`mvsim_ros2.audience`): the
        vehicle and sensor topics, checked at every period."""
        return counted_publisher(self, msg_type, topic, qos)

    def _count(self, n: int = 1) -> None:
        self.published += n

    def _start_zmq(self) -> None:
        """Serve the world over ZMQ from this process (if enabled; :mod:`mvsim_ros2.zmq_bridge`). Whether zmq_port
        was set (command line, parameters file, overrides) is read from rclpy's overrides: its value alone cannot
        tell a port set to 23700 from the default."""
        port_set = "zmq_port" in getattr(self, "_parameter_overrides", {})
        self.comms, self._zmq_server = zmq_bridge.start(self.world, self.opts, self.get_logger(), port_set=port_set)

    def _close_zmq(self, timeout: float = 10.0) -> None:
        """Unregister the world and stop the ZMQ server (never blocking the exit for more than ``timeout`` s)."""
        comms, server = self.comms, self._zmq_server
        self.comms = self._zmq_server = None
        zmq_bridge.close(comms, server, self.get_logger(), timeout)

    # ------------------------------------------------------------------ vehicles coming and going, resets
    def sync_vehicles(self, *, publish_static: bool = True) -> None:
        """Make the vehicle publishers, subscriptions and sensor links match the world's vehicles (after
        ``World.spawn`` / ``World.remove`` / ``World.reset``): those of vehicles gone are destroyed, new vehicles
        get theirs; when anything changed (and ``publish_static``), the latched topics go out again."""
        current = {id(v) for v in self.world.vehicles.values()}
        gone = [lk for lk in self._vehicles if id(lk.vehicle) not in current]
        for link in gone:
            self._drop_vehicle(link)
        linked = {id(lk.vehicle) for lk in self._vehicles}
        new = [veh for veh in self.world.vehicles.values() if id(veh) not in linked]
        for veh in new:
            self._make_vehicle(veh)
        if (gone or new) and publish_static:
            self._publish_static()

    def follow_reset(self, *, state: bool) -> None:
        """After ``World.reset``: vehicle topics for the objects there now; with ``state``, every vehicle link's
        run state and the active commands forgotten; the run loop's schedule and the periodic topics restart from
        the new time, /clock going out first, then the latched and periodic topics."""
        self.sync_vehicles(publish_static=False)
        if state:
            for link in self._vehicles:
                link.restart()
            self._commands.clear()
        self.runner.reanchor()
        self.publish_clock()
        self._publish_static()
        self._publish_periodic()
        self._next_periodic = self.world.time + self.tf_period
        self._next_gt = self.world.time

    def _drop_vehicle(self, link: vp.VehicleLink) -> None:
        """Destroy a departed vehicle's publishers (its own, its sensors', its log topics) and command inputs."""
        veh = link.vehicle
        topics: set[str] = set()
        for s in veh.sensors.values():
            topics |= {self.resolve_topic_name(t) for t in sensor_topics(s, link.prefix)}
        pubs = [*link.pubs.values(), *link.log_pubs.values()]
        pubs += [p for p in self.publishers if p.topic_name in topics and p not in pubs]
        for p in pubs:
            self.destroy_publisher(p)
        self._commands.forget(link)
        self._vehicles.remove(link)
        sensors = {id(s) for s in veh.sensors.values()}
        for sl in self._sensors:
            if id(sl.sensor) in sensors:
                unfollow_audience(sl)
        self._sensors[:] = [sl for sl in self._sensors if id(sl.sensor) not in sensors]

    # ------------------------------------------------------------------ commands (mvsim_ros2.commands)
    def _watchdog(self, t: float) -> None:
        self._commands.watchdog(t, self.opts.base_watchdog_timeout)

    # ------------------------------------------------------------------ stepping
    def _after_step(self, world: World) -> None:
        """Step listener: publish what is new after a step (sensors, the periodic state topics) and run the
        command watchdog. When something is due, /clock at the step's time goes out first (if it has not yet), so
        that no subscriber sees a stamp ahead of /clock; a step with nothing due publishes nothing."""
        t = world.time
        if world.rebuilds != self._rebuilds_seen:  # objects added or removed (ZMQ, markers, services)
            self._rebuilds_seen = world.rebuilds
            self.sync_vehicles()
        for link in self._vehicles:
            link.note_step()
        fresh = []
        for s in self._sensors:
            obs = s.observe(s.sensor)
            if obs is not None and obs is not s.prev:
                s.prev = obs
                fresh.append((s, obs))
        periodic = t >= self._next_periodic - 1e-9
        gt_due = self._gt_pub is not None and t >= self._next_gt - 1e-9
        if (fresh or periodic or gt_due) and t != self._clock_sent:
            self.publish_clock()
        for s, obs in fresh:
            s.publish(obs)
        if gt_due:
            self._publish_ground_truth()
            while self._next_gt <= t + 1e-9:
                self._next_gt += self._gt_period
        if self._commanded:
            self._watchdog(t)
        if periodic:
            self._publish_periodic()
            while self._next_periodic <= t + 1e-9:
                self._next_periodic += self.tf_period

    def _on_fault(self, fault: Any) -> None:
        """A vehicle or block blew up and was reset (:mod:`mvsim_core.dynamics.faults`): an error in the log, for the
        faults the core reports (at most one per object per simulated second)."""
        if fault.reported:
            self.get_logger().error(fault.message())

    def _on_tick(self, steps: int) -> None:
        """After each run-loop tick: the steps of an active SimulateSteps goal, /clock when time moved and it is not
        out yet (every tick when running as fast as possible), /diagnostics when due."""
        if self.sim_steps is not None:
            steps += self.sim_steps.tick(1.0 / self.runner.tick_rate)
        if self.diagnostics is not None:
            self.diagnostics.tick()
        if ((steps and self.world.time != self._clock_sent)
                or (self.runner.realtime_factor <= 0 and not self.runner.paused)):
            self.publish_clock()

    def _should_stop(self) -> bool:
        if not self.context.ok() or self._stop:
            return True
        if self.comms is not None and self.comms.shutdown_requested.is_set():
            self.get_logger().info("shutdown requested by a ZMQ client")
            return True
        return False

    def _status_fields(self) -> str:
        dropped = self.runner.dropped
        return f"msgs {self.published}" + (f" | dropped {dropped:.2f} s" if dropped > 0 else "")

    def run(self, executor: Any) -> None:
        """The run loop (:class:`mvsim_core.runner.Runner`): ticks at ``simul_rate``, serving callbacks in between;
        closing the viewer's window stops the node."""
        reason = self.runner.run(should_stop=self._should_stop, on_tick=self._on_tick,
                                 wait=lambda t: executor.spin_once(timeout_sec=t))
        if reason == "window closed":
            self.get_logger().info("viewer window closed: stopping")

    def _srv_step(self, request: Any, response: Any) -> Any:
        if not self.opts.lockstep:
            response.success = False
            response.message = "not in lockstep mode (set the parameter lockstep:=true first)"
            return response
        self.runner.advance_to(self.world.time + self.opts.lockstep_step)
        self.publish_clock()
        response.success = True
        response.message = f"{self.world.time:.9f}"
        return response

    def _on_set_parameters(self, params: list[Any]) -> Any:
        dynamic = {s.name for s in PARAMS if s.dynamic}
        static = {s.name for s in PARAMS if not s.dynamic}
        values = {f.name: getattr(self.opts, f.name) for f in self.opts.__dataclass_fields__.values()}
        for p in params:
            if p.name in static:
                return SetParametersResult(successful=False,
                                           reason=f"{p.name} is read at start only; restart the node")
            if p.name in dynamic:
                values[p.name] = p.value
        try:
            new = Options.from_values(values)
        except ConfigError as e:
            return SetParametersResult(successful=False, reason=str(e))
        was_lockstep = self.opts.lockstep
        self.opts = new
        r = self.runner
        r.realtime_factor, r.max_catchup, r.paused = new.realtime_factor, new.max_simul_catchup_time, new.lockstep
        if was_lockstep != new.lockstep or any(p.name == "realtime_factor" for p in params):
            r.reanchor()
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ publishing
    def publish_clock(self) -> None:
        """/clock at the current simulated time (remembered in ``_clock_sent``); nothing with disable_sim_time_clock."""
        if self._clock_pub is not None:
            t = self.world.time
            cv.set_stamp(self._clock_msg.clock, t)  # one message refilled: /clock goes out at every stamped step
            self._clock_pub.publish(self._clock_msg)
            self._clock_sent = t
            self.published += 1

    def _publish_static(self) -> None:
        """Latched messages: tf_static, chassis polygon and markers per vehicle, simul_chassis_markers, simul_map(s)."""
        t = self.stamp_time(self.world.time)
        for link in self._vehicles:
            vp.publish_static(link, t)
        self._publish_all_markers(t)
        for g in self._grids:
            self._map_pub.publish(cv.occupancy_grid_msg(g.grid, self.opts.world_frame_id, t))
            self._map_meta_pub.publish(cv.map_metadata_msg(g.grid, t))

    def _publish_periodic(self) -> None:
        """odom, ground truth, tf, collision, fake localization (and changed markers, log topics) of every vehicle."""
        o = self.opts
        t = self.stamp_time(self.world.time)
        for link in self._vehicles:
            self.published += vp.publish_periodic(link, o, t)
            if o.publish_log_topics:
                self.published += vp.publish_log(link, self.world, self.counted_publisher, o.publisher_history_len)
        if any(link.markers_changed for link in self._vehicles):
            self._publish_all_markers(t)

    def _publish_ground_truth(self) -> None:
        """``objects_ground_truth``: every object's pose now (:mod:`mvsim_ros2.runtime_objects`)."""
        if self._gt_pub is None:
            return
        self._gt_msg = runtime_objects.ground_truth_msg(self.world, self.opts.world_frame_id,
                                                        self.stamp_time(self.world.time), self._gt_msg)
        self._gt_pub.publish(self._gt_msg)
        self.published += 1

    def _publish_all_markers(self, t: float) -> None:
        """``simul_chassis_markers``: every vehicle's chassis markers in one latched MarkerArray (namespaces
        ``<V>/mvsim.chassis_shape...``, each frame-locked to its vehicle's ``base_link``), for RViz configs that do
        not know the vehicles' names (rviz/mvsim.rviz)."""
        for link in self._vehicles:
            link.markers_changed = False
        if self._all_markers_pub is None:
            return
        msg = MarkerArray()
        for link in self._vehicles:
            msg.markers.extend(vp.chassis_markers(link, t, ns_prefix=f"{link.vehicle.name}/").markers)
        self._all_markers_pub.publish(msg)
        self.published += 1

    def _start_recorder(self) -> Any:
        """The MCAP recorder of the ``record`` parameter (:mod:`mvsim_core.record.mcap_recorder`), named and timed as
        this node publishes."""
        from mvsim_core.record.mcap_recorder import Recorder, RosLayout

        o = self.opts
        layout = RosLayout(world_frame=o.world_frame_id, period_tf=self.tf_period,
                           fake_localization=o.do_fake_localization, tf_odom_to_base=o.publish_tf_odom2baselink,
                           force_namespace=o.force_publish_vehicle_namespace, shared_tf_tree=o.shared_tf_tree)
        rec = Recorder(self.world, o.record, layout=layout)
        self.get_logger().info(f"recording every topic to {o.record}")
        return rec

    # ------------------------------------------------------------------ shutdown
    def request_stop(self) -> None:
        """Have the run loop end at its next tick (what SIGINT / SIGTERM do; safe from a signal handler)."""
        self._stop = True

    def close(self) -> None:
        """Stop the viewer and the ZMQ interface, close CSV loggers and destroy the node. Idempotent, and safe after
        a start cut short by a signal (only what was built is closed)."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        world = getattr(self, "world", None)
        if world is not None:
            world.remove_step_listener(self._after_step)
            world.faults.remove_listener(self._on_fault)
        viewer = getattr(self, "viewer", None)
        if viewer is not None:
            viewer.close()
            self.viewer = None
        if hasattr(self, "comms"):
            self._close_zmq()
        for part in (getattr(self, "sim_steps", None), getattr(self, "diagnostics", None)):
            if part is not None:
                part.close()
        recorder = getattr(self, "recorder", None)
        if recorder is not None:
            recorder.close()
            self.get_logger().info(f"recorded {recorder.writer.message_count} messages to {self.opts.record}")
        if world is not None:
            for v in world.vehicles.values():
                if getattr(v, "logger", None) is not None:
                    v.logger.close()
        try:
            self.destroy_node()
        except AttributeError:  # rclpy's Node.__init__ itself was cut short: no ROS node to destroy
            pass


def _descriptor(spec: ParamSpec) -> Any:

    return ParameterDescriptor(description=spec.description, dynamic_typing=True)


USAGE = usage()


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point ``mvsim_node``; returns the exit status (2 for bad parameters or a bad world file)."""
    args = list(sys.argv if argv is None else argv)
    plain = args[1:args.index("--ros-args")] if "--ros-args" in args else args[1:]
    if any(a in ("-h", "--help") for a in plain):
        print(USAGE)
        return 0
    if ROS_IMPORT_ERROR is not None:
        e = ROS_IMPORT_ERROR
        print(f"mvsim_node: ROS 2 is not available ({e}); run `make setup` (PyPI wheels into .venv) or source a "
              f"ROS 2 installation", file=sys.stderr)
        return 2
    import faulthandler
    import signal

    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 <pid>` prints every thread's stack (diagnosing a stuck node)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        return run_node(args)
    except MvsimError as e:
        print(f"mvsim_node: {e}", file=sys.stderr, flush=True)
        return 2
    except Stopped:  # a signal while the error above was on its way
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
