"""``disable_sim_time_clock`` (pre-1.4 upstream behaviour: wall-clock stamps, no /clock) and ``publish_log_topics``
(the CSV logger's columns as Float64 topics), on ``data/logging.world.xml`` (r1 at (1.5, -0.5), recording)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import FIRST_MESSAGE_TIMEOUT, Float64, NodeProcess, Odometry, Probe, node_fixture, secs

DATA = Path(__file__).resolve().parent / "data"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    tmp = tmp_path_factory.mktemp("wallclock")
    yield from node_fixture(DATA / "logging.world.xml",
                            {"disable_sim_time_clock": True, "publish_log_topics": True}, tmp, ros_domain,
                            env={"MVSIM_TEST_LOG_DIR": str(tmp)})


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_wallclock")
    p.watch = node
    p.subscribe(Odometry, "/odom")
    p.subscribe(Float64, "/log/pose/q0x")
    p.subscribe(Float64, "/log/wheel_1/wheel_pos_y")
    yield p
    p.close()


def test_wall_clock_stamps_and_no_clock_topic(probe: Probe) -> None:
    odom = probe.next_message(probe.inbox["/odom"], timeout=FIRST_MESSAGE_TIMEOUT, what="odom")
    assert abs(secs(odom.header.stamp) - time.time()) < 5.0  # Unix time, not simulated seconds from 0
    assert not [i for i in probe.node.get_publishers_info_by_topic("/clock") if i.node_name == "mvsim"]


def test_log_topics_mirror_the_csv_columns(probe: Probe, node: NodeProcess) -> None:
    x = probe.next_message(probe.inbox["/log/pose/q0x"], timeout=FIRST_MESSAGE_TIMEOUT, what="/log/pose/q0x")
    assert x.data == pytest.approx(1.5, abs=1e-6)
    y = probe.next_message(probe.inbox["/log/wheel_1/wheel_pos_y"], what="/log/wheel_1/wheel_pos_y")
    assert y.data == pytest.approx(0.25)
    assert (node.log_path.parent / "mvsim_r1_pose.csv").is_file()
