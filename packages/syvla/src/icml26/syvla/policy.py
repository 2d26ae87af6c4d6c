"""A trained SyVLA model as a policy: ``select_action(observation, instruction)``.

LeRobot-style inference: give it the observation your environment returns and any
instruction text (embedded by the frozen sentence encoder on first use), get an action.
Observations are SyVLA's egocentric symbolic views, ``(S, S, 3)`` uint8 minigrid
``(object, colour, state)`` codes (:func:`icml26.syvla.levels.egocentric_view` makes them from
any minigrid environment), or a batch ``(B, S, S, 3)``.
"""

from __future__ import annotations

import numpy as np
import torch

from icml26.syvla.data import TextBank
from icml26.syvla.language import TextEncoder
from icml26.syvla.model import SyVLA, check_codes

__all__ = ["Policy"]


class Policy:
    """Wraps a :class:`SyVLA` model for acting.

    Args:
        model: a trained (or any) SyVLA network.
        encoder: the sentence encoder of the instructions (default: the bundled MiniLM, the
            one SyVLA was trained with).
        greedy: take the most likely action (``True``) or sample.
        seed: the seed of sampling.

    The model's train/eval mode is left as the caller set it: each :meth:`select_action`
    runs in eval mode and restores the previous mode afterwards.
    """

    def __init__(
        self,
        model: SyVLA,
        encoder: TextEncoder | None = None,
        *,
        greedy: bool = True,
        seed: int = 0,
    ) -> None:
        self.model = model
        self.bank = TextBank(encoder or TextEncoder(), texts=[])
        self.greedy = greedy
        self.gen = torch.Generator().manual_seed(seed)

    @torch.no_grad()
    def select_action(self, observation: np.ndarray, instruction: str | list[str]) -> np.ndarray:
        """The action(s) for ``observation`` under ``instruction``.

        Args:
            observation: ``(S, S, 3)`` or ``(B, S, S, 3)`` integer minigrid codes, ``S`` the
                model's ``view_size``.
            instruction: one text, or one per batch row.

        Returns:
            An ``int64`` array: shape ``()`` for one observation, ``(B,)`` for a batch
            (0 left, 1 right, 2 forward, 3 pickup, 4 drop).

        Raises:
            ValueError: a wrong shape, codes outside their channel's range (object < 11,
                colour < 6, state < 3; the message names the channel), a count of
                instructions that does not match the batch, or an empty instruction.
        """
        obs = np.asarray(observation)
        single = obs.ndim == 3
        batch = obs[None] if single else obs
        size = self.model.cfg.view_size
        if batch.ndim != 4 or batch.shape[1:] != (size, size, 3):
            raise ValueError(
                f"observation must have shape ({size}, {size}, 3) or (B, {size}, {size}, 3), "
                f"got {obs.shape}"
            )
        if not np.issubdtype(batch.dtype, np.integer):
            raise ValueError(f"observation must hold integer minigrid codes, got {batch.dtype}")
        check_codes(torch.as_tensor(batch))
        texts = [instruction] * len(batch) if isinstance(instruction, str) else list(instruction)
        if len(texts) != len(batch):
            raise ValueError(f"{len(texts)} instructions for a batch of {len(batch)}")
        ids = self.bank.ids(texts)
        device = next(self.model.parameters()).device
        was_training = self.model.training
        self.model.eval()
        try:
            out = self.model(
                torch.as_tensor(batch, device=device),
                torch.as_tensor(self.bank.vectors[ids], device=device),
            )
        finally:
            self.model.train(was_training)
        if self.greedy:
            actions = out.logits.argmax(-1).cpu()
        else:
            actions = torch.multinomial(out.logits.softmax(-1).cpu(), 1, generator=self.gen)[:, 0]
        result = actions.numpy().astype(np.int64)
        return result[0] if single else result
