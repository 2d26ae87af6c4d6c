"""The policies: one per role (Planner, Filter, Answerer; the monolithic agent for the
baseline), all sharing one tokenizer.

Two layouts, chosen by scale:

* tiny models (``quick``): one small randomly initialised Llama *per role*
  (:func:`make_tiny_team`). A LoRA adapter on an untrained base would carry nothing, so each
  role is a full model warm-started by SFT; keeping them separate also keeps the roles'
  parameters disjoint, as they are in the paper's multi-agent formulation;
* a real checkpoint (SmolLM2-135M-Instruct in ``full``, or any Hugging Face id): one frozen
  base with *one LoRA adapter per role* (:func:`make_lora_team`, peft multi-adapter):
  three policies for about 1.5x the memory of one, and ``set_adapter(role)`` before each
  role's turns or update.

Generation goes through :func:`icml26.shared.llm.rollouts.sample_turns` (batched, left
padded, cut after the end-of-turn token).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ROLES",
    "RolePolicy",
    "Sampling",
    "load_team",
    "make_lora_team",
    "make_tiny_team",
    "save_team",
]

#: DECOR's three roles.
ROLES: tuple[str, ...] = ("planner", "filter", "answerer")


@dataclass(frozen=True)
class Sampling:
    """How turns are generated: sampled (training rollouts) or greedy (evaluation).

    Attributes:
        greedy: argmax decoding (``temperature`` and ``top_p`` unused).
        temperature: sampling temperature.
        top_p: nucleus sampling mass.
    """

    greedy: bool = True
    temperature: float = 1.0
    top_p: float = 1.0


@dataclass
class RolePolicy:
    """A role's policy: a causal LM (``adapter`` names its LoRA adapter when several roles
    share one peft model) and the shared tokenizer."""

    name: str
    model: Any
    tokenizer: Any
    adapter: str | None = None

    def activate(self) -> None:
        """Make this role's adapter the active one (no-op for a separate model)."""
        if self.adapter is not None:
            self.model.set_adapter(self.adapter)

    def trainable(self) -> list[Any]:
        """This role's trainable parameters (its adapter's, or all of its model's)."""
        if self.adapter is None:
            return [p for p in self.model.parameters() if p.requires_grad]
        tag = f".{self.adapter}."
        return [p for n, p in self.model.named_parameters() if tag in n]

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    def prompt_ids(self, messages: Sequence[dict[str, str]]) -> list[int]:
        return list(
            self.tokenizer.apply_chat_template(
                list(messages), tokenize=True, add_generation_prompt=True, return_dict=True
            )["input_ids"]
        )

    def generate(
        self, contexts: Sequence[Sequence[int]], max_new_tokens: int, sampling: Sampling
    ) -> list[list[int]]:
        from icml26.shared.llm.rollouts import sample_turns

        if not contexts:
            return []
        self.activate()
        return sample_turns(
            self.model,
            self.tokenizer,
            contexts,
            max_new_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            greedy=sampling.greedy,
        )

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))


def make_tiny_team(
    texts: Iterable[str],
    roles: Sequence[str],
    *,
    words: Sequence[str] = (),
    vocab_size: int = 768,
    hidden_size: int = 64,
    num_layers: int = 2,
    max_positions: int = 768,
    seed: int = 0,
    device: str = "cpu",
) -> dict[str, RolePolicy]:
    """One tiny Llama per role, all on one BPE tokenizer trained on ``texts``.

    Args:
        texts: what the tokenizer is trained on (passages and questions).
        roles: one randomly initialised model per name (seeded ``seed + i``).
        words: entity names made single tokens (see below).
        vocab_size: the models' vocabulary size.
        hidden_size: their hidden width.
        num_layers: their number of layers.
        max_positions: their longest sequence (positions).
        seed: initialisation seed.
        device: where the models live.

    Returns:
        role -> :class:`RolePolicy` (separate models, one shared tokenizer).

    ``words`` (entity names: countries and capitals) become single (non-special) tokens, and
    the models tie their input and output embeddings: a 2-layer model then learns to copy an
    entity from a passage into a query or an answer within a few hundred SFT steps, including
    entities it never produced in training (sub-word copying takes thousands of steps).
    """
    from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_model, train_tokenizer

    tokenizer = train_tokenizer(list(texts), vocab_size=vocab_size, split_digits=True)
    if words:
        names: list[str] = sorted({str(w) for w in words}, key=lambda w: (-len(w), w))
        tokenizer.add_tokens(names)
    config = TinyModelConfig(
        tie_word_embeddings=True,
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_layers=num_layers,
        num_heads=4,
        num_kv_heads=2,
        max_positions=max_positions,
    )
    return {
        role: RolePolicy(
            role,
            make_tiny_model(tokenizer, config, seed=seed + i).to(device),  # type: ignore[arg-type]
            tokenizer,
        )
        for i, role in enumerate(roles)
    }


def make_lora_team(
    model: Any, tokenizer: Any, roles: Sequence[str], *, rank: int = 8
) -> dict[str, RolePolicy]:
    """One LoRA adapter per role on ``model`` (a peft model holding all of them).

    Args:
        model: a pretrained causal LM (e.g. from :func:`icml26.shared.llm.load_causal_lm`).
        tokenizer: its tokenizer (shared by the roles).
        roles: one adapter per name.
        rank: LoRA rank (alpha = 2 * rank, all linear layers).

    Returns:
        role -> :class:`RolePolicy` over the same peft model (``adapter`` = the role).

    Raises:
        ValueError: no roles.
    """
    from peft import LoraConfig, get_peft_model

    if not roles:
        raise ValueError("a LoRA team needs at least one role")

    def config() -> Any:
        return LoraConfig(
            r=rank,
            lora_alpha=2 * rank,
            lora_dropout=0.0,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )

    peft_model = get_peft_model(model, config(), adapter_name=roles[0])
    for role in roles[1:]:
        peft_model.add_adapter(role, config())
    return {role: RolePolicy(role, peft_model, tokenizer, adapter=role) for role in roles}


def save_team(team: Mapping[str, RolePolicy], folder: str | Path) -> Path:
    """Write a team to ``folder``: per role its LoRA adapter (``folder/<role>``) or its whole
    model, and the shared tokenizer (``folder/tokenizer``).

    Args:
        team: role -> policy (:func:`make_tiny_team` or :func:`make_lora_team`).
        folder: created if missing.

    Returns:
        The folder.
    """
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    first = next(iter(team.values()))
    first.tokenizer.save_pretrained(folder / "tokenizer")
    for role, p in team.items():
        if p.adapter is None:
            p.model.save_pretrained(folder / role)
            continue
        (folder / role).mkdir(exist_ok=True)
        p.model.peft_config[p.adapter].save_pretrained(folder / role)
        state = get_peft_model_state_dict(p.model, adapter_name=p.adapter)
        save_file(
            {k: v.contiguous() for k, v in state.items()},
            folder / role / "adapter_model.safetensors",
        )
    return folder


def load_team(
    folder: str | Path, roles: Sequence[str], base_model: Any = None
) -> dict[str, RolePolicy]:
    """Read a team written by :func:`save_team`.

    Args:
        folder: what :func:`save_team` wrote.
        roles: the roles to read.
        base_model: the checkpoint the adapters were trained on (a LoRA team), or ``None``
            for a team of whole models.

    Returns:
        role -> policy, as saved.

    Raises:
        FileNotFoundError: a role with nothing saved under ``folder``.
        ValueError: a LoRA team (``adapter_config.json`` saved) loaded without
            ``base_model``.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = Path(folder)
    for role in roles:
        if not (folder / role).is_dir():
            raise FileNotFoundError(f"no saved policy for role {role!r} in {folder}")
    lora = [r for r in roles if (folder / r / "adapter_config.json").is_file()]
    if lora and base_model is None:
        raise ValueError(
            f"{folder} holds LoRA adapters (roles {lora}), not whole models: pass base_model "
            "(the checkpoint they were trained on) to load_team"
        )
    tokenizer = AutoTokenizer.from_pretrained(folder / "tokenizer")
    if base_model is None:
        return {
            r: RolePolicy(r, AutoModelForCausalLM.from_pretrained(folder / r).eval(), tokenizer)
            for r in roles
        }
    from peft import PeftModel

    model = PeftModel.from_pretrained(base_model, folder / roles[0], adapter_name=roles[0])
    for r in roles[1:]:
        model.load_adapter(folder / r, adapter_name=r)
    return {r: RolePolicy(r, model, tokenizer, adapter=r) for r in roles}
