"""Fixtures of the ROS 2 bridge tests (see ros_harness.py): one rclpy context per test process, on its own domain."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ros_domain() -> int:
    """The ROS_DOMAIN_ID of this test process (the node subprocesses get it too)."""
    from ros_harness import pick_domain_id

    return pick_domain_id()


@pytest.fixture(scope="session")
def ros_context(ros_domain: int) -> Iterator[Any]:
    """An initialised rclpy Context on ``ros_domain``, loopback-only discovery; shut down at the end."""
    from ros_harness import start_session

    ctx = start_session(ros_domain)
    yield ctx
    ctx.try_shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """rosidl's parser (imported by rclpy for type descriptions) uses lark, which imports deprecated modules."""
    mark = pytest.mark.filterwarnings("ignore:module 'sre_(parse|constants)' is deprecated:DeprecationWarning")
    for item in items:
        if "mvsim_ros2" in item.nodeid.split("::")[0]:
            item.add_marker(mark)
