"""A synthetic self-improvement landscape: hidden abilities, mutation, metaproductivity.

Each agent has a hidden ability `theta` (logit scale) and a hidden metaproductivity `m`.
Task t has a difficulty d_t; the agent solves it with probability sigmoid(theta - d_t), and
its true solve rate is the mean of that over all tasks (stage 1 and stage 2).

A child of parent (theta, m):
- fails outright (no valid child) with probability `failure_rate`;
- otherwise improves with probability min(0.95, p_improve * m), by an exponential jump of
  mean `improve_scale`; else stays equal with probability `p_same`; else declines by
  |Normal(0, decline_sd)|. So most children are worse or equal, with a heavy tail of
  improvements whose odds grow with the parent's metaproductivity. (Scaling the jump size
  with m too made positive coupling run away: bigger jumps, bigger m, bigger jumps.)
- inherits log m' = (1 - reversion) log m + metaprod_sd * Normal(0, 1) + coupling * dtheta,
  clipped to [-4, 4] so m stays within a factor of about 55 of 1.
  `coupling` ties a child's change in score to its change in metaproductivity: > 0, the
  moves that raise the score also make better parents (aligned); 0, the two are
  independent (the score says nothing about the descendants); < 0, score gains cost
  metaproductivity (deceptive).

Two optional mechanisms (off in the first four presets):
- Transferable traits (`traits` > 0): an improvement is the discovery of one of `traits`
  skills, each worth `trait_gain` of ability; a child whose expansion was part of a group
  (GEA's `Expand(parent, group)`) also adopts each skill a group member has and it lacks
  with probability `p_transfer`: the experience that can spread between branches.
- A noisy judge (`flaky_rate` > 0): that share of evaluations reports a fair coin instead
  of the agent's real result (flaky tests); true rates are unaffected.

Three more, for the held-out landscapes (issue 27; none is in the six presets):
- Heavy-tailed gains (`improve_tail` > 0): an improvement's jump is `improve_scale` times
  a Lomax (Pareto II) draw of that shape: mostly tiny, rarely huge.
- A deceptive clade (`trap_share` > 0): each child of the seed founds a trap clade with
  that probability; in it improvements are `trap_boost` times as likely but the ability
  never passes the rate `trap_ceiling`: early gains, then a wall.
- Specialists (`task_groups` > 0): tasks fall in that many groups and an improvement
  raises the ability on one group only (by twice the jump); declines hit every group.
- `budget`: the landscape's own evaluation budget (None: the experiment's).

One more (issue 27, round four):
- Agent-by-task effects (`interaction_sd` > 0): each agent also has its own effect on
  each task, Normal(0, `interaction_sd`) on the logit scale; a child keeps its parent's
  and redraws each with probability `interaction_redraw`. Two agents then disagree on
  which tasks are hard, so task difficulty no longer cancels in a paired comparison and
  the pooled solve rate is a worse guide to an informative task.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dgm.strategies.state import ROOT, NodeId, TaskPlan

LOG_METAPROD_BOUND = 4.0


class LandscapeParams(BaseModel):
    """Every knob of a landscape; presets are named instances, a TOML file makes more."""

    model_config = ConfigDict(extra="forbid")

    description: str = "custom landscape"
    stage1_tasks: int = Field(default=10, gt=0)
    stage2_tasks: int = Field(default=40, ge=0)
    stage2_threshold: float = Field(default=0.4, ge=0, le=1)
    difficulty_sd: float = Field(default=1.5, ge=0)
    """Spread of task difficulties (logit scale)."""
    seed_rate: float = Field(default=0.3, gt=0, lt=1)
    """True solve rate of the seed agent."""
    p_improve: float = Field(default=0.2, ge=0, le=1)
    improve_scale: float = Field(default=0.5, gt=0)
    p_same: float = Field(default=0.2, ge=0, le=1)
    decline_sd: float = Field(default=0.4, ge=0)
    metaprod_sd: float = Field(default=0.5, ge=0)
    metaprod_reversion: float = Field(default=0.1, ge=0, le=1)
    coupling: float = 0.0
    failure_rate: float = Field(default=0.15, ge=0, lt=1)
    """Fraction of expansions that yield no valid child."""
    expansion_cost: float = Field(default=1.0, ge=0)
    """What an expansion costs, in evaluation-equivalents, against the budget."""
    eval_hours: float = Field(default=0.25, gt=0)
    expand_hours: float = Field(default=1.0, gt=0)
    duration_sd: float = Field(default=0.5, ge=0)
    """Log-normal spread of job durations around their means."""
    traits: int = Field(default=0, ge=0)
    """Number of transferable skills (0: improvements are plain ability jumps)."""
    trait_gain: float = Field(default=0.4, ge=0)
    p_transfer: float = Field(default=0.5, ge=0, le=1)
    """Chance a child adopts each skill of its group's members that it lacks."""
    flaky_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of evaluations whose reported result is a fair coin."""
    improve_tail: float = Field(default=0.0, ge=0)
    """0: exponential jumps; > 0: Lomax jumps of this shape (heavy-tailed)."""
    trap_share: float = Field(default=0.0, ge=0, le=1)
    trap_boost: float = Field(default=3.0, ge=1)
    trap_ceiling: float = Field(default=0.45, gt=0, lt=1)
    task_groups: int = Field(default=0, ge=0)
    interaction_sd: float = Field(default=0.0, ge=0)
    """Spread of each agent's own per-task effects (logit scale; 0: none)."""
    interaction_redraw: float = Field(default=0.3, ge=0, le=1)
    """Chance a child redraws each of its parent's per-task effects."""
    budget: float | None = Field(default=None, gt=0)
    """Evaluation-equivalents a run gets on this landscape (None: the experiment's)."""
    target: float = Field(default=0.5, gt=0, lt=1)
    """Default true solve rate a strategy must ship to count as reaching the target."""


def _sigmoid(x: np.ndarray | float) -> np.ndarray | float:
    return 1.0 / (1.0 + np.exp(-x))


class World:
    """One draw of a landscape: the tasks, the seed, and every agent made so far.

    Three independent RNG streams (tasks and seed, mutations, evaluation outcomes) come from
    `seed`, so two strategies run on the same seed face the same tasks and seed agent.
    """

    def __init__(self, params: LandscapeParams, seed: int) -> None:
        self.params = params
        world_ss, mutation_ss, eval_ss = np.random.SeedSequence(seed).spawn(3)
        world_rng = np.random.default_rng(world_ss)
        self._mutation_rng = np.random.default_rng(mutation_ss)
        self._eval_rng = np.random.default_rng(eval_ss)
        n_tasks = params.stage1_tasks + params.stage2_tasks
        self.task_ids = [f"t{i:03d}" for i in range(n_tasks)]
        self.difficulty = dict(
            zip(self.task_ids, world_rng.normal(0.0, params.difficulty_sd, n_tasks), strict=True)
        )
        self._d = np.array([self.difficulty[t] for t in self.task_ids])
        # Per-task effects: drawn from the world stream for the seed (same for every
        # strategy), so the seed's rate is set with them in place.
        self.interaction: dict[NodeId, np.ndarray] = {
            ROOT: world_rng.normal(0.0, params.interaction_sd, n_tasks)
            if params.interaction_sd
            else np.zeros(n_tasks)
        }
        self.theta: dict[NodeId, float] = {ROOT: self._theta_for_rate(params.seed_rate)}
        self.log_metaprod: dict[NodeId, float] = {ROOT: 0.0}
        self.parent: dict[NodeId, NodeId | None] = {ROOT: None}
        self.skills: dict[NodeId, frozenset[int]] = {ROOT: frozenset()}
        self._true_rate: dict[NodeId, float] = {}
        groups = max(1, params.task_groups)
        self._group = np.arange(n_tasks) % groups  # the group of each task
        self._task_index = {t: i for i, t in enumerate(self.task_ids)}
        self.offsets: dict[NodeId, np.ndarray] = {ROOT: np.zeros(groups)}
        self.trap: dict[NodeId, bool] = {ROOT: False}
        self._trap_theta = self._theta_for_rate(params.trap_ceiling)

    def plan(self) -> TaskPlan:
        s1 = self.params.stage1_tasks
        return TaskPlan(
            tuple(self.task_ids[:s1]), tuple(self.task_ids[s1:]), self.params.stage2_threshold
        )

    # -- hidden truth ---------------------------------------------------------------------
    def true_rate(self, node: NodeId) -> float:
        rate = self._true_rate.get(node)
        if rate is None:
            ability = self.theta[node] + self.offsets[node][self._group] + self.interaction[node]
            rate = float(np.mean(_sigmoid(ability - self._d)))
            self._true_rate[node] = rate
        return rate

    def solve_probability(self, node: NodeId, task: str) -> float:
        i = self._task_index[task]
        ability = self.theta[node] + self.offsets[node][self._group[i]] + self.interaction[node][i]
        return float(_sigmoid(ability - self._d[i]))

    def metaproductivity(self, node: NodeId) -> float:
        return math.exp(self.log_metaprod[node])

    # -- jobs -----------------------------------------------------------------------------
    def expand(self, parent: NodeId, group: tuple[NodeId, ...] = ()) -> NodeId | None:
        """Make a child of `parent` (improved alongside `group`); its id, or None when the
        expansion fails."""
        p, rng = self.params, self._mutation_rng
        if rng.random() < p.failure_rate:
            return None
        m = self.metaproductivity(parent)
        skills = set(self.skills[parent])
        trap = self.trap[parent] or (parent == ROOT and rng.random() < p.trap_share)
        offsets = self.offsets[parent].copy()
        if rng.random() < min(0.95, p.p_improve * m * (p.trap_boost if trap else 1.0)):
            if p.traits:
                unknown = [k for k in range(p.traits) if k not in skills]
                if unknown:
                    skills.add(int(rng.choice(unknown)))
                delta = 0.0
            elif p.improve_tail:
                delta = p.improve_scale * float(rng.pareto(p.improve_tail))
            else:
                delta = float(rng.exponential(p.improve_scale))
            if p.task_groups and delta:  # a specialist's gain: one group, twice the jump
                offsets[int(rng.integers(p.task_groups))] += 2.0 * delta
                delta = 0.0
        elif rng.random() < p.p_same:
            delta = 0.0
        else:
            delta = -abs(float(rng.normal(0.0, p.decline_sd)))
        for member in group:
            for k in sorted(self.skills.get(member, frozenset()) - skills):
                if rng.random() < p.p_transfer:
                    skills.add(k)
        delta += p.trait_gain * (len(skills) - len(self.skills[parent]))
        child = len(self.theta)
        theta = self.theta[parent] + delta
        self.theta[child] = min(theta, max(self._trap_theta, self.theta[parent])) if trap else theta
        self.offsets[child] = offsets
        self.interaction[child] = self._inherit_interaction(parent)
        self.trap[child] = trap
        self.skills[child] = frozenset(skills)
        log_m = (
            (1.0 - p.metaprod_reversion) * self.log_metaprod[parent]
            + p.metaprod_sd * float(rng.normal())
            + p.coupling * delta
        )
        self.log_metaprod[child] = min(LOG_METAPROD_BOUND, max(-LOG_METAPROD_BOUND, log_m))
        self.parent[child] = parent
        return child

    def evaluate(self, node: NodeId, task: str) -> bool:
        real = bool(self._eval_rng.random() < self.solve_probability(node, task))
        if self.params.flaky_rate and self._eval_rng.random() < self.params.flaky_rate:
            return bool(self._eval_rng.random() < 0.5)
        return real

    # -- helpers --------------------------------------------------------------------------
    def _inherit_interaction(self, parent: NodeId) -> np.ndarray:
        effects = self.interaction[parent]
        sd = self.params.interaction_sd
        if not sd:
            return effects
        rng = self._mutation_rng
        redraw = rng.random(len(effects)) < self.params.interaction_redraw
        return np.where(redraw, rng.normal(0.0, sd, len(effects)), effects)

    def _theta_for_rate(self, rate: float) -> float:
        """The ability whose mean solve rate over these tasks is `rate` (bisection), with
        the seed's per-task effects (none unless `interaction_sd`)."""
        lo, hi = -20.0, 20.0
        effects = self.interaction[ROOT]
        for _ in range(80):
            mid = (lo + hi) / 2
            if np.mean(_sigmoid(mid + effects - self._d)) < rate:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2
