"""The whole agent as a process (run.py solve), driven by a scripted fake gateway.

This is the smoke test a freshly edited agent must pass before it is evaluated.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # the agent's root and this folder

from seed_fake_gateway import FakeGateway, completion, tool_call  # noqa: E402

RUN_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run.py")


def last_tool_output(request):
    tool_messages = [m for m in request["messages"] if m["role"] == "tool"]
    return tool_messages[-1]["content"] if tool_messages else None


def write_then_finish(request):
    """Create hello.txt, check it with bash, then finish."""
    done = [m for m in request["messages"] if m["role"] == "tool"]
    if not done:
        return tool_call("create", path="hello.txt", file_text="hello\n")
    if len(done) == 1:
        return tool_call("bash", call_id="call_2", command="cat hello.txt")
    if "hello" in last_tool_output(request):
        return tool_call("finish", call_id="call_3", summary="wrote hello.txt")
    return completion("something went wrong")


class RunTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.workdir = os.path.join(self._tmp.name, "work")
        self.out = os.path.join(self._tmp.name, "out")
        os.mkdir(self.workdir)

    def tearDown(self):
        self._tmp.cleanup()

    def solve(self, gateway, **task):
        task_file = os.path.join(self._tmp.name, "task.json")
        with open(task_file, "w") as f:
            json.dump(dict({"id": "t1", "problem_statement": "Write hello.txt"}, **task), f)
        env = dict(os.environ, **(gateway.env() if gateway else {}))
        if gateway is None:
            env.pop("DGM_LLM_URL", None)
        command = [sys.executable, "-B", RUN_PY, "solve", "--workdir", self.workdir]
        command += ["--task", task_file, "--out", self.out]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        trajectory = None
        if os.path.exists(os.path.join(self.out, "trajectory.json")):
            with open(os.path.join(self.out, "trajectory.json")) as f:
                trajectory = json.load(f)
        return proc, trajectory

    def test_solves_a_task_and_records_the_trajectory(self):
        with FakeGateway(write_then_finish) as gateway:
            proc, trajectory = self.solve(gateway)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(self.workdir, "hello.txt")) as f:
            self.assertEqual(f.read(), "hello\n")
        self.assertEqual(trajectory["exit_status"], "finished")
        self.assertEqual(trajectory["exit_message"], "wrote hello.txt")
        self.assertEqual(trajectory["usage"]["llm_calls"], 3)
        self.assertEqual(
            [s["tool_calls"][0]["name"] for s in trajectory["steps"]], ["create", "bash", "finish"]
        )
        self.assertIn("Write hello.txt", trajectory["messages"][1]["content"])
        self.assertEqual(trajectory["messages"][-1]["role"], "tool")

    def test_a_model_that_never_calls_tools_is_nudged_until_the_step_limit(self):
        with FakeGateway(lambda request: completion("I think I am done.")) as gateway:
            proc, trajectory = self.solve(gateway, max_steps=3)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(trajectory["exit_status"], "step_limit")
        self.assertEqual(len(gateway.requests), 3)
        self.assertIn(
            "did not call a tool", gateway.requests[-1]["body"]["messages"][-1]["content"]
        )

    def test_time_limit_caps_commands_and_ends_the_run(self):
        with FakeGateway(lambda request: tool_call("bash", command="sleep 30")) as gateway:
            proc, trajectory = self.solve(gateway, time_limit_s=1)
        self.assertEqual(trajectory["exit_status"], "time_limit")
        self.assertIn("timed out after 1 s", trajectory["messages"][-1]["content"])

    def test_missing_gateway_address_and_bad_task_file_are_usage_errors(self):
        proc, trajectory = self.solve(None)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("DGM_LLM_URL", proc.stderr)
        self.assertEqual(trajectory["exit_status"], "config_error")
        command = [sys.executable, RUN_PY, "solve", "--workdir", self.workdir]
        proc = subprocess.run(
            command + ["--task", "/nonexistent.json", "--out", self.out], capture_output=True
        )
        self.assertEqual(proc.returncode, 2)


if __name__ == "__main__":
    unittest.main()
