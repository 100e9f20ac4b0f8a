"""Pictures of an environment's world: the render modes of :mod:`mvsim_core.gym.env` and
:mod:`mvsim_core.gym.parallel_env`.

* ``"rgb_array"``: the world drawn as the viewer draws it (:class:`~mvsim_core.gui.world_view.WorldView`: scene,
  lidar points, camera frusta; no status panel), offscreen through EGL or OSMesa — no display needed — and returned
  as an (H, W, 3) uint8 array, row 0 at the top. The camera is the world's ``<gui>`` orbit camera.
* ``"human"``: the viewer's window (:class:`~mvsim_core.gui.window.Viewer`, needs a display), one frame per call,
  paced to ``fps`` frames per wall second so that an episode plays in real time.

OpenGL is imported at the first frame, not before.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.errors import MvsimError

if TYPE_CHECKING:
    from mvsim_core.world import World

RENDER_MODES = ("human", "rgb_array")


class EnvRenderer:
    """Frames of ``world`` in ``mode`` (see the module docstring).

    Args:
        world: the world.
        mode: ``"human"`` or ``"rgb_array"``.
        size: (width, height) of the picture or window (px); default the ``<gui>``'s ``win_w`` × ``win_h``.
        fps: frames per wall second of ``human`` mode (0: as fast as they come).
        title: the window's title.
    """

    def __init__(self, world: World, mode: str, size: tuple[int, int] | None = None, fps: float = 0.0,
                 title: str | None = None) -> None:
        if mode not in RENDER_MODES:
            raise MvsimError(f"unknown render mode {mode!r}; modes: {', '.join(RENDER_MODES)}")
        self.world, self.mode, self.fps, self.title = world, mode, float(fps), title
        w, h = size if size is not None else (int(world.gui["win_w"]), int(world.gui["win_h"]))
        if not (w > 0 and h > 0):
            raise MvsimError(f"render size must be positive pixels, got {w} x {h}")
        self.size = (int(w), int(h))
        self._view: Any = None
        self._viewer: Any = None
        self._last = -float("inf")

    def frame(self) -> np.ndarray | None:
        """Draw one frame: the picture in ``rgb_array`` mode, None in ``human`` mode (shown in the window).

        Raises:
            RenderUnavailableError: no offscreen OpenGL (``rgb_array``; the message says what to install).
            ViewerUnavailableError: no window can be opened (``human``: no display, ...).
        """
        if self.mode == "rgb_array":
            if self._view is None:
                from mvsim_core.gui.world_view import WorldView

                self._view = WorldView(self.world)
            rgb = self._view.draw(self.size[0], self.size[1], None, read=True)
            return np.ascontiguousarray(rgb, dtype=np.uint8)
        if self._viewer is None:
            from mvsim_core.gui.window import Viewer

            self._viewer = Viewer(self.world, title=self.title, width=self.size[0], height=self.size[1])
        if self.fps > 0:
            wait = self._last + 1.0 / self.fps - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        self._last = time.perf_counter()
        if not self._viewer.closed:
            self._viewer.frame()
        return None

    def close(self) -> None:
        """Free the GL objects and close the window (idempotent)."""
        view, viewer = self._view, self._viewer
        self._view = self._viewer = None
        if view is not None:
            view.close()
        if viewer is not None:
            viewer.close()
