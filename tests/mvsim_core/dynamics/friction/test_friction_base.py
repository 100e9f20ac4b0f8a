"""The friction-model registry: kernel ids, parameter columns, ``from_string``, and the checks run when a model class
is defined."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.dynamics.friction import FrictionModel
from mvsim_core.dynamics.friction.base import C_DAMPING, C_RR, MU, P_CDAMP, P_CRR, P_MU
from mvsim_core.xml.params import Kind, Param

MODELS = sorted(FrictionModel.registry.items())


def test_kernel_ids_are_distinct_and_not_negative():
    ids = [cls.kernel_id for _, cls in MODELS]
    assert len(set(ids)) == len(ids) and min(ids) >= 0


@pytest.mark.parametrize(("name", "cls"), MODELS)
def test_every_parameter_has_a_column(name, cls):
    assert sorted(cls.COLUMNS) == sorted(p.name for p in cls.PARAMS)
    assert len(set(cls.COLUMNS.values())) == len(cls.COLUMNS)


def test_a_name_has_one_column_in_every_model_and_columns_are_unique():
    column_of: dict[str, int] = {}
    for _, cls in MODELS:
        for name, col in cls.COLUMNS.items():
            assert column_of.setdefault(name, col) == col, f"{name} has two columns"
    assert len(set(column_of.values())) == len(column_of), "two parameter names share a column"
    # no holes: the matrix is exactly as wide as the parameter names need
    assert sorted(column_of.values()) == list(range(FrictionModel.n_columns()))


def test_shared_columns():
    assert {MU.name: P_MU, C_DAMPING.name: P_CDAMP, C_RR.name: P_CRR}.items() <= {
        n: c for _, cls in MODELS for n, c in cls.COLUMNS.items()}.items()


@pytest.mark.parametrize(("name", "cls"), MODELS)
def test_has_mu_follows_the_parameters(name, cls):
    assert cls.has_mu == ("mu" in cls.COLUMNS)
    assert cls.has_mu == (name != "ellipse")


@pytest.mark.parametrize(("name", "cls"), MODELS)
def test_from_string_round_trip(name, cls):
    assert cls.xml_class == name
    assert FrictionModel.from_string(name) is cls


def test_from_string_unknown_lists_known():
    with pytest.raises(ValueError, match=r'^unknown friction model class "coulomb"; known friction models: '
                                         r"default, ellipse, wardiagnemma$"):
        FrictionModel.from_string("coulomb")


@pytest.mark.parametrize(("name", "cls"), MODELS)
def test_fill_columns_writes_each_parameter_in_its_column(name, cls):
    m = cls.defaults()
    rows = np.full((2, FrictionModel.n_columns()), -1.0)
    m.fill_columns(rows)
    for p in cls.PARAMS:
        assert (rows[:, cls.COLUMNS[p.name]] == float(m.params[p.name])).all()
    others = [c for c in range(rows.shape[1]) if c not in cls.COLUMNS.values()]
    assert (rows[:, others] == -1.0).all()


def _declare(**attrs) -> type:
    body = {"xml_class": "test_model", "PARAMS": (MU, C_DAMPING, C_RR),
            "COLUMNS": {MU.name: P_MU, C_DAMPING.name: P_CDAMP, C_RR.name: P_CRR}, "kernel_id": 99}
    body.update(attrs)
    return type("TestModel", (FrictionModel,), body)


@pytest.mark.parametrize(("attrs", "words"), [
    ({"kernel_id": -1}, "declares no kernel_id"),
    ({"kernel_id": 0}, "share kernel id 0"),
    ({"COLUMNS": {MU.name: P_MU, C_DAMPING.name: P_CDAMP}}, "must name exactly its parameters"),
    ({"COLUMNS": {MU.name: P_MU, C_DAMPING.name: P_MU, C_RR.name: P_CRR}}, "distinct"),
    ({"COLUMNS": {MU.name: 5, C_DAMPING.name: P_CDAMP, C_RR.name: P_CRR}}, "clashes"),
    ({"PARAMS": (MU, C_DAMPING, C_RR, Param("K", Kind.FLOAT, 1.0)),
      "COLUMNS": {MU.name: P_MU, C_DAMPING.name: P_CDAMP, C_RR.name: P_CRR, "K": 3}}, "clashes"),
])
def test_inconsistent_declarations_are_refused_and_not_registered(attrs, words):
    before = dict(FrictionModel.registry)
    with pytest.raises(TypeError, match=words):
        _declare(**attrs)
    assert FrictionModel.registry == before
