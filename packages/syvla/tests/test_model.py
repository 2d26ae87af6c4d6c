"""Intention Decoupling's gradient isolation, shapes, and the reasoning path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.syvla.bc import BCConfig, train_bc
from icml26.syvla.data import Demos, TextBank, all_instructions, random_states
from icml26.syvla.levels import N_ACTIONS
from icml26.syvla.model import ModelConfig, SyVLA
from icml26.syvla.policy import Policy
from icml26.syvla.vqa import ANSWERS

CFG = ModelConfig(view_size=13, d_model=16, hidden=16, n_queries=2)


def _batch(n: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    views = torch.stack(
        [
            torch.randint(0, 11, (n, 13, 13), generator=g),
            torch.randint(0, 6, (n, 13, 13), generator=g),
            torch.randint(0, 3, (n, 13, 13), generator=g),
        ],
        dim=-1,
    )
    return views, torch.randn(n, 384, generator=g)


def _action_loss(model: SyVLA, views: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
    out = model(views, text)
    target = torch.arange(len(views)) % N_ACTIONS
    return torch.nn.functional.cross_entropy(out.logits, target) + out.value.pow(2).mean()


def test_shapes() -> None:
    model = SyVLA(CFG)
    views, text = _batch()
    out = model(views, text)
    assert out.logits.shape == (6, N_ACTIONS)
    assert out.value.shape == (6,)
    assert out.reasoning.shape == (6, len(ANSWERS))
    assert torch.allclose(out.key.norm(dim=-1), torch.ones(6), atol=1e-5)
    assert model.reason(views, text).shape == (6, len(ANSWERS))


def test_action_loss_sends_no_gradient_into_the_backbone_when_decoupled() -> None:
    torch.manual_seed(0)
    model = SyVLA(CFG, decouple=True)
    views, text = _batch()
    _action_loss(model, views, text).backward()
    for name, p in model.backbone.named_parameters():
        assert p.grad is None or torch.count_nonzero(p.grad) == 0, name
    # ... while the action expert does learn from it
    assert all(
        p.grad is not None and p.grad.abs().sum() > 0 for p in model.action_head.parameters()
    )
    assert model.intention.queries.grad.abs().sum() > 0


def test_without_decoupling_the_action_loss_reaches_the_backbone() -> None:
    torch.manual_seed(0)
    model = SyVLA(CFG, decouple=False)
    views, text = _batch()
    _action_loss(model, views, text).backward()
    grads = [p.grad for p in model.backbone.parameters() if p.grad is not None]
    assert grads
    assert sum(float(g.abs().sum()) for g in grads) > 0


def test_reasoning_loss_trains_the_backbone_in_both_modes() -> None:
    for decouple in (True, False):
        torch.manual_seed(0)
        model = SyVLA(CFG, decouple=decouple)
        views, text = _batch()
        model.reason(views, text).logsumexp(-1).mean().backward()
        assert model.backbone.text[0].weight.grad.abs().sum() > 0
        assert all(p.grad is None for p in model.action_head.parameters())


def test_decoupling_does_not_change_the_forward_values() -> None:
    torch.manual_seed(0)
    a = SyVLA(CFG, decouple=True)
    b = SyVLA(CFG, decouple=False)
    b.load_state_dict(a.state_dict())
    views, text = _batch()
    assert torch.allclose(a(views, text).logits, b(views, text).logits)


def test_cell_embedding_is_a_linear_map_of_the_three_one_hot_codes() -> None:
    """Each cell's first feature is one-hot(object, colour, state) times one matrix
    (colour factored out of the object type, so "red" is one direction on a ball and a key)."""
    torch.manual_seed(0)
    bb = SyVLA(CFG).backbone
    views, _ = _batch(3)
    v = views.long()
    onehot = torch.cat(
        [
            torch.nn.functional.one_hot(v[..., 0], 11),
            torch.nn.functional.one_hot(v[..., 1], 6),
            torch.nn.functional.one_hot(v[..., 2], 3),
        ],
        dim=-1,
    ).float()
    weight = torch.cat([bb.obj.weight, bb.col.weight, bb.state.weight]).detach()
    got = bb.obj(v[..., 0]) + bb.col(v[..., 1]) + bb.state(v[..., 2])
    assert torch.allclose(got, onehot @ weight, atol=1e-5)


def test_bad_model_config() -> None:
    with pytest.raises(ValueError, match="view_size must be odd"):
        ModelConfig(view_size=12)
    with pytest.raises(ValueError, match="must be >= 1"):
        ModelConfig(n_queries=0)


class _FakeEncoder:
    """A stand-in sentence encoder (deterministic vectors; no model load)."""

    dim = 384

    def encode(self, texts: list[str]) -> np.ndarray:
        g = np.random.default_rng(len(texts))
        return g.standard_normal((len(texts), self.dim)).astype(np.float32)


@pytest.mark.parametrize(
    ("channel", "name", "bad"), [(0, "object", 11), (1, "colour", 6), (2, "state", 3)]
)
def test_codes_outside_their_channel_range_are_refused(channel: int, name: str, bad: int) -> None:
    model = SyVLA(CFG)
    policy = Policy(model, _FakeEncoder())  # type: ignore[arg-type]
    views, _ = _batch(2)
    obs = views.numpy().astype(np.uint8)
    assert policy.select_action(obs, "go to the red ball").shape == (2,)
    obs[0, 3, 4, channel] = bad  # in [0, 10] but outside this channel's codes
    with pytest.raises(ValueError, match=rf"channel {channel} \({name}\)"):
        policy.select_action(obs, "go to the red ball")
    with pytest.raises(ValueError, match=rf"channel {channel} \({name}\)"):
        model(torch.as_tensor(obs), torch.zeros(2, 384))
    neg = obs.astype(np.int64)
    neg[0, 3, 4, channel] = -1
    with pytest.raises(ValueError, match=rf"channel {channel} \({name}\)"):
        policy.select_action(neg, "go to the red ball")


def test_decoupled_action_token_loss_stays_out_of_the_backbone() -> None:
    for decouple in (True, False):
        torch.manual_seed(0)
        model = SyVLA(CFG, decouple=decouple)
        views, text = _batch()
        model(views, text).reasoning.logsumexp(-1).mean().backward()  # BC's action-token loss
        grad = model.backbone.text[0].weight.grad
        assert (grad is None) == decouple
        assert model.reasoning_head[0].weight.grad.abs().sum() > 0


class _BankEncoder:
    dim = 384

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.random.default_rng(len(texts)).normal(size=(len(texts), 384)).astype(np.float32)


def test_decoupled_bc_trains_neither_the_backbone_nor_the_reasoning_head_by_action() -> None:
    """With the VQA loss off, decoupled BC moves only the action expert; joint BC moves the
    backbone and the reasoning head too (the former decoupled BC trained the reasoning head,
    the VQA answerer, by the action-token loss on detached features)."""
    views = random_states(8, "train", 13, seed=0, stream="bc_test")
    missions = ["go to the red ball"] * 8
    demos = Demos(views, missions, np.arange(8) % N_ACTIONS, 8, 8)
    bank = TextBank(_BankEncoder(), texts=all_instructions())  # type: ignore[arg-type]
    for decouple in (True, False):
        torch.manual_seed(0)
        model = SyVLA(CFG, decouple=decouple)
        head = [p.detach().clone() for p in model.reasoning_head.parameters()]
        backbone = [p.detach().clone() for p in model.backbone_parameters()]
        control = [p.detach().clone() for p in model.control_parameters()]
        train_bc(model, demos, bank, BCConfig(steps=3, batch=8, vqa_coef=0.0), seed=0)

        def same(before: list[torch.Tensor], after: list[torch.nn.Parameter]) -> bool:
            return all(torch.equal(a, b) for a, b in zip(before, after, strict=True))

        assert same(head, list(model.reasoning_head.parameters())) == decouple
        assert same(backbone, model.backbone_parameters()) == decouple
        assert not same(control, model.control_parameters())


def test_policy_leaves_the_callers_train_mode_alone() -> None:
    model = SyVLA(CFG).train()
    seen: list[bool] = []
    model.register_forward_pre_hook(lambda m, _: seen.append(m.training))
    policy = Policy(model, _FakeEncoder())  # type: ignore[arg-type]
    assert model.training  # constructing the policy changes nothing
    views, _ = _batch(2)
    policy.select_action(views.numpy().astype(np.uint8), "go to the red ball")
    assert seen == [False]  # acting runs in eval mode
    assert model.training  # and the caller's mode is restored
    model.eval()
    policy.select_action(views.numpy().astype(np.uint8), "go to the red ball")
    assert not model.training
