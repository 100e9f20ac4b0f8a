"""Compiled-kernel cache that stays correct across modules.

numba's ``cache=True`` keys each cached kernel on its own source file only: when a kernel calls a jitted function
from another module (the friction models, the terrain queries) and that module changes, the stale machine code is
reused. Importing this module registers a cache locator for the functions of this package whose stamp is a hash
of every ``.py`` file of ``mvsim_core``, so any change to the package recompiles its kernels (once; the cache then
serves every later process).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from numba.core import caching
from numba.core.caching import InTreeCacheLocator

_CacheImpl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")  # noqa: B009 - renamed across numba versions

_PACKAGE_DIR = Path(__file__).resolve().parent


def _package_stamp() -> str:
    h = hashlib.sha256()
    for p in sorted(_PACKAGE_DIR.rglob("*.py")):
        h.update(p.relative_to(_PACKAGE_DIR).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


_STAMP = _package_stamp()


class PackageStampLocator(InTreeCacheLocator):
    """Cache next to the source (``__pycache__``), invalidated by any change to the package's sources."""

    def get_source_stamp(self) -> str:
        return _STAMP

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            inside = Path(py_file).resolve().is_relative_to(_PACKAGE_DIR)
        except OSError:
            return None
        return super().from_function(py_func, py_file) if inside else None


if PackageStampLocator not in _CacheImpl._locator_classes:
    _CacheImpl._locator_classes.insert(0, PackageStampLocator)
