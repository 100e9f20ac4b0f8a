"""What RViz shows, checked against running nodes (separate processes, over DDS, lockstep so that nothing depends on
the machine's speed):

* every topic that a display of an ``rviz/*.rviz`` file reads (plus ``tf``/``tf_static``, which RViz always reads)
  is published by a node started the way that config is meant for: demo.rviz with the demo world (RViz's tf remapped
  to bot1's, as demo.launch.py does), mvsim.rviz with four vehicles and ``shared_tf_tree`` and with one vehicle and
  the defaults;
* with ``shared_tf_tree``, one tf tree ``map → <V>/odom → <V>/base_link → <V>/<sensor>`` for every vehicle, and the
  same prefixed frames in odometry, scans and markers; markers are frame-locked to their vehicle's base_link;
* LaserScan ``range_min`` is the sensor's;
* ``/clock`` goes out before any message stamped with its time (compared by the DDS source timestamps of the
  messages, which the publishing thread sets in publishing order; delivery order across topics is not guaranteed).

Each node runs in its own namespace (its topics are relative), so one probe sees them all; ``/clock`` is absolute,
but nodes in lockstep publish it only when stepped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    REPO,
    Clock,
    Imu,
    LaserScan,
    MarkerArray,
    NodeProcess,
    Odometry,
    Probe,
    TFMessage,
    Trigger,
    qos,
    secs,
)

DATA = Path(__file__).resolve().parent / "data"
MULTI = ("r1", "car1", "car2", "r2")  # the vehicles of data/multi.world.xml

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Case:
    """A node started the way an RViz config is meant for."""

    rviz: str
    world: Path
    params: dict[str, Any] = field(default_factory=dict)
    tf_prefix: str = ""  # RViz's /tf and /tf_static remapped under this prefix (launch argument rviz_vehicle)

    @property
    def key(self) -> str:
        return f"{self.rviz}[{self.world.stem.split('.')[0]}]"


CASES = (
    Case("demo.rviz", REPO / "worlds" / "demo.world.xml", tf_prefix="/bot1"),  # demo.launch.py: rviz_vehicle bot1
    Case("mvsim.rviz", DATA / "multi.world.xml", {"shared_tf_tree": True}),  # any number of vehicles
    Case("mvsim.rviz", DATA / "single.world.xml", {"lockstep_step": 0.5}),  # one vehicle, default options
)
SHARED, SINGLE = CASES[1], CASES[2]


def display_topics(path: Path) -> set[str]:
    """Every topic the displays of an RViz config read (``Topic: {Value: ...}`` or ``Topic: ...``, any key ending in
    ``Topic``, in nested display groups too); the tools (SetGoal, ...) publish, and are left out."""
    doc = yaml.safe_load(path.read_text())
    out: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(k, str) and k.endswith("Topic"):
                    value = v.get("Value") if isinstance(v, dict) else v
                    if isinstance(value, str) and value:
                        out.add(value)
                else:
                    walk(v)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(doc["Visualization Manager"]["Displays"])
    return out


def needed_topics(case: Case) -> set[str]:
    """What RViz subscribes to with this config: its displays' topics and its tf listener's."""
    return display_topics(REPO / "rviz" / case.rviz) | {f"{case.tf_prefix}/tf", f"{case.tf_prefix}/tf_static"}


@pytest.fixture(scope="module")
def nodes(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One node per case, in lockstep, each in its own namespace, with config/mvsim_params.yaml; case key -> ns."""
    tmp = tmp_path_factory.mktemp("rviz")
    procs, spaces = [], {}
    for i, case in enumerate(CASES):
        ns = f"/rviz{i}"
        spaces[case.key] = ns
        procs.append(NodeProcess(case.world, {"lockstep": True, **case.params}, ros_domain, tmp / f"node{i}.log",
                                 extra_args=["--params-file", str(REPO / "config" / "mvsim_params.yaml"),
                                             "-r", f"__ns:={ns}"]))
    try:
        yield spaces
    finally:
        codes = [p.stop() for p in procs]
    assert codes == [0] * len(procs), [p.log()[-2000:] for p in procs]
    for p in procs:  # the parameters file applied (headless: true there; the node notes its absence otherwise)
        assert "running headless" not in p.log()


@pytest.fixture(scope="module")
def probe(ros_context: Any, nodes: dict[str, str]) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_rviz")
    yield p
    p.close()


def step(probe: Probe, ns: str, times: int = 1) -> None:
    for _ in range(times):
        ans = probe.call(Trigger, f"{ns}/mvsim/step", Trigger.Request(), timeout=FIRST_MESSAGE_TIMEOUT)
        assert ans.success, ans.message


# ---------------------------------------------------------------------- configs vs. live topics
def test_every_rviz_config_has_a_case() -> None:
    assert {p.name for p in (REPO / "rviz").glob("*.rviz")} == {c.rviz for c in CASES}
    assert display_topics(REPO / "rviz" / "mvsim.rviz") == {"/simul_map", "/simul_chassis_markers"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_rviz_config_reads_only_published_topics(probe: Probe, nodes: dict[str, str], case: Case) -> None:
    ns = nodes[case.key]
    wanted = {ns + t for t in needed_topics(case)}

    def published() -> set[str]:
        return {name for name, _ in probe.node.get_topic_names_and_types()
                if probe.node.get_publishers_info_by_topic(name)}

    got = probe.spin_until(lambda: wanted <= published() and published(), FIRST_MESSAGE_TIMEOUT,
                           f"the topics of {case.key} under {ns}: {sorted(wanted)}")
    assert wanted <= got


# ---------------------------------------------------------------------- shared tf tree
def test_shared_tf_tree_is_one_tree_with_prefixed_frames(probe: Probe, nodes: dict[str, str]) -> None:
    ns = nodes[SHARED.key]
    tf_box = probe.subscribe(TFMessage, f"{ns}/tf", qos(depth=100))
    static_box = probe.subscribe(TFMessage, f"{ns}/tf_static", qos(transient_local=True, depth=100))
    parents: dict[str, str] = {}

    def tree_complete() -> bool:
        for msg in [*tf_box, *static_box]:
            for tf in msg.transforms:
                parents[tf.child_frame_id] = tf.header.frame_id
        # each vehicle latches its own tf_static: wait for all of them, not only the first
        return all(f"{v}/odom" in parents and f"{v}/base_footprint" in parents for v in MULTI)

    probe.spin_until(lambda: static_box, FIRST_MESSAGE_TIMEOUT, "the latched tf_static")
    step(probe, ns)
    probe.spin_until(tree_complete, 30.0, "odom, map and static frames of every vehicle on one tf topic")
    for v in MULTI:
        assert parents[f"{v}/base_link"] == f"{v}/odom" and parents[f"{v}/odom"] == "map", v
        assert parents[f"{v}/base_footprint"] == f"{v}/base_link", v
    assert parents["r1/laser1"] == "r1/base_link"
    # one tree: every frame reaches map, and no frame is left unprefixed
    for frame in parents:
        assert frame.split("/")[0] in MULTI, f"unprefixed frame {frame!r} in a shared tree"
        chain, f = [frame], frame
        while f in parents:
            f = parents[f]
            chain.append(f)
            assert len(chain) < 10, chain
        assert f == "map", chain


def test_shared_tree_frames_in_odometry_scans_and_markers(probe: Probe, nodes: dict[str, str]) -> None:
    ns = nodes[SHARED.key]
    odom = probe.subscribe(Odometry, f"{ns}/r1/odom")
    gt = probe.subscribe(Odometry, f"{ns}/car1/base_pose_ground_truth")
    scans = probe.subscribe(LaserScan, f"{ns}/r1/laser1")
    every = probe.subscribe(MarkerArray, f"{ns}/simul_chassis_markers", qos(transient_local=True, depth=1))
    own = probe.subscribe(MarkerArray, f"{ns}/car2/chassis_markers", qos(transient_local=True, depth=5))
    all_markers = probe.next_message(every, what="the latched simul_chassis_markers", timeout=FIRST_MESSAGE_TIMEOUT,
                                     start=0).markers
    assert {m.header.frame_id for m in all_markers} == {f"{v}/base_link" for v in MULTI}
    assert all(m.frame_locked for m in all_markers)  # RViz moves each outline with its vehicle's base_link
    assert {m.ns.split("/")[0] for m in all_markers} == set(MULTI)  # one namespace per vehicle: no id clashes
    assert len({(m.ns, m.id) for m in all_markers}) == len(all_markers)
    car2 = probe.next_message(own, what="car2/chassis_markers", start=0).markers
    assert {m.header.frame_id for m in car2} == {"car2/base_link"} and all(m.frame_locked for m in car2)
    probe.spin_until(lambda: probe.node.count_publishers(f"{ns}/r1/laser1"), 30.0, "the r1/laser1 publisher")
    step(probe, ns, 2)
    o = probe.next_message(odom, what="r1/odom", start=0)
    assert (o.header.frame_id, o.child_frame_id) == ("r1/odom", "r1/base_link")
    g = probe.next_message(gt, what="car1 ground truth", start=0)
    assert (g.header.frame_id, g.child_frame_id) == ("map", "car1/base_link")
    scan = probe.next_message(scans, what="r1/laser1", start=0)
    assert scan.header.frame_id == "r1/laser1"
    assert scan.range_min == pytest.approx(0.01)  # the sensor's min_range (its default), not 0


# ---------------------------------------------------------------------- /clock first
def test_clock_is_published_before_anything_stamped_with_it(probe: Probe, nodes: dict[str, str]) -> None:
    """Every stamped message (odometry, tf, scans, IMU) of ~/step calls of 0.5 s is preceded by a /clock carrying
    its stamp: the clock's DDS source timestamp is not later than the message's. Without the fix the node sent
    /clock once at the end of each step call, so no /clock carried the stamps of the messages in between."""
    ns = nodes[SINGLE.key]
    got: dict[str, list[tuple[int, int]]] = {}  # topic -> [(stamp ns, source timestamp ns)]

    def record(topic: str, msg_type: Any, stamp_of: Any, profile: Any) -> None:
        box = got.setdefault(topic, [])

        def cb(msg: Any, info: Any) -> None:
            t = stamp_of(msg)
            if t is not None:
                box.append((t.sec * 1_000_000_000 + t.nanosec, int(info["source_timestamp"])))

        probe.node.create_subscription(msg_type, topic, cb, profile)

    record("/clock", Clock, lambda m: m.clock, qos(reliable=False, depth=1000))
    for topic, msg_type in (("odom", Odometry), ("laser1", LaserScan), ("imu1", Imu)):
        record(f"{ns}/{topic}", msg_type, lambda m: m.header.stamp, qos(depth=1000))
    record(f"{ns}/tf", TFMessage, lambda m: m.transforms[0].header.stamp if m.transforms else None, qos(depth=1000))
    probe.spin_until(lambda: all(probe.node.count_publishers(t) for t in got), 30.0, "the node's publishers")

    def enough() -> bool:
        step(probe, ns)
        probe.spin_for(0.2)
        return len(got[f"{ns}/odom"]) >= 40 and len(got[f"{ns}/laser1"]) >= 8

    probe.spin_until(enough, 120.0, "40 odometry messages and 8 scans")
    probe.spin_for(0.5)  # stragglers
    first_clock: dict[int, int] = {}
    for value, src in got["/clock"]:
        first_clock[value] = min(src, first_clock.get(value, src))
    stamped = [(topic, t, src) for topic, box in got.items() if topic != "/clock" for t, src in box if t > 0]
    matched = [(topic, t, src) for topic, t, src in stamped if t in first_clock]
    # best-effort /clock may lose a sample now and then: most stamps must have theirs
    assert len(matched) >= 0.9 * len(stamped), (
        f"only {len(matched)} of {len(stamped)} stamped messages have a /clock with their stamp")
    late = [(topic, t * 1e-9, (first_clock[t] - src) * 1e-6) for topic, t, src in matched if first_clock[t] > src]
    assert not late, f"(topic, stamp s, /clock later by ms): {late[:10]}"


def test_scan_range_min_is_the_sensors(probe: Probe, nodes: dict[str, str]) -> None:
    """One vehicle, default options: frames unprefixed, range_min from the sensor (single.world.xml: default
    min_range 0.01 m)."""
    ns = nodes[SINGLE.key]
    scans = probe.subscribe(LaserScan, f"{ns}/laser1")
    probe.spin_until(lambda: probe.node.count_publishers(f"{ns}/laser1"), 30.0, "the laser publisher")
    scan = probe.spin_until(lambda: (step(probe, ns), scans)[1], 60.0, "a scan")[-1]
    assert scan.header.frame_id == "laser1" and scan.range_min == pytest.approx(0.01)
    assert secs(scan.header.stamp) > 0
