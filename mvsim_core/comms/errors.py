"""Errors of the ZMQ interface (all are :class:`~mvsim_core.errors.MvsimError`, so the CLI prints them cleanly)."""

from __future__ import annotations

from mvsim_core.errors import MvsimError


class CommsError(MvsimError):
    """Something went wrong talking to a server, a service or a publisher."""


class FramingError(CommsError):
    """A frame is not ``[u32 LE len][type name][u32 LE len][protobuf bytes]``, or its payload does not parse."""


class UnexpectedMessageError(CommsError):
    """A frame carries another message type than the one expected (or one this side does not know)."""


class CommsTimeout(CommsError):
    """No answer within the time limit (is the server running? is the port right?)."""


class ServiceError(CommsError):
    """A service call failed: unknown service, or the service answered an error."""


class AddressInUse(CommsError):
    """A server could not listen: its TCP port is taken (most often by another simulation). ``port`` is that port;
    the caller decides the way out (another port, or a free one when the port was only the default)."""

    def __init__(self, message: str, port: int) -> None:
        super().__init__(message)
        self.port = port


class InvalidName(CommsError):
    """A node, topic or service name breaks the name rule (:mod:`mvsim_core.comms.names`)."""
