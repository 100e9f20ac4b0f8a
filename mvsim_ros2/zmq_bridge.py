"""The world also served over ZMQ (upstream MVSim's comms protocol) from the node's process, for non-ROS clients.

:func:`start` starts a server on ``zmq_port`` (or joins the one already there) and attaches the World as the node
``World``; :func:`close` undoes it without ever keeping the process from exiting. Any comms failure leaves ROS running
(a warning says why).
"""

from __future__ import annotations

import threading
from typing import Any

from mvsim_ros2.params import Options


def start(world: Any, o: Options, logger: Any) -> tuple[Any, Any]:
    """Serve ``world`` over ZMQ if ``o.zmq_server`` (and mvsim_core.comms is available).

    Returns:
        (the attached ``WorldComms``, the ``Server`` this process runs or None when it joined another one), or
        (None, None) when nothing is served.
    """
    if not o.zmq_server:
        return None, None
    try:
        from mvsim_core.comms import CommsError, Server, WorldComms
    except ImportError as e:
        logger.info(f"ZMQ server not available in this build ({e}); ROS only")
        return None, None
    host = "127.0.0.1" if o.zmq_bind in ("0.0.0.0", "*") else o.zmq_bind
    server = Server(o.zmq_port, o.zmq_bind)
    try:
        server.start()
        port = server.port
    except CommsError as e:
        logger.warning(f"ZMQ server not started: {e}; trying to join the server already there")
        server, port = None, o.zmq_port
    comms = WorldComms(world, host, port, timeout=5.0, server=server)  # in-process: World is protected there
    try:
        comms.attach()
    except Exception as e:  # noqa: BLE001 - any comms failure leaves ROS running
        logger.warning(f"ZMQ interface disabled: {e}")
        comms.close()
        if server is not None:
            server.stop()
        return None, None
    where = server.endpoint if server is not None else f"tcp://{host}:{port}"
    logger.info(f"ZMQ: world served as node 'World' on {where} (set zmq_server:=false to disable)")
    return comms, server


def close(comms: Any, server: Any, logger: Any, timeout: float = 10.0) -> None:
    """Unregister the world and stop the server, giving up (with a warning) after ``timeout`` s so that a stuck
    socket never keeps the node from exiting."""
    if comms is None and server is None:
        return

    def work() -> None:
        if comms is not None:
            comms.close()
        if server is not None:
            server.stop()

    worker = threading.Thread(target=work, name="mvsim-zmq-close", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        logger.warning(f"the ZMQ interface did not close within {timeout:g} s; exiting anyway")
