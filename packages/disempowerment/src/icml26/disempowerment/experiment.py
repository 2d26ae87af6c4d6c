"""The main job (``icml26 run disempowerment``) and the benchmark (``icml26 bench
disempowerment``), as a handful of named stages:

1. :func:`load_data`: the log and the labelled sets (synthetic with planted truth, or a
   user's files);
2. :func:`train_classifiers`: the hashed TF-IDF screen and the staged classifier;
3. :func:`classify_log`: scrub -> screen -> MiniLM stage over the log (local or Ray);
4. :func:`calibrate`: confusion matrices and macro-F1 of every back end on the labelled set;
5. :func:`analyse` (``analysis.py``): released, calibrated rates with intervals;
6. :func:`release_clusters`, :func:`measure_coverage`, :func:`audit_outputs`.
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.disempowerment.analysis import (
    AnalysisInputs,
    AnalysisResult,
    Calibration,
    analyse,
    calibration_from_labels,
)
from icml26.disempowerment.classifiers import (
    MiniLMClassifier,
    StagedClassifier,
    TfidfClassifier,
    assistant_view,
)
from icml26.disempowerment.clusters import ClusterSummary, cluster_patterns
from icml26.disempowerment.config import BenchConfig, DisempowermentConfig
from icml26.disempowerment.conversations import Conversation
from icml26.disempowerment.datasets import RunData, synthetic_data, user_data
from icml26.disempowerment.embeddings import MiniLMEmbedder
from icml26.disempowerment.engine import ProcessedLog, process_log
from icml26.disempowerment.judge import LLMJudge
from icml26.disempowerment.labels import Labels, macro_f1
from icml26.disempowerment.privacy import KAnonymity, pii_leak_audit
from icml26.disempowerment.scrub import Scrubber
from icml26.disempowerment.synthetic import generate_labelled, generate_log
from icml26.disempowerment.taxonomy import DOMAINS, SEVERITIES, VARIABLES
from icml26.shared import RunDir, log, seed_everything

__all__ = [
    "Models",
    "audit_outputs",
    "bench",
    "calibrate",
    "classify_log",
    "load_data",
    "make_judge",
    "measure_coverage",
    "release_clusters",
    "run",
    "train_classifiers",
]


@dataclass
class Models:
    screen: TfidfClassifier
    staged: StagedClassifier


def _set_threads() -> None:
    import torch

    torch.set_num_threads(2)


def load_data(cfg: DisempowermentConfig) -> RunData:
    """Stage 1: the synthetic validation data, or the user's log and labelled set."""
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


def _scrubbed(convs: list[Conversation]) -> list[str]:
    scrubber = Scrubber()
    return [scrubber(c.text()) for c in convs]


def train_classifiers(cfg: DisempowermentConfig, data: RunData) -> Models:
    """Stage 2: fit the screen on the (scrubbed) training set, then stage 2 on what it flags."""
    texts = _scrubbed(data.train.conversations)
    screen = TfidfClassifier(seed=cfg.seed).fit(texts, data.train.labels)
    embedder = MiniLMEmbedder(cfg.embedding_model, device=cfg.device)
    staged = StagedClassifier(screen, embedder, flag_threshold=cfg.flag_threshold, seed=cfg.seed)
    staged.fit(texts, data.train.labels)
    return Models(screen, staged)


def classify_log(
    cfg: DisempowermentConfig, log_: list[Conversation], models: Models, *, keep_scrubbed: bool
) -> ProcessedLog:
    """Stage 3: scrub and classify every conversation with the configured engine."""
    return process_log(
        log_,
        models.staged,
        engine=cfg.engine,
        batch_size=cfg.batch_size,
        workers=cfg.workers,
        ray_address=cfg.ray_address,
        keep_scrubbed=keep_scrubbed,
    )


def _mean_f1(truth: Labels, pred: Labels) -> float:
    return float(
        np.mean([macro_f1(truth.severity[:, k], pred.severity[:, k], 4) for k in range(3)])
    )


def calibrate(
    cfg: DisempowermentConfig, data: RunData, models: Models
) -> tuple[Calibration, dict[str, float]]:
    """Stage 4: the staged classifier's confusion matrices on the calibration set, and the
    macro-F1 (severity, mean over dimensions) of every back end."""
    texts = _scrubbed(data.calibration.conversations)
    truth = data.calibration.labels
    staged = models.staged.run(texts).labels
    screen = models.screen.predict(texts)
    m = {
        "classifier.staged.macro_f1": _mean_f1(truth, staged),
        "classifier.tfidf.macro_f1": _mean_f1(truth, screen),
        "classifier.tfidf.domain_accuracy": float(np.mean(screen.domain == truth.domain)),
        "classifier.tfidf.amplifier_accuracy": float(
            np.mean(screen.amplifiers == truth.amplifiers)
        ),
    }
    # MiniLM alone (no screen): trained and evaluated on small random subsets (its cost)
    rng = np.random.default_rng(cfg.seed + 5)
    n = min(cfg.minilm_eval_n, len(texts) // 2)
    tr_texts = _scrubbed(data.train.conversations)
    tr_rows = rng.choice(len(tr_texts), size=min(n, len(tr_texts)), replace=False)
    ev_rows = rng.choice(len(texts), size=n, replace=False)
    minilm = MiniLMClassifier(models.staged.embedder, seed=cfg.seed, screen=models.screen)
    minilm.fit([tr_texts[i] for i in tr_rows], data.train.labels.subset(tr_rows))
    pred = minilm.predict([texts[i] for i in ev_rows])
    m["classifier.minilm.macro_f1"] = _mean_f1(truth.subset(ev_rows), pred)
    return calibration_from_labels(truth, staged, data.calibration.weights), m


def _months(convs: list[Conversation]) -> np.ndarray:
    idx = np.array([c.timestamp.year * 12 + c.timestamp.month - 1 for c in convs])
    return idx - idx.min()


def _feedback(convs: list[Conversation]) -> np.ndarray:
    return np.array([-1 if c.feedback is None else int(c.feedback) for c in convs])


def analyse_log(
    cfg: DisempowermentConfig,
    convs: list[Conversation],
    processed: ProcessedLog,
    calibration: Calibration,
    rng: np.random.Generator,
    *,
    draws: int | None = None,
) -> AnalysisResult:
    """Stage 5: the released figures of one log."""
    inputs = AnalysisInputs(
        pred=processed.labels,
        user_ids=np.array([c.user_id for c in convs]),
        conv_ids=[c.id for c in convs],
        month=_months(convs),
        feedback=_feedback(convs),
    )
    return analyse(
        inputs,
        calibration,
        k=cfg.k_anonymity,
        epsilon=cfg.dp_epsilon,
        cap=cfg.dp_cap,
        draws=draws or cfg.bootstrap_draws,
        level=cfg.interval_level,
        rng=rng,
    )


def compare_to_planted(metrics: dict[str, float], planted: dict[str, float]) -> dict[str, float]:
    """``planted.*`` and ``abs_error.*`` for every rate, domain rate, slope and association."""
    out: dict[str, float] = {}
    keys = [f"rate.{v}.{s}" for v in VARIABLES for s in SEVERITIES]
    keys += [f"domain_rate.{d}.severe_or_moderate" for d in DOMAINS]
    keys += [f"trend_slope.{v}" for v in VARIABLES]
    keys += ["approval_association"]
    for key in keys:
        if key not in planted:
            continue
        tail = key.split(".", 1)[1] if key.startswith("rate.") else key
        out[f"planted.{tail}"] = planted[key]
        if key in metrics:
            out[f"abs_error.{tail}"] = abs(metrics[key] - planted[key])
            lo, hi = metrics.get(f"{key}.lo"), metrics.get(f"{key}.hi")
            if lo is not None and hi is not None:
                out[f"covered.{tail}"] = float(lo <= planted[key] <= hi)
    for v in VARIABLES:  # the uncorrected estimate, for comparison
        for s in SEVERITIES[1:]:
            if f"observed.{v}.{s}" in metrics:
                out[f"abs_error_uncorrected.{v}.{s}"] = abs(
                    metrics[f"observed.{v}.{s}"] - planted[f"rate.{v}.{s}"]
                )
    return out


def scrub_recall(processed: ProcessedLog, data: RunData) -> dict[str, float]:
    """Share of planted PII strings absent from the scrubbed texts, per kind and format."""
    assert processed.scrubbed is not None
    found: dict[tuple[str, bool], list[bool]] = {}
    for p in data.pii:
        found.setdefault((p.kind, p.holdout), []).append(
            p.text not in processed.scrubbed[p.conversation]
        )
    out = {
        f"scrub.recall.{kind}.{'holdout' if ho else 'dev'}": float(np.mean(v))
        for (kind, ho), v in sorted(found.items())
    }
    allv = [x for v in found.values() for x in v]
    out["scrub.recall.all"] = float(np.mean(allv)) if allv else float("nan")
    return out


def release_clusters(
    cfg: DisempowermentConfig,
    convs: list[Conversation],
    processed: ProcessedLog,
    kanon: KAnonymity,
    namer: Any = None,
) -> list[ClusterSummary]:
    """Stage 6a: Clio-style clusters of the conversations rated moderate or worse."""
    rows = np.nonzero(processed.flagged)[0]
    sub = processed.labels.subset(rows)
    strong = sub.any_severity >= 2
    users = np.array([convs[i].user_id for i in rows])
    return cluster_patterns(
        processed.embeddings[strong],
        [t for t, s in zip(processed.flagged_texts, strong, strict=True) if s],
        users[strong],
        sub.subset(np.nonzero(strong)[0]),
        n_clusters=cfg.n_clusters,
        kanon=kanon,
        seed=cfg.seed,
        namer=namer,
    )


def make_judge(spec: str) -> Any:
    """A chat back end for the judge: an endpoint ``url|model`` or a local model spec."""
    from icml26.shared.llm import ChatClient, LocalChatModel

    if spec.startswith(("http://", "https://")):
        url, _, model = spec.partition("|")
        return ChatClient(url, model)
    return LocalChatModel.from_spec(spec)


def judge_metrics(cfg: DisempowermentConfig, data: RunData, backend: Any) -> dict[str, float]:
    """The LLM judge's macro-F1 on a random labelled sample, its malformed-reply rate, tokens."""
    rng = np.random.default_rng(cfg.seed + 7)
    n = min(cfg.judge_n, len(data.calibration.conversations))
    rows = rng.choice(len(data.calibration.conversations), size=n, replace=False)
    texts = _scrubbed([data.calibration.conversations[i] for i in rows])
    judge = LLMJudge(backend)
    start = time.process_time()
    pred = judge.predict(texts)
    cpu = time.process_time() - start
    truth = data.calibration.labels.subset(rows)
    return {
        "classifier.llm_judge.macro_f1": _mean_f1(truth, pred),
        "judge.malformed_rate": judge.malformed_rate,
        "judge.n": float(n),
        "judge.tokens": float(backend.usage.total_tokens),
        "judge.cpu_seconds_per_1k": 1000 * cpu / n,
    }


_COVERED_KEYS = [f"{v}.{s}" for v in VARIABLES for s in SEVERITIES[1:]]


def measure_coverage(cfg: DisempowermentConfig, models: Models) -> dict[str, float]:
    """Stage 6b: interval coverage over fresh synthetic (log, calibration set) pairs."""
    hits: list[float] = []
    per_key: dict[str, list[float]] = {k: [] for k in _COVERED_KEYS}
    for r in range(cfg.coverage_repeats):
        seed = cfg.seed + 30_000 + 97 * r
        log_r = generate_log(cfg.coverage_n, seed=seed)
        labelled = generate_labelled(
            cfg.coverage_calibration_n, seed=seed + 1, positive_share=cfg.calibration_positive_share
        )
        lab = labelled.log
        truth = Labels(lab.severity, lab.amplifiers, lab.domain)
        cal = calibration_from_labels(
            truth, models.staged.run(_scrubbed(lab.conversations)).labels, labelled.weights
        )
        processed = process_log(log_r.conversations, models.staged, batch_size=cfg.batch_size)
        res = analyse_log(
            cfg,
            log_r.conversations,
            processed,
            cal,
            np.random.default_rng(seed + 2),
            draws=min(cfg.bootstrap_draws, 1000),
        )
        for key in _COVERED_KEYS:
            m = res.metrics
            ok = float(m[f"rate.{key}.lo"] <= log_r.planted[f"rate.{key}"] <= m[f"rate.{key}.hi"])
            hits.append(ok)
            per_key[key].append(ok)
        log(f"coverage repeat {r + 1}/{cfg.coverage_repeats}: {np.mean(hits):.3f} so far")
    if not hits:
        return {}
    out = {
        "coverage.rate_intervals": float(np.mean(hits)),
        "coverage.n_intervals": float(len(hits)),
    }
    for key, v in per_key.items():
        out[f"coverage.rate.{key}"] = float(np.mean(v))
    return out


def audit_outputs(run_dir: RunDir, pii: list[str], extra: dict[str, Any]) -> dict[str, float]:
    """Stage 6c: PII strings of the input in any output file (or in the metrics about to be
    written to results.json)."""
    hits, files = pii_leak_audit(run_dir.path, pii)
    text = json.dumps(extra)
    hits += sum(1 for s in set(pii) if len(s) >= 4 and s in text)
    if files:
        log(f"PII found in {files}")
    return {"privacy.pii_leaks": float(hits), "privacy.pii_strings_checked": float(len(set(pii)))}


def run(cfg: DisempowermentConfig, run_dir: RunDir) -> dict[str, float]:
    """The main job: see the module docstring for the stages."""
    _set_threads()
    seed_everything(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    synthetic = not cfg.log_path
    t = time.perf_counter()
    data = load_data(cfg)
    log(
        f"data: {len(data.log)} conversations, {len(data.train.conversations)} train, {len(data.calibration.conversations)} calibration ({time.perf_counter() - t:.1f}s)"
    )
    t = time.perf_counter()
    models = train_classifiers(cfg, data)
    log(f"classifiers trained ({time.perf_counter() - t:.1f}s)")
    processed = classify_log(cfg, data.log, models, keep_scrubbed=synthetic)
    log(
        f"log classified by engine={cfg.engine}: {processed.throughput:.0f} conversations/s, {int(processed.flagged.sum())} to stage 2"
    )
    t = time.perf_counter()
    calibration, metrics = calibrate(cfg, data, models)
    log(f"calibrated ({time.perf_counter() - t:.1f}s)")
    metrics[f"throughput.{cfg.engine}"] = processed.throughput
    metrics["stage2.share_flagged"] = float(processed.flagged.mean())
    result = analyse_log(cfg, data.log, processed, calibration, rng)
    metrics.update(result.metrics)
    if data.read_report is not None:
        metrics["input.malformed_lines"] = float(len(data.read_report.malformed))
        metrics["input.duplicate_lines"] = float(len(data.read_report.duplicates))
    if synthetic:
        metrics.update(compare_to_planted(metrics, data.planted))
        metrics.update(scrub_recall(processed, data))
    for ph, n in processed.scrub_counts.items():
        metrics[f"scrub.replaced.{ph.strip('[]').lower()}"] = float(n)

    namer = None
    if cfg.judge != "none":
        namer = make_judge(cfg.judge)
        metrics.update(judge_metrics(cfg, data, namer))
    kanon = KAnonymity(cfg.k_anonymity)
    clusters = release_clusters(
        cfg, data.log, processed, kanon, namer if cfg.judge_names_clusters else None
    )
    run_dir.write_json(
        "clusters.json",
        {
            "k": cfg.k_anonymity,
            "clusters": [c.to_json() for c in clusters],
            "suppressed": len(kanon.suppressed),
        },
    )
    metrics["clusters.released"] = float(len(clusters))
    metrics["clusters.suppressed"] = float(len(kanon.suppressed))
    if clusters:
        metrics["privacy.min_group_size"] = float(
            min(metrics["privacy.min_group_size"], kanon.min_group_size)
        )
    if synthetic and cfg.coverage_repeats > 0:
        t = time.perf_counter()
        metrics.update(measure_coverage(cfg, models))
        log(f"coverage measured ({time.perf_counter() - t:.1f}s)")
    from icml26.disempowerment.plots import plot_all

    plot_all(run_dir, metrics, result, data.planted)
    metrics["memory.peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if synthetic:
        metrics.update(audit_outputs(run_dir, [p.text for p in data.pii], metrics))
    return metrics


# -- benchmark ---------------------------------------------------------------------------------


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, float]:
    """Throughput per engine and log size; cost per 1,000 conversations per back end; memory."""
    _set_threads()
    seed_everything(cfg.seed)
    base = DisempowermentConfig(seed=cfg.seed, n_train=cfg.n_train, n_conversations=1000)
    data = synthetic_data(
        1000, cfg.n_train, 1000, seed=cfg.seed, positive_share=0.3, calibration_positive_share=0.1
    )
    models = train_classifiers(base, data)
    m: dict[str, float] = {}
    biggest = generate_log(max(cfg.sizes), seed=cfg.seed + 1)
    for engine in cfg.engines:
        if engine == "ray":
            try:
                import ray
            except ImportError:
                log("ray is not installed: skipping engine=ray")
                continue
        for n in cfg.sizes:
            processed = process_log(
                biggest.conversations[:n], models.staged, engine=engine, workers=cfg.workers
            )
            m[f"throughput.{engine}.n{n}"] = processed.throughput
            log(f"{engine} n={n}: {processed.throughput:.0f} conversations/s")
        m[f"throughput.{engine}"] = m[f"throughput.{engine}.n{max(cfg.sizes)}"]
    if "ray" in cfg.engines and "throughput.ray" in m:
        import ray

        ray.shutdown()
        m["throughput.ray_over_local"] = m["throughput.ray"] / m["throughput.local"]
    # cost per 1,000 conversations (CPU seconds of this process, scrubbing included)
    sample = biggest.conversations[: cfg.cost_n]
    scrubber = Scrubber()
    start = time.process_time()
    texts = [scrubber(c.text()) for c in sample]
    m["cost_cpu_s_per_1k.scrub"] = 1000 * (time.process_time() - start) / len(sample)
    for name, fn in (
        ("tfidf", models.screen.predict),
        ("staged", models.staged.predict),
        ("minilm", lambda ts: models.staged.embedder.encode([assistant_view(t) for t in ts])),
    ):
        start = time.process_time()
        fn(texts)
        m[f"cost_cpu_s_per_1k.{name}"] = 1000 * (time.process_time() - start) / len(texts)
    if cfg.judge != "none":
        backend = make_judge(cfg.judge)
        judge = LLMJudge(backend)
        start = time.process_time()
        judge.predict(texts[: cfg.judge_n])
        m["cost_cpu_s_per_1k.llm_judge"] = 1000 * (time.process_time() - start) / cfg.judge_n
        m["cost_tokens_per_1k.llm_judge"] = 1000 * backend.usage.total_tokens / cfg.judge_n
    m["memory.peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return m
