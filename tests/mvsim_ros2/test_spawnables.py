"""The world's classes as spawnables (:mod:`mvsim_ros2.spawnables`), and across processes: ``ros2 service call
/get_spawnables`` with the real CLI, GetEntityBounds against ``extent()`` of the same objects, and upstream's
(relative) service names answering as the node's private ones do.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mvsim_core as mv
from mvsim_ros2.spawnables import catalogue, comment_before

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
SIMINF = DATA / "siminf.world.xml"
ORIGIN = (0.0,) * 6


# ---------------------------------------------------------------------- the catalogue (no ROS)
def test_demo_world_classes_with_their_comments_and_boxes():
    w = mv.load_world(REPO / "worlds" / "demo.world.xml", seed=0)
    items = {(s.kind, s.name): s for s in catalogue(w)}
    assert list(items) == [("vehicle", "warehouse_bot"), ("vehicle", "compact_car"), ("block", "pallet")]
    pallet = items[("block", "pallet")]
    assert pallet.resource == '<block class="pallet"/>'
    assert pallet.description == "block class 'pallet': Pallets (pushable) and a heavy crate (static)"
    assert pallet.where.endswith("demo.world.xml:35")
    assert pallet.extent is not None
    assert pallet.extent.as_tuple() == pytest.approx((-0.6, 0.6, -0.4, 0.4, 0.0, 0.15), abs=1e-12)
    car = items[("vehicle", "compact_car")]
    assert car.description.startswith("vehicle class 'compact_car': compact_car: a 3.6 m Ackermann-steered car")
    assert car.extent is not None
    assert car.extent.as_tuple() == pytest.approx((-0.6, 3.15, -0.85, 0.85, 0.0, 1.45), abs=1e-9)


def test_a_class_without_comment_is_summarised_and_the_run_is_untouched():
    w = mv.load_world(SIMINF, seed=3)
    (bot,) = catalogue(w)
    assert comment_before(w.vehicle_classes["bot"]) == ""
    assert bot.description == ("vehicle class 'bot': dynamics differential, controller twist_ideal, friction "
                               "default, 2 wheels; sensors: none")
    assert bot.extent is not None and bot.extent.as_tuple() == pytest.approx((-0.4, 0.6, -0.5, 0.5, 0.0, 0.4))
    assert list(w.vehicles) == ["r1", "r2"] and "spawnable_probe" not in w.object_names()
    fresh = mv.load_world(SIMINF, seed=3)
    assert w.rng.uniform() == fresh.rng.uniform()  # building the probe drew nothing from the world's generator


# ---------------------------------------------------------------------- over DDS
ros_harness = pytest.importorskip("ros_harness")
si_srv = pytest.importorskip("simulation_interfaces.srv", reason="simulation_interfaces is not built")
si_msg = pytest.importorskip("simulation_interfaces.msg")
R = si_msg.Result


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from ros_harness.node_fixture(SIMINF, {"lockstep": True}, tmp_path_factory.mktemp("spawnables"), ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: Any) -> Iterator[Any]:
    p = ros_harness.Probe(ros_context, "probe_spawnables")
    p.watch = node
    yield p
    p.close()


@pytest.mark.slow
def test_ros2_service_call_get_spawnables_lists_the_class(node, probe, ros_domain, tmp_path):
    from ros_cli_harness import Session, cli_env, executable, wait_for

    probe.call(si_srv.GetSpawnables, "/get_spawnables", si_srv.GetSpawnables.Request())  # the node is up
    call = Session([executable("ros2"), "service", "call", "/get_spawnables",
                    "simulation_interfaces/srv/GetSpawnables", "{sources: [nowhere]}"],
                   cli_env(ros_domain, None, tmp_path), tmp_path / "call.log")
    try:
        wait_for(lambda: not call.alive(), "`ros2 service call /get_spawnables`", 60.0)
        assert call.wait(5.0, "its answer") == 0, call.log()
    finally:
        if call.alive():
            call.kill()
    out = call.log()
    assert "resource_string='<vehicle class=\"bot\"/>'" in out, out
    assert ("description=\"vehicle class 'bot': dynamics differential, controller twist_ideal, friction default, "
            "2 wheels; sensors: none (defined at ") in out, out
    assert "result=1, error_message=\"sources not searched: nowhere (the spawnables are the world's own classes)\"" \
        in out, out
    assert "type=1, points=[geometry_msgs.msg.Vector3(x=0.6, y=0.5, z=0.4), geometry_msgs.msg.Vector3(x=-0.4, " \
           "y=-0.5, z=0.0)]" in out, out


@pytest.mark.slow
def test_entity_bounds_are_the_extents_in_the_entity_frame(probe):
    w = mv.load_world(SIMINF)
    objs = {**w.vehicles, **w.blocks, **w.actors}
    assert list(objs) == ["r1", "r2", "box1", "pallet", "walker"]
    for name, obj in objs.items():
        ans = probe.call(si_srv.GetEntityBounds, "/mvsim/get_entity_bounds",
                         si_srv.GetEntityBounds.Request(entity=name))
        assert ans.result.result == R.RESULT_OK, ans.result.error_message
        b = ans.bounds
        assert b.type == si_msg.Bounds.TYPE_BOX and len(b.points) == 2
        hi, lo = b.points
        e = obj.extent(ORIGIN)
        got = (lo.x, hi.x, lo.y, hi.y, lo.z, hi.z)
        assert max(abs(a - c) for a, c in zip(got, e.as_tuple(), strict=True)) < 1e-9, (name, got, e)
    ans = probe.call(si_srv.GetEntityBounds, "/get_entity_bounds", si_srv.GetEntityBounds.Request(entity="nobody"))
    assert ans.result.result == R.RESULT_NOT_FOUND
    assert ans.result.error_message.startswith("no entity named 'nobody'; entities: r1, r2, box1, pallet, walker")
    assert ans.bounds.type == si_msg.Bounds.TYPE_EMPTY


UPSTREAM_NAMES = ["spawn_entity", "delete_entity", "get_entities", "get_entity_state", "set_entity_state",
                  "get_simulator_features"]
"""The simulation_interfaces services upstream MVSim's node serves, under relative names."""


@pytest.mark.slow
def test_upstream_service_names_answer_like_ours(probe):
    def served() -> set[str]:
        return {m for m, _ in probe.node.get_service_names_and_types()}

    probe.spin_until(lambda: {f"/{n}" for n in UPSTREAM_NAMES} <= served(), what="upstream's service names")
    for srv_type, name, req in [
            (si_srv.GetEntities, "get_entities", si_srv.GetEntities.Request()),
            (si_srv.GetEntityState, "get_entity_state", si_srv.GetEntityState.Request(entity="r2")),
            (si_srv.GetSimulatorFeatures, "get_simulator_features", si_srv.GetSimulatorFeatures.Request()),
            (si_srv.DeleteEntity, "delete_entity", si_srv.DeleteEntity.Request(entity="nobody"))]:
        ours = probe.call(srv_type, f"/mvsim/{name}", req)
        theirs = probe.call(srv_type, f"/{name}", req)
        assert ours == theirs, name
    entities = probe.call(si_srv.GetEntities, "/get_entities", si_srv.GetEntities.Request())
    assert list(entities.entities) == ["r1", "r2", "box1", "pallet", "walker"]
    st = probe.call(si_srv.GetEntityState, "/get_entity_state", si_srv.GetEntityState.Request(entity="r2")).state
    assert (st.pose.position.x, st.pose.position.y) == pytest.approx((0.0, -6.0), abs=1e-3)
    gone = probe.call(si_srv.DeleteEntity, "/delete_entity", si_srv.DeleteEntity.Request(entity="nobody"))
    assert gone.result.result == R.RESULT_NOT_FOUND
