"""Rendered sensors through the bridge (lockstep): camera Image + CameraInfo, RGB-D images and point cloud, 3D lidar
PointCloud2 — sizes, encodings, intrinsics, frames and the analytic distance to a wall.

World ``data/cameras.world.xml``: r1 at the origin facing +x; a wall whose face is the plane x = 4.0 m; cam1 (80×60,
f = 50 px), rgbd1 (64×48, f = 40 px, depth noise 0) 0.8 m up, lidar1 (8 rings, 90 azimuths) 1.0 m up.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    CameraInfo,
    Image,
    NodeProcess,
    PointCloud2,
    Probe,
    TFMessage,
    Trigger,
    node_fixture,
    qos,
    qos_profile_sensor_data,
)

from mvsim_core.sensors.base import Sensor

DATA = Path(__file__).resolve().parent / "data"
WALL_X = 4.0

pytestmark = pytest.mark.slow

if not all(getattr(Sensor.registry.get(c), "simulated", False) for c in ("camera", "rgbd_camera", "lidar3d")):
    pytest.skip("cameras / 3D lidar are not simulated in this build", allow_module_level=True)

TOPICS = {
    "/cam1/image_raw": Image, "/cam1/camera_info": CameraInfo,
    "/rgbd1_rgb/image_raw": Image, "/rgbd1_rgb/camera_info": CameraInfo,
    "/rgbd1_depth/image_raw": Image, "/rgbd1_depth/camera_info": CameraInfo,
    "/rgbd1_points": PointCloud2, "/lidar1_points": PointCloud2,
}


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    yield from node_fixture(DATA / "cameras.world.xml", {"lockstep": True, "lockstep_step": 0.1},
                            tmp_path_factory.mktemp("cameras"), ros_domain)


@pytest.fixture(scope="module")
def frames(ros_context: Any, node: NodeProcess) -> Iterator[dict[str, Any]]:
    """The first message of every rendered-sensor topic (the node stepped until all arrived)."""
    p = Probe(ros_context, "probe_cameras")
    p.watch = node
    for topic, typ in TOPICS.items():
        p.subscribe(typ, topic, qos_profile_sensor_data if typ is PointCloud2 else qos(depth=5))
    static = p.subscribe(TFMessage, "/tf_static", qos(transient_local=True, depth=1))
    for topic in TOPICS:  # wait until the node publishes every topic, then step until each has arrived
        p.spin_until(lambda t=topic: p.node.get_publishers_info_by_topic(t), FIRST_MESSAGE_TIMEOUT, f"{topic} in graph")
    cli = p.node.create_client(Trigger, "/mvsim/step")
    p.spin_until(cli.service_is_ready, FIRST_MESSAGE_TIMEOUT, "/mvsim/step")
    for _ in range(30):
        fut = cli.call_async(Trigger.Request())
        p.spin_until(fut.done, 60.0, "a step")
        if all(p.inbox[t] for t in TOPICS):
            break
    p.spin_until(lambda: all(p.inbox[t] for t in TOPICS), 30.0, "every rendered-sensor topic")
    p.spin_until(lambda: static, 30.0, "/tf_static")
    out = {t: p.inbox[t][0] for t in TOPICS}
    out["tf_static"] = static[0]
    yield out
    p.close()


def test_camera_image_and_info(frames: dict[str, Any]) -> None:
    img, info = frames["/cam1/image_raw"], frames["/cam1/camera_info"]
    assert (img.width, img.height, img.encoding, img.step) == (80, 60, "rgb8", 240)
    assert img.header.frame_id == info.header.frame_id == "cam1"
    assert img.header.stamp == info.header.stamp
    assert len(img.data) == 80 * 60 * 3
    pixels = np.frombuffer(bytes(img.data), np.uint8).reshape(60, 80, 3)
    assert pixels.std() > 1.0  # a picture, not a blank buffer
    assert list(info.k) == [50.0, 0.0, 40.0, 0.0, 50.0, 30.0, 0.0, 0.0, 1.0]
    assert list(info.p) == [50.0, 0.0, 40.0, 0.0, 0.0, 50.0, 30.0, 0.0, 0.0, 0.0, 1.0, 0.0]


def test_rgbd_depth_reads_the_wall_distance(frames: dict[str, Any]) -> None:
    depth, info = frames["/rgbd1_depth/image_raw"], frames["/rgbd1_depth/camera_info"]
    assert (depth.width, depth.height, depth.encoding, depth.step) == (64, 48, "32FC1", 256)
    assert depth.header.frame_id == info.header.frame_id == "rgbd1_depth"
    d = np.frombuffer(bytes(depth.data), "<f4").reshape(48, 64)
    assert d[24, 32] == pytest.approx(WALL_X, abs=0.01)  # depth along the optical axis, whatever the pixel
    assert np.nanmax(np.abs(d[20:28, 28:36] - WALL_X)) < 0.01
    assert math.isnan(d[0, 0])  # above the wall: no return (REP 118)
    assert list(info.k) == [40.0, 0.0, 32.0, 0.0, 40.0, 24.0, 0.0, 0.0, 1.0]
    rgb = frames["/rgbd1_rgb/image_raw"]
    assert (rgb.width, rgb.height, rgb.encoding) == (64, 48, "rgb8") and rgb.header.frame_id == "rgbd1_rgb"


def test_rgbd_point_cloud_in_the_depth_optical_frame(frames: dict[str, Any]) -> None:
    cloud = frames["/rgbd1_points"]
    assert cloud.header.frame_id == "rgbd1_depth" and cloud.point_step == 12
    pts = np.frombuffer(bytes(cloud.data), "<f4").reshape(-1, 3)
    assert 0 < len(pts) < 64 * 48
    assert np.allclose(pts[:, 2], WALL_X, atol=0.01)  # optical z = depth


def test_lidar3d_cloud_fields_and_wall(frames: dict[str, Any]) -> None:
    cloud = frames["/lidar1_points"]
    assert cloud.header.frame_id == "lidar1"
    assert [f.name for f in cloud.fields] == ["x", "y", "z", "intensity", "ring"] and cloud.point_step == 20
    dt = np.dtype({"names": ["x", "y", "z", "intensity", "ring"], "formats": ["<f4"] * 4 + ["<u2"],
                   "offsets": [0, 4, 8, 12, 16], "itemsize": 20})
    rows = np.frombuffer(bytes(cloud.data), dt)
    assert len(rows) == cloud.width > 0
    assert set(np.unique(rows["ring"])) <= set(range(8))
    ahead = np.abs(np.degrees(np.arctan2(rows["y"], rows["x"]))) < 20
    assert ahead.sum() >= 8 and np.allclose(rows["x"][ahead], WALL_X, atol=0.02)


def test_static_frames_of_cameras(frames: dict[str, Any]) -> None:
    tfs = {(t.header.frame_id, t.child_frame_id): t.transform for t in frames["tf_static"].transforms}
    assert {("base_link", "cam1"), ("base_link", "rgbd1"), ("rgbd1", "rgbd1_depth"), ("rgbd1", "rgbd1_rgb"),
            ("base_link", "lidar1")} <= set(tfs)
    # the depth optical frame: z forward = rgbd1's x; the rotation yaw -90°, roll -90° is q = (-0.5, 0.5, -0.5, 0.5)
    q = tfs[("rgbd1", "rgbd1_depth")].rotation
    assert (q.x, q.y, q.z, q.w) == pytest.approx((-0.5, 0.5, -0.5, 0.5), abs=1e-9)
