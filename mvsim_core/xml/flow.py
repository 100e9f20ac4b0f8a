"""Flow-control tags of world files: ``<include>``, ``<variable>``, ``<for>``, ``<if>``.

:class:`Walker` visits a list of nodes, expands these four tags and hands every other node to the handler
registered for its tag. Values are substituted when they are read, so the body of a ``<for>`` sees the current
value of its counter and every ``$f{rand()}`` inside draws afresh on each iteration.

* ``<include file="p" a="v" .../>`` — ``p`` is relative to the including file. The included text goes through text
  substitution (include attributes, user variables, environment, ``|default``) and may hold several root elements;
  each is visited as if written in place. Cycles are reported with the chain of files.
* ``<variable name="N" value="V"/>`` — defines or overwrites a global user variable (unless ``load_world`` was
  given it: :mod:`mvsim_core.xml.overrides`).
* ``<for var="i" from="a" to="b">`` — inclusive integer range; for each child, for each value (child-major order,
  as upstream).
* ``<if condition="c">`` — visits its children when ``c`` is true: yes/true/on (any case) or a non-zero integer.

The walk is iterative (a stack of iterators, not Python recursion), so however deep ``<if>``, ``<for>`` and
``<include>`` nest, no ``RecursionError`` can happen; what a load may expand into is bounded by the
:class:`~mvsim_core.xml.limits.LoadBudget` of its :class:`~mvsim_core.xml.context.ParseContext` (``<for>``
iterations of all loops together, include depth, number and size of included files, nesting depth, value length),
each with a :class:`~mvsim_core.errors.WorldFileError` at the tag that goes over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from mvsim_core.errors import WorldFileError
from mvsim_core.io.file_check import FileProblem, file_problem, read_bytes_limited
from mvsim_core.xml.context import CURRENT_DIR_VAR, ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.parser import decode_bytes, parse_text
from mvsim_core.xml.substitution import RETAINED, SubstitutionError, ValueTooLong, substitute_text

Handler = Callable[[XmlNode], None]

_TRUE_WORDS = {"y", "yes", "true", "on"}
_SHOWN_PATH = 200  # longest path quoted whole in a message (characters)


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


def shown_path(path: str | Path) -> str:
    """``path`` for a message: whole when short, else its start and end around ``...``."""
    s = str(path)
    if len(s) <= _SHOWN_PATH:
        return s
    return f"{s[:120]}...{s[-60:]} ({len(s)} characters)"


def _file_key(path: str | Path) -> str:
    """The resolved path that identifies a file in an include chain (``path`` itself when it cannot be resolved)."""
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return str(path)


def read_included(path: Path, node: XmlNode, ctx: ParseContext, *, retain: frozenset[str] = RETAINED,
                  stack: tuple[str, ...] = ()) -> tuple[str, list[XmlNode]]:
    """Read an included file: text substitution with the include's attributes, then lenient parse.

    Args:
        path: resolved file path.
        node: the ``<include>`` node (its attributes become variables; errors about the include point here).
        ctx: parse context (its budget counts the file and its characters).
        retain: variable names left untouched when undefined.
        stack: resolved paths of the files currently being included (cycle detection and include depth).

    Returns:
        The file's key in an include chain (its resolved path) and its root elements.

    Raises:
        WorldFileError: at the include (missing, unreadable or unusable path, cycle, a limit passed) or in the
            included file (binary data, bad XML, substitution error).
    """
    shown = shown_path(path)
    try:
        key = str(path.resolve()) if path.exists() else str(path)
        if key in stack:
            chain = " -> ".join(Path(p).name for p in (*stack[stack.index(key):], key))
            raise ctx.error(node, f"include cycle: {chain}; remove one of these <include>s", attr="file")
        limits = ctx.limits
        if len(stack) > limits.include_depth:
            raise ctx.error(node, limits.message("include_depth", f"<include> nested {len(stack)} levels deep",
                                                 "include levels"), attr="file")
        problem = file_problem(path, max_bytes=None)
        if problem is not None and problem.startswith("cannot be used ("):
            raise ctx.error(node, f"cannot use included file {shown}: {problem[16:-1]}; check the file=\"...\" "
                                  f"path", attr="file")
        if problem is not None:
            raise ctx.error(node, f"included file {problem}: {shown}", attr="file")
        ctx.budget.charge_include(node.file, node.attr_lines.get("file", node.line))
        size = path.stat().st_size
        if size > ctx.budget.bytes_left():
            raise ctx.error(node, ctx.budget.included_bytes_message(size), attr="file")
        try:
            data = read_bytes_limited(path, ctx.budget.bytes_left())
        except FileProblem as e:  # changed since it was looked at: grew, or became something else
            msg = (ctx.budget.included_bytes_message(size) if e.problem.startswith("is too large")
                   else f"included file {e.problem}: {shown}")
            raise ctx.error(node, msg, attr="file") from None
    except OSError as e:  # a name too long, a permission, a device error
        reason = e.strerror or str(e)
        raise ctx.error(node, f"cannot use included file {shown}: {reason}; check the file=\"...\" path",
                        attr="file") from None
    except RuntimeError as e:  # a symlink loop while resolving
        raise ctx.error(node, f"cannot use included file {shown}: {e}", attr="file") from None
    name = str(path)
    text = decode_bytes(data, name)
    variables = dict(ctx.variables)
    for k, v in node.attrs.items():
        if k != "file":
            variables[k] = v
    if ctx.overrides:
        variables.update(ctx.overrides.for_include(key, text))
    variables[CURRENT_DIR_VAR] = str(Path(key).parent)
    try:
        text = substitute_text(text, variables, ctx.env, retain, max_length=ctx.budget.bytes_left())
    except ValueTooLong as e:
        raise ctx.error(node, ctx.budget.included_bytes_message(e.length), attr="file") from None
    except SubstitutionError as e:
        if e.offset < 0:  # not tied to one place in the file: blame the include and its attributes
            raise ctx.error(node, e.message) from None
        raise WorldFileError(name, text.count("\n", 0, e.offset) + 1, e.message) from None
    ctx.budget.charge_bytes(len(text), node.file, node.attr_lines.get("file", node.line))
    roots = parse_text(text, name, warn=ctx.warn_at, max_depth=ctx.limits.nesting_depth)
    if not roots:
        raise WorldFileError(name, 1, "included file holds no XML element")
    return key, roots


def _define_variable(node: XmlNode, ctx: ParseContext) -> None:
    name = ctx.require_attr(node, "name")
    if "value" not in node.attrs:
        raise ctx.error(node, f"<variable name=\"{name}\"> needs a value=\"...\" attribute")
    value = ctx.attr(node, "value", keep_literal=True) or ""
    if not ctx.overrides.pins(name):  # a value set from outside stays (evaluated all the same: the same random draws)
        ctx.variables[name] = value


def _condition(node: XmlNode, ctx: ParseContext) -> bool:
    if "condition" not in node.attrs:
        raise ctx.error(node, "<if> needs a condition=\"...\" attribute")
    return is_true_condition(ctx.attr(node, "condition") or "")


class Walker:
    """Visit nodes, expanding flow-control tags and dispatching the rest (iteratively: see the module docstring).

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
        """Visit ``nodes`` in order, and what flow control expands them into, depth first."""
        frames: list[Iterator[XmlNode]] = [iter(nodes)]
        flow = {"include": self._include, "for": self._for, "if": self._if}
        try:
            while frames:
                node = next(frames[-1], None)
                if node is None:
                    frames.pop()
                    continue
                tag = node.tag
                expand = flow.get(tag)
                if expand is not None:
                    frames.append(expand(node))
                elif tag == "variable":
                    _define_variable(node, self.ctx)
                elif tag in self.handlers:
                    self.handlers[tag](node)
                else:
                    self.on_unknown(node)
        finally:
            for f in reversed(frames):  # an error part-way: undo what open includes changed, innermost first
                close = getattr(f, "close", None)
                if close is not None:
                    close()

    def visit(self, node: XmlNode) -> None:
        """Visit one node (see :meth:`walk`)."""
        self.walk((node,))

    def start_file(self, path: str | Path) -> None:
        """Record the top-level file, so that including it again is reported as a cycle."""
        self._stack = (_file_key(path),)

    def _include(self, node: XmlNode) -> Iterator[XmlNode]:
        ctx = self.ctx
        path = ctx.resolve_path(ctx.require_attr(node, "file"), node)
        key, roots = read_included(path, node, ctx, stack=self._stack)
        saved = self._stack
        self._stack = saved + (key,)
        try:
            yield from roots
        finally:
            self._stack = saved

    def _for(self, node: XmlNode) -> Iterator[XmlNode]:
        ctx = self.ctx
        var = ctx.require_attr(node, "var")
        bounds = []
        for key in ("from", "to"):
            raw = ctx.require_attr(node, key)
            try:
                bounds.append(int(raw, 10))
            except ValueError:
                raise ctx.error(node, f"<for> bound {key}=\"{raw[:40]}\" is not an integer; loops count in whole "
                                      f"numbers", attr=key) from None
        lo, hi = bounds
        children = node.children
        if not children:
            ctx.warn(node, "<for> loop has an empty body")
        ctx.budget.charge_loop(hi - lo + 1, len(children), node.file, node.line)
        for child in children:  # child-major order, as upstream
            for i in range(lo, hi + 1):
                ctx.variables[var] = str(i)
                yield child

    def _if(self, node: XmlNode) -> Iterator[XmlNode]:
        return iter(node.children) if _condition(node, self.ctx) else iter(())


def expand_body(nodes: Iterable[XmlNode], ctx: ParseContext, *,
                stack: tuple[str, ...] = ()) -> list[XmlNode]:
    """Expand flow control inside an object body (vehicle, block or actor class or instance).

    ``<include>`` children are replaced by what they include (``NAME`` and ``PARENT_NAME`` stay unresolved for the
    sensors inside), ``<if>`` by its children when its condition holds, and ``<variable>`` is defined on the spot.
    Iterative like :class:`Walker`, and charged to the same budget (each instance reads its class's includes again).
    """
    out: list[XmlNode] = []
    frames: list[tuple[Iterator[XmlNode], tuple[str, ...]]] = [(iter(nodes), stack)]
    while frames:
        it, chain = frames[-1]
        n = next(it, None)
        if n is None:
            frames.pop()
        elif n.tag == "include":
            here = chain or (_file_key(n.file),)
            path = ctx.resolve_path(ctx.require_attr(n, "file"), n)
            key, roots = read_included(path, n, ctx, stack=here)
            frames.append((iter(roots), here + (key,)))
        elif n.tag == "if":
            if _condition(n, ctx):
                frames.append((iter(n.children), chain))
        elif n.tag == "variable":
            _define_variable(n, ctx)
        else:
            out.append(n)
    return out


def expanded(node: XmlNode, ctx: ParseContext) -> XmlNode:
    """``node`` with its body expanded by :func:`expand_body` (the node itself when there is nothing to expand)."""
    if not any(c.tag in ("include", "if", "variable") for c in node.children):
        return node
    return XmlNode(tag=node.tag, attrs=node.attrs, children=expand_body(node.children, ctx), text=node.text,
                   file=node.file, line=node.line, attr_lines=node.attr_lines)

