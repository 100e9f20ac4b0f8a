"""World elements: the ``<element class="...">`` entries of a world file (reference §1.9).

Every element class is a subclass of :class:`WorldElement` that names its XML class in ``xml_class``; defining the
subclass registers it, so adding an element touches one file. :func:`element_from_xml` reads ``class="..."`` and
builds the right one.

A subclass declares ``PARAMS`` (its child tags with upstream defaults and units), ``EXTRA_TAGS`` (other child tags it
reads itself, such as ``<door>``), and overrides :meth:`WorldElement._load` to load files and check values. Unknown
child tags are reported once as warnings and skipped, as upstream does silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from mvsim_core.errors import quoted
from mvsim_core.geometry.extent import Extent
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Param, ParamValues, read_params, table_names, warn_unknown_children

CULL_FACES = ("NONE", "BACK", "FRONT")
"""Accepted values of ``<cull_face>`` (MRPT ``TCullFace`` names)."""


class WorldElement:
    """Base of world elements; subclasses set ``xml_class`` and register themselves.

    Attributes:
        node: the ``<element>`` node it was read from.
        params: its ``PARAMS`` table, typed (metres, radians, RGBA tuples); defaults where absent.
    """

    xml_class: ClassVar[str] = ""
    registry: ClassVar[dict[str, type[WorldElement]]] = {}
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    EXTRA_TAGS: ClassVar[frozenset[str]] = frozenset()

    node: XmlNode
    params: ParamValues

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.xml_class:
            WorldElement.registry[cls.xml_class] = cls

    def __init__(self, node: XmlNode, params: ParamValues) -> None:
        self.node = node
        self.params = params

    @classmethod
    def known_tags(cls) -> frozenset[str]:
        """Child tags this class reads."""
        return table_names(cls.PARAMS) | cls.EXTRA_TAGS

    @classmethod
    def from_xml(cls, node: XmlNode, ctx: ParseContext) -> WorldElement:
        """Build the element described by ``node`` (on the base class: dispatch on ``class="..."``)."""
        if not cls.xml_class:
            return element_from_xml(node, ctx)
        warn_unknown_children(node, cls.known_tags(), ctx, what=f'<element class="{cls.xml_class}">')
        element = cls(node, read_params(cls.PARAMS, [node], ctx))
        element._load(ctx)
        return element

    def _load(self, ctx: ParseContext) -> None:
        """Subclass hook: read extra children, load files, validate. Raise ``ctx.error(...)`` on bad input."""

    def summary(self) -> str:
        """One line describing the element, for ``mvsim check``."""
        return self.xml_class

    def elevation_at(self, x: float, y: float) -> float | None:
        """Ground height this element provides at world point ``(x, y)`` [m], or None if none here."""
        return None

    def extent(self) -> Extent | None:
        """The box (world frame, m) of what this element puts in the world for the physics and the sensors, or
        None for elements that hold nothing solid (ground grids, skyboxes, point clouds, property regions)."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.summary()!r} at {self.node.where()}>"


def element_from_xml(node: XmlNode, ctx: ParseContext) -> WorldElement:
    """Build a world element from an ``<element class="...">`` node.

    Raises:
        WorldFileError: missing or unknown ``class`` (the message lists the known classes), or any error of the
            element itself.
    """
    import mvsim_core.elements  # noqa: F401  (registers every element class)

    known = ", ".join(sorted(WorldElement.registry))
    name = ctx.attr(node, "class")
    if not name:
        raise ctx.error(node, f'<{node.tag}> needs a class="..." attribute; known classes: {known}')
    cls = WorldElement.registry.get(name)
    if cls is None:
        raise ctx.error(node, f"unknown element class {quoted(name)}; known classes: {known}", attr="class")
    return cls.from_xml(node, ctx)


# ---------------------------------------------------------------------------------------------------------- helpers
def child_node(element: WorldElement, tag: str) -> XmlNode:
    """The node where ``tag`` was written (for error lines), or the element node itself."""
    return element.params.where.get(tag) or element.node.child(tag) or element.node


def resolve_asset(uri: str, node: XmlNode, ctx: ParseContext) -> Path | None:
    """Local file of a texture/model URI (local path, ``http(s)://``, ``.../x.zip/inner``), or None.

    An unavailable asset is reported once through ``ctx.missing_asset`` (a warning, never an error).
    """
    from mvsim_core.io.remote_assets import resolve_model_uri

    if node.file and not node.file.startswith("<"):
        base = str(Path(node.file).resolve().parent)
    else:
        base = str(Path.cwd())
    res = resolve_model_uri(uri, base)
    if res.local_path is None:
        ctx.missing_asset(uri, node, res.reason)
        return None
    return Path(res.local_path)


def check_cull_face(element: WorldElement, ctx: ParseContext, name: str = "cull_face") -> str:
    """Validate and normalise a ``<cull_face>`` value to NONE / BACK / FRONT."""
    value = str(element.params[name]).upper()
    if value not in CULL_FACES:
        raise ctx.error(child_node(element, name), f"bad <{name}> '{element.params[name]}'; expected one of "
                                                   f"{', '.join(CULL_FACES)}")
    element.params[name] = value
    return value


def check_ordered(element: WorldElement, ctx: ParseContext, pairs: Sequence[tuple[str, str]]) -> None:
    """Check ``params[lo] <= params[hi]`` for each ``(lo, hi)`` pair (box limits)."""
    for lo, hi in pairs:
        if element.params[lo] > element.params[hi]:
            raise ctx.error(child_node(element, hi), f"<{hi}> ({element.params[hi]:g}) must not be smaller than "
                                                     f"<{lo}> ({element.params[lo]:g})")
