"""Compiled kernels: machine code built ahead of time when there is some, numba's JIT otherwise.

Every kernel of the package is declared with :func:`njit` from here (same options as ``numba.njit``). What the name
then holds depends on the mode, read once per process from ``MVSIM_JIT``:

* ``aot`` (the default): when ``make setup`` has built :mod:`mvsim_core._aot` (see :mod:`mvsim_core.aot`), each
  kernel it exports is that extension module's function: no numba import, no cache load, nothing to compile on the
  first call. A kernel it does not export (a feature the build left out, one with several signatures) is a stub that
  turns the whole process over to the JIT on its first call; a threaded one (``parallel=True``, never built) is a
  lazy JIT object instead (below): it compiles alone, and the rest of the process stays on the built code.
* ``jit``: numba's dispatchers, as if the extension module were not there (also what happens when it is missing).
* ``check``: like ``aot``, but each call of a built function first checks that its arguments have the exported
  signature's types and raises :class:`TypeError` naming the kernel where they do not (the extension module trusts
  its callers; the test suite runs in this mode so that a call site passing other types fails there instead of
  crashing a user's process).

The built code is used per kernel module. The build records, beside the package's stamp, the stamp of the files each
kernel module's built code depends on (its own source and every package module it imports, transitively:
:func:`mvsim_core.aot.module_closures`). When the package changed since the build, a kernel module whose files are
unchanged keeps its built functions, and each kernel of a module whose files changed (a *stale* module,
:func:`aot_stale_modules`; the module of the kernel's function or the one that declared it) is a lazy JIT object: on
its first call it compiles its own dispatcher (against its module's names with built functions, stubs and lazy
objects swapped for their dispatchers, ``prange`` for ``numba.prange``), rebinds the package's names of it to that
dispatcher and runs it; the rest of the process stays on the built code. This is sound because an importer's files
include those of everything it imports: every module whose built code could call (inline) a stale module's code is
stale itself, so built code never holds an outdated copy of a changed kernel. The build counts this file among every
module's (the loading rules are here), so an edit here makes every module stale, and a build with no module left
current is ignored as a whole, as is one that recorded no per-module stamps: the JIT then serves the whole process,
as it does in ``jit`` mode. (A lazy JIT kernel takes any types, ``check`` mode included; the dependency files are
found by parsing imports, so a kernel that reaches a package module's code other than through an import of it is not
covered.)

Turning over to the JIT (:func:`use_jit`) imports numba, registers the cache locator below and replaces every
exported function, stub and lazy JIT object bound in the package's modules by its dispatcher, so compiled callers
see compiled callees. ``MVSIM_JIT_RECORD=FILE`` appends at exit the signatures the dispatchers were compiled for (one
JSON line per signature): the input of :mod:`mvsim_core.aot`.

numba's ``cache=True`` keys each cached kernel on its own source file only: when a kernel calls a jitted function
from another module and that module changes, the stale machine code is reused. The locator registered here stamps
the functions of this package with a hash of every ``.py`` file of ``mvsim_core`` instead, so any change to the
package recompiles its kernels (once; the cache then serves every later process). The same stamp tells whether the
ahead-of-time module was built from the current sources.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODE_ENV = "MVSIM_JIT"
RECORD_ENV = "MVSIM_JIT_RECORD"
AOT_MODULE = "mvsim_core._aot"

_PACKAGE_DIR = Path(__file__).resolve().parent
AOT_META = _PACKAGE_DIR / "_aot.json"
"""What the ahead-of-time build wrote beside its extension module: the source stamp and the exports."""


def file_stamps() -> dict[str, str]:
    """``"size mtime_ns"`` of every ``.py`` file of the package, by path relative to it (POSIX): a ``stat`` per
    file, no reads."""
    stack = [_PACKAGE_DIR]
    files: dict[str, str] = {}
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    stack.append(Path(entry.path))
                elif entry.name.endswith(".py"):
                    st = entry.stat()
                    files[Path(entry.path).relative_to(_PACKAGE_DIR).as_posix()] = f"{st.st_size} {st.st_mtime_ns}"
    return files


def files_stamp(stamps: dict[str, str], paths: Any = None) -> str:
    """SHA-256 over the path, size and modification time of the files ``paths`` (all of ``stamps`` when None; a
    path missing from ``stamps`` counts as the word ``missing``)."""
    h = hashlib.sha256()
    for path in sorted(stamps if paths is None else paths):
        h.update(f"{path} {stamps.get(path, 'missing')}".encode() + b"\n")
    return h.hexdigest()


def package_stamp() -> str:
    """SHA-256 over the path, size and modification time of every ``.py`` file of the package: any edit (or
    checkout) changes it, at the cost of a ``stat`` per file instead of reading them all."""
    return files_stamp(file_stamps())


_FILES = file_stamps()
"""The package's file stamps when this process imported it (:func:`file_stamps`)."""
_STAMP = files_stamp(_FILES)


def export_name(key: str) -> str:
    """The extension module's name for the kernel ``module:function``."""
    return key.replace(".", "_").replace(":", "__")


class Kernel:
    """One declared kernel: the Python function, its numba options and what the mode bound to its name."""

    __slots__ = ("key", "py_func", "options", "declared_in", "aot", "stub", "lazy", "dispatcher")

    def __init__(self, key: str, py_func: Callable[..., Any], options: dict[str, Any], declared_in: str) -> None:
        self.key = key
        self.py_func = py_func
        self.options = options
        self.declared_in = declared_in
        """The module that called :func:`njit` (where its options are written): the function's own, or another
        (``rotation_terms = njit(...)(rotations.rotation_terms)``)."""
        self.aot: Callable[..., Any] | None = None
        self.stub: _Stub | None = None
        self.lazy: _LazyJit | None = None
        self.dispatcher: Any = None

    def make_dispatcher(self) -> Any:
        """numba's dispatcher of this kernel (made once). When names its code reads hold built functions, stubs or
        lazy JIT objects (the built module is loaded), or the ``prange`` stand-in, it is compiled against a copy of
        its module's names with their dispatchers (``numba.prange``) there instead."""
        if self.dispatcher is None:
            import numba

            f = self.py_func
            names = f.__globals__
            swap: dict[str, Any] = {}
            for name in f.__code__.co_names:  # the globals its code reads
                value = names.get(name)
                other = _BOUND.get(id(value))
                if other is not None and other is not self:
                    swap[name] = other.make_dispatcher()
                elif value is _PRANGE:
                    swap[name] = numba.prange
            if swap:  # (else its module's own names, live: later definitions included)
                g = types.FunctionType(f.__code__, {**names, **swap}, f.__name__, f.__defaults__, f.__closure__)
                g.__module__, g.__qualname__, g.__doc__ = f.__module__, f.__qualname__, f.__doc__
                f = g
            self.dispatcher = numba.njit(**self.options)(f)
        return self.dispatcher


class _Deferred:
    """What a kernel's name holds until its dispatcher exists (named and wrapping as the Python function)."""

    __slots__ = ("_kernel", "__name__", "__wrapped__")

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel
        self.__name__ = kernel.py_func.__name__
        self.__wrapped__ = kernel.py_func


class _Stub(_Deferred):
    """A kernel without ahead-of-time code: turns the process over to the JIT on its first call."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        use_jit()
        return self._kernel.make_dispatcher()(*args, **kwargs)


class _LazyJit(_Deferred):
    """A kernel of a stale module (:func:`aot_stale_modules`), or a threaded kernel the build never holds: compiles
    its own dispatcher on its first call, without turning the process over to the JIT, and rebinds the package's
    names of it to that dispatcher."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self._kernel.dispatcher
        if d is None:  # first call: every definition of its module is bound by now
            _prepare_numba()
            d = self._kernel.make_dispatcher()
            _rebind({id(self): d})
        return d(*args, **kwargs)


REGISTRY: dict[str, Kernel] = {}
"""Every kernel declared so far, by ``module:function``."""

_BOUND: dict[int, Kernel] = {}
"""The kernel of each built function or stub handed out, by ``id``."""

_JITABLE: list[Callable[..., Any]] = []
_numba_ready = False
_jit_on = False
_mode = os.environ.get(MODE_ENV, "aot").strip().lower()


def aot_meta() -> dict[str, Any] | None:
    """What the last ahead-of-time build wrote (:data:`AOT_META`: source stamp, signatures hash, exports), or None
    when there is none or it cannot be read."""
    try:
        meta = json.loads(AOT_META.read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _load_aot() -> tuple[Any, dict[str, Any]] | None:
    """The extension module and its metadata, when built for these sources and the mode allows it."""
    if _mode == "jit":
        return None
    meta = aot_meta()
    if meta is None or meta.get("stamp") != _STAMP:
        return None
    try:
        import importlib

        return importlib.import_module(AOT_MODULE), meta
    except ImportError:
        return None


def stale_modules(meta: dict[str, Any], stamps: dict[str, str]) -> list[str] | None:
    """The kernel modules the build ``meta`` recorded whose files' stamps differ in ``stamps`` (:func:`file_stamps`),
    sorted; None when the build recorded no per-module stamps (or unreadable ones)."""
    modules = meta.get("modules")
    if not isinstance(modules, dict):
        return None
    try:
        return sorted(m for m, rec in modules.items() if files_stamp(stamps, rec["files"]) != rec["stamp"])
    except (KeyError, TypeError):
        return None


def _load_aot_modules() -> tuple[Any, dict[str, Any], frozenset[str]] | None:
    """The extension module, its metadata and its stale kernel modules, when the package changed since the build
    (else :func:`_load_aot`) but the files of some kernel module the build recorded did not, and the mode allows it."""
    if _mode == "jit":
        return None
    meta = aot_meta()
    if meta is None or meta.get("stamp") == _STAMP:
        return None
    stale = stale_modules(meta, _FILES)
    if stale is None or len(stale) == len(meta["modules"]):  # (an edit of this file makes every module stale)
        return None
    try:
        import importlib

        return importlib.import_module(AOT_MODULE), meta, frozenset(stale)
    except ImportError:
        return None


_AOT = _load_aot()
_STALE: frozenset[str] = frozenset()
if _AOT is None and (_loaded := _load_aot_modules()) is not None:
    _AOT, _STALE = _loaded[:2], _loaded[2]


def aot_active() -> bool:
    """Whether kernels are served by the ahead-of-time module (until something turns the process over to the JIT):
    all of them, or those outside :func:`aot_stale_modules`."""
    return _AOT is not None and not _jit_on


def aot_stale_modules() -> frozenset[str]:
    """The kernel modules (``mvsim_core.a.b``) whose built code this process ignores, as their files changed since
    the build: their kernels are compiled by numba's JIT, each on its first call. Empty when the build is current or
    not used."""
    return _STALE if aot_active() else frozenset()


NEVER_BUILT: set[str] = set()
"""Keys of the kernels declared with ``built=False``: the ahead-of-time build leaves them out."""


def njit(func: Callable[..., Any] | None = None, *, built: bool = True, **options: Any) -> Any:
    """Declare a kernel (``@njit(cache=True)``, options as ``numba.njit``); see the module docstring for what the
    name then holds. ``built=False``: a kernel the ahead-of-time build cannot hold (its arguments have no type it can
    export, e.g. numpy ``Generator`` objects); like a threaded one, it is a lazy JIT object in ``aot`` mode."""

    def declare(f: Callable[..., Any], _depth: int = 1) -> Any:
        key = f"{f.__module__}:{f.__name__}"
        if not built:
            NEVER_BUILT.add(key)
        kernel = Kernel(key, f, options, sys._getframe(_depth).f_globals.get("__name__", f.__module__))
        REGISTRY[key] = kernel
        if _AOT is None or _jit_on:
            use_jit()
            return kernel.make_dispatcher()
        if f.__module__ in _STALE or kernel.declared_in in _STALE:
            kernel.lazy = _LazyJit(kernel)
            _BOUND[id(kernel.lazy)] = kernel
            return kernel.lazy
        module, meta = _AOT
        sig = meta["exports"].get(key)
        fn = getattr(module, export_name(key), None) if sig is not None else None
        if fn is None and (options.get("parallel") or not built):  # (never built: see mvsim_core.threads)
            kernel.lazy = _LazyJit(kernel)
            _BOUND[id(kernel.lazy)] = kernel
            return kernel.lazy
        if fn is None:
            kernel.stub = _Stub(kernel)
            _BOUND[id(kernel.stub)] = kernel
            return kernel.stub
        if _mode == "check":
            fn = _checked(key, fn, sig["args"])
        if f.__defaults__:  # the built function takes every argument: fill in the defaults
            fn = _with_defaults(fn, f.__code__.co_argcount, f.__defaults__)
        kernel.aot = fn
        _BOUND[id(fn)] = kernel
        return kernel.aot

    return declare(func, 2) if func is not None else declare


def _with_defaults(fn: Callable[..., Any], n_args: int, defaults: tuple[Any, ...]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        if len(args) < n_args:
            args = args + defaults[len(args) - (n_args - len(defaults)):]
        return fn(*args)

    return call


def dispatcher(func: Any) -> Any:
    """numba's dispatcher of a kernel of the package, whatever the mode bound to its name (a built function, a stub
    or the dispatcher itself): what your own numba code calls, as built functions cannot be called from there."""
    kernel = _BOUND.get(id(func))
    if kernel is None:
        kernel = next((k for k in REGISTRY.values() if func is k.dispatcher or func is k.py_func), None)
    if kernel is None:
        raise ValueError(f"{func!r} is not a kernel declared with mvsim_core.jit.njit")
    return kernel.make_dispatcher()


def jitable(func: Callable[..., Any]) -> Callable[..., Any]:
    """Make a plain Python function callable from kernels (``numba.extending.register_jitable``) once the JIT is
    used; the function itself is returned unchanged for Python callers."""
    _JITABLE.append(func)
    if _numba_ready:
        from numba.extending import register_jitable

        register_jitable(func)
    return func


def _prange_stand_in(*args: int) -> range:
    """``numba.prange`` in kernels, bound in their modules as this stand-in until the JIT is used."""
    return range(*args)


_PRANGE = _prange_stand_in
prange: Any = _prange_stand_in
"""``numba.prange`` once the JIT is used; kernels import it from here."""


def use_jit() -> None:
    """Turn this process over to numba's JIT (idempotent): every kernel name bound in the package's modules then
    holds its dispatcher."""
    global _jit_on, prange
    if _jit_on:
        return
    _jit_on = True
    import numba

    _prepare_numba()
    swap: dict[int, Any] = {id(_PRANGE): numba.prange}
    prange = numba.prange
    for kernel in REGISTRY.values():
        for bound in (kernel.aot, kernel.stub, kernel.lazy):
            if bound is not None:
                swap[id(bound)] = kernel.make_dispatcher()
    _rebind(swap)


def _prepare_numba() -> None:
    """What any JIT compilation of the package's kernels needs, once: the cache locator, the jitable functions
    registered, the ``MVSIM_JIT_RECORD`` hook."""
    global _numba_ready
    if _numba_ready:
        return
    _numba_ready = True
    from numba.extending import register_jitable

    _install_cache_locator()
    for f in _JITABLE:
        register_jitable(f)
    if os.environ.get(RECORD_ENV):
        atexit.register(_record, os.environ[RECORD_ENV])


def _rebind(swap: dict[int, Any]) -> None:
    """Replace, in every loaded module of the package, each name whose value's ``id`` is a key of ``swap`` by the
    value there."""
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "mvsim_core" or name.startswith("mvsim_core.")):
            continue
        names = vars(mod)
        for attr, value in list(names.items()):
            d = swap.get(id(value))
            if d is not None:
                names[attr] = d


def _checked(key: str, fn: Callable[..., Any], arg_types: list[Any]) -> Callable[..., Any]:
    """``fn`` behind a check of each call's argument types against the exported signature (``check`` mode; numba
    is imported on the first call, to type the arguments)."""
    expected: list[Any] = []
    good: set[tuple[Any, ...]] = set()

    def call(*args: Any) -> Any:
        fast = tuple((type(a), getattr(a, "dtype", None), getattr(a, "ndim", None),
                      getattr(getattr(a, "flags", None), "c_contiguous", None),
                      getattr(getattr(a, "flags", None), "writeable", None)) for a in args)
        if fast not in good:
            import numba

            if not expected:
                expected.extend(spec_type(t) for t in arg_types)
            got = [numba.typeof(a) for a in args]
            if len(got) != len(expected) or not all(_fits(g, e) for g, e in zip(got, expected, strict=True)):
                raise TypeError(f"kernel {key} is compiled for ({', '.join(map(str, expected))}), called with "
                                f"({', '.join(map(str, got))}): pass arrays of these dtypes and layouts, or add the "
                                "signature to mvsim_core/aot_signatures.jsonl")
            good.add(fast)
        return fn(*args)

    call.__name__ = key.rsplit(":", 1)[1]
    return call


def _fits(got: Any, expected: Any) -> bool:
    """Whether a value typed ``got`` may go where the extension module expects ``expected``."""
    from numba.core import types

    if got == expected:
        return True
    if isinstance(expected, types.Array) and isinstance(got, types.Array):
        return (got.dtype == expected.dtype and got.ndim == expected.ndim and (got.mutable or not expected.mutable)
                and (expected.layout == "A" or got.layout == expected.layout))
    if isinstance(expected, types.Float) and isinstance(got, types.Integer | types.Float | types.Boolean):
        return True  # boxed Python numbers convert
    if isinstance(expected, types.Integer) and isinstance(got, types.Integer | types.Boolean):
        return True
    return isinstance(expected, types.Boolean) and isinstance(got, types.Boolean | types.Integer)


def type_spec(t: Any) -> Any:
    """A numba type as JSON data (:func:`spec_type` turns it back), or None for kinds the build skips."""
    from numba.core import types

    if isinstance(t, types.Array):
        dtype = type_spec(t.dtype)
        if not isinstance(dtype, str):
            return None
        return {"array": dtype, "ndim": t.ndim, "layout": t.layout, "readonly": not t.mutable}
    if isinstance(t, types.Boolean):
        return "boolean"
    if isinstance(t, types.Integer | types.Float) and not isinstance(t, types.Literal):
        return str(t)
    if isinstance(t, types.NoneType):
        return "none"
    if isinstance(t, types.UniTuple):
        inner = type_spec(t.dtype)
        return None if inner is None else {"unituple": inner, "count": t.count}
    if isinstance(t, types.Tuple):
        parts = [type_spec(x) for x in t.types]
        return None if None in parts else {"tuple": parts}
    return None


def spec_type(spec: Any) -> Any:
    """The numba type of a :func:`type_spec` (raises ValueError on anything else)."""
    from numba.core import types

    if isinstance(spec, str):
        t = getattr(types, spec, None)
        if not isinstance(t, types.Type):
            raise ValueError(f"not a numba scalar type: {spec!r}")
        return t
    if isinstance(spec, dict) and "array" in spec:
        return types.Array(spec_type(spec["array"]), int(spec["ndim"]), str(spec["layout"]),  # type: ignore[call-overload]
                           readonly=bool(spec["readonly"]))
    if isinstance(spec, dict) and "unituple" in spec:
        return types.UniTuple(spec_type(spec["unituple"]), int(spec["count"]))
    if isinstance(spec, dict) and "tuple" in spec:
        return types.Tuple([spec_type(x) for x in spec["tuple"]])
    raise ValueError(f"not a type spec: {spec!r}")


def _record(path: str) -> None:
    """Append the signatures every dispatcher of the package was compiled for (``MVSIM_JIT_RECORD``)."""
    lines = []
    for key, kernel in sorted(REGISTRY.items()):
        d = kernel.dispatcher
        if d is None:
            continue
        for args in d.signatures:
            ret = d.overloads[args].signature.return_type
            specs = [type_spec(a) for a in args]
            rspec = type_spec(ret)
            if rspec is None or None in specs:
                continue
            lines.append(json.dumps({"kernel": key, "returns": rspec, "args": specs}))
    with open(path, "a") as fh:
        fh.write("".join(line + "\n" for line in lines))


def _install_cache_locator() -> None:
    from numba.core import caching
    from numba.core.caching import InTreeCacheLocator

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")  # noqa: B009 - renamed across versions

    class PackageStampLocator(InTreeCacheLocator):
        """Cache next to the source (``__pycache__``), invalidated by any change to the package's sources."""

        def get_source_stamp(self) -> str:
            return _STAMP

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            try:
                inside = Path(py_file).resolve().is_relative_to(_PACKAGE_DIR)
            except OSError:
                return None
            return super().from_function(py_func, py_file) if inside else None

    if not any(c.__name__ == "PackageStampLocator" for c in impl._locator_classes):
        impl._locator_classes.insert(0, PackageStampLocator)
