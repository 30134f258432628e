"""Actions become jobs. `factory.py`: `JobFactory`, what the loop needs from the world (the
task plan, eval and expand payloads, settling results); `sandbox_jobs.py`: `SandboxJobs`, the
real one (Docker jobs bound to the gateway); `from_actions.py`: `ActionJobs`, a strategy's
action -> a job id, a ledger row and the `Work` an executor runs."""
