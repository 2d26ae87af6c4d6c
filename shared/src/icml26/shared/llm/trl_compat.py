"""What :mod:`icml26.shared.llm` takes from TRL beyond its stable public API, pinned and tested.

TRL's stable surface (``GRPOTrainer``, ``GRPOConfig``, ``SFTTrainer``, ``SFTConfig``, reward
functions, ``Trainer.train`` with its callbacks) is used as documented. Three more things
are used and can change without notice:

* the **experimental hooks** ``rollout_func`` (with its ``env_mask`` output) and
  ``environment_factory``: TRL warns that they "may change or be removed at any time";
* two **private methods** of ``GRPOTrainer``, overridden for dynamic sampling (DAPO): they
  are listed in :data:`PRIVATE` with the SHA-256 of their source in the TRL release they
  were read in.

So TRL is pinned to :data:`TRL_RANGE` (``icml26-shared[rl]``), and
``tests/test_llm_trl_contract.py`` fails when the installed TRL leaves the range, when a
private method's source differs from the one read (:func:`changed_private_names`), or when a
hook stops behaving as relied on (rollout arguments, ``env_mask`` reaching the loss, extra
rollout fields reaching the reward functions). To move to a new TRL: read the changed
methods, adapt :mod:`icml26.shared.llm.grpo`, update the hashes and the range together.

One gap between TRL and peft is bridged here too: :func:`expose_output_bias` (TRL's fused LM
head reads ``lm_head.bias``, which peft's trainable-tokens wrapper does not forward).
"""

from __future__ import annotations

import hashlib
import inspect
from importlib import metadata
from typing import Any

__all__ = [
    "PRIVATE",
    "TRL_RANGE",
    "changed_private_names",
    "check_trl_version",
    "expose_output_bias",
    "source_sha256",
]

#: The TRL releases the GRPO path was read against (kept equal to ``pyproject.toml``'s pin).
TRL_RANGE = ">=1.16,<1.17"

#: ``"Class.method"`` of ``trl.GRPOTrainer`` -> SHA-256 of ``inspect.getsource`` in TRL 1.16.0.
PRIVATE: dict[str, str] = {
    # Overridden to keep the gathered per-function rewards of the batch (dynamic sampling).
    "GRPOTrainer._calculate_rewards": (
        "736ae29b083840b5da2638b55ad1258659c644589991fe6a494131354952efef"
    ),
    # Overridden to drop zero-variance groups from the loss mask and token count afterwards;
    # relies on its output keys "completion_mask", "tool_mask", "num_items_in_batch".
    "GRPOTrainer._generate_and_score_completions": (
        "1fa48922792dcd5c72da155cfe99db477771a7c61cde15519fe8c86d0cdc0b65"
    ),
}


def source_sha256(qualname: str) -> str:
    """SHA-256 of the source of ``trl.<qualname>`` as installed (``"GRPOTrainer._x"``)."""
    import trl

    owner_name, _, attr = qualname.partition(".")
    obj = getattr(getattr(trl, owner_name), attr)
    return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()


def changed_private_names() -> list[str]:
    """The names in :data:`PRIVATE` whose installed source differs from the one read."""
    return [name for name, digest in PRIVATE.items() if source_sha256(name) != digest]


def check_trl_version() -> str:
    """The installed TRL version.

    Raises:
        RuntimeError: TRL is outside :data:`TRL_RANGE` (the private methods and experimental
            hooks above were read in that range only).
    """
    from packaging.specifiers import SpecifierSet

    installed = metadata.version("trl")
    if installed not in SpecifierSet(TRL_RANGE):
        raise RuntimeError(
            f"trl {installed} is installed, but icml26.shared.llm's GRPO path was checked "
            f"against trl{TRL_RANGE} (it overrides {sorted(PRIVATE)} and uses the "
            f"experimental rollout_func / environment_factory hooks): install "
            f"'trl{TRL_RANGE}', or re-check those names and update icml26.shared.llm.trl_compat"
        )
    return installed


def expose_output_bias(model: Any) -> bool:
    """Let TRL's fused LM head read ``bias`` on a peft trainable-tokens output layer.

    ``GRPOTrainer`` (TRL 1.16) scores completions through ``add_fused_lm_head``, which reads
    ``model.get_output_embeddings().bias`` on every forward. When new token rows train
    (peft's ``trainable_token_indices``, as :func:`icml26.shared.llm.sft.add_lora` sets for
    ``new_token_ids``) on a model whose output layer is tied to its input embeddings
    (SmolLM2, a tied tiny model), peft wraps the output layer in a ``TrainableTokensWrapper``
    that forwards ``weight`` (the merged rows, so gradients reach the new rows) but not
    ``bias``: the first GRPO step raised ``AttributeError: 'TrainableTokensWrapper' object
    has no attribute 'bias'``. This sets the wrapper's ``bias`` to the wrapped layer's own
    (``None`` on Llama-style heads) as a plain attribute, so no parameter is added and the
    state dict is unchanged.

    Args:
        model: a model or ``PeftModel`` (anything with ``get_output_embeddings``).

    Returns:
        Whether the output layer was such a wrapper (``False``: nothing to do, nothing done).
    """
    try:
        from peft.utils.other import TrainableTokensWrapper
    except ImportError:  # no peft, so no peft wrapper either
        return False
    get_head = getattr(model, "get_output_embeddings", None)
    head = get_head() if get_head is not None else None
    if not isinstance(head, TrainableTokensWrapper):
        return False
    if "bias" not in head.__dict__:
        head.__dict__["bias"] = getattr(head.token_adapter.base_layer, "bias", None)
    return True
