"""The simulation_interfaces services across processes: the node as a subprocess, called by a probe node over DDS,
each effect checked in numbers.

World ``data/siminf.world.xml`` (10 ms steps): r1 (twist_ideal) at the origin facing +x with a noiseless lidar 0.2 m
ahead, whose middle ray meets the static 1 m block box1 (centred at (4, 0)) at 3.3 m; r2 (twist_pid) at (0, -6); a
dynamic block "pallet" at (-4, 4); an actor "walker" at (-5, -5); a vehicle class "bot". The node starts paused
(``lockstep``); one node serves the whole module, and each test first puts the simulation in the state it needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import (
    Clock,
    LaserScan,
    NodeProcess,
    Odometry,
    Probe,
    Trigger,
    Twist,
    node_fixture,
    qos,
    qos_profile_sensor_data,
    secs,
    yaw_of,
)

si_srv = pytest.importorskip("simulation_interfaces.srv", reason="simulation_interfaces is not built (run `make setup` "
                                                                 "with ../shared/third_party present)")
si_msg = pytest.importorskip("simulation_interfaces.msg")

DATA = Path(__file__).resolve().parent / "data"
DT = 0.01  # s: the world's timestep
LIDAR_X = 0.2  # m: r1's lidar ahead of its reference point
INITIAL = {"r1": (0.0, 0.0, 0.0), "r2": (0.0, -6.0, 0.0), "box1": (4.0, 0.0, 0.0), "pallet": (-4.0, 4.0, 0.0),
           "walker": (-5.0, -5.0, 0.0)}  # x, y, yaw
R = si_msg.Result
S = si_msg.SimulationState

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"lockstep": True, "lockstep_step": 0.1}
    yield from node_fixture(DATA / "siminf.world.xml", params, tmp_path_factory.mktemp("siminf"), ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_siminf")
    p.watch = node
    p.subscribe(Clock, "/clock", qos(reliable=False, depth=100))
    p.subscribe(LaserScan, "/r1/laser1", qos_profile_sensor_data)
    yield p
    p.close()


# ---------------------------------------------------------------------- helpers
def call(probe: Probe, service: str, srv: Any, /, **fields: Any) -> Any:
    """Call ``/mvsim/<service>`` with a request of type ``srv`` holding ``fields``."""
    req = srv.Request()
    for k, v in fields.items():
        setattr(req, k, v)
    return probe.call(srv, f"/mvsim/{service}", req)


def ok(ans: Any) -> Any:
    assert ans.result.result == R.RESULT_OK, ans.result.error_message
    return ans


def reset(probe: Probe, scope: int = 0) -> None:
    ok(call(probe, "reset_simulation", si_srv.ResetSimulation, scope=scope))


def pause(probe: Probe) -> None:
    ans = call(probe, "set_simulation_state", si_srv.SetSimulationState,
               state=si_msg.SimulationState(state=S.STATE_PAUSED))
    assert ans.result.result in (R.RESULT_OK, si_srv.SetSimulationState.Response.ALREADY_IN_TARGET_STATE)


def steps(probe: Probe, n: int) -> None:
    ok(call(probe, "step_simulation", si_srv.StepSimulation, steps=n))


def state_of(probe: Probe, name: str) -> Any:
    return ok(call(probe, "get_entity_state", si_srv.GetEntityState, entity=name)).state


def planar(st: Any) -> tuple[float, float, float]:
    return (st.pose.position.x, st.pose.position.y, yaw_of(st.pose.orientation))


def clock_now(probe: Probe, t: float) -> Clock:
    """The /clock message at simulated time ``t`` (waiting for it)."""
    return probe.next_message(probe.inbox["/clock"], lambda m: abs(secs(m.clock) - t) < 1e-9, what=f"/clock {t}",
                              start=0)


def middle_range(probe: Probe, after: float) -> float:
    """r1's middle lidar ray of the first scan stamped after ``after`` s (stepping until there is one)."""
    box = probe.inbox["/r1/laser1"]
    for _ in range(20):
        steps(probe, 5)
        newer = [m for m in box if secs(m.header.stamp) > after + 1e-9]
        if newer:
            return float(newer[-1].ranges[len(newer[-1].ranges) // 2])
        probe.spin_for(0.05)
    return float(probe.next_message(box, lambda m: secs(m.header.stamp) > after + 1e-9, what="a new scan",
                                    start=0).ranges[90])


def pose_msg(x: float, y: float, yaw: float) -> Any:
    from geometry_msgs.msg import Pose

    p = Pose()
    p.position.x, p.position.y = x, y
    p.orientation.z, p.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return p


# ---------------------------------------------------------------------- tests
def test_simulator_features_list_what_is_implemented(probe: Probe) -> None:
    f = call(probe, "get_simulator_features", si_srv.GetSimulatorFeatures).features
    F = si_msg.SimulatorFeatures
    assert set(f.features) == {
        F.SPAWNING, F.DELETING, F.ENTITY_CATEGORIES, F.SPAWNING_RESOURCE_STRING, F.ENTITY_STATE_GETTING,
        F.ENTITY_STATE_SETTING, F.ENTITY_INFO_GETTING, F.SIMULATION_RESET, F.SIMULATION_RESET_TIME,
        F.SIMULATION_RESET_STATE, F.SIMULATION_RESET_SPAWNED, F.SIMULATION_STATE_GETTING, F.SIMULATION_STATE_SETTING,
        F.SIMULATION_STATE_PAUSE, F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE, F.SPAWNING_ENTITIES,
        F.SPAWNABLES, F.ENTITY_BOUNDS, F.STEP_SIMULATION_ACTION}
    assert list(f.spawn_formats) == ["mvsim"] and "README" in f.custom_info


def test_get_entities_with_filters_and_entity_info(probe: Probe) -> None:
    names = ok(call(probe, "get_entities", si_srv.GetEntities)).entities
    assert set(INITIAL) <= set(names)
    flt = si_msg.EntityFilters(filter="^r[0-9]$")
    assert list(ok(call(probe, "get_entities", si_srv.GetEntities, filters=flt)).entities) == ["r1", "r2"]
    C = si_msg.EntityCategory
    flt = si_msg.EntityFilters(categories=[C(category=C.CATEGORY_HUMAN), C(category=C.CATEGORY_DYNAMIC_OBJECT)])
    assert list(ok(call(probe, "get_entities", si_srv.GetEntities, filters=flt)).entities) == ["pallet", "walker"]
    from geometry_msgs.msg import Vector3

    B = si_msg.Bounds
    flt = si_msg.EntityFilters(bounds=B(type=B.TYPE_SPHERE, points=[Vector3(x=4.0, y=1.5), Vector3(x=1.0)]))
    assert list(ok(call(probe, "get_entities", si_srv.GetEntities, filters=flt)).entities) == ["box1"]
    bad = call(probe, "get_entities", si_srv.GetEntities, filters=si_msg.EntityFilters(filter="r[1"))
    assert bad.result.result == R.RESULT_OPERATION_FAILED and "bad regular expression" in bad.result.error_message
    tags = call(probe, "get_entities", si_srv.GetEntities,
                filters=si_msg.EntityFilters(tags=si_msg.TagsFilter(tags=["x"])))
    assert tags.result.result == R.RESULT_FEATURE_UNSUPPORTED
    info = ok(call(probe, "get_entity_info", si_srv.GetEntityInfo, entity="box1")).info
    assert info.category.category == C.CATEGORY_STATIC_OBJECT and "box1" in info.description
    assert ok(call(probe, "get_entity_info", si_srv.GetEntityInfo, entity="r2")).info.category.category \
        == C.CATEGORY_ROBOT


def test_get_entity_state_in_the_world_frame_at_sim_time(probe: Probe) -> None:
    pause(probe)
    reset(probe)
    steps(probe, 3)
    st = state_of(probe, "box1")
    assert st.header.frame_id == "map" and secs(st.header.stamp) == pytest.approx(3 * DT, abs=1e-9)
    assert planar(st) == pytest.approx(INITIAL["box1"])
    missing = call(probe, "get_entity_state", si_srv.GetEntityState, entity="nobody")
    assert missing.result.result == R.RESULT_NOT_FOUND and "no entity named 'nobody'" in missing.result.error_message
    both = ok(call(probe, "get_entities_states", si_srv.GetEntitiesStates,
                   filters=si_msg.EntityFilters(filter="^(r2|pallet)$")))
    assert list(both.entities) == ["r2", "pallet"]
    assert [planar(s)[:2] for s in both.states] == [pytest.approx((0.0, -6.0)), pytest.approx((-4.0, 4.0))]


def test_set_entity_state_moves_a_block_that_the_lidar_then_sees(probe: Probe) -> None:
    pause(probe)
    reset(probe)
    assert middle_range(probe, 0.0) == pytest.approx(INITIAL["box1"][0] - 0.5 - LIDAR_X, abs=2e-3)
    t = secs(state_of(probe, "r1").header.stamp)
    ok(call(probe, "set_entity_state", si_srv.SetEntityState, entity="box1",
            state=si_msg.EntityState(pose=pose_msg(7.0, 0.0, 0.0)), set_pose=True))
    assert planar(state_of(probe, "box1")) == pytest.approx((7.0, 0.0, 0.0))
    assert middle_range(probe, t) == pytest.approx(7.0 - 0.5 - LIDAR_X, abs=2e-3)
    # a twist for a static block is refused; for the dynamic pallet it is set (world frame)
    spin = si_msg.EntityState()
    spin.twist.angular.z = 0.5
    refused = call(probe, "set_entity_state", si_srv.SetEntityState, entity="box1", state=spin, set_twist=True)
    assert refused.result.result == R.RESULT_OPERATION_FAILED and "static" in refused.result.error_message
    push = si_msg.EntityState()
    push.twist.linear.y = 1.0
    ok(call(probe, "set_entity_state", si_srv.SetEntityState, entity="pallet", state=push, set_twist=True))
    st = state_of(probe, "pallet")
    assert (st.twist.linear.x, st.twist.linear.y) == pytest.approx((0.0, 1.0))
    steps(probe, 10)
    assert planar(state_of(probe, "pallet"))[1] > INITIAL["pallet"][1] + 0.05
    bad = si_msg.EntityState(pose=pose_msg(1.0, 1.0, 0.0))
    bad.pose.orientation.w = 0.0
    ans = call(probe, "set_entity_state", si_srv.SetEntityState, entity="box1", state=bad, set_pose=True)
    assert ans.result.result == si_srv.SetEntityState.Response.INVALID_POSE


def test_step_simulation_advances_exactly_n_steps_while_paused(probe: Probe) -> None:
    pause(probe)
    reset(probe)
    clock_now(probe, 0.0)
    steps(probe, 7)
    assert secs(clock_now(probe, 7 * DT).clock) == 7 * DT
    steps(probe, 1)
    assert secs(state_of(probe, "r1").header.stamp) == pytest.approx(8 * DT, abs=1e-12)
    ok(call(probe, "set_simulation_state", si_srv.SetSimulationState,
            state=si_msg.SimulationState(state=S.STATE_PLAYING)))
    refused = call(probe, "step_simulation", si_srv.StepSimulation, steps=3)
    assert refused.result.result == R.RESULT_OPERATION_FAILED and "not paused" in refused.result.error_message
    pause(probe)


def test_reset_returns_every_pose_to_its_initial_value_and_the_clock_to_zero(probe: Probe) -> None:
    from mvsim_ros2.conversions import VARIANCE_FLOOR

    pause(probe)
    odom = probe.subscribe(Odometry, "/r1/odom")
    pub = probe.publisher(Twist, "/r1/cmd_vel")
    probe.wait_matched(pub)
    cmd = Twist()
    cmd.linear.x, cmd.angular.z = 0.8, 0.4

    def driven() -> bool:
        pub.publish(cmd)
        steps(probe, 10)
        return planar(state_of(probe, "r1"))[0] > 0.3

    probe.spin_until(driven, what="r1 to drive off")
    ok(call(probe, "set_entity_state", si_srv.SetEntityState, entity="walker",
            state=si_msg.EntityState(pose=pose_msg(2.0, 2.0, 1.0)), set_pose=True))
    ok(call(probe, "set_entity_state", si_srv.SetEntityState, entity="box1",
            state=si_msg.EntityState(pose=pose_msg(6.0, 1.0, 0.3)), set_pose=True))
    moved = planar(state_of(probe, "r1"))
    assert moved[0] > 0.3 and moved[2] > 0.1
    driven_odom = probe.next_message(odom, lambda m: m.pose.pose.position.x > 0.3, what="r1's odometry", start=0)
    assert driven_odom.pose.covariance[0] > 2 * VARIANCE_FLOOR  # the covariance grew with the path
    n_clock, n_odom = len(probe.inbox["/clock"]), len(odom)
    reset(probe)
    probe.next_message(probe.inbox["/clock"], lambda m: secs(m.clock) == 0.0, start=n_clock, what="/clock at 0")
    states = ok(call(probe, "get_entities_states", si_srv.GetEntitiesStates))
    got = dict(zip(states.entities, states.states, strict=True))
    assert set(got) == set(INITIAL)
    for name, pose in INITIAL.items():
        assert planar(got[name]) == pytest.approx(pose, abs=1e-9), name
        assert secs(got[name].header.stamp) == 0.0
        assert (got[name].twist.linear.x, got[name].twist.angular.z) == (0.0, 0.0), name
    # the robot's command was forgotten: it stays put
    steps(probe, 20)
    assert planar(state_of(probe, "r1")) == pytest.approx(INITIAL["r1"], abs=1e-9)
    m = probe.next_message(odom, lambda m: secs(m.header.stamp) == 0.0, what="/r1/odom at 0 (sent with the reset)",
                           start=n_odom)
    assert m.pose.pose.position.x == pytest.approx(0.0, abs=1e-9)
    assert m.pose.covariance[0] == pytest.approx(VARIANCE_FLOOR)  # and starts afresh


def test_spawn_and_delete_entities(probe: Probe, tmp_path: Path) -> None:
    pause(probe)
    reset(probe)
    req = {"name": "r3", "entity_resource": si_msg.Resource(resource_string='<vehicle class="bot"/>')}
    pose = si_srv.SpawnEntity.Request().initial_pose
    pose.pose = pose_msg(2.0, 3.0, math.pi / 2)
    ans = ok(call(probe, "spawn_entity", si_srv.SpawnEntity, initial_pose=pose, **req))
    assert ans.entity_name == "r3"
    assert planar(state_of(probe, "r3")) == pytest.approx((2.0, 3.0, math.pi / 2))
    odom = probe.subscribe(Odometry, "/r3/odom")
    probe.spin_until(lambda: probe.node.count_publishers("/r3/odom") > 0, what="/r3/odom in the graph")
    pub = probe.publisher(Twist, "/r3/cmd_vel")
    probe.wait_matched(pub)
    cmd = Twist()
    cmd.linear.x = 1.0

    def moving() -> bool:
        pub.publish(cmd)
        steps(probe, 10)
        return planar(state_of(probe, "r3"))[1] > 3.2

    probe.spin_until(moving, what="r3 to drive along +y")
    probe.next_message(odom, lambda m: m.pose.pose.position.x > 0.1, what="r3's odometry", start=0)
    # the same name again: refused, or renamed on request
    again = call(probe, "spawn_entity", si_srv.SpawnEntity, **req)
    assert again.result.result == si_srv.SpawnEntity.Response.NAME_NOT_UNIQUE
    renamed = ok(call(probe, "spawn_entity", si_srv.SpawnEntity, allow_renaming=True, initial_pose=pose, **req))
    assert renamed.entity_name == "r3_1"
    # a block from a file, by URI, its pose from the file
    f = tmp_path / "crate.xml"
    f.write_text('<block name="crate"><static>true</static><init_pose>-2 -2 0</init_pose></block>')
    crate = ok(call(probe, "spawn_entity", si_srv.SpawnEntity,
                    entity_resource=si_msg.Resource(uri=f.as_uri())))
    assert crate.entity_name == "crate" and planar(state_of(probe, "crate"))[:2] == pytest.approx((-2.0, -2.0))
    SR = si_srv.SpawnEntity.Response
    for fields, code in (({"entity_resource": si_msg.Resource()}, SR.NO_RESOURCE),
                         ({"entity_resource": si_msg.Resource(resource_string='<robot name="x"/>')},
                          SR.UNSUPPORTED_FORMAT),
                         ({"name": "bad", "entity_resource": si_msg.Resource(resource_string="<block")},
                          SR.RESOURCE_PARSE_ERROR),
                         ({"name": "9lives", "entity_resource": si_msg.Resource(resource_string="<block/>")},
                          SR.NAME_INVALID),
                         ({"entity_resource": si_msg.Resource(resource_string="<block/>")}, SR.NAME_INVALID)):
        assert call(probe, "spawn_entity", si_srv.SpawnEntity, **fields).result.result == code, fields
    # delete: gone from the world and from the graph
    for name in ("r3", "r3_1", "crate"):
        ok(call(probe, "delete_entity", si_srv.DeleteEntity, entity=name))
    assert call(probe, "delete_entity", si_srv.DeleteEntity, entity="r3").result.result == R.RESULT_NOT_FOUND
    names = ok(call(probe, "get_entities", si_srv.GetEntities)).entities
    assert set(names) == set(INITIAL)
    probe.spin_until(lambda: probe.node.count_publishers("/r3/odom") == 0
                     and probe.node.count_subscribers("/r3/cmd_vel") == 0, what="r3's topics to leave the graph")
    # and a full reset removes what was spawned
    many = call(probe, "spawn_entities", si_srv.SpawnEntities, spawn_requests=[
        si_msg.SpawnEntity(name="b1", entity_resource=si_msg.Resource(resource_string="<block/>")),
        si_msg.SpawnEntity(name="b1", entity_resource=si_msg.Resource(resource_string="<block/>"))])
    assert many.result.result == si_srv.SpawnEntities.Response.ENTITIES_SPAWN_FAILED
    assert [r.result.result for r in many.results] == [R.RESULT_OK, SR.NAME_NOT_UNIQUE]
    assert "b1" in ok(call(probe, "get_entities", si_srv.GetEntities)).entities
    reset(probe)
    assert set(ok(call(probe, "get_entities", si_srv.GetEntities)).entities) == set(INITIAL)


def test_get_and_set_simulation_state(probe: Probe) -> None:
    def state() -> int:
        return ok(call(probe, "get_simulation_state", si_srv.GetSimulationState)).state.state

    def set_state(s: int) -> Any:
        return call(probe, "set_simulation_state", si_srv.SetSimulationState,
                    state=si_msg.SimulationState(state=s))

    pause(probe)
    assert state() == S.STATE_PAUSED
    assert set_state(S.STATE_PAUSED).result.result == si_srv.SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    ok(set_state(S.STATE_PLAYING))
    assert state() == S.STATE_PLAYING
    n = len(probe.inbox["/clock"])
    probe.next_message(probe.inbox["/clock"], lambda m: secs(m.clock) > 0.2, start=n, what="time to run")
    from rcl_interfaces.srv import GetParameters

    def lockstep() -> bool:
        return probe.call(GetParameters, "/mvsim/get_parameters",
                          GetParameters.Request(names=["lockstep"])).values[0].bool_value

    assert lockstep() is False
    ok(set_state(S.STATE_STOPPED))
    assert state() == S.STATE_STOPPED and lockstep() is True
    assert secs(state_of(probe, "r1").header.stamp) == 0.0
    ok(set_state(S.STATE_PAUSED))
    assert state() == S.STATE_PAUSED
    unsupported = set_state(S.STATE_NO_WORLD)
    assert unsupported.result.result == R.RESULT_FEATURE_UNSUPPORTED
    # the lockstep service still works, and a step leaves the stopped state
    ans = probe.call(Trigger, "/mvsim/step", Trigger.Request())
    assert ans.success and float(ans.message) == pytest.approx(0.1)


def test_reset_scopes(probe: Probe) -> None:
    pause(probe)
    reset(probe)
    Q = si_srv.ResetSimulation.Request
    ok(call(probe, "spawn_entity", si_srv.SpawnEntity, name="extra",
            entity_resource=si_msg.Resource(resource_string="<block><init_pose>1 5 0</init_pose></block>")))
    ok(call(probe, "set_entity_state", si_srv.SetEntityState, entity="box1",
            state=si_msg.EntityState(pose=pose_msg(6.0, 0.0, 0.0)), set_pose=True))
    steps(probe, 10)
    reset(probe, Q.SCOPE_TIME)  # the clock only
    assert secs(state_of(probe, "box1").header.stamp) == 0.0 and planar(state_of(probe, "box1"))[0] == 6.0
    reset(probe, Q.SCOPE_STATE)  # poses back, the spawned block stays
    assert planar(state_of(probe, "box1"))[0] == 4.0 and planar(state_of(probe, "extra"))[:2] == (1.0, 5.0)
    reset(probe, Q.SCOPE_SPAWNED)
    assert "extra" not in ok(call(probe, "get_entities", si_srv.GetEntities)).entities
    odd = call(probe, "reset_simulation", si_srv.ResetSimulation, scope=8)
    assert odd.result.result == R.RESULT_FEATURE_UNSUPPORTED


ABSURD = (math.nan, math.inf, -math.inf, 1e30, -1e30)
POSE_FIELDS = ("position.x", "position.y", "position.z", "orientation.x", "orientation.y", "orientation.z",
               "orientation.w")
TWIST_FIELDS = ("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z")


def set_field(msg: Any, path: str, value: float) -> None:
    *parents, last = path.split(".")
    for part in parents:
        msg = getattr(msg, part)
    setattr(msg, last, value)


def test_absurd_values_in_every_field_of_set_entity_state_and_spawn(probe: Probe, node: NodeProcess) -> None:
    """NaN, ±inf and ±1e30 in each field of the pose and the twist of set_entity_state and of spawn_entity's
    initial_pose: NaN/inf and positions beyond ±1e9 m refused, naming the field; a huge quaternion component is only
    normalised; a huge twist clamped to the object's limits (said once per entity and field); every state finite
    afterwards and the simulation steps on."""
    pause(probe)
    reset(probe)
    SE, SP = si_srv.SetEntityState.Response, si_srv.SpawnEntity.Response
    for name in ("r2", "pallet"):
        for field in POSE_FIELDS:
            for bad in ABSURD:
                st = si_msg.EntityState(pose=pose_msg(1.0, 2.0, 0.3))
                set_field(st.pose, field, bad)
                ans = call(probe, "set_entity_state", si_srv.SetEntityState, entity=name, state=st, set_pose=True)
                if math.isfinite(bad) and field.startswith("orientation"):
                    ok(ans)
                    continue
                why = (f"is {bad}; it must be a finite number" if not math.isfinite(bad) else
                       f"= {bad:g} m is beyond ±1e+09 m")
                assert (ans.result.result, ans.result.error_message) == (
                    SE.INVALID_POSE, f"state.pose.{field} {why}; nothing changed"), (name, field, bad)
        for field in TWIST_FIELDS:
            for bad in ABSURD:
                st = si_msg.EntityState()
                set_field(st.twist, field, bad)
                ans = call(probe, "set_entity_state", si_srv.SetEntityState, entity=name, state=st, set_twist=True)
                if math.isfinite(bad):
                    ok(ans)  # clamped (or a field the planar simulator does not use)
                else:
                    assert (ans.result.result, ans.result.error_message) == (
                        R.RESULT_OPERATION_FAILED, f"state.twist.{field} is {bad}; it must be a finite number; "
                                                   f"nothing changed"), (name, field, bad)
    for field in POSE_FIELDS:
        for bad in ABSURD:
            if math.isfinite(bad) and field.startswith("orientation"):
                continue
            pose = si_srv.SpawnEntity.Request().initial_pose
            pose.pose = pose_msg(2.0, 3.0, 0.0)
            set_field(pose.pose, field, bad)
            ans = call(probe, "spawn_entity", si_srv.SpawnEntity, name="absurd", initial_pose=pose,
                       entity_resource=si_msg.Resource(resource_string='<vehicle class="bot"/>'))
            why = (f"is {bad}; it must be a finite number" if not math.isfinite(bad) else
                   f"= {bad:g} m is beyond ±1e+09 m")
            assert (ans.result.result, ans.result.error_message) == (SP.INVALID_POSE,
                                                                     f"initial_pose.pose.{field} {why}")
    steps(probe, 20)
    states = ok(call(probe, "get_entities_states", si_srv.GetEntitiesStates))
    assert set(states.entities) == set(INITIAL)  # nothing spawned
    for st in states.states:
        p, t = st.pose, st.twist
        assert all(math.isfinite(v) for v in (p.position.x, p.position.y, p.position.z, p.orientation.x,
                                              p.orientation.y, p.orientation.z, p.orientation.w, t.linear.x,
                                              t.linear.y, t.angular.z))
    assert secs(state_of(probe, "r1").header.stamp) == pytest.approx(20 * DT)
    probe.spin_until(lambda: "~/set_entity_state: 'r2' state.twist.linear.x = 1e+30 m/s is beyond its limit; "
                             "clamped to 10 m/s (said once per entity and field)" in node.log()
                     and "'pallet' state.twist.angular.z = 1e+30 rad/s is beyond its limit; clamped to 100 rad/s"
                     in node.log(), what="the clamp warnings in the node's log")
    assert node.log().count("'r2' state.twist.linear.x = ") == 1
    reset(probe)


def test_without_simulation_interfaces_the_node_runs_and_says_so(ros_context: Any, ros_domain: int,
                                                                  tmp_path: Path) -> None:
    """A ROS install without the package: a stand-in that fails to import shadows it; the node starts, logs once
    that the services are off, and ``~/step`` works."""
    import os

    shadow = tmp_path / "shadow" / "simulation_interfaces"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("hidden by the test")\n')
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(shadow.parent), os.environ.get("PYTHONPATH", "")) if p)}
    proc = NodeProcess(DATA / "siminf.world.xml", {"lockstep": True}, ros_domain, tmp_path / "bare.log",
                       extra_args=["-r", "__node:=mvsim_bare"], env=env)  # beside the module's node "mvsim"
    p = Probe(ros_context, "probe_siminf_bare")
    p.watch = proc
    try:
        ans = p.call(Trigger, "/mvsim_bare/step", Trigger.Request())
        assert ans.success and float(ans.message) == pytest.approx(0.1)
        services = {n for n, _ in p.node.get_service_names_and_types()}
        assert "/mvsim_bare/step" in services and "/mvsim_bare/reset_simulation" not in services
        assert proc.log().count("simulation_interfaces is not installed") == 1
    finally:
        p.close()
        code = proc.stop()
    assert code == 0, proc.log()[-2000:]
