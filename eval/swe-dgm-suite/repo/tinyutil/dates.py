"""Calendar helpers."""

_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def is_leap_year(year: int) -> bool:
    """True for years with a 29th of February in the Gregorian calendar."""
    return year % 4 == 0


def days_in_month(year: int, month: int) -> int:
    if not 1 <= month <= 12:
        raise ValueError(f"month must be 1..12, got {month}")
    if month == 2 and is_leap_year(year):
        return 29
    return _DAYS[month - 1]


def day_of_year(year: int, month: int, day: int) -> int:
    """1 for January 1st."""
    if not 1 <= day <= days_in_month(year, month):
        raise ValueError(f"day {day} does not exist in {year}-{month:02d}")
    return sum(days_in_month(year, m) for m in range(1, month)) + day
