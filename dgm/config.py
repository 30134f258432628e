"""Run configuration: the pydantic models behind `run.toml`.

Every model forbids unknown fields, so a typo is an error that names the field and
the fields allowed there, instead of a silently ignored setting.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from dgm.errors import ConfigError, DgmError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Price(Section):
    """Dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(
        default=None, ge=0, validation_alias=AliasChoices("cache_read", "cached_input")
    )
    """Input tokens read from the provider's prompt cache; None: the input price.
    `cached_input` is accepted as the older name."""
    cache_write: float | None = Field(default=None, ge=0)
    """Input tokens written to the prompt cache (Anthropic: 1.25x input); None: the input
    price (OpenAI and most compatible servers charge nothing extra for writes)."""
    max_output_tokens: int | None = Field(default=None, gt=0)
    """The model's own output limit: a larger `max_tokens` is lowered to it (and budgeted
    as such). None: no known limit."""


DEFAULT_JOB_USD = 10.0


class JobBudget(Section):
    """Per-job LLM limits enforced by the gateway (None = unlimited). A job may spend
    `max_usd` by default, so one runaway job (or one request with a huge `max_tokens`)
    is refused on its own (HTTP 402) and never eats the run's budget."""

    max_tokens: int | None = Field(default=None, gt=0)
    max_usd: float | None = Field(default=DEFAULT_JOB_USD, gt=0)
    max_calls: int | None = Field(default=None, gt=0)
    max_concurrent: int = Field(default=4, gt=0)
    """Calls of one job in flight at once; more are answered HTTP 429 at once."""


class LLMConfig(Section):
    model: str = "anthropic/claude-sonnet-4-5"
    """The agents' model, e.g. `anthropic/claude-sonnet-4-5`, `openai/gpt-5-mini`,
    `openai-compatible/<name>@<base_url>`, `scripted/<script>`, `replay/<run_dir>`."""
    diagnose_model: str | None = None
    """Model for the self-improvement diagnosis; defaults to `model`."""
    timeout_s: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    prices: dict[str, Price] = Field(default_factory=dict)
    """Overrides of the shipped price table, keyed by model string."""
    context_window_tokens: int | None = Field(default=None, ge=1024)
    """The model's context window, told to agents as DGM_LLM_CONTEXT_TOKENS (the seed
    agent trims old tool outputs to stay inside it); None: the agent's default."""
    prompt_caching: bool = True
    """Mark the stable prefix of each request for the provider's prompt cache (Anthropic
    `cache_control` breakpoints); cache reads and writes are booked at their own prices."""
    job_budget: JobBudget = Field(default_factory=JobBudget)


class SandboxConfig(Section):
    backend: Literal["docker", "local", "auto"] = "docker"
    """docker: hardened containers. local: WEAKER (bubblewrap namespaces when installed,
    else plain subprocesses that can reach the network). auto: docker if an engine answers."""
    memory: str = "4g"
    """Memory (and swap) limit of each sandbox, e.g. '4g'."""
    cpus: float = Field(default=1.0, gt=0)
    pids: int = Field(default=512, gt=0)
    disk: str | None = "4g"
    """Size cap of each writable folder (a tmpfs, which also counts against memory)."""

    @field_validator("memory", "disk")
    @classmethod
    def _is_size(cls, value: str | None) -> str | None:
        from dgm.sandbox.spec import parse_size

        if value is not None:
            try:
                parse_size(value)
            except DgmError as exc:
                raise ValueError(f"{exc.message}; {exc.hint}") from None
        return value


class EnvironmentConfig(Section):
    frozen: bool = False
    """Every node runs with the seed's agent environment (`[environment]` of its agent.toml),
    whatever a child writes in its own requirements."""


class BenchmarkConfig(Section):
    name: Literal["polyglot", "swebench"] = "polyglot"
    data: str | None = None
    """Path to the benchmark data (polyglot checkout or SWE-bench JSON/JSONL file)."""
    subset: str = "small"
    """Stage-1 subset: small, medium, full, a language, or @file-of-ids."""
    stage2_subset: str | None = None
    """Optional stage-2 subset, evaluated only past `stage2_threshold` on stage 1."""
    stage2_threshold: float = Field(default=0.4, ge=0, le=1)
    task_timeout_s: int = Field(default=600, gt=0)
    """Wall-clock limit for the agent on one task."""
    test_timeout_s: int = Field(default=300, gt=0)
    """Wall-clock limit for the judge's test command."""
    max_steps: int = Field(default=50, gt=0)
    """The agent's step limit per task."""


class DGMStrategyConfig(Section):
    children_per_generation: int = Field(default=2, gt=0)
    parent_selection: Literal["score_child_prop", "score_prop", "random", "best", "latest"] = (
        "score_child_prop"
    )


class HGMStrategyConfig(Section):
    """The reference (metauto-ai/HGM) by default; each deviation is a switch, off."""

    alpha: float = Field(default=0.6, gt=0, le=1)
    sharpen: float = Field(default=0.0, ge=0, validation_alias=AliasChoices("sharpen", "cooldown"))
    """Deviation (ours, not the reference's `cool_down`): the parent draw from
    Beta(tau a, tau b), tau = 1 + sharpen * evaluations. `cooldown` is the older name."""
    startup_expansions: bool = True
    """As the reference: expand the root min(5, workers**alpha) times before anything else."""
    take_other_action: bool = False
    """Deviation: when the chosen kind of action is impossible, take the other kind at
    once (the reference waits)."""
    skip_barren: bool = False
    """Deviation: apply the run's barren-parent filter (`[strategy] barren_after`)."""
    count_failed_expansions: bool = False
    """Deviation: count expansions that made no child in the expand-or-evaluate rule."""
    count_pending_evals: bool = True
    """As the reference: an evaluation counts from the moment it starts."""
    staged: bool = False
    """Deviation: the benchmark's stage-1/stage-2 gate (the reference has none)."""
    full_evaluation: bool = False
    """Ablation: evaluate each child on all its open tasks first (DGM's schedule)."""
    min_evals_final: int | None = Field(default=None, ge=1)
    """Deprecated (old run.toml files): same as `[strategy.final] min_evals`."""


class GEAStrategyConfig(Section):
    """Group-evolving agents: groups chosen by performance plus novelty share experience."""

    group_size: int = Field(default=3, gt=0)
    novelty_weight: float = Field(default=0.5, ge=0)
    """Weight of novelty (mean cosine distance of per-task success vectors) vs score."""


class AdaptiveStrategyConfig(Section):
    """Our policy: hgm's one-task-at-a-time schedule with an own-score parent choice."""

    alpha: float = Field(default=0.75, gt=0, le=1)
    clade_weight: float = Field(default=0.3, ge=0, le=1)
    """0: parents by their own results only; 1: by their clade's (as hgm)."""
    task_order: Literal["random", "fixed", "informative"] = "informative"
    """Which open task a node is evaluated on next."""
    parent_rule: Literal["thompson", "mean"] = "thompson"
    """Ablation: "mean" expands the best posterior mean (greedy) instead of a draw."""
    fast_track: bool = True
    """Evaluate first the nodes that look better than the current choice but have too
    few results to ship."""
    race: bool = True
    """Race a newcomer whose posterior mean beats what ships now against it until their
    credible bounds separate (it ships, or its upper bound falls below the incumbent's
    lower bound); replaces the fixed `fast_track` window when on."""
    endgame: float = Field(default=20.0, ge=0)
    """With less than endgame x min_evals of `limits.max_evals` left, stop expanding (20 x 3
    = 60 evaluations at the defaults, the 6 x 10 of before issue 27's round six; 0: never;
    no `max_evals`: never)."""
    stay: float = Field(default=0.0, ge=0)
    """A challenger stays one while its posterior mean plus `stay` posterior sds beats
    the incumbent's mean (0: until its mean falls below)."""
    race_order: Literal["thompson", "lower"] = "lower"
    """Which challenger is evaluated first: a Thompson draw among them, or ("lower") the
    one with the best lower credible bound, after those with fewer than `screen` results."""
    screen: int = Field(default=1, ge=0)
    """With `race_order = "lower"`: results a challenger gets before it is ordered by its
    lower bound (newcomers are screened first)."""
    probe: int = Field(default=1, ge=0)
    """Every newcomer gets this many results (running ones count) before any other
    evaluation, whether or not it beats what ships now (0: only challengers are raced)."""
    retry: int = Field(default=2, ge=0)
    """A node with no success yet is probed likewise until it has this many results: one
    failure says little (0: off)."""
    lineage: float = Field(default=0.0, ge=0)
    """Pseudo-results of a prior from the node's lineage (its siblings' pooled rate, else
    its parent's) in the challenger test, where it raises the node's mean (0: off)."""


class FinalChoiceConfig(Section):
    """Which agent a run ships: the best lower credible bound, then optional confirmation."""

    quantile: float = Field(default=0.1, gt=0, lt=1)
    """Rank candidates by this quantile of their posterior (Beta(1 + solved, 1 + failed)
    plus the parent prior)."""
    min_evals: int = Field(default=3, ge=1)
    """A candidate needs this many evaluations, capped at the most any has (10 before round six)."""
    prior_strength: float = Field(default=4.0, ge=0)
    """Pseudo-results at the posterior mean of the node's parent's own results that a
    node's posterior starts with (0: the flat Beta(1, 1) of before): most children measure
    like their parent, so a lucky 3/3 child of a 0.3 parent does not ship."""
    confirm_top_k: int = Field(default=0, ge=0)
    """After the search, evaluate this many top candidates on held-out tasks (0: off)."""
    held_out_fraction: float = Field(default=0.2, ge=0, lt=1)
    """Share of the benchmark's tasks held out of the search for confirmation."""


class StrategyConfig(Section):
    name: Literal["dgm", "hgm", "greedy", "random", "gea", "adaptive"] = "hgm"
    dgm: DGMStrategyConfig = Field(default_factory=DGMStrategyConfig)
    hgm: HGMStrategyConfig = Field(default_factory=HGMStrategyConfig)
    gea: GEAStrategyConfig = Field(default_factory=GEAStrategyConfig)
    adaptive: AdaptiveStrategyConfig = Field(default_factory=AdaptiveStrategyConfig)
    final: FinalChoiceConfig = Field(default_factory=FinalChoiceConfig)
    barren_after: int = Field(default=3, gt=0)
    """A parent whose last N expansions produced nothing new (no child, or a child whose
    code some node already has) is not expanded again until its code fails a new task.
    Every strategy but hgm (there: `[strategy.hgm] skip_barren`, off as in the reference)."""


class ExpandConfig(Section):
    diagnosis_sees_tests: bool = False
    """DGM shows the diagnosis model the hidden test sources; by default we show only
    test names and the test output with hidden test source redacted
    (dgm/jobs/hidden_redaction.py)."""
    smoke_test: bool = True
    """Run the child's own smoke test before spending on its evaluation."""
    max_steps: int = Field(default=80, gt=0)
    timeout_s: int = Field(default=1800, gt=0)
    harvest: bool = True
    """Offer a parent a `harvest` expansion (no LLM call) when its solved tasks left runtime
    tools its codebase lacks and it declares `[tools] dir` (dgm/jobs/expand/harvest.py)."""


class SelfImproveConfig(Section):
    """Who improves an agent: `dgm`, the built-in procedure (target choice, diagnosis,
    self-edit: dgm/jobs/expand/builtin.py), or `agent`, the parent's own `improve` command
    (hyperagent mode: dgm/jobs/expand/improve.py; an agent without one falls back to dgm)."""

    mode: Literal["dgm", "agent"] = "dgm"


class ExecutorConfig(Section):
    kind: Literal["thread", "process", "ray"] = "thread"
    """Where jobs run: threads of the dgm process, spawned worker processes, or Ray tasks
    on the nodes of a Ray cluster."""
    address: str | None = None
    """Ray: the cluster to join (`HOST:6379`, `ray://HOST:10001`); default: the one
    `ray start` left on this machine."""
    gateway_host: str = "127.0.0.1"
    """Ray: where the LLM gateway listens for the workers' relays (`0.0.0.0` for a cluster
    of several machines: calls need a job's token)."""
    slot_resource: str = "dgm_slot"
    """Ray: the custom resource a node offers per sandbox it runs at once."""
    max_retries: int = Field(default=3, ge=0)
    """Ray: how often a job whose node died runs again elsewhere."""


class StopLimitsConfig(Section):
    """run.toml's `[limits]`: when a run stops (evaluations, nodes, expansions, dollars,
    hours)."""

    max_evals: int | None = Field(default=None, gt=0)
    max_nodes: int | None = Field(default=None, gt=0)
    max_expansions: int | None = Field(default=None, gt=0)
    """Expansion attempts, failed ones and re-runs after a crash included."""
    budget_usd: float | None = Field(default=None, gt=0)
    max_hours: float | None = Field(default=None, gt=0)
    count_pauses: bool = False
    """Count the time the run stood paused for an outage against `max_hours`."""
    max_requeues: int = Field(default=3, ge=0)
    """A job re-queued for an outage more often than this is scored as it ended."""


class RunConfig(Section):
    name: str = "run"
    seed: int = 0
    workers: int = Field(default=2, gt=0)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    benchmark: BenchmarkConfig = Field(default_factory=BenchmarkConfig)
    strategy: StrategyConfig = Field(default_factory=StrategyConfig)
    expand: ExpandConfig = Field(default_factory=ExpandConfig)
    self_improve: SelfImproveConfig = Field(default_factory=SelfImproveConfig)
    limits: StopLimitsConfig = Field(default_factory=StopLimitsConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)

    # -- (de)serialisation -------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> RunConfig:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(describe_validation_error(exc, cls, source), CONFIG_FIX) from None

    @classmethod
    def load(cls, path: str | Path) -> RunConfig:
        return cls.from_dict(read_toml(path), source=str(path))

    def to_toml(self) -> str:
        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))

    def with_overrides(self, overrides: dict[str, Any]) -> RunConfig:
        """A copy with dotted-path overrides applied, e.g. {"limits.max_evals": 10}."""
        data = self.model_dump(mode="json", exclude_none=True)
        for dotted, value in overrides.items():
            if value is None:
                continue
            node = data
            *parents, leaf = dotted.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = value
        return RunConfig.from_dict(data, source="command line")

    def with_price(self, model: str, price: Price | None) -> RunConfig:
        """A copy whose price table also prices `model` (`--price`); None: unchanged.
        Not a dotted override: model strings hold dots (gpt-4.1, host names)."""
        if price is None:
            return self
        data = self.model_dump(mode="json", exclude_none=True)
        prices = data.setdefault("llm", {}).setdefault("prices", {})
        prices[model] = price.model_dump(mode="json", exclude_none=True)
        return RunConfig.from_dict(data, source="--price")


PRICE_FORMAT = "INPUT,OUTPUT in dollars per million tokens, e.g. 3,15 (0,0: a free local server)"


def parse_price(text: str) -> Price:
    """`--price INPUT,OUTPUT` ($/Mtok); `0,0` is allowed on purpose (a local server)."""
    parts = [part.strip() for part in text.split(",")]
    try:
        values = [float(part) for part in parts]
    except ValueError:
        values = []
    if len(values) != 2 or any(v < 0 or v != v or v == float("inf") for v in values):
        raise ConfigError(f"--price {text!r} is not two prices", f"give {PRICE_FORMAT}")
    return Price(input=values[0], output=values[1])


TOML_FIX = "correct the TOML at that place; `dgm init` writes a complete run.toml to compare"
CONFIG_FIX = "correct that field; README.md's section Configuration lists every field"


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file's table, or a ConfigError naming the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist", "check the path")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", TOML_FIX) from None


def describe_validation_error(exc: ValidationError, model: type[BaseModel], source: str) -> str:
    """One line per problem, naming the dotted field and what is allowed there."""
    lines = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        field = ".".join(loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            allowed = _fields_at(model, loc[:-1])
            line = f"{source}: unknown field `{field}`; allowed here: {', '.join(allowed)}"
            close = difflib.get_close_matches(loc[-1], allowed, n=1)
            lines.append(f"{line}; did you mean `{close[0]}`?" if close else line)
        else:
            lines.append(f"{source}: invalid `{field}`: {err['msg']} (got {err.get('input')!r})")
    return "; ".join(lines)


def _fields_at(model: type[BaseModel], path: list[str]) -> list[str]:
    current: Any = model
    for part in path:
        field = current.model_fields.get(part) if hasattr(current, "model_fields") else None
        if field is None:
            return []
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            current = annotation
        else:
            return []
    return sorted(current.model_fields)
