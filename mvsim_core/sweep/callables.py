"""Functions a spec names as ``module:function`` (a policy, a custom metric), imported with :mod:`importlib`: the
module is found on ``sys.path`` with the spec's folder first; ``function`` may be dotted (``module:Class.method``).
Nothing is evaluated: only a module is imported and attributes are looked up."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mvsim_core.errors import MvsimError, one_line


class CallableError(MvsimError):
    """A ``module:function`` cannot be had (no such module, no such function, not callable, the import raised)."""


def use_folder(folder: Path) -> None:
    """Put ``folder`` first on ``sys.path`` (once), so that modules beside a spec import."""
    d = str(folder)
    if d not in sys.path:
        sys.path.insert(0, d)


def resolve(ref: str, folder: Path | None = None) -> Callable[..., Any]:
    """The function ``ref`` (``module:function``) names, its module imported with ``folder`` first on ``sys.path``.

    Raises:
        CallableError: what went wrong and what to check.
    """
    if folder is not None:
        use_folder(folder)
    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):
            where = f"beside the spec ({folder}) or on sys.path" if folder is not None else "on sys.path"
            raise CallableError(f"{ref}: no module '{module_name}' {where}") from None
        raise CallableError(f"{ref}: importing {module_name} failed: {type(e).__name__}: {one_line(str(e))}") from None
    except Exception as e:  # noqa: BLE001 (the user's module raised while importing: said, not a traceback)
        raise CallableError(f"{ref}: importing {module_name} failed: {type(e).__name__}: {one_line(str(e))}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CallableError(f"{ref}: {module_name} has no '{attr}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CallableError(f"{ref}: '{attr}' is a {type(obj).__name__}, not a function")
    return obj
