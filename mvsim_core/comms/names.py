"""The one rule for node, topic and service names on the ZMQ interface, as ROS names (with ``-`` and ``.`` allowed).

A name is one or more *tokens* separated by single slashes, optionally with a leading slash (``/r1/laser1_scan``,
``get_pose``, ``mvsim-cli-1234``). A token starts with a letter, a digit or ``_`` and goes on with letters, digits,
``_``, ``-`` or ``.``. So these are refused: the empty name, ``/`` alone or a trailing ``/``, ``//`` (an empty
token), ``..`` and ``.`` tokens (``../../``), URLs (``tcp://x``: ``:`` is no name character), spaces, control and
non-ASCII characters, and names longer than :data:`MAX_NAME_LENGTH` characters.

Differences from ROS 2 (rcl's topic and node name validation): ``-`` and ``.`` are allowed inside a token and a
token may start with a digit, because MVSim's own names have them (the command-line tools register
``mvsim-cli-<pid>``; object names in world files, which make topic names, are free text upstream); ``~`` and
``{}`` substitutions are not names here. The server checks every name it is sent with :func:`check_name`; the
client checks the names it makes before sending them, so a bad name is refused where it was written.
"""

from __future__ import annotations

import re

from mvsim_core.comms.errors import InvalidName

MAX_NAME_LENGTH = 256
"""Longest node / topic / service name accepted (characters)."""

RULE = ("names are tokens separated by single '/' (an optional leading '/'), each token a letter, digit or '_' "
        "followed by letters, digits, '_', '-' or '.', e.g. /r1/laser1_scan")
"""The rule in words, as refusals quote it."""

_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def name_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a node, topic or service name, or None when it is a valid name."""
    if not value:
        return "is empty"
    if len(value) > MAX_NAME_LENGTH:
        return f"is {len(value)} characters long; the limit is {MAX_NAME_LENGTH}"
    for i, c in enumerate(value):
        if not " " < c < "\x7f":
            return f"has a space, control or non-ASCII character ({c!r}) at position {i}"
    body = value[1:] if value.startswith("/") else value
    if not body:
        return "has no token after '/'"
    for token in body.split("/"):
        if not token:
            return "has an empty token ('//' or a trailing '/')"
        if _TOKEN.fullmatch(token) is None:
            return f"has the token {token[:64]!r}"
    return None


def is_valid_name(value: str) -> bool:
    """Whether ``value`` follows the name rule (see the module docstring)."""
    return name_problem(value) is None


def check_name(field: str, value: str) -> str:
    """``value`` when it is a valid name; otherwise :class:`InvalidName` naming ``field`` and the rule.

    Args:
        field: what the name is, as the refusal names it (a protobuf field such as ``nodeName``, or ``topic``).
        value: the name.

    Raises:
        InvalidName: ``nodeName '../../' is not a valid name: has the token '..'; names are ...``.
    """
    problem = name_problem(value)
    if problem is None:
        return value
    if not value:
        raise InvalidName(f"{field} must not be empty")
    shown = value if len(value) <= 64 else value[:64] + "..."
    raise InvalidName(f"{field} {shown!r} is not a valid name: {problem}; {RULE}")
