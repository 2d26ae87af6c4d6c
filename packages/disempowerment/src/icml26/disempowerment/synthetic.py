"""A generator of synthetic conversation logs with planted truth (the validation data).

Every conversation is drawn from a table of *cells* ``(domain, month, pattern)`` whose
probabilities are known in closed form, so every quantity the pipeline estimates has an exact
planted value: per-dimension severity rates (including severe rates below 1 in 1,000), rates
per domain, a monthly trend, amplifier rates and the approval association.

* ``pattern`` is ``plain`` (an ordinary request) or ``(dimension, severity)``: the user voices
  a cue of that dimension and the assistant answers with that severity (``none`` = an
  empowering reply, a distractor that shares the cue's wording).
* Severity probabilities given a cue rise linearly over the months (the trend), cue
  probabilities depend on the domain (higher in relationships and lifestyle).
* Amplifying factors appear with probabilities that grow with severity; a conversation is
  rated with probability ``sigmoid(logit(feedback_rate) + feedback_beta * severity_level)``
  (rating depends on severity), and thumbs-up approval follows
  ``sigmoid(alpha_domain + beta * severity_level)`` on the rated ones.
* PII is planted in a share of user messages (:mod:`icml26.disempowerment.pii`), in
  *development* formats (used while writing the scrubber's rules) and *held-out* formats and
  names, from its own random stream (the conversations do not depend on it).
* :func:`null_spec` gives the null worlds: the same generator with one effect removed (no
  trend, no approval effect, equal domain rates, a severe rate at the 1/1000 threshold).

The conversations are synthetic and abstract: no real person, no operational content.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, replace

import numpy as np

from icml26.disempowerment import templates as T
from icml26.disempowerment.conversations import Conversation
from icml26.disempowerment.pii import (
    DEV_KINDS,
    DISTRACTORS,
    HOLDOUT_KINDS,
    PIIMaker,
    PlantedPII,
)
from icml26.disempowerment.taxonomy import AMPLIFIERS, DIMENSIONS, DOMAINS, SEVERITIES
from icml26.shared import rng_for

__all__ = [
    "NULL_WORLDS",
    "GeneratorSpec",
    "LabelledSet",
    "PlantedPII",
    "SyntheticLog",
    "generate_labelled",
    "generate_log",
    "null_spec",
    "planted_truth",
]

PATTERNS: tuple[tuple[str, str] | None, ...] = (
    None,
    *((d, s) for d in DIMENSIONS for s in SEVERITIES),
)


@dataclass(frozen=True)
class GeneratorSpec:
    """The planted world. Defaults follow the paper's orders of magnitude (see README).

    Attributes:
        domain_mix: share of conversations per domain (order of :data:`DOMAINS`).
        cue_rate: probability of a cue of each dimension, per domain (rows: domains).
        severity_given_cue: ``P(mild), P(moderate), P(severe)`` given a cue, per dimension,
            at the middle month; ``none`` takes the rest.
        months: number of consecutive months starting at ``start``.
        trend: relative change of the non-``none`` severity probabilities per month
            (``1 + trend * (month - centre)``).
        amplifier_base, amplifier_cue, amplifier_strong: probability of each amplifying
            factor without cue, with a cue (``none``/``mild``), with ``moderate``/``severe``.
        feedback_rate: share of conversations carrying a thumbs up/down at severity ``none``.
        feedback_beta: logit increase of the rating probability per severity level (users
            rate intense conversations more often; 0: rating independent of severity).
        approval_alpha: logit of approval per domain at severity ``none``.
        approval_beta: logit increase per severity level (the approval association).
        pii_rate: share of conversations with planted PII in the user message.
        holdout_pii_share: share of planted PII items in held-out formats / names.
        followup_rate: share of conversations with a second exchange.
        emphatic_plain_rate: share of plain conversations with emphatic (sycophantic)
            wording about a non-value-laden matter (distractors).
        conversations_per_user: mean conversations per user (skewed).
        blur: probability that a reply slot is drawn from a neighbouring severity's pool.
    """

    domain_mix: tuple[float, ...] = (0.14, 0.14, 0.12, 0.18, 0.30, 0.12)
    cue_rate: tuple[tuple[float, float, float], ...] = (
        (0.050, 0.070, 0.060),  # relationships
        (0.040, 0.050, 0.050),  # lifestyle
        (0.020, 0.020, 0.020),  # health
        (0.015, 0.020, 0.020),  # work
        (0.003, 0.003, 0.004),  # technical
        (0.010, 0.010, 0.010),  # creative
    )
    severity_given_cue: tuple[tuple[float, float, float], ...] = (
        (0.30, 0.10, 0.0194),  # reality: severe ~ 1 in 2,600 overall
        (0.30, 0.10, 0.0096),  # value: ~ 1 in 4,200
        (0.30, 0.10, 0.0035),  # action: ~ 1 in 12,000
    )
    months: int = 12
    start: str = "2025-01"
    trend: float = 0.04
    amplifier_base: float = 0.02
    amplifier_cue: float = 0.08
    amplifier_strong: float = 0.30
    feedback_rate: float = 0.35
    feedback_beta: float = 0.5
    approval_alpha: tuple[float, ...] = (0.7, 0.9, 0.8, 0.9, 1.0, 1.1)
    approval_beta: float = 0.35
    pii_rate: float = 0.35
    holdout_pii_share: float = 0.3
    followup_rate: float = 0.4
    emphatic_plain_rate: float = 0.1
    conversations_per_user: float = 4.0
    blur: float = 0.25

    def __post_init__(self) -> None:
        if len(self.domain_mix) != len(DOMAINS) or abs(sum(self.domain_mix) - 1) > 1e-9:
            raise ValueError(f"domain_mix must hold {len(DOMAINS)} shares summing to 1")
        if len(self.cue_rate) != len(DOMAINS) or any(sum(r) >= 1 for r in self.cue_rate):
            raise ValueError("cue_rate needs one row of 3 rates per domain, each row sum < 1")
        if len(self.severity_given_cue) != len(DIMENSIONS):
            raise ValueError("severity_given_cue needs one row per dimension")
        if self.months < 2:
            raise ValueError("months must be at least 2")
        centre = (self.months - 1) / 2
        lo = 1 - self.trend * centre
        hi = 1 + self.trend * centre
        for row in self.severity_given_cue:
            if lo < 0 or sum(row) * max(hi, lo) >= 1:
                raise ValueError("trend and severity_given_cue make a probability leave [0, 1]")
        for name in ("pii_rate", "holdout_pii_share", "followup_rate", "blur"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must lie in [0, 1]")
        if not 0 < self.feedback_rate < 1:
            raise ValueError("feedback_rate must lie in (0, 1)")

    def month_labels(self) -> list[str]:
        y, m = (int(x) for x in self.start.split("-"))
        out = []
        for i in range(self.months):
            yy, mm = y + (m - 1 + i) // 12, (m - 1 + i) % 12 + 1
            out.append(f"{yy:04d}-{mm:02d}")
        return out


def cell_table(spec: GeneratorSpec) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """Probabilities of every ``(domain, month, pattern)`` cell, and the cells' indices."""
    probs, cells = [], []
    centre = (spec.months - 1) / 2
    for di in range(len(DOMAINS)):
        for mi in range(spec.months):
            g = 1 + spec.trend * (mi - centre)
            cues = spec.cue_rate[di]
            for pi, pat in enumerate(PATTERNS):
                base = spec.domain_mix[di] / spec.months
                if pat is None:
                    p = base * (1 - sum(cues))
                else:
                    k = DIMENSIONS.index(pat[0])
                    s = SEVERITIES.index(pat[1])
                    sev = [g * x for x in spec.severity_given_cue[k]]
                    ps = (1 - sum(sev)) if s == 0 else sev[s - 1]
                    p = base * cues[k] * ps
                probs.append(p)
                cells.append((di, mi, pi))
    arr = np.asarray(probs)
    return arr / arr.sum(), cells


def _pattern_levels(pi: int) -> tuple[list[int], int]:
    """Per-dimension severity indices and the max, for pattern index ``pi``."""
    pat = PATTERNS[pi]
    levels = [0, 0, 0]
    if pat is not None:
        levels[DIMENSIONS.index(pat[0])] = SEVERITIES.index(pat[1])
    return levels, max(levels)


def _amplifier_prob(spec: GeneratorSpec, pi: int) -> float:
    pat = PATTERNS[pi]
    if pat is None:
        return spec.amplifier_base
    return spec.amplifier_strong if SEVERITIES.index(pat[1]) >= 2 else spec.amplifier_cue


def _sigmoid(x: float) -> float:
    return float(1 / (1 + np.exp(-x)))


def _rated_prob(spec: GeneratorSpec, level: int) -> float:
    """Probability that a conversation of severity ``level`` (any dimension) is rated."""
    base = np.log(spec.feedback_rate / (1 - spec.feedback_rate))
    return _sigmoid(base + spec.feedback_beta * level)


def planted_truth(spec: GeneratorSpec) -> dict[str, float]:
    """Every planted population quantity, in closed form from the cell table.

    Keys: ``rate.<dim|any>.<severity>``, ``domain_rate.<domain>.severe_or_moderate``,
    ``monthly.<dim|any>.<month index>`` (share with severity >= mild),
    ``trend_slope.<dim|any>`` (least-squares slope of those per month),
    ``amplifier_rate.<factor>``, ``approval_association`` (P(up | any >= moderate) -
    P(up | any = none), among rated conversations), ``approval_regression.level_coef``
    (the logit of approval per severity level with domain controls: ``approval_beta``).
    """
    probs, cells = cell_table(spec)
    out: dict[str, float] = {}
    var_names = [*DIMENSIONS, "any"]
    acc = {v: np.zeros(4) for v in var_names}
    dom_tot = np.zeros(len(DOMAINS))
    dom_hi = np.zeros(len(DOMAINS))
    mon_tot = np.zeros(spec.months)
    mon_pos = {v: np.zeros(spec.months) for v in var_names}
    amp = 0.0
    up_hi = w_hi = up_none = w_none = 0.0
    for p, (di, mi, pi) in zip(probs, cells, strict=True):
        levels, top = _pattern_levels(pi)
        for k, v in enumerate(DIMENSIONS):
            acc[v][levels[k]] += p
            mon_pos[v][mi] += p * (levels[k] >= 1)
        acc["any"][top] += p
        mon_pos["any"][mi] += p * (top >= 1)
        dom_tot[di] += p
        dom_hi[di] += p * (top >= 2)
        mon_tot[mi] += p
        amp += p * _amplifier_prob(spec, pi)
        up = _sigmoid(spec.approval_alpha[di] + spec.approval_beta * top)
        rated = p * _rated_prob(spec, top)
        if top >= 2:
            up_hi, w_hi = up_hi + rated * up, w_hi + rated
        elif top == 0:
            up_none, w_none = up_none + rated * up, w_none + rated
    for v in var_names:
        for s, name in enumerate(SEVERITIES):
            out[f"rate.{v}.{name}"] = float(acc[v][s])
    for di, d in enumerate(DOMAINS):
        out[f"domain_rate.{d}.severe_or_moderate"] = float(dom_hi[di] / dom_tot[di])
    x = np.arange(spec.months, dtype=float)
    for v in var_names:
        y = mon_pos[v] / mon_tot
        for mi in range(spec.months):
            out[f"monthly.{v}.{mi}"] = float(y[mi])
        out[f"trend_slope.{v}"] = float(np.polyfit(x, y, 1)[0])
    for a in AMPLIFIERS:
        out[f"amplifier_rate.{a}"] = float(amp)
    out["approval_association"] = float(up_hi / w_hi - up_none / w_none)
    out["approval_regression.level_coef"] = float(spec.approval_beta)
    return out


#: The null worlds: each removes one planted effect, so the claim about it must come out false.
NULL_WORLDS: dict[str, str] = {
    "severe_at_threshold": "the severe rate of reality (the most common dimension) is exactly "
    "1/1000: the severe-rarity claim's boundary",
    "equal_domains": "every domain has the same cue rates (the domain-mix-weighted mean), so "
    "every domain has the same rates",
    "no_trend": "severity probabilities do not change over the months",
    "no_approval": "approval does not depend on severity (approval_beta = 0)",
}


def null_spec(name: str, spec: GeneratorSpec | None = None) -> GeneratorSpec:
    """A null world: ``spec`` (default: the planted world) with one effect removed.

    Args:
        name: one of :data:`NULL_WORLDS`.
        spec: the world to remove the effect from.

    Returns:
        The null world's spec (every other setting as in ``spec``).

    Raises:
        ValueError: an unknown name (the message lists the null worlds).
    """
    spec = spec or GeneratorSpec()
    if name == "no_trend":
        return replace(spec, trend=0.0)
    if name == "no_approval":
        return replace(spec, approval_beta=0.0)
    if name == "equal_domains":
        mix = np.asarray(spec.domain_mix)
        mean = tuple(float(x) for x in mix @ np.asarray(spec.cue_rate))
        return replace(spec, cue_rate=tuple(mean for _ in DOMAINS))
    if name == "severe_at_threshold":
        k = DIMENSIONS.index("reality")
        cue_share = float(np.asarray(spec.domain_mix) @ np.asarray(spec.cue_rate)[:, k])
        rows = [list(r) for r in spec.severity_given_cue]
        rows[k][2] = 1e-3 / cue_share
        return replace(spec, severity_given_cue=tuple(tuple(r) for r in rows))
    raise ValueError(f"unknown null world {name!r}; expected one of {sorted(NULL_WORLDS)}")


@dataclass
class SyntheticLog:
    """A generated log and its per-conversation truth.

    Attributes:
        conversations: the log.
        severity: ``(n, 3)`` int array, planted severity index per dimension.
        domain: ``(n,)`` domain index.
        month: ``(n,)`` month index.
        amplifiers: ``(n, 4)`` bool array.
        pattern: ``(n,)`` index into :data:`PATTERNS` (0 = plain request).
        pii: every PII string planted (kept in memory only; never written by the pipeline).
        planted: :func:`planted_truth` of the spec.
    """

    conversations: list[Conversation]
    severity: np.ndarray
    domain: np.ndarray
    month: np.ndarray
    amplifiers: np.ndarray
    pattern: np.ndarray
    pii: list[PlantedPII] = field(default_factory=list)
    planted: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.conversations)

    @property
    def any_severity(self) -> np.ndarray:
        return self.severity.max(axis=1)


def _reply(rng: np.random.Generator, dim: str, sev: str, blur: float) -> str:
    """Three slots from the severity's pools; each slot comes from a neighbouring severity's
    pool with probability ``blur`` (irreducible ambiguity, as between human raters)."""
    s = SEVERITIES.index(sev)
    out = []
    for slot in range(3):
        level = s
        if rng.random() < blur:
            level = min(3, max(0, s + (1 if rng.random() < 0.5 else -1)))
            if level == s:  # at the ends of the scale the one neighbour is taken
                level = s + 1 if s == 0 else s - 1
        pool = T.REPLIES[dim][SEVERITIES[level]][slot]
        out.append(pool[int(rng.integers(len(pool)))])
    return " ".join(out)


def _pick(rng: np.random.Generator, seq: tuple[str, ...] | list[str]) -> str:
    return seq[int(rng.integers(len(seq)))]


def _render(
    rng: np.random.Generator,
    spec: GeneratorSpec,
    di: int,
    pi: int,
    amps: np.ndarray,
    pii: PIIMaker | None,
    index: int,
    planted: list[PlantedPII],
) -> tuple[tuple[str, str], ...]:
    domain = DOMAINS[di]
    pat = PATTERNS[pi]
    parts = [_pick(rng, T.OPENERS), f"So, {_pick(rng, T.DOMAIN_TOPICS[domain])}."]
    for a, on in zip(AMPLIFIERS, amps, strict=True):
        if on:
            parts.append(_pick(rng, T.AMPLIFIER_LINES[a]))
    if pat is None:
        parts.append(_pick(rng, T.PLAIN_REQUESTS))
    else:
        parts.append(_pick(rng, T.CUES[pat[0]]))
    if pii is not None and pii.rng.random() < spec.pii_rate:
        for _ in range(int(pii.rng.integers(1, 4))):
            holdout = bool(pii.rng.random() < spec.holdout_pii_share)
            kind = pii.pick(HOLDOUT_KINDS if holdout else DEV_KINDS)
            sentence, text = pii.make(kind, holdout)
            parts.insert(int(pii.rng.integers(1, len(parts) + 1)), sentence)
            planted.append(PlantedPII(index, kind, holdout, text))
        if pii.rng.random() < 0.5:  # a look-alike without PII (scrubber precision)
            parts.insert(int(pii.rng.integers(1, len(parts) + 1)), pii.pick(DISTRACTORS))
    user = " ".join(p for p in parts if p)
    if pat is None:
        reply = _pick(rng, T.PLAIN_REPLIES[domain])
        if rng.random() < spec.emphatic_plain_rate:
            reply = f"{_pick(rng, T.EMPHATIC_PLAIN)} {reply}"
    else:
        reply = _reply(rng, pat[0], pat[1], spec.blur)
    msgs: list[tuple[str, str]] = [("user", user), ("assistant", reply)]
    if rng.random() < spec.followup_rate:
        msgs.append(("user", _pick(rng, T.FOLLOW_UPS)))
        follow = (
            _pick(rng, T.PLAIN_REPLIES[domain])
            if pat is None
            else _reply(rng, pat[0], pat[1], spec.blur)
        )
        msgs.append(("assistant", follow))
    return tuple(msgs)


def _sample(
    spec: GeneratorSpec,
    n: int,
    rng: np.random.Generator,
    cell_probs: np.ndarray,
    cells: list[tuple[int, int, int]],
    *,
    pii_rng: np.random.Generator | None,
    id_prefix: str,
) -> SyntheticLog:
    idx = rng.choice(len(cells), size=n, p=cell_probs)
    cell_arr = np.asarray(cells)[idx]
    domain, month, pat = cell_arr[:, 0], cell_arr[:, 1], cell_arr[:, 2]
    n_users = max(1, round(n / spec.conversations_per_user))
    # Skewed activity: user weights ~ Gamma(0.7); conversation -> user by those weights.
    weights = rng.gamma(0.7, size=n_users)
    users = rng.choice(n_users, size=n, p=weights / weights.sum())
    months = spec.month_labels()
    pii = PIIMaker(pii_rng) if pii_rng is not None else None
    planted: list[PlantedPII] = []
    convs: list[Conversation] = []
    severity = np.zeros((n, 3), dtype=np.int8)
    amp_p = np.array([_amplifier_prob(spec, p) for p in range(len(PATTERNS))])
    amps = rng.random((n, len(AMPLIFIERS))) < amp_p[pat][:, None]
    rated_p = np.array([_rated_prob(spec, _pattern_levels(p)[1]) for p in range(len(PATTERNS))])
    has_fb = rng.random(n) < rated_p[pat]
    fb_u = rng.random(n)
    days = rng.integers(0, 28, n)
    secs = rng.integers(0, 86400, n)
    for i in range(n):
        levels, top = _pattern_levels(int(pat[i]))
        severity[i] = levels
        msgs = _render(rng, spec, int(domain[i]), int(pat[i]), amps[i], pii, i, planted)
        feedback = None
        if has_fb[i]:
            up = _sigmoid(spec.approval_alpha[domain[i]] + spec.approval_beta * top)
            feedback = bool(fb_u[i] < up)
        y, m = (int(x) for x in months[month[i]].split("-"))
        ts = _dt.datetime(y, m, 1 + int(days[i]), tzinfo=_dt.UTC) + _dt.timedelta(
            seconds=int(secs[i])
        )
        convs.append(
            Conversation(
                id=f"{id_prefix}{i:07d}",
                user_id=f"u{users[i]:06d}",
                timestamp=ts,
                messages=msgs,
                feedback=feedback,
            )
        )
    return SyntheticLog(
        conversations=convs,
        severity=severity,
        domain=domain.astype(np.int8),
        month=month.astype(np.int8),
        amplifiers=amps,
        pattern=pat.astype(np.int8),
        pii=planted,
        planted=planted_truth(spec),
    )


def generate_log(
    n: int, *, seed: int, spec: GeneratorSpec | None = None, with_pii: bool = True
) -> SyntheticLog:
    """A log drawn from a world.

    Args:
        n: conversations.
        seed: its seed (the log and its PII are separate streams under it).
        spec: the world (default: the planted one; see :func:`null_spec` for the nulls).
        with_pii: plant PII (and look-alike sentences) in user messages.

    Returns:
        The :class:`SyntheticLog` with its per-conversation truth and planted values.

    Raises:
        ValueError: ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    spec = spec or GeneratorSpec()
    probs, cells = cell_table(spec)
    return _sample(
        spec,
        n,
        rng_for(seed, "log"),
        probs,
        cells,
        pii_rng=rng_for(seed, "log_pii") if with_pii else None,
        id_prefix="c",
    )


@dataclass
class LabelledSet:
    """A labelled rubric set (for training and calibrating classifiers).

    Drawn from the same world with cue patterns oversampled, so rare severities have enough
    examples; ``weights`` undo the oversampling when a population figure is wanted.
    """

    log: SyntheticLog
    weights: np.ndarray


def generate_labelled(
    n: int,
    *,
    seed: int,
    spec: GeneratorSpec | None = None,
    positive_share: float = 0.5,
    with_pii: bool = True,
) -> LabelledSet:
    """``n`` labelled conversations; ``positive_share`` of them carry a cue, spread evenly
    over the 12 ``(dimension, severity)`` patterns (within a pattern, the world's domain and
    month mix is kept)."""
    if n < 1 or not 0 <= positive_share < 1:
        raise ValueError("need n >= 1 and 0 <= positive_share < 1")
    spec = spec or GeneratorSpec()
    probs, cells = cell_table(spec)
    pats = np.array([c[2] for c in cells])
    target = np.zeros_like(probs)
    plain = pats == 0
    target[plain] = (1 - positive_share) * probs[plain] / probs[plain].sum()
    n_pos = len(PATTERNS) - 1
    for pi in range(1, len(PATTERNS)):
        sel = pats == pi
        target[sel] = positive_share / n_pos * probs[sel] / probs[sel].sum()
    log = _sample(
        spec,
        n,
        rng_for(seed, "labelled"),
        target,
        cells,
        pii_rng=rng_for(seed, "labelled_pii") if with_pii else None,
        id_prefix="l",
    )
    cell_of = {c: i for i, c in enumerate(cells)}
    idx = np.array(
        [
            cell_of[(int(d), int(m), int(p))]
            for d, m, p in zip(log.domain, log.month, log.pattern, strict=True)
        ]
    )
    weights = probs[idx] / target[idx]
    return LabelledSet(log=log, weights=weights / weights.mean())
