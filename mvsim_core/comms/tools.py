"""Helpers of the ``mvsim node|topic|service`` commands: message printing, rates, text-format input."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from mvsim_core.comms.errors import CommsError
from mvsim_core.comms.proto import MODULES, message_class

MAX_ITEMS = 8
"""Repeated fields longer than this print their first items and the count (``--full`` prints all)."""


def known_types() -> list[str]:
    """Full names of every message this build knows."""
    import importlib

    out: list[str] = []
    for m in MODULES:
        mod = importlib.import_module(f"mvsim_core.comms.proto.{m}")
        out += [d.full_name for d in mod.DESCRIPTOR.message_types_by_name.values()]
    return sorted(out)


def _scalar(field: FieldDescriptor, v: object) -> str:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return f"<{len(v)} bytes>"  # type: ignore[arg-type]
    if field.type == FieldDescriptor.TYPE_STRING:
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if field.type == FieldDescriptor.TYPE_FLOAT:
        return f"{v:.8g}"  # enough digits for a float32, no spurious ones
    if isinstance(v, float):
        return repr(v)  # doubles: the shortest text that reads back exactly (Unix stamps keep their decimals)
    return str(v)


def format_message(msg: Message, full: bool = False, indent: str = "") -> str:
    """A readable, YAML-like dump of ``msg``: one field per line, nested messages indented, long repeated fields
    abbreviated to their first :data:`MAX_ITEMS` values and a count, bytes as their length."""
    lines: list[str] = []
    for field, value in msg.ListFields():
        name = f"{indent}{field.name}"
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            items = list(value) if _is_repeated(field) else [value]
            for i, sub in enumerate(items):
                tag = f"{name}[{i}]:" if _is_repeated(field) else f"{name}:"
                lines.append(tag)
                body = format_message(sub, full, indent + "  ")
                if body:
                    lines.append(body)
        elif _is_repeated(field):
            vals = list(value)
            shown = vals if full or len(vals) <= MAX_ITEMS else vals[:MAX_ITEMS]
            text = ", ".join(_scalar(field, v) for v in shown)
            more = "" if len(shown) == len(vals) else ", ..."
            lines.append(f"{name}: [{text}{more}] ({len(vals)} values)")
        else:
            lines.append(f"{name}: {_scalar(field, value)}")
    return "\n".join(lines)


def _is_repeated(field: FieldDescriptor) -> bool:
    rep = getattr(field, "is_repeated", None)  # protobuf >= 5.28; `label` is deprecated there
    if rep is not None:
        return bool(rep)
    return field.label == FieldDescriptor.LABEL_REPEATED


def message_from_text(type_name: str, text: str) -> Message:
    """A message of type ``type_name`` from protobuf text format (``x: 1 y: 2``); never evaluates anything.

    Raises:
        CommsError: unknown type, text that does not parse, or required fields left out.
    """
    cls = message_class(type_name)
    if cls is None:
        raise CommsError(f"unknown message type '{type_name}'; known types: {', '.join(known_types())}")
    msg = cls()
    try:
        text_format.Parse(text, msg)
    except text_format.ParseError as e:
        raise CommsError(f"cannot read the fields of {type_name} from '{text}': {e}") from None
    missing = msg.FindInitializationErrors()
    if missing:
        raise CommsError(f"{type_name} needs the required field(s) {', '.join(missing)}; e.g. "
                         f"'{_example(cls)}'")
    return msg


def _example(cls: type[Message]) -> str:
    parts = []
    for f in cls.DESCRIPTOR.fields:
        if _is_repeated(f):
            continue
        if f.type == FieldDescriptor.TYPE_MESSAGE:
            sub = message_class(f.message_type.full_name)
            parts.append(f"{f.name} {{ {_example(sub) if sub else ''} }}")
        elif f.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
            parts.append(f'{f.name}: "..."')
        elif f.type == FieldDescriptor.TYPE_BOOL:
            parts.append(f"{f.name}: false")
        else:
            parts.append(f"{f.name}: 0")
    return " ".join(parts)


class RateMeter:
    """Message rate over a sliding window, by arrival (wall) time and by the messages' own stamps.

    ``add(wall_s, stamp_s)``: arrival time (time.monotonic) and the message's stamp in seconds (None when it has
    none). Rates are (n − 1) / (last − first) over the window, in Hz; NaN until two samples.
    """

    def __init__(self, window: int = 1000) -> None:
        self.wall: deque[float] = deque(maxlen=window)
        self.stamps: deque[float] = deque(maxlen=window)
        self.count = 0

    def add(self, wall_s: float, stamp_s: float | None) -> None:
        self.count += 1
        self.wall.append(wall_s)
        if stamp_s is not None and math.isfinite(stamp_s):
            self.stamps.append(stamp_s)

    @staticmethod
    def _rate(ts: Sequence[float]) -> float:
        if len(ts) < 2 or ts[-1] <= ts[0]:
            return math.nan
        return (len(ts) - 1) / (ts[-1] - ts[0])

    @property
    def wall_rate(self) -> float:
        return self._rate(self.wall)

    @property
    def stamp_rate(self) -> float:
        return self._rate(self.stamps)

    def line(self, topic: str) -> str:
        stamp = f"{self.stamp_rate:.3f} Hz (message stamps)" if self.stamps else "no stamps"
        return f"{topic}: {stamp} | {self.wall_rate:.3f} Hz (arrival) | {self.count} messages"


def message_stamp(msg: Message) -> float | None:
    """``unixTimestamp`` of a message that has one (s), else None."""
    if "unixTimestamp" in msg.DESCRIPTOR.fields_by_name and msg.HasField("unixTimestamp"):
        return float(msg.unixTimestamp)
    return None
