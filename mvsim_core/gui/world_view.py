"""A world drawn as the viewer shows it, with any OpenGL context: the window's, or the offscreen one for a screenshot
without a window. Imports OpenGL (through the renderer) when a view is created.

One frame (:meth:`WorldView.draw`): the camera follows its vehicle if it has one; the scene (ground, elements, blocks,
vehicles with spinning and steering wheels — :class:`~mvsim_core.sensors.render.scene_geometry.SceneGeometry`) is
rendered by a :class:`~mvsim_core.sensors.render.renderer.SceneRenderer` into its framebuffer; then the overlays of
:mod:`.overlay_geometry` (lidar points, camera frusta, wheel forces when ``<gui><show_forces>`` is set) and the status
panel are drawn on top. A window then shows the framebuffer (:meth:`WorldView.present`); a screenshot reads it back.
Both therefore get the very same pixels.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from mvsim_core.errors import MvsimError
from mvsim_core.gui import overlay_geometry
from mvsim_core.gui.orbit_camera import OrbitCamera
from mvsim_core.gui.status import TextPanel

if TYPE_CHECKING:
    from mvsim_core.world import World

READER = "viewer"
"""The reader the view wants the sensors it draws as (``Sensor.want``, :mod:`mvsim_core.sensors.demand`)."""

POINT_SIZE = 3.0
"""Size (px) of drawn lidar points."""
PANEL_POSITION = (8, 8)
"""Top-left corner (px) of the status panel."""


class WorldView:
    """Draws ``world`` seen by ``camera`` (see the module docstring).

    Args:
        world: the :class:`~mvsim_core.world.World` (its physics is built if it was not).
        camera: the orbit camera (default: from the world's ``<gui>``).
        context: the GL context to draw with (default: the process's offscreen context).

    Attributes:
        show_sensor_points, show_frusta, show_forces: which overlays are drawn (``<gui>`` options at start).
        force_scale: length of force segments (m per N).

    Raises:
        RenderUnavailableError: no OpenGL context could be had (the message says what to install).
    """

    def __init__(self, world: World, camera: OrbitCamera | None = None, context: Any = None) -> None:
        from mvsim_core.gui.gl_draw import OverlayPainter
        from mvsim_core.sensors.render.renderer import SceneRenderer
        from mvsim_core.sensors.render.scene_geometry import SceneGeometry

        self.world = world
        self.camera = camera if camera is not None else OrbitCamera.from_gui(world.gui)
        gui = world.gui
        self.show_sensor_points = bool(gui["show_sensor_points"])
        self.show_forces = bool(gui["show_forces"])
        self.force_scale = float(gui["force_scale"])
        self.show_frusta = True
        # the view shows the running simulation, visual-only blocks (overlays) included
        self.scene = SceneGeometry(world, world.start().physics, visual_only=True)
        world.warnings.extend(w for w in self.scene.warnings if w not in world.warnings)
        self.renderer = SceneRenderer(self.scene, context=context)
        self.ctx = self.renderer.ctx
        self._rebuilds = world.rebuilds
        self._wanted: list[Any] = []  # the lidars whose points are drawn (wanted as READER)
        self._want_drawn()
        self.panel = TextPanel()
        with self.ctx.bound():
            self.painter = OverlayPainter()

    def _want_drawn(self) -> None:
        """Want the sensors whose observations the overlays draw now (:func:`overlay_geometry.drawn_sensors`), and
        no others: where the world samples on demand, they sample while the view shows them."""
        drawn = overlay_geometry.drawn_sensors(self.world) if self.show_sensor_points else []
        for s in self._wanted:
            if not any(s is d for d in drawn):
                s.unwant(READER)
        for s in drawn:
            s.want(READER)
        self._wanted = drawn
        self._wanting = self.show_sensor_points

    @overload
    def draw(self, width: int, height: int, status: list[str] | None = None, *, read: Literal[True]) -> np.ndarray:
        ...

    @overload
    def draw(self, width: int, height: int, status: list[str] | None = None, *, read: Literal[False] = False) -> None:
        ...

    @overload
    def draw(self, width: int, height: int, status: list[str] | None = None, *,
             read: bool = False) -> np.ndarray | None:
        ...

    def draw(self, width: int, height: int, status: list[str] | None = None, *,
             read: bool = False) -> np.ndarray | None:
        """Draw one ``width`` × ``height`` frame with the ``status`` lines (none: no panel). Returns the picture,
        (H, W, 3) uint8 rows top first, when ``read``; else None (the frame waits for :meth:`present`)."""
        world, cam = self.world, self.camera
        if world.rebuilds != self._rebuilds:
            self._follow_rebuild()
        if self.show_sensor_points != self._wanting:
            self._want_drawn()
        if cam.follow and cam.follow in world.vehicles:
            cam.follow_pose(world.vehicles[cam.follow].pose)
        origin = self.scene.origin
        view, proj = cam.render_matrices(width, height, origin, zero_to_one=self.renderer.reversed_z)
        transforms = self.scene.node_transforms()
        layers: list[tuple[str, np.ndarray, np.ndarray, float]] = []
        if self.show_sensor_points:
            pts, cols = overlay_geometry.sensor_points(world)
            layers.append(("points", pts - origin, cols, POINT_SIZE))
            segs, cols = overlay_geometry.lidar2d_rays(world)
            layers.append(("lines", segs - origin, cols, 1.0))
            for pts, cols, size in overlay_geometry.lidar2d_points(world):
                layers.append(("points", pts - origin, cols, size))
        if self.show_frusta:
            segs, cols = overlay_geometry.camera_frusta(world)
            layers.append(("lines", segs - origin, cols, 1.0))
        if self.show_forces:
            segs, cols = overlay_geometry.wheel_forces(world.physics, self.force_scale)
            layers.append(("lines", segs - origin, cols, 1.0))
        picture = self.panel.image(status) if status else None

        def overlay(v: np.ndarray, p: np.ndarray) -> None:
            for kind, xyz, rgba, size in layers:
                self.painter.primitives(kind, xyz, rgba, v, p, size)
            if picture is not None:
                self.painter.picture(picture, *PANEL_POSITION, width, height, self.panel.version)

        with self.ctx.bound():
            self.renderer.update_nodes(transforms)
            focus = (np.asarray(cam.target, dtype=np.float64) - origin, float(cam.distance))
            frame = self.renderer.render_matrices(view, proj, width, height, rgb=read, depth=False, overlay=overlay,
                                                  focus=focus)
        return frame.rgb

    def present(self, width: int, height: int, dst_width: int, dst_height: int) -> None:
        """Show the last frame (``width`` × ``height``) in the context's window, ``dst_width`` × ``dst_height`` px."""
        self.renderer.present(width, height, dst_width, dst_height)

    def _follow_rebuild(self) -> None:
        """The world rebuilt its physics (``World.reset``, ``spawn``, ``remove``): draw the new one, with the scene
        geometry of the objects there now."""
        from mvsim_core.sensors.render.renderer import SceneRenderer
        from mvsim_core.sensors.render.scene_geometry import SceneGeometry

        world = self.world
        self._rebuilds = world.rebuilds
        old = self.renderer
        self.scene = SceneGeometry(world, world.physics, visual_only=True)
        world.warnings.extend(w for w in self.scene.warnings if w not in world.warnings)
        self.renderer = SceneRenderer(self.scene, context=self.ctx)
        old.close()
        self._want_drawn()

    def close(self) -> None:
        """Free the GL objects and release the sensors drawn."""
        for s in self._wanted:
            s.unwant(READER)
        self._wanted = []
        with self.ctx.bound():
            self.painter.close()
        self.renderer.close()


def save_png(rgb: np.ndarray, path: str | Path) -> Path:
    """Write an (H, W, 3) uint8 picture (rows top first) as a PNG file (folders created); returns the path.

    Raises:
        MvsimError: the file cannot be written (the message names it and the reason).
    """
    from PIL import Image

    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.ascontiguousarray(rgb), mode="RGB").save(out, format="PNG")
    except (OSError, ValueError) as e:
        raise MvsimError(f"cannot save the screenshot to {out}: {e.strerror or e if isinstance(e, OSError) else e}; "
                         f"choose a writable path") from e
    return out


def screenshot(world: World, path: str | Path, width: int | None = None, height: int | None = None,
               status: list[str] | None = None, camera: OrbitCamera | None = None) -> Path:
    """Render ``world`` as the viewer would (offscreen, no window or display needed) and save it as a PNG.

    Args:
        width, height: picture size (px); default: the world's ``<gui>`` ``win_w`` × ``win_h``.
        status: overlay lines (default: none). camera: default from the world's ``<gui>``.

    Raises:
        RenderUnavailableError: no offscreen OpenGL context (the message says what to install).
    """
    w = int(width or world.gui["win_w"])
    h = int(height or world.gui["win_h"])
    view = WorldView(world, camera)
    try:
        rgb = view.draw(w, h, status, read=True)
    finally:
        view.close()
    return save_png(rgb, path)
