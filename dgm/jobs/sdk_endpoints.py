"""Standard SDK endpoints inside a sandbox: the job's gateway access as plain HTTP on the
container's loopback, announced the way the official SDKs and litellm read it.

The agent's command runs after `PRELUDE`, which puts the agent environment's Debian
packages (`[environment] apt`) first on PATH, their libraries (only ones the image lacks) on
LD_LIBRARY_PATH, and (when the job has a gateway socket)
starts `llm_forward_script.py` on 127.0.0.1:LOOPBACK_PORT and exports:

| variable | value |
| --- | --- |
| `OPENAI_BASE_URL`, `OPENAI_API_BASE` | `http://127.0.0.1:41100/v1` (Chat Completions) |
| `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_BASE` | `http://127.0.0.1:41100` (Messages API) |
| `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` | the job's gateway token (not a provider key) |
| `DGM_LLM_HTTP_URL` | the same base as `OPENAI_BASE_URL` |

The keys are exported by the shell inside the container: the sandbox spec itself still
refuses credential-like variables, so a real key can never be passed in by mistake.
"""

from __future__ import annotations

from pathlib import Path

from dgm.sandbox import Mount
from dgm.sandbox.agent_env import ENV_MOUNT
from dgm.sandbox.env_debs import APT_BIN_DIRS, APT_LIB_GLOBS

LOOPBACK_PORT = 41100
FORWARD_SCRIPT = "/run/dgm/llm_forward.py"
_READY = "/tmp/.dgm-llm-ready"

PRELUDE = f"""
for d in {" ".join(f"{ENV_MOUNT}/{d}" for d in APT_BIN_DIRS)}; do
  [ -d "$d" ] && PATH="$d:$PATH"
done
export PATH
for d in {" ".join(f"{ENV_MOUNT}/{d}" for d in APT_LIB_GLOBS)}; do
  [ -d "$d" ] && LD_LIBRARY_PATH="$d${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
done
[ -n "${{LD_LIBRARY_PATH:-}}" ] && export LD_LIBRARY_PATH
if [ -n "${{DGM_LLM_URL:-}}" ]; then
  case "$DGM_LLM_URL" in
    unix://*)
      rm -f {_READY}
      python3 -I {FORWARD_SCRIPT} {LOOPBACK_PORT} "${{DGM_LLM_URL#unix://}}" {_READY} \
        </dev/null >/dev/null 2>&1 &
      n=0; while [ ! -s {_READY} ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done
      dgm_base=http://127.0.0.1:{LOOPBACK_PORT} ;;
    *) dgm_base="${{DGM_LLM_URL%/}}"; dgm_base="${{dgm_base%/v1}}" ;;
  esac
  export DGM_LLM_HTTP_URL="$dgm_base/v1" OPENAI_BASE_URL="$dgm_base/v1" \
    OPENAI_API_BASE="$dgm_base/v1" ANTHROPIC_BASE_URL="$dgm_base" ANTHROPIC_API_BASE="$dgm_base"
  export OPENAI_API_KEY="${{DGM_LLM_TOKEN:-dgm}}" ANTHROPIC_API_KEY="${{DGM_LLM_TOKEN:-dgm}}"
  # litellm fetches its price map from the internet at import unless told not to.
  export LITELLM_LOCAL_MODEL_COST_MAP=True
fi
"""


def forwarder_mount() -> Mount:
    """The forwarder script, read-only, beside the job's socket."""
    return Mount(Path(__file__).with_name("llm_forward_script.py").resolve(), FORWARD_SCRIPT)
