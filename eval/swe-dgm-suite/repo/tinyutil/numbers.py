"""Number formatting helpers."""

_NUMERALS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


def to_roman(number: int) -> str:
    """Roman numeral of 1..3999."""
    if not 1 <= number <= 3999:
        raise ValueError(f"roman numerals cover 1..3999, got {number}")
    out = []
    for value, letters in _NUMERALS:
        count, number = divmod(number, value)
        out.append(letters * count)
    return "".join(out)


def clamp(value: float, low: float, high: float) -> float:
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(value, high))
