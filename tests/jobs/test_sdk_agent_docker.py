"""An agent we did not write, in real Docker: it declares `openai` and `anthropic` in
`[environment]`, gets them from an environment built once from binary wheels, and talks to
the gateway through the official SDKs reading only the standard variables
(OPENAI_BASE_URL, ANTHROPIC_BASE_URL, the job token as API key) on the container's
loopback: Chat Completions, the Responses API and Messages, streaming and not, tool calls,
cache usage, Anthropic's count_tokens (logged, not billed), the models list in both shapes,
and the budget refusal as each SDK's own 402 error. The container still reaches no other network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgm.config import JobBudget
from dgm.gateway import (
    CallContext,
    Gateway,
    GatewaySettings,
    JobBinding,
    register_script,
    short_socket_path,
)
from dgm.gateway.exchange_log import read_exchanges
from dgm.jobs.agent_run import AgentRunRequest, run_agent
from dgm.workspace_git import git_init
from tests.needs import image_or_missing

pytestmark = pytest.mark.docker

SDK_REQUIREMENTS = "openai==3.57.0\nanthropic==2.15.0\n"

AGENT = r"""
import json, socket
import anthropic, openai

BASH = {"name": "bash", "input_schema": {"type": "object",
        "properties": {"command": {"type": "string"}}, "required": ["command"]}}
say = [{"role": "user", "content": "fix it"}]
seen = {}
oai = openai.OpenAI(max_retries=0)
answer = oai.chat.completions.create(model="any", messages=say, tools=[
    {"type": "function", "function": {"name": "bash", "parameters": BASH["input_schema"]}}])
seen["openai_tool"] = json.loads(answer.choices[0].message.tool_calls[0].function.arguments)
chunks = list(oai.chat.completions.create(model="any", messages=say, stream=True,
                                          stream_options={"include_usage": True}))
seen["openai_stream_cached"] = chunks[-1].usage.prompt_tokens_details.cached_tokens
claude = anthropic.Anthropic(max_retries=0)
message = claude.messages.create(model="any", max_tokens=256, messages=say, tools=[BASH])
use = [b for b in message.content if b.type == "tool_use"][0]
seen["anthropic_tool"] = use.input
with claude.messages.stream(model="any", max_tokens=256, messages=say) as events:
    final = events.get_final_message()
seen["anthropic_stream"] = [final.content[0].text, final.usage.cache_read_input_tokens]
FUNCTION = {"type": "function", "name": "bash", "parameters": BASH["input_schema"]}
response = oai.responses.create(model="any", input="fix it", tools=[FUNCTION])
call = [item for item in response.output if item.type == "function_call"][0]
seen["responses_tool"] = [json.loads(call.arguments), response.usage.input_tokens]
turns = [{"role": "user", "content": "fix it"}, *response.output,
         {"type": "function_call_output", "call_id": call.call_id, "output": "README"}]
with oai.responses.stream(model="any", input=turns) as events:
    done = events.get_final_response()
seen["responses_stream"] = [done.output_text, done.usage.input_tokens_details.cached_tokens]
counted = claude.messages.count_tokens(model="any", messages=say, tools=[BASH])
seen["count_tokens"] = counted.input_tokens > 0
seen["models"] = [oai.models.list().data[0].id, claude.models.list().data[0].id]
for name, call in [("anthropic", lambda: claude.messages.create(model="any", max_tokens=9,
                                                                 messages=say)),
                   ("openai", lambda: oai.chat.completions.create(model="any", messages=say))]:
    try:
        call()
    except (anthropic.APIStatusError, openai.APIStatusError) as exc:
        seen[name + "_refused"] = [type(exc).__module__.split(".")[0], exc.status_code]
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    seen["network"] = "reachable"
except OSError:
    seen["network"] = "none"
open("/work/solution.txt", "w").write(seen["anthropic_stream"][0])
json.dump(seen, open("/out/seen.json", "w"))
"""


def _script(request: dict, ctx: CallContext) -> dict:
    usage = {"input_tokens": 900, "output_tokens": 20, "cached_tokens": 700}
    if request.get("tools"):
        return {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}], "usage": usage}
    return {"content": "fixed", "usage": usage}


register_script("sdk-docker", _script)


@pytest.fixture(scope="module")
def image() -> str:
    return image_or_missing("runtime")


def sdk_agent(root: Path) -> Path:
    root.mkdir()
    (root / "agent.toml").write_text(
        '[agent]\nname = "sdk-agent"\n[commands]\nsolve = "{python} {agent_dir}/agent.py"\n'
        '[environment]\nrequirements = "requirements.txt"\n'
    )
    (root / "requirements.txt").write_text(SDK_REQUIREMENTS)
    (root / "agent.py").write_text(AGENT)
    return root


def test_unmodified_sdks_reach_the_gateway_from_a_sandbox(tmp_path, image):
    agent = sdk_agent(tmp_path / "agent")
    work = tmp_path / "work"
    work.mkdir()
    (work / "README").write_text("task\n")
    base = git_init(work)
    logs = tmp_path / "logs"
    settings = GatewaySettings("scripted/sdk-docker", run="sdk", log_dir=logs, port=None)
    with Gateway(settings) as gw:
        ep = gw.bind_job(JobBinding("sdk", "job-1", node_id=0, task_id="t"),
                         JobBudget(max_calls=6), short_socket_path("job-1"))  # fmt: skip
        request = AgentRunRequest(agent, image, {"id": "t"}, base, 300, workspace=work)
        result = run_agent(request, tmp_path / "out", ep)
        gw.unbind(ep)
        totals = gw.totals()
    seen = json.loads((tmp_path / "out" / "seen.json").read_text())
    assert seen == {
        "openai_tool": {"command": "ls"},
        "openai_stream_cached": 700,
        "anthropic_tool": {"command": "ls"},
        "anthropic_stream": ["fixed", 700],
        "responses_tool": [{"command": "ls"}, 900],
        "responses_stream": ["fixed", 700],
        "count_tokens": True,
        "models": ["scripted/sdk-docker", "scripted/sdk-docker"],
        "anthropic_refused": ["anthropic", 402],
        "openai_refused": ["openai", 402],
        "network": "none",
    }, result.output[-2000:]
    assert "+fixed" in result.patch
    assert result.environment and "anthropic==2.15.0" in result.environment["requirements"]
    assert totals.run.calls == 6 and totals.refused == 2  # a token count is no call
    exchanges = list(read_exchanges(ep.log_path))
    assert len(exchanges) == 9  # refusals and the token count are logged too
    counts = [e for e in exchanges if "count_tokens" in (e["request"] or {})]
    assert len(counts) == 1 and counts[0]["cost_usd"] == 0 and counts[0]["response"]["dgm_estimate"]
