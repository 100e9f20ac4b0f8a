"""The ZeroMQ + protobuf interface of the simulator, wire compatible with upstream MVSim.

* :class:`Server` — the directory of nodes, topics and services (``mvsim server``; started by ``mvsim launch``).
* :class:`Client` — a node: call services, publish and subscribe to topics.
* :class:`WorldComms` — a World as the node ``World``: services ``set_pose``, ``get_pose``,
  ``set_controller_twist``, ``shutdown`` and the sensor / pose topics of objects with ``<publish>``.
* :mod:`~mvsim_core.comms.framing` — ``[u32 len][type name][u32 len][protobuf bytes]``.
* :mod:`~mvsim_core.comms.names` — the one rule for node, topic and service names.
* :mod:`~mvsim_core.comms.proto` — the ``mvsim_msgs`` messages (upstream) and ours (``mvsim_core_msgs``).

Importing this package imports ``zmq``; the simulator core never does unless a server or client is asked for.
"""

from mvsim_core.comms.client import Client
from mvsim_core.comms.errors import (
    AddressInUse,
    CommsError,
    CommsTimeout,
    FramingError,
    InvalidName,
    ServiceError,
    UnexpectedMessageError,
)
from mvsim_core.comms.server import DEFAULT_PORT, LOOPBACK, Server
from mvsim_core.comms.world_comms import WorldComms

__all__ = ["DEFAULT_PORT", "LOOPBACK", "AddressInUse", "Client", "CommsError", "CommsTimeout", "FramingError",
           "InvalidName", "Server", "ServiceError", "UnexpectedMessageError", "WorldComms"]
