"""``<element class="horizontal_plane">``: a flat rectangle at height ``z`` (a floor, or a ceiling).

It is drawn (plain colour or tiled texture) and it is ground: inside its rectangle it offers height ``z`` to the
terrain query, so planes at several heights make a multi-storey world.

A plane may also have an ``<init_pose>`` / ``<init_pose3d>`` and a keyframe ``<animation>`` (reference §1.13): an
elevator or a moving floor. Its rectangle and ``z`` are then given in the plane's own frame, which the pose moves:
the plane is at (x_min + x, x_max + x, y_min + y, y_max + y) and height z + pose z, where (x, y, z) is the initial
pose composed with the keyframes (played by :meth:`Physics.animate <mvsim_core.dynamics.physics.Physics.animate>`).
A plane stays horizontal and axis-aligned: its poses and keyframes may only translate it (yaw, pitch and roll 0).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from mvsim_core.elements.base import WorldElement, check_cull_face, check_ordered, child_node, resolve_asset
from mvsim_core.geometry.extent import Extent
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param
from mvsim_core.xml.simulable import Keyframe, parse_simulable

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics


class HorizontalPlane(WorldElement):
    """An axis-aligned horizontal rectangle in the world frame.

    Attributes:
        texture_path: local texture image, None when none or unavailable.
    """

    xml_class: ClassVar[str] = "horizontal_plane"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("x_min", Kind.FLOAT, -10.0, "m"),
        Param("x_max", Kind.FLOAT, 10.0, "m"),
        Param("y_min", Kind.FLOAT, -10.0, "m"),
        Param("y_max", Kind.FLOAT, 10.0, "m"),
        Param("z", Kind.FLOAT, 0.0, "m", doc="height of the plane"),
        Param("color", Kind.COLOR, (0xA0, 0xA0, 0xA0, 0xFF)),
        Param("enable_shadows", Kind.BOOL, True),
        Param("cull_face", Kind.STRING, "NONE", doc="NONE, BACK or FRONT"),
        Param("texture", Kind.STRING, "", doc="image URI; overrides the colour"),
        Param("texture_size_x", Kind.FLOAT, 1.0, "m", positive=True, doc="texture tile size along X"),
        Param("texture_size_y", Kind.FLOAT, 1.0, "m", positive=True, doc="texture tile size along Y"),
        Param("name", Kind.STRING, ""),
    )

    EXTRA_TAGS: ClassVar[frozenset[str]] = frozenset({"init_pose", "init_pose3d", "animation"})

    texture_path: Path | None
    init_pose: tuple[float, float, float, float, float, float]
    keyframes: list[Keyframe]
    _track: tuple[Any, int] | None = None

    def _load(self, ctx: ParseContext) -> None:
        check_ordered(self, ctx, (("x_min", "x_max"), ("y_min", "y_max")))
        check_cull_face(self, ctx)
        uri = self.params.texture
        self.texture_path = resolve_asset(uri, child_node(self, "texture"), ctx) if uri else None
        spec = parse_simulable([self.node], ctx, what="horizontal_plane", name=self.params.name or "plane",
                               pose_required=False)
        for where, pose in [("init_pose", spec.pose), *((f"keyframe t={k.t:g}", k.pose) for k in spec.keyframes)]:
            if any(abs(a) > 1e-12 for a in pose[3:]):
                node = self.node.child("animation") if where != "init_pose" else (
                    self.node.child("init_pose3d") or self.node.child("init_pose"))
                raise ctx.error(node or self.node, f"a horizontal_plane only moves by translation, but its {where} "
                                                   f"turns it (yaw, pitch, roll = {pose[3]:g}, {pose[4]:g}, "
                                                   f"{pose[5]:g} rad); write 0 for the angles")
        self.init_pose = spec.pose
        self.keyframes = spec.keyframes

    # ------------------------------------------------------------------ where it is
    @property
    def is_animated(self) -> bool:
        """It has keyframes: the physics moves it every step (an elevator, a moving floor)."""
        return bool(self.keyframes)

    def attach_track(self, physics: Physics, k: int) -> None:
        """Read the pose from row ``k`` of ``physics.anim_poses`` from now on."""
        self._track = (physics, k)

    def detach_track(self) -> None:
        """Back to the initial pose (the physics that moved it is gone)."""
        self._track = None

    @property
    def pose(self) -> tuple[float, float, float, float, float, float]:
        """Current pose of the plane's frame (x, y, z, yaw, pitch, roll; world frame, m / rad; angles 0)."""
        if self._track is not None:
            physics, k = self._track
            x, y, z, yaw, pitch, roll = (float(v) for v in physics.anim_poses[k])
            return (x, y, z, yaw, pitch, roll)
        return self.init_pose

    @property
    def rect(self) -> tuple[float, float, float, float]:
        """Current (x_min, x_max, y_min, y_max) in the world frame [m]."""
        p = self.params
        x, y = self.pose[:2]
        return (p.x_min + x, p.x_max + x, p.y_min + y, p.y_max + y)

    @property
    def z(self) -> float:
        """Current height of the plane [m]: ``<z>`` plus the pose's z."""
        return float(self.params.z) + self.pose[2]

    def contains_xy(self, x: float, y: float) -> bool:
        """Whether world ``(x, y)`` [m] lies over the rectangle (borders included)."""
        x0, x1, y0, y1 = self.rect
        return x0 <= x <= x1 and y0 <= y <= y1

    def elevation_at(self, x: float, y: float) -> float | None:
        """``z`` [m] inside the rectangle, None outside."""
        return self.z if self.contains_xy(x, y) else None

    def extent(self) -> Extent:
        """The rectangle where it is now, at its height (a flat box)."""
        x0, x1, y0, y1 = self.rect
        return Extent(x0, x1, y0, y1, self.z, self.z)

    def summary(self) -> str:
        x0, x1, y0, y1 = self.rect
        moving = f", animated ({len(self.keyframes)} keyframes)" if self.is_animated else ""
        return f"horizontal_plane [{x0:g}, {x1:g}] x [{y0:g}, {y1:g}] m at z = {self.z:g} m{moving}"
