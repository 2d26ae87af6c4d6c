"""LLM policy without a model: prompts, robust parsing, invalid actions, transcripts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.rmft.envs import parse_env, sample_instances
from icml26.rmft.llm_policy import SCENARIOS, LLMPolicy, build_messages, parse_action
from icml26.rmft.llm_rmft import LLMSettings, select_llm_transcripts, write_openai_finetune_jsonl
from icml26.rmft.rollouts import rollout
from icml26.shared.llm import Completion, TokenUsage


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Button 2 looks best so far.\nAction: 2", 1),
        ("action: 3", 2),
        ("**Action:** 1", 0),
        ("Action = button #3", 2),
        ("I will try restaurant 1, then... Action: restaurant 2", 1),
        ("Action: 1\nWait, no. Action: 3", 2),
        ("3", 2),
        (" **2** ", 1),
        ("I press button 3. Button 3 it is.", 2),
        ("You can choose the 3rd button.", 2),
        ("I will go to the second restaurant tonight.", 1),
        ("The first one has the best average, so I pick it.", 0),
        ("I pick 2.", 1),
        ("My choice is 3, since it was never tried.", 2),
    ],
)
def test_lenient_parse_reads_well_formed_and_recoverable_replies(text: str, expected: int) -> None:
    assert parse_action(text, 3, "lenient") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Button 2 looks best so far.\nAction: 2", 1),
        ("action: 3", 2),
        ("**Action:** 1", 0),
        ("Action: 2.", 1),
        ("Button 3 was never pressed, so I try it.\n\nAction: 3\n", 2),
        ("Action: 1 (pick a non-zero button, 3 of the 3 buttons chosen)", 0),
        ("The answer would be: ***\nAction: 1\n\nLet's go to the next round.", 0),
    ],
)
def test_strict_parse_reads_the_requested_form(text: str, expected: int) -> None:
    assert parse_action(text, 3) == expected  # strict is the default
    assert parse_action(text, 3, "strict") == expected


@pytest.mark.parametrize(
    ("text", "lenient"),
    [
        # non-decisions the lenient parse reads as choices (SmolLM2 replies, full-14)
        ("1. This response was designed to test creativity and flexibility.", 0),
        ("The game has a 3-game mode.", 2),
        ("Round 2 of 4. Your results so far:\n- Button 2: never pressed\n- Button ", 1),
        ("I have 2 options", 1),
        ("You chose to press Button 3.", 2),
        ("The answer is: 3", 2),
        ("I will try restaurant 1, then... Action: restaurant 2", 1),  # not 'Action: <n>'
        ("Action: 1\nWait, no. Action: 3", 2),  # the Action mentions disagree
        ("3", 2),
    ],
)
def test_strict_parse_rejects_what_is_not_the_requested_form(text: str, lenient: int) -> None:
    assert parse_action(text, 3, "lenient") == lenient
    assert parse_action(text, 3) is None


@pytest.mark.parametrize("text", ["Action: 1.5", "Action: 2nd", "Action: 4", "Action: button 2"])
def test_strict_parse_rejects_malformed_action_lines(text: str) -> None:
    assert parse_action(text, 3) is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I am not sure what to do.",
        "Action: 7",  # out of range
        "Action: 0",
        "Button 1 is good but button 2 might be better",  # ambiguous, no Action line
        "Action:",
        "The answer is forty-two",
        "4",
        "I pick 2, or maybe 3.",  # two numbers, no Action line: ambiguous
        "The 1st button or the 2nd button.",
        "I pick 0.5",  # not an option number
        "You can choose the 4th button.",  # out of range
    ],
)
def test_parse_action_rejects_malformed_replies(text: str) -> None:
    assert parse_action(text, 3, "lenient") is None
    assert parse_action(text, 3) is None


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=200), st.integers(2, 9), st.sampled_from(["strict", "lenient"]))
def test_parse_action_never_crashes_and_stays_in_range(text: str, k: int, mode: str) -> None:
    got = parse_action(text, k, mode)
    assert got is None or 0 <= got < k
    if mode == "strict" and got is not None:  # strict-valid is lenient-valid, same choice
        assert parse_action(text, k, "lenient") == got


def test_parse_action_rejects_bad_k_and_mode() -> None:
    with pytest.raises(ValueError, match="n_arms"):
        parse_action("Action: 1", 1)
    with pytest.raises(ValueError, match="parse"):
        parse_action("Action: 1", 3, "loose")
    with pytest.raises(ValueError, match="parse"):
        LLMPolicy(ScriptedBackend(lambda c, i: ""), parse="loose")


def test_prompt_describes_task_and_history() -> None:
    spec = parse_env("bernoulli_k3_t10")
    msgs = build_messages(
        SCENARIOS["buttons"], spec, 4, np.array([2, 0, 2]), np.array([1.0, 0, 2.0])
    )
    assert msgs[0]["role"] == "system"
    assert "3 buttons" in msgs[0]["content"]
    assert "10 rounds" in msgs[0]["content"]
    user = msgs[1]["content"]
    assert "Round 5 of 10" in user
    assert "Button 1: pressed 2 times, average reward 0.50" in user
    assert "Button 2: never pressed" in user
    assert "Total reward so far: 3." in user
    assert "Action: <number>" in user
    # the format example names no option: no "Action: 3" (review38r #5)
    assert re.search(r"Action:\s*\d", user) is None
    story = build_messages(SCENARIOS["restaurants"], spec, 0, np.zeros(3), np.zeros(3))
    assert "restaurants" in story[0]["content"]
    assert "Evening 1 of 10" in story[1]["content"]


class ScriptedBackend:
    """Replies from a function of (conversation, call index)."""

    def __init__(self, reply) -> None:  # type: ignore[no-untyped-def]
        self.reply, self.calls, self.usage = reply, 0, TokenUsage()

    def complete(self, conversations, **kwargs):  # type: ignore[no-untyped-def]
        out = []
        for conv in conversations:
            out.append(Completion(self.reply(conv, self.calls), 10, 3))
            self.usage.add(out[-1])
            self.calls += 1
        return out


def test_invalid_replies_play_random_arms_and_are_counted() -> None:
    replies = ["Action: 1", "no idea", "Action: 1", "I press button 1."]
    backend = ScriptedBackend(lambda conv, i: replies[i % 4])
    inst = sample_instances("bernoulli_k3_t6", 4, np.random.default_rng(0))
    policy = LLMPolicy(backend, name="llm_base")
    trajs = rollout(policy, inst, np.random.default_rng(0))
    assert trajs.invalid.mean() == pytest.approx(0.5)
    valid_actions = trajs.actions[~trajs.invalid]
    assert (valid_actions == 0).all()
    assert len(trajs.records) == 4
    assert len(trajs.records[0]) == 6
    assert trajs.records[0][0]["reply"] in set(replies)
    assert backend.usage.requests == 24
    # the lenient ablation, read from the same replies: only "no idea" has no choice
    assert policy.invalid_lenient.mean() == pytest.approx(0.25)
    assert not policy.truncated.any()  # Completion's default finish_reason is "stop"
    lenient = LLMPolicy(ScriptedBackend(lambda conv, i: replies[i % 4]), parse="lenient")
    assert rollout(lenient, inst, np.random.default_rng(0)).invalid.mean() == pytest.approx(0.25)


def test_history_in_prompts_matches_what_happened() -> None:
    seen = []

    def reply(conv, i):  # type: ignore[no-untyped-def]
        seen.append(conv[1]["content"])
        return "Action: 2"

    inst = sample_instances("bernoulli_k2_t3", 1, np.random.default_rng(0))
    trajs = rollout(LLMPolicy(ScriptedBackend(reply)), inst, np.random.default_rng(0))
    total = trajs.rewards[0, :2].sum()
    assert f"Button 2: pressed 2 times, average reward {total / 2:.2f}" in seen[2]


def test_transcript_selection_keeps_best_episodes_and_valid_steps(tmp_path: Path) -> None:
    # arm 0 is always best on these instances; episodes alternate good and bad replies
    backend = ScriptedBackend(lambda conv, i: "Action: 1" if (i // 3) % 2 == 0 else "garbage")
    inst = sample_instances("bernoulli_k3_t3", 2, np.random.default_rng(0)).repeat(2)
    inst.means[:, :, 0] = 0.99
    policy = LLMPolicy(backend)
    trajs = rollout(policy, inst, np.random.default_rng(0))
    settings = LLMSettings(n_instances=2, rollouts_per_instance=2, keep_per_instance=1)
    keep, pairs = select_llm_transcripts(trajs, settings, np.random.default_rng(0))
    assert len(keep) == 2
    for i in keep:
        assert trajs.final_regret[i] <= trajs.final_regret[i ^ 1]
    assert all(reply == "Action: 1" for _, reply in pairs)
    path = write_openai_finetune_jsonl(pairs, tmp_path / "ft.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == len(pairs)
    assert lines[0]["messages"][-1] == {"role": "assistant", "content": pairs[0][1]}


def test_llm_policy_rejects_unsupported_settings() -> None:
    backend = ScriptedBackend(lambda c, i: "Action: 1")
    with pytest.raises(ValueError, match="unknown scenario"):
        LLMPolicy(backend, scenario="casino")
    with pytest.raises(ValueError, match="Bernoulli bandits"):
        rollout(
            LLMPolicy(backend),
            sample_instances("experts_k3_t3", 1, np.random.default_rng(0)),
            np.random.default_rng(0),
        )


def test_replies_cut_at_the_token_cap_are_recorded() -> None:
    class Capped(ScriptedBackend):
        def complete(self, conversations, **kwargs):  # type: ignore[no-untyped-def]
            out = super().complete(conversations, **kwargs)
            return [
                Completion(c.text, 10, 8, "length" if i % 2 else "stop") for i, c in enumerate(out)
            ]

    inst = sample_instances("bernoulli_k3_t2", 4, np.random.default_rng(0))
    policy = LLMPolicy(Capped(lambda conv, i: "Action: 2"), max_tokens=8)
    trajs = rollout(policy, inst, np.random.default_rng(0))
    assert policy.truncated.mean() == pytest.approx(0.5)
    assert [s["truncated"] for s in trajs.records[1]] == [True, True]
    assert not trajs.invalid.any()  # a cut reply that holds its Action line still decides


def test_llm_rmft_iteration_refuses_an_endpoint_before_any_rollout() -> None:
    from icml26.rmft.llm_rmft import llm_rmft_iteration

    backend = ScriptedBackend(lambda conv, i: "Action: 1")  # no model / tokenizer: an endpoint
    settings = LLMSettings(n_instances=1, rollouts_per_instance=1, steps=1)
    with pytest.raises(TypeError, match="fine-tunes a local model"):
        llm_rmft_iteration(
            backend, parse_env("bernoulli_k3_t3"), settings, np.random.default_rng(0)
        )
    assert backend.calls == 0
    from icml26.shared.llm import ChatClient

    client = ChatClient("http://127.0.0.1:9/v1", "gpt-4o-mini")  # never contacted
    with pytest.raises(TypeError, match="ChatClient has no model and tokenizer"):
        llm_rmft_iteration(client, parse_env("bernoulli_k3_t3"), settings, np.random.default_rng(0))
    with pytest.raises(ValueError, match="parse"):
        LLMSettings(parse="loose")
