"""ROS 2 topic and frame names of a simulation: the one source of truth for the ROS node (:mod:`mvsim_ros2.naming`
re-exports these) and for the MCAP recorder (:mod:`mvsim_core.record.mcap_recorder`), so that both write the same names.

Naming (upstream's rule): with exactly one vehicle, its topics have no prefix (``odom``, ``tf``, ``laser1``) unless
``force_publish_vehicle_namespace`` is set; otherwise every vehicle topic is ``<V>/<name>``, including ``<V>/tf`` and
``<V>/tf_static``. Frames are not prefixed unless ``shared_tf_tree`` is set (then ``<V>/<frame>``, and every
vehicle's transforms go on the node's ``tf`` / ``tf_static``). No ROS import here: plain strings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mvsim_core.output_kind import OutputKind

if TYPE_CHECKING:
    from mvsim_core.outputs import Output

ODOM_FRAME = "odom"
BASE_FRAME = "base_link"
FOOTPRINT_FRAME = "base_footprint"
DEFAULT_WORLD_FRAME = "map"

CHASSIS_MARKERS_ALL = "simul_chassis_markers"
"""World topic with every vehicle's chassis markers (namespaces ``<V>/mvsim.chassis_shape...``), for RViz configs that
work with any number of vehicles; published when the vehicles' frames are distinct (a shared tf tree, or one
vehicle)."""


def vehicle_prefix(vehicle: str, n_vehicles: int, force_namespace: bool) -> str:
    """Topic prefix: ``""`` for a lone vehicle (unless forced), else ``"<vehicle>/"``."""
    return "" if n_vehicles == 1 and not force_namespace else f"{vehicle}/"


def frame_prefix(vehicle: str, shared_tf_tree: bool) -> str:
    """Frame prefix of a vehicle's frames: ``"<vehicle>/"`` in a shared tf tree, else ``""``."""
    return f"{vehicle}/" if shared_tf_tree else ""


def tf_topics(topic_prefix: str, shared_tf_tree: bool) -> tuple[str, str]:
    """(tf, tf_static) topics of a vehicle: the node's ``tf``/``tf_static`` in a shared tree, else under the vehicle's
    topic prefix (``<V>/tf``; plain ``tf`` for a lone vehicle)."""
    p = "" if shared_tf_tree else topic_prefix
    return f"{p}tf", f"{p}tf_static"


def rgbd_frames(sensor_name: str) -> tuple[str, str]:
    """(rgb optical frame, depth optical frame) of an RGB-D camera."""
    return f"{sensor_name}_rgb", f"{sensor_name}_depth"


# ---------------------------------------------------------------------- output topics (base = "<prefix><output name>")
def single_topic(base: str) -> dict[str, str]:
    """One topic named as the output (laser, imu, gnss; odometry, collision): key ``main``."""
    return {"main": base}


def points_topic(base: str) -> dict[str, str]:
    """A 3D lidar's PointCloud2 topic ``<base>_points``: key ``points``."""
    return {"points": f"{base}_points"}


def camera_topics(base: str) -> dict[str, str]:
    """A camera's ``<base>/image_raw`` and ``<base>/camera_info``: keys ``image``, ``info``."""
    return {"image": f"{base}/image_raw", "info": f"{base}/camera_info"}


def rgbd_topics(base: str) -> dict[str, str]:
    """An RGB-D camera's images, camera infos (``<base>_rgb/...``, ``<base>_depth/...``) and ``<base>_points``."""
    return {"rgb_image": f"{base}_rgb/image_raw", "rgb_info": f"{base}_rgb/camera_info",
            "depth_image": f"{base}_depth/image_raw", "depth_info": f"{base}_depth/camera_info",
            "points": f"{base}_points"}


KIND_TOPICS: dict[OutputKind, Callable[[str], dict[str, str]]] = {
    OutputKind.SCAN: single_topic,
    OutputKind.POINT_CLOUD: points_topic,
    OutputKind.IMAGE: camera_topics,
    OutputKind.RGBD: rgbd_topics,
    OutputKind.IMU: single_topic,
    OutputKind.FIX: single_topic,
    OutputKind.ODOMETRY: single_topic,
    OutputKind.COLLISION: single_topic,
    OutputKind.JOINT_STATE: single_topic,
    OutputKind.ROBOT_DESCRIPTION: single_topic,
}
"""Output kind (:class:`mvsim_core.output_kind.OutputKind`) → its topics, from the topic base ``<prefix><name>``
(a vehicle's outputs: ``<prefix>odom``, ``<prefix>base_pose_ground_truth``, ``<prefix>collision``)."""


def output_topics(output: Output, prefix: str) -> dict[str, str]:
    """The topics of one output of a sensor or vehicle (:class:`mvsim_core.outputs.Output`): its kind's
    (:data:`KIND_TOPICS`) under ``<prefix><output.name>``; ``prefix`` is a vehicle's topic prefix
    (:func:`vehicle_prefix`; the MCAP recorder puts a ``/`` before it)."""
    return KIND_TOPICS[output.kind](f"{prefix}{output.name}")

