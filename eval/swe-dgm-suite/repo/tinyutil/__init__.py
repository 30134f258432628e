"""tinyutil: small date, number and text helpers (the repository of dgm's SWE-format suite)."""
