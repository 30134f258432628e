"""Runtime tools: made with make_tool during a run, saved to the output dir, offered from
the next step; tools kept in the agent's `tools/` folder are offered from the first."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.dirname(HERE)
sys.path[:0] = [AGENT, HERE]

from coder import tools  # noqa: E402
from coder.tools import runtime  # noqa: E402
from coder.tools.base import ToolContext  # noqa: E402
from seed_fake_gateway import FakeGateway, completion, tool_call  # noqa: E402

COUNT_LINES = """import json, os, sys
args = json.load(sys.stdin)
path = args["path"]
with open(path) as f:
    print(path + ": " + str(len(f.read().splitlines())) + " lines")
"""


def count_lines_tool(**changes):
    args = {
        "name": "count_lines",
        "description": "Count the lines of a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        "source": COUNT_LINES,
        "smoke": {
            "args": {"path": "a.txt"},
            "expect": "a.txt: 2 lines",
            "files": {"a.txt": "x\ny\n"},
        },
    }
    args.update(changes)
    return args


class MakeToolTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.workdir = os.path.join(self._tmp.name, "work")
        os.mkdir(self.workdir)
        self.ctx = ToolContext(self.workdir)
        self.ctx.tools_dir = os.path.join(self._tmp.name, "out", "tools")
        self.ctx.builtin_names = list(tools.by_name())

    def tearDown(self):
        self._tmp.cleanup()

    def call(self, tool, **args):
        return tools.call(tool, json.dumps(args), self.ctx)

    def test_a_made_tool_is_saved_offered_and_runs_in_the_workdir(self):
        made = self.call("make_tool", **count_lines_tool())
        self.assertTrue(made.ok, made.output)
        folder = os.path.join(self.ctx.tools_dir, "count_lines")
        self.assertEqual(sorted(os.listdir(folder)), ["tool.json", "tool.py"])
        with open(os.path.join(folder, "tool.json")) as f:
            self.assertEqual(json.load(f)["smoke"]["expect"], "a.txt: 2 lines")
        names = [s["function"]["name"] for s in tools.schemas(self.ctx)]
        self.assertIn("count_lines", names)
        with open(os.path.join(self.workdir, "b.txt"), "w") as f:
            f.write("1\n2\n3\n")
        result = self.call("count_lines", path="b.txt")
        self.assertTrue(result.ok, result.output)
        self.assertEqual(result.output, "b.txt: 3 lines")

    def test_bad_tools_are_refused_and_neither_saved_nor_offered(self):
        cases = {
            "bash": "exists already",
            "Bad-Name": "bad tool name",
        }
        for name, why in cases.items():
            result = self.call("make_tool", **count_lines_tool(name=name))
            self.assertFalse(result.ok)
            self.assertIn(why, result.output)
        failing = self.call(
            "make_tool",
            **count_lines_tool(
                smoke={"args": {"path": "a.txt"}, "expect": "1000 lines", "files": {"a.txt": "x\n"}}
            ),
        )
        self.assertFalse(failing.ok)
        self.assertIn("smoke check of count_lines failed", failing.output)
        schema = self.call("make_tool", **count_lines_tool(parameters={"type": "string"}))
        self.assertIn("JSON schema object", schema.output)
        self.assertFalse(os.path.exists(os.path.join(self.ctx.tools_dir, "count_lines")))
        self.assertNotIn("count_lines", tools.by_name(self.ctx))

    def test_a_tool_that_fails_hangs_or_floods_comes_back_as_an_error_or_cut(self):
        source = (
            "import json, sys, time\nargs = json.load(sys.stdin)\n"
            "if args.get('mode') == 'smoke': print('ready'); sys.exit(0)\n"
            "if args['mode'] == 'fail': print('boom'); sys.exit(3)\n"
            "if args['mode'] == 'hang': time.sleep(30)\n"
            "print('x' * 1000000)\n"
        )
        made = self.call(
            "make_tool",
            **count_lines_tool(
                name="moody",
                source=source,
                smoke={"args": {"mode": "smoke"}, "expect": "ready"},
                parameters={"type": "object", "properties": {"mode": {"type": "string"}}},
            ),
        )
        self.assertTrue(made.ok, made.output)
        failed = self.call("moody", mode="fail")
        self.assertFalse(failed.ok)
        self.assertIn("failed (3): boom", failed.output)
        self.assertLess(len(self.call("moody", mode="flood").output), 12000)
        with mock.patch.object(runtime, "TIMEOUT_S", 1):
            hung = self.call("moody", mode="hang")
        self.assertIn("timed out after 1 s", hung.output)


class RunWithToolsTest(unittest.TestCase):
    """The whole agent as a process, from a copy of its folder (so tools/ can be planted)."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        root = self._tmp.name
        self.agent = os.path.join(root, "agent")
        shutil.copytree(AGENT, self.agent, ignore=shutil.ignore_patterns("__pycache__"))
        self.workdir, self.out = os.path.join(root, "work"), os.path.join(root, "out")
        os.mkdir(self.workdir)
        with open(os.path.join(self.workdir, "notes.txt"), "w") as f:
            f.write("a\nb\nc\nd\n")
        self.task = os.path.join(root, "task.json")
        with open(self.task, "w") as f:
            json.dump({"id": "t", "problem_statement": "Count the lines of notes.txt"}, f)

    def tearDown(self):
        self._tmp.cleanup()

    def solve(self, script):
        with FakeGateway(script) as gateway:
            command = [
                sys.executable,
                "-B",
                os.path.join(self.agent, "run.py"),
                "solve",
                "--workdir",
                self.workdir,
                "--task",
                self.task,
                "--out",
                self.out,
            ]
            env = dict(os.environ, **gateway.env())
            proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(self.out, "trajectory.json")) as f:
            return gateway.requests, json.load(f)

    def test_a_tool_made_in_one_step_is_offered_and_called_in_the_next(self):
        def script(request):
            offered = {t["function"]["name"] for t in request.get("tools", [])}
            results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
            if not results:
                arguments = json.dumps(count_lines_tool())  # has a `name`: no tool_call()
                function = {"name": "make_tool", "arguments": arguments}
                return completion(
                    tool_calls=[{"id": "c1", "type": "function", "function": function}]
                )
            if len(results) == 1 and "count_lines" in offered:
                return tool_call("count_lines", call_id="c2", path="notes.txt")
            return tool_call("finish", call_id="c3", summary=results[-1])

        requests, trajectory = self.solve(script)
        offered = [{t["function"]["name"] for t in r["body"]["tools"]} for r in requests]
        self.assertNotIn("count_lines", offered[0])
        self.assertIn("count_lines", offered[1])
        self.assertEqual(trajectory["exit_message"], "notes.txt: 4 lines")
        made = trajectory["runtime_tools"]["made"]
        self.assertEqual(
            [(m["name"], m["step"], m["saved_to"]) for m in made],
            [("count_lines", 1, "tools/count_lines")],
        )
        self.assertTrue(os.path.isfile(os.path.join(self.out, "tools", "count_lines", "tool.py")))

    def test_tools_kept_in_the_codebase_are_offered_from_the_first_step(self):
        kept = os.path.join(self.agent, "tools", "count_lines")
        os.makedirs(kept)
        meta = count_lines_tool()
        with open(os.path.join(kept, "tool.py"), "w") as f:
            f.write(meta.pop("source"))
        with open(os.path.join(kept, "tool.json"), "w") as f:
            json.dump(meta, f)

        def script(request):
            results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
            if not results:
                return tool_call("count_lines", path="notes.txt")
            return tool_call("finish", call_id="c2", summary=results[-1])

        requests, trajectory = self.solve(script)
        self.assertEqual(trajectory["exit_message"], "notes.txt: 4 lines")
        self.assertIn("count_lines", trajectory["runtime_tools"]["kept"])  # with any kept ones
        self.assertEqual(trajectory["runtime_tools"]["made"], [])


if __name__ == "__main__":
    unittest.main()
