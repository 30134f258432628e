"""Replay serves what a run recorded and fails loudly on anything else; rules files script
request-dependent answers."""

from __future__ import annotations

import json

import openai
import pytest

from dgm.errors import ConfigError
from dgm.gateway import JobBinding

from .helpers import BASH_TOOL, openai_client, run_agent


def test_replay_answers_each_job_by_its_own_calls_and_names_what_is_missing(make_gateway, tmp_path):
    recorder = make_gateway("scripted/shell-agent", log_dir=tmp_path / "run" / "logs")
    for job, name in (("job-1", "notes.txt"), ("job-2", "other.txt")):
        endpoint = recorder.bind_job(JobBinding("run-1", job))
        run_agent(openai_client(recorder.url, endpoint.token), name)
        recorder.unbind(endpoint)
    recorder.stop()

    replayer = make_gateway(f"replay/{tmp_path / 'run'}", log_dir=tmp_path / "replay-logs")
    # Jobs are answered by job id and call index, in whatever order they run.
    second = replayer.bind_job(JobBinding("run-2", "job-2"))
    answer = run_agent(openai_client(replayer.url, second.token), "other.txt")
    assert answer == "solve saw: contents of other.txt"
    first = replayer.bind_job(JobBinding("run-2", "job-1"))
    answer = run_agent(openai_client(replayer.url, first.token), "notes.txt")
    assert answer == "solve saw: contents of notes.txt"
    assert replayer.totals().run.input_tokens == 2 * (40 + 50)  # usage is replayed too
    assert replayer.replay_miss("job-1") is None

    # A third call of job-1 and any call of a job never recorded: errors naming the job.
    with pytest.raises(openai.BadRequestError, match=r"no answer for job job-1 \(solve\) call 2"):
        run_agent(openai_client(replayer.url, first.token), "notes.txt")
    stranger = replayer.bind_job(JobBinding("run-2", "job-3"))
    with pytest.raises(openai.BadRequestError, match="job job-3") as caught:
        run_agent(openai_client(replayer.url, stranger.token), "notes.txt")
    assert caught.value.body["type"] == "replay_miss"
    assert "job job-3 (solve) call 0" in replayer.replay_miss("job-3")


def test_replay_serves_a_rerun_jobs_last_attempt(make_gateway, tmp_path):
    log = tmp_path / "run" / "logs" / "job-1" / "llm.jsonl"
    recorder = make_gateway("scripted/shell-agent")
    for name in ("first.txt", "second.txt"):  # the same job ran twice (a crash, a resume)
        endpoint = recorder.bind_job(JobBinding("run-1", "job-1"), log_path=log)
        run_agent(openai_client(recorder.url, endpoint.token), name)
        recorder.unbind(endpoint)
    recorder.stop()

    replayer = make_gateway(f"replay/{log}")
    endpoint = replayer.bind_job(JobBinding("run-2", "job-1"))
    client = openai_client(replayer.url, endpoint.token)
    messages = [{"role": "user", "content": "show the file first.txt"}]
    answer = client.chat.completions.create(model="x", messages=messages, tools=[BASH_TOOL])
    arguments = json.loads(answer.choices[0].message.tool_calls[0].function.arguments)
    assert arguments == {"command": "cat second.txt"}  # the last attempt's answer, by position


def test_replay_of_an_empty_folder_is_a_config_error(tmp_path):
    from dgm.gateway import Gateway, GatewaySettings

    with pytest.raises(ConfigError, match="no recorded answers found"):
        Gateway(GatewaySettings(f"replay/{tmp_path}")).start()


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
