"""GRN inference from a single-cell foundation model (scFM): Virtual Value Perturbation,
Gradient Trajectory and a translator MLP, with the unseen-genes / unseen-dataset benchmark.

>>> from icml26.scfm_grn import ScFM, virtual_value_perturbation, gradient_trajectory
>>> vvp = virtual_value_perturbation(model, genes)       # [G, G, M] response curves
>>> gt = gradient_trajectory(model, genes, mode="jvp")    # [G, G, T] d out_j / d v_i
>>> t = Translator().fit(pair_features(standardise(vvp), pairs), labels)
"""

from icml26.scfm_grn.adapters import CallableScFM, HFScFMAdapter
from icml26.scfm_grn.baselines import (
    genie3_scores,
    grnboost2_scores,
    mutual_information_scores,
    pearson_scores,
    spearman_scores,
)
from icml26.scfm_grn.benchmark import GeneSplit, all_pairs, split_genes
from icml26.scfm_grn.data import ExpressionData, krumsiek11, load_h5ad, pbmc68k_reduced
from icml26.scfm_grn.features import (
    attention_scores,
    embedding_scores,
    gradient_trajectory,
    query_layout,
    virtual_value_perturbation,
    zero_out_scores,
)
from icml26.scfm_grn.metrics import auprc, auprc_ratio, auroc, balanced_auprc, epr, score_all
from icml26.scfm_grn.model import CellModel, ScFM, ScFMConfig, load_scfm, save_scfm
from icml26.scfm_grn.networks import (
    GeneNetwork,
    krumsiek11_network,
    read_edge_list,
    scale_free_universe,
    subnetwork,
)
from icml26.scfm_grn.pretrain import PretrainConfig, masked_loss, pretrain
from icml26.scfm_grn.simulate import SimulationSpec, simulate
from icml26.scfm_grn.translator import Translator, TranslatorConfig, pair_features, standardise

__all__ = [
    "CallableScFM",
    "CellModel",
    "ExpressionData",
    "GeneNetwork",
    "GeneSplit",
    "HFScFMAdapter",
    "PretrainConfig",
    "ScFM",
    "ScFMConfig",
    "SimulationSpec",
    "Translator",
    "TranslatorConfig",
    "all_pairs",
    "attention_scores",
    "auprc",
    "auprc_ratio",
    "auroc",
    "balanced_auprc",
    "embedding_scores",
    "epr",
    "genie3_scores",
    "gradient_trajectory",
    "grnboost2_scores",
    "krumsiek11",
    "krumsiek11_network",
    "load_h5ad",
    "load_scfm",
    "masked_loss",
    "mutual_information_scores",
    "pair_features",
    "pbmc68k_reduced",
    "pearson_scores",
    "pretrain",
    "query_layout",
    "read_edge_list",
    "save_scfm",
    "scale_free_universe",
    "score_all",
    "simulate",
    "spearman_scores",
    "split_genes",
    "standardise",
    "subnetwork",
    "virtual_value_perturbation",
    "zero_out_scores",
]
