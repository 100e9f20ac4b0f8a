"""What can be spawned into a running world: its vehicle, block and actor classes (GetSpawnables).

Each class is offered as the resource string ``<vehicle class="NAME"/>`` (``<block ...>``, ``<actor ...>``), which
``spawn_entity`` accepts as it is (give the new entity a name in the request), with a description — the XML comment
written just before the class definition when there is one, else a summary made from the definition — and the box
(:class:`~mvsim_core.geometry.extent.Extent`, m) an object of the class takes in its own frame (x forward, z up,
origin at its reference point on the ground), or None where no object of it can be built alone.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mvsim_core.errors import MvsimError
from mvsim_core.geometry.extent import Extent

if TYPE_CHECKING:
    from mvsim_core.world import World
    from mvsim_core.xml.node import XmlNode

KINDS = ("vehicle", "block", "actor")
ORIGIN = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
PROBE_NAME = "spawnable_probe"
"""Name of the throwaway object built to measure a class (never added to the world)."""
_COMMENT = re.compile(r"<!--(.*?)-->\s*\Z", re.S)


@dataclass(frozen=True)
class Spawnable:
    """One class: ``kind`` (vehicle, block, actor), ``name``, the resource string that spawns it, a one-paragraph
    ``description``, where it is defined (``file:line``) and its box in its own frame (m; None: unknown)."""

    kind: str
    name: str
    resource: str
    description: str
    where: str
    extent: Extent | None


def catalogue(world: World) -> list[Spawnable]:
    """The world's classes (vehicle classes, then block classes, then actor classes; each in definition order).

    The boxes come from one object of each class built with :attr:`World.object_parser` and thrown away (the world's
    random generator is left as it was); call it where the world is not being stepped (the node's step guard).
    """
    tables = {"vehicle": world.vehicle_classes, "block": world.block_classes, "actor": world.actor_classes}
    out = []
    for kind in KINDS:
        for name, node in tables[kind].items():
            resource = f'<{kind} class="{name}"/>'
            extent, summary = _probe(world, resource)
            note = comment_before(node)
            text = note or summary or f"{kind} class '{name}'"
            out.append(Spawnable(kind, name, resource, f"{kind} class '{name}': {text}", node.where(), extent))
    return out


def comment_before(node: XmlNode) -> str:
    """The text of the XML comment written just before ``node``'s element in its file (only blank space between),
    whitespace collapsed; "" when there is none or the file cannot be read."""
    try:
        lines = Path(node.file).read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return ""
    if not 1 <= node.line <= len(lines):
        return ""
    head = lines[node.line - 1]
    start = head.find(f"<{node.tag}")
    before = "".join(lines[:node.line - 1]) + (head[:start] if start >= 0 else "")
    m = _COMMENT.search(before)
    if m is None:
        return ""
    body = m.group(1)
    if "<!--" in body:  # the match began at an earlier comment: keep the last one
        body = body.rsplit("<!--", 1)[1]
    return " ".join(body.split())


def _probe(world: World, resource: str) -> tuple[Extent | None, str]:
    """(box in the object's frame, summary line) of a throwaway object built from ``resource``; (None, "") when it
    cannot be built."""
    parse = world.object_parser
    if parse is None:
        return None, ""
    saved = world.rng
    world.rng = copy.deepcopy(saved)  # building draws from the generator: the run must not see it
    try:
        obj = parse(world, resource, name=PROBE_NAME, pose=(0.0, 0.0, 0.0))
        extent = obj.extent(ORIGIN)
        summary = obj.summary() if hasattr(obj, "summary") else ""
    except (MvsimError, ValueError, KeyError):
        return None, ""
    finally:
        world.rng = saved
    summary = re.sub(rf"^{PROBE_NAME} \[class [^]]*\]: |, at \([^)]*\)", "", summary)
    return extent, summary
