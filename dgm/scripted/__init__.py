"""The scripted model: a deterministic test double behind the gateway (dry run, tests)."""
