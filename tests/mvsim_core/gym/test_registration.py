"""``import mvsim_core`` makes the ids known to ``gymnasium.make`` without importing gymnasium, in either import
order (fresh processes), and registering again changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

from gym_checks import IDS, REPO

from mvsim_core.gym import registration


def run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


PROBE = """
import json, sys
from gymnasium.envs.registration import registry
from mvsim_core.gym.registration import _RegisterAfterImport
print(json.dumps({"before": BEFORE, "ids": sorted(k for k in registry if k.startswith("mvsim/")),
                  "finders": sum(isinstance(f, _RegisterAfterImport) for f in sys.meta_path)}))
"""


def test_import_mvsim_core_then_gymnasium_registers_the_ids_without_importing_gymnasium_first():
    r = run("import sys, mvsim_core\nBEFORE = 'gymnasium' in sys.modules\nimport gymnasium\n" + PROBE)
    assert r == {"before": False, "ids": sorted(IDS), "finders": 0}  # registered once gymnasium came; finder gone


def test_gymnasium_first_then_mvsim_core_registers_at_once():
    r = run("import sys, gymnasium\nBEFORE = 'mvsim/GoalReaching-v0' in gymnasium.registry\nimport mvsim_core\n"
            + PROBE)
    assert r == {"before": False, "ids": sorted(IDS), "finders": 0}


def test_importing_the_registration_module_alone_triggers_it():
    r = run("import sys, mvsim_core\nBEFORE = False\nimport gymnasium.envs.registration\n" + PROBE)
    assert r["ids"] == sorted(IDS)


def test_without_gymnasium_imported_only_the_finder_is_added():
    r = run("import json, sys, mvsim_core\nfrom mvsim_core.gym.registration import _RegisterAfterImport\n"
            "print(json.dumps({'gym': sorted(m for m in sys.modules if m.split('.')[0] in ('gymnasium', 'pettingzoo'))"
            ", 'finders': sum(isinstance(f, _RegisterAfterImport) for f in sys.meta_path), "
            "'first': isinstance(sys.meta_path[0], _RegisterAfterImport)}))")
    assert r == {"gym": [], "finders": 1, "first": True}


def test_registering_again_adds_nothing_and_warns_nothing():
    import gymnasium

    assert set(IDS) <= set(gymnasium.registry)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert registration.register_envs() == []
    spec = gymnasium.spec(IDS[1])
    assert spec.entry_point == "mvsim_core.gym.goal_reaching_env:GoalReachingEnv"
    assert spec.kwargs == {"variant": "ackermann"}
