"""scGPT and Geneformer adapters against stand-ins with exactly the published signature and
checkpoint layout (neither package can join this workspace), and scGPT's value binning."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from icml26.scfm_grn.adapters import GeneformerAdapter, ScGPTAdapter, bin_expression, z_to_bin
from icml26.scfm_grn.features import gradient_trajectory, virtual_value_perturbation

GENES = ("g0", "g1", "g2", "g3", "g4")


class TransformerModel(nn.Module):
    """A stand-in for ``scgpt.model.TransformerModel``: its constructor's arguments and its
    ``forward(src, values, src_key_padding_mask, batch_labels=None, CLS=False, CCE=False,
    MVC=False, ECS=False, do_sample=False) -> {"mlm_output": [B, L], "cell_emb": [B, d]}``.
    Its "model" is linear and known: ``mlm_output[b, l] = sum_k W[src_k, src_l] v_k`` over the
    unmasked (``v != -1``), non-padding, non-``<cls>`` positions. Its attention block is a
    ``nn.MultiheadAttention`` (weights ``in_proj_*``, as with ``use_fast_transformer=False``);
    with ``explicit_zero_prob`` it also returns ``mlm_zero_probs``; it records the
    ``batch_labels`` it was given."""

    def __init__(
        self,
        ntoken: int,
        d_model: int,
        nhead: int,
        d_hid: int,
        nlayers: int,
        nlayers_cls: int = 3,
        n_cls: int = 1,
        vocab: Any = None,
        dropout: float = 0.5,
        pad_token: str = "<pad>",
        pad_value: int = 0,
        do_mvc: bool = False,
        do_dab: bool = False,
        use_batch_labels: bool = False,
        num_batch_labels: int | None = None,
        domain_spec_batchnorm: bool = False,
        input_emb_style: str = "continuous",
        n_input_bins: int | None = None,
        cell_emb_style: str = "cls",
        mvc_decoder_style: str = "inner product",
        ecs_threshold: float = 0.3,
        explicit_zero_prob: bool = False,
        use_fast_transformer: bool = False,
        fast_transformer_backend: str = "flash",
        pre_norm: bool = False,
    ) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(ntoken, ntoken) / 4)
        self.cls = nn.Parameter(torch.zeros(d_model))
        self.self_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)
        self.explicit_zero_prob, self.use_batch_labels = explicit_zero_prob, use_batch_labels
        self.options = {"pre_norm": pre_norm, "domain_spec_batchnorm": domain_spec_batchnorm}
        self.seen_batch_labels: Tensor | None = None

    def forward(
        self,
        src: Tensor,
        values: Tensor,
        src_key_padding_mask: Tensor,
        batch_labels: Tensor | None = None,
        CLS: bool = False,
        CCE: bool = False,
        MVC: bool = False,
        ECS: bool = False,
        do_sample: bool = False,
    ) -> dict[str, Tensor]:
        shown = torch.where((values == -1) | src_key_padding_mask, 0.0, values)
        shown = shown.clone()
        shown[:, 0] = 0.0  # the <cls> position carries no gene
        w = self.w[src.unsqueeze(-1), src.unsqueeze(-2)]  # [B, L(k), L(l)]
        out = torch.einsum("bk,bkl->bl", shown, w)
        if self.use_batch_labels and batch_labels is None:
            raise ValueError("a model trained with batch labels needs batch_labels")
        self.seen_batch_labels = batch_labels
        result = {"mlm_output": out, "cell_emb": self.cls.expand(src.shape[0], -1)}
        if self.explicit_zero_prob:
            result["mlm_zero_probs"] = torch.full_like(out, 0.25)
        return result


def _scgpt_folder(
    tmp_path: Path, style: str = "continuous", flash: bool = True, **extra: Any
) -> Path:
    """A checkpoint folder as scGPT publishes one; ``flash``: attention weights saved under
    flash attention's ``Wqkv`` names (the published checkpoints' layout)."""
    folder = tmp_path / "scgpt_human"
    folder.mkdir()
    vocab = {"<pad>": 0, "<cls>": 1, "<eoc>": 2, **{g: 3 + i for i, g in enumerate(GENES)}}
    args = {
        "embsize": 8,
        "nheads": 2,
        "d_hid": 8,
        "nlayers": 1,
        "n_bins": 51,
        "pad_token": "<pad>",
        "pad_value": -2,
        "mask_value": -1,
        "dropout": 0.2,
        "input_emb_style": style,
        "MVC": True,
        **extra,
    }
    torch.manual_seed(0)
    model = TransformerModel(len(vocab), 8, 2, 8, 1)
    state = model.state_dict()
    if flash:
        state = {k.replace("in_proj_", "Wqkv."): v for k, v in state.items()}
    torch.save(state, folder / "best_model.pt")
    (folder / "args.json").write_text(json.dumps(args))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    return folder


def test_scgpt_checkpoint_loads_and_reads_the_linear_truth(tmp_path: Path) -> None:
    adapter = ScGPTAdapter.from_checkpoint(_scgpt_folder(tmp_path), model_class=TransformerModel)
    assert adapter.vocab["g0"] == 3
    ids = torch.tensor([[adapter.vocab[g] for g in GENES]])
    w = adapter.model.w.detach()[ids[0]][:, ids[0]]  # W among the genes, [k, l]
    # GT at level 0: d out_j / d v_i = W[i, j] * d bin / d z at z = 0 (50 * phi(0))
    gt = gradient_trajectory(adapter, GENES, levels=(0.0,), mode="jvp")[..., 0]
    slope = 50 * np.exp(0) / np.sqrt(2 * np.pi)
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_allclose(gt[off], (w.numpy() * slope)[off], rtol=1e-4)
    vvp = virtual_value_perturbation(adapter, GENES, levels=(-1.0, 1.0))
    assert vvp.shape == (5, 5, 2)


def test_scgpt_masks_with_mask_value_and_prepends_cls(tmp_path: Path) -> None:
    seen: dict[str, Tensor] = {}
    adapter = ScGPTAdapter.from_checkpoint(_scgpt_folder(tmp_path), model_class=TransformerModel)
    forward = adapter.model.forward

    def spy(src: Tensor, values: Tensor, src_key_padding_mask: Tensor, **kw: Any) -> Any:
        seen.update(src=src, values=values, pad=src_key_padding_mask)
        return forward(src, values, src_key_padding_mask, **kw)

    adapter.model.forward = spy  # type: ignore[method-assign]
    ids = torch.tensor([[adapter.vocab[g] for g in GENES]])
    mask = torch.tensor([[False, True, False, False, True]])
    out = adapter.predict(ids, torch.zeros(1, 5), mask)
    assert out.shape == (1, 5)
    assert seen["src"][0, 0] == 1  # <cls>
    assert seen["values"][0, 0] == 0  # scGPT's tokenize_batch gives <cls> the value 0
    assert seen["values"][0, 2] == -1
    assert seen["values"][0, 5] == -1
    assert not seen["pad"].any()


def test_scgpt_published_checkpoint_layout_loads(tmp_path: Path) -> None:
    """Flash attention's ``Wqkv.*`` weights land in PyTorch attention's ``in_proj_*``; the
    args.json options reach the constructor; batch labels and zero probabilities are used."""
    folder = _scgpt_folder(
        tmp_path, explicit_zero_prob=True, use_batch_labels=True, num_batch_labels=3, DSBN=True
    )
    saved = torch.load(folder / "best_model.pt", weights_only=True)
    assert "self_attn.Wqkv.weight" in saved
    adapter = ScGPTAdapter.from_checkpoint(folder, model_class=TransformerModel, batch_label=2)
    model = adapter.model
    torch.testing.assert_close(model.self_attn.in_proj_weight, saved["self_attn.Wqkv.weight"])
    assert model.explicit_zero_prob
    assert model.use_batch_labels
    assert model.options["domain_spec_batchnorm"]
    ids = torch.tensor([[adapter.vocab[g] for g in GENES]])
    mask = torch.tensor([[False, True, False, False, True]])
    values = torch.randn(1, 5)
    out = adapter.predict(ids, values, mask)
    assert model.seen_batch_labels is not None
    assert model.seen_batch_labels.tolist() == [2]
    plain = ScGPTAdapter(model, adapter.vocab, batch_label=2)
    model.explicit_zero_prob = False
    torch.testing.assert_close(out, 0.75 * plain.predict(ids, values, mask))
    # a torch-named checkpoint (flash=False) loads the same way
    (tmp_path / "b").mkdir()
    other = ScGPTAdapter.from_checkpoint(
        _scgpt_folder(tmp_path / "b", flash=False), model_class=TransformerModel
    )
    torch.testing.assert_close(other.model.self_attn.in_proj_weight, model.self_attn.in_proj_weight)


def test_scgpt_per_cell_binning_is_scgpts(tmp_path: Path) -> None:
    """``binning="per_cell"``: visible values binned by the cell's own quantiles (as
    :func:`bin_expression` bins an expressed cell), hidden genes at mask_value, no gradient."""
    adapter = ScGPTAdapter.from_checkpoint(
        _scgpt_folder(tmp_path), model_class=TransformerModel, binning="per_cell"
    )
    seen: dict[str, Tensor] = {}
    forward = adapter.model.forward

    def spy(src: Tensor, values: Tensor, src_key_padding_mask: Tensor, **kw: Any) -> Any:
        seen["values"] = values
        return forward(src, values, src_key_padding_mask, **kw)

    adapter.model.forward = spy  # type: ignore[method-assign]
    ids = torch.tensor([[adapter.vocab[g] for g in GENES]])
    values = torch.tensor([[-1.0, 0.3, 2.0, 0.5, -0.2]])
    mask = torch.tensor([[False, False, False, False, True]])
    adapter.predict(ids, values, mask)
    shown = seen["values"][0, 1:]
    expected = bin_expression(np.array([[0.0, 1.3, 3.0, 1.5]]) + 1.0, n_bins=51)[0]
    np.testing.assert_allclose(shown[:4].numpy(), expected)
    assert shown[4] == -1
    assert shown[0] < shown[1] < shown[3] < shown[2]  # the cell's order
    with pytest.raises(TypeError, match="not differentiable"):
        gradient_trajectory(adapter, GENES, levels=(0.0,))
    with pytest.raises(ValueError, match="binning"):
        ScGPTAdapter(adapter.model, adapter.vocab, binning="log")


def test_scgpt_category_encoder_refuses_gradients(tmp_path: Path) -> None:
    folder = _scgpt_folder(tmp_path, style="category")
    adapter = ScGPTAdapter.from_checkpoint(folder, model_class=TransformerModel)
    with pytest.raises(TypeError, match="not differentiable"):
        gradient_trajectory(adapter, GENES, levels=(0.0,))
    assert virtual_value_perturbation(adapter, GENES, levels=(0.0, 1.0)).shape == (5, 5, 2)


def test_scgpt_bad_checkpoints(tmp_path: Path) -> None:
    folder = _scgpt_folder(tmp_path)
    (folder / "args.json").write_text(json.dumps({"embsize": 8}))
    with pytest.raises(ValueError, match="lacks"):
        ScGPTAdapter.from_checkpoint(folder, model_class=TransformerModel)
    (folder / "vocab.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"vocab\.json"):
        ScGPTAdapter.from_checkpoint(folder, model_class=TransformerModel)

    class Wrong(nn.Module):
        def forward(self, input_ids: Tensor, values: Tensor) -> Tensor:
            return values

    with pytest.raises(ValueError, match="src_key_padding_mask"):
        ScGPTAdapter(Wrong(), {"<pad>": 0, "g0": 1})


def test_scgpt_binning_matches_its_definition() -> None:
    """Zeros stay 0; each cell's non-zero values fall into n_bins - 1 quantile bins."""
    rng = np.random.default_rng(0)
    x = rng.exponential(size=(4, 200)) * (rng.random((4, 200)) < 0.7)
    b = bin_expression(x, n_bins=11)
    assert ((b == 0) == (x == 0)).all()
    assert b[x > 0].min() >= 1
    assert b[x > 0].max() <= 10
    for row, brow in zip(x, b, strict=True):  # monotone within a cell
        nz = row > 0
        order = np.argsort(row[nz])
        assert (np.diff(brow[nz][order]) >= 0).all()
        counts = np.bincount(brow[nz].astype(int), minlength=11)[1:]
        # bins 1..9 share the values evenly; bin 10 holds the cell's maximum only (scGPT's
        # top edge is the maximum itself)
        assert counts[:-1].max() - counts[:-1].min() <= 2
        assert counts[-1] == 1
    with pytest.raises(ValueError, match="non-negative"):
        bin_expression(-x)
    z = torch.linspace(-4, 4, 9)
    assert torch.all(torch.diff(z_to_bin(z, 51)) >= 0)
    assert z_to_bin(torch.tensor(0.0), 51) == 25.0


def _geneformer_folder(tmp_path: Path) -> Path:
    from transformers import BertConfig, BertForMaskedLM

    folder = tmp_path / "geneformer"
    tokens = {"<pad>": 0, "<mask>": 1, **{g: 2 + i for i, g in enumerate(GENES)}}
    config = BertConfig(
        vocab_size=len(tokens),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=32,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(folder)
    with (folder / "token_dictionary.pkl").open("wb") as fh:
        pickle.dump(tokens, fh)
    with (folder / "gene_median_dictionary.pkl").open("wb") as fh:
        pickle.dump({g: 1.0 + i for i, g in enumerate(GENES)}, fh)
    return folder


def test_geneformer_rank_encoding(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    adapter = GeneformerAdapter.from_pretrained(_geneformer_folder(tmp_path))
    counts = np.array([[5.0, 0.0, 1.0, 8.0, 2.0]])
    # normalised: count / total * 10,000 / median(g_i = 1 + i): g0 5/1, g2 1/3, g3 8/4, g4 2/5
    expected = [adapter.vocab[g] for g in ("g0", "g3", "g4", "g2")]
    assert adapter.rank_encode(counts, list(GENES)) == [expected]


def test_geneformer_vvp_runs_and_gt_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    adapter = GeneformerAdapter.from_pretrained(_geneformer_folder(tmp_path))
    vvp = virtual_value_perturbation(adapter, GENES, levels=(-2.0, 2.0))
    assert vvp.shape == (5, 5, 2)
    assert np.abs(vvp).sum() > 0  # moving gene i's rank moves the model's belief about j
    with pytest.raises(TypeError, match="Virtual Value Perturbation"):
        gradient_trajectory(adapter, GENES)
    ids = torch.tensor([[adapter.vocab[g] for g in GENES]])
    out = adapter.predict(
        ids, torch.tensor([[3.0, 2.0, 1.0, 0.0, -1.0]]), torch.zeros(1, 5, dtype=torch.bool)
    )
    assert out.shape == (1, 5)
    assert (out <= 0).all()  # log-probabilities


@pytest.mark.parametrize(
    ("reference", "levels"),
    [(None, (-2.0, -0.5, 0.5, 2.0)), ((-1.0, -1.2, 0.5, 1.0, 0.8), (-2.0, -0.5, 2.0))],
)
def test_geneformer_vvp_moves_gene_i_across_m_positions(
    tmp_path: Path, reference: tuple[float, ...] | None, levels: tuple[float, ...]
) -> None:
    """M levels give M rank encodings per (source, hidden group): gene i moves across the
    reference cell's order (review45 #2: stable argsort on a shared baseline gave two)."""
    pytest.importorskip("transformers")
    adapter = GeneformerAdapter.from_pretrained(_geneformer_folder(tmp_path))
    if reference is not None:
        adapter.set_reference(dict(zip(GENES, reference, strict=True)))
    seen: list[Tensor] = []
    forward = adapter.model.forward

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(kw["input_ids"].clone())
        return forward(*args, **kw)

    adapter.model.forward = spy  # type: ignore[method-assign]
    m = len(levels)
    virtual_value_perturbation(adapter, GENES, levels=levels, mask_groups=1)
    rows = torch.cat(seen)  # [G sources * M levels, G]
    assert rows.shape == (5 * m, 5)
    source_token = torch.tensor([adapter.vocab[g] for g in GENES])
    for i in range(5):
        block = rows[i * m : (i + 1) * m]
        positions = [int((row == source_token[i]).nonzero()) for row in block]
        # higher value -> earlier rank; four levels -> four positions
        assert positions == sorted(positions, reverse=True)
        # with a reference cell whose values interleave the levels, M positions; without
        # one, the column-order quantiles (+-1.28 for five genes) may tie two levels
        assert len(set(positions)) == m if reference is not None else len(set(positions)) >= 3
        # the other genes (all hidden) keep the reference cell's order
        others = [[int(t) for t in row if t != adapter.mask_id] for row in block]
        assert all(o == [int(source_token[i])] for o in others)
    with pytest.raises(ValueError, match="names no gene"):
        adapter.set_reference({"unknown": 1.0})


def test_geneformer_reference_cell_orders_baseline_genes(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    adapter = GeneformerAdapter.from_pretrained(_geneformer_folder(tmp_path))
    adapter.set_reference(dict(zip(GENES, (-1.0, 2.0, 0.5, 1.0, -2.0), strict=True)))
    seen: list[Tensor] = []
    forward = adapter.model.forward
    adapter.model.forward = lambda *a, **kw: seen.append(kw["input_ids"]) or forward(*a, **kw)  # type: ignore[method-assign]
    ids = torch.tensor([[adapter.vocab[g] for g in GENES]])
    # g2 at 1.5 (not the baseline); the others at the baseline take their reference values
    adapter.predict(
        ids, torch.tensor([[0.0, 0.0, 1.5, 0.0, 0.0]]), torch.zeros(1, 5, dtype=torch.bool)
    )
    order = [adapter.vocab[g] for g in ("g1", "g2", "g3", "g0", "g4")]
    assert seen[0][0].tolist() == order


def test_geneformer_bad_folders(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"config\.json"):
        GeneformerAdapter.from_pretrained(tmp_path)
    with pytest.raises(ValueError, match="<mask>"):
        GeneformerAdapter(nn.Identity(), {"<pad>": 0, "g0": 1})
