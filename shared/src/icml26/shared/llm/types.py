"""Records shared by the local and remote chat back ends (no framework imports)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["ChatBackend", "Completion", "Message", "TokenUsage", "check_messages"]

#: One chat message, ``{"role": "system" | "user" | "assistant", "content": str}``.
Message = Mapping[str, str]

_ROLES = frozenset({"system", "user", "assistant", "tool"})


def check_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Validate one conversation; return it as plain dicts.

    Raises:
        ValueError: empty conversation, a message that is not a mapping with a known ``role``
            and a string ``content``.
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ValueError(
            f"a conversation must be a list of {{'role', 'content'}} messages, got {type(messages).__name__}"
        )
    if not messages:
        raise ValueError("a conversation must hold at least one message")
    out = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            raise ValueError(f"message {i} must be a mapping, got {type(msg).__name__}")
        role, content = msg.get("role"), msg.get("content")
        if role not in _ROLES:
            raise ValueError(f"message {i} has role {role!r}; expected one of {sorted(_ROLES)}")
        if not isinstance(content, str):
            raise ValueError(f"message {i} content must be a string, got {type(content).__name__}")
        out.append({"role": str(role), "content": content})
    return out


@dataclass(frozen=True)
class Completion:
    """One generated reply.

    Attributes:
        text: the reply, without the prompt.
        prompt_tokens: tokens in the prompt as the back end counted them.
        completion_tokens: tokens generated.
        finish_reason: ``"stop"`` (end of sequence), ``"length"`` (hit ``max_tokens``), or
            what the endpoint said.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str = "stop"


@dataclass
class TokenUsage:
    """Running totals of what a back end consumed (thread-safe ``add``)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, completion: Completion) -> None:
        with self._lock:
            self.requests += 1
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@runtime_checkable
class ChatBackend(Protocol):
    """Anything that answers a batch of conversations: :class:`~.LocalChatModel`,
    :class:`~.ChatClient`, or a test double."""

    usage: TokenUsage

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
        **kwargs: Any,
    ) -> list[Completion]: ...
