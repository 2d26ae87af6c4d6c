"""Multi-turn rollouts: the policy talks to an environment (a search tool, a game, a judge)
between generations, and the tokens the environment wrote stay in the context but out of the
loss (as Search-R1 masks retrieved passages).

An :class:`Environment` has two methods::

    reset(prompt) -> observation or None     # a new episode for this prompt
    step(text) -> (observation or None, reward, done)   # the policy's turn, decoded

:func:`multi_turn_rollout` turns an environment factory into a TRL ``rollout_func``: for each
prompt of the batch (TRL has already repeated each one ``num_generations`` times) it runs one
episode, turns in lock step across the batch (one batched generation per turn), each episode
within its **own** token budget (``max_completion_length`` less what its completion already
holds: a long observation in one episode never shortens another's turn), and returns

* ``completion_ids``: the policy's turns and the environment's observations, in order;
* ``env_mask``: 1 on the policy's tokens, 0 on the environment's (TRL multiplies it into the
  loss mask, so only the policy's own tokens are trained);
* ``env_reward`` (the sum of the episode's step rewards) and ``env_turns``, handed to the
  reward functions as keyword arguments: :func:`environment_reward` passes ``env_reward`` on.

An observation is written as a chat turn of ``observation_role`` (default ``"tool"``) followed
by a new assistant header, both rendered by the tokenizer's chat template, or with
``observation_role=None`` as raw text inside the assistant's turn (Search-R1's
``<information>...</information>``).

:func:`sample_turns` (one batched turn per context, sampled or greedy) is the generation step
of :func:`multi_turn_rollout`, public for packages that drive several policies through one
episode themselves (DECOR's planner, filter and answerer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Environment",
    "RolloutError",
    "environment_reward",
    "multi_turn_rollout",
    "observation_ids",
    "sample_turns",
]


class RolloutError(RuntimeError):
    """An environment or a rollout broke the contract (an empty completion, a bad reward,
    masks that do not line up)."""


@runtime_checkable
class Environment(Protocol):
    """What a policy interacts with between generations."""

    def reset(self, prompt: Any) -> str | None:
        """Start an episode for ``prompt`` (a string or chat messages); an observation to show
        before the first turn, or ``None``."""
        ...

    def step(self, text: str) -> tuple[str | None, float, bool]:
        """Take the policy's turn; return the observation for the next turn (``None``: none),
        this step's reward and whether the episode is over."""
        ...


def environment_reward(
    prompts: Sequence[Any], completions: Sequence[Any], env_reward: Sequence[float], **kw: Any
) -> list[float]:
    """The reward an environment gave each episode (a TRL reward function); also logs the
    mean number of policy turns per episode as ``env/turns`` (TRL's ``log_metric``)."""
    turns, log_metric = kw.get("env_turns"), kw.get("log_metric")
    if turns and log_metric is not None:
        log_metric("env/turns", sum(turns) / len(turns))
    return [float(r) for r in env_reward]


def _eos_ids(tokenizer: Any) -> list[int]:
    eos = tokenizer.eos_token_id
    if eos is None:
        raise RolloutError("the tokenizer has no eos token: a turn could never end")
    return [int(eos)] if isinstance(eos, int) else [int(e) for e in eos]


def _observation_text(tokenizer: Any, text: str, role: str) -> str:
    """The text after an assistant's end-of-turn token that shows ``text`` as a ``role``
    turn and opens the next assistant turn, rendered by the chat template."""
    if not getattr(tokenizer, "chat_template", None):
        raise RolloutError(
            "observation_role needs a tokenizer with a chat template (or pass observation_role=None)"
        )
    base = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    before = tokenizer.apply_chat_template(base, tokenize=False)
    after = tokenizer.apply_chat_template(
        [*base, {"role": role, "content": text}], tokenize=False, add_generation_prompt=True
    )
    eos = tokenizer.eos_token
    end = before.rfind(eos)
    if end < 0 or not after.startswith(before):
        raise RolloutError(
            "cannot derive the observation format from this chat template: pass observation_role=None"
        )
    return before[end + len(eos) :] + after[len(before) :]


_SENTINEL = "\u2063OBS\u2063"
_FRAMES: dict[tuple[int, str, str], tuple[str, str] | None] = {}


def _observation_frame(tokenizer: Any, role: str) -> tuple[str, str] | None:
    """``(head, tail)`` with ``_observation_text(t) == head + t + tail`` for this template
    (checked on two probes), rendered once per tokenizer, template and role; ``None`` when
    the template transforms the content (then every observation is rendered in full)."""
    key = (id(tokenizer), str(tokenizer.chat_template), role)
    if key not in _FRAMES:
        framed = _observation_text(tokenizer, _SENTINEL, role)
        frame = None
        if framed.count(_SENTINEL) == 1:
            head, tail = framed.split(_SENTINEL)
            probes = ("x y", " 12\n")
            if all(_observation_text(tokenizer, t, role) == head + t + tail for t in probes):
                frame = (head, tail)
        _FRAMES[key] = frame
    return _FRAMES[key]


def observation_ids(tokenizer: Any, text: str, role: str | None = "tool") -> list[int]:
    """Token ids that follow a finished assistant turn (ending in EOS) to show ``text`` and
    open the next assistant turn: whatever the chat template renders after the assistant's
    end-of-turn token, then a ``role`` turn with ``text``, then the assistant header.
    ``role=None``: ``text`` tokenised as is. (The template is rendered once per tokenizer and
    role; the text is tokenised in its frame, so BPE merges across the frame are kept.)"""
    if role is None:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    frame = _observation_frame(tokenizer, role)
    suffix = frame[0] + text + frame[1] if frame else _observation_text(tokenizer, text, role)
    return list(tokenizer(suffix, add_special_tokens=False)["input_ids"])


@dataclass
class _Episode:
    env: Any
    context: list[int]
    completion: list[int]
    mask: list[int]
    reward: float = 0.0
    turns: int = 0
    done: bool = False


def _prompt_ids(
    tokenizer: Any, prompt: Any, first_observation: str | None, role: str | None
) -> list[int]:
    if isinstance(prompt, str):
        text = prompt + (first_observation or "")
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    messages = [dict(m) for m in prompt]
    if first_observation:
        messages.append({"role": role or "user", "content": first_observation})
    return list(
        tokenizer.apply_chat_template(
            messages, tokenize=True, add_generation_prompt=True, return_dict=True
        )["input_ids"]
    )


def sample_turns(
    model: Any,
    tokenizer: Any,
    contexts: Sequence[Sequence[int]],
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    top_p: float = 1.0,
    top_k: int | None = None,
    greedy: bool = False,
) -> list[list[int]]:
    """One turn for each context (token ids), generated as one left-padded batch: the new
    tokens of each, cut after the first end-of-sequence token (kept) or at
    ``max_new_tokens``. ``greedy=True`` decodes by argmax (evaluation); otherwise samples.

    The building block of :func:`multi_turn_rollout`, public for packages that drive several
    policies through one episode themselves (DECOR's planner, filter and answerer)."""
    import torch

    if not contexts:
        return []
    if any(len(c) == 0 for c in contexts):
        raise RolloutError("a context to generate from is empty")
    device = next(model.parameters()).device
    width = max(len(c) for c in contexts)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else _eos_ids(tokenizer)[0]
    ids = torch.full((len(contexts), width), pad, dtype=torch.long)
    attention = torch.zeros_like(ids)
    for i, c in enumerate(contexts):
        ids[i, width - len(c) :] = torch.tensor(list(c))
        attention[i, width - len(c) :] = 1
    sampling: dict[str, Any] = (
        {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        if greedy
        else {"do_sample": True, "temperature": float(temperature), "top_p": float(top_p)}
    )
    if not greedy:
        # Explicit 0 when no top-k is asked: transformers would otherwise apply the model's
        # generation_config default (top_k=50) and sample from another distribution than the
        # full tempered softmax the GRPO loss assumes (TRL's own generation passes top_k=0).
        sampling["top_k"] = int(top_k) if top_k else 0
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model.generate(
            input_ids=ids.to(device),
            attention_mask=attention.to(device),
            max_new_tokens=max_new_tokens,
            pad_token_id=pad,
            eos_token_id=_eos_ids(tokenizer),
            **sampling,
        )
    if was_training:
        model.train()
    eos = set(_eos_ids(tokenizer))
    segments = []
    for row in out[:, width:].tolist():
        cut = next((j + 1 for j, t in enumerate(row) if t in eos), len(row))
        segments.append(row[:cut])
    return segments


def _generate(
    model: Any, tokenizer: Any, contexts: list[list[int]], max_new: int, args: Any
) -> list[list[int]]:
    return sample_turns(
        model,
        tokenizer,
        contexts,
        max_new,
        temperature=float(args.temperature),
        top_p=float(args.top_p),
        top_k=int(getattr(args, "top_k", 0) or 0),
    )


def multi_turn_rollout(
    env_factory: Callable[[], Environment],
    *,
    max_turns: int = 4,
    max_turn_tokens: int | None = None,
    observation_role: str | None = "tool",
) -> Callable[[list[Any], Any], dict[str, Any]]:
    """A TRL ``rollout_func`` running one episode of a fresh ``env_factory()`` per prompt.

    Args:
        max_turns: policy turns per episode at most.
        max_turn_tokens: new tokens per turn at most (default: the trainer's
            ``max_completion_length``).
        observation_role: see the module docstring.

    The budget is per episode: each turn of an episode may add ``min(max_turn_tokens,
    max_completion_length - len(its completion so far))`` tokens, whatever the other
    episodes of the batch hold; its whole completion, observations included, never exceeds
    ``max_completion_length`` (an episode with no room left for an observation and one
    token of reply ends). Generation runs on the trainer's model unwrapped by TRL's
    ``unwrap_model_for_generation`` (DDP, DeepSpeed ZeRO-3 parameters gathered).

    Raises:
        RolloutError: an environment returned a non-finite reward or an observation that is
            not a string, or the policy produced an empty turn.
    """
    import math

    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    if max_turn_tokens is not None and max_turn_tokens < 1:
        raise ValueError(f"max_turn_tokens must be >= 1, got {max_turn_tokens}")

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from trl.models import unwrap_model_for_generation

        with unwrap_model_for_generation(
            trainer.model_wrapped,
            trainer.accelerator,
            gather_deepspeed3_params=getattr(trainer.args, "ds3_gather_for_generation", True),
        ) as model:
            return run_episodes(prompts, model, trainer.processing_class, trainer.args)

    def run_episodes(prompts: list[Any], model: Any, tokenizer: Any, args: Any) -> dict[str, Any]:
        budget = int(args.max_completion_length)
        per_turn = min(max_turn_tokens or budget, budget)
        episodes: list[_Episode] = []
        prompt_ids: list[list[int]] = []
        for prompt in prompts:
            env = env_factory()
            first = env.reset(prompt)
            if first is not None and not isinstance(first, str):
                raise RolloutError(
                    f"{type(env).__name__}.reset returned {type(first).__name__}, not a string or None"
                )
            ids = _prompt_ids(tokenizer, prompt, first, observation_role)
            prompt_ids.append(ids)
            episodes.append(_Episode(env, list(ids), [], []))
        for _turn in range(max_turns):
            active = [e for e in episodes if not e.done]
            if not active:
                break
            # Each episode's own room (>= 1: an episode without room for a reply has ended);
            # one batched generation to the largest, each segment cut to its episode's room.
            rooms = [min(per_turn, budget - len(e.completion)) for e in active]
            segments = _generate(model, tokenizer, [e.context for e in active], max(rooms), args)
            for e, seg, room in zip(active, segments, rooms, strict=True):
                seg = seg[:room]
                if not seg:
                    raise RolloutError("the policy produced an empty turn (no token at all)")
                e.completion += seg
                e.mask += [1] * len(seg)
                e.context += seg
                e.turns += 1
                text = tokenizer.decode(seg, skip_special_tokens=True)
                obs, reward, done = e.env.step(text)
                reward = float(reward)
                if not math.isfinite(reward):
                    raise RolloutError(f"{type(e.env).__name__}.step returned the reward {reward}")
                e.reward += reward
                if done or e.turns >= max_turns or obs is None:
                    e.done = True
                    continue
                if not isinstance(obs, str):
                    raise RolloutError(
                        f"{type(e.env).__name__}.step returned an observation of type {type(obs).__name__}"
                    )
                obs_ids = observation_ids(tokenizer, obs, observation_role)
                if len(e.completion) + len(obs_ids) + 1 > budget:
                    e.done = True  # no room for the observation and a reply
                    continue
                e.completion += obs_ids
                e.mask += [0] * len(obs_ids)
                e.context += obs_ids
        for i, e in enumerate(episodes):
            if not e.completion or len(e.mask) != len(e.completion):
                raise RolloutError(f"rollout {i} has an empty completion or a misaligned env_mask")
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": [e.completion for e in episodes],
            "logprobs": None,
            "env_mask": [e.mask for e in episodes],
            "env_reward": [e.reward for e in episodes],
            "env_turns": [e.turns for e in episodes],
        }

    return rollout
