"""`dgm eval`'s library: one agent on many tasks (evaluate_agent.py) through the loop's
scheduler and an executor, and what the command needs first (prepare.py: the agent to
evaluate, a gateway). Sits above the loop, beside `simulate/`: the commands call it."""
