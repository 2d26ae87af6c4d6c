"""Datasets in [0, 1] with standard train / test splits (:mod:`icml26.nppr.data.loaders`).

::

    from icml26.nppr.data import load_dataset

    data = load_dataset("cifar10", path="~/data")  # trains on the 50k, reports on the 10k
    data.x_train, data.y_train, data.x_test, data.y_test, data.split
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "EMBEDDED": ".loaders",
        "ImageData": ".loaders",
        "dataset_to_arrays": ".loaders",
        "from_arrays": ".loaders",
        "from_splits": ".loaders",
        "load_cifar": ".loaders",
        "load_dataset": ".loaders",
        "load_image_folder": ".loaders",
        "load_npz": ".loaders",
        "subset": ".loaders",
    },
    distribution="icml26-nppr",
)

if TYPE_CHECKING:
    from icml26.nppr.data.loaders import EMBEDDED as EMBEDDED
    from icml26.nppr.data.loaders import ImageData as ImageData
    from icml26.nppr.data.loaders import dataset_to_arrays as dataset_to_arrays
    from icml26.nppr.data.loaders import from_arrays as from_arrays
    from icml26.nppr.data.loaders import from_splits as from_splits
    from icml26.nppr.data.loaders import load_cifar as load_cifar
    from icml26.nppr.data.loaders import load_dataset as load_dataset
    from icml26.nppr.data.loaders import load_image_folder as load_image_folder
    from icml26.nppr.data.loaders import load_npz as load_npz
    from icml26.nppr.data.loaders import subset as subset
