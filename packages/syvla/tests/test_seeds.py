"""Separate seed streams: RL and evaluation episodes never start in a demonstration's room."""

from __future__ import annotations

from icml26.syvla.data import VecEnv, collect_demos


def _start_states(env: VecEnv, resets: int) -> set[bytes]:
    """(view, mission) of the episode starts of ``resets`` resets of ``env`` (the first one is
    the first episode of every slot, where the seed collision showed)."""
    starts: set[bytes] = set()
    for _ in range(resets):
        env.reset()
        starts |= {env.views[i].tobytes() + env.missions[i].encode() for i in range(env.n)}
    return starts


def test_no_rl_or_evaluation_start_state_equals_a_demonstration_start() -> None:
    demos = collect_demos(40, "train", 13, seed=0)
    assert demos.starts is not None
    assert len(demos.starts) == demos.solved > 30
    demo_starts = {
        demos.views[s].tobytes() + demos.missions[s].encode() for s in demos.starts.tolist()
    }
    assert len(demo_starts) == len(demos.starts)
    for stream in ("rl", "eval"):
        starts = _start_states(VecEnv(8, "train", 13, seed=0, stream=stream), 5)
        assert len(starts) == 40
        assert not starts & demo_starts, stream
    # the check can fail: the same stream replays the same rooms
    a = _start_states(VecEnv(4, "train", 13, seed=0, stream="rl"), 1)
    b = _start_states(VecEnv(4, "train", 13, seed=0, stream="rl"), 1)
    assert a == b
