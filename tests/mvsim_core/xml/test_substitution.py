"""Text substitution (included files) and value substitution (every parameter)."""

from __future__ import annotations

import pytest

from mvsim_core.rng import WorldRandom
from mvsim_core.xml.substitution import SubstitutionError, substitute_text, substitute_value


def sv(value, variables=None, env=None, **kw):
    return substitute_value(value, variables or {}, env=env or {}, rng=WorldRandom(0), **kw)


def test_text_variables_env_default_and_retained():
    text = "${a} ${HOME_X} ${b|7} /${PARENT_NAME}/${NAME} ${c|${a}}"
    out = substitute_text(text, {"a": "1"}, {"HOME_X": "/h"})
    assert out == "1 /h 7 /${PARENT_NAME}/${NAME} 1"


def test_text_undefined_variable_reports_offset():
    with pytest.raises(SubstitutionError) as ei:
        substitute_text("abc\n${nope}", {}, {})
    assert ei.value.offset == 4
    assert "undefined variable ${nope}" in ei.value.message


def test_text_cycle_is_detected():
    with pytest.raises(SubstitutionError) as ei:
        substitute_text("${a}", {"a": "${b}", "b": "${a}"}, {})
    assert "refer to each other" in ei.value.message and "a" in ei.value.message


def test_value_engine_order_and_math_formatting():
    assert sv("${X}", {"X": "2"}) == "2"
    assert sv("$env{E}", env={"E": "3"}) == "3"
    assert sv("$f{0.5*ROOM}", {"ROOM": "10"}) == "5"
    assert sv("$f{1/3}") == "0.333333"
    assert sv("$f{1234567*1}") == "1.23457e+06"
    assert sv("${A}", {"A": "$f{2*B}", "B": "4"}) == "8"  # substituted values are substituted again


def test_value_unknown_variable_lists_known():
    with pytest.raises(SubstitutionError) as ei:
        sv("${Y}", {"X": "1"})
    assert ei.value.message == "unknown variable ${Y}; known variables: X"


def test_env_values_are_literal_even_with_the_shell_allowed(tmp_path):
    """An environment variable's value is never substituted again: a $(cmd), ${VAR} or $f{} inside it stays text."""
    marker = tmp_path / "ran"
    calls = []

    def shell(cmd):
        calls.append(cmd)
        return "RAN"

    env = {"EVIL": f"$(touch {marker})", "V": "${X}", "M": "$f{1+1}"}
    assert sv("a $env{EVIL} b", {"X": "1"}, env, allow_shell=True, shell=shell) == f"a $(touch {marker}) b"
    assert sv("$env{V}/$env{M}", {"X": "1"}, env) == "${X}/$f{1+1}"
    assert calls == [] and not marker.exists()
    assert sv("$env{HOME}/x", env={"HOME": "/home/u"}) == "/home/u/x"  # ordinary values unchanged


def test_value_env_unset():
    with pytest.raises(SubstitutionError, match="environment variable 'NOPE'"):
        sv("$env{NOPE}")


def test_shell_refused_without_permission(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(SubstitutionError, match="refused to run shell command"):
        sv(f"$(touch {marker})")
    assert not marker.exists()


def test_shell_allowed(tmp_path):
    assert sv("$(printf ' ab\\ncd ')", allow_shell=True) == "abcd"
    with pytest.raises(SubstitutionError, match="exit status 3"):
        sv("$(exit 3)", allow_shell=True)


def test_value_cycle_detected():
    with pytest.raises(SubstitutionError, match="refer to each other"):
        sv("${a}", {"a": "${b}", "b": "${a}"})


def test_math_error_is_reported_with_expression():
    with pytest.raises(SubstitutionError) as ei:
        sv("$f{1 + }")
    assert "in $f{1 + }" in ei.value.message


@pytest.mark.parametrize(("expr", "variables", "shown"), [("2^2000", {}, "inf"), ("0/0", {}, "nan"),
                                                          ("-1/0", {}, "-inf"), ("X * 2", {"X": "1e999"}, "inf")])
def test_math_result_must_be_finite(expr, variables, shown):
    with pytest.raises(SubstitutionError) as ei:
        sv(f"a $f{{{expr}}}", variables)
    assert ei.value.message == (f"in $f{{{expr}}}: the result is {shown}; a $f{{}} value must be a finite number "
                                f"(look for a division by zero, an overflow such as 2^2000, or a variable that is "
                                f"inf or nan)")
    assert ei.value.offset == 2
    assert sv("$f{1/(2^2000)}") == "0"  # huge intermediate values are fine when the result is finite


def test_expression_errors_in_a_world_file_have_file_and_line(tmp_path):
    import mvsim_core as mv

    (tmp_path / "w.xml").write_text('<mvsim_world version="1.0">\n<variable name="a" value="1"/>\n'
                                    '<gravity>$f{unifrnd(1, 0)}</gravity>\n</mvsim_world>\n')
    with pytest.raises(mv.WorldFileError) as ei:
        mv.load_world(tmp_path / "w.xml", env={})
    assert str(ei.value) == (f"{tmp_path / 'w.xml'}:3: in $f{{unifrnd(1, 0)}}: unifrnd(a, b) needs a <= b, got "
                             f"unifrnd(1, 0); swap the bounds at position 0")


def test_expression_error_shows_control_characters_escaped_and_its_position_once():
    with pytest.raises(SubstitutionError) as ei:
        sv("$f{-180+rand()*36\xd3S\x1d}")
    assert ei.value.message == "in $f{-180+rand()*36\xd3S\\x1d}: unexpected character '\xd3' at position 14"


def _follow(tmp_path, body, files, env):
    import mvsim_core as mv

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "w.xml").write_text(f'<mvsim_world version="1.0">\n{body}\n</mvsim_world>\n')
    return mv.load_world(tmp_path / "w.xml", env=env, allow_shell=True).gui.follow_vehicle


def test_env_values_reached_by_text_substitution_are_literal(tmp_path):
    """${NAME} in an included file falls back to the environment: that value is literal too, through parsing and
    value substitution, even with the shell allowed (a $(cmd) in it used to run)."""
    marker = tmp_path / "ran"
    env = {"EVIL": f"$(touch {marker})", "V": "${X}/$f{1+1}/$env{EVIL}"}
    inc = {"gui.xml": "<gui><follow_vehicle>${EVIL} ${V}</follow_vehicle></gui>"}
    got = _follow(tmp_path, '<variable name="X" value="1"/>\n<include file="gui.xml"/>', inc, env)
    assert got == f"$(touch {marker}) ${{X}}/$f{{1+1}}/$env{{EVIL}}"
    assert not marker.exists()
    assert substitute_text("a ${E} b", {}, {"E": "$x"}) == "a \x00x b"  # the mark a value turns back into '$'


def test_env_values_stay_literal_through_variables_and_include_attributes(tmp_path):
    marker = tmp_path / "ran"
    env = {"EVIL": f"$(touch {marker})"}
    got = _follow(tmp_path, '<variable name="X" value="[$env{EVIL}]"/>\n'
                            '<gui><follow_vehicle>${X}</follow_vehicle></gui>', {}, env)
    assert got == f"[$(touch {marker})]"
    got = _follow(tmp_path, '<variable name="X" value="$env{EVIL}"/>\n<include file="g.xml" t="${X}"/>',
                  {"g.xml": "<gui><follow_vehicle>${t}|${X}</follow_vehicle></gui>"}, env)
    assert got == f"$(touch {marker})|$(touch {marker})"
    assert not marker.exists()
    # an ordinary $(cmd) written in the file still runs when allowed
    assert _follow(tmp_path, "<gui><follow_vehicle>$(echo ok)</follow_vehicle></gui>", {}, {}) == "ok"
