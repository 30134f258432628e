"""Replay serves what a run recorded and fails loudly on anything else; rules files script
request-dependent answers."""

from __future__ import annotations

import json

import openai
import pytest

from dgm.errors import ConfigError
from dgm.gateway import JobBinding

from .helpers import BASH_TOOL, openai_client, run_agent


def test_replay_gives_the_recorded_answers_and_refuses_new_requests(make_gateway, tmp_path):
    recorder = make_gateway("scripted/shell-agent", log_dir=tmp_path / "run" / "logs")
    endpoint = recorder.bind_job(JobBinding("run-1", "job-1"))
    recorded = run_agent(openai_client(recorder.url, endpoint.token), "notes.txt")
    recorder.stop()

    replayer = make_gateway(f"replay/{tmp_path / 'run'}", log_dir=tmp_path / "replay-logs")
    client = openai_client(replayer.url, replayer.bind_job(JobBinding("run-2", "job-9")).token)
    assert run_agent(client, "notes.txt") == recorded
    assert replayer.totals().run.input_tokens == 40 + 50  # usage is replayed too

    with pytest.raises(openai.BadRequestError, match="replay: no recorded answer") as caught:
        run_agent(client, "other.txt")
    assert caught.value.body["type"] == "replay_miss"
    assert run_agent(client, "notes.txt") == recorded  # and it keeps serving


def test_replay_of_an_empty_folder_is_a_config_error(tmp_path):
    from dgm.gateway import Gateway

    with pytest.raises(ConfigError, match="no recorded answers found"):
        Gateway(f"replay/{tmp_path}").start()


RULES = {
    "rules": [
        {"when": {"role": "diagnose"}, "reply": "The agent should run the tests first."},
        {
            "when": {"last_message": r"fix (\S+\.py)", "has_tool": "bash"},
            "reply": {"tool_calls": [{"name": "bash", "arguments": {"command": "cat $1"}}]},
        },
        {
            "when": {"last_role": "tool"},
            "reply": {"content": "fixed", "usage": {"input_tokens": 9, "output_tokens": 1}},
        },
    ]
}


def test_rules_file_answers_depend_on_the_request(make_gateway, tmp_path, records):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    gw = make_gateway(f"scripted/@{rules}")
    client = openai_client(gw.url, gw.bind_job(JobBinding("r", "j")).token)
    messages = [{"role": "user", "content": "please fix parser.py now"}]
    first = client.chat.completions.create(model="x", messages=messages, tools=[BASH_TOOL])
    call = first.choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"command": "cat parser.py"}
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "def parse(): ..."},
    ]
    second = client.chat.completions.create(model="x", messages=messages, tools=[BASH_TOOL])
    assert second.choices[0].message.content == "fixed" and second.usage.prompt_tokens == 9

    diagnosis = gw.complete(JobBinding("r", "j", role="diagnose"), {"messages": messages[:1]})
    assert diagnosis["choices"][0]["message"]["content"].startswith("The agent should")

    with pytest.raises(openai.BadRequestError, match="no rule matches"):
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hm"}])


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{oops", "not valid JSON"),
        (json.dumps({"rules": [{"when": {"colour": "red"}, "reply": "x"}]}), "colour"),
        (json.dumps({"rules": [{"when": {"last_message": "("}, "reply": "x"}]}), "bad regex"),
    ],
)
def test_bad_rules_files(tmp_path, content, problem):
    from dgm.gateway.backends import make_backend

    rules = tmp_path / "rules.json"
    rules.write_text(content)
    with pytest.raises(ConfigError, match=problem):
        make_backend(f"scripted/@{rules}", timeout_s=1)
