"""The steps of a run on one log, each a function of the config and the step before:

:func:`load_data` (the synthetic world or a user's files) -> :func:`fit_models` (the
measuring classifier on the scrubbed training set) -> :func:`classify_log` (scrub and classify
every conversation, local or Ray) -> :func:`calibrate` (confusion matrices and macro-F1 on the
calibration set) -> :func:`analyse_log` (the released figures) -> :func:`release_clusters`
(Clio-style clusters) -> :func:`audit_outputs` (the leak audit and the release manifest).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.disempowerment.analysis import Calibration, analyse, calibration_from_labels
from icml26.disempowerment.classifiers import (
    MiniLMClassifier,
    StagedClassifier,
    TfidfClassifier,
    fit_classifier,
)
from icml26.disempowerment.clusters import cluster_patterns
from icml26.disempowerment.config import RunConfig
from icml26.disempowerment.conversations import Conversation
from icml26.disempowerment.datasets import RunData, synthetic_data, user_data
from icml26.disempowerment.embeddings import MiniLMEmbedder
from icml26.disempowerment.engine import process_log
from icml26.disempowerment.judge import LLMJudge
from icml26.disempowerment.labels import Labels, macro_f1
from icml26.disempowerment.measurement import IntervalSettings, PrivacySettings, log_inputs
from icml26.disempowerment.privacy import (
    GUARANTEES,
    KAnonymity,
    pii_in_text,
    pii_leak_audit,
    release_manifest,
)
from icml26.disempowerment.scrub import PLACEHOLDERS, Scrubber
from icml26.disempowerment.synthetic import GeneratorSpec
from icml26.disempowerment.taxonomy import DOMAINS, SEVERITIES, VARIABLES
from icml26.shared import RunDir, log, rng_for, seed_for

__all__ = [
    "Models",
    "NullTrainer",
    "analyse_log",
    "audit_outputs",
    "calibrate",
    "classify_log",
    "dp_analyses",
    "fit_models",
    "input_report",
    "labels_of",
    "load_data",
    "make_judge",
    "privacy_of",
    "privacy_totals",
    "release_clusters",
]


@dataclass
class Models:
    """The fitted measuring classifier and the embedder it (or the clusters) use."""

    classifier: TfidfClassifier | StagedClassifier
    embedder: MiniLMEmbedder


class NullTrainer:
    """Fits the configured classifier on a null world's training set (picklable, so the null
    study can run in worker processes). The null worlds carry no PII: nothing to scrub."""

    def __init__(self, cfg: RunConfig) -> None:
        self.cfg = cfg
        self._embedder: MiniLMEmbedder | None = None

    def __call__(self, train_set: Any) -> TfidfClassifier | StagedClassifier:
        cfg = self.cfg
        if self._embedder is None:
            self._embedder = MiniLMEmbedder(cfg.embedding_model, device=cfg.device)
        return fit_classifier(
            cfg.classifier,
            [c.text() for c in train_set.conversations],
            train_set.labels,
            seed=seed_for(cfg.seed, "classifier"),
            embedder=self._embedder,
            flag_threshold=cfg.flag_threshold,
        )


def dp_analyses(cfg: RunConfig) -> int:
    """How many DP analyses of the log a run releases: the main one, plus the judge study's
    two (the judge's and the baseline classifier's measures of the same log subset)."""
    return 1 + 2 * (cfg.judge != "none")


def privacy_of(cfg: RunConfig) -> tuple[PrivacySettings, IntervalSettings]:
    """The release and interval settings of one DP analysis of a config's log.

    ``dp_epsilon`` is the run's total over the log: each of the :func:`dp_analyses` analyses
    gets an equal share (they compose sequentially). The month window is the config's, or
    for the synthetic log the generator's.
    """
    first_month, months = cfg.first_month or None, cfg.months or None
    if first_month is None and not cfg.log_path and cfg.dp_epsilon is not None:
        spec = GeneratorSpec()
        first_month, months = spec.start, spec.months
    epsilon = None if cfg.dp_epsilon is None else cfg.dp_epsilon / dp_analyses(cfg)
    return (
        PrivacySettings(cfg.k_anonymity, epsilon, cfg.dp_cap, first_month, months),
        IntervalSettings(cfg.bootstrap_draws, cfg.interval_level),
    )


def privacy_totals(cfg: RunConfig, metrics: dict[str, float]) -> dict[str, float]:
    """The run's DP figures over every analysis of the log.

    Args:
        cfg: the run's config.
        metrics: the run's metrics so far (the main analysis's and the judge study's).

    Returns:
        ``privacy.dp_epsilon`` (the config's total), ``privacy.dp_epsilon_spent`` (the main
        analysis's spend plus the judge study's two), ``privacy.dp_analyses``.
    """
    spent = sum(
        metrics.get(f"{prefix}privacy.dp_epsilon_spent", 0.0)
        for prefix in ("", "judge.", "judge_tfidf.")
    )
    return {
        "privacy.dp_epsilon": float(cfg.dp_epsilon or 0.0),
        "privacy.dp_epsilon_spent": float(spent),
        "privacy.dp_analyses": float(dp_analyses(cfg)),
    }


def load_data(cfg: RunConfig) -> RunData:
    """The synthetic validation data (planted world), or the user's log and labelled set."""
    if cfg.log_path:
        data = user_data(
            cfg.log_path, cfg.labelled_path, on_malformed=cfg.on_malformed, seed=cfg.seed
        )
        if data.read_report and (data.read_report.malformed or data.read_report.duplicates):
            log(data.read_report.summary())
        return data
    return synthetic_data(
        cfg.n_conversations,
        cfg.n_train,
        cfg.n_calibration,
        seed=cfg.seed,
        positive_share=cfg.positive_share,
        calibration_positive_share=cfg.calibration_positive_share,
    )


def input_report(data: RunData) -> dict[str, float]:
    """What reading a user's log found: ``input.malformed_lines``, ``input.duplicate_lines``."""
    report = data.read_report
    if report is None:
        return {}
    return {
        "input.malformed_lines": float(len(report.malformed)),
        "input.duplicate_lines": float(len(report.duplicates)),
    }


def _scrubbed(convs: list[Conversation]) -> list[str]:
    scrubber = Scrubber()
    return [scrubber(c.text()) for c in convs]


def fit_models(cfg: RunConfig, data: RunData) -> Models:
    """The measuring classifier fitted on the scrubbed training set."""
    embedder = MiniLMEmbedder(cfg.embedding_model, device=cfg.device)
    classifier = fit_classifier(
        cfg.classifier,
        _scrubbed(data.train.conversations),
        data.train.labels,
        seed=seed_for(cfg.seed, "classifier"),
        embedder=embedder,
        flag_threshold=cfg.flag_threshold,
    )
    return Models(classifier, embedder)


def classify_log(cfg: RunConfig, data: RunData, models: Models) -> dict[str, np.ndarray]:
    """Scrub and classify every conversation of the log (``engine``): label arrays
    ``sev``, ``amp``, ``dom``, ``flagged``, the placeholder counts and the throughput."""
    out = process_log(
        data.log,
        models.classifier,
        engine=cfg.engine,
        batch_size=cfg.batch_size,
        workers=cfg.workers,
        ray_address=cfg.ray_address,
    )
    counts = np.array([out.scrub_counts[p] for p in PLACEHOLDERS], dtype=float)
    return {
        "sev": out.labels.severity,
        "amp": out.labels.amplifiers,
        "dom": out.labels.domain,
        "flagged": out.flagged,
        "scrub_counts": counts,
        "throughput": np.array([out.throughput]),
    }


def labels_of(arrays: dict[str, np.ndarray]) -> Labels:
    """The :class:`Labels` of :func:`classify_log`'s arrays."""
    return Labels(arrays["sev"], arrays["amp"], arrays["dom"])


def _mean_f1(truth: Labels, pred: Labels) -> float:
    return float(
        np.mean([macro_f1(truth.severity[:, k], pred.severity[:, k], 4) for k in range(3)])
    )


def calibrate(cfg: RunConfig, data: RunData, models: Models) -> dict[str, Any]:
    """The classifier's confusion counts on the calibration set (importance-weighted when the
    set is enriched) and its macro-F1 (severity, mean over dimensions); with the staged
    classifier also the screen's and MiniLM-alone's."""
    texts = _scrubbed(data.calibration.conversations)
    truth = data.calibration.labels
    clf = models.classifier
    pred = clf.predict(texts)
    m = {
        f"classifier.{cfg.classifier}.macro_f1": _mean_f1(truth, pred),
        f"classifier.{cfg.classifier}.domain_accuracy": float(np.mean(pred.domain == truth.domain)),
        f"classifier.{cfg.classifier}.amplifier_accuracy": float(
            np.mean(pred.amplifiers == truth.amplifiers)
        ),
    }
    if isinstance(clf, StagedClassifier):
        m["classifier.tfidf.macro_f1"] = _mean_f1(truth, clf.screen.predict(texts))
        m["classifier.minilm.macro_f1"] = _minilm_alone(cfg, data, clf, texts)
    cal = calibration_from_labels(truth, pred, data.calibration.weights)
    return {"calibration": cal.to_json(), "metrics": m}


def _minilm_alone(
    cfg: RunConfig, data: RunData, staged: StagedClassifier, texts: list[str]
) -> float:
    """MiniLM + logistic regression without the screen, trained and evaluated on small
    random subsets (its cost)."""
    rng = rng_for(cfg.seed, "minilm_subsets")
    n = min(cfg.minilm_eval_n, len(texts) // 2)
    train_texts = _scrubbed(data.train.conversations)
    tr = rng.choice(len(train_texts), size=min(n, len(train_texts)), replace=False)
    ev = rng.choice(len(texts), size=n, replace=False)
    minilm = MiniLMClassifier(staged.embedder, seed=cfg.seed, screen=staged.screen)
    minilm.fit([train_texts[i] for i in tr], data.train.labels.subset(tr))
    pred = minilm.predict([texts[i] for i in ev])
    return _mean_f1(data.calibration.labels.subset(ev), pred)


def analyse_log(
    cfg: RunConfig, data: RunData, labels: Labels, calibration: dict[str, Any]
) -> dict[str, Any]:
    """The released figures of the log, the planted values beside them (synthetic), and the
    monthly series for the trend figure."""
    privacy, intervals = privacy_of(cfg)
    res = analyse(
        log_inputs(data.log, labels, privacy.first_month),
        Calibration.from_json(calibration["calibration"]),
        k=privacy.k,
        epsilon=privacy.epsilon,
        cap=privacy.cap,
        draws=intervals.draws,
        level=intervals.level,
        rng=rng_for(seed_for(cfg.seed, "measure"), "bootstrap"),
        n_months=privacy.months,
    )
    metrics = dict(res.metrics)
    if data.planted:
        metrics.update(_compare_to_planted(metrics, data.planted))
    monthly = {k: np.asarray(v).tolist() for k, v in res.monthly.items()}
    return {"metrics": metrics, "monthly": monthly}


def _compare_to_planted(metrics: dict[str, float], planted: dict[str, float]) -> dict[str, float]:
    """``planted.*``, ``abs_error.*`` and ``covered.*`` for every planted figure."""
    out: dict[str, float] = {}
    keys = [f"rate.{v}.{s}" for v in VARIABLES for s in SEVERITIES]
    keys += [f"domain_rate.{d}.severe_or_moderate" for d in DOMAINS]
    keys += [f"trend_slope.{v}" for v in VARIABLES]
    keys += ["approval_association", "approval_regression.level_coef"]
    for key in keys:
        tail = key.split(".", 1)[1] if key.startswith("rate.") else key
        out[f"planted.{tail}"] = planted[key]
        if key in metrics:
            out[f"abs_error.{tail}"] = abs(metrics[key] - planted[key])
            lo, hi = metrics.get(f"{key}.lo"), metrics.get(f"{key}.hi")
            if lo is not None and hi is not None:
                out[f"covered.{tail}"] = float(lo <= planted[key] <= hi)
    return out


def release_clusters(
    cfg: RunConfig, data: RunData, labels: Labels, models: Models, namer: Any = None
) -> dict[str, Any]:
    """Clio-style clusters of the conversations rated moderate or worse (MiniLM embeddings of
    their scrubbed assistant turns), released only with >= k users: ``{"release": ...,
    "metrics": ...}``."""
    rows = np.nonzero(labels.any_severity >= 2)[0]
    texts = _scrubbed([data.log[i] for i in rows])
    users = np.array([data.log[i].user_id for i in rows])
    kanon = KAnonymity(cfg.k_anonymity)
    emb = models.embedder.encode([_assistant(t) for t in texts])
    clusters = cluster_patterns(
        emb,
        texts,
        users,
        labels.subset(rows),
        n_clusters=cfg.n_clusters,
        kanon=kanon,
        seed=seed_for(cfg.seed, "clusters"),
        namer=namer,
    )
    release = {
        "k": cfg.k_anonymity,
        "clusters": [c.to_json() for c in clusters],
        "suppressed": len(kanon.suppressed),
    }
    metrics = {
        "clusters.released": float(len(clusters)),
        "clusters.suppressed": float(len(kanon.suppressed)),
        "clusters.min_users": float(min((c.n_users for c in clusters), default=0)),
    }
    return {"release": release, "metrics": metrics}


def _assistant(text: str) -> str:
    parts = [ln[len("assistant: ") :] for ln in text.split("\n") if ln.startswith("assistant: ")]
    return " ".join(parts) if parts else text


def make_judge(spec: str, decoding: str = "auto", calibration: str = "none") -> LLMJudge:
    """The rubric judge on an endpoint ``url|model`` or a local model spec."""
    from icml26.shared.llm import ChatClient, LocalChatModel

    if spec.startswith(("http://", "https://")):
        url, _, model = spec.partition("|")
        return LLMJudge(ChatClient(url, model), decoding=decoding, calibration=calibration)
    return LLMJudge(LocalChatModel.from_spec(spec), decoding=decoding, calibration=calibration)


def audit_outputs(
    run_dir: RunDir, pii: list[str], metrics: dict[str, float], *, dp: bool
) -> dict[str, float]:
    """Write the release manifest (``release.json``: the guarantee of every metric), then
    search every output file and the metrics for the input's PII strings."""
    manifest = release_manifest(
        [*metrics, "privacy.pii_leaks", "privacy.pii_strings_checked"], dp=dp
    )
    run_dir.write_json(
        "release.json",
        {"guarantees": GUARANTEES, "metrics": manifest, "files": _FILE_GUARANTEES},
    )
    hits, files = pii_leak_audit(run_dir.path, pii)
    hits += pii_in_text(json.dumps(metrics), pii)
    if files:
        log(f"PII found in {files}")
    return {"privacy.pii_leaks": float(hits), "privacy.pii_strings_checked": float(len(set(pii)))}


_FILE_GUARANTEES = {
    "results.json": "the metrics, each under the guarantee listed here",
    "clusters.json": "k_anonymous_not_dp",
    "plots/*.png": "drawn from the metrics (same guarantees)",
    "stages/classify.npz": "per-conversation predicted labels: NOT released (working state; "
    "delete the stages folder before sharing a run folder)",
    "stages/*.json": "working state: the released metrics, the calibration set's confusion "
    "counts (labelled_set), the clusters",
    "config.json, env.json, metrics.jsonl": "settings and run-time measurements",
}
