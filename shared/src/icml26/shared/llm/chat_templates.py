"""Chat templates with ``{% generation %}`` markers, for an assistant-only SFT loss.

``apply_chat_template(..., return_assistant_tokens_mask=True)``, which both
:func:`icml26.shared.llm.sft.encode_chat` and TRL's ``assistant_only_loss`` use, can only tell
assistant tokens from the context when the template wraps them in ``{% generation %}`` ...
``{% endgeneration %}``. Most released templates, SmolLM2's among them, have no such markers.
The patched templates here render **exactly** the same text as the originals (a test checks it
on many conversations) and mark each assistant turn's content plus its end-of-turn token
(``<|im_end|>`` for ChatML), so the model learns to stop; the newline after it is context.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "SMOLLM2_CHAT_TEMPLATE",
    "SMOLLM2_GENERATION_TEMPLATE",
    "with_generation_markers",
]

#: SmolLM2-Instruct's released chat template (ChatML with a default system prompt).
SMOLLM2_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)

#: The same rendering, with each assistant turn's ``content<|im_end|>`` inside
#: ``{% generation %}``.
SMOLLM2_GENERATION_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}"
    "{% if message['role'] == 'assistant' %}{{ '<|im_start|>assistant\n' }}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}{{ '\n' }}"
    "{% else %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' "
    "+ '\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_PATCHES = {SMOLLM2_CHAT_TEMPLATE: SMOLLM2_GENERATION_TEMPLATE}


def _normalise(template: str) -> str:
    return template.strip()


def with_generation_markers(tokenizer: Any, *, strict: bool = True) -> Any:
    """Give ``tokenizer`` a chat template with ``{% generation %}`` markers, in place; return it.

    A template that already has them is kept; a known released template (SmolLM2's) is
    replaced by its patched twin. ``strict=False`` leaves an unknown template as it is (the
    loop SFT engine then finds assistant turns by prefix rendering; TRL's needs markers).

    Raises:
        ValueError: the tokenizer has no chat template, or (``strict``) one this module has no
            patch for (then set ``tokenizer.chat_template`` to a marked template yourself).
    """
    template = getattr(tokenizer, "chat_template", None)
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    if not template:
        raise ValueError(f"the tokenizer {name!r} has no chat template to patch")
    if "{% generation %}" in template or "{%- generation %}" in template:
        return tokenizer
    for original, patched in _PATCHES.items():
        if _normalise(template) == _normalise(original):
            tokenizer.chat_template = patched
            return tokenizer
    if not strict:
        return tokenizer
    raise ValueError(
        f"no patched chat template is known for {name!r}: set tokenizer.chat_template to a "
        f"template that wraps each assistant turn in {{% generation %}} ... "
        f"{{% endgeneration %}}"
    )
