"""Flow-control tags of world files: ``<include>``, ``<variable>``, ``<for>``, ``<if>``.

:class:`Walker` visits a list of nodes, expands these four tags and hands every other node to the handler
registered for its tag. Values are substituted when they are read, so the body of a ``<for>`` sees the current
value of its counter and every ``$f{rand()}`` inside draws afresh on each iteration.

* ``<include file="p" a="v" .../>`` — ``p`` is relative to the including file. The included text goes through text
  substitution (include attributes, user variables, environment, ``|default``) and may hold several root elements;
  each is visited as if written in place. Cycles are reported with the chain of files.
* ``<variable name="N" value="V"/>`` — defines or overwrites a global user variable.
* ``<for var="i" from="a" to="b">`` — inclusive integer range; for each child, for each value (child-major order,
  as upstream).
* ``<if condition="c">`` — visits its children when ``c`` is true: yes/true/on (any case) or a non-zero integer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from mvsim_core.errors import WorldFileError
from mvsim_core.xml.context import CURRENT_DIR_VAR, ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.parser import parse_text, read_text_file
from mvsim_core.xml.substitution import RETAINED, SubstitutionError, substitute_text

Handler = Callable[[XmlNode], None]

MAX_INCLUDE_DEPTH = 32
MAX_LOOP_ITERATIONS = 100_000
_TRUE_WORDS = {"y", "yes", "true", "on"}


def is_true_condition(text: str) -> bool:
    """Truth of an ``<if condition>`` value after substitution (upstream's rules)."""
    t = text.strip()
    if t.lower() in _TRUE_WORDS:
        return True
    try:
        return int(t, 0) != 0
    except ValueError:
        try:
            f = float(t)
        except ValueError:
            return False
        return f != 0.0 and f == f


def read_included(path: Path, node: XmlNode, ctx: ParseContext, *, retain: frozenset[str] = RETAINED,
                  stack: tuple[str, ...] = ()) -> list[XmlNode]:
    """Read an included file: text substitution with the include's attributes, then lenient parse.

    Args:
        path: resolved file path.
        node: the ``<include>`` node (its attributes become variables; errors about the include point here).
        ctx: parse context.
        retain: variable names left untouched when undefined.
        stack: resolved paths of the files currently being included (cycle detection).
    """
    key = str(path.resolve()) if path.exists() else str(path)
    if key in stack:
        chain = " -> ".join(Path(p).name for p in (*stack[stack.index(key):], key))
        raise ctx.error(node, f"include cycle: {chain}; remove one of these <include>s", attr="file")
    if len(stack) >= MAX_INCLUDE_DEPTH:
        raise ctx.error(node, f"includes nested deeper than {MAX_INCLUDE_DEPTH} levels", attr="file")
    if not path.is_file():
        raise ctx.error(node, f"included file not found: {path}", attr="file")
    shown = str(path)
    text = read_text_file(path, shown_as=shown)
    variables = dict(ctx.variables)
    for k, v in node.attrs.items():
        if k != "file":
            variables[k] = v
    variables[CURRENT_DIR_VAR] = str(path.resolve().parent)
    try:
        text = substitute_text(text, variables, ctx.env, retain)
    except SubstitutionError as e:
        if e.offset < 0:  # not tied to one place in the file: blame the include and its attributes
            raise ctx.error(node, e.message) from None
        raise WorldFileError(shown, text.count("\n", 0, e.offset) + 1, e.message) from None
    roots = parse_text(text, shown, warn=ctx.warn_at)
    if not roots:
        raise WorldFileError(shown, 1, "included file holds no XML element")
    return roots


class Walker:
    """Visit nodes, expanding flow-control tags and dispatching the rest.

    Args:
        ctx: parse context.
        handlers: tag -> function called with the node.
        on_unknown: called for a tag with no handler (default: warn and skip).
    """

    def __init__(self, ctx: ParseContext, handlers: dict[str, Handler],
                 on_unknown: Handler | None = None) -> None:
        self.ctx = ctx
        self.handlers = handlers
        self.on_unknown = on_unknown or (lambda n: ctx.warn(n, f"unknown tag <{n.tag}> is ignored"))
        self._stack: tuple[str, ...] = ()

    def walk(self, nodes: Iterable[XmlNode]) -> None:
        for n in nodes:
            self.visit(n)

    def visit(self, node: XmlNode) -> None:
        tag = node.tag
        if tag == "include":
            self._include(node)
        elif tag == "variable":
            self._variable(node)
        elif tag == "for":
            self._for(node)
        elif tag == "if":
            self._if(node)
        elif tag in self.handlers:
            self.handlers[tag](node)
        else:
            self.on_unknown(node)

    def _include(self, node: XmlNode) -> None:
        ctx = self.ctx
        path = ctx.resolve_path(ctx.require_attr(node, "file"), node)
        roots = read_included(path, node, ctx, stack=self._stack)
        saved = self._stack
        self._stack = saved + (str(path.resolve()),)
        try:
            self.walk(roots)
        finally:
            self._stack = saved

    def start_file(self, path: str | Path) -> None:
        """Record the top-level file, so that including it again is reported as a cycle."""
        self._stack = (str(Path(path).resolve()),)

    def _variable(self, node: XmlNode) -> None:
        ctx = self.ctx
        name = ctx.require_attr(node, "name")
        if "value" not in node.attrs:
            raise ctx.error(node, f"<variable name=\"{name}\"> needs a value=\"...\" attribute")
        ctx.variables[name] = ctx.attr(node, "value") or ""

    def _for(self, node: XmlNode) -> None:
        ctx = self.ctx
        var = ctx.require_attr(node, "var")
        bounds = []
        for key in ("from", "to"):
            raw = ctx.require_attr(node, key)
            try:
                bounds.append(int(raw, 10))
            except ValueError:
                raise ctx.error(node, f"<for> bound {key}=\"{raw}\" is not an integer; loops count in whole "
                                      f"numbers", attr=key) from None
        lo, hi = bounds
        if hi - lo + 1 > MAX_LOOP_ITERATIONS:
            raise ctx.error(node, f"<for> runs {hi - lo + 1} iterations; at most {MAX_LOOP_ITERATIONS} allowed")
        if not node.children:
            ctx.warn(node, "<for> loop has an empty body")
        for child in node.children:  # child-major order, as upstream
            for i in range(lo, hi + 1):
                ctx.variables[var] = str(i)
                self.visit(child)

    def _if(self, node: XmlNode) -> None:
        ctx = self.ctx
        if "condition" not in node.attrs:
            raise ctx.error(node, "<if> needs a condition=\"...\" attribute")
        if is_true_condition(ctx.attr(node, "condition") or ""):
            self.walk(node.children)


def expand_body(nodes: Iterable[XmlNode], ctx: ParseContext, *,
                stack: tuple[str, ...] = ()) -> list[XmlNode]:
    """Expand flow control inside an object body (vehicle, block or actor class or instance).

    ``<include>`` children are replaced by what they include (``NAME`` and ``PARENT_NAME`` stay unresolved for the
    sensors inside), ``<if>`` by its children when its condition holds, and ``<variable>`` is defined on the spot.
    """
    out: list[XmlNode] = []
    for n in nodes:
        if n.tag == "include":
            here = stack or (str(Path(n.file).resolve()),)
            path = ctx.resolve_path(ctx.require_attr(n, "file"), n)
            roots = read_included(path, n, ctx, stack=here)
            out.extend(expand_body(roots, ctx, stack=here + (str(path.resolve()),)))
        elif n.tag == "if":
            if "condition" not in n.attrs:
                raise ctx.error(n, "<if> needs a condition=\"...\" attribute")
            if is_true_condition(ctx.attr(n, "condition") or ""):
                out.extend(expand_body(n.children, ctx, stack=stack))
        elif n.tag == "variable":
            name = ctx.require_attr(n, "name")
            if "value" not in n.attrs:
                raise ctx.error(n, f"<variable name=\"{name}\"> needs a value=\"...\" attribute")
            ctx.variables[name] = ctx.attr(n, "value") or ""
        else:
            out.append(n)
    return out


def expanded(node: XmlNode, ctx: ParseContext) -> XmlNode:
    """``node`` with its body expanded by :func:`expand_body` (the node itself when there is nothing to expand)."""
    if not any(c.tag in ("include", "if", "variable") for c in node.children):
        return node
    return XmlNode(tag=node.tag, attrs=node.attrs, children=expand_body(node.children, ctx), text=node.text,
                   file=node.file, line=node.line, attr_lines=node.attr_lines)
