"""The two substitution engines of MVSim world files.

**Text substitution** (:func:`substitute_text`) runs over the whole text of every *included* file before it is parsed:
``${NAME}`` takes the include's attributes and the user variables, then the environment, then the default written
after ``|`` (``${sensor_x|1.80}``). ``NAME`` and ``PARENT_NAME`` are left in place when undefined: a sensor resolves
them later (its own name and its vehicle's).

**Value substitution** (:func:`substitute_value`) runs over every parameter value when it is read, in passes until
nothing changes (at most :data:`MAX_PASSES`): ``${VAR}`` (user variables; ``|default`` allowed), ``$env{VAR}``
(environment), ``$(cmd)`` (a shell command — only when the caller allows it) and ``$f{expr}`` (a math expression by
:mod:`mvsim_core.xml.expression`, whose result is formatted like C's ``%g``).

An environment variable's value is taken literally, whichever way it is reached (``$env{VAR}``, or ``${VAR}``
falling back to the environment in an included file): a ``$`` in it is never substituted again, so ``$(cmd)``
inside one never runs. Such a ``$`` travels as :data:`LITERAL_DOLLAR` (a NUL, which no world file can hold) through
included text, parsed values and ``<variable>`` values (``keep_literal``), and becomes ``$`` again only in a
value's final result.

Lengths are bounded: a result (or any pass of it) longer than ``max_length`` characters raises
:class:`ValueTooLong` before it is built, so a chain of variables that double at each step stops at the limit
instead of filling memory (see :mod:`mvsim_core.xml.limits`).

Both raise :class:`SubstitutionError` with a message; callers attach the file and line.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Callable, Mapping

from mvsim_core.errors import ExpressionError, MvsimError, one_line
from mvsim_core.rng import WorldRandom
from mvsim_core.xml.limits import ENV_NAMES, LoadLimits

MAX_PASSES = 10
LITERAL_DOLLAR = "\x00"
"""Stands for a ``$`` that came from the environment (never substituted) until a value's final result."""
RETAINED = frozenset({"NAME", "PARENT_NAME"})
DEFAULT_MAX_LENGTH = LoadLimits().value_length


class SubstitutionError(MvsimError):
    """A substitution failed. ``offset`` is the character offset in the substituted text (-1 if unknown)."""

    def __init__(self, message: str, offset: int = -1) -> None:
        self.message = message
        self.offset = offset
        super().__init__(message)


class ValueTooLong(SubstitutionError):
    """A substitution would give more than ``limit`` characters (it stopped at ``length``)."""

    def __init__(self, length: int, limit: int, offset: int = -1) -> None:
        self.length = length
        self.limit = limit
        super().__init__(f"substituted value reaches {length} characters: more than the limit of {limit} "
                         f"characters per value; set the environment variable {ENV_NAMES['value_length']} to "
                         f"raise it", offset)


class _Builder:
    """Pieces of a result, refusing to grow past ``limit`` characters."""

    __slots__ = ("parts", "size", "limit")

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def add(self, piece: str, offset: int) -> None:
        self.size += len(piece)
        if self.size > self.limit:
            raise ValueTooLong(self.size, self.limit, offset)
        self.parts.append(piece)

    def text(self) -> str:
        return "".join(self.parts)


def _match_brace(s: str, open_idx: int) -> int:
    """Index of the ``}`` matching the ``{`` at ``open_idx`` (nesting counted), or -1."""
    depth = 0
    for i in range(open_idx, len(s)):
        c = s[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _known(variables: Mapping[str, str]) -> str:
    names = sorted(k for k in variables if k != "MVSIM_CURRENT_FILE_DIRECTORY")
    if not names:
        return "no variables are defined"
    shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
    return f"known variables: {shown}"


def substitute_text(text: str, variables: Mapping[str, str], env: Mapping[str, str],
                    retain: frozenset[str] = RETAINED, *, max_length: int = 16 << 20) -> str:
    """Replace ``${NAME}`` / ``${NAME|default}`` in an included file's text (see module docstring).

    Substituted values are themselves substituted, up to :data:`MAX_PASSES` levels; a longer chain means variables
    that refer to each other. A value taken from the environment is not substituted again (its ``$`` become
    :data:`LITERAL_DOLLAR`).

    Raises:
        SubstitutionError: undefined variable, unclosed ``${``, variables referring to each other.
        ValueTooLong: the text would grow past ``max_length`` characters.
    """
    out = text
    for _ in range(MAX_PASSES):
        new, changed = _substitute_text_once(out, variables, env, retain, max_length)
        if not changed:
            return new
        out = new
    names = _names_in(out, variables)
    raise SubstitutionError(
        f"variables refer to each other ({' -> '.join(names) or 'cycle'}): substitution does not end after "
        f"{MAX_PASSES} passes; give one of them a plain value")


def _names_in(s: str, variables: Mapping[str, str]) -> list[str]:
    names: list[str] = []
    i = s.find("${")
    while i >= 0 and len(names) < 6:
        j = _match_brace(s, i + 1)
        if j < 0:
            break
        nm = s[i + 2:j].split("|", 1)[0].strip()
        if nm in variables and nm not in names:
            names.append(nm)
        i = s.find("${", j)
    return names


def _substitute_text_once(s: str, variables: Mapping[str, str], env: Mapping[str, str],
                          retain: frozenset[str], max_length: int) -> tuple[str, bool]:
    i = s.find("${")
    if i < 0:
        return s, False
    out = _Builder(max_length)
    last = 0
    changed = False
    while i >= 0:
        j = _match_brace(s, i + 1)
        if j < 0:
            raise SubstitutionError("'${' without a closing '}'", i)
        body = s[i + 2:j]
        name, sep, default = body.partition("|")
        name = name.strip()
        if name in variables:
            rep: str | None = variables[name]
        elif name in env:
            rep = env[name].replace("$", LITERAL_DOLLAR)  # literal: never substituted again
        elif sep:
            rep = default
        elif name in retain:
            rep = None
        else:
            raise SubstitutionError(
                f"undefined variable ${{{name}}}: define it with <variable>, pass it as an <include> attribute, "
                f"set the environment variable, or give a default as ${{{name}|value}}", i)
        if rep is not None:
            out.add(s[last:i], i)
            out.add(rep, i)
            last = j + 1
            changed = True
        i = s.find("${", j + 1)
    out.add(s[last:], last)
    return out.text(), changed


ShellRunner = Callable[[str], str]


def run_shell(cmd: str) -> str:
    """Run ``cmd`` through ``/bin/sh``; returns stdout with CR/LF removed and spaces trimmed."""
    try:
        res = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60)  # noqa: S602 - opt-in
    except subprocess.TimeoutExpired:
        raise SubstitutionError(f"shell command $({cmd}) did not finish within 60 s") from None
    if res.returncode != 0:
        err = res.stderr.strip().splitlines()[-1:] or [""]
        raise SubstitutionError(f"shell command $({cmd}) failed with exit status {res.returncode}: {err[0]}")
    return res.stdout.replace("\r", "").replace("\n", "").strip()


def substitute_value(value: str, variables: Mapping[str, str], *, env: Mapping[str, str], rng: WorldRandom,
                     allow_shell: bool = False, shell: ShellRunner = run_shell, max_length: int = DEFAULT_MAX_LENGTH,
                     keep_literal: bool = False) -> str:
    """Apply value substitution (``${}``, ``$env{}``, ``$()``, ``$f{}``) until a fixpoint (see module docstring).

    Args:
        value: the text as written (may hold :data:`LITERAL_DOLLAR` from an environment value).
        variables: user variables. env: the environment. rng: the world's generator (``$f{rand()}``).
        allow_shell: let ``$(cmd)`` run. shell: what runs it.
        max_length: most characters the result (and every pass) may have.
        keep_literal: leave :data:`LITERAL_DOLLAR` in the result (for a ``<variable>`` value, which is substituted
            again where it is used) instead of turning it back into ``$``.

    Raises:
        SubstitutionError: unknown variable, unset environment variable, refused or failed shell command, bad
            expression, variables referring to each other.
        ValueTooLong: the result would be longer than ``max_length``.
    """
    if "$" not in value:
        if len(value) > max_length:
            raise ValueTooLong(len(value), max_length)
        return value if keep_literal else value.replace(LITERAL_DOLLAR, "$")
    out = value
    for _ in range(MAX_PASSES):
        new = _value_pass(out, variables, env, rng, allow_shell, shell, max_length)
        if new == out or "$" not in new:
            return new if keep_literal else new.replace(LITERAL_DOLLAR, "$")
        out = new
    raise SubstitutionError(
        f"variables refer to each other: '{value[:200]}' still changes after {MAX_PASSES} substitution passes; "
        f"give one of them a plain value")


def _value_pass(s: str, variables: Mapping[str, str], env: Mapping[str, str], rng: WorldRandom,
                allow_shell: bool, shell: ShellRunner, max_length: int) -> str:
    # 1) ${VAR}
    s = _replace_all(s, "${", lambda body, off: _user_var(body, variables, off), True, max_length)
    # 2) $env{VAR}
    s = _replace_all(s, "$env{", lambda body, off: _env_var(body, env, off), True, max_length)
    # 3) $(cmd)
    if "$(" in s:
        s = _replace_shell(s, allow_shell, shell, max_length)
    # 4) $f{expr}
    if "$f{" in s:
        s = _replace_all(s, "$f{", lambda body, off: _math(body, variables, rng, off), False, max_length)
    return s


def _replace_all(s: str, opener: str, fn: Callable[[str, int], str], nested: bool, max_length: int) -> str:
    i = s.find(opener)
    if i < 0:
        if len(s) > max_length:
            raise ValueTooLong(len(s), max_length)
        return s
    out = _Builder(max_length)
    last = 0
    while i >= 0:
        brace = i + len(opener) - 1
        j = _match_brace(s, brace) if nested else s.find("}", brace + 1)
        if j < 0:
            raise SubstitutionError(f"'{opener}' without a closing '}}'", i)
        out.add(s[last:i], i)
        out.add(fn(s[brace + 1:j], i), i)
        last = j + 1
        i = s.find(opener, last)
    out.add(s[last:], last)
    return out.text()


def _user_var(body: str, variables: Mapping[str, str], off: int) -> str:
    name, sep, default = body.partition("|")
    name = name.strip()
    if name in variables:
        return variables[name]
    if sep:
        return default
    raise SubstitutionError(f"unknown variable ${{{name}}}; {_known(variables)}", off)


def _env_var(body: str, env: Mapping[str, str], off: int) -> str:
    name = body.strip()
    if name in env:
        return env[name].replace("$", LITERAL_DOLLAR)  # literal: never substituted again
    raise SubstitutionError(f"environment variable '{name}' in $env{{{name}}} is not set; export it first", off)


def _replace_shell(s: str, allow_shell: bool, shell: ShellRunner, max_length: int) -> str:
    i = s.find("$(")
    out = _Builder(max_length)
    last = 0
    while i >= 0:
        depth = 0
        j = -1
        for k in range(i + 1, len(s)):
            if s[k] == "(":
                depth += 1
            elif s[k] == ")":
                depth -= 1
                if depth == 0:
                    j = k
                    break
        if j < 0:
            raise SubstitutionError("'$(' without a closing ')'", i)
        cmd = s[i + 2:j]
        if not allow_shell:
            raise SubstitutionError(
                f"refused to run shell command $({cmd}): shell commands in world files run only when you allow "
                f"them (mvsim --allow-shell, or load_world(..., allow_shell=True))", i)
        out.add(s[last:i], i)
        out.add(shell(cmd), i)
        last = j + 1
        i = s.find("$(", last)
    out.add(s[last:], last)
    return out.text()


def numeric_variables(variables: Mapping[str, str]) -> dict[str, float]:
    """The user variables whose value reads as a number, as floats (what ``$f{}`` sees by bare name)."""
    out: dict[str, float] = {}
    for k, v in variables.items():
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            continue
    return out


def _math(body: str, variables: Mapping[str, str], rng: WorldRandom, off: int) -> str:
    from mvsim_core.xml.expression import evaluate, format_number

    try:
        value = evaluate(body, numeric_variables(variables), rng)
    except ExpressionError as e:
        where = f" at position {e.position}" if e.position >= 0 and "position" not in e.message else ""
        raise SubstitutionError(f"in $f{{{one_line(body[:200])}}}: {e.message}{where}", off) from None
    if not math.isfinite(value):
        raise SubstitutionError(f"in $f{{{one_line(body[:200])}}}: the result is {format_number(value)}; a $f{{}} "
                                f"value must be a finite number (look for a division by zero, an overflow such as "
                                f"2^2000, or a variable that is inf or nan)", off)
    return format_number(value)
