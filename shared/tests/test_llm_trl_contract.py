"""What icml26.shared.llm relies on in TRL beyond its stable API, held in place.

TRL's ``rollout_func`` and ``environment_factory`` are marked experimental and two private
``GRPOTrainer`` methods are overridden (dynamic sampling): these tests fail when the
installed TRL leaves the pinned range, when a private method's source changes, when a new
private name is used without a pin, or when a hook stops behaving as relied on.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs icml26-shared[rl]")
pytest.importorskip("trl", reason="needs icml26-shared[rl]")

from icml26.shared.llm import trl_compat  # noqa: E402
from icml26.shared.llm.grpo import GRPOSettings, grpo_trainer_class, make_grpo_trainer  # noqa: E402
from icml26.shared.llm.tasks import LOOKUP_CALL, ReverseDigits  # noqa: E402
from icml26.shared.llm.tiny import (  # noqa: E402
    TOOL_CALL_TOKENS,
    TinyModelConfig,
    make_tiny_model,
    train_tokenizer,
    with_tool_calls,
)

TASK = ReverseDigits(3, 5)
LLM_SOURCES = Path(trl_compat.__file__).parent


@pytest.fixture(scope="module")
def tool_tokenizer() -> Any:
    torch.set_num_threads(1)
    tok = train_tokenizer(
        TASK.corpus(np.random.default_rng(0)) + [LOOKUP_CALL] * 10,
        vocab_size=300,
        special_tokens=TOOL_CALL_TOKENS,
    )
    return with_tool_calls(tok)


def test_trl_is_in_the_pinned_range_and_the_pin_is_the_package_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trl_compat.check_trl_version()
    project = tomllib.loads((LLM_SOURCES.parents[3] / "pyproject.toml").read_text())
    [pin] = [r for r in project["project"]["optional-dependencies"]["rl"] if r.startswith("trl")]
    assert pin == "trl" + trl_compat.TRL_RANGE
    monkeypatch.setattr(trl_compat.metadata, "version", lambda name: "1.17.0")
    with pytest.raises(RuntimeError, match=r"trl 1\.17\.0 is installed.*>=1\.16,<1\.17"):
        trl_compat.check_trl_version()


def test_the_private_trl_methods_are_the_ones_read() -> None:
    """Each overridden private method's source is byte-identical to the one read: a TRL
    change there fails here, not silently in training."""
    assert trl_compat.changed_private_names() == []


def test_no_private_trl_name_is_used_without_a_pin() -> None:
    """Our GRPOTrainer subclass overrides no private method but the pinned ones, and no
    module reaches into a trainer's private attributes (``trainer._x``, ``super()._x``)."""
    trainer = grpo_trainer_class()
    private = {
        f"GRPOTrainer.{n}"
        for n in vars(trainer)
        if n.startswith("_") and not n.startswith("__") and callable(vars(trainer)[n])
    }
    assert private == set(trl_compat.PRIVATE)
    reach = re.compile(r"\b(?:trainer|super\(\))\._[a-z]\w*")
    used = {
        m.group(0).split(".", 1)[1]
        for f in LLM_SOURCES.glob("*.py")
        for m in reach.finditer(f.read_text(encoding="utf-8"))
    }
    assert {f"GRPOTrainer.{n}" for n in used} <= set(trl_compat.PRIVATE), used


def test_rollout_func_hook_contract(tool_tokenizer: Any, tmp_path: Path) -> None:
    """TRL calls ``rollout_func(prompts, trainer)`` with each prompt repeated
    ``num_generations`` times in a row (``prompts_per_step * num_generations`` in all),
    hands the extra fields to the reward functions, and turns ``env_mask`` into the loss's
    tool mask (``env_mask = 0`` tokens leave the loss)."""
    tok = tool_tokenizer
    model = make_tiny_model(tok, TinyModelConfig(hidden_size=16, intermediate_size=32))
    calls: list[tuple[list[Any], Any]] = []

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        calls.append((list(prompts), trainer))
        prompt_ids = [
            tok.apply_chat_template(p, add_generation_prompt=True, return_dict=True)["input_ids"]
            for p in prompts
        ]
        completion = [7, 8, 9, 10, tok.eos_token_id]
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": [completion] * len(prompts),
            "logprobs": None,
            "env_mask": [[1, 0, 0, 1, 1]] * len(prompts),
            "turns_taken": list(range(len(prompts))),
        }

    seen: dict[str, Any] = {}

    def reward(prompts: list[Any], completions: list[Any], **kw: Any) -> list[float]:
        turns_taken = kw["turns_taken"]
        seen["turns_taken"] = list(turns_taken)
        return [float(t % 2) for t in turns_taken]

    masks: list[Any] = []

    class Recording(grpo_trainer_class()):  # type: ignore[misc]
        def compute_loss(self, model: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
            masks.append((inputs["completion_mask"] * inputs["tool_mask"]).tolist())
            return super().compute_loss(model, inputs, *args, **kwargs)

    settings = GRPOSettings(steps=1, prompts_per_step=2, num_generations=3, max_completion_length=8)
    trainer = make_grpo_trainer(
        model,
        tok,
        [reward],
        TASK.dataset(6, np.random.default_rng(0)),
        settings,
        output_dir=tmp_path,
        rollout_func=rollout,
        trainer_class=Recording,
    )
    trainer.train()
    [(prompts, given)] = calls
    assert given is trainer
    assert len(prompts) == 6
    assert prompts[0] == prompts[1] == prompts[2] != prompts[3] == prompts[4] == prompts[5]
    assert seen["turns_taken"] == list(range(6))
    assert sorted(masks[0]) == [[1, 0, 0, 1, 1]] * 6


def test_environment_factory_accepts_the_tiny_tool_template(tool_tokenizer: Any) -> None:
    """TRL's own tool loop needs a template that renders tool calls and a response parser:
    the tiny tool template passes TRL's check, and a generated tool call parses back."""
    from trl.chat_template_utils import parse_response, supports_tool_calling

    tok = tool_tokenizer
    assert supports_tool_calling(tok)
    prefix = tok.apply_chat_template(
        TASK.prompt("123"), add_generation_prompt=True, return_dict=True
    )["input_ids"]
    ids = tok(LOOKUP_CALL + tok.eos_token, add_special_tokens=False)["input_ids"]
    parsed = parse_response(tok, ids, prefix=prefix)
    assert parsed["tool_calls"] == [
        {"type": "function", "function": {"name": "lookup", "arguments": {}}}
    ]
    with pytest.raises(ValueError, match="not one token"):
        with_tool_calls(train_tokenizer(["abc"], vocab_size=300))
