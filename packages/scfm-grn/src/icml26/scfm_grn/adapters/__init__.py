"""Real single-cell foundation models as :class:`~icml26.scfm_grn.model.CellModel` s.

* :class:`ScGPTAdapter`: scGPT's ``TransformerModel`` (``forward(src, values,
  src_key_padding_mask)``, ``best_model.pt`` + ``args.json`` + ``vocab.json``, binned values);
* :class:`GeneformerAdapter`: Geneformer's ``BertForMaskedLM`` (rank encoding,
  ``token_dictionary.pkl`` + ``gene_median_dictionary.pkl``; VVP only);
* :class:`CallableScFM`: any ``fn(gene_ids, values, mask) -> [B, G]``.
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CallableScFM": ".callable",
        "GeneformerAdapter": ".geneformer",
        "ScGPTAdapter": ".scgpt",
        "bin_expression": ".scgpt",
        "flash_to_torch_names": ".scgpt",
        "z_to_bin": ".scgpt",
    },
    distribution="icml26-scfm-grn",
)

if TYPE_CHECKING:
    from icml26.scfm_grn.adapters.callable import CallableScFM as CallableScFM
    from icml26.scfm_grn.adapters.geneformer import GeneformerAdapter as GeneformerAdapter
    from icml26.scfm_grn.adapters.scgpt import ScGPTAdapter as ScGPTAdapter
    from icml26.scfm_grn.adapters.scgpt import bin_expression as bin_expression
    from icml26.scfm_grn.adapters.scgpt import flash_to_torch_names as flash_to_torch_names
    from icml26.scfm_grn.adapters.scgpt import z_to_bin as z_to_bin
