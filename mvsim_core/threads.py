"""How many threads the compiled kernels may use: the ``MVSIM_THREADS`` setting.

Work that is the same for every vehicle, wheel or ray (the friction kernel, the controller batch, the read-back, the
lidar casts) has, besides its one-thread kernel, a threaded variant (numba ``parallel=True`` with ``prange`` over
vehicles or over runs of rays). Each iteration of such a loop writes only its own outputs and does the same
arithmetic in the same order as the one-thread kernel, so results are bit-identical whatever the thread count (the
tests compare them byte for byte).

``MVSIM_THREADS`` (read once, when first needed): a whole number ≥ 1; default: the cores this process may run on
(``os.sched_getaffinity``). ``1`` keeps every kernel on one thread (and on the ahead-of-time built code, without
importing numba). :func:`set_threads` changes it at run time. A threaded kernel is used only for batches of at least
its own threshold (:func:`use_threads`): below that, handing the loop to threads costs more than it saves. The first
use of a threaded kernel compiles it with numba's JIT (seconds; numba's cache serves later processes); the other
kernels stay on the built code.

numba's threads come from its ``workqueue`` layer (:data:`LAYER`) unless ``NUMBA_THREADING_LAYER`` says otherwise:
GNU OpenMP, numba's usual choice, terminates a forked child that runs a threaded kernel after its parent did
(Gymnasium's ``AsyncVectorEnv``, ``multiprocessing`` and the fuzzer fork), and its idle threads spin on a core that a
second simulation on the machine needs (a 10,000-robot step ran three times slower so). ``workqueue`` forks safely
and sleeps between kernels; it must not be entered by two Python threads at once, so threaded kernels are entered
under one process-wide lock (:func:`threaded`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mvsim_core.errors import MvsimError

ENV = "MVSIM_THREADS"
ENV_LAYER = "NUMBA_THREADING_LAYER"
LAYER = "workqueue"
"""numba's threading layer for the threaded kernels, unless ``NUMBA_THREADING_LAYER`` is set (module docstring)."""

_threads: int | None = None
_lock = threading.Lock()
_numba_set = threading.local()  # numba's thread count is per calling thread: set once in each


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity; ``os.cpu_count()`` where that is unknown)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def parse_threads(text: str) -> int:
    """The thread count written ``text`` (``MVSIM_THREADS``'s value).

    Raises:
        MvsimError: not a whole number ≥ 1 (the message says what to write).
    """
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise MvsimError(f"{ENV}={text!r}: expected a whole number of threads >= 1 (e.g. {ENV}=2), or leave it "
                         f"unset for one per core ({available_cores()} here)")
    n = int(value)
    return n


def threads() -> int:
    """The number of threads kernels may use (``MVSIM_THREADS``, else one per core; see the module docstring).

    Raises:
        MvsimError: ``MVSIM_THREADS`` is set to something other than a whole number ≥ 1.
    """
    global _threads
    if _threads is None:
        text = os.environ.get(ENV, "").strip()
        _threads = parse_threads(text) if text else available_cores()
    return _threads


def set_threads(n: int | None) -> None:
    """Use ``n`` threads from now on (None: read ``MVSIM_THREADS`` again, at the next use).

    Raises:
        MvsimError: ``n`` is not a whole number ≥ 1.
    """
    global _threads
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise MvsimError(f"set_threads({n!r}): expected a whole number of threads >= 1, or None for {ENV}")
    _threads = n
    _numba_set.__dict__.clear()


def use_threads(work: int, threshold: int) -> bool:
    """Whether a batch of ``work`` items (vehicles, wheels, rays: the kernel's unit) goes to the threaded kernel:
    more than one thread allowed and at least ``threshold`` items."""
    return work >= threshold and threads() > 1


@contextmanager
def threaded() -> Iterator[int]:
    """Around a call of a threaded kernel: holds the process-wide lock and sets numba's thread count for the
    calling thread (at most numba's own maximum, ``NUMBA_NUM_THREADS``). Yields the count used."""
    import numba  # (only processes that run threaded kernels import it here)

    config: Any = numba.config  # (its settings are made at run time: no attributes a type checker sees)
    with _lock:
        if ENV_LAYER not in os.environ:  # (read at the first threaded call of the process)
            config.THREADING_LAYER = LAYER
        n = min(threads(), config.NUMBA_NUM_THREADS)
        if getattr(_numba_set, "n", None) != n:
            numba.set_num_threads(n)
            _numba_set.n = n
        yield n
