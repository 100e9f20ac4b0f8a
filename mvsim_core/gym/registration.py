"""The Gymnasium ids of the environments here, made known to ``gymnasium.make`` by ``import mvsim_core``.

Gymnasium 1.4 loads no plugins (its registration module reads no entry points): a package makes its ids known by
calling ``gymnasium.register``. Importing gymnasium costs more than ``import mvsim_core`` itself (~120 ms against
~100 ms here, bytecode cached), so ``import mvsim_core`` does not import it. :func:`register_on_import` registers the
ids at once when gymnasium is already imported; otherwise it puts a finder on ``sys.meta_path`` that waits for
``gymnasium.envs.registration`` to be imported (by ``import gymnasium`` or anything else), registers the ids right after
that module has run, and takes itself off the path. Either import order works::

    import mvsim_core, gymnasium
    env = gymnasium.make("mvsim/GoalReaching-v0")

What it costs ``import mvsim_core``: importing this module (0.35 ms of ~100 ms, bytecode cached) and putting the finder
first on ``sys.meta_path``, where each later import asks it first (one string comparison); ``benchmarks/bench_gym.py``
measures it.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

log = logging.getLogger("mvsim_core.gym")

TRIGGER = "gymnasium.envs.registration"
"""The module after whose first import the ids are registered."""

ENVIRONMENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "mvsim/GoalReaching-v0": ("mvsim_core.gym.goal_reaching_env:GoalReachingEnv", {}),
    "mvsim/GoalReachingAckermann-v0": ("mvsim_core.gym.goal_reaching_env:GoalReachingEnv", {"variant": "ackermann"}),
}
"""id -> (entry point, keyword arguments) of every registered configuration."""

VECTOR_ENTRY_POINT = "mvsim_core.gym.goal_reaching_env:goal_reaching_vector_env"
"""What ``gymnasium.make_vec(id, num_envs)`` makes for these ids by default: an
:class:`~mvsim_core.gym.vector_env.MvsimVectorEnv` (``vectorization_mode="sync"`` or ``"async"`` still give
Gymnasium's own)."""


def register_envs(registration: ModuleType | None = None) -> list[str]:
    """Register the ids of :data:`ENVIRONMENTS` that Gymnasium does not know yet; returns those registered.

    Args:
        registration: the module ``gymnasium.envs.registration`` (default: imported here).
    """
    module: Any = registration
    if module is None:
        import gymnasium.envs.registration as module
    added = []
    for env_id, (entry_point, kwargs) in ENVIRONMENTS.items():
        if env_id not in module.registry:
            module.register(id=env_id, entry_point=entry_point, vector_entry_point=VECTOR_ENTRY_POINT,
                            kwargs=dict(kwargs))
            added.append(env_id)
    return added


class _RegisteringLoader:
    """Runs the module with the loader found for it, then registers the ids into it."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._inner.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        try:
            register_envs(module)
        except Exception as e:  # a registry that changed shape: gymnasium must still import
            log.warning("could not register the mvsim Gymnasium environments: %s", e)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, is_package, ... of the real loader
        return getattr(self._inner, name)


class _RegisterAfterImport:
    """A ``sys.meta_path`` finder that answers for :data:`TRIGGER` only, once: the spec the other finders give, with
    a loader that registers the ids after running the module."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> ModuleSpec | None:
        if fullname != TRIGGER:
            return None
        _remove_finders()
        spec = importlib.util.find_spec(fullname)  # the other finders (this one is off the path now)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _RegisteringLoader(spec.loader)  # type: ignore[assignment]
        return spec


def _remove_finders() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterImport)]


def register_on_import() -> None:
    """Make the ids known to Gymnasium now if it is imported, else as soon as it is (see the module docstring)."""
    registration = sys.modules.get(TRIGGER)
    if registration is not None and hasattr(registration, "registry"):
        register_envs(registration)
        return
    if not any(isinstance(f, _RegisterAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())  # ahead of the finder that would find it
