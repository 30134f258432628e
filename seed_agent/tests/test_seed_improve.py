"""`run.py improve`: the agent's own improvement procedure, on a small history, driven by
a scripted fake gateway (diagnosis first, then the self-edit with the agent's tools)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # the agent's root and this folder

from coder import improve  # noqa: E402
from seed_fake_gateway import FakeGateway, completion, tool_call  # noqa: E402

RUN_PY = os.path.join(os.path.dirname(HERE), "run.py")
DIAGNOSIS = {"problem_description": "Add a NOTES.md file.", "implementation_suggestion": "x"}


def history(folder, failed=2, node=3):
    tasks = []
    for i in range(failed):
        base = f"failed/{node}/task{i}"
        os.makedirs(os.path.join(folder, base))
        for name, text in (("trajectory.txt", f"trajectory {i}"), ("test_output.txt", "FAIL")):
            with open(os.path.join(folder, base, name), "w") as f:
                f.write(text)
        tasks.append({"node": node, "task_id": f"task{i}", "statement": f"statement {i}",
                      "trajectory": f"{base}/trajectory.txt",
                      "test_output": f"{base}/test_output.txt"})  # fmt: skip
    data = {"format": "dgm-history/1", "node": node, "expansion": {"ordinal": 1},
            "lineage": [{"id": node, "score": {"resolved": 0, "total": failed},
                         "results": [{"task_id": t["task_id"], "resolved": False} for t in tasks]}],
            "failed_tasks": tasks,
            "budget": {}}  # fmt: skip
    with open(os.path.join(folder, "history.json"), "w") as f:
        json.dump(data, f)
    return data


def diagnose_then_edit(request):
    if "tools" not in request:  # the diagnosis: a plain question
        return completion("```json\n" + json.dumps(DIAGNOSIS) + "\n```")
    done = [m for m in request["messages"] if m["role"] == "tool"]
    if not done:
        return tool_call("create", path="NOTES.md", file_text="notes\n")
    return tool_call("finish", call_id="call_2", summary="added NOTES.md")


class ImproveTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = self._tmp.name
        self.history, self.work, self.out = (os.path.join(self.root, d) for d in ("h", "w", "o"))
        for folder in (self.history, self.work):
            os.mkdir(folder)
        with open(os.path.join(self.work, "agent.py"), "w") as f:
            f.write("print('agent')\n")

    def tearDown(self):
        self._tmp.cleanup()

    def run_improve(self, gateway):
        command = [sys.executable, "-B", RUN_PY, "improve", "--workdir", self.work,
                   "--history", self.history, "--out", self.out]  # fmt: skip
        env = dict(os.environ, **gateway.env())
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)

    def test_diagnoses_one_failed_task_then_edits_its_own_source(self):
        history(self.history)
        with FakeGateway(diagnose_then_edit) as gateway:
            proc = self.run_improve(gateway)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(self.work, "NOTES.md")) as f:
            self.assertEqual(f.read(), "notes\n")
        ask = gateway.requests[0]["body"]
        prompt = ask["messages"][1]["content"]
        shown = improve.FAILED_TASKS_SHOWN or 2  # 0: all; the seed shows one, as dgm's built-in
        self.assertEqual(prompt.count("\n# The task it was given ("), shown)
        self.assertRegex(prompt, r"trajectory \d")
        self.assertIn("agent.py", prompt)  # its own source
        self.assertIn("expansion ordinal 1", prompt)
        self.assertIn("- lineage node 3: 0/2 solved; failed: task0, task1", prompt)
        solve = gateway.requests[1]["body"]["messages"][1]["content"]
        self.assertIn("Add a NOTES.md file.", solve)
        self.assertIn("source code of the coding agent", solve)
        with open(os.path.join(self.out, "problem_statement.md")) as f:
            self.assertIn("Add a NOTES.md file.", f.read())
        with open(os.path.join(self.out, "trajectory.json")) as f:
            self.assertEqual(json.load(f)["exit_status"], "finished")

    def test_a_bad_diagnosis_fails_without_editing(self):
        history(self.history)
        with FakeGateway(lambda request: completion("no idea")) as gateway:
            proc = self.run_improve(gateway)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(os.listdir(self.work), ["agent.py"])

    def test_target_choice(self):
        data = history(self.history, failed=3)
        picked = improve.choose(data)
        self.assertEqual(picked, improve.choose(data))  # a re-run picks the same
        shown = improve.FAILED_TASKS_SHOWN or 3  # 0: every failed task
        self.assertEqual((picked["kind"], len(picked["tasks"])), ("task", shown))
        self.assertEqual(improve.choose(dict(data, failed_tasks=[]))["kind"], "stochasticity")


if __name__ == "__main__":
    unittest.main()
