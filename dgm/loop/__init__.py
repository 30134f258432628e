"""The meta loop: scheduler, executors, job adapters, preflight and stop rules."""
