"""Parse context: the state shared while a world file is read.

A :class:`ParseContext` holds the user variables, the environment, the world's random generator and the permission
to run shell commands. Everything that reads a value from a node goes through :meth:`ParseContext.value`, so every
substitution error is reported at the file and line of that node.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mvsim_core.errors import WorldFileError
from mvsim_core.rng import WorldRandom
from mvsim_core.xml.limits import LoadBudget, LoadLimits
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.overrides import Overrides
from mvsim_core.xml.substitution import LITERAL_DOLLAR, SubstitutionError, substitute_value

log = logging.getLogger("mvsim_core.world")

CURRENT_DIR_VAR = "MVSIM_CURRENT_FILE_DIRECTORY"


@dataclass
class ParseContext:
    """Variables, environment, randomness and permissions for reading one world.

    Attributes:
        variables: user variables (``<variable>``, ``<for>`` counters), name -> string value. Global and mutable,
            like upstream: a later definition overwrites an earlier one.
        env: environment used by ``$env{}`` and as fallback in included files.
        rng: the world's seeded generator (``rand()`` and friends).
        allow_shell: whether ``$(cmd)`` may run a shell.
        warnings: every warning issued, as ``file:line: message`` strings, in order, without repeats.
        missing_assets: model/texture URIs that could not be found or fetched, with the reason.
        counters: per-prefix counters for default names.
        limits: expansion limits of this load (:mod:`mvsim_core.xml.limits`).
        budget: what this load has used of them (made from ``limits``).
        overrides: variables and include parameters set from outside the file (:mod:`mvsim_core.xml.overrides`).
    """

    variables: dict[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    rng: WorldRandom = field(default_factory=WorldRandom)
    allow_shell: bool = False
    warnings: list[str] = field(default_factory=list)
    missing_assets: dict[str, str] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    limits: LoadLimits = field(default_factory=LoadLimits)
    budget: LoadBudget = field(init=False, repr=False)
    overrides: Overrides = field(default_factory=Overrides)
    _warned: set[str] = field(default_factory=set, repr=False)
    _dirs: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.budget = LoadBudget(self.limits)

    def _directory_of(self, file: str) -> str:
        """The resolved directory of ``file`` (cached: resolving costs system calls, and values are read often)."""
        d = self._dirs.get(file)
        if d is None:
            try:
                d = str(Path(file).resolve().parent)
            except (OSError, RuntimeError):  # unresolvable (RuntimeError: a symlink loop): as written
                d = str(Path(file).parent)
            self._dirs[file] = d
        return d

    def next_index(self, prefix: str) -> int:
        """1, 2, 3, ... per prefix: default names such as ``veh1``, ``block001``, ``laser1``."""
        self.counters[prefix] = self.counters.get(prefix, 0) + 1
        return self.counters[prefix]

    # ------------------------------------------------------------------ errors and warnings
    def error(self, node: XmlNode | None, message: str, *, attr: str | None = None) -> WorldFileError:
        """A :class:`WorldFileError` located at ``node`` (or at one of its attributes)."""
        if node is None:
            return WorldFileError("", 0, message)
        line = node.attr_lines.get(attr, node.line) if attr else node.line
        return WorldFileError(node.file, line, message)

    def warn(self, node: XmlNode | None, message: str) -> None:
        """Record a warning once (same place, same message) and log it."""
        text = f"{node.file}:{node.line}: {message}" if node is not None else message
        self.warn_text(text)

    def warn_text(self, text: str) -> None:
        if text in self._warned:
            return
        self._warned.add(text)
        self.warnings.append(text)
        log.warning("%s", text)

    def warn_at(self, file: str, line: int, message: str) -> None:
        """Warning callback in the parser's signature."""
        self.warn_text(f"{file}:{line}: {message}")

    # ------------------------------------------------------------------ values
    def value(self, raw: str, node: XmlNode, *, attr: str | None = None,
              extra: Mapping[str, str] | None = None, keep_literal: bool = False) -> str:
        """Apply value substitution to ``raw`` read from ``node``; errors are located at the node.

        Args:
            raw: the text as written.
            node: where it was written (sets ``MVSIM_CURRENT_FILE_DIRECTORY`` and locates errors).
            attr: the attribute name, when ``raw`` is an attribute value (for its line).
            extra: variables that exist only here (a sensor's ``NAME`` / ``PARENT_NAME``).
            keep_literal: keep the marks of ``$`` that came from the environment (a ``<variable>`` value: it is
                substituted again where it is used, and those ``$`` must stay literal there too).
        """
        if "$" not in raw and LITERAL_DOLLAR not in raw:
            return raw
        self.overrides.note_text(raw)
        variables: dict[str, str] | Mapping[str, str] = self.variables
        if node.file and not node.file.startswith("<"):
            self.variables[CURRENT_DIR_VAR] = self._directory_of(node.file)
        if extra:
            variables = {**self.variables, **extra}
        try:
            out = substitute_value(raw, variables, env=self.env, rng=self.rng, allow_shell=self.allow_shell,
                                   max_length=self.limits.value_length, keep_literal=keep_literal)
        except SubstitutionError as e:
            line = node.attr_lines.get(attr, node.line) if attr else node.line
            if attr is None and e.offset >= 0:
                # point at the line inside a multi-line text value
                line += node.text[: max(node.text.find(raw), 0) + e.offset].count("\n") if raw in node.text else 0
            raise WorldFileError(node.file, line, e.message) from None
        self.budget.charge_substituted(len(out), node.file, node.attr_lines.get(attr, node.line) if attr else node.line)
        return out

    def text(self, node: XmlNode, *, extra: Mapping[str, str] | None = None) -> str:
        """The node's text after value substitution, stripped."""
        return self.value(node.value, node, extra=extra).strip()

    def attr(self, node: XmlNode, name: str, default: str | None = None, *,
             extra: Mapping[str, str] | None = None, keep_literal: bool = False) -> str | None:
        """An attribute after value substitution, or ``default`` when absent."""
        if name not in node.attrs:
            return default
        return self.value(node.attrs[name], node, attr=name, extra=extra, keep_literal=keep_literal).strip()

    def require_attr(self, node: XmlNode, name: str, *, extra: Mapping[str, str] | None = None) -> str:
        """A mandatory attribute; a clear error if missing or empty."""
        v = self.attr(node, name, extra=extra)
        if v is None or v == "":
            raise self.error(node, f"<{node.tag}> needs the attribute {name}=\"...\"")
        return v

    def resolve_path(self, path: str, node: XmlNode) -> Path:
        """A path written in ``node``'s file: absolute as is, else relative to that file's directory."""
        p = path.strip()
        if p.startswith("file://"):
            p = p[len("file://"):]
        if p.startswith(("/", "\\")) or (len(p) > 2 and p[1] == ":" and p[2] in "\\/"):
            return Path(p)
        base = Path(node.file).resolve().parent if node.file and not node.file.startswith("<") else Path.cwd()
        return base / p

    def missing_asset(self, uri: str, node: XmlNode, reason: str, fallback: str = "") -> None:
        """Report a missing model/texture once per URI (a warning; loading goes on).

        Args:
            uri: what was asked for.
            node: where.
            reason: why it is unavailable.
            fallback: what is used instead (default: a bounding-box stand-in for models, plain colour otherwise).
        """
        if uri in self.missing_assets:
            return
        self.missing_assets[uri] = reason
        if not fallback:
            is_model = uri.lower().rsplit(".", 1)[-1] in ("dae", "obj", "stl", "ply", "fbx", "glb", "gltf", "3ds")
            fallback = "using a bounding-box stand-in" if is_model else "drawing without it"
        self.warn(node, f"asset not available: {uri} ({reason}); {fallback}")
