"""The run store: a run directory with run.toml, archive.git, run.sqlite and logs/."""

from dgm.store.best import best_node
from dgm.store.records import Evaluation, Job, Node, Score
from dgm.store.run import Run

__all__ = ["Evaluation", "Job", "Node", "Run", "Score", "best_node"]
