"""Typed parameter tables.

Every object in a world file (the world itself, ``<gui>``, an element class, a block, a wheel, a controller, a
sensor, ...) declares its parameters once, as a tuple of :class:`Param`: the tag (or attribute) name, its type, its
upstream default and its unit. :func:`read_params` reads them from one or more nodes — an instance first, then its
class — applies value substitution, converts to the type (degrees become radians here, at parse time) and checks
ranges. Every error names the file, the line, the parameter and what a valid value looks like.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from mvsim_core.errors import quoted
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode

Color = tuple[int, int, int, int]
"""RGBA, each 0..255."""


class Kind(Enum):
    """Parameter types and how each is written."""

    BOOL = "bool"            # true|false|1|0 (case-insensitive)
    INT = "int"              # decimal integer
    FLOAT = "float"          # decimal number
    STRING = "string"        # any text (stripped)
    COLOR = "color"          # #RRGGBB or #RRGGBBAA -> (r, g, b, a) 0..255
    ANGLE = "angle"          # degrees written, radians stored
    POSE2D = "pose2d"        # "x y yaw_deg" -> (x, y, yaw_rad)
    POSE3D = "pose3d"        # "x y z yaw_deg pitch_deg roll_deg" -> (x, y, z, yaw, pitch, roll) in rad
    VEC2 = "vec2"            # "x y"
    VEC3 = "vec3"            # "x y z" (z optional, 0)
    FLOATS = "floats"        # whitespace/comma separated numbers


_EXAMPLE = {
    Kind.BOOL: "true, false, 1 or 0",
    Kind.INT: "an integer such as 10",
    Kind.FLOAT: "a number such as 1.5",
    Kind.STRING: "text",
    Kind.COLOR: "a colour such as #ff8000 or #ff800080",
    Kind.ANGLE: "an angle in degrees such as 90",
    Kind.POSE2D: "'x y yaw_deg' such as '1.0 2.0 90'",
    Kind.POSE3D: "'x y z yaw_deg pitch_deg roll_deg' such as '1 2 0.5 90 0 0'",
    Kind.VEC2: "'x y' such as '1.0 2.0'",
    Kind.VEC3: "'x y [z]' such as '1.0 2.0 0.5'",
    Kind.FLOATS: "numbers separated by spaces such as '-15 -5 5 15'",
}

_COLOR = re.compile(r"#([0-9a-fA-F]{6})([0-9a-fA-F]{2})?$")
_SPLIT = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class Param:
    """One parameter.

    Attributes:
        name: tag name (or attribute name for attribute tables).
        kind: value type.
        default: value used when absent (already in stored units: radians for angles and poses).
        unit: unit of the stored value, for documentation (``"m"``, ``"s"``, ``"rad"``, ``"kg"``, ...).
        min: smallest accepted value (inclusive) for numbers, or None.
        max: largest accepted value (inclusive) for numbers, or None.
        positive: numbers must be > 0.
        aliases: other accepted names (the first found wins).
        doc: one-line meaning.
    """

    name: str
    kind: Kind
    default: Any = None
    unit: str = ""
    min: float | None = None
    max: float | None = None
    positive: bool = False
    aliases: tuple[str, ...] = ()
    doc: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


class ParamValues(dict[str, Any]):
    """Parameter name -> typed value, plus where each explicit value was written (for later checks)."""

    def __init__(self) -> None:
        super().__init__()
        self.where: dict[str, XmlNode] = {}

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


MAX_MAGNITUDE = 1e9
"""Largest magnitude of any number in a world file (m, s, kg, ...): beyond it float32 physics and rendering lose all
precision, and no model needs it (UTM coordinates are below 1e7 m)."""


def _num(text: str) -> float:
    v = float(text.strip())  # raises ValueError
    if not math.isfinite(v):
        raise ValueError("not a finite number")
    if abs(v) > MAX_MAGNITUDE:
        raise ValueError(f"magnitude above {MAX_MAGNITUDE:g}")
    return v


def convert(kind: Kind, text: str) -> Any:
    """Convert the substituted text of a value to ``kind``. Raises ValueError with a short reason."""
    t = text.strip()
    if kind is Kind.STRING:
        return t
    if kind is Kind.BOOL:
        low = t.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ValueError("not a boolean")
    if kind is Kind.INT:
        try:
            return int(t, 10)
        except ValueError:
            f = _num(t)  # accept "25.0"-style integers written by $f{}
            if f.is_integer():
                return int(f)
            raise ValueError("not an integer") from None
    if kind is Kind.FLOAT:
        return _num(t)
    if kind is Kind.ANGLE:
        return math.radians(_num(t))
    if kind is Kind.COLOR:
        m = _COLOR.match(t)
        if not m:
            raise ValueError("not a colour")
        rgb = m.group(1)
        a = int(m.group(2), 16) if m.group(2) else 255
        return (int(rgb[0:2], 16), int(rgb[2:4], 16), int(rgb[4:6], 16), a)
    vals = [_num(x) for x in _SPLIT.split(t) if x]
    if kind is Kind.FLOATS:
        return tuple(vals)
    if kind is Kind.VEC2:
        if len(vals) != 2:
            raise ValueError(f"expected 2 numbers, got {len(vals)}")
        return (vals[0], vals[1])
    if kind is Kind.VEC3:
        if len(vals) not in (2, 3):
            raise ValueError(f"expected 2 or 3 numbers, got {len(vals)}")
        return (vals[0], vals[1], vals[2] if len(vals) == 3 else 0.0)
    if kind is Kind.POSE2D:
        if len(vals) != 3:
            raise ValueError(f"expected 3 numbers, got {len(vals)}")
        return (vals[0], vals[1], math.radians(vals[2]))
    if kind is Kind.POSE3D:
        if len(vals) != 6:
            raise ValueError(f"expected 6 numbers, got {len(vals)}")
        return (vals[0], vals[1], vals[2], math.radians(vals[3]), math.radians(vals[4]), math.radians(vals[5]))
    raise AssertionError(kind)


_KIND_WORD = {Kind.BOOL: "bool", Kind.INT: "integer", Kind.FLOAT: "number", Kind.ANGLE: "angle",
              Kind.COLOR: "colour", Kind.POSE2D: "pose", Kind.POSE3D: "pose", Kind.VEC2: "vector",
              Kind.VEC3: "vector", Kind.FLOATS: "number list", Kind.STRING: "text"}


def parse_value(p: Param, raw: str, node: XmlNode, ctx: ParseContext, *, attr: str | None = None,
                extra: Mapping[str, str] | None = None) -> Any:
    """Substitute, convert and range-check one value of parameter ``p`` written in ``node``."""
    text = ctx.value(raw, node, attr=attr, extra=extra).strip()
    label = f"{attr}=\"...\" of <{node.tag}>" if attr else f"<{node.tag}>"
    try:
        v = convert(p.kind, text)
    except (ValueError, OverflowError) as e:
        reason = str(e)
        detail = f" ({reason})" if reason.startswith(("expected", "not a finite", "magnitude")) else ""
        raise ctx.error(node, f"bad {_KIND_WORD[p.kind]} {quoted(text)} for {label}{detail}; "
                              f"expected {_EXAMPLE[p.kind]}", attr=attr) from None
    if p.kind is Kind.INT and abs(v) > MAX_MAGNITUDE:
        raise ctx.error(node, f"{label} is {text}; integers here are at most {MAX_MAGNITUDE:g} in magnitude",
                        attr=attr)
    if p.kind in (Kind.INT, Kind.FLOAT, Kind.ANGLE):
        if p.positive and not v > 0:
            raise ctx.error(node, f"{label} must be greater than 0{_unit(p)} (got {text}); "
                                  f"negative or zero {p.name} makes no physical sense", attr=attr)
        if p.min is not None and v < p.min:
            raise ctx.error(node, f"{label} must be at least {p.min:g}{_unit(p)} (got {text})", attr=attr)
        if p.max is not None and v > p.max:
            raise ctx.error(node, f"{label} must be at most {p.max:g}{_unit(p)} (got {text})", attr=attr)
    return v


def _unit(p: Param) -> str:
    return f" {p.unit}" if p.unit and p.unit != "rad" else ""


def read_params(table: Sequence[Param], nodes: Iterable[XmlNode | None], ctx: ParseContext, *,
                attrs: bool = False, extra: Mapping[str, str] | None = None) -> ParamValues:
    """Read a parameter table from ``nodes`` (searched in order: instance first, then class).

    Args:
        table: the parameters.
        nodes: where to look (None entries are skipped).
        ctx: parse context.
        attrs: read XML attributes of the nodes instead of child elements.
        extra: extra variables for substitution (a sensor's NAME / PARENT_NAME).

    Returns:
        name -> typed value (the default when absent).
    """
    node_list = [n for n in nodes if n is not None]
    # each node's children indexed once (tag -> first child of that tag): params x children look-ups were quadratic
    firsts: list[dict[str, XmlNode]] = []
    if not attrs:
        for n in node_list:
            index: dict[str, XmlNode] = {}
            for child in n.children:
                index.setdefault(child.tag, child)
            firsts.append(index)
    out = ParamValues()
    for p in table:
        found = False
        for k, n in enumerate(node_list):
            for name in p.names:
                if attrs:
                    if name in n.attrs:
                        out[p.name] = parse_value(p, n.attrs[name], n, ctx, attr=name, extra=extra)
                        out.where[p.name] = n
                        found = True
                        break
                else:
                    c = firsts[k].get(name)
                    if c is not None:
                        out[p.name] = parse_value(p, c.text, c, ctx, extra=extra)
                        out.where[p.name] = c
                        found = True
                        break
            if found:
                break
        if not found:
            out[p.name] = p.default
    return out


def table_names(*tables: Sequence[Param]) -> frozenset[str]:
    """All tag names (with aliases) of the given tables."""
    return frozenset(n for t in tables for p in t for n in p.names)


def warn_unknown_children(node: XmlNode, known: Iterable[str], ctx: ParseContext, what: str = "") -> None:
    """Warn once about each child tag of ``node`` that nothing reads (it is skipped)."""
    known_set = set(known)
    for c in node.children:
        if c.tag not in known_set:
            where = what or f"<{node.tag}>"
            ctx.warn(c, f"unknown tag <{c.tag}> in {where} is ignored")
