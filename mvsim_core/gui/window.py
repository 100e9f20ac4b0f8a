"""The desktop viewer: a glfw window showing a running world, with mouse camera control and keyboard teleop.

Imported only when a window is asked for (``mvsim launch`` without ``--headless`` on a machine with a display, the ROS
node with ``headless:=false``): it imports glfw and OpenGL.

The window's OpenGL context is created through **EGL** (GLFW's ``EGL_CONTEXT_API``; X11 and Wayland both offer it),
so that PyOpenGL runs on its ``egl`` platform — the same one the cameras' offscreen contexts use — and windows and
camera sensors work side by side in one process. Mesa's llvmpipe is enough: no GPU is needed.

The viewer does not run its own loop: the runner (CLI or ROS node) steps the world and calls :meth:`Viewer.frame`
whenever :meth:`Viewer.due` says a frame is due. That keeps everything in the main thread (glfw requires it for
events) and lets rendering yield to physics: at ``<gui><refresh_fps>`` while the simulation keeps up, and, while it is
behind its real-time schedule, only as often as keeps the frames under :data:`BEHIND_BUDGET` of the wall time (at
least every :data:`MAX_BEHIND_INTERVAL` s, so the window stays responsive).

Input: left-drag orbits, right- or middle-drag pans (and stops following), the wheel zooms; ``f`` follows the
selected vehicle (or stops), ``o`` toggles the orthographic view, ``h`` hides or shows the status panel, Esc or
closing the window quits; every other key goes to :class:`~mvsim_core.gui.teleop.Teleop` (1–9, w/s/a/d, space, L/C/N).
"""

from __future__ import annotations

import math
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mvsim_core.errors import MvsimError
from mvsim_core.gui.orbit_camera import OrbitCamera
from mvsim_core.gui.status import status_lines
from mvsim_core.gui.teleop import Teleop

if TYPE_CHECKING:
    from mvsim_core.world import World

BEHIND_BUDGET = 0.1
"""Largest share of wall time spent drawing while the simulation is behind its real-time schedule."""
MAX_BEHIND_INTERVAL = 0.5
"""Longest wait (s) between frames while the simulation is behind: the window still answers input."""
INSTALL_HINT = ("a display (DISPLAY or WAYLAND_DISPLAY; without one, run with --headless or under Xvfb: "
                "apt-get install xvfb), glfw (pip install glfw) and Mesa's EGL (apt-get install libegl1 libegl-mesa0 "
                "libgl1-mesa-dri)")


class ViewerUnavailableError(MvsimError):
    """No window could be opened; the message says why and what is needed."""


def display_available() -> bool:
    """Whether this process has a display to open windows on (X11 or Wayland)."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _use_egl_platform() -> None:
    """Make PyOpenGL load its EGL platform (it fixes the platform at its first import)."""
    mod = sys.modules.get("OpenGL.platform")
    plat = getattr(mod, "PLATFORM", None) if mod is not None else None
    if plat is None:
        os.environ["PYOPENGL_PLATFORM"] = "egl"
        return
    if "egl" not in type(plat).__name__.lower():
        raise ViewerUnavailableError(f"PyOpenGL was already loaded for another platform ({type(plat).__name__}) in "
                                     f"this process; the viewer needs PYOPENGL_PLATFORM=egl set before OpenGL is "
                                     f"first imported")


class Viewer:
    """A window on ``world`` (see the module docstring).

    Args:
        world: the :class:`~mvsim_core.world.World` to show.
        title: window title (default: ``mvsim: <world file>``).
        width, height: window size (px); default: ``<gui>`` ``win_w`` × ``win_h``.
        visible: show the window (False: an invisible window, for tests and benchmarks).

    Attributes:
        camera: the :class:`OrbitCamera`. teleop: the :class:`Teleop`. view: the
            :class:`~mvsim_core.gui.world_view.WorldView` drawing the frames.
        frames: frames drawn so far. frame_cost: wall seconds the last frame took (s). fps: frames per wall second
            over the last second (None before the first second).

    Raises:
        ViewerUnavailableError: no window can be opened (no display, no glfw, no EGL); the message says which.
    """

    def __init__(self, world: World, *, title: str | None = None, width: int | None = None, height: int | None = None,
                 visible: bool = True) -> None:
        if not display_available():
            raise ViewerUnavailableError(f"no display to open a window on; needs {INSTALL_HINT}")
        try:
            import glfw
        except ImportError as e:  # pragma: no cover - glfw is a dependency
            raise ViewerUnavailableError(f"cannot import glfw ({e}); needs {INSTALL_HINT}") from e
        _use_egl_platform()
        self.glfw = glfw
        self.world = world
        gui = world.gui
        if not glfw.init():
            raise ViewerUnavailableError(f"glfw could not start ({_glfw_error(glfw)}); needs {INSTALL_HINT}")
        glfw.default_window_hints()
        glfw.window_hint(glfw.CONTEXT_CREATION_API, glfw.EGL_CONTEXT_API)
        glfw.window_hint(glfw.CONTEXT_VERSION_MAJOR, 3)
        glfw.window_hint(glfw.CONTEXT_VERSION_MINOR, 3)
        glfw.window_hint(glfw.OPENGL_PROFILE, glfw.OPENGL_CORE_PROFILE)
        glfw.window_hint(glfw.OPENGL_FORWARD_COMPAT, True)
        glfw.window_hint(glfw.VISIBLE, bool(visible))
        glfw.window_hint(glfw.MAXIMIZED, bool(visible and gui["start_maximized"] and width is None))
        w = int(width or gui["win_w"])
        h = int(height or gui["win_h"])
        name = title or f"mvsim: {Path(str(getattr(world, 'path', 'world'))).name}"
        self.window = glfw.create_window(w, h, name, None, None)
        if not self.window:
            err = _glfw_error(glfw)
            glfw.terminate()
            raise ViewerUnavailableError(f"cannot open an OpenGL 3.3 window through EGL ({err}); needs {INSTALL_HINT}")
        try:
            self.view = self._make_view()
        except Exception:
            glfw.destroy_window(self.window)
            glfw.terminate()
            raise
        self.camera: OrbitCamera = self.view.camera
        self.teleop = Teleop(world)
        self.frames = 0
        self.frame_cost = 0.0
        self.frame_period = 1.0 / max(1.0, float(gui["refresh_fps"]))
        self._last_frame = -math.inf
        self._fps_t0 = time.perf_counter()
        self._fps_frames = 0
        self.fps: float | None = None
        self.rtf: float | None = None
        """The last achieved real-time factor the runner reported (shown in the status overlay)."""
        self.show_status = True
        """Whether the status panel is drawn (``h`` toggles it)."""
        self._buttons: set[int] = set()
        self._cursor: tuple[float, float] | None = None
        self._closed = False
        glfw.set_char_callback(self.window, self._on_char)
        glfw.set_key_callback(self.window, self._on_key)
        glfw.set_mouse_button_callback(self.window, self._on_button)
        glfw.set_cursor_pos_callback(self.window, self._on_cursor)
        glfw.set_scroll_callback(self.window, self._on_scroll)

    def _make_view(self) -> Any:
        from mvsim_core.gui.world_view import WorldView
        from mvsim_core.sensors.render.gl_context import external_context

        glfw, window = self.glfw, self.window

        def make_current() -> Any:
            previous = glfw.get_current_context()
            glfw.make_context_current(window)
            return previous

        def release(previous: Any) -> None:
            glfw.make_context_current(previous)

        def destroy() -> None:  # the Viewer owns the window: close() destroys it, once
            pass

        try:
            ctx = external_context("egl-window", make_current, release, destroy)
        except RuntimeError as e:
            raise ViewerUnavailableError(f"the window's OpenGL is too old: {e}") from e
        with ctx.bound():
            glfw.swap_interval(0)  # the runner paces frames; never block on the display's refresh
        return WorldView(self.world, OrbitCamera.from_gui(self.world.gui), context=ctx)

    # ------------------------------------------------------------------ pacing
    def interval(self, behind: bool) -> float:
        """Seconds between frames: ``1 / refresh_fps``, longer while the simulation is ``behind`` (see the module
        docstring)."""
        if not behind:
            return self.frame_period
        return min(MAX_BEHIND_INTERVAL, max(self.frame_period, self.frame_cost / BEHIND_BUDGET))

    def due(self, now: float, behind: bool = False) -> bool:
        """Whether a frame is due at ``now`` (``time.perf_counter()`` seconds)."""
        return now - self._last_frame >= self.interval(behind)

    def wait_time(self, now: float, behind: bool = False) -> float:
        """Seconds from ``now`` until the next frame is due (0 when it is)."""
        return max(0.0, self._last_frame + self.interval(behind) - now)

    # ------------------------------------------------------------------ frames
    @property
    def closed(self) -> bool:
        """True once the window was closed (Esc, the close button, or :meth:`close`)."""
        return self._closed or bool(self.glfw.window_should_close(self.window))

    def poll(self) -> bool:
        """Handle pending window events (keys go to the teleop, the mouse to the camera). False once closing."""
        if self._closed:
            return False
        with self.world.step_guard or nullcontext():
            self.glfw.poll_events()
        return not self.closed

    def frame(self, rtf: float | None = None) -> bool:
        """Handle window events, then draw and show one frame with ``rtf`` (the achieved real-time factor) in the
        status overlay. Returns False once the window is closing (nothing is drawn then)."""
        t0 = time.perf_counter()
        if rtf is not None:
            self.rtf = rtf
        if not self.poll():
            return False
        w, h = self.glfw.get_framebuffer_size(self.window)
        if w > 0 and h > 0:  # 0 × 0 while minimized
            with self.world.step_guard or nullcontext():
                self.view.draw(w, h, self.status(rtf) if self.show_status else None)
            with self.view.ctx.bound():
                self.view.present(w, h, w, h)
                self.glfw.swap_buffers(self.window)
            self.frames += 1
            self._fps_frames += 1
        t1 = time.perf_counter()
        self.frame_cost = t1 - t0
        self._last_frame = t0  # frames are spaced start to start
        if t1 - self._fps_t0 >= 1.0:
            self.fps = self._fps_frames / (t1 - self._fps_t0)
            self._fps_t0, self._fps_frames = t1, 0
        return True

    def status(self, rtf: float | None = None) -> list[str]:
        """The overlay's lines now (``rtf`` default: the last one :meth:`frame` was given)."""
        return status_lines(self.world, self.teleop, self.rtf if rtf is None else rtf, self.fps, self.camera.follow,
                            self.camera.ortho)

    def screenshot(self, path: str | Path, rtf: float | None = None) -> Path:
        """Draw one frame as the window shows it (status panel included) and save it as a PNG; returns the path."""
        from mvsim_core.gui.world_view import save_png

        w, h = self.glfw.get_framebuffer_size(self.window)
        with self.world.step_guard or nullcontext():
            rgb = self.view.draw(max(1, w), max(1, h), self.status(rtf) if self.show_status else None, read=True)
        return save_png(rgb, path)

    def close(self) -> None:
        """Close the window and free everything (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.view.close()
        finally:
            self.glfw.destroy_window(self.window)
            self.glfw.terminate()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ input
    def _on_char(self, window: Any, codepoint: int) -> None:
        self.key(chr(codepoint))

    def key(self, char: str) -> bool:
        """Handle a typed character (what the window does with a key press); True when it did something."""
        c = char.lower()
        if c == "o":
            self.camera.ortho = not self.camera.ortho
            self.teleop.last_message = "orthographic view" if self.camera.ortho else "perspective view"
            return True
        if c == "h":
            self.show_status = not self.show_status
            return True
        if c == "f":
            veh = self.teleop.vehicle
            if self.camera.follow or veh is None:
                self.camera.follow = ""
                self.teleop.last_message = "camera free"
            else:
                self.camera.follow = veh.name
                self.teleop.last_message = f"following {veh.name}"
            return True
        return self.teleop.key(char)

    def _on_key(self, window: Any, key: int, scancode: int, action: int, mods: int) -> None:
        glfw = self.glfw
        if key == glfw.KEY_ESCAPE and action == glfw.PRESS:
            glfw.set_window_should_close(window, True)

    def _on_button(self, window: Any, button: int, action: int, mods: int) -> None:
        if action == self.glfw.PRESS:
            self._buttons.add(button)
            if self._cursor is None:  # else keep the position of the last motion event (events come queued)
                self._cursor = self.glfw.get_cursor_pos(window)
        elif action == self.glfw.RELEASE:
            self._buttons.discard(button)

    def _on_cursor(self, window: Any, x: float, y: float) -> None:
        glfw = self.glfw
        if self._cursor is None or not self._buttons:
            self._cursor = (x, y)
            return
        dx, dy = x - self._cursor[0], y - self._cursor[1]
        self._cursor = (x, y)
        if glfw.MOUSE_BUTTON_LEFT in self._buttons:
            self.camera.orbit(dx, dy)
        elif self._buttons & {glfw.MOUSE_BUTTON_RIGHT, glfw.MOUSE_BUTTON_MIDDLE}:
            self.camera.follow = ""
            self.camera.pan(dx, dy, glfw.get_window_size(window)[1])

    def _on_scroll(self, window: Any, xoffset: float, yoffset: float) -> None:
        self.camera.zoom(yoffset)


def _glfw_error(glfw: Any) -> str:
    try:
        code, text = glfw.get_error()
    except Exception:  # older bindings
        return "no details"
    if not code:
        return "no details"
    return text.decode(errors="replace") if isinstance(text, bytes) else str(text)
