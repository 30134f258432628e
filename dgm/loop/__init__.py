"""The meta loop: scheduler, actions becoming jobs, preflight and stop rules."""
