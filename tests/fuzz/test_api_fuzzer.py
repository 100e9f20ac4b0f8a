"""The API fuzzer's slice for the test suite (issue 37): 300 random public calls (seed 1, 30 % hostile arguments)
on the three fuzzed worlds end only as ``ok`` or ``documented_error``; and the fuzzer does see what it looks for
(an uncaught exception, a change before a documented error, a NaN). ``make fuzz-api N=10000`` runs the long
campaign."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mvsim_core as mv
from mvsim_core.world import World

from .api_fuzzer import ACTIONS, Args, campaign, load_worlds


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> list[World]:
    return load_worlds(tmp_path_factory.mktemp("api-fuzz"))


def test_slice_of_300_calls_has_no_failure(worlds: list[World]) -> None:
    out = campaign(300, 1, worlds=worlds)
    assert out.calls == 300
    assert out.failures == {}, out.text()
    assert (out.classes["uncaught"], out.classes["changed_on_error"], out.classes["nan"]) == (0, 0, 0)
    assert out.classes["ok"] >= 60 and out.classes["documented_error"] >= 60, out.text()
    assert out.errors["ArgumentTypeError"] >= 30, out.text()
    assert len(out.per_call) >= 15  # nearly every kind of call was drawn


def _raises_key_error(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    return "probe.key_error", lambda: {}["missing"]


def _moves_then_refuses(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    def call() -> None:
        name = next(iter(w.vehicles))
        x, y, _, yaw, _, _ = w.vehicles[name].pose
        w.set_pose(name, x + 0.5, y, yaw)
        raise mv.MvsimError("refused after moving")
    return "probe.moves_then_refuses", call


def _poisons(w: World, a: Args) -> tuple[str, Callable[[], Any]]:
    def call() -> None:
        w.vehicles[next(iter(w.vehicles))].sim.pose = (math.nan,) * 6
        w.vehicles[next(iter(w.vehicles))].detach_physics()  # its pose now reads the poisoned declared one
    return "probe.poisons", call


def test_the_fuzzer_sorts_each_failure_into_its_class(tmp_path: Path) -> None:
    worlds = load_worlds(tmp_path)
    probes = ((_raises_key_error, 1), (_moves_then_refuses, 1), (_poisons, 1), *ACTIONS[:1])
    out = campaign(40, 3, worlds=worlds, actions=probes)
    assert out.classes["uncaught"] > 0 and out.classes["changed_on_error"] > 0 and out.classes["nan"] > 0
    assert "uncaught: probe.key_error: KeyError" in out.failures
    assert "changed_on_error: probe.moves_then_refuses: MvsimError" in out.failures
    assert "nan: probe.poisons" in out.failures
    assert out.failed == out.classes["uncaught"] + out.classes["changed_on_error"] + out.classes["nan"]
