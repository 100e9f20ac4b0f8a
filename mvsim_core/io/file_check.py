"""Whether a path a world file names is a regular file, without letting the operating system's errors escape.

``Path.is_file()`` raises for some names instead of answering (a name longer than the file system allows:
``ENAMETOOLONG``; a permission on a parent folder): :func:`file_problem` turns every answer into a short phrase for
the caller's error message, and :func:`shown_path` keeps such a name on one line of reasonable length.
"""

from __future__ import annotations

from pathlib import Path

from mvsim_core.errors import quoted

SHOWN_PATH_LIMIT = 200
"""Characters of a path quoted in a message before it is cut (with ``…`` and its full length)."""


def file_problem(path: Path) -> str | None:
    """None when ``path`` is a regular file (or a link to one); otherwise ``"not found"``, ``"is not a regular
    file"``, or ``"cannot be used (<the operating system's reason>)"``."""
    try:
        if path.is_file():
            return None
        return "is not a regular file" if path.exists() else "not found"
    except OSError as e:
        return f"cannot be used ({e.strerror or type(e).__name__})"


def shown_path(path: Path) -> str:
    """``path`` as messages show it: as is when short and printable, else quoted, escaped and cut."""
    text = str(path)
    if len(text) <= SHOWN_PATH_LIMIT and text.isprintable():
        return text
    return quoted(text, SHOWN_PATH_LIMIT)
