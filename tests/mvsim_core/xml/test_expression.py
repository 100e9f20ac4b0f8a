"""Tests of the ``$f{...}`` expression evaluator (mvsim_core.xml.expression)."""

from __future__ import annotations

import ast
import ctypes
import ctypes.util
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mvsim_core.xml.expression as expression_module
from mvsim_core.errors import ExpressionError
from mvsim_core.rng import WorldRandom
from mvsim_core.xml.expression import MAX_DEPTH, compile_expression, evaluate, format_number

NAN, INF = math.nan, math.inf


def same(a: float, b: float) -> bool:
    """Both NaN, the same infinity, or close."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# ----------------------------------------------------------------------------------------------------------------
# Literal cases

CASES = [
    ("1", 1.0),
    ("1.5", 1.5),
    (".5", 0.5),
    ("1.", 1.0),
    ("1e-3", 0.001),
    ("2.5E+2", 250.0),
    ("  1 +\n\t2 ", 3.0),
    ("1+2*3", 7.0),
    ("(1+2)*3", 9.0),
    ("10-4-3", 3.0),
    ("64/4/2", 8.0),
    ("2^3^2", 512.0),
    ("-2^2", -4.0),
    ("(-2)^2", 4.0),
    ("2^-1", 0.5),
    ("2^-1*3", 1.5),
    ("-3*-2", 6.0),
    ("--3", 3.0),
    ("+3", 3.0),
    ("7%3", 1.0),
    ("-7%3", -1.0),
    ("7%-3", 1.0),
    ("5.5%2", 1.5),
    ("1<2", 1.0),
    ("2<=2", 1.0),
    ("3>4", 0.0),
    ("4>=5", 0.0),
    ("2==2", 1.0),
    ("2=2", 1.0),
    ("2!=2", 0.0),
    ("2<>3", 1.0),
    ("1 < 2 < 3", 1.0),  # (1 < 2) < 3
    ("3 > 2 > 1", 0.0),  # (3 > 2) > 1 -> 1 > 1
    ("1+1 == 2", 1.0),
    ("1<2 and 3>4", 0.0),
    ("1<2 or 3>4", 1.0),
    ("0 or 0", 0.0),
    ("2 and -1", 1.0),
    ("1 xor 1", 0.0),
    ("1 xor 0", 1.0),
    ("1 nand 1", 0.0),
    ("0 nor 0", 1.0),
    ("1 || 0 && 0", 1.0),  # and binds tighter than or
    ("0 and 0 or 1", 1.0),
    ("1 AND 1", 1.0),
    ("0 Or 1", 1.0),
    ("not 0", 1.0),
    ("not 3", 0.0),
    ("NOT 0", 1.0),
    ("!0", 1.0),
    ("not(1 < 2)", 0.0),
    ("not 1 < 2", 1.0),  # unary binds tighter: (not 1) < 2
    ("if(1>0, 5, 6)", 5.0),
    ("if(0, 5, 6)", 6.0),
    ("1 ? 2 : 3", 2.0),
    ("0 ? 2 : 3", 3.0),
    ("0 ? 2 : 0 ? 4 : 5", 5.0),  # right-associative
    ("1 ? 0 ? 7 : 8 : 9", 8.0),
    ("1 + 1 > 1 ? 10 : 20", 10.0),
    ("nan_is_true ? 1 : 2", 1.0),  # variable bound to nan below
    ("pi", math.pi),
    ("2*pi", 2 * math.pi),
    ("epsilon", 2.220446049250313e-16),
    ("true + true", 2.0),
    ("false", 0.0),
    ("deg2rad(180)", math.pi),
    ("rad2deg(pi/2)", 90.0),
    ("sin(0)", 0.0),
    ("cos(0)", 1.0),
    ("tan(0)", 0.0),
    ("asin(1)", math.pi / 2),
    ("acos(1)", 0.0),
    ("atan(1)", math.pi / 4),
    ("atan2(1,1)", math.pi / 4),
    ("atan2(1, -1)", 3 * math.pi / 4),
    ("sinh(0) + cosh(0) + tanh(0)", 1.0),
    ("sqrt(16)", 4.0),
    ("abs(-3)", 3.0),
    ("sgn(-3) + 10*sgn(2) + 100*sgn(0)", 9.0),
    ("min(3,1,2)", 1.0),
    ("max(3,1,2)", 3.0),
    ("min(4)", 4.0),
    ("floor(-1.5)", -2.0),
    ("ceil(-1.5)", -1.0),
    ("trunc(-1.7)", -1.0),
    ("round(2.5)", 3.0),
    ("round(-2.5)", -3.0),
    ("round(0.49999999999999994)", 0.0),
    ("round(1.4)", 1.0),
    ("exp(0)", 1.0),
    ("log(exp(2))", 2.0),
    ("log10(1000)", 3.0),
    ("log2(8)", 3.0),
    ("pow(2, 10)", 1024.0),
    ("hypot(3, 4)", 5.0),
    ("SIN(0) + Cos(0)", 1.0),
    ("0.5*INDOOR_ROOM_SIZE", 5.0),
    ("if(iY<=3 or iY>=6, 1, 0)", 0.0),
    ("if(iY<=3 or iY>=6, 1, 0) + if(iY>=4 and iY<=5, 10, 0)", 10.0),
    ("iY*2.5 - 1", 9.0),
    # IEEE / C semantics instead of exceptions
    ("1/0", INF),
    ("-1/0", -INF),
    ("0/0", NAN),
    ("1/-0.0", -INF),
    ("5 % 0", NAN),
    ("sqrt(-1)", NAN),
    ("log(0)", -INF),
    ("log(-1)", NAN),
    ("log10(0)", -INF),
    ("asin(2)", NAN),
    ("sin(1/0)", NAN),
    ("exp(1000)", INF),
    ("10^400", INF),
    ("(-10)^309", -INF),
    ("0^-1", INF),
    ("(-8)^(1/3)", NAN),
    ("pow(0, -2)", INF),
    ("1e308*10", INF),
    ("1e999", INF),
    ("(1/0) - (1/0)", NAN),
    ("floor(1/0)", INF),
    ("round(0/0)", NAN),
    ("min(0/0, 1)", NAN),  # std::min keeps a NaN first argument
    ("min(1, 0/0)", 1.0),
]
CASE_VARIABLES = {"INDOOR_ROOM_SIZE": 10.0, "iY": 4, "nan_is_true": NAN}


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_literal_cases(text: str, expected: float) -> None:
    result = evaluate(text, CASE_VARIABLES)
    assert isinstance(result, float)
    assert same(result, expected), (text, result, expected)


def test_sign_of_zero_is_kept() -> None:
    assert math.copysign(1.0, evaluate("ceil(-0.5)")) == -1.0
    assert math.copysign(1.0, evaluate("round(-0.2)")) == -1.0
    assert math.copysign(1.0, evaluate("-0")) == -1.0


def test_world_file_expressions() -> None:
    # from the upstream world files, with the world's generator
    rng = WorldRandom(3)
    x = evaluate("-11+rand()*ROBOTS_SPREAD_X", {"ROBOTS_SPREAD_X": 4.0}, rng)
    assert x == -11 + WorldRandom(3).uniform(0.0, 1.0) * 4.0
    for i_y, expected in [(1, 1.0), (3, 1.0), (4, 0.0), (5, 0.0), (6, 1.0), (9, 1.0)]:
        assert evaluate("if(iY<=3 or iY>=6, 1, 0)", {"iY": i_y}) == expected


def test_variables() -> None:
    assert evaluate("a*b + c", {"a": 2, "b": 3.5, "c": -1}) == 6.0
    assert evaluate("pi", {"pi": 3}) == 3.0  # a variable shadows the constant
    assert evaluate("x_1 + _y2", {"x_1": 1, "_y2": 2}) == 3.0
    assert evaluate("X", {"X": "2.5"}) == 2.5  # values are converted with float()
    with pytest.raises(ExpressionError, match=r"variable 'X' is not a number: 'abc'") as info:
        evaluate("1 + X", {"X": "abc"})
    assert info.value.position == 4
    with pytest.raises(ExpressionError) as info:
        evaluate("A + Zed", {"B": 2, "A": 1})
    assert info.value.message == "unknown variable 'Zed' in expression; known variables: A, B"
    assert info.value.position == 4
    with pytest.raises(ExpressionError, match=r"known variables: \(none\)"):
        evaluate("q")
    many = {f"v{i:02d}": float(i) for i in range(25)}
    with pytest.raises(ExpressionError) as info:
        evaluate("nope", many)
    assert info.value.message.endswith("known variables: " + ", ".join(f"v{i:02d}" for i in range(20)) + ", ...")


def test_variables_are_case_sensitive_but_keywords_and_functions_are_not() -> None:
    assert evaluate("Ab - ab", {"Ab": 5, "ab": 1}) == 4.0
    with pytest.raises(ExpressionError, match="unknown variable 'AB'"):
        evaluate("AB", {"Ab": 5})
    assert evaluate("MAX(1, 2) Xor NoT 1") == 1.0


def test_compile_expression_names_and_reuse() -> None:
    expr = compile_expression("a + b*pi + sin(c) + if(d, e, 0) + rand()")
    assert expr.names == frozenset({"a", "b", "c", "d", "e"})
    assert expr.text == "a + b*pi + sin(c) + if(d, e, 0) + rand()"
    simple = compile_expression("2*x + 1")
    assert [simple.evaluate({"x": x}) for x in (0, 1, 2.5)] == [1.0, 3.0, 6.0]
    assert compile_expression("1 + 2").names == frozenset()
    assert compile_expression("1 + 2").evaluate() == 3.0
    assert "2*x" in repr(simple)


def test_evaluate_cache_gives_same_results() -> None:
    for i in range(3):
        assert evaluate("k*k", {"k": i}) == float(i * i)


def test_if_and_ternary_evaluate_only_the_chosen_branch() -> None:
    rng = WorldRandom(11)
    assert evaluate("1 ? 5 : rand()", rng=rng) == 5.0
    assert evaluate("if(x, missing, 2)", {"x": 0}) == 2.0  # the unknown variable is never read
    # nothing was drawn by the untaken branches
    assert evaluate("rand()", rng=rng) == WorldRandom(11).uniform(0.0, 1.0)


# ----------------------------------------------------------------------------------------------------------------
# Random functions


def test_rand_matches_world_random() -> None:
    assert evaluate("rand()", rng=WorldRandom(42)) == WorldRandom(42).uniform(0.0, 1.0)
    assert evaluate("unifrnd(-2, 3)", rng=WorldRandom(42)) == WorldRandom(42).uniform(-2.0, 3.0)
    assert evaluate("randn()", rng=WorldRandom(42)) == WorldRandom(42).normal(0.0, 1.0)


def test_random_draws_are_left_to_right() -> None:
    ref = WorldRandom(5)
    a, b, c = ref.uniform(0.0, 1.0), ref.uniform(0.0, 1.0), ref.normal(0.0, 1.0)
    assert evaluate("rand() - 10*rand() + 100*randn()", rng=WorldRandom(5)) == a - 10 * b + 100 * c


def test_same_seed_same_sequence() -> None:
    expr = compile_expression("unifrnd(0, 10) + rand()")
    r1, r2 = WorldRandom(9), WorldRandom(9)
    seq1 = [expr.evaluate(rng=r1) for _ in range(5)]
    seq2 = [expr.evaluate(rng=r2) for _ in range(5)]
    assert seq1 == seq2
    assert len(set(seq1)) == 5  # random calls are never constant-folded


def test_randomize_reseeds() -> None:
    rng = WorldRandom(1)
    evaluate("rand()", rng=rng)
    assert evaluate("randomize(7)", rng=rng) == 0.0
    first = evaluate("rand()", rng=rng)
    assert first == WorldRandom(7).uniform(0.0, 1.0)
    assert evaluate("randomize(7) + rand()", rng=rng) == first
    assert evaluate("randomize(6.9)", rng=rng) == 0.0  # truncated to 6
    assert rng.seed == 6
    with pytest.raises(ExpressionError, match="finite non-negative seed"):
        evaluate("randomize(-1)", rng=rng)
    with pytest.raises(ExpressionError, match="finite non-negative seed"):
        evaluate("randomize(0/0)", rng=rng)


@pytest.mark.parametrize("name", ["rand", "randn", "unifrnd", "randomize"])
def test_random_needs_generator(name: str) -> None:
    args = {"rand": "", "randn": "", "unifrnd": "0, 1", "randomize": "3"}[name]
    with pytest.raises(ExpressionError) as info:
        evaluate(f"1 + {name}({args})")
    assert info.value.message == f"random function '{name}' needs the world's random generator"
    assert info.value.position == 4


# ----------------------------------------------------------------------------------------------------------------
# Errors and positions

ERRORS = [
    ("1 + * 2", "unexpected '*' at position 4", 4),
    ("1 +", "unexpected end of expression", 3),
    ("1 + 2)", "unexpected ')' at position 5; expected an operator", 5),
    ("(1 + 2", "missing ')' for the '(' at position 0", 6),
    ("(1 2)", "unexpected '2' at position 3; expected ')' or an operator", 3),
    ("x y", "unexpected 'y' at position 2; expected an operator", 2),
    ("max(1,,2)", "unexpected ',' at position 6", 6),
    ("sin(1", "missing ')' for the '(' at position 3", 5),
    ("sin(1 2)", "unexpected '2' at position 6; expected ',' or ')'", 6),
    ("1 ? 2", "unexpected end of expression; expected ':' of the '?' operator", 5),
    ("1 ? 2 , 3", "unexpected ',' at position 6; expected ':' of the '?' operator", 6),
    ("()", "unexpected ')' at position 1", 1),
    ("and", "unexpected 'and' at position 0", 0),
    ("1 ^^ 2", "unexpected '^' at position 3", 3),
    ("", "empty expression", 0),
    ("  \n ", "empty expression", 0),
    ("1.2.3", "malformed number '1.2.' at position 0", 0),
    ("1 + 1e", "malformed number '1e' at position 4", 4),
    ("2x", "malformed number '2x' at position 0", 0),
    ("1 & 2", "unexpected character '&' at position 2", 2),
    ("a.b", "unexpected character '.' at position 1", 1),
    ("foo(1)", "unknown function 'foo' at position 0", 0),
    ("1 + sin(1, 2)", "function 'sin' takes 1 argument, got 2 (at position 4)", 4),
    ("atan2(1)", "function 'atan2' takes 2 arguments, got 1 (at position 0)", 0),
    ("min()", "function 'min' takes at least 1 argument, got 0 (at position 0)", 0),
    ("if(1, 2)", "function 'if' takes 3 arguments, got 2 (at position 0)", 0),
    ("rand(1)", "function 'rand' takes 0 arguments, got 1 (at position 0)", 0),
    ("unifrnd(1)", "function 'unifrnd' takes 2 arguments, got 1 (at position 0)", 0),
]


@pytest.mark.parametrize(("text", "message", "position"), ERRORS)
def test_syntax_errors(text: str, message: str, position: int) -> None:
    with pytest.raises(ExpressionError) as info:
        compile_expression(text)
    assert info.value.message == message
    assert info.value.position == position
    with pytest.raises(ExpressionError):
        evaluate(text, {"x": 1, "y": 2}, WorldRandom(0))


def test_too_long() -> None:
    with pytest.raises(ExpressionError, match=r"expression too long \(10001 characters; at most 10000\)"):
        evaluate("1" + " " * 10000)
    assert evaluate("+".join(["x"] * 4000), {"x": 0.5}) == 2000.0  # long flat chains are fine


@pytest.mark.parametrize(
    "text",
    [
        "(" * 1000 + "1" + ")" * 1000,
        "(" * 5000,
        "-" * 5000 + "1",
        "not " * 2000 + "1",
        "2^" * 3000 + "2",
        "sin(" * 1000 + "x" + ")" * 1000,
        "x?" * 2000 + "1" + ":1" * 2000,
        "(" * 150 + "x" + "*x+x<x and x or x)" * 150,  # deep closure nesting with few parentheses
    ],
)
def test_deep_nesting_is_refused_without_recursion_error(text: str) -> None:
    with pytest.raises(ExpressionError) as info:
        evaluate(text, {"x": 1.0})
    assert info.value.message == "expression nested too deeply"


def test_moderate_nesting_is_fine() -> None:
    depth = MAX_DEPTH // 2 - 5
    assert evaluate("(" * depth + "x" + ")" * depth, {"x": 2.0}) == 2.0
    assert evaluate("sin(" * depth + "x" + ")" * depth, {"x": 0.0}) == 0.0
    # five closure levels per parenthesis: 30 * 5 < MAX_DEPTH
    assert evaluate("(" * 30 + "x" + "*x+x<x and x or x)" * 30, {"x": 1.0}) == 1.0


# ----------------------------------------------------------------------------------------------------------------
# Security: there is nothing to execute


@pytest.mark.parametrize(
    "template",
    [
        "__import__('os').system('touch {marker}')",
        '__import__("os").system("touch {marker}")',
        "().__class__",
        "(1).__class__.__bases__",
        "a.b",
        "x[0]",
        '"str"',
        "'str'",
        "lambda: 1",
        "open('{marker}', 'w')",
        "open({marker})",
        "exec(1)",
        "eval(1)",
        "globals()",
        "x if 1 else 2",
        "[1, 2]",
        "{{1: 2}}",
        "x; touch",
        "1 # comment",
        "`id`",
        "x := 1",
        "\\x41",
        "１",  # full-width digit
    ],
)
def test_hostile_input_is_refused(template: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "pwned"
    text = template.format(marker=marker)
    with pytest.raises(ExpressionError):
        compile_expression(text)
    with pytest.raises(ExpressionError):
        evaluate(text, {"x": 1.0, "a": 1.0}, WorldRandom(0))
    assert list(tmp_path.iterdir()) == []


def test_module_never_calls_eval_exec_or_compile() -> None:
    tree = ast.parse(Path(expression_module.__file__).read_text())
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not called & {"eval", "exec", "compile", "__import__", "getattr", "open"}


# ----------------------------------------------------------------------------------------------------------------
# format_number


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (1e-7, "1e-07"),
        (1234567.0, "1.23457e+06"),
        (123456.0, "123456"),
        (3.0, "3"),
        (-2.5, "-2.5"),
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0 / 3.0, "0.333333"),
        (1e100, "1e+100"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (NAN, "nan"),
        (INF, "inf"),
        (-INF, "-inf"),
        (7, "7"),
    ],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text


# ----------------------------------------------------------------------------------------------------------------
# Property tests: random trees, rendered to our syntax, compared with a reference evaluator working on the tree.
# Trees are tuples: ("num", x) ("var", name) ("un", op, a) ("bin", op, a, b) ("call", name, args) ("if", c, a, b).

VAR_NAMES = ("x", "y", "z")
FUNCS_1 = ("sin", "cos", "tan", "atan", "sqrt", "abs", "floor", "ceil", "exp", "log", "log10", "asin", "acos")
FUNCS_2 = ("atan2", "pow", "hypot")
FUNCS_N = ("min", "max")


def _libm_function(name: str, arity: int):
    """The C library's own function: the ground truth for exprtk's semantics (which calls std::sin, std::pow...)."""
    f = getattr(_LIBM, name)
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_double] * arity
    return lambda *args: float(f(*args))


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
REF_FUNCS = {name: _libm_function(name, 1) for name in FUNCS_1 if name != "abs"}
REF_FUNCS.update({name: _libm_function(name, 2) for name in FUNCS_2})
REF_FUNCS["abs"] = _libm_function("fabs", 1)
REF_FUNCS["min"] = lambda *a: _fold(lambda acc, v: v if v < acc else acc, a)  # std::min semantics
REF_FUNCS["max"] = lambda *a: _fold(lambda acc, v: v if v > acc else acc, a)
C_FMOD = _libm_function("fmod", 2)
REF_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: float(np.float64(a) / np.float64(b)),
    "%": C_FMOD,
    "^": REF_FUNCS["pow"],
    "<": lambda a, b: float(a < b),
    "<=": lambda a, b: float(a <= b),
    ">": lambda a, b: float(a > b),
    ">=": lambda a, b: float(a >= b),
    "==": lambda a, b: float(a == b),
    "!=": lambda a, b: float(a != b),
    "and": lambda a, b: float(bool(a) and bool(b)),
    "or": lambda a, b: float(bool(a) or bool(b)),
    "xor": lambda a, b: float(bool(a) != bool(b)),
    "nand": lambda a, b: float(not (bool(a) and bool(b))),
    "nor": lambda a, b: float(not (bool(a) or bool(b))),
}
# spellings accepted for an operator
SPELLINGS = {
    "and": ("and", "&&", "AND"),
    "or": ("or", "||", "OR"),
    "==": ("==", "="),
    "!=": ("!=", "<>"),
    "not": ("not ", "!", "NOT "),
    "?": ("?", "if"),
}


def spelling(data: st.DataObject):
    """Picks one of the accepted spellings of an operator ("?" -> ternary or if())."""
    return lambda op: data.draw(st.sampled_from(SPELLINGS.get(op, (op,))))


def _fold(f, values):
    acc = values[0]
    for v in values[1:]:
        acc = f(acc, v)
    return acc


def reference(node: tuple, env: dict[str, float]) -> float:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "var":
        return env[node[1]]
    if kind == "un":
        a = reference(node[2], env)
        return -a if node[1] == "-" else float(a == 0)
    if kind == "bin":
        return REF_BINARY[node[1]](reference(node[2], env), reference(node[3], env))
    if kind == "call":
        return REF_FUNCS[node[1]](*[reference(a, env) for a in node[2]])
    assert kind == "if"
    return reference(node[2], env) if reference(node[1], env) != 0 else reference(node[3], env)


def render_full(node: tuple, draw_spelling) -> str:
    """Fully parenthesized rendering."""
    kind = node[0]
    if kind == "num":
        return repr(node[1]) if math.copysign(1.0, node[1]) > 0 else f"(-{repr(-node[1])})"
    if kind == "var":
        return node[1]
    if kind == "un":
        op = "-" if node[1] == "-" else draw_spelling("not")
        return f"({op}{render_full(node[2], draw_spelling)})"
    if kind == "bin":
        op = draw_spelling(node[1])
        return f"({render_full(node[2], draw_spelling)} {op} {render_full(node[3], draw_spelling)})"
    if kind == "call":
        return f"{node[1]}({', '.join(render_full(a, draw_spelling) for a in node[2])})"
    c, a, b = (render_full(x, draw_spelling) for x in node[1:])
    return f"({c} ? {a} : {b})" if draw_spelling("?") == "?" else f"if({c}, {a}, {b})"


LEVELS = {"or": 2, "xor": 2, "nor": 2, "and": 3, "nand": 3, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6, "^": 8}
LEVELS.update(dict.fromkeys(("<", "<=", ">", ">=", "==", "!="), 4))


def render_minimal(node: tuple) -> tuple[str, int]:
    """Rendering with only the parentheses the documented precedence needs; returns (text, level)."""
    kind = node[0]
    if kind == "num":
        if math.copysign(1.0, node[1]) > 0:
            return repr(node[1]), 9
        return f"-{repr(-node[1])}", 7
    if kind == "var":
        return node[1], 9
    if kind == "call":
        return f"{node[1]}({', '.join(render_minimal(a)[0] for a in node[2])})", 9

    def wrap(child: tuple, min_level: int) -> str:
        text, level = render_minimal(child)
        return text if level >= min_level else f"({text})"

    if kind == "un":
        return ("-" if node[1] == "-" else "not ") + wrap(node[2], 8), 7
    if kind == "bin":
        level = LEVELS[node[1]]
        if node[1] == "^":  # right-associative, left operand must be a primary, exponent may be unary
            return f"{wrap(node[2], 9)}^{wrap(node[3], 7)}", 8
        return f"{wrap(node[2], level)} {node[1]} {wrap(node[3], level + 1)}", level
    return f"{wrap(node[1], 2)} ? {wrap(node[2], 1)} : {wrap(node[3], 1)}", 1


numbers = st.one_of(
    st.integers(-5, 5).map(float),
    st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 0.5, 1e300, -1e300, 1e-300, 2.0**53]),
)
leaves = st.one_of(numbers.map(lambda x: ("num", x)), st.sampled_from(VAR_NAMES).map(lambda n: ("var", n)))
variable_values = st.one_of(numbers, st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([NAN, INF, -INF]))
environments = st.fixed_dictionaries({name: variable_values for name in VAR_NAMES})


def arithmetic_trees(children):
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(["+", "-", "*", "/", "^", "%"]), children, children),
        st.tuples(st.just("un"), st.just("-"), children),
        st.tuples(st.just("call"), st.sampled_from(FUNCS_1), st.lists(children, min_size=1, max_size=1)),
        st.tuples(st.just("call"), st.sampled_from(FUNCS_2), st.lists(children, min_size=2, max_size=2)),
        st.tuples(st.just("call"), st.sampled_from(FUNCS_N), st.lists(children, min_size=1, max_size=4)),
    )


def logic_trees(children):
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), children, children),
        st.tuples(st.just("bin"), st.sampled_from(["and", "or", "xor", "nand", "nor"]), children, children),
        st.tuples(st.just("un"), st.just("not"), children),
        st.tuples(st.just("if"), children, children, children),
        st.tuples(st.just("bin"), st.sampled_from(["+", "-", "*"]), children, children),
    )


arithmetic = st.recursive(leaves, arithmetic_trees, max_leaves=25)
logic = st.recursive(leaves, logic_trees, max_leaves=25)
mixed = st.recursive(leaves, lambda c: st.one_of(arithmetic_trees(c), logic_trees(c)), max_leaves=30)


def check(tree: tuple, text: str, env: dict[str, float]) -> None:
    with np.errstate(all="ignore"):
        expected = reference(tree, env)
    got = evaluate(text, env)
    assert same(got, expected), (text, env, got, expected)


@settings(max_examples=300, deadline=None)
@given(tree=arithmetic, env=environments, data=st.data())
def test_property_arithmetic(tree: tuple, env: dict[str, float], data: st.DataObject) -> None:
    check(tree, render_full(tree, spelling(data)), env)


@settings(max_examples=300, deadline=None)
@given(tree=logic, env=environments, data=st.data())
def test_property_logic_and_comparison(tree: tuple, env: dict[str, float], data: st.DataObject) -> None:
    check(tree, render_full(tree, spelling(data)), env)


@settings(max_examples=300, deadline=None)
@given(tree=mixed, env=environments)
def test_property_precedence_with_minimal_parentheses(tree: tuple, env: dict[str, float]) -> None:
    text, _ = render_minimal(tree)
    check(tree, text, env)


@settings(max_examples=100, deadline=None)
@given(tree=mixed, envs=st.lists(environments, min_size=1, max_size=4))
def test_property_compiled_expression_is_reusable(tree: tuple, envs: list[dict[str, float]]) -> None:
    text, _ = render_minimal(tree)
    expr = compile_expression(text)
    assert expr.names == frozenset(_names(tree))
    for env in envs:
        with np.errstate(all="ignore"):
            expected = reference(tree, env)
        assert same(expr.evaluate(env), expected)


def _names(node: tuple) -> set[str]:
    if node[0] == "var":
        return {node[1]}
    if node[0] == "num":
        return set()
    children = node[2] if node[0] == "call" else [c for c in node[1:] if isinstance(c, tuple)]
    return set().union(*(_names(c) for c in children))


@pytest.mark.parametrize(("text", "message"), [
    ("unifrnd(1, 0)", "unifrnd(a, b) needs a <= b, got unifrnd(1, 0); swap the bounds"),
    ("unifrnd(0, 1/0)", "unifrnd(a, b) needs finite bounds, got unifrnd(0, inf)"),
    ("unifrnd(0/0, 1)", "unifrnd(a, b) needs finite bounds, got unifrnd(nan, 1)"),
    ("unifrnd(-1e308, 1e308)", "unifrnd(a, b): the range b - a of unifrnd(-1e+308, 1e+308) overflows; keep it "
                               "below 1.8e308"),
    ("randomize(1/0)", "randomize() needs a finite non-negative seed, got inf"),
])
def test_random_functions_refuse_bad_arguments(text: str, message: str) -> None:
    """numpy used to raise ValueError / OverflowError out of the evaluator (unifrnd(1, 0), a range over 1.8e308)."""
    with pytest.raises(ExpressionError) as info:
        evaluate("2 * " + text, rng=WorldRandom(0))
    assert (info.value.message, info.value.position) == (message, 4)


def test_random_functions_at_the_edges_of_their_domain() -> None:
    assert evaluate("unifrnd(5, 5)", rng=WorldRandom(0)) == 5.0
    assert -1e300 <= evaluate("unifrnd(-1e300, 1e300)", rng=WorldRandom(0)) <= 1e300
    rng = WorldRandom(0)
    assert evaluate("randomize(1e308)", rng=rng) == 0.0 and rng.seed == int(1e308)
