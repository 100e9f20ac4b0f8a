"""``python -m mvsim_core.gym.demo``: its episodes and summary, with the seeker and with random actions, and the
animation it saves."""

from __future__ import annotations

import re

from PIL import Image

from mvsim_core.gym.demo import main


def test_seeker_episodes_are_printed_and_summed_up(capsys):
    assert main(["--episodes", "3", "--seed", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4
    for k, line in enumerate(out[:3]):
        assert re.fullmatch(rf"episode {k} \(seed {100 + k}\): goal after \d+\.\d s, return \d+\.\d\d", line), line
    assert re.fullmatch(r"seeker: 3/3 goals, 0 collisions, 0 time limits; \d+ steps in \d+\.\d\d s", out[3])


def test_random_policy_reaches_nothing(capsys):
    assert main(["--episodes", "2", "--policy", "random", "--seed", "100"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("random: 0/2 goals")


def test_gif_holds_a_frame_per_step(capsys, tmp_path, offscreen_gl):
    assert main(["--episodes", "1", "--seed", "100", "--gif", str(tmp_path / "run.gif")]) == 0
    out = capsys.readouterr().out
    steps = int(re.search(r"; (\d+) steps in", out).group(1))
    with Image.open(tmp_path / "run.gif") as gif:
        assert gif.n_frames == steps and gif.size == (480, 480)
