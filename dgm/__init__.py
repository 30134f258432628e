"""dgm: open-ended self-improvement of coding agents."""

__version__ = "0.1.0"
