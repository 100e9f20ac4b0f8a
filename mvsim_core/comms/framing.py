"""The wire framing of every ZMQ message (REQ/REP, PUB/SUB, PAIR), byte-compatible with upstream MVSim.

One ZMQ frame holds two length-prefixed byte strings, as MRPT's archive writes a ``std::string``::

    [uint32 little-endian N1][N1 bytes: protobuf full type name, e.g. "mvsim_msgs.SrvGetPose"]
    [uint32 little-endian N2][N2 bytes: the protobuf-serialized message]

A receiver checks the type name against what it expects. Everything here is strict and never trusts a length: a
truncated frame, a length past the end, trailing bytes, a type name that is not a protobuf identifier, or a string
field that is not valid UTF-8 raise :class:`FramingError` without allocating anything the frame size does not already
account for.
"""

from __future__ import annotations

import re
import struct
from typing import TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from mvsim_core.comms.errors import FramingError, UnexpectedMessageError

MAX_TYPE_NAME = 512
"""Longest type name accepted (bytes)."""

_U32 = struct.Struct("<I")
_TYPE_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")

M = TypeVar("M", bound=Message)

_STRING = FieldDescriptor.TYPE_STRING
_MESSAGES = (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP)


def pack(type_name: str, payload: bytes) -> bytes:
    """One frame from a type name and already-serialized protobuf bytes."""
    name = type_name.encode("ascii")
    return b"".join((_U32.pack(len(name)), name, _U32.pack(len(payload)), payload))


def pack_message(msg: Message) -> bytes:
    """One frame carrying ``msg`` (type name = its full protobuf name)."""
    return pack(msg.DESCRIPTOR.full_name, msg.SerializeToString())


def unpack(frame: bytes | memoryview) -> tuple[str, bytes]:
    """(type name, payload bytes) of one frame.

    Raises:
        FramingError: the frame is not exactly two length-prefixed strings, or the name is not a type name.
    """
    buf = memoryview(frame)
    size = len(buf)
    if size < 8:
        raise FramingError(f"frame of {size} bytes is too short: need at least 8 (two uint32 lengths)")
    (n1,) = _U32.unpack_from(buf, 0)
    if n1 == 0 or n1 > MAX_TYPE_NAME:
        raise FramingError(f"type-name length {n1} out of range 1..{MAX_TYPE_NAME}")
    if 4 + n1 + 4 > size:
        raise FramingError(f"truncated frame: type name of {n1} bytes and a length do not fit in {size} bytes")
    name = bytes(buf[4:4 + n1])
    if _TYPE_NAME.fullmatch(name) is None:
        raise FramingError(f"type name {name[:64]!r} is not a protobuf type name")
    (n2,) = _U32.unpack_from(buf, 4 + n1)
    start = 8 + n1
    if start + n2 != size:
        what = "truncated" if start + n2 > size else "trailing bytes after the"
        raise FramingError(f"{what} payload: length field says {n2} bytes, the frame holds {size - start}")
    return name.decode("ascii"), bytes(buf[start:])


def parse(frame: bytes | memoryview, cls: type[M]) -> M:
    """The message of class ``cls`` in ``frame``.

    Raises:
        FramingError: bad framing, or the payload does not parse as ``cls`` (missing required fields included).
        UnexpectedMessageError: the frame carries another type.
    """
    type_name, payload = unpack(frame)
    return parse_payload(type_name, payload, cls)


def parse_payload(type_name: str, payload: bytes, cls: type[M]) -> M:
    """:func:`parse` for an already-unpacked frame."""
    want = cls.DESCRIPTOR.full_name
    if type_name != want:
        raise UnexpectedMessageError(f"expected a {want} message, got {type_name}")
    return parse_bytes(payload, cls)


def parse_bytes(payload: bytes, cls: type[M]) -> M:
    """A ``cls`` message from its serialized bytes, with every required field present (as C++'s ParseFromString).

    Raises:
        FramingError: the bytes do not parse, or required fields are missing.
    """
    want = cls.DESCRIPTOR.full_name
    msg = cls()
    try:
        msg.ParseFromString(payload)
    except Exception as e:  # DecodeError, or anything a hostile payload provokes in the runtime
        raise FramingError(f"payload of {len(payload)} bytes is not a valid {want}: {e}") from None
    missing = msg.FindInitializationErrors()
    if missing:
        raise FramingError(f"payload of {len(payload)} bytes is not a valid {want}: missing required field(s) "
                           f"{', '.join(missing[:8])}")
    bad = _undecoded_string(msg)
    if bad is not None:
        raise FramingError(f"payload of {len(payload)} bytes is not a valid {want}: field {bad} is not valid UTF-8")
    return msg


def _undecoded_string(msg: Message, prefix: str = "") -> str | None:
    """The path (``nodeName``, ``topics[2].topicName``) of the first string field of ``msg`` that did not decode as
    UTF-8, else None.

    proto2 ``string`` fields are not checked by the parser: for invalid UTF-8, protobuf's upb runtime hands the raw
    ``bytes`` back instead of a ``str`` (and code reading the field as text then fails far away, as ``ord()`` on
    ints). Here such a field is found right after parsing, so every decoded message holds only ``str`` text.
    """
    for fd, value in msg.ListFields():
        path = prefix + fd.name
        if fd.type == _STRING:
            if fd.is_repeated:
                for i, v in enumerate(value):
                    if not isinstance(v, str):
                        return f"{path}[{i}]"
            elif not isinstance(value, str):
                return path
        elif fd.type in _MESSAGES:
            if fd.is_repeated:
                items = value.values() if fd.message_type.GetOptions().map_entry else value
                for i, v in enumerate(items):
                    if isinstance(v, Message):
                        bad = _undecoded_string(v, f"{path}[{i}].")
                        if bad is not None:
                            return bad
            else:
                bad = _undecoded_string(value, path + ".")
                if bad is not None:
                    return bad
    return None


def decode(frame: bytes | memoryview) -> Message:
    """The message in ``frame``, of whatever known type it names.

    Raises:
        FramingError: bad framing or payload.
        UnexpectedMessageError: the type name is not one of the known messages (``mvsim_msgs``, ``mvsim_core_msgs``).
    """
    type_name, payload = unpack(frame)
    return decode_payload(type_name, payload)


def decode_payload(type_name: str, payload: bytes) -> Message:
    """:func:`decode` for an already-unpacked frame."""
    from mvsim_core.comms.proto import message_class

    cls = message_class(type_name)
    if cls is None:
        raise UnexpectedMessageError(f"unknown message type {type_name}")
    return parse_payload(type_name, payload, cls)
