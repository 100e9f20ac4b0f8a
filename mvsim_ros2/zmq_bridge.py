"""The world also served over ZMQ (upstream MVSim's comms protocol) from the node's process, for non-ROS clients.

:func:`start` starts this node's own server and attaches the World as the node ``World``; :func:`close` undoes it
without ever keeping the process from exiting. The port: ``zmq_port`` when the parameter is set (taken: a
:class:`~mvsim_ros2.params.ConfigError` naming it, so the node exits 2), else 23700, or a free port (logged as a
warning) when 23700 is taken — by another simulation, most often; the node never joins another simulation's server.
Any other comms failure leaves ROS running (a warning says why).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from mvsim_ros2.params import ConfigError, Options

if TYPE_CHECKING:
    from mvsim_core.world import World


def start(world: World, o: Options, logger: Any, *, port_set: bool = False) -> tuple[Any, Any]:
    """Serve ``world`` over ZMQ if ``o.zmq_server`` (and mvsim_core.comms is available).

    Args:
        port_set: whether the user set ``zmq_port`` (then it must be free) or it is the default (then a free port
            is taken when it is busy).

    Returns:
        (the attached ``WorldComms``, the ``Server`` this process runs), or (None, None) when nothing is served.

    Raises:
        ConfigError: ``zmq_port`` was set and is taken.
    """
    if not o.zmq_server:
        return None, None
    try:
        from mvsim_core.comms import AddressInUse, CommsError, Server, WorldComms
    except ImportError as e:
        logger.info(f"ZMQ server not available in this build ({e}); ROS only")
        return None, None
    host = "127.0.0.1" if o.zmq_bind in ("0.0.0.0", "*") else o.zmq_bind
    try:
        try:
            server = Server(o.zmq_port, o.zmq_bind).start()
        except AddressInUse as e:
            if port_set:
                raise ConfigError(f"parameter zmq_port={o.zmq_port}: {e}; set another zmq_port, leave it unset to "
                                  f"serve on a free one, or zmq_server:=false") from None
            server = Server(0, o.zmq_bind).start()
            logger.warning(f"port {o.zmq_port} is in use (another simulation?); this one serves ZMQ on "
                           f"{server.endpoint}")
    except CommsError as e:
        logger.warning(f"ZMQ interface disabled: {e}")
        return None, None
    comms = WorldComms(world, host, server.port, timeout=5.0, server=server)  # in-process: World is protected there
    try:
        comms.attach()
    except Exception as e:  # noqa: BLE001 - any comms failure leaves ROS running
        logger.warning(f"ZMQ interface disabled: {e}")
        comms.close()
        server.stop()
        return None, None
    logger.info(f"ZMQ: world served as node 'World' on {server.endpoint} (set zmq_server:=false to disable)")
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
