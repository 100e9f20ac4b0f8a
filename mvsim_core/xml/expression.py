"""Safe evaluator for the math expressions of ``$f{...}`` in world files.

Upstream MVSim evaluates ``$f{expr}`` with the exprtk library; this module implements the subset that world files
use with its own tokenizer and precedence-climbing parser.  Nothing is ever handed to Python's ``eval``/``exec``:
the grammar has no strings, attributes, subscripts or lambdas, so anything else is refused with
:class:`~mvsim_core.errors.ExpressionError` before a single operation runs.

Grammar, lowest precedence first (every value is a float64; booleans are 1.0 / 0.0, any non-zero value, NaN
included, counts as true)::

    expr    := logic [ "?" expr ":" expr ]              ternary, right-associative, only one branch is evaluated
    logic   := or-level: or || nor xor                  left-associative, both sides always evaluated
               and-level: and && nand                   left-associative, both sides always evaluated
    compare := sum [ (< <= > >= == = != <>) sum ]*      left-associative: 1 < 2 < 3 means (1 < 2) < 3
    sum     := product [ (+ -) product ]*
    product := unary [ (* / %) unary ]*                 % is C fmod (result has the sign of the dividend)
    unary   := (- + not !) unary | power
    power   := primary [ "^" unary ]                    right-associative and tighter than unary minus:
                                                        2^3^2 = 512, -2^2 = -4, 2^-1 = 0.5
    primary := NUMBER | NAME | NAME "(" [ expr ("," expr)* ] ")" | "(" expr ")"

Numbers: ``1``, ``1.5``, ``.5``, ``1.``, ``1e-3``, ``2.5E+2``.  Names are ``[A-Za-z_][A-Za-z0-9_]*``; a name
followed by ``(`` is a function call, any other name is a variable looked up (case-sensitively) in the
``variables`` mapping, falling back to the constants ``pi``, ``epsilon``, ``true`` and ``false``.  The keywords
``and or not nand nor xor`` and function names are case-insensitive, as in exprtk.

Functions: sin cos tan asin acos atan atan2(y, x) sinh cosh tanh sqrt abs sgn min(...) max(...) floor ceil
trunc round (half away from zero, like C) exp log (natural) log2 log10 pow(a, b) hypot(a, b) deg2rad rad2deg
if(c, a, b) (lazy, like the ternary), and the random functions rand() ~ U(0, 1), unifrnd(a, b) ~ U(a, b),
randn() ~ N(0, 1) and randomize(seed) (reseeds the world's generator and returns 0), which all draw from the
:class:`~mvsim_core.rng.WorldRandom` passed as ``rng``. ``unifrnd(a, b)`` needs finite ``a <= b`` (and ``b - a``
finite), ``randomize(seed)`` a finite seed >= 0; anything else is an :class:`ExpressionError`.

Math follows IEEE / C semantics instead of raising: ``1/0 = inf``, ``0/0 = nan``, ``sqrt(-1) = nan``,
``log(0) = -inf``, ``pow(0, -1) = inf``, overflow gives ``±inf``; ``min``/``max`` behave like C++
``std::min``/``std::max`` (a NaN first argument is kept).  Evaluation is left to right, so a sequence of random
draws is reproducible.  Expressions longer than 10000 characters or nested deeper than 200 levels are refused.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import sys
from collections.abc import Callable, Mapping
from typing import NamedTuple

from mvsim_core.errors import ExpressionError
from mvsim_core.rng import WorldRandom

__all__ = ["Expression", "compile_expression", "evaluate", "format_number"]

MAX_LENGTH = 10000
MAX_DEPTH = 200

_INF = math.inf
_NAN = math.nan
_CONSTANTS: dict[str, float] = {"pi": math.pi, "epsilon": sys.float_info.epsilon, "true": 1.0, "false": 0.0}

Fn = Callable[[Mapping[str, float], "WorldRandom | None"], float]


# ----------------------------------------------------------------------------------------------------------------
# IEEE-style arithmetic helpers (never raise)


def _is_odd_int(x: float) -> bool:
    return math.isfinite(x) and x.is_integer() and math.fmod(x, 2.0) != 0.0


def _div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0.0 or a != a:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def _mod(a: float, b: float) -> float:
    try:
        return math.fmod(a, b)
    except ValueError:  # fmod(x, 0), fmod(inf, y)
        return _NAN


def _pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return -_INF if a < 0.0 and _is_odd_int(b) else _INF
    except ValueError:
        if a == 0.0:  # zero to a negative power
            return math.copysign(_INF, a) if _is_odd_int(b) else _INF
        return _NAN  # negative base, non-integer exponent


def _domain(f: Callable[[float], float], overflow: Callable[[float], float] = lambda x: _INF) -> Callable:
    def g(x: float) -> float:
        try:
            return f(x)
        except ValueError:
            return _NAN
        except OverflowError:
            return overflow(x)

    return g


def _logarithm(f: Callable[[float], float]) -> Callable[[float], float]:
    return lambda x: f(x) if x > 0.0 else (-_INF if x == 0.0 else _NAN)


def _rounding(f: Callable[[float], int]) -> Callable[[float], float]:
    # keeps inf/nan and the sign of zero, as C does (ceil(-0.5) = -0.0)
    return lambda x: math.copysign(float(f(x)), x) if math.isfinite(x) else x


def _round_half_away(x: float) -> int:
    ax = abs(x)
    t = math.floor(ax)
    return t + 1 if ax - t >= 0.5 else t


def _hypot(a: float, b: float) -> float:
    try:
        return math.hypot(a, b)
    except OverflowError:
        return _INF


def _truth(x: float) -> bool:
    return x != 0.0  # NaN is true, as in C


_BINARY: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _div,
    "%": _mod,
    "^": _pow,
    "<": lambda a, b: 1.0 if a < b else 0.0,
    "<=": lambda a, b: 1.0 if a <= b else 0.0,
    ">": lambda a, b: 1.0 if a > b else 0.0,
    ">=": lambda a, b: 1.0 if a >= b else 0.0,
    "==": lambda a, b: 1.0 if a == b else 0.0,
    "!=": lambda a, b: 1.0 if a != b else 0.0,
    "and": lambda a, b: 1.0 if a != 0.0 and b != 0.0 else 0.0,
    "nand": lambda a, b: 0.0 if a != 0.0 and b != 0.0 else 1.0,
    "or": lambda a, b: 1.0 if a != 0.0 or b != 0.0 else 0.0,
    "nor": lambda a, b: 0.0 if a != 0.0 or b != 0.0 else 1.0,
    "xor": lambda a, b: 1.0 if (a != 0.0) != (b != 0.0) else 0.0,
}
_UNARY: dict[str, Callable[[float], float]] = {
    "-": operator.neg,
    "not": lambda a: 0.0 if a != 0.0 else 1.0,
}
# binding levels of the infix operators (higher binds tighter); a unary operator binds between "*" and "^"
_LEVEL = {"?": 1, "or": 2, "nor": 2, "xor": 2, "and": 3, "nand": 3, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6, "^": 8}
_LEVEL.update(dict.fromkeys(("<", "<=", ">", ">=", "==", "!="), 4))
_POW_LEVEL = 8

_MANY = 1 << 30
# name -> (implementation, minimum and maximum argument count); all pure (foldable when arguments are constants)
_FUNCTIONS: dict[str, tuple[Callable[..., float], int, int]] = {
    "sin": (_domain(math.sin), 1, 1),
    "cos": (_domain(math.cos), 1, 1),
    "tan": (_domain(math.tan), 1, 1),
    "asin": (_domain(math.asin), 1, 1),
    "acos": (_domain(math.acos), 1, 1),
    "atan": (math.atan, 1, 1),
    "atan2": (math.atan2, 2, 2),
    "sinh": (_domain(math.sinh, lambda x: math.copysign(_INF, x)), 1, 1),
    "cosh": (_domain(math.cosh), 1, 1),
    "tanh": (math.tanh, 1, 1),
    "sqrt": (lambda x: math.sqrt(x) if x >= 0.0 else _NAN, 1, 1),
    "abs": (math.fabs, 1, 1),
    "sgn": (lambda x: 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0), 1, 1),
    "min": (lambda *a: min(a), 1, _MANY),
    "max": (lambda *a: max(a), 1, _MANY),
    "floor": (_rounding(math.floor), 1, 1),
    "ceil": (_rounding(math.ceil), 1, 1),
    "trunc": (_rounding(math.trunc), 1, 1),
    "round": (_rounding(_round_half_away), 1, 1),
    "exp": (_domain(math.exp), 1, 1),
    "log": (_logarithm(math.log), 1, 1),
    "log2": (_logarithm(math.log2), 1, 1),
    "log10": (_logarithm(math.log10), 1, 1),
    "pow": (_pow, 2, 2),
    "hypot": (_hypot, 2, 2),
    "deg2rad": (math.radians, 1, 1),
    "rad2deg": (math.degrees, 1, 1),
}


def _randomize(rng: WorldRandom, seed: float) -> float:
    if not math.isfinite(seed) or seed < 0.0:
        raise ExpressionError(f"randomize() needs a finite non-negative seed, got {format_number(seed)}")
    rng.reseed(int(seed))
    return 0.0


def _unifrnd(rng: WorldRandom, lo: float, hi: float) -> float:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ExpressionError(f"unifrnd(a, b) needs finite bounds, got unifrnd({format_number(lo)}, "
                              f"{format_number(hi)})")
    if lo > hi:
        raise ExpressionError(f"unifrnd(a, b) needs a <= b, got unifrnd({format_number(lo)}, {format_number(hi)}); "
                              f"swap the bounds")
    if not math.isfinite(hi - lo):
        raise ExpressionError(f"unifrnd(a, b): the range b - a of unifrnd({format_number(lo)}, {format_number(hi)}) "
                              f"overflows; keep it below 1.8e308")
    return rng.uniform(lo, hi)


# random functions: (implementation taking the generator first, argument count)
_RANDOM: dict[str, tuple[Callable[..., float], int]] = {
    "rand": (lambda rng: rng.uniform(0.0, 1.0), 0),
    "unifrnd": (_unifrnd, 2),
    "randn": (lambda rng: rng.normal(0.0, 1.0), 0),
    "randomize": (_randomize, 1),
}


# ----------------------------------------------------------------------------------------------------------------
# Tokenizer

_TOKEN_RE = re.compile(
    r"(?P<ws>[ \t\r\n\f\v]+)"
    r"|(?P<num>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>&&|\|\||<=|>=|==|!=|<>|[-+*/%^<>=!(),?:])"
)
_NUMBER_TAIL = re.compile(r"[A-Za-z0-9_.]")
_KEYWORDS = frozenset(("and", "or", "not", "nand", "nor", "xor"))
_ALIASES = {"&&": "and", "||": "or", "!": "not", "=": "==", "<>": "!="}


class _Token(NamedTuple):
    kind: str  # "num", "name", "op" or "end"
    value: str  # canonical operator / keyword, name, or number text
    pos: int  # 0-based offset in the expression text
    raw: str  # text as written


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            hint = " (strings are not supported)" if ch in "'\"" else ""
            raise ExpressionError(f"unexpected character {ch!r} at position {pos}{hint}", pos)
        kind, raw = m.lastgroup, m.group()
        assert kind is not None  # every alternative of _TOKEN_RE is a named group
        if kind == "num" and m.end() < n and _NUMBER_TAIL.match(text, m.end()):
            raise ExpressionError(f"malformed number '{text[pos : m.end() + 1]}' at position {pos}", pos)
        if kind == "name" and raw.lower() in _KEYWORDS:
            tokens.append(_Token("op", raw.lower(), pos, raw))
        elif kind == "op":
            tokens.append(_Token("op", _ALIASES.get(raw, raw), pos, raw))
        elif kind != "ws":
            tokens.append(_Token(kind, raw, pos, raw))
        pos = m.end()
    tokens.append(_Token("end", "", n, ""))
    return tokens


# ----------------------------------------------------------------------------------------------------------------
# Parser: builds a tree of closures ``fn(variables, rng) -> float`` directly, folding constant sub-trees.


class _Node(NamedTuple):
    fn: Fn
    const: float | None  # value when the sub-tree is constant
    depth: int  # closure nesting depth (bounds the evaluation recursion)


def _const(value: float) -> _Node:
    return _Node(lambda v, r: value, value, 1)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0
        self.names: set[str] = set()

    def parse(self) -> _Node:
        if self.tokens[0].kind == "end":
            raise ExpressionError("empty expression", 0)
        node = self.expr(0)
        tok = self.tokens[self.i]
        if tok.kind != "end":
            raise self.unexpected(tok, "; expected an operator")
        return node

    def unexpected(self, tok: _Token, hint: str = "") -> ExpressionError:
        if tok.kind == "end":
            return ExpressionError(f"unexpected end of expression{hint}", tok.pos)
        return ExpressionError(f"unexpected '{tok.raw}' at position {tok.pos}{hint}", tok.pos)

    def node(self, fn: Fn, children: tuple[_Node, ...], pos: int) -> _Node:
        depth = 1 + max((c.depth for c in children), default=0)
        if depth > MAX_DEPTH:
            raise ExpressionError("expression nested too deeply", pos)
        return _Node(fn, None, depth)

    def close(self, open_tok: _Token, hint: str) -> None:
        tok = self.tokens[self.i]
        if tok.kind == "end":
            raise ExpressionError(f"missing ')' for the '(' at position {open_tok.pos}", tok.pos)
        if tok.value != ")":
            raise self.unexpected(tok, hint)
        self.i += 1

    def expr(self, min_level: int) -> _Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError("expression nested too deeply", self.tokens[self.i].pos)
        left = self.prefix()
        chain: list[tuple[str, _Node]] = []  # pending run of same-level left-associative operators
        chain_level = 0
        while True:
            tok = self.tokens[self.i]
            level = _LEVEL.get(tok.value) if tok.kind == "op" else None
            if level is None or level < min_level:
                break
            self.i += 1
            if level != chain_level and chain:
                left, chain = self.chain(left, chain, tok.pos), []
            if tok.value == "?":
                mid = self.expr(1)
                colon = self.tokens[self.i]
                if colon.value != ":" or colon.kind != "op":
                    raise self.unexpected(colon, "; expected ':' of the '?' operator")
                self.i += 1
                left = self.conditional(left, mid, self.expr(1), tok.pos)
            elif tok.value == "^":  # right-associative; the exponent may carry a unary sign
                left = self.chain(left, [("^", self.expr(_POW_LEVEL))], tok.pos)
            else:
                chain_level = level
                chain.append((tok.value, self.expr(level + 1)))
        if chain:
            left = self.chain(left, chain, self.tokens[self.i].pos)
        self.depth -= 1
        return left

    def prefix(self) -> _Node:
        tok = self.tokens[self.i]
        self.i += 1
        if tok.kind == "num":
            return _const(float(tok.value))
        if tok.kind == "name":
            nxt = self.tokens[self.i]
            if nxt.kind == "op" and nxt.value == "(":
                self.i += 1
                return self.call(tok, nxt)
            return self.variable(tok)
        if tok.kind == "op" and tok.value == "(":
            inner = self.expr(0)
            self.close(tok, "; expected ')' or an operator")
            return inner
        if tok.kind == "op" and tok.value in ("-", "+", "not"):
            operand = self.expr(_POW_LEVEL)
            if tok.value == "+":
                return operand
            f, a = _UNARY[tok.value], operand.fn
            if operand.const is not None:
                return _const(f(operand.const))
            return self.node(lambda v, r: f(a(v, r)), (operand,), tok.pos)
        raise self.unexpected(tok)

    def variable(self, tok: _Token) -> _Node:
        name, pos = tok.value, tok.pos
        default = _CONSTANTS.get(name)
        if default is None:
            self.names.add(name)

        def lookup(v: Mapping[str, float], r: WorldRandom | None) -> float:
            try:
                value = v[name]
            except KeyError:
                if default is not None:
                    return default
                known = sorted(v)
                listed = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "") if known else "(none)"
                raise ExpressionError(
                    f"unknown variable '{name}' in expression; known variables: {listed}", pos
                ) from None
            try:
                return float(value)
            except (TypeError, ValueError):
                raise ExpressionError(f"variable '{name}' is not a number: {value!r}", pos) from None

        return _Node(lookup, None, 1)

    def call(self, name_tok: _Token, open_tok: _Token) -> _Node:
        args: list[_Node] = []
        if self.tokens[self.i].value != ")" or self.tokens[self.i].kind != "op":
            while True:
                args.append(self.expr(0))
                tok = self.tokens[self.i]
                if tok.kind != "op" or tok.value != ",":
                    break
                self.i += 1
        name = name_tok.value.lower()
        self.close(open_tok, "; expected ',' or ')'")
        pos, n = name_tok.pos, len(args)
        if name == "if":
            self.check_arity(name, n, 3, 3, pos)
            return self.conditional(args[0], args[1], args[2], pos)
        if name in _RANDOM:
            impl, arity = _RANDOM[name]
            self.check_arity(name, n, arity, arity, pos)
            return self.random_call(name, impl, args, pos)
        if name not in _FUNCTIONS:
            raise ExpressionError(f"unknown function '{name_tok.value}' at position {pos}", pos)
        f, lo, hi = _FUNCTIONS[name]
        self.check_arity(name, n, lo, hi, pos)
        if all(a.const is not None for a in args):
            return _const(float(f(*[a.const for a in args])))
        fns = tuple(a.fn for a in args)
        if n == 1:
            a = fns[0]
            return self.node(lambda v, r: f(a(v, r)), tuple(args), pos)
        if n == 2:
            a, b = fns
            return self.node(lambda v, r: f(a(v, r), b(v, r)), tuple(args), pos)
        return self.node(lambda v, r: f(*[g(v, r) for g in fns]), tuple(args), pos)

    @staticmethod
    def check_arity(name: str, n: int, lo: int, hi: int, pos: int) -> None:
        if lo <= n <= hi:
            return
        if lo == hi:
            expected = f"{lo} argument" + ("" if lo == 1 else "s")
        else:
            expected = f"at least {lo} argument" + ("" if lo == 1 else "s")
        raise ExpressionError(f"function '{name}' takes {expected}, got {n} (at position {pos})", pos)

    def random_call(self, name: str, impl: Callable[..., float], args: list[_Node], pos: int) -> _Node:
        fns = tuple(a.fn for a in args)

        def draw(v: Mapping[str, float], r: WorldRandom | None) -> float:
            if r is None:
                raise ExpressionError(f"random function '{name}' needs the world's random generator", pos)
            values = [g(v, r) for g in fns]  # arguments first, then the draw: left-to-right order
            try:
                return float(impl(r, *values))
            except ExpressionError as e:
                raise ExpressionError(e.message, pos if e.position < 0 else e.position) from None

        return self.node(draw, tuple(args), pos)

    def conditional(self, cond: _Node, yes: _Node, no: _Node, pos: int) -> _Node:
        if cond.const is not None:
            return yes if _truth(cond.const) else no
        c, a, b = cond.fn, yes.fn, no.fn
        return self.node(lambda v, r: a(v, r) if c(v, r) != 0.0 else b(v, r), (cond, yes, no), pos)

    def chain(self, first: _Node, rest: list[tuple[str, _Node]], pos: int) -> _Node:
        """Left fold of ``first op1 x1 op2 x2 ...``: one closure level however long the run."""
        if first.const is not None and all(x.const is not None for _, x in rest):
            acc = first.const
            for op, x in rest:
                acc = _BINARY[op](acc, x.const)  # type: ignore[arg-type]
            return _const(acc)
        a = first.fn
        if len(rest) == 1:
            f, b = _BINARY[rest[0][0]], rest[0][1].fn
            return self.node(lambda v, r: f(a(v, r), b(v, r)), (first, rest[0][1]), pos)
        pairs = tuple((_BINARY[op], x.fn) for op, x in rest)

        def run(v: Mapping[str, float], r: WorldRandom | None) -> float:
            acc = a(v, r)
            for f, g in pairs:
                acc = f(acc, g(v, r))
            return acc

        return self.node(run, (first, *(x for _, x in rest)), pos)


# ----------------------------------------------------------------------------------------------------------------
# Public API

_NO_VARIABLES: Mapping[str, float] = {}


class Expression:
    """A parsed expression, ready to be evaluated many times.

    Attributes:
        text: the source text.
        names: the variable names the expression reads (built-in constants such as ``pi`` excluded), i.e.
            exactly the names that must be in ``variables`` for :meth:`evaluate` to succeed.
    """

    __slots__ = ("text", "names", "_fn")

    def __init__(self, text: str, names: frozenset[str], fn: Fn) -> None:
        self.text = text
        self.names = names
        self._fn = fn

    def evaluate(self, variables: Mapping[str, float] | None = None, rng: WorldRandom | None = None) -> float:
        """Value of the expression; ``rng`` is needed only by the random functions.

        Raises:
            ExpressionError: unknown or non-numeric variable, random function without ``rng``, bad seed.
        """
        return float(self._fn(_NO_VARIABLES if variables is None else variables, rng))

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


def compile_expression(text: str) -> Expression:
    """Parse ``text`` once (see the module docstring for the language).

    Raises:
        ExpressionError: syntax error, unknown function, wrong argument count, too long or too deeply nested;
            ``position`` is the 0-based offset of the offending character.
    """
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression too long ({len(text)} characters; at most {MAX_LENGTH})")
    parser = _Parser(text)
    node = parser.parse()
    return Expression(text, frozenset(parser.names), node.fn)


_compile_cached = functools.lru_cache(maxsize=512)(compile_expression)


def evaluate(text: str, variables: Mapping[str, float] | None = None, rng: WorldRandom | None = None) -> float:
    """Parse (through a small LRU cache keyed by ``text``) and evaluate ``text``.

    Raises:
        ExpressionError: as :func:`compile_expression` and :meth:`Expression.evaluate`.
    """
    return _compile_cached(text).evaluate(variables, rng)


def format_number(value: float) -> str:
    """Format like C ``printf("%g")``: 6 significant digits (``0.1``, ``1e-07``, ``1.23457e+06``, ``-0``, ``nan``)."""
    return f"{value:g}"
