"""What is wrong with a path a world file names, said truthfully, and reading it without reading forever.

Every opener of a file that a world file names (the world file itself, ``<include>``, maps, elevation data, meshes,
point clouds, textures) asks :func:`file_problem` first: it answers ``"not found"`` only when nothing is there, and
otherwise says what is there instead (``"is a directory"``, ``"is not a regular file (a device, fifo or socket)"``,
``"is too large (N bytes, more than the limit of M)"``), never letting the operating system's errors escape
(``Path.is_file()`` raises for a name longer than the file system allows, ``ENAMETOOLONG``, or a permission on a
parent folder). :func:`read_bytes_limited` reads at most a limit plus one byte, so that a file that grows while it
is read, or a special file that :func:`file_problem` was not asked about (``/dev/zero``), cannot make a load read
forever. :func:`shown_path` keeps a strange name on one line of reasonable length.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mvsim_core.errors import quoted

SHOWN_PATH_LIMIT = 200
"""Characters of a path quoted in a message before it is cut (with ``…`` and its full length)."""

MAX_FILE_BYTES = 2**30
"""Largest file (bytes) a world file may name as an asset: 1 GiB, far above the largest upstream asset (a few MiB);
what the data decodes into is charged to the load's memory budget besides (:mod:`mvsim_core.memory_budget`)."""

NOT_REGULAR = "is not a regular file (a device, fifo or socket)"


class FileProblem(ValueError):
    """A file cannot be used; ``problem`` is the phrase of :func:`file_problem` (``"is a directory"``, ...)."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{shown_path(path)} {problem}")
        self.path = path
        self.problem = problem


def too_large(size: int, limit: int) -> str:
    """The phrase for a file of ``size`` bytes over ``limit`` bytes."""
    return f"is too large ({size} bytes, more than the limit of {limit})"


def file_problem(path: Path, max_bytes: int | None = MAX_FILE_BYTES) -> str | None:
    """None when ``path`` is a regular file (or a link to one) of at most ``max_bytes`` bytes (None: any size);
    otherwise ``"not found"``, ``"is a directory"``, :data:`NOT_REGULAR`, ``"is too large (N bytes, more than the
    limit of M)"``, or ``"cannot be used (<the operating system's reason>)"``."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "not found"
    except OSError as e:
        return f"cannot be used ({e.strerror or type(e).__name__})"
    except ValueError:  # a NUL character in the name
        return "cannot be used (the name holds a NUL character)"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory"
    if not stat.S_ISREG(st.st_mode):
        return NOT_REGULAR
    if max_bytes is not None and st.st_size > max_bytes:
        return too_large(st.st_size, max_bytes)
    return None


def check_file(path: Path, max_bytes: int | None = MAX_FILE_BYTES) -> None:
    """Raise :class:`FileProblem` when :func:`file_problem` finds one."""
    problem = file_problem(path, max_bytes)
    if problem is not None:
        raise FileProblem(path, problem)


def read_bytes_limited(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, after :func:`check_file`, reading no more than ``max_bytes + 1`` of them.

    Raises:
        FileProblem: not a usable regular file, or longer than ``max_bytes`` (also when it grew while read).
    """
    check_file(path, max_bytes)
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except IsADirectoryError:
        raise FileProblem(path, "is a directory") from None
    except OSError as e:
        raise FileProblem(path, f"cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > max_bytes:
        raise FileProblem(path, f"is too large (more than the limit of {max_bytes} bytes)")
    return data


def shown_path(path: Path) -> str:
    """``path`` as messages show it: as is when short and printable, else quoted, escaped and cut."""
    text = str(path)
    if len(text) <= SHOWN_PATH_LIMIT and text.isprintable():
        return text
    return quoted(text, SHOWN_PATH_LIMIT)
