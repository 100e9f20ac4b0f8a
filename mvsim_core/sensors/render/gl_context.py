"""An offscreen OpenGL context for headless rendering: no display, no GPU needed (Mesa llvmpipe does the work).

:func:`get_context` creates one context per process on first use and returns it afterwards. Backends, in order:

1. **EGL surfaceless** (``PYOPENGL_PLATFORM=egl``, ``EGL_PLATFORM=surfaceless`` unless already set): a desktop
   OpenGL ≥ 3.3 core context with no surface; rendering goes to framebuffer objects. Needs ``libegl1``,
   ``libegl-mesa0``, ``libgl1-mesa-dri`` (and ``libgbm1``).
2. **OSMesa** (``PYOPENGL_PLATFORM=osmesa``): Mesa's pure software context. Needs ``libosmesa6``.

PyOpenGL fixes its platform at the first ``import OpenGL.GL`` of the process, so the variables are set right before
that import, and only here: importing :mod:`mvsim_core` (or any world without cameras) never imports OpenGL. If the
process already imported OpenGL for another platform (say a GLX window), that platform is kept and only the backend
matching it is tried. Setting ``MVSIM_GL_BACKEND=egl`` or ``osmesa`` forces one backend.

The context is made current around each use (:meth:`GLContext.bound`) and released afterwards, restoring what was
current before, so rendering works from any thread (one at a time: :meth:`bound` holds a process-wide lock).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from mvsim_core.errors import MvsimError

MIN_GL_VERSION = (3, 3)
"""Oldest OpenGL version the renderer needs (core profile; 4.5 adds reversed-Z depth through glClipControl)."""

INSTALL_HINT = ("install the Mesa packages (Debian/Ubuntu: apt-get install libegl1 libegl-mesa0 libopengl0 libgl1 "
                "libglx-mesa0 libgl1-mesa-dri libgbm1 libosmesa6 — see scripts/apt-packages.txt) and PyOpenGL "
                "(pip install 'PyOpenGL>=3.1.7')")


class RenderUnavailableError(MvsimError):
    """No offscreen OpenGL context could be created (cameras cannot render). The message lists what was tried."""


class GLContext:
    """A created offscreen context.

    Attributes:
        backend: ``"egl"`` or ``"osmesa"``.
        version: (major, minor) OpenGL version of the context.
        renderer: the GL_RENDERER string (e.g. ``llvmpipe (LLVM 15.0.6, 256 bits)``).
        has_clip_control: whether ``glClipControl`` (GL 4.5 / ARB_clip_control) is available.
        display: which display the context lives on: ``"surfaceless"`` (EGL, Mesa's surfaceless platform),
            ``"default"`` (EGL's default display), ``"osmesa"``, or what made an external context.
    """

    def __init__(self, backend: str, make_current: Callable[[], Any], release: Callable[[Any], None],
                 destroy: Callable[[], None]) -> None:
        self.backend = backend
        self._make_current = make_current
        self._release = release
        self._destroy = destroy
        self._lock = threading.RLock()
        self._depth = 0
        self._saved: Any = None
        self.version: tuple[int, int] = (0, 0)
        self.renderer = ""
        self.has_clip_control = False
        self.display = backend
        self.garbage: list[Callable[[], None]] = []
        """GL deletions queued by objects collected while the context was not current; run at the next use."""

    @contextlib.contextmanager
    def bound(self) -> Iterator[GLContext]:
        """Make the context current in this thread for the ``with`` block (re-entrant; thread-safe)."""
        with self._lock:
            if self._depth == 0:
                self._saved = self._make_current()
            self._depth += 1
            try:
                if self.garbage:
                    pending, self.garbage = self.garbage, []
                    for fn in pending:
                        with contextlib.suppress(Exception):
                            fn()
                yield self
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release(self._saved)
                    self._saved = None

    def destroy(self) -> None:
        """Destroy the context (the next :func:`get_context` creates a new one)."""
        with self._lock:
            self._destroy()

    def __repr__(self) -> str:
        return f"<GLContext {self.backend} GL {self.version[0]}.{self.version[1]} {self.renderer}>"


_context: GLContext | None = None
_failure: RenderUnavailableError | None = None
_create_lock = threading.Lock()


def get_context() -> GLContext:
    """The process's offscreen context, created on first call.

    Raises:
        RenderUnavailableError: neither EGL nor OSMesa could give an OpenGL ≥ 3.3 context; the message says what
            each backend reported and what to install. The failure is remembered (later calls raise it at once).
    """
    global _context, _failure
    if _context is not None:
        return _context
    if _failure is not None:
        raise _failure
    with _create_lock:
        if _context is not None:
            return _context
        if _failure is not None:
            raise _failure
        errors: list[str] = []
        for backend in _candidates():
            try:
                ctx = _create(backend)
            except Exception as e:  # ctypes/PyOpenGL/EGL raise many unrelated types
                errors.append(f"{backend}: {type(e).__name__}: {e}")
                continue
            _context = ctx
            return ctx
        _failure = RenderUnavailableError(
            "cannot create an offscreen OpenGL context for camera rendering (tried "
            + "; ".join(errors) + f"); {INSTALL_HINT}")
        raise _failure


def available() -> tuple[bool, str]:
    """(True, description) when an offscreen context can be had, else (False, the reason). Creates the context."""
    try:
        ctx = get_context()
    except RenderUnavailableError as e:
        return False, str(e)
    return True, repr(ctx)


def external_context(backend: str, make_current: Callable[[], Any], release: Callable[[Any], None],
                     destroy: Callable[[], None]) -> GLContext:
    """A :class:`GLContext` around a context made elsewhere (the viewer's window), with its version read and checked.

    ``make_current()`` makes it current and returns what was current before; ``release(saved)`` restores that.

    Raises:
        RuntimeError: the context is older than :data:`MIN_GL_VERSION`.
    """
    ctx = GLContext(backend, make_current, release, destroy)
    with ctx.bound():
        _check_version(ctx)
    return ctx


# ---------------------------------------------------------------------------------------------------- backends
def _platform_loaded() -> str | None:
    """The PyOpenGL platform already chosen in this process (``egl``, ``osmesa``, ``glx``...), or None."""
    mod = sys.modules.get("OpenGL.platform")
    plat = getattr(mod, "PLATFORM", None) if mod is not None else None
    if plat is None:
        return None
    name = type(plat).__name__.lower()
    for key in ("egl", "osmesa", "glx", "wgl", "darwin"):
        if key in name:
            return key
    return name


def _candidates() -> list[str]:
    forced = os.environ.get("MVSIM_GL_BACKEND", "").strip().lower()
    loaded = _platform_loaded()
    if loaded is not None:
        return [loaded] if loaded in ("egl", "osmesa") else [f"loaded:{loaded}"]
    if forced in ("egl", "osmesa"):
        return [forced]
    first = os.environ.get("PYOPENGL_PLATFORM", "").strip().lower()
    return ["osmesa", "egl"] if first == "osmesa" else ["egl", "osmesa"]


def _select_platform(backend: str) -> None:
    """Set the environment for ``backend`` and (re)load PyOpenGL's platform for it."""
    loaded = _platform_loaded()
    if loaded == backend:
        return
    if loaded is not None:  # a failed earlier backend of ours: forget PyOpenGL entirely and start again
        for name in [m for m in sys.modules if m == "OpenGL" or m.startswith("OpenGL.")]:
            del sys.modules[name]
    os.environ["PYOPENGL_PLATFORM"] = backend
    if backend == "egl":
        os.environ.setdefault("EGL_PLATFORM", "surfaceless")
    import OpenGL.platform  # noqa: F401  (loads the platform chosen above)


def _create(backend: str) -> GLContext:
    if backend.startswith("loaded:"):
        raise RuntimeError(f"PyOpenGL was already imported for the '{backend[7:]}' platform in this process; "
                           f"offscreen rendering needs PYOPENGL_PLATFORM=egl or osmesa set before OpenGL is "
                           f"first imported")
    _select_platform(backend)
    ctx = _create_egl() if backend == "egl" else _create_osmesa()
    try:
        with ctx.bound():
            _check_version(ctx)
    except Exception:
        with contextlib.suppress(Exception):
            ctx.destroy()
        raise
    return ctx


def _check_version(ctx: GLContext) -> None:
    from OpenGL import GL

    major = GL.glGetIntegerv(GL.GL_MAJOR_VERSION)
    minor = GL.glGetIntegerv(GL.GL_MINOR_VERSION)
    ctx.version = (int(major), int(minor))
    r = GL.glGetString(GL.GL_RENDERER)
    ctx.renderer = r.decode() if isinstance(r, bytes) else str(r)
    if ctx.version < MIN_GL_VERSION:
        raise RuntimeError(f"OpenGL {ctx.version[0]}.{ctx.version[1]} ({ctx.renderer}); need "
                           f"{MIN_GL_VERSION[0]}.{MIN_GL_VERSION[1]} or newer")
    ctx.has_clip_control = bool(GL.glClipControl) if ctx.version >= (4, 5) else False


def _create_egl() -> GLContext:
    from OpenGL import EGL

    display = EGL.EGL_NO_DISPLAY
    get_platform_display = getattr(EGL, "eglGetPlatformDisplayEXT", None)
    # Mesa's surfaceless platform whenever it exists (unless the user chose another EGL_PLATFORM): never the X11 or
    # Wayland display, which a viewer window in this process may have initialised and terminated through glfw.
    if os.environ.get("EGL_PLATFORM", "surfaceless") == "surfaceless" and get_platform_display:
        with contextlib.suppress(Exception):
            display = get_platform_display(0x31DD, EGL.EGL_DEFAULT_DISPLAY, None)  # EGL_PLATFORM_SURFACELESS_MESA
    kind = "surfaceless"
    if not display:
        display = EGL.eglGetDisplay(EGL.EGL_DEFAULT_DISPLAY)
        kind = "default"
    if not display:
        raise RuntimeError("eglGetDisplay found no display")
    major, minor = EGL.EGLint(), EGL.EGLint()
    if not EGL.eglInitialize(display, ctypes.pointer(major), ctypes.pointer(minor)):
        raise RuntimeError("eglInitialize failed")
    if not EGL.eglBindAPI(EGL.EGL_OPENGL_API):
        raise RuntimeError("eglBindAPI(EGL_OPENGL_API) failed: this EGL has no desktop OpenGL")
    context = EGL.EGL_NO_CONTEXT
    for version in ((4, 5), MIN_GL_VERSION):
        attrs = (EGL.EGLint * 7)(EGL.EGL_CONTEXT_MAJOR_VERSION, version[0], EGL.EGL_CONTEXT_MINOR_VERSION, version[1],
                                 EGL.EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL.EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                 EGL.EGL_NONE)
        context = EGL.eglCreateContext(display, EGL.EGLConfig(), EGL.EGL_NO_CONTEXT, attrs)
        if context:
            break
    if not context:
        raise RuntimeError(f"eglCreateContext failed for OpenGL {MIN_GL_VERSION[0]}.{MIN_GL_VERSION[1]} core "
                           f"(error 0x{EGL.eglGetError():x}); EGL_KHR_surfaceless_context and configless contexts "
                           f"are needed (Mesa provides both)")

    def make_current() -> Any:
        saved = (EGL.eglGetCurrentDisplay(), EGL.eglGetCurrentSurface(EGL.EGL_DRAW),
                 EGL.eglGetCurrentSurface(EGL.EGL_READ), EGL.eglGetCurrentContext())
        if not EGL.eglMakeCurrent(display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, context):
            raise RenderUnavailableError(f"eglMakeCurrent failed (error 0x{EGL.eglGetError():x})")
        return saved

    def release(saved: Any) -> None:
        d, draw, read, prev = saved if saved is not None else (None, None, None, None)
        if prev and d:
            EGL.eglMakeCurrent(d, draw, read, prev)
        else:
            EGL.eglMakeCurrent(display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, EGL.EGL_NO_CONTEXT)

    def destroy() -> None:
        global _context
        EGL.eglMakeCurrent(display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, EGL.EGL_NO_CONTEXT)
        EGL.eglDestroyContext(display, context)
        if _context is not None and _context._destroy is destroy:
            _context = None

    ctx = GLContext("egl", make_current, release, destroy)
    ctx.display = kind
    return ctx


def _create_osmesa() -> GLContext:
    from OpenGL import GL, arrays
    from OpenGL import osmesa as om

    attrs = arrays.GLintArray.asArray([om.OSMESA_FORMAT, om.OSMESA_RGBA, om.OSMESA_DEPTH_BITS, 24,
                                       om.OSMESA_PROFILE, om.OSMESA_CORE_PROFILE,
                                       om.OSMESA_CONTEXT_MAJOR_VERSION, MIN_GL_VERSION[0],
                                       om.OSMESA_CONTEXT_MINOR_VERSION, MIN_GL_VERSION[1], 0])
    context = om.OSMesaCreateContextAttribs(attrs, None)
    if not context:
        raise RuntimeError(f"OSMesaCreateContextAttribs failed for OpenGL {MIN_GL_VERSION[0]}.{MIN_GL_VERSION[1]} "
                           f"core")
    buf = arrays.GLubyteArray.zeros((1, 1, 4))  # rendering goes to FBOs; the window buffer is a 1x1 dummy

    def make_current() -> Any:
        if not om.OSMesaMakeCurrent(context, buf, GL.GL_UNSIGNED_BYTE, 1, 1):
            raise RenderUnavailableError("OSMesaMakeCurrent failed")
        return None

    def release(saved: Any) -> None:  # OSMesa contexts stay current; nothing else shares this platform
        del saved

    def destroy() -> None:
        global _context
        om.OSMesaDestroyContext(context)
        if _context is not None and _context._destroy is destroy:
            _context = None

    return GLContext("osmesa", make_current, release, destroy)
