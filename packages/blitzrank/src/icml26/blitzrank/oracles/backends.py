"""Chat back ends for :class:`~icml26.blitzrank.oracles.llm.LLMOracle`, on ``icml26.shared.llm``.

* :class:`LocalChat`: the workspace's :class:`~icml26.shared.llm.LocalChatModel` (a
  transformers causal LM loaded by :func:`~icml26.shared.llm.load_causal_lm`: the bundled
  SmolLM2-135M-Instruct by default, a local folder, a ``.gguf`` file or a cached Hugging Face
  id; any device) plus :meth:`LocalChat.first_token_logits`, the single-forward-pass scoring
  that the ``first_token`` oracle mode uses.
* :class:`~icml26.shared.llm.ChatClient`: an OpenAI-compatible endpoint (timeouts, retries
  with backoff, token accounting, and errors naming the endpoint), used as is.

Both need the extra ``icml26-blitzrank[llm]`` (``[openai]`` is enough for an endpoint).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from icml26.shared.llm import ChatClient, Completion, LocalChatModel

__all__ = ["BUILTIN", "ChatClient", "LocalChat", "make_backend"]

BUILTIN = "smollm2-135m-instruct-q4_1"


class LocalChat(LocalChatModel):
    """A local chat model that can also score labels by their first-token logits."""

    def first_token_logits(
        self, messages: Sequence[dict[str, str]], labels: Sequence[str], *, prefix: str = ""
    ) -> tuple[list[float], int]:
        """Logits of each label's first token where the reply (begun with ``prefix``) goes on.

        Returns:
            The logits in ``labels`` order and the prompt's length in tokens.
        """
        import torch

        enc = self.tokenizer(
            self.prompt(messages) + prefix,
            return_tensors="pt",
            add_special_tokens=False,
            return_token_type_ids=False,  # a decoder-only forward takes none
        )
        ids = [self.tokenizer(lab, add_special_tokens=False)["input_ids"][0] for lab in labels]
        if len(set(ids)) != len(ids):
            raise ValueError(f"labels {list(labels)} do not map to distinct first tokens")
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            logits = self.model(**{k: v.to(device) for k, v in enc.items()}).logits[0, -1]
        n_prompt = int(enc["input_ids"].shape[1])
        self.usage.add(Completion("", n_prompt, 1, "length"))
        return [float(logits[i]) for i in ids], n_prompt


def make_backend(
    *,
    model: str = BUILTIN,
    endpoint: str = "",
    endpoint_model: str = "",
    device: str | None = None,
    timeout: float = 60.0,
    max_retries: int = 3,
    threads: int = 0,
) -> Any:
    """A :class:`ChatClient` for ``endpoint`` when set, else :class:`LocalChat` on ``model``.

    ``threads > 0`` caps torch's CPU threads for the local model (0: torch's default).
    """
    if endpoint:
        return ChatClient(
            endpoint, endpoint_model or model, timeout=timeout, max_retries=max_retries
        )
    if threads:
        import torch

        torch.set_num_threads(threads)
    return LocalChat.from_spec(model, device=device or None)
