"""Jobs: pure functions of serialisable inputs that the executors run.

agent_run.py   run an agent codebase's `solve` in a sandbox, take the diff
evaluate.py    the eval job: agent container, then a fresh judge container
expand.py      the meta loop's expand job (reuses agent_run)
"""
