"""The ``simulation_interfaces`` services of the node (ros-simulation/simulation_interfaces 2.x, the cross-simulator
standard), named as other simulators name them, under the node's namespace (``/mvsim/...`` by default):

===========================  =====================  =============================================================
service                      type                   what it does here
===========================  =====================  =============================================================
``get_simulator_features``   GetSimulatorFeatures   the features below, spawn format ``mvsim``
``get_entities``             GetEntities            vehicles, blocks (walls included) and actors; filters: name
                                                    regex (Python ``re.search``), categories, sphere bounds
``get_entity_info``          GetEntityInfo          category (vehicle: robot; block: static / dynamic object;
                                                    actor: human) and a one-line description
``get_entity_state``         GetEntityState         ground-truth pose and twist in the world frame, sim-time stamp
``get_entities_states``      GetEntitiesStates      the same for every entity the filters pass
``set_entity_state``         SetEntityState         teleport (x, y, yaw) and/or set the velocity (world frame)
``spawn_entity``             SpawnEntity            a ``<vehicle>``, ``<block>`` or ``<actor>`` written as in world
``spawn_entities``           SpawnEntities          files (resource string, or a file by path or ``file://`` URI)
``delete_entity``            DeleteEntity           remove it (a vehicle's topics go too)
``reset_simulation``         ResetSimulation        ``World.reset`` by scope: TIME, STATE, SPAWNED, or all of them
``step_simulation``          StepSimulation         exactly N physics steps, only while paused
``get_simulation_state``     GetSimulationState     playing / paused / stopped
``set_simulation_state``     SetSimulationState     play, pause (the ``lockstep`` parameter), stop (reset + pause),
                                                    quit (the node exits cleanly)
``get_spawnables``           GetSpawnables          the world's vehicle, block and actor classes
                                                    (:mod:`mvsim_ros2.spawnables`): resource string
                                                    ``<vehicle class="NAME"/>``, description, box at the origin
``get_entity_bounds``        GetEntityBounds        the entity's box (TYPE_BOX) in its own frame (x forward, z up,
                                                    origin at its reference point on the ground; ``points[0]`` the
                                                    upper corner, ``points[1]`` the lower one), m: its chassis and
                                                    wheels (vehicle), prism (block), cylinder (actor)
===========================  =====================  =============================================================

Plus the SimulateSteps action (``simulate_steps``, :mod:`mvsim_ros2.simulate_steps`).

Names: each service is served twice, as ``~/<name>`` and as ``<name>`` in the node's namespace (``/get_entities``
for a node in the root namespace): upstream MVSim's node serves its simulation_interfaces services under the
relative names, so clients written for it find them here too; the same handler answers both.

Frames and units: poses and twists are ground truth in the world frame (``world_frame_id``, ``map`` by default; an
empty ``frame_id`` means it too), metres, radians, m/s, rad/s; stamps are simulated time. The simulator is planar: a
pose sets x, y and yaw (z, pitch and roll follow the ground), a twist sets linear x, y and angular z; accelerations are
neither measured (zeros) nor set. A NaN or infinite value in any field of a pose or twist, or a position beyond ±1e9 m
(:data:`mvsim_core.dynamics.command_limits.MAX_POSITION`), is refused with a message naming the field; a twist beyond
the object's limits is clamped (``World.set_velocity``) and said once per entity and field.

Pause: the node's ``lockstep`` parameter is the pause switch (``SetSimulationState`` sets it, so ``ros2 param get``
agrees, and ``/mvsim/step`` keeps working); ``STATE_STOPPED`` is "paused at time 0 after a full reset".

Callbacks run in the node's executor between steps and hold the World's ``step_guard`` while they read or change it.
Without the ``simulation_interfaces`` package (a ROS install without it) the node runs without these services and says
so once in its log.
"""

from __future__ import annotations

import math
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from mvsim_core.dynamics.command_limits import MAX_POSITION
from mvsim_core.errors import MvsimError, WorldFileError
from mvsim_core.objects.block import Block
from mvsim_core.objects.vehicles.base import Vehicle
from mvsim_ros2 import conversions as cv

try:
    from simulation_interfaces import msg as si_msg
    from simulation_interfaces import srv as si_srv

    IMPORT_ERROR: ImportError | None = None
except ImportError as _e:  # pragma: no cover - a ROS install without the package
    IMPORT_ERROR = _e

POSE_FIELDS = ("position.x", "position.y", "position.z", "orientation.x", "orientation.y", "orientation.z",
               "orientation.w")
TWIST_FIELDS = ("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z")
MAX_STEPS = 10_000_000
"""Most physics steps one StepSimulation call may ask for (the node serves nothing else meanwhile)."""
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*$")
"""Valid entity names: a vehicle's name becomes a topic prefix, so ROS 2 topic-name rules."""
FOREIGN_FORMATS = {"robot": "URDF", "sdf": "SDFormat", "mujoco": "MJCF", "model": "SDFormat", "COLLADA": "COLLADA"}
"""Root tags of formats other simulators spawn, answered with UNSUPPORTED_FORMAT."""
SPAWN_FORMAT = "mvsim"
"""Fields of :class:`mvsim_ros2.vehicle_publishers.VehicleLink` that follow the run (set back to their defaults by a
reset of the state); the others are publishers, subscriptions and reused messages."""


def start(node: Any) -> SimulationServices | None:
    """The services on ``node`` (an :class:`mvsim_ros2.node.MvsimNode`), or None (logged at info level) when the
    ``simulation_interfaces`` package is not installed."""
    if IMPORT_ERROR is not None:
        node.get_logger().info(f"simulation_interfaces is not installed ({IMPORT_ERROR}): its services "
                               f"(~/get_entities, ~/reset_simulation, ...) are off")
        return None
    return SimulationServices(node)


class SimulationServices:
    """The services (see the module docstring) on one node.

    Args:
        node: the bridge node: its ``world``, ``runner``, ``opts`` and its vehicle publishers are what the services
            act on.
    """

    def __init__(self, node: Any) -> None:
        self.node = node
        self.world = node.world
        self._stopped = False  # SetSimulationState(STOPPED) and nothing since but pausing
        self._clamped: set[tuple[str, str]] = set()  # (entity, twist field) clamped and said
        self.errors = 0
        """Internal errors answered so far (``/diagnostics`` reports them)."""
        self._spawnables: list[Any] | None = None  # the world's classes, measured once (:mod:`spawnables`)
        srv = si_srv
        table: list[tuple[Any, str, Callable[[Any, Any], Any]]] = [
            (srv.GetSimulatorFeatures, "get_simulator_features", self.get_simulator_features),
            (srv.GetEntities, "get_entities", self.get_entities),
            (srv.GetEntityInfo, "get_entity_info", self.get_entity_info),
            (srv.GetEntityState, "get_entity_state", self.get_entity_state),
            (srv.GetEntitiesStates, "get_entities_states", self.get_entities_states),
            (srv.SetEntityState, "set_entity_state", self.set_entity_state),
            (srv.SpawnEntity, "spawn_entity", self.spawn_entity),
            (srv.SpawnEntities, "spawn_entities", self.spawn_entities),
            (srv.DeleteEntity, "delete_entity", self.delete_entity),
            (srv.ResetSimulation, "reset_simulation", self.reset_simulation),
            (srv.StepSimulation, "step_simulation", self.step_simulation),
            (srv.GetSimulationState, "get_simulation_state", self.get_simulation_state),
            (srv.SetSimulationState, "set_simulation_state", self.set_simulation_state),
            (srv.GetSpawnables, "get_spawnables", self.get_spawnables),
            (srv.GetEntityBounds, "get_entity_bounds", self.get_entity_bounds),
        ]
        self.services = [node.create_service(t, served, handler)
                         for t, name, fn in table
                         for handler in [self._safe(name, fn)]
                         for served in (f"~/{name}", name)]

    def _safe(self, name: str, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """``fn`` answering OPERATION_FAILED (and logging) instead of raising: an exception must not stop the
        executor, which is the node's run loop."""
        def call(request: Any, response: Any) -> Any:
            try:
                return fn(request, response)
            except MvsimError as e:
                _set(response.result, si_msg.Result.RESULT_OPERATION_FAILED, str(e))
            except Exception as e:  # noqa: BLE001 - the service boundary: report, keep the node alive
                self.errors += 1
                self.node.get_logger().error(f"~/{name}: {e}\n{traceback.format_exc()}")
                _set(response.result, si_msg.Result.RESULT_OPERATION_FAILED, f"internal error: {e}")
            return response
        return call

    @contextmanager
    def _guard(self) -> Iterator[None]:
        with self.world.step_guard or nullcontext():
            yield

    # ------------------------------------------------------------------ features
    def get_simulator_features(self, request: Any, response: Any) -> Any:
        F = si_msg.SimulatorFeatures
        response.features.features = [
            F.SPAWNING, F.DELETING, F.ENTITY_CATEGORIES, F.SPAWNING_RESOURCE_STRING, F.ENTITY_STATE_GETTING,
            F.ENTITY_STATE_SETTING, F.ENTITY_INFO_GETTING, F.SIMULATION_RESET, F.SIMULATION_RESET_TIME,
            F.SIMULATION_RESET_STATE, F.SIMULATION_RESET_SPAWNED, F.SIMULATION_STATE_GETTING,
            F.SIMULATION_STATE_SETTING, F.SIMULATION_STATE_PAUSE, F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE,
            F.SPAWNING_ENTITIES, F.SPAWNABLES, F.ENTITY_BOUNDS, F.STEP_SIMULATION_ACTION]
        response.features.spawn_formats = [SPAWN_FORMAT]
        response.features.custom_info = (
            "mvsim_ros2: spawn takes a <vehicle>, <block> or <actor> element written as in MVSim world files (the "
            "world's classes apply); poses are planar (x, y, yaw), twists (vx, vy, wz), world frame; entity filters: "
            "name regex, categories, sphere bounds. See the README section 'simulation_interfaces'.")
        return response

    # ------------------------------------------------------------------ entities
    def _entity(self, name: str) -> Any:
        w = self.world
        return w.vehicles.get(name) or w.blocks.get(name) or w.actors.get(name)

    def _filtered(self, filters: Any, result: Any) -> list[str] | None:
        """Names of the entities passing ``filters`` (EntityFilters), or None with ``result`` set to the error."""
        R = si_msg.Result
        rx = None
        if filters.filter:
            try:
                rx = re.compile(filters.filter)
            except re.error as e:
                _set(result, R.RESULT_OPERATION_FAILED, f"bad regular expression '{filters.filter}': {e}")
                return None
        if filters.tags.tags:
            _set(result, R.RESULT_FEATURE_UNSUPPORTED, "entity tags are not supported (no entity has tags)")
            return None
        bounds = filters.bounds
        B = si_msg.Bounds
        sphere = None
        if bounds.type == B.TYPE_SPHERE:
            if len(bounds.points) < 2:
                _set(result, R.RESULT_OPERATION_FAILED, "sphere bounds need two points: the centre, then (radius, "
                                                        "0, 0)")
                return None
            c = bounds.points[0]
            sphere = (c.x, c.y, c.z, bounds.points[1].x)
        elif bounds.type != B.TYPE_EMPTY:
            _set(result, R.RESULT_FEATURE_UNSUPPORTED, "only sphere bounds (TYPE_SPHERE) filter entities here")
            return None
        cats = {c.category for c in filters.categories}
        out = []
        for name in self.world.object_names():
            obj = self._entity(name)
            if rx is not None and not rx.search(name):
                continue
            if cats and _category(obj) not in cats:
                continue
            if sphere is not None:
                x, y, z = obj.pose[:3]
                cx, cy, cz, r = sphere
                if math.dist((x, y, z), (cx, cy, cz)) > r + _radius(obj):
                    continue
            out.append(name)
        _set(result, R.RESULT_OK)
        return out

    def get_entities(self, request: Any, response: Any) -> Any:
        with self._guard():
            names = self._filtered(request.filters, response.result)
        if names is not None:
            response.entities = names
        return response

    def get_entity_info(self, request: Any, response: Any) -> Any:
        obj = self._entity(request.entity)
        if obj is None:
            return self._not_found(response, request.entity)
        response.info.category.category = _category(obj)
        response.info.description = obj.summary() if isinstance(obj, (Vehicle, Block)) else f"actor {obj.name}"
        _set(response.result, si_msg.Result.RESULT_OK)
        return response

    def _fill_state(self, state: Any, name: str) -> None:
        """EntityState of ``name``: pose and twist in the world frame, stamped with the simulated time."""
        w, node = self.world, self.node
        state.header.frame_id = node.opts.world_frame_id
        cv.set_stamp(state.header.stamp, node.stamp_time(w.time))
        cv.set_pose(state.pose, self._entity(name).pose)
        vx, vy, wz = w.velocity(name)
        t = state.twist
        t.linear.x, t.linear.y, t.linear.z = vx, vy, 0.0
        t.angular.x, t.angular.y, t.angular.z = 0.0, 0.0, wz

    def get_entity_state(self, request: Any, response: Any) -> Any:
        with self._guard():
            if self._entity(request.entity) is None:
                return self._not_found(response, request.entity)
            self._fill_state(response.state, request.entity)
        _set(response.result, si_msg.Result.RESULT_OK)
        return response

    def get_entities_states(self, request: Any, response: Any) -> Any:
        with self._guard():
            names = self._filtered(request.filters, response.result)
            if names is None:
                return response
            states = []
            for n in names:
                st = si_msg.EntityState()
                self._fill_state(st, n)
                states.append(st)
        response.entities, response.states = names, states
        return response

    def set_entity_state(self, request: Any, response: Any) -> Any:
        R = si_msg.Result
        name, st = request.entity, request.state
        if self._entity(name) is None:
            return self._not_found(response, name)
        frame = st.header.frame_id
        if frame not in ("", self.node.opts.world_frame_id):
            return _answer(response, R.RESULT_OPERATION_FAILED,
                           f"frame '{frame}' is not supported: states are in the world frame "
                           f"'{self.node.opts.world_frame_id}' (or leave frame_id empty)")
        pose = None
        if request.set_pose:
            pose, problem = _planar_pose(st.pose, "state.pose")
            if pose is None:
                return _answer(response, si_srv.SetEntityState.Response.INVALID_POSE, f"{problem}; nothing changed")
        twist = None
        if request.set_twist:
            t = st.twist
            for field in TWIST_FIELDS:
                v = _field(t, field)
                if not math.isfinite(v):
                    return _answer(response, R.RESULT_OPERATION_FAILED,
                                   f"state.twist.{field} is {v}; it must be a finite number; nothing changed")
            twist = (t.linear.x, t.linear.y, t.angular.z)
        with self._guard():
            if twist is not None and (twist[0] or twist[1] or twist[2]) and not self.world.can_move(name):
                return _answer(response, R.RESULT_OPERATION_FAILED,
                               f"'{name}' is static (a static or intangible block, or an actor): it cannot be given "
                               f"a non-zero twist")
            if pose is not None:
                self.world.set_pose(name, *pose)
            if twist is not None:
                done = self.world.set_velocity(name, *twist)  # clamped to the object's limits
                self._say_clamped(name, twist, done)
        return _answer(response, R.RESULT_OK)

    def _say_clamped(self, name: str, asked: tuple[float, float, float], done: tuple[float, float, float]) -> None:
        """Warn once per entity and field about a twist value clamped to the entity's limits."""
        for field, a, d, unit in zip(("linear.x", "linear.y", "angular.z"), asked, done, ("m/s", "m/s", "rad/s"),
                                     strict=True):
            key = (name, field)
            if a != d and key not in self._clamped:
                self._clamped.add(key)
                self.node.get_logger().warning(
                    f"~/set_entity_state: '{name}' state.twist.{field} = {a:g} {unit} is beyond its limit; clamped "
                    f"to {d:g} {unit} (said once per entity and field)")

    def get_entity_bounds(self, request: Any, response: Any) -> Any:
        obj = self._entity(request.entity)
        if obj is None:
            return self._not_found(response, request.entity)
        with self._guard():
            e = obj.extent((0.0,) * 6)
        _box(response.bounds, e)
        return _answer(response, si_msg.Result.RESULT_OK)

    def get_spawnables(self, request: Any, response: Any) -> Any:
        from mvsim_ros2.spawnables import catalogue

        if self._spawnables is None:
            with self._guard():
                self._spawnables = catalogue(self.world)
        out = []
        for item in self._spawnables:
            sp = si_msg.Spawnable()
            sp.entity_resource.resource_string = item.resource
            sp.description = f"{item.description} (defined at {item.where})"
            if item.extent is not None:
                _box(sp.spawn_bounds, item.extent)
            out.append(sp)
        response.spawnables = out
        message = ""
        if request.sources:
            message = (f"sources not searched: {', '.join(request.sources)} (the spawnables are the world's own "
                       f"classes)")
        return _answer(response, si_msg.Result.RESULT_OK, message)

    # ------------------------------------------------------------------ spawning
    def spawn_entity(self, request: Any, response: Any) -> Any:
        code, message, name = self._spawn(request)
        _set(response.result, code, message)
        response.entity_name = name
        return response

    def spawn_entities(self, request: Any, response: Any) -> Any:
        results = []
        for req in request.spawn_requests:
            try:
                code, message, name = self._spawn(req)
            except MvsimError as e:
                code, message, name = si_msg.Result.RESULT_OPERATION_FAILED, str(e), ""
            r = si_msg.SpawnResult()
            _set(r.result, code, message)
            r.entity_name = name
            results.append(r)
        response.results = results
        failed = [r for r in results if r.result.result != si_msg.Result.RESULT_OK]
        if failed:
            _set(response.result, si_srv.SpawnEntities.Response.ENTITIES_SPAWN_FAILED,
                 f"{len(failed)} of {len(results)} spawn requests failed (see results)")
        else:
            _set(response.result, si_msg.Result.RESULT_OK)
        return response

    def _spawn(self, req: Any) -> tuple[int, str, str]:
        """One SpawnEntity request (also an item of SpawnEntities): (result code, message, entity name)."""
        try:
            obj = self._spawn_object(req)
        except _Refused as e:
            return (e.code, e.message, "")
        self.node.sync_vehicles()
        self.node.get_logger().info(f"spawned '{obj.name}' at ({obj.pose[0]:.3f}, {obj.pose[1]:.3f})")
        return (si_msg.Result.RESULT_OK, "", obj.name)

    def _spawn_object(self, req: Any) -> Any:
        """Check, build and add the object of one request; raises :class:`_Refused` with the spec's code."""
        R, S = si_msg.Result, si_srv.SpawnEntity.Response
        w, opts = self.world, self.node.opts
        if req.entity_namespace:
            raise _Refused(R.RESULT_FEATURE_UNSUPPORTED, "entity_namespace is not supported: a vehicle's topics go "
                                                         "under its name")
        text, source = _resource(req.entity_resource)
        foreign = _foreign_format(text)
        if foreign:
            raise _Refused(S.UNSUPPORTED_FORMAT, f"{foreign} is not spawned here; write a <vehicle>, <block> or "
                                                 f"<actor> as in MVSim world files (spawn format '{SPAWN_FORMAT}')")
        frame = req.initial_pose.header.frame_id
        if frame not in ("", opts.world_frame_id):
            raise _Refused(S.INVALID_POSE, f"initial_pose frame '{frame}' is not supported: use the world frame "
                                           f"'{opts.world_frame_id}' (or leave it empty)")
        pose, problem = _planar_pose(req.initial_pose.pose, "initial_pose.pose")
        if pose is None:
            raise _Refused(S.INVALID_POSE, problem)
        default = _is_identity(req.initial_pose.pose)  # the message's default: the text's <init_pose> wins
        taken = set(w.object_names())
        name = _checked_name(req.name, taken, req.allow_renaming) if req.name else None
        parse = w.object_parser
        if parse is None:
            raise _Refused(R.RESULT_OPERATION_FAILED, "this world reads no XML")

        def build(as_name: str | None) -> Any:
            return parse(w, text, name=as_name, pose=None if default else pose,
                         default_pose=pose if default else None, source=source, allow_shell=bool(opts.allow_shell))

        with self._guard():
            try:
                obj = build(name)
                if name is None:
                    if (obj.node is None or "name" not in obj.node.attrs) and not req.allow_renaming:
                        raise _Refused(S.NAME_INVALID, "no name: give one in the request or the element's "
                                                       "name=\"...\" (or set allow_renaming)")
                    fixed = _checked_name(obj.name, taken, req.allow_renaming)
                    if fixed != obj.name:
                        obj = build(fixed)
            except WorldFileError as e:
                raise _Refused(S.RESOURCE_PARSE_ERROR, str(e)) from None
            w.spawn(obj)
        return obj

    def delete_entity(self, request: Any, response: Any) -> Any:
        name = request.entity
        if self._entity(name) is None:
            return self._not_found(response, name)
        with self._guard():
            self.world.remove(name)
        self.node.sync_vehicles()
        self.node.get_logger().info(f"deleted '{name}'")
        return _answer(response, si_msg.Result.RESULT_OK)

    # ------------------------------------------------------------------ the simulation
    def reset_simulation(self, request: Any, response: Any) -> Any:
        Q = si_srv.ResetSimulation.Request
        scope = request.scope
        if scope in (Q.SCOPE_DEFAULT, Q.SCOPE_ALL):
            scope = Q.SCOPE_TIME | Q.SCOPE_STATE | Q.SCOPE_SPAWNED
        elif scope & ~(Q.SCOPE_TIME | Q.SCOPE_STATE | Q.SCOPE_SPAWNED):
            return _answer(response, si_msg.Result.RESULT_FEATURE_UNSUPPORTED,
                           f"scope {scope} has unknown bits; scopes: TIME 1, STATE 2, SPAWNED 4, ALL 255")
        self._reset(time=bool(scope & Q.SCOPE_TIME), state=bool(scope & Q.SCOPE_STATE),
                    objects=bool(scope & Q.SCOPE_SPAWNED))
        return _answer(response, si_msg.Result.RESULT_OK)

    def _reset(self, *, time: bool = True, state: bool = True, objects: bool = True) -> None:
        """``World.reset``, then the node follows (:meth:`MvsimNode.follow_reset`): vehicle topics for the objects
        there now, commands forgotten (state), schedule and periodic topics restarted, /clock first."""
        with self._guard():
            self.world.reset(objects=objects, state=state, time=time)
        self.node.follow_reset(state=state)
        self.node.get_logger().info(f"simulation reset (time: {time}, state: {state}, spawned: {objects}); "
                                    f"t = {self.world.time:g} s")

    def step_simulation(self, request: Any, response: Any) -> Any:
        R = si_msg.Result
        n = int(request.steps)
        if not self.node.runner.paused:
            return _answer(response, R.RESULT_OPERATION_FAILED, "the simulation is not paused: pause it first "
                                                                "(SetSimulationState STATE_PAUSED, or lockstep:=true)")
        if n > MAX_STEPS:
            return _answer(response, R.RESULT_OPERATION_FAILED, f"at most {MAX_STEPS} steps per call (asked {n})")
        self.node.runner.step(n)
        if n:
            self._stopped = False
            self.node.publish_clock()  # as ~/step does: /clock at the time reached
        return _answer(response, R.RESULT_OK)

    def _state(self) -> int:
        S = si_msg.SimulationState
        if not self.node.runner.paused:
            return S.STATE_PLAYING
        return S.STATE_STOPPED if self._stopped and self.world.time == 0.0 else S.STATE_PAUSED

    def get_simulation_state(self, request: Any, response: Any) -> Any:
        response.state.state = self._state()
        return _answer(response, si_msg.Result.RESULT_OK)

    def set_simulation_state(self, request: Any, response: Any) -> Any:
        S, R = si_msg.SimulationState, si_msg.Result
        C = si_srv.SetSimulationState.Response
        target, now = request.state.state, self._state()
        if target == now:
            return _answer(response, C.ALREADY_IN_TARGET_STATE, "")
        if target == S.STATE_PLAYING:
            self._stopped = False
            return self._set_paused(response, False)
        if target == S.STATE_PAUSED:
            self._stopped = False
            return self._set_paused(response, True)
        if target == S.STATE_STOPPED:
            self._set_paused(response, True)
            if response.result.result != R.RESULT_OK:
                return response
            self._reset()
            self._stopped = True
            return response
        if target == S.STATE_QUITTING:
            self.node.get_logger().info("SetSimulationState(STATE_QUITTING): shutting down")
            self.node.request_stop()
            return _answer(response, R.RESULT_OK)
        if target in (S.STATE_NO_WORLD, S.STATE_LOADING_WORLD):
            return _answer(response, R.RESULT_FEATURE_UNSUPPORTED, "worlds are not loaded or unloaded at run time")
        return _answer(response, C.INCORRECT_TRANSITION, f"unknown state {target}")

    def _set_paused(self, response: Any, paused: bool) -> Any:
        """Pause or play through the ``lockstep`` parameter (its callback updates the runner)."""
        from rclpy.parameter import Parameter

        if self.node.runner.paused != paused:
            res = self.node.set_parameters([Parameter("lockstep", value=paused)])[0]
            if not res.successful:
                return _answer(response, si_srv.SetSimulationState.Response.STATE_TRANSITION_ERROR, res.reason)
        return _answer(response, si_msg.Result.RESULT_OK)

    def _not_found(self, response: Any, name: str) -> Any:
        names = self.world.object_names()
        shown = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
        return _answer(response, si_msg.Result.RESULT_NOT_FOUND, f"no entity named '{name}'; entities: {shown}")


# ---------------------------------------------------------------------- helpers
class _Refused(Exception):
    """A spawn request answered with ``code`` (a Result or SpawnEntity code) and ``message``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _resource(res: Any) -> tuple[str, Path | None]:
    """(text, file it came from) of a simulation_interfaces/Resource: ``uri`` (a path or a ``file://`` URI) when
    given, else ``resource_string``."""
    S = si_srv.SpawnEntity.Response
    if not res.uri:
        if not res.resource_string:
            raise _Refused(S.NO_RESOURCE, "both uri and resource_string are empty")
        return (res.resource_string, None)
    u = urlparse(res.uri)
    if u.scheme not in ("", "file"):
        raise _Refused(S.UNSUPPORTED_FORMAT, f"uri scheme '{u.scheme}://' is not supported: give a file path or a "
                                             f"file:// URI")
    path = Path(unquote(u.path) if u.scheme == "file" else res.uri).expanduser()
    try:
        return (path.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError) as e:
        raise _Refused(S.RESOURCE_PARSE_ERROR, f"cannot read {path}: {e}") from None


def _checked_name(name: str, taken: set[str], allow_renaming: bool) -> str:
    """``name`` if valid and free; a free variant of it when taken and renaming is allowed; else :class:`_Refused`
    (NAME_INVALID, NAME_NOT_UNIQUE)."""
    S = si_srv.SpawnEntity.Response
    if not NAME.match(name):
        raise _Refused(S.NAME_INVALID, f"name '{name}' is not valid: letters, digits and '_', starting with a "
                                       f"letter (it becomes a topic prefix)")
    if name not in taken:
        return name
    if not allow_renaming:
        raise _Refused(S.NAME_NOT_UNIQUE, f"an entity named '{name}' exists (set allow_renaming to get a new name)")
    return _free_name(name, taken)


def _set(result: Any, code: int, message: str = "") -> None:
    result.result = code
    result.error_message = message


def _answer(response: Any, code: int, message: str = "") -> Any:
    _set(response.result, code, message)
    return response


def _box(bounds: Any, e: Any) -> None:
    """Fill a simulation_interfaces/Bounds with the Extent ``e`` as TYPE_BOX: the upper corner, then the lower."""
    from geometry_msgs.msg import Vector3

    bounds.type = si_msg.Bounds.TYPE_BOX
    bounds.points = [Vector3(x=e.x_max, y=e.y_max, z=e.z_max), Vector3(x=e.x_min, y=e.y_min, z=e.z_min)]


def _category(obj: Any) -> int:
    """EntityCategory of an object: vehicles are robots, blocks static or dynamic objects, actors humans."""
    C = si_msg.EntityCategory
    if isinstance(obj, Vehicle):
        return C.CATEGORY_ROBOT
    if isinstance(obj, Block):
        return C.CATEGORY_STATIC_OBJECT if obj.is_static or obj.is_intangible else C.CATEGORY_DYNAMIC_OBJECT
    return C.CATEGORY_HUMAN


def _radius(obj: Any) -> float:
    """Largest distance (m) of the object's outline from its reference point: footprint, chassis or actor radius."""
    import numpy as np

    if isinstance(obj, Vehicle):
        fp = np.asarray(obj.chassis.footprint, dtype=float).reshape(-1, 2)
    elif isinstance(obj, Block):
        fp = np.asarray(obj.footprint, dtype=float).reshape(-1, 2)
    else:
        return float(obj.params["collision_radius"])
    return float(np.hypot(fp[:, 0], fp[:, 1]).max()) if len(fp) else 0.0


def _field(msg: Any, path: str) -> float:
    """The value at a dotted ``path`` of a message (``linear.x``)."""
    for part in path.split("."):
        msg = getattr(msg, part)
    return float(msg)


def _planar_pose(p: Any, what: str) -> tuple[tuple[float, float, float] | None, str]:
    """((x, y, yaw), "") of a geometry_msgs/Pose (quaternion normalised), or (None, what is wrong) for a NaN/inf
    value, a position beyond ±1e9 m (``MAX_POSITION``; z too, though it follows the ground) or a (near) zero
    quaternion; ``what`` names the pose in the message (``state.pose``)."""
    for field in POSE_FIELDS:
        v = _field(p, field)
        if not math.isfinite(v):
            return None, f"{what}.{field} is {v}; it must be a finite number"
        if field.startswith("position") and abs(v) > MAX_POSITION:
            return None, f"{what}.{field} = {v:g} m is beyond ±{MAX_POSITION:g} m"
    q = p.orientation
    scale = max(abs(q.x), abs(q.y), abs(q.z), abs(q.w))  # huge components: normalised without overflowing
    n = math.sqrt(sum((c / scale) ** 2 for c in (q.x, q.y, q.z, q.w))) * scale if scale > 0 else 0.0
    if n < 1e-9:
        return None, f"{what}.orientation is a zero quaternion"
    x, y, z, w = q.x / n, q.y / n, q.z / n, q.w / n
    return (p.position.x, p.position.y, math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))), ""


def _is_identity(p: Any) -> bool:
    """Whether a Pose is the message default (origin, identity quaternion)."""
    q, t = p.orientation, p.position
    return (t.x, t.y, t.z, q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def _free_name(base: str, taken: set[str]) -> str:
    """``base_1``, ``base_2``, ...: the first not in ``taken``."""
    k = 1
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def _foreign_format(text: str) -> str:
    """The name of the format if ``text``'s root element is one other simulators spawn (URDF, SDFormat, MJCF,
    COLLADA), else ""."""
    m = re.search(r"<\s*([A-Za-z_][\w:.-]*)", re.sub(r"<\?.*?\?>|<!--.*?-->|<!.*?>", "", text, flags=re.S))
    return FOREIGN_FORMATS.get(m.group(1), "") if m else ""


