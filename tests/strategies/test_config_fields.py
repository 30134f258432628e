"""The new run.toml fields are validated like the others: one line naming the field."""

import pytest

from dgm.config import RunConfig
from dgm.errors import ConfigError
from dgm.strategies import make_strategy


@pytest.mark.parametrize(
    "table, message",
    [
        ({"gea": {"group_size": 0}}, "strategy.gea.group_size"),
        ({"gea": {"novelty": 1}}, "unknown field `strategy.gea.novelty`; allowed here: group_size"),
        ({"final": {"quantile": 1.5}}, "strategy.final.quantile"),
        ({"final": {"min_evals": 0}}, "strategy.final.min_evals"),
        ({"final": {"held_out_fraction": 1.0}}, "strategy.final.held_out_fraction"),
        ({"final": {"confirm_top_k": -1}}, "strategy.final.confirm_top_k"),
        ({"hgm": {"staged": "maybe"}}, "strategy.hgm.staged"),
        ({"adaptive": {"task_order": "alphabetical"}}, "strategy.adaptive.task_order"),
        ({"name": "mcts"}, "strategy.name"),
    ],
)
def test_bad_strategy_fields_are_named(table, message):
    with pytest.raises(ConfigError) as err:
        RunConfig.from_dict({"strategy": table}, source="run.toml")
    assert message in err.value.message


def test_fields_reach_the_strategy_and_round_trip_through_toml():
    config = RunConfig.from_dict(
        {
            "strategy": {
                "name": "gea",
                "gea": {"group_size": 4},
                "final": {"quantile": 0.2, "min_evals": 6},
            }
        }  # fmt: skip
    )
    again = RunConfig.from_dict(__import__("tomllib").loads(config.to_toml()))
    assert again == config
    strategy = make_strategy(again.strategy, seed=0)
    assert strategy.group_size == 4
    assert (strategy.final.quantile, strategy.final.min_evals) == (0.2, 6)
    # The deprecated hgm spelling of min_evals still loads (old run.toml files) and wins.
    old = RunConfig.from_dict({"strategy": {"hgm": {"min_evals_final": 5}}})
    assert make_strategy(old.strategy, seed=0).final.min_evals == 5


def test_hgm_cooldown_is_read_as_sharpen_and_hgm_deviations_are_off_by_default():
    old = RunConfig.from_dict({"strategy": {"hgm": {"cooldown": 0.5}}})
    assert old.strategy.hgm.sharpen == 0.5
    strategy = make_strategy(RunConfig().strategy, seed=0, workers=8)
    assert (strategy.sharpen, strategy.skip_barren, strategy.take_other_action) == (0, False, False)
    assert strategy.startup and strategy.workers == 8
