"""``/diagnostics`` across processes: its rate (wall clock), its fields, ERROR on a blow-up, the real-time factor.

World ``data/commands.world.xml``: the vehicle ``wreck`` blows up by itself at step 72 (t = 0.36 s, 5 ms steps) and
is reset. The node starts paused (``lockstep``) with ``diagnostics_rate`` 5 Hz; one node serves the module.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import NodeProcess, Probe, node_fixture, qos, secs

si_srv = pytest.importorskip("simulation_interfaces.srv", reason="simulation_interfaces is not built")
si_msg = pytest.importorskip("simulation_interfaces.msg")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
RATE = 5.0  # Hz
KEYS = ["state", "sim_time_s", "real_time_factor", "target_real_time_factor", "steps", "mean_step_time_ms",
        "dropped_lag_s", "late_ticks", "late_ticks_in_period", "faults", "faults_in_period", "errors",
        "errors_in_period", "last_fault", "vehicles"]

ARRIVALS: list[float] = []
"""Wall time (monotonic s) each /diagnostics message arrived at, in order (the same order as the inbox)."""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    yield from node_fixture(DATA / "commands.world.xml", {"lockstep": True, "diagnostics_rate": RATE},
                            tmp_path_factory.mktemp("diag"), ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_diagnostics")
    p.watch = node
    box = p.inbox.setdefault("/diagnostics", [])

    def note(m: Any) -> None:
        ARRIVALS.append(time.monotonic())
        box.append(m)

    p.node.create_subscription(DiagnosticArray, "/diagnostics", note, qos(depth=100))
    p.next_message(box, timeout=90.0, what="the first /diagnostics", start=0)
    yield p
    p.close()


def test_a_negative_or_infinite_rate_is_refused():
    from mvsim_ros2.params import ConfigError, Options

    assert Options.from_values({"diagnostics_rate": 0}).diagnostics_rate == 0.0  # off
    assert Options().diagnostics_rate == 1.0
    for bad in (-1.0, float("inf")):
        with pytest.raises(ConfigError) as e:
            Options.from_values({"diagnostics_rate": bad})
        assert str(e.value) == f"parameter diagnostics_rate={bad!r} is invalid: expected a number >= 0 Hz (0 = not " \
                               f"published)"


def values(msg: Any) -> dict[str, str]:
    (st,) = msg.status
    return {kv.key: kv.value for kv in st.values}


def test_rate_and_fields_while_paused(probe):
    box = probe.inbox["/diagnostics"]
    i0 = len(box)
    probe.spin_for(2.0)  # measuring the rate
    got, arrivals = box[i0:], ARRIVALS[i0:]
    assert 8 <= len(got) <= 12, len(got)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert sum(gaps) / len(gaps) == pytest.approx(1.0 / RATE, abs=0.03)
    for m in got:
        (st,) = m.status
        assert (st.name, st.hardware_id, st.level, st.message) == ("mvsim: simulation", "mvsim",
                                                                   DiagnosticStatus.OK, "paused")
        v = values(m)
        assert list(v) == KEYS
        assert (v["state"], v["steps"], v["mean_step_time_ms"], v["real_time_factor"]) == ("paused", "0", "0", "0")
        assert (v["faults"], v["errors"], v["vehicles"], v["target_real_time_factor"]) == ("0", "0", "4", "1")
        assert float(v["sim_time_s"]) == secs(m.header.stamp)


def test_a_blow_up_reports_error_then_ok_again(probe):
    box = probe.inbox["/diagnostics"]
    i0 = len(box)
    ans = probe.call(si_srv.StepSimulation, "/mvsim/step_simulation", si_srv.StepSimulation.Request(steps=100))
    assert ans.result.result == si_msg.Result.RESULT_OK, ans.result.error_message
    bad = probe.next_message(box, lambda m: m.status[0].level == DiagnosticStatus.ERROR, what="an ERROR status",
                             start=i0)
    st, v = bad.status[0], values(bad)
    fault = "vehicle 'wreck' blew up at t=0.3600 s (step 72): wheel 3 spin became NaN/inf"
    assert st.message.startswith("1 blow-up in the last ") and fault in st.message
    assert v["last_fault"].startswith(fault)
    assert (v["faults"], v["faults_in_period"], v["steps"]) == ("1", "1", "100")
    assert float(v["mean_step_time_ms"]) > 0.0
    assert float(v["sim_time_s"]) == pytest.approx(0.5, abs=1e-9)
    after = probe.next_message(box, what="the next status", start=box.index(bad) + 1)
    assert after.status[0].level == DiagnosticStatus.OK
    assert (values(after)["faults"], values(after)["faults_in_period"]) == ("1", "0")


def test_real_time_factor_while_playing(probe):
    req = si_srv.SetSimulationState.Request(state=si_msg.SimulationState(state=si_msg.SimulationState.STATE_PLAYING))
    assert probe.call(si_srv.SetSimulationState, "/mvsim/set_simulation_state", req).result.result == \
        si_msg.Result.RESULT_OK
    box = probe.inbox["/diagnostics"]
    i0 = len(box)
    probe.spin_until(lambda: len(box) >= i0 + 4, what="4 statuses while playing")
    v = values(box[i0 + 3])  # a full period of play
    assert v["state"] == "playing" and int(v["steps"]) > 0 and float(v["mean_step_time_ms"]) > 0.0
    assert 0.5 < float(v["real_time_factor"]) < 1.5
    if box[i0 + 3].status[0].level == DiagnosticStatus.OK:
        assert box[i0 + 3].status[0].message.startswith("running at ")
