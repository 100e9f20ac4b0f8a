"""Values set from outside a world file: world variables and ``<include>`` parameters (``load_world(variables=...,
include_params=...)``, used by parameter sweeps).

* A **variable** override defines the user variable before the file is read and keeps it: a ``<variable>`` of the
  same name is still evaluated (so the random draws of the rest of the world stay the same) but does not change it.
  ``${NAME}`` and ``$f{NAME}`` everywhere, and the text of included files, see the override. An ``<include>``
  attribute of the same name still wins inside that include (override it with an include parameter).
* An **include parameter** override ``{FILE: {PARAM: VALUE}}`` sets ``PARAM`` for every ``<include>`` of a file
  that ``FILE`` names, as if written ``<include file="..." PARAM="VALUE"/>`` (replacing an attribute written there).
  ``FILE`` is a glob pattern (``fnmatch``): without ``/`` it is matched against the included file's name
  (``lidar2d.sensor.xml``, ``*.vehicle.xml``), with ``/`` against the end of its resolved path
  (``definitions/lidar2d.sensor.xml``).

An override the world never uses is a mistake (a misspelt name would silently change nothing): after loading,
:meth:`Overrides.check_used` raises :class:`OverrideError` naming it. A variable counts as used when a
``<variable>`` defines it or a value or included text mentions it next to a ``$``; an include parameter when a
matching file is included and its text reads ``${PARAM}`` (or ``${PARAM|default}``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath

from mvsim_core.errors import WorldFileError


class OverrideError(WorldFileError):
    """An override that the world never uses.

    Attributes:
        kind: ``variable`` or ``include``.
        name: the variable's name, or the include parameter's name.
        pattern: for ``include``, the file pattern it was given for ("" for a variable).
    """

    def __init__(self, file: str, kind: str, name: str, pattern: str, message: str) -> None:
        self.kind, self.name, self.pattern = kind, name, pattern
        super().__init__(file, 0, message)

    def __reduce__(self):  # keep pickling working with the 5-argument constructor
        return (type(self), (self.file, self.kind, self.name, self.pattern, self.message))


OverrideValue = str | int | float | bool
"""A value given from outside: text as is; ``True``/``False`` as ``true``/``false``; a number as Python writes it
(``repr``: ``0.1``, ``1e-05``, which ``$f{}`` reads)."""


def override_text(value: OverrideValue) -> str:
    """``value`` as the text of a variable or attribute (see :data:`OverrideValue`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"an override value is text, a number or a bool, not {type(value).__name__}")


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


@dataclass
class Overrides:
    """The overrides of one load and which of them the world used (see the module docstring).

    Attributes:
        variables: variable name -> value (text, as a ``<variable value>`` would hold it).
        include_params: file pattern -> {parameter -> value}.
    """

    variables: Mapping[str, str] = field(default_factory=dict)
    include_params: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    _unused_vars: dict[str, re.Pattern[str]] = field(default_factory=dict, repr=False)
    _unused_params: set[tuple[str, str]] = field(default_factory=set, repr=False)
    _matched: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        for name in self.variables:
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise ValueError(f"variable override {name!r}: a variable name is letters, digits and _ (not first)")
        self._unused_vars = {n: _word(n) for n in self.variables}
        self._unused_params = {(p, k) for p, params in self.include_params.items() for k in params}

    @classmethod
    def of(cls, variables: Mapping[str, OverrideValue] | None,
           include_params: Mapping[str, Mapping[str, OverrideValue]] | None) -> Overrides:
        """Overrides from values of any :data:`OverrideValue` type (each turned into text by :func:`override_text`)."""
        params = {p: {k: override_text(v) for k, v in kv.items()} for p, kv in (include_params or {}).items()}
        return cls({k: override_text(v) for k, v in (variables or {}).items()}, params)

    def __bool__(self) -> bool:
        return bool(self.variables or self.include_params)

    def pins(self, name: str) -> bool:
        """Whether ``name`` is set from outside (a ``<variable>`` must not change it); notes the use."""
        if name in self.variables:
            self._unused_vars.pop(name, None)
            return True
        return False

    def note_text(self, text: str) -> None:
        """Note the variables that ``text`` (a value or an included file's text) mentions, when it holds a ``$``."""
        if self._unused_vars and "$" in text:
            for name in [n for n, rx in self._unused_vars.items() if rx.search(text)]:
                del self._unused_vars[name]

    def for_include(self, path: str, text: str) -> dict[str, str]:
        """The parameters set from outside for an included file at resolved ``path`` whose text is ``text``."""
        out: dict[str, str] = {}
        p = PurePath(path).as_posix()
        for pattern, params in self.include_params.items():
            target = p if "/" in pattern else PurePath(p).name
            pat = pattern if "/" not in pattern or pattern.startswith("/") else "*/" + pattern
            if fnmatch.fnmatchcase(target, pat):
                self._matched.add(pattern)
                out.update(params)
                for k in params:
                    if re.search(rf"\$\{{{re.escape(k)}[}}|]", text):
                        self._unused_params.discard((pattern, k))
        self.note_text(text)
        return out

    def check_used(self, file: str) -> None:
        """Raise :class:`OverrideError` for the first override the load did not use (variables first)."""
        for name in self.variables:
            if name in self._unused_vars:
                raise OverrideError(file, "variable", name, "", f"variable override '{name}' is not used by the "
                                    f"world: no <variable name=\"{name}\"> and no ${{{name}}} or $f{{...{name}...}} "
                                    f"in it or in the files it includes; check the name")
        for pattern, params in self.include_params.items():
            for k in params:
                if (pattern, k) not in self._unused_params:
                    continue
                if pattern not in self._matched:
                    why = f"no <include> of a file matching '{pattern}'"
                else:
                    why = f"the included files matching '{pattern}' never read ${{{k}}}"
                raise OverrideError(file, "include", k, pattern, f"include parameter '{k}' for '{pattern}' is not "
                                    f"used: {why}; check the file pattern and the parameter name")
