"""GRN inference from a single-cell foundation model (scFM): Virtual Value Perturbation,
Gradient Trajectory and a translator MLP, with the unseen-genes / unseen-dataset benchmark.

::

    from icml26.scfm_grn import Translator, gradient_trajectory, virtual_value_perturbation

    vvp = virtual_value_perturbation(model, genes)            # [G, G, M] response curves
    gt = gradient_trajectory(model, genes, mode="jvp")         # [G, G, T] d out_j / d v_i
    t = Translator().fit(pair_features(standardise(vvp), pairs), labels)

Real scFMs: :mod:`icml26.scfm_grn.adapters` (scGPT, Geneformer); BEELINE files:
:mod:`icml26.scfm_grn.beeline`; the baselines: :mod:`icml26.scfm_grn.baselines`. Importing
this package imports no torch until a name is used.
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BenchConfig": ".config",
        "RunConfig": ".config",
        "ExpressionData": ".data",
        "from_anndata": ".data",
        "load_h5ad": ".data",
        "ScFM": ".model",
        "ScFMConfig": ".model",
        "PretrainConfig": ".pretraining",
        "pretrain": ".pretraining",
        "gradient_trajectory": ".features",
        "virtual_value_perturbation": ".features",
        "Translator": ".translator",
        "pair_features": ".translator",
        "standardise": ".translator",
        "candidate_pairs": ".candidates",
        "score_all": ".metrics",
    },
    submodules=["adapters", "baselines", "beeline"],
)

if TYPE_CHECKING:
    from icml26.scfm_grn import adapters as adapters
    from icml26.scfm_grn import baselines as baselines
    from icml26.scfm_grn import beeline as beeline
    from icml26.scfm_grn.candidates import candidate_pairs as candidate_pairs
    from icml26.scfm_grn.config import BenchConfig as BenchConfig
    from icml26.scfm_grn.config import RunConfig as RunConfig
    from icml26.scfm_grn.data import ExpressionData as ExpressionData
    from icml26.scfm_grn.data import from_anndata as from_anndata
    from icml26.scfm_grn.data import load_h5ad as load_h5ad
    from icml26.scfm_grn.features import gradient_trajectory as gradient_trajectory
    from icml26.scfm_grn.features import virtual_value_perturbation as virtual_value_perturbation
    from icml26.scfm_grn.metrics import score_all as score_all
    from icml26.scfm_grn.model import ScFM as ScFM
    from icml26.scfm_grn.model import ScFMConfig as ScFMConfig
    from icml26.scfm_grn.pretraining import PretrainConfig as PretrainConfig
    from icml26.scfm_grn.pretraining import pretrain as pretrain
    from icml26.scfm_grn.translator import Translator as Translator
    from icml26.scfm_grn.translator import pair_features as pair_features
    from icml26.scfm_grn.translator import standardise as standardise
