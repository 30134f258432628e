"""`dgm eval`'s library: one agent on many tasks (evaluate_agent.py) through the loop's
scheduler and an executor, and what the command needs first (prepare.py: the agent to
evaluate, a gateway), and `dgm audit-judge` (audit_judge.py: the hostile reference agent,
one attack class per copy, through the same eval jobs). Sits above the loop, beside
`simulate/`: the commands call it."""
