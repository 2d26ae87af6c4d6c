"""The three reward components on hand-written interpretations, and the shared split."""

from __future__ import annotations

import pytest

from icml26.ecg_r1.labels import Features
from icml26.ecg_r1.protocol import protocol_answer
from icml26.ecg_r1.rewards import (
    diagnosis_reward,
    ecg_rewards,
    evidence_reward,
    format_reward,
    reward_functions,
)
from icml26.shared.llm.grpo import RewardError

F = Features(110, 0.02, True, 230, 140, 330, 470, -50, 0.2, -0.01, 1.0, 1)


def test_perfect_interpretation_gets_full_rewards() -> None:
    text = protocol_answer(F)
    assert "first_degree_av_block" in text
    assert "rbbb" in text
    assert "left_axis_deviation" in text
    assert diagnosis_reward(text, F) == 1.0
    assert evidence_reward(text, F) == 1.0
    assert format_reward(text) == 1.0


def test_partial_interpretations() -> None:
    # truth: first_degree_av_block, left_axis_deviation, long_qt, rbbb, sinus_tachycardia, st_elevation
    text = "<think>HR 110 bpm.</think><answer>rbbb, long_qt, lbbb</answer>"
    assert diagnosis_reward(text, F) == pytest.approx(2 / 7)
    assert evidence_reward(text, F) == pytest.approx(1 / 6)  # only the rate step is cited
    assert format_reward(text) == 1.0
    assert format_reward("<think>x</think> <answer>rbbb</answer> trailing") == 0.5
    assert format_reward("rbbb") == 0.0
    assert format_reward("<think>x</think><answer>rbbb, nonsense</answer>") == 0.5


def test_components_through_the_shared_split() -> None:
    texts = [protocol_answer(F), "nothing"]
    fns = reward_functions()
    assert [f.__name__ for f in fns] == ["diagnosis", "evidence", "format"]
    vals = [f(prompts=["p", "p"], completions=texts, features=[F, F]) for f in fns]
    assert vals == [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]
    assert ecg_rewards([], texts, features=[F, F])["format"] == [1.0, 0.0]
    with pytest.raises((ValueError, RewardError)):
        fns[0](prompts=["p"], completions=texts, features=[F])


def test_rewards_take_dataset_columns() -> None:
    """A TRL dataset column holds dicts, and conversational completions are message lists."""
    texts = [[{"role": "assistant", "content": protocol_answer(F)}], "nothing"]
    out = ecg_rewards(["p", "p"], texts, features=[F.as_dict(), F.as_dict()])
    assert out == {"diagnosis": [1.0, 0.0], "evidence": [1.0, 0.0], "format": [1.0, 0.0]}
    with pytest.raises(TypeError, match="features must be"):
        ecg_rewards(["p"], ["x"], features=[3])


def test_rewards_decode_completion_ids_with_special_tokens() -> None:
    class Tok:  # TRL's text drops special tokens; the ids keep them
        eos_token = "<eos>"

        def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
            return protocol_answer(F) + "<eos>junk" if ids == [1] else "nothing"

    fns = reward_functions(Tok())
    vals = [
        f(
            prompts=["p", "p"],
            completions=["", ""],
            completion_ids=[[1], [2]],
            features=[F.as_dict()] * 2,
        )
        for f in fns
    ]
    assert vals == [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]
