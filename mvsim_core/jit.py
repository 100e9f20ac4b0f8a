"""Compiled kernels: machine code built ahead of time when there is some, numba's JIT otherwise.

Every kernel of the package is declared with :func:`njit` from here (same options as ``numba.njit``). What the name
then holds depends on the mode, read once per process from ``MVSIM_JIT``:

* ``aot`` (the default): when ``make setup`` has built :mod:`mvsim_core._aot` (see :mod:`mvsim_core.aot`) for the
  package's current sources, each kernel it exports is that extension module's function: no numba import, no cache
  load, nothing to compile on the first call. A kernel it does not export (a feature the build left out, one with
  several signatures, a parallel one) is a stub that turns the whole process over to the JIT on its first call.
* ``jit``: numba's dispatchers, as if the extension module were not there (also what happens when it is missing or
  was built for other sources).
* ``check``: like ``aot``, but each call first checks that its arguments have the exported signature's types and
  raises :class:`TypeError` naming the kernel where they do not (the extension module trusts its callers; the test
  suite runs in this mode so that a call site passing other types fails there instead of crashing a user's process).

Turning over to the JIT (:func:`use_jit`) imports numba, registers the cache locator below and replaces every
exported function and stub bound in the package's modules by its dispatcher, so compiled callers see compiled
callees. ``MVSIM_JIT_RECORD=FILE`` appends at exit the signatures the dispatchers were compiled for (one JSON line per
signature): the input of :mod:`mvsim_core.aot`.

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


_STAMP = package_stamp()


def export_name(key: str) -> str:
    """The extension module's name for the kernel ``module:function``."""
    return key.replace(".", "_").replace(":", "__")


class Kernel:
    """One declared kernel: the Python function, its numba options and what the mode bound to its name."""

    __slots__ = ("key", "py_func", "options", "aot", "stub", "dispatcher")

    def __init__(self, key: str, py_func: Callable[..., Any], options: dict[str, Any]) -> None:
        self.key = key
        self.py_func = py_func
        self.options = options
        self.aot: Callable[..., Any] | None = None
        self.stub: _Stub | None = None
        self.dispatcher: Any = None

    def make_dispatcher(self) -> Any:
        """numba's dispatcher of this kernel (made once). When names its code reads hold built functions or stubs
        (the built module is loaded), it is compiled against a copy of its module's names with their dispatchers
        there instead."""
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


class _Stub:
    """A kernel without ahead-of-time code: turns the process over to the JIT on its first call."""

    __slots__ = ("_kernel", "__name__", "__wrapped__")

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel
        self.__name__ = kernel.py_func.__name__
        self.__wrapped__ = kernel.py_func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        use_jit()
        return self._kernel.make_dispatcher()(*args, **kwargs)


REGISTRY: dict[str, Kernel] = {}
"""Every kernel declared so far, by ``module:function``."""

_BOUND: dict[int, Kernel] = {}
"""The kernel of each built function or stub handed out, by ``id``."""

_JITABLE: list[Callable[..., Any]] = []
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


_AOT = _load_aot()


def aot_active() -> bool:
    """Whether kernels are served by the ahead-of-time module (until something turns the process over to the JIT)."""
    return _AOT is not None and not _jit_on


def njit(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Declare a kernel (``@njit(cache=True)``, options as ``numba.njit``); see the module docstring for what the
    name then holds."""

    def declare(f: Callable[..., Any]) -> Any:
        key = f"{f.__module__}:{f.__name__}"
        kernel = Kernel(key, f, options)
        REGISTRY[key] = kernel
        if _AOT is None or _jit_on:
            use_jit()
            return kernel.make_dispatcher()
        module, meta = _AOT
        sig = meta["exports"].get(key)
        fn = getattr(module, export_name(key), None) if sig is not None else None
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

    return declare(func) if func is not None else declare


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
    if _jit_on:
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
    from numba.extending import register_jitable

    _install_cache_locator()
    for f in _JITABLE:
        register_jitable(f)
    swap: dict[int, Any] = {id(_PRANGE): numba.prange}
    prange = numba.prange
    for kernel in REGISTRY.values():
        for bound in (kernel.aot, kernel.stub):
            if bound is not None:
                swap[id(bound)] = kernel.make_dispatcher()
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "mvsim_core" or name.startswith("mvsim_core.")):
            continue
        names = vars(mod)
        for attr, value in list(names.items()):
            d = swap.get(id(value))
            if d is not None:
                names[attr] = d
    if os.environ.get(RECORD_ENV):
        atexit.register(_record, os.environ[RECORD_ENV])


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
