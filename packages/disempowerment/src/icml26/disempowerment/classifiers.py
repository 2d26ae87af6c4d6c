"""Trained lightweight classifiers for the taxonomy, behind one interface.

* :class:`TfidfClassifier`: hashed word uni/bi-gram TF-IDF + logistic regression heads (three
  severity heads, four amplifier heads, one domain head). Cheap enough to run on every
  conversation: the *screen*.
* :class:`MiniLMClassifier`: MiniLM sentence embeddings + logistic-regression severity heads.
* :class:`StagedClassifier`: the screen on everything; conversations whose screened
  probability of ``moderate`` or worse on any dimension exceeds ``flag_threshold`` go to a
  second stage (MiniLM embedding concatenated with the screen's log-probabilities, one
  logistic regression per dimension). Its confusion matrix is estimated as a whole, so the
  errors of both stages are carried into the calibrated rates.

Every classifier maps scrubbed texts to :class:`~icml26.disempowerment.labels.Labels`;
:class:`~icml26.disempowerment.judge.LLMJudge` has the same ``predict``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegression, SGDClassifier

from icml26.disempowerment.embeddings import MiniLMEmbedder
from icml26.disempowerment.labels import Labels
from icml26.disempowerment.taxonomy import AMPLIFIERS

__all__ = [
    "Classifier",
    "MiniLMClassifier",
    "StageOutput",
    "StagedClassifier",
    "TfidfClassifier",
    "assistant_view",
    "fit_classifier",
]


def assistant_view(text: str) -> str:
    """The assistant turns of a transcript (``"role: content"`` lines): where the
    disempowerment potential of a reply is, and a third of the tokens to embed."""
    parts = [ln[len("assistant: ") :] for ln in text.split("\n") if ln.startswith("assistant: ")]
    return " ".join(parts) if parts else text


@runtime_checkable
class Classifier(Protocol):
    """Anything that labels scrubbed conversation texts."""

    name: str

    def predict(self, texts: Sequence[str]) -> Labels: ...


def _lr(c: float, seed: int) -> LogisticRegression:
    return LogisticRegression(C=c, max_iter=2000, random_state=seed % 2**32)


Head = LogisticRegression | SGDClassifier | int


def _fit_head(x: object, y: np.ndarray, c: float, seed: int, *, sgd: bool = False) -> Head:
    """A fitted head, or the single class when ``y`` has only one.

    ``sgd``: logistic loss by stochastic gradient descent (``alpha = 1 / (c * n)``, the same
    objective as ``LogisticRegression(C=c)``): much faster on 10^5-dimensional hashed
    features.
    """
    classes = np.unique(y)
    if len(classes) == 1:
        return int(classes[0])
    if sgd:
        n = x.shape[0]  # type: ignore[attr-defined]
        return SGDClassifier(
            loss="log_loss", alpha=1.0 / (c * n), max_iter=50, tol=1e-4, random_state=seed % 2**32
        ).fit(x, y)
    return _lr(c, seed).fit(x, y)


def _proba(head: Head, x: object, n: int, n_classes: int) -> np.ndarray:
    out = np.zeros((n, n_classes))
    if isinstance(head, int):
        out[:, head] = 1.0
        return out
    out[:, head.classes_.astype(int)] = head.predict_proba(x)
    return out


@dataclass
class TfidfClassifier:
    """Hashed TF-IDF + logistic regression (see the module docstring).

    Args:
        n_features: hashing dimension (no vocabulary is stored: nothing of the training
            text can be read back from the model).
        c: inverse L2 regularisation of the heads.
        seed: the heads' seed.
        name: the method's name in metrics and tables.
    """

    n_features: int = 2**17
    c: float = 10.0
    seed: int = 0
    name: str = "tfidf"
    # fitted state
    _vec: HashingVectorizer = field(init=False, repr=False)
    _tfidf: TfidfTransformer = field(init=False, repr=False)
    _sev: list[Head] = field(init=False, repr=False, default_factory=list)
    _amp: list[Head] = field(init=False, repr=False, default_factory=list)
    _dom: Head = field(init=False, repr=False, default=0)

    def __post_init__(self) -> None:
        self._vec = HashingVectorizer(
            n_features=self.n_features,
            ngram_range=(1, 2),
            alternate_sign=False,
            norm=None,
            lowercase=True,
        )
        self._tfidf = TfidfTransformer(sublinear_tf=True)

    def features(self, texts: Sequence[str]) -> object:
        """The fitted TF-IDF features of ``texts``.

        Args:
            texts: conversation texts.

        Returns:
            A sparse ``(len(texts), vocabulary)`` matrix from the fitted vocabulary and
            IDF weights.
        """
        return self._tfidf.transform(self._vec.transform(texts))

    def fit(self, texts: Sequence[str], labels: Labels) -> TfidfClassifier:
        """Fit the heads (three severities, four amplifiers, the domain).

        Args:
            texts: scrubbed training transcripts.
            labels: their labels.

        Returns:
            ``self``.
        """
        x = self._tfidf.fit_transform(self._vec.transform(texts))
        fit = lambda y: _fit_head(x, y, self.c, self.seed, sgd=True)  # noqa: E731
        self._sev = [fit(labels.severity[:, k]) for k in range(3)]
        self._amp = [fit(labels.amplifiers[:, a].astype(int)) for a in range(len(AMPLIFIERS))]
        self._dom = fit(labels.domain)
        return self

    def severity_proba(self, x: object, n: int) -> np.ndarray:
        """``(n, 3, 4)`` severity probabilities from features ``x``."""
        return np.stack([_proba(h, x, n, 4) for h in self._sev], axis=1)

    def predict_features(self, x: object, n: int) -> tuple[Labels, np.ndarray]:
        """Labels and the ``(n, 3, 4)`` severity probabilities."""
        sev_p = self.severity_proba(x, n)
        amps = np.stack([_proba(h, x, n, 2)[:, 1] > 0.5 for h in self._amp], axis=1)
        dom = _proba(self._dom, x, n, 6).argmax(axis=1)
        return Labels(sev_p.argmax(axis=2), amps, dom), sev_p

    def predict(self, texts: Sequence[str]) -> Labels:
        """Labels of scrubbed transcripts.

        Args:
            texts: scrubbed transcripts.

        Returns:
            Their :class:`Labels` (the domain is one of the six: the screen never says
            ``other``).
        """
        return self.predict_features(self.features(texts), len(texts))[0]


@dataclass
class MiniLMClassifier:
    """MiniLM embeddings + logistic-regression severity heads (domain and amplifiers are
    taken from a :class:`TfidfClassifier` when one is given, else predicted ``0``/absent)."""

    embedder: MiniLMEmbedder = field(default_factory=MiniLMEmbedder)
    c: float = 10.0
    seed: int = 0
    name: str = "minilm"
    screen: TfidfClassifier | None = None
    _sev: list[Head] = field(init=False, repr=False, default_factory=list)

    def fit(
        self, texts: Sequence[str], labels: Labels, embeddings: np.ndarray | None = None
    ) -> MiniLMClassifier:
        e = self.embed(texts) if embeddings is None else embeddings
        self._sev = [_fit_head(e, labels.severity[:, k], self.c, self.seed) for k in range(3)]
        return self

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.encode([assistant_view(t) for t in texts])

    def predict_embeddings(self, e: np.ndarray) -> np.ndarray:
        return np.stack([_proba(h, e, len(e), 4) for h in self._sev], axis=1).argmax(axis=2)

    def predict(self, texts: Sequence[str]) -> Labels:
        sev = self.predict_embeddings(self.embed(texts))
        if self.screen is not None:
            base = self.screen.predict(texts)
            return Labels(sev, base.amplifiers, base.domain)
        return Labels(sev, np.zeros((len(texts), 4), bool), np.zeros(len(texts), np.int8))


@dataclass
class StageOutput:
    """What the staged classifier returns for a batch.

    Attributes:
        labels: final labels.
        flagged: bool mask of the conversations that went to stage 2.
        embeddings: ``(flagged.sum(), 384)`` MiniLM embeddings of the flagged ones (reused
            by the clustering, so no second embedding pass is needed).
    """

    labels: Labels
    flagged: np.ndarray
    embeddings: np.ndarray


@dataclass
class StagedClassifier:
    """Screen everything, refine the flagged (see the module docstring).

    Args:
        screen: a fitted :class:`TfidfClassifier`.
        embedder: the MiniLM embedder of the second stage.
        flag_threshold: the screen's probability of ``moderate`` or worse (any dimension)
            above which a conversation goes to the second stage.
        c: inverse L2 regularisation of the second stage's heads.
        seed: the heads' seed.
        name: the method's name in metrics and tables.
    """

    screen: TfidfClassifier
    embedder: MiniLMEmbedder
    flag_threshold: float = 0.05
    c: float = 1.0
    seed: int = 0
    name: str = "staged"
    _stage2: list[Head] = field(init=False, repr=False, default_factory=list)

    def _flag(self, sev_p: np.ndarray) -> np.ndarray:
        return (sev_p[:, :, 2:].sum(axis=2) > self.flag_threshold).any(axis=1)

    @staticmethod
    def _stage2_features(e: np.ndarray, sev_p: np.ndarray) -> np.ndarray:
        return np.concatenate([e, np.log(np.clip(sev_p, 1e-6, 1)).reshape(len(e), -1)], axis=1)

    def fit(self, texts: Sequence[str], labels: Labels) -> StagedClassifier:
        """Fit stage 2 on the training conversations the (already fitted) screen flags.

        Args:
            texts: scrubbed training transcripts.
            labels: their labels.

        Returns:
            ``self``.
        """
        x = self.screen.features(texts)
        _, sev_p = self.screen.predict_features(x, len(texts))
        flagged = self._flag(sev_p)
        rows = np.nonzero(flagged)[0]
        e = self.embedder.encode([assistant_view(texts[i]) for i in rows])
        z = self._stage2_features(e, sev_p[rows])
        self._stage2 = [_fit_head(z, labels.severity[rows, k], self.c, self.seed) for k in range(3)]
        return self

    def run(self, texts: Sequence[str]) -> StageOutput:
        """Labels, the flagged mask and the flagged rows' embeddings of scrubbed transcripts."""
        n = len(texts)
        x = self.screen.features(texts)
        base, sev_p = self.screen.predict_features(x, n)
        flagged = self._flag(sev_p)
        rows = np.nonzero(flagged)[0]
        sev = base.severity.copy()
        e = self.embedder.encode([assistant_view(texts[i]) for i in rows])
        if len(rows):
            z = self._stage2_features(e, sev_p[rows])
            sev[rows] = np.stack([_proba(h, z, len(rows), 4) for h in self._stage2], axis=1).argmax(
                axis=2
            )
        return StageOutput(Labels(sev, base.amplifiers, base.domain), flagged, e)

    def predict(self, texts: Sequence[str]) -> Labels:
        """Labels of scrubbed transcripts (see :meth:`run`)."""
        return self.run(texts).labels


def fit_classifier(
    kind: str,
    texts: Sequence[str],
    labels: Labels,
    *,
    seed: int = 0,
    embedder: MiniLMEmbedder | None = None,
    flag_threshold: float = 0.1,
) -> TfidfClassifier | StagedClassifier:
    """A fitted measuring classifier.

    Args:
        kind: ``"tfidf"`` (TF-IDF + logistic regression) or ``"staged"`` (that screen, then
            MiniLM + logistic regression on the conversations it flags).
        texts: scrubbed training transcripts.
        labels: their labels.
        seed: the heads' seed.
        embedder: the MiniLM embedder (``staged``; default: the bundled model on the CPU).
        flag_threshold: the screen's probability of ``moderate`` or worse that flags.

    Returns:
        The fitted classifier.

    Raises:
        ValueError: an unknown kind.
    """
    if kind not in ("tfidf", "staged"):
        raise ValueError(f"unknown classifier {kind!r}; expected 'tfidf' or 'staged'")
    screen = TfidfClassifier(seed=seed).fit(texts, labels)
    if kind == "tfidf":
        return screen
    staged = StagedClassifier(
        screen, embedder or MiniLMEmbedder(), flag_threshold=flag_threshold, seed=seed
    )
    return staged.fit(texts, labels)
