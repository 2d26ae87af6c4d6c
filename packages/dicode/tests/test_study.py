"""The dreamer study counts what a dreamer writes (compile rate, rejection reasons)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from icml26.dicode.dreamer import LLMDreamer
from icml26.dicode.study import dreamer_study, goal_success
from icml26.shared.llm import Completion


class _Backend:
    """A chat backend that answers prose, a forbidden import, or a program, in turn."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, conversations: Any, **kwargs: Any) -> list[Completion]:
        replies = [
            "Sure! Here is a world.",
            "```python\nimport os\n```",
            "WORLD = {'goal': 'nope'}",
        ]
        out = []
        for _ in conversations:
            out.append(
                Completion(text=replies[self.calls % 3], prompt_tokens=1, completion_tokens=1)
            )
            self.calls += 1
        return out


def test_study_counts_rejections_without_playing_invalid_worlds() -> None:
    out = dreamer_study(LLMDreamer(_Backend(), format="program"), None, None, {}, n=6, batch=4)  # type: ignore[arg-type]
    assert out["asked"] == 6
    assert out["valid"] == 0
    assert out["compile_rate"] == 0.0
    assert sum(out["rejections"].values()) == 6
    assert out["rejections"]["forbidden"] == 2
    assert "success_rates" not in out  # nothing compiled: nothing played
    assert out["samples"][0]["source"]


def test_goal_success_refuses_empty_input() -> None:
    with pytest.raises(ValueError, match="at least one program"):
        goal_success(None, None, [], np.zeros(2), 4)  # type: ignore[arg-type]


def test_study_key_streams_never_overlap_across_seeds() -> None:
    """Review 44z: PRNGKey(seed) trained and PRNGKey(seed + 1) evaluated, so seed 0's
    evaluation maps were seed 1's network and environment keys."""
    import jax

    from icml26.dicode.study import study_keys

    keys = [
        tuple(np.asarray(jax.random.key_data(k)).ravel().tolist())
        for seed in range(4)
        for k in study_keys(seed).values()
    ]
    assert len(set(keys)) == len(keys)
