"""Protobuf messages of the ZMQ interface.

* ``mvsim_msgs`` (package of the ``*.proto`` files named after each message): upstream MVSim's wire protocol, same
  message names, fields, labels and tags, one message per file as upstream; the generated modules are
  ``<Message>_pb2``, e.g. ``from mvsim_core.comms.proto import SrvGetPose_pb2``.
* ``mvsim_core_msgs`` (``mvsim_core_msgs.proto`` → ``mvsim_core_msgs_pb2``): our typed sensor messages (IMU, GNSS, 3D
  lidar, camera, RGB-D), documented in the .proto file.

The ``*_pb2`` modules are generated and committed; regenerate with ``python -m mvsim_core.comms.proto.generate``.
:func:`load_all` (called by :func:`message_class`) imports every generated module, which registers its messages in
protobuf's default descriptor pool, so a class can be found by its full type name (as carried in each frame).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from google.protobuf import message as _message
from google.protobuf import symbol_database as _symbol_database

_HERE = Path(__file__).resolve().parent
MODULES: tuple[str, ...] = tuple(sorted(p.stem + "_pb2" for p in _HERE.glob("*.proto")))
"""Names of the generated modules (one per .proto source)."""

_loaded = False


def load_all() -> None:
    """Import every generated module (idempotent)."""
    global _loaded
    if not _loaded:
        for m in MODULES:
            importlib.import_module(f"{__name__}.{m}")
        _loaded = True


def message_class(type_name: str) -> type[_message.Message] | None:
    """The message class of a full protobuf type name (``mvsim_msgs.Pose``), or None when unknown."""
    load_all()
    try:
        return _symbol_database.Default().GetSymbol(type_name)
    except KeyError:
        return None
