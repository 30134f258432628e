import pytest
from tinyutil.numbers import clamp, to_roman


def test_roman_additive():
    assert to_roman(3) == "III"
    assert to_roman(2023) == "MMXXIII"


def test_roman_range():
    with pytest.raises(ValueError):
        to_roman(0)


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
