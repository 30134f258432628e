"""The seed coding agent: an LLM loop with a few tools, standard library only.

Modules: `cli` (command line), `loop` (the agent loop), `llm` (gateway client),
`trajectory` (the run record), `tools/` (one module per tool).
"""
