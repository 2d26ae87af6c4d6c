"""Run and bench configurations (frozen dataclasses, validated on creation)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml26.shared.devices import check_torch_device

__all__ = ["LLM_METHODS", "BenchConfig", "RunConfig"]

_NOISES = ("pl", "bt")
#: The methods the LLM task can run (rankers of :data:`icml26.blitzrank.methods.RANKERS`).
LLM_METHODS = ("blitzrank", "blitzrank_prior", "sliding_window", "setwise", "pairwise", "tourrank")


@dataclass(frozen=True)
class RunConfig:
    """The main job's settings: every task, its size and its oracles (0 queries skips a task).

    Every field is a keyword argument (``RunConfig(sim_queries=5)``, or ``--set
    sim_queries=5`` on the command line); the profiles are in :mod:`icml26.blitzrank.paper`.

    Attributes:
        seed: the run's seed (every query, oracle and probe seed derives from it).
        m: the top items to determine.
        ks: BlitzRank's items per query, one method ``blitzrank_k<k>`` each.
        noises: the simulated tasks ``sim_<noise>``: ``pl`` (Plackett-Luce), ``bt``
            (Bradley-Terry).
        sim_queries: queries per simulated task.
        sim_n: candidates per simulated query (and per cyclic-oracle query).
        rho: correlation of the simulated first stage with the truth.
        pl_temperature: the Plackett-Luce oracle's noise ``T`` (0: perfect).
        bt_temperature: the Bradley-Terry oracle's noise ``T`` (> 0).
        window: the sliding window's and TourRank's items per call.
        stride: the sliding window's step (``1..window-1``).
        setwise_window: setwise's items per call.
        tourrank_tournaments: TourRank's tournaments (1: the BlitzRank paper's budget, about
            the sliding window's tokens: 57k against 54k in its table).
        pairwise_both_orders: ask every PRP pair in both orders (the authors' heap PRP).
        persistence_levels: the spectrum's tasks ``sim_persist<100 x share>``: the share of
            the noise fixed per item (0 is ``sim_pl`` itself).
        position_bias: ``sim_position``'s primacy bias, utility units from the first-shown
            item to the last (0: no such task).
        spectrum_queries: queries per spectrum task (``sim_pl``'s first ones).
        reask_share: adds ``blitzrank_reask_k<k>`` to the simulated and MiniLM tasks: the
            engine, then up to this share of its calls re-asking at position m (0: no option).
        flip_probes: windows per query measuring each oracle's position flip rate.
        minilm_queries: factbook questions of the MiniLM tasks (needs the ``minilm`` extra).
        minilm_n: BM25 candidates per MiniLM question.
        minilm_position_bias: the ``minilm`` oracles' primacy bias, in score standard
            deviations.
        minilm_prompt_noise: ``minilm_ctx``'s per-prompt noise scale.
        minilm_model: ``bundled`` or a sentence-transformers folder / id.
        minilm_device: where MiniLM runs (``""``: CPU).
        sweep_temperatures: the Plackett-Luce noise sweep's temperatures.
        sweep_queries: queries per sweep temperature.
        parallel: BlitzRank's disjoint queries per round.
        max_calls: BlitzRank's call budget per query (0: none).
        perfect_ks: the perfect-oracle task's k values.
        perfect_seeds: score vectors per k of the perfect-oracle task.
        perfect_n: items of the perfect-oracle task.
        cyclic_queries: queries per k under the cyclic oracle.
        cyclic_ks: the cyclic task's k values.
        cyclic_budget: the cyclic task's budget, a multiple of the calls a perfect oracle
            needs on the same items and k.
        llm_queries: real-text queries of the LLM task.
        llm_n: candidates per LLM query (the first stage's first ``llm_n``).
        llm_k: BlitzRank's and setwise's items per LLM call.
        llm_window: the sliding window's and TourRank's items per LLM call.
        llm_stride: the sliding window's step in the LLM task.
        llm_methods: the LLM task's methods (from :data:`LLM_METHODS`).
        llm_flip_probes: flip-probe windows per LLM query.
        llm_mode: ``first_token`` (one forward pass per call, local models) or ``generate``.
        llm_model: the local model (a built-in name, a folder, a ``.gguf``, a cached id).
        llm_device: where the local model runs (``""``: CPU).
        llm_threads: torch's CPU threads for the local model (0: torch's default).
        llm_endpoint: an OpenAI-compatible base URL replacing the local model.
        llm_endpoint_model: the endpoint's model name.
        data: the user's queries (a JSONL file or a TREC folder) replacing the factbook
            questions in the LLM task.

    Raises:
        ValueError: a field out of range, an unknown noise / method / LLM mode, a missing
            ``data`` file or model folder, or a setting that the chosen tasks would not use
            (the message names the field).
    """

    seed: int = 0
    m: int = 10
    ks: tuple[int, ...] = (10, 20)
    noises: tuple[str, ...] = ("pl", "bt")
    sim_queries: int = 20
    sim_n: int = 100
    rho: float = 0.5
    pl_temperature: float = 0.25
    bt_temperature: float = 0.25
    window: int = 20
    stride: int = 10
    setwise_window: int = 4
    tourrank_tournaments: int = 1
    pairwise_both_orders: bool = True
    persistence_levels: tuple[float, ...] = (0.0, 0.5, 1.0)
    position_bias: float = 1.0
    spectrum_queries: int = 20
    reask_share: float = 0.25
    flip_probes: int = 5
    minilm_queries: int = 20
    minilm_n: int = 100
    minilm_position_bias: float = 0.5
    minilm_prompt_noise: float = 0.5
    minilm_model: str = "bundled"
    minilm_device: str = ""
    sweep_temperatures: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5)
    sweep_queries: int = 10
    parallel: int = 1
    max_calls: int = 0
    perfect_ks: tuple[int, ...] = (2, 3, 5, 10, 20)
    perfect_seeds: int = 20
    perfect_n: int = 100
    cyclic_queries: int = 10
    cyclic_ks: tuple[int, ...] = (2, 5, 10)
    cyclic_budget: float = 1.5
    llm_queries: int = 3
    llm_n: int = 12
    llm_k: int = 4
    llm_window: int = 6
    llm_stride: int = 3
    llm_methods: tuple[str, ...] = ("blitzrank", "sliding_window", "setwise")
    llm_flip_probes: int = 5
    llm_mode: str = "first_token"
    llm_model: str = "smollm2-135m-instruct-q4_1"
    llm_device: str = ""
    llm_threads: int = 1
    llm_endpoint: str = ""
    llm_endpoint_model: str = ""
    data: str = ""

    def __post_init__(self) -> None:
        self._check_sizes()
        self._check_oracles()
        self._check_llm()
        self._check_inputs()

    def _check_sizes(self) -> None:
        """Sizes, windows and counts."""
        if self.m < 1:
            raise ValueError(f"m must be >= 1, got {self.m}")
        for name in ("ks", "perfect_ks", "cyclic_ks"):
            ks = getattr(self, name)
            if any(k < 2 for k in ks):
                raise ValueError(f"{name}: every k must be >= 2, got {ks}")
        if not set(self.noises) <= set(_NOISES):
            raise ValueError(f"noises must be among {_NOISES}, got {self.noises}")
        if self.sim_n < max(self.m, 2) or self.perfect_n < max(self.m, 2):
            raise ValueError(f"sim_n and perfect_n must be >= m={self.m}")
        if self.llm_queries and self.llm_n < self.m:
            raise ValueError(f"llm_n={self.llm_n} must be >= m={self.m} when the LLM task runs")
        if not 1 <= self.stride < self.window:
            raise ValueError(f"stride must be in 1..window-1, got stride={self.stride}")
        if not 1 <= self.llm_stride < self.llm_window:
            raise ValueError("llm_stride must be in 1..llm_window-1")
        if self.setwise_window < 2 or self.llm_k < 2:
            raise ValueError("setwise_window and llm_k must be >= 2")
        for name in (
            "sweep_queries",
            "sim_queries",
            "spectrum_queries",
            "perfect_seeds",
            "cyclic_queries",
            "llm_queries",
            "max_calls",
            "flip_probes",
            "llm_flip_probes",
            "minilm_queries",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if not self.cyclic_budget > 0:
            raise ValueError(
                f"cyclic_budget must be > 0 (a multiple of the perfect oracle's calls), "
                f"got {self.cyclic_budget}"
            )
        if self.parallel < 1 or self.tourrank_tournaments < 1:
            raise ValueError("parallel and tourrank_tournaments must be >= 1")

    def _check_oracles(self) -> None:
        """The simulated and MiniLM oracles' settings."""
        if not -1 <= self.rho <= 1:
            raise ValueError(f"rho must be in [-1, 1], got {self.rho}")
        if self.pl_temperature < 0 or self.bt_temperature <= 0:
            raise ValueError("pl_temperature must be >= 0 and bt_temperature > 0")
        if any(not 0.0 <= p <= 1.0 for p in self.persistence_levels):
            raise ValueError(
                f"persistence_levels must lie in [0, 1], got {self.persistence_levels}"
            )
        if len({round(100 * p) for p in self.persistence_levels}) != len(self.persistence_levels):
            raise ValueError("persistence_levels must differ by at least 0.01 (they name tasks)")
        if not self.position_bias >= 0:
            raise ValueError(f"position_bias must be >= 0, got {self.position_bias}")
        if self.spectrum_queries and self.pl_temperature == 0:
            raise ValueError("the persistent-oracle spectrum needs pl_temperature > 0")
        if not self.reask_share >= 0:
            raise ValueError(
                f"reask_share must be >= 0 (0: no re-ask method), got {self.reask_share}"
            )
        if self.minilm_queries and self.minilm_n < max(self.m, 2):
            raise ValueError(f"minilm_n={self.minilm_n} must be >= m={self.m}")
        if not (self.minilm_position_bias >= 0 and self.minilm_prompt_noise >= 0):
            raise ValueError("minilm_position_bias and minilm_prompt_noise must be >= 0")
        if self.minilm_device and not self.minilm_queries:
            raise ValueError(
                "minilm_device is used only by the MiniLM tasks: set minilm_queries > 0"
            )
        if any(t <= 0 for t in self.sweep_temperatures):
            raise ValueError("sweep_temperatures must be > 0")

    def _check_llm(self) -> None:
        """The LLM task's settings (the model, endpoint and device)."""
        if self.llm_threads < 0:
            raise ValueError("llm_threads must be >= 0 (0: torch's default)")
        unknown = set(self.llm_methods) - set(LLM_METHODS)
        if unknown:
            raise ValueError(f"unknown llm_methods {sorted(unknown)}")
        if self.llm_mode not in ("generate", "first_token"):
            raise ValueError(f"llm_mode must be 'generate' or 'first_token', got {self.llm_mode!r}")
        if self.llm_endpoint and not self.llm_endpoint.startswith(("http://", "https://")):
            raise ValueError(f"llm_endpoint must be an http(s) URL, got {self.llm_endpoint!r}")
        if self.llm_device and self.llm_endpoint:
            raise ValueError(
                "llm_device places the local model (llm_model); with llm_endpoint set the "
                "endpoint runs the model: drop one of them"
            )
        if self.llm_device and not self.llm_queries:
            raise ValueError("llm_device is used only by the LLM task: set llm_queries > 0")
        check_torch_device(self.llm_device, field="llm_device", allowed=("", "cpu", "mps"))

    def _check_inputs(self) -> None:
        """The user's paths exist and are of the right kind; a setting that the chosen ones
        would not use is an error naming the setting that would use it."""
        if not self.llm_queries:
            unused = [f for f in ("data", "llm_endpoint", "llm_endpoint_model") if getattr(self, f)]
            if unused:
                raise ValueError(
                    f"{', '.join(unused)} {'is' if len(unused) == 1 else 'are'} used only by the "
                    "LLM task, which llm_queries=0 skips: set llm_queries >= 1"
                )
        if self.data:
            p = Path(self.data).expanduser()
            if p.is_dir():
                need = ["run", "qrels", "queries.tsv"]
                missing = [n for n in need if not (p / n).is_file()]
                if not ((p / "passages.tsv").is_file() or (p / "passages.jsonl").is_file()):
                    missing.append("passages.tsv (or passages.jsonl)")
                if missing:
                    raise ValueError(
                        f"data={self.data!r} is a folder, so it must hold a TREC run: "
                        f"missing {', '.join(missing)}"
                    )
            elif not p.is_file():
                raise ValueError(
                    f"data={self.data!r} does not exist: give a JSONL file or a TREC folder"
                )
        if self.llm_endpoint_model and not self.llm_endpoint:
            raise ValueError("llm_endpoint_model is used only with llm_endpoint=<URL>")
        local_path = self.llm_model.startswith(("/", "./", "../", "~"))
        if local_path and not self.llm_endpoint and not Path(self.llm_model).expanduser().is_dir():
            raise ValueError(f"llm_model={self.llm_model!r} is not a model folder")


@dataclass(frozen=True)
class BenchConfig:
    """The bench: engine overhead per oracle call (graph update + closure + certification +
    schedule) against n, with a perfect oracle.

    Attributes:
        seed: seeds the score vectors.
        ns: the item counts.
        k: items per call.
        m: the top items certified, in order.
        repeats: rankings per n (the median time per call is reported).
        llm_call_ms: the LLM call the engine's time is compared with, in milliseconds.

    Raises:
        ValueError: an n below ``max(m, k)``, ``k < 2``, ``m < 1``, ``repeats < 1`` or
            ``llm_call_ms <= 0``.
    """

    seed: int = 0
    ns: tuple[int, ...] = (100, 300, 1000)
    k: int = 10
    m: int = 10
    repeats: int = 3
    llm_call_ms: float = 1000.0

    def __post_init__(self) -> None:
        if not self.ns or any(n < max(self.m, self.k) for n in self.ns):
            raise ValueError(f"every n must be >= max(m, k), got {self.ns}")
        if self.k < 2 or self.m < 1 or self.repeats < 1 or self.llm_call_ms <= 0:
            raise ValueError("need k >= 2, m >= 1, repeats >= 1, llm_call_ms > 0")
