"""Our policy: hgm's schedule, and a good newcomer recognised as fast as it was made.

The ablation (dgm/simulate/README.md) found that hgm's lead over dgm comes mostly from its
evaluation *schedule* (one task at a time; a node earns more evaluations only by being
drawn; children made at the rate N^alpha). It also found that *recognising* a good agent,
not making one, is what costs: a good child waits for the evaluations that would let it
ship. This policy keeps hgm's schedule and changes:

- Expand when N^alpha >= (nodes - 1) + pending expansions (N = evaluations started), with
  alpha = 0.75 instead of 0.6: more, cheaper looks at children. No start-up burst.
- Parent: Thompson sampling on Beta(1 + s, 1 + f) over nodes with an own success, where
  s = own + clade_weight * (clade - own) (likewise f): 0.3 of the clade's evidence beyond
  the node's own, instead of hgm's all of it (`parent_rule = "mean"`: an ablation).
- Probe (`probe` = 1, `retry` = 2): every newcomer gets one result before any other
  evaluation, whatever the incumbent (running evaluations count), and a node with no
  success yet a second one: a newborn's Beta(1, 1) mean of 0.5 would never race an
  incumbent above 0.5, a node with no success can never be a parent, and one failure
  says little (a 0.55 agent fails almost half its tasks).
- Racing (`race`): a node whose posterior mean beats the one that would ship now (the
  incumbent) is a challenger while its upper credible bound is above the incumbent's
  lower bound and it does not ship yet; challengers are evaluated next, on the tasks the
  incumbent has results on first (a paired comparison), until the bounds separate: it
  ships, or its upper bound falls below the incumbent's lower bound. Among them
  (`race_order = "lower"`, `screen` = 1) each first gets a result, then the one closest
  to shipping (best lower bound) goes first, so a good newcomer ships or drops out
  before the next is looked at. (`race_order = "thompson"`: a draw among them;
  `fast_track`: the earlier fixed window up to `min_evals`, when `race` is off.)
- Hysteresis (`stay`, 0 by default; 1 in issue 27's round two): a node stays a
  challenger while its posterior mean plus `stay` posterior sds beats the incumbent's
  mean. Measured and dropped (dgm/simulate/README.md): racing only the top challenger,
  evaluating the incumbent too (LUCB), a prior for a child from its parent (in the race
  or in the Thompson draw), no expansions while a challenger races, the probe on a task
  the parent failed: none beat this on mismatch. Nor did `lineage` (off by default): a
  node's mean in the challenger test with pseudo-results at its siblings' pooled rate.
- The task: the node's open task whose pooled solve rate over all nodes is nearest 0.5
  (`task_order = "informative"`). No stage gate.
- Endgame (`endgame` = k, when the run has an evaluation budget): with less than
  k x `min_evals` evaluation-equivalents left, no more expansions (a child made then
  could not be recognised in time).
- Ships by the one shipping rule (final.py), as every strategy; the race's means and
  bounds are that rule's posterior (its parent prior included, issue 27 round six), so a
  challenger stops exactly when the rule ships it or no longer could.
"""

from __future__ import annotations

import numpy as np

from dgm.scoring import beta_quantile
from dgm.strategies.actions import Evaluate, Expand
from dgm.strategies.hgm import HGMStrategy
from dgm.strategies.state import NodeId, SearchState


class AdaptiveStrategy(HGMStrategy):
    name = "adaptive"

    def __init__(
        self,
        rng: np.random.Generator,
        alpha: float = 0.6,
        clade_weight: float = 0.0,
        task_order: str = "random",
        fast_track: bool = False,
        parent_rule: str = "thompson",
        race: bool = False,
        stay: float = 0.0,
        endgame: float = 0.0,
        eval_budget: float | None = None,
        expansion_cost: float = 0.0,
        race_order: str = "thompson",
        screen: int = 0,
        probe: int = 0,
        retry: int = 0,
        lineage: float = 0.0,
    ) -> None:
        super().__init__(rng, alpha=alpha, skip_barren=True, startup=False, take_other_action=True)
        self.parent_rule = parent_rule
        self.fast_track = fast_track
        self.clade_weight = clade_weight
        self.task_order = task_order
        self.race = race
        self.stay = stay
        self.endgame = endgame
        self.eval_budget = eval_budget
        self.expansion_cost = expansion_cost
        self.race_order = race_order
        self.screen = screen
        self.probe = probe
        self.retry = retry
        self.lineage = lineage

    def wants_expansion(self, state: SearchState) -> bool:
        """hgm's rule, except in the endgame: with less than `endgame` x min_evals of the
        evaluation budget left, a new child could not be recognised in time, so the rest
        goes to telling the candidates apart."""
        if self.endgame and self.eval_budget is not None:
            expansions = state.size - 1 + state.total_failed_expansions
            committed = (
                state.total_evals
                + state.total_pending_evals
                + self.expansion_cost * (expansions + state.total_pending_expansions)
            )
            if self.eval_budget - committed < self.endgame * self.final.min_evals:
                return False
        return super().wants_expansion(state)

    def challengers(self, state: SearchState, idx: np.ndarray) -> tuple[np.ndarray, NodeId | None]:
        """(mask over `idx` of the nodes racing the incumbent, the incumbent). Means and
        bounds are the shipping rule's posterior (its parent prior included), so a node
        stops racing exactly when the rule would ship it or could no longer."""
        incumbent = self.final.choose(state)
        if incumbent is None:
            return np.zeros(len(idx), dtype=bool), None
        solved, failed = state.own_record()
        pa, pb = self.final.posterior(state)
        s, f, a, b = solved[idx], failed[idx], pa[idx], pb[idx]
        i = state.index(incumbent)
        ps, pf = self.lineage_prior(state, idx)
        mean = (a + ps) / (a + b + ps + pf)
        # Hysteresis: a node stays a challenger while its mean plus `stay` posterior sds
        # (normal approximation) is above the incumbent's mean: a few unlucky results
        # do not drop a good newcomer.
        upper = mean + self.stay * np.sqrt(mean * (1.0 - mean) / (1.0 + a + b))
        better = (upper > pa[i] / (pa[i] + pb[i])) & (idx != i)
        if not self.race:  # the fixed window: until the node has enough results to ship
            return better & (s + f < self.final.min_evals), incumbent
        q = self.final.quantile
        floor = beta_quantile(float(pa[i]), float(pb[i]), q)
        bar = min(self.final.min_evals, int((solved + failed).max()))  # the rule's cap
        for k in np.flatnonzero(better):
            ak, bk = float(a[k]), float(b[k])
            separated = beta_quantile(ak, bk, 1.0 - q) < floor
            ships = s[k] + f[k] >= bar and beta_quantile(ak, bk, q) > floor
            better[k] = not (separated or ships)
        return better, incumbent

    def choose_evaluation(self, state: SearchState) -> Evaluate | None:
        idx = np.flatnonzero(state.awaiting_evaluation_column())
        if len(idx) == 0:
            return None
        solved, failed = state.own_record()
        s, f = solved[idx], failed[idx]
        draws = self.rng.beta(1.0 + s, 1.0 + f)
        incumbent = None
        if self.race or self.fast_track:
            racing, incumbent = self.challengers(state, idx)
            if racing.any():
                pa, pb = self.final.posterior(state)
                order = self.race_priority(s, f, draws, pa[idx], pb[idx])
                draws = np.where(racing, order + 1.0, draws)
        if self.probe or self.retry:
            # Every newcomer gets `probe` results (running ones count) before any other
            # evaluation, whatever the incumbent: a newborn's Beta(1, 1) mean is 0.5, so
            # once the incumbent's mean passes 0.5 the race would never look at it, and a
            # node with no success can never be a parent. Above the race's +1..+3.
            started = s + f + state.pending_evals_column()[idx]
            # One failure is weak evidence (a 0.55 agent fails almost half its tasks): a
            # node with no success yet is probed until it has `retry` results.
            probed = (started < self.probe) | ((s == 0) & (started < self.retry))
            draws = np.where(probed, draws + 3.0, draws)
        node = state.node_id(int(idx[np.argmax(draws)]))
        return Evaluate(node, self.choose_task(state, node, incumbent))

    def lineage_prior(self, state: SearchState, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(pseudo-successes, pseudo-failures) per node of `idx` for the challenger test:
        `lineage` results at the rate pooled over its siblings' clades (what its parent's
        other children measured), shrunk towards its parent's own posterior mean by 2
        pseudo-results. Good parents are heritable (metaproductivity), so a 1/2 child of a
        parent whose children measured well may race a lucky incumbent at once. It only
        promotes: where it would lower the node's own mean it is left out (measured: a
        prior both ways, also in the Thompson draw, shipped later). Zeros when off."""
        ps, pf = np.zeros(len(idx)), np.zeros(len(idx))
        if not self.lineage:
            return ps, pf
        own_s, own_f = state.own_record()
        clade_s, clade_f = state.clade_record()
        for k, i in enumerate(idx):
            parent = state.parent(state.node_id(int(i)))
            if parent is None:
                continue
            p = state.index(parent)
            sib_s = clade_s[p] - own_s[p] - clade_s[i]
            sib_f = clade_f[p] - own_f[p] - clade_f[i]
            parent_mean = (1.0 + own_s[p]) / (2.0 + own_s[p] + own_f[p])
            m = (sib_s + 2.0 * parent_mean) / (sib_s + sib_f + 2.0)
            if m > (1.0 + own_s[i]) / (2.0 + own_s[i] + own_f[i]):  # it only promotes
                ps[k], pf[k] = self.lineage * m, self.lineage * (1.0 - m)
        return ps, pf

    def race_priority(
        self, s: np.ndarray, f: np.ndarray, draws: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> np.ndarray:
        """Order among challengers: a Thompson draw, or ("lower") first each challenger with
        fewer than `screen` results (by draw), then the one closest to shipping (the best
        lower bound of the rule's posterior Beta(a, b)): it ships or drops out before the
        next is looked at, instead of a good newcomer sharing the workers with a dozen
        fresh ones."""
        if self.race_order == "lower":
            q = self.final.quantile
            lower = np.array(
                [beta_quantile(float(x), float(y), q) for x, y in zip(a, b, strict=True)]
            )
            return np.where(s + f < self.screen, 1.0 + draws, lower)
        return draws

    def choose_task(self, state: SearchState, node: NodeId, incumbent: NodeId | None) -> str:
        tasks = state.unevaluated_tasks(node)
        if self.race and incumbent is not None and incumbent != node:
            shared = set(state.results(incumbent))
            paired = [t for t in tasks if t in shared]
            tasks = paired or tasks
        if self.task_order == "fixed":
            return tasks[0]
        if self.task_order == "informative":
            p = np.array([(1.0 + a) / (2.0 + a + b) for a, b in map(state.task_record, tasks)])
            return tasks[int(np.argmax(p * (1.0 - p)))]
        return tasks[int(self.rng.integers(len(tasks)))]

    def expansion_posterior(self, state: SearchState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        idx = self.parent_candidates(state)
        w = self.clade_weight
        own_s, own_f = state.own_record()
        clade_s, clade_f = state.clade_record()
        s = own_s[idx] + w * (clade_s[idx] - own_s[idx])
        f = own_f[idx] + w * (clade_f[idx] - own_f[idx])
        return idx, 1.0 + s, 1.0 + f

    def choose_expansion(self, state: SearchState) -> Expand | None:
        idx, a, b = self.expansion_posterior(state)
        if len(idx) == 0:
            return None
        scores = a / (a + b) if self.parent_rule == "mean" else self.rng.beta(a, b)
        return Expand(state.node_id(int(idx[np.argmax(scores)])))
