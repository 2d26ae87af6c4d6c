"""A client for OpenAI-compatible chat endpoints (OpenAI, vLLM, llama.cpp server, Ollama, ...).

A thin layer over the official ``openai`` SDK, which owns the HTTP details: its timeouts, and
its retries with exponential backoff on connection errors, 408/409/429 and 5xx (honouring
``Retry-After``). On top it adds what our experiments need: the
:class:`~icml26.shared.llm.ChatBackend` interface (a batch of conversations in, one
:class:`~icml26.shared.llm.Completion` each out, requests sent concurrently), token accounting
across calls, an optional token budget, and errors that say which endpoint failed and why.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from icml26.shared.llm.types import Completion, Message, TokenUsage, check_messages

__all__ = [
    "ChatClient",
    "EndpointError",
    "EndpointUnreachableError",
    "TokenBudgetExceededError",
]


class EndpointError(RuntimeError):
    """The endpoint answered with an error (bad request, authentication, unknown model, ...)."""


class EndpointUnreachableError(EndpointError):
    """No answer from the endpoint: connection refused, DNS failure, or timeout, after all
    retries."""


class TokenBudgetExceededError(RuntimeError):
    """The client's ``max_total_tokens`` is spent; no further request is sent."""


class ChatClient:
    """Chat completions from an OpenAI-compatible endpoint.

    Args:
        base_url: the API root, e.g. ``"https://api.openai.com/v1"`` or
            ``"http://localhost:8000/v1"``.
        model: the model name the endpoint expects (``"gpt-4o-mini"``).
        api_key: default ``$OPENAI_API_KEY``, else ``"EMPTY"`` (local servers ignore it).
        timeout: seconds per HTTP request.
        max_retries: retries per request after the first attempt (backoff is the SDK's).
        concurrency: requests in flight at once for a batch.
        max_total_tokens: stop (raise :class:`TokenBudgetExceededError`) before a request
            once prompt + completion tokens used so far reach this; ``None``: no budget.

    Attributes:
        usage: running :class:`~icml26.shared.llm.TokenUsage` over every call.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        concurrency: int = 4,
        max_total_tokens: int | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(model, str) or not model:
            raise ValueError("model must be a non-empty string")
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be a non-negative integer, got {max_retries!r}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency!r}")
        if max_total_tokens is not None and max_total_tokens < 1:
            raise ValueError(f"max_total_tokens must be positive or None, got {max_total_tokens}")
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "ChatClient needs the openai package: pip install 'icml26-shared[openai]'"
            ) from exc
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.max_total_tokens = max_total_tokens
        self.usage = TokenUsage()
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            timeout=self.timeout,
            max_retries=max_retries,
        )

    def __repr__(self) -> str:
        return f"ChatClient({self.base_url!r}, model={self.model!r})"

    def _one(self, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        if self.max_total_tokens is not None and self.usage.total_tokens >= self.max_total_tokens:
            raise TokenBudgetExceededError(
                f"token budget of {self.max_total_tokens} spent ({self.usage.total_tokens} used "
                f"over {self.usage.requests} requests to {self.base_url})"
            )
        openai = self._openai
        attempts = self.max_retries + 1
        try:
            response = self._client.chat.completions.create(
                # checked by check_messages; the SDK's TypedDict union is not inferable here
                model=self.model,
                messages=cast(Any, messages),
                **params,
            )
        except openai.APITimeoutError as exc:
            raise EndpointUnreachableError(
                f"{self.base_url} did not answer within {self.timeout:g} s "
                f"({attempts} attempt(s)); raise timeout= or check the server"
            ) from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise EndpointUnreachableError(
                f"cannot reach the OpenAI-compatible endpoint {self.base_url} "
                f"({attempts} attempt(s)): {type(cause).__name__}: {cause}; is the server running "
                f"and is base_url right (it usually ends in /v1)?"
            ) from exc
        except openai.APIStatusError as exc:
            raise EndpointError(
                f"{self.base_url} answered HTTP {exc.status_code} for model {self.model!r}: "
                f"{exc.message}"
            ) from exc
        if not response.choices:
            raise EndpointError(f"{self.base_url} returned no choices for model {self.model!r}")
        choice = response.choices[0]
        text = choice.message.content or ""
        usage = response.usage
        completion = Completion(
            text=text,
            prompt_tokens=int(usage.prompt_tokens) if usage else 0,
            completion_tokens=int(usage.completion_tokens) if usage else 0,
            finish_reason=str(choice.finish_reason or "stop"),
        )
        self.usage.add(completion)
        return completion

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
        **kwargs: Any,
    ) -> list[Completion]:
        """One reply per conversation, in order; extra keyword arguments go to the endpoint
        (``stop=[...]``, ``presence_penalty=...``).

        Raises:
            EndpointUnreachableError: connection failure or timeout after the retries.
            EndpointError: an HTTP error status from the endpoint.
            TokenBudgetExceededError: ``max_total_tokens`` spent.
        """
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        checked = [check_messages(c) for c in conversations]
        params: dict[str, Any] = {
            "max_tokens": max_tokens,
            "temperature": float(temperature),
            "top_p": float(top_p),
            **kwargs,
        }
        if seed is not None:
            params["seed"] = int(seed)
        if self.concurrency == 1 or len(checked) <= 1:
            return [self._one(c, params) for c in checked]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(checked))) as pool:
            return list(pool.map(lambda c: self._one(c, params), checked))

    def chat(self, prompt: str, *, system: str | None = None, **kwargs: Any) -> str:
        """The reply text to one user message (a convenience over :meth:`complete`)."""
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        return self.complete([messages], **kwargs)[0].text
