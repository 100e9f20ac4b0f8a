"""Run-time objects over ZMQ (issue 16, Deliver 5): the World node's ``spawn_xml_objects``, ``remove_objects_by_name``
and ``remove_spawned_objects`` services, called through the real Client over sockets (an in-process server, the
World served by WorldComms; its service thread answers while this thread steps). 20 cubes spawned in front of a
driving robot stop it (``get_pose`` over the wire) and appear in the scan it publishes on ``/r1/laser1_scan``;
``remove_spawned_objects`` clears the scan. Bad requests answer success=false with the reason, and the world goes
on. ``get_pose`` follows a walking actor.

World: ``data/runtime.world.xml`` (r1 with a 2D lidar 0.2 m ahead, front at x + 0.6 m; a wall whose face is at
x = 8 m; bob walking between (0, 5) and (4, 5) at 1 m/s). The cubes: 0.3 m, static, centres at x = 3.15 m, y = -2.85
+ 0.3 k: a barrier whose face is at x = 3 m.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.comms import Client, WorldComms
from mvsim_core.comms.errors import ServiceError
from mvsim_core.comms.proto import SrvGetPose_pb2, SrvGetPoseAnswer_pb2, mvsim_core_msgs_pb2

WORLD = Path(__file__).resolve().parent / "data" / "runtime.world.xml"
CUBE = ("<block><static>true</static><zmin>0</zmin><zmax>0.3</zmax>"
        "<shape><pt>-0.15 -0.15</pt><pt>0.15 -0.15</pt><pt>0.15 0.15</pt><pt>-0.15 0.15</pt></shape></block>")
CUBE_FACE, FAR_WALL, LIDAR_X, FRONT = 3.0, 8.0, 0.2, 0.6  # m


@pytest.fixture
def served(server):
    """(world, WorldComms, caller Client, scans queue): the world started and served; every scan r1 publishes goes
    into the queue as (sim time, ranges)."""
    world = mv.load_world(WORLD, seed=1)
    world.start()
    comms = WorldComms(world, port=server.port, timeout=10.0).attach()
    caller = Client("caller", port=server.port, timeout=30.0).connect()
    scans: queue.Queue = queue.Queue()

    def on_scan(type_name: str, payload: bytes) -> None:
        m = Client.decode(type_name, payload)
        scans.put((m.unixTimestamp - comms.t0_unix, list(m.scanRanges)))

    caller.subscribe("/r1/laser1_scan", on_scan)
    end = time.monotonic() + 20
    while not comms.client.has_subscribers("/r1/laser1_scan"):  # the subscription has matched
        assert time.monotonic() < end, "the scan subscription never matched"
        time.sleep(0.01)
    yield world, comms, caller, scans
    caller.shutdown()
    comms.close()


def latest_scan(scans: queue.Queue, t: float) -> list[float]:
    """The scan of simulated time ``t`` (s), waiting for it to arrive (earlier ones are dropped)."""
    end = time.monotonic() + 10
    while True:
        stamp, ranges = scans.get(timeout=max(0.01, end - time.monotonic()))
        if stamp == pytest.approx(t, abs=1e-6):
            return ranges


def get_pose(caller: Client, name: str) -> SrvGetPoseAnswer_pb2.SrvGetPoseAnswer:
    return caller.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId=name),
                               SrvGetPoseAnswer_pb2.SrvGetPoseAnswer)


def drive(w: mv.World, seconds: float, vx: float = 0.5) -> None:
    v = w.vehicles["r1"]
    for _ in range(int(round(seconds / w.timestep))):
        v.set_twist(vx, 0.0, 0.0)
        w.step()


def test_cubes_spawned_over_zmq_stop_the_robot_and_are_in_its_scan_until_removed(served) -> None:
    world, comms, caller, scans = served
    drive(world, 0.5)
    r = latest_scan(scans, world.time)
    x0 = get_pose(caller, "r1").pose.x
    assert r[90] == pytest.approx(FAR_WALL - x0 - LIDAR_X, abs=0.02)

    cubes = [(CUBE, f"cube{k}", (CUBE_FACE + 0.15, -2.85 + 0.3 * k, 0.0)) for k in range(20)]
    assert caller.spawn_objects(cubes) == [f"cube{k}" for k in range(20)]
    assert world.spawned_names() == [f"cube{k}" for k in range(20)]
    c7 = get_pose(caller, "cube7")
    assert (c7.success, c7.pose.x, c7.pose.y) == (True, pytest.approx(3.15), pytest.approx(-2.85 + 2.1))

    world.run(0.05)
    x = get_pose(caller, "r1").pose.x
    r = latest_scan(scans, world.time)
    for ray in (60, 90, 120):
        assert r[ray] == pytest.approx((CUBE_FACE - x - LIDAR_X) / math.cos(math.radians(ray - 90)), abs=0.02), ray

    drive(world, 8.0)  # unhindered: x ≈ 4.3 m
    a = get_pose(caller, "r1")
    assert a.pose.x + FRONT == pytest.approx(CUBE_FACE, abs=0.03) and a.pose.x + FRONT < CUBE_FACE + 0.01
    assert latest_scan(scans, world.time)[90] == pytest.approx(CUBE_FACE - a.pose.x - LIDAR_X, abs=0.02)

    drive(world, 0.5, vx=0.0)
    assert caller.remove_spawned_objects() == [f"cube{k}" for k in range(20)]
    assert "cube0" not in world.blocks and not get_pose(caller, "cube0").success
    world.run(0.05)
    x = get_pose(caller, "r1").pose.x
    assert latest_scan(scans, world.time)[90] == pytest.approx(FAR_WALL - x - LIDAR_X, abs=0.02)
    assert caller.remove_spawned_objects() == []  # nothing left


def test_one_object_by_name_and_removal_by_name(served) -> None:
    world, comms, caller, scans = served
    assert caller.spawn_object(CUBE, pose=(5.15, 0.0, 0.3)) == "block001"  # the first free default name
    assert caller.spawn_object(CUBE.replace("<block>", '<block name="crate">'), pose=(5.0, 2.0, 0.0)) == "crate"
    assert caller.remove_objects(["block001", "crate"]) == ["block001", "crate"]
    assert world.spawned_names() == []
    assert caller.remove_objects(["far_wall"]) == ["far_wall"]  # the world's own objects too
    world.run(0.05)
    assert latest_scan(scans, world.time)[90] == pytest.approx(20.0)  # nothing ahead any more


@pytest.mark.parametrize(("objects", "message"), [
    ([("<block><zmax>high</zmax></block>", "b", (1.0, 1.0, 0.0))],
     r"object 0: .*<spawn request>:1: bad number 'high' for <zmax>; expected a number such as 1.5"),
    ([(CUBE, "ok", (5.0, 0.0, 0.0)), ("<block", "b", (1.0, 1.0, 0.0))],
     r"object 1: .*<spawn request>:1: start tag <block> is never finished; add '>'"),
    ([(CUBE, "far_wall", (5.0, 0.0, 0.0))],
     r"object 0: cannot spawn 'far_wall': another vehicle, block or actor already has that name"),
    ([(CUBE, "c", (math.nan, 0.0, 0.0))],
     r"object 0: spawn\('c'\): x is nan; it must be a finite number; refused, nothing changed"),
    ([("<vehicle:class name='x'/>", None, None)],
     r"object 0: .*<spawn request>:1: no <vehicle>, <block> or <actor> element to spawn"),
    ([("<block><shape><pt>$(echo 1) 0</pt></shape></block>", "s", (1.0, 1.0, 0.0))],
     r"object 0: .*<spawn request>:1: refused to run shell command \$\(echo 1\): .*"),
])
def test_bad_requests_answer_why_and_change_nothing(served, objects, message) -> None:
    world, comms, caller, scans = served
    names = world.object_names()
    with pytest.raises(ServiceError, match=r"service `spawn_xml_objects` failed: " + message + "$"):
        caller.spawn_objects(objects)
    assert world.object_names() == names
    with pytest.raises(ServiceError, match=r"cannot remove 'nobody': no such object; nothing removed"):
        caller.remove_objects(["r1", "nobody"])
    assert "r1" in world.vehicles
    world.run(0.1)  # the world and the server go on
    assert get_pose(caller, "r1").success
    assert caller.spawn_object(CUBE, "fine", (5.0, 0.0, 0.0)) == "fine"


def test_raw_requests_get_typed_answers(served) -> None:
    """What any ZMQ client sees: the answer messages themselves (success=false and errorMessage on failure)."""
    world, comms, caller, scans = served
    req = mvsim_core_msgs_pb2.SrvSpawnXmlObjects()
    req.objects.add(xml="<block name='x'><init_pose>1 2 0</init_pose></block>")
    ans = caller.call_service("spawn_xml_objects", req, mvsim_core_msgs_pb2.SrvSpawnXmlObjectsAnswer)
    assert (ans.success, list(ans.objectIds)) == (True, ["x"])
    assert world.blocks["x"].pose[:2] == pytest.approx((1.0, 2.0))
    ans = caller.call_service("remove_objects_by_name", mvsim_core_msgs_pb2.SrvRemoveObjectsByName(objectIds=["y"]),
                              mvsim_core_msgs_pb2.SrvRemoveObjectsAnswer)
    assert not ans.success and ans.errorMessage == "cannot remove 'y': no such object; nothing removed"
    # bytes that are no SrvSpawnXmlObjects: an error answer, and the service still works
    with pytest.raises(ServiceError, match="input of service `spawn_xml_objects`"):
        caller.call_service_raw("spawn_xml_objects", b"\xff\xff\xff")
    assert caller.remove_spawned_objects() == ["x"]


def test_spawning_while_another_thread_steps(served) -> None:
    """The service thread and a stepping thread share the World through its step guard: spawns and removals land
    between steps, and neither side fails."""
    world, comms, caller, scans = served
    stop = threading.Event()
    errors: list[BaseException] = []

    def stepping() -> None:
        try:
            while not stop.is_set():
                world.step()
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    t = threading.Thread(target=stepping)
    t.start()
    try:
        for k in range(5):
            names = caller.spawn_objects([(CUBE, f"c{k}_{j}", (5.0, -2.0 + j, 0.0)) for j in range(4)])
            assert len(names) == 4
            assert caller.remove_objects(names[:2]) == names[:2]
        assert sorted(caller.remove_spawned_objects()) == sorted(f"c{k}_{j}" for k in range(5) for j in (2, 3))
    finally:
        stop.set()
        t.join(10)
    assert not errors and world.time > 0


def test_get_pose_follows_a_walking_actor(served) -> None:
    world, comms, caller, scans = served
    for t, x in ((2.0, 2.0), (3.0, 3.0), (6.0, 2.0)):  # out to (4, 5) in 4 s, then back
        world.run(t - world.time)
        a = get_pose(caller, "bob")
        assert a.success and not a.objectIsInCollision
        assert (a.pose.x, a.pose.y) == (pytest.approx(x, abs=0.02), pytest.approx(5.0, abs=1e-6))
        x_, y_, _, yaw, _, _ = world.actors["bob"].pose
        assert (a.pose.x, a.pose.y, a.pose.yaw) == (x_, y_, yaw)  # the engine's pose, bit for bit
        assert (a.twist.vx, a.twist.wz) == (0.0, 0.0)
