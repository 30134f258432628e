"""The tools, called the way the loop calls them: with the model's raw JSON arguments."""

import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from coder import tools  # noqa: E402
from coder.tools.base import ToolContext  # noqa: E402


class ToolTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.workdir = self._tmp.name
        self.ctx = ToolContext(self.workdir)

    def tearDown(self):
        self._tmp.cleanup()

    def call(self, name, **args):
        return tools.call(name, json.dumps(args), self.ctx)

    def write(self, name, text):
        with open(os.path.join(self.workdir, name), "w") as f:
            f.write(text)

    def read(self, name):
        with open(os.path.join(self.workdir, name)) as f:
            return f.read()


class RegistryTest(ToolTestCase):
    def test_every_tool_has_a_valid_unique_schema(self):
        names = [schema["function"]["name"] for schema in tools.schemas()]
        self.assertEqual(len(names), len(set(names)))
        self.assertIn("finish", names)
        for tool in tools.TOOLS:
            spec = tool.SPEC
            self.assertTrue(spec["description"].strip(), spec["name"])
            self.assertEqual(spec["parameters"]["type"], "object", spec["name"])
            for required in spec["parameters"].get("required", []):
                self.assertIn(required, spec["parameters"]["properties"], spec["name"])
            self.assertTrue(callable(tool.run), spec["name"])
        json.dumps(tools.schemas())

    def test_model_mistakes_become_error_results(self):
        unknown = tools.call("teleport", "{}", self.ctx)
        self.assertFalse(unknown.ok)
        self.assertIn("unknown tool 'teleport'", unknown.output)
        self.assertIn("bash", unknown.output)
        bad_json = tools.call("bash", '{"command": "ls"', self.ctx)
        self.assertIn("not valid JSON", bad_json.output)
        missing = self.call("str_replace", path="a.txt")
        self.assertIn("missing required argument 'old_str'", missing.output)
        wrong_type = self.call("insert", path="a.txt", insert_line="two", new_str="x")
        self.assertIn("'insert_line' must be of type integer", wrong_type.output)

    def test_finish_carries_the_summary(self):
        result = self.call("finish", summary="all done")
        self.assertEqual(result.finish_summary, "all done")


class BashTest(ToolTestCase):
    def test_runs_in_workdir_and_reports_exit_code(self):
        out = self.call("bash", command="pwd; echo oops >&2; exit 3").output
        self.assertIn(os.path.realpath(self.workdir), out)
        self.assertIn("oops", out)
        self.assertTrue(out.endswith("[exit code 3]"))

    def test_each_call_is_a_fresh_shell(self):
        self.call("bash", command="cd /; export X=1")
        out = self.call("bash", command="pwd; echo X=$X").output
        self.assertIn(os.path.realpath(self.workdir), out)
        self.assertIn("X=\n", out)

    def test_timeout_kills_the_command_and_its_children(self):
        started = time.monotonic()
        out = self.call("bash", command="sleep 30 & sleep 30; echo never", timeout=1).output
        self.assertLess(time.monotonic() - started, 10)
        self.assertIn("timed out after 1 s", out)
        self.assertNotIn("never", out)

    def test_huge_output_keeps_head_and_tail(self):
        out = self.call("bash", command="echo FIRST; seq 1 2000000; echo LAST").output
        self.assertLess(len(out), 11000)
        self.assertTrue(out.startswith("FIRST"))
        self.assertIn("LAST\n[exit code 0]", out)
        self.assertIn("omitted", out)


class EditToolsTest(ToolTestCase):
    def test_view_numbers_lines_and_ranges(self):
        self.write("a.py", "one\ntwo\nthree\n")
        self.assertEqual(
            self.call("view", path="a.py", view_range=[2, -1]).output, "     2\ttwo\n     3\tthree"
        )
        self.assertIn("     1\tone", self.call("view", path="a.py").output)
        self.assertIn(
            "invalid view_range", self.call("view", path="a.py", view_range=[5, 9]).output
        )
        os.mkdir(os.path.join(self.workdir, "pkg"))
        self.write("pkg/m.py", "")
        self.assertEqual(self.call("view", path=".").output, "a.py\npkg/\npkg/m.py")

    def test_create_writes_new_files_with_parents(self):
        result = self.call("create", path="src/new.py", file_text="x = 1\n")
        self.assertIn("Created", result.output)
        self.assertEqual(self.read("src/new.py"), "x = 1\n")

    def test_str_replace_needs_exactly_one_match(self):
        self.write("a.py", "x = 1\ny = 1\nx = 1\n")
        self.assertIn(
            "occurs 2 times",
            self.call("str_replace", path="a.py", old_str="x = 1", new_str="").output,
        )
        self.assertIn(
            "lines 1, 3", self.call("str_replace", path="a.py", old_str="x = 1", new_str="").output
        )
        self.assertIn(
            "not found", self.call("str_replace", path="a.py", old_str="z", new_str="").output
        )
        ok = self.call("str_replace", path="a.py", old_str="y = 1", new_str="y = 2")
        self.assertTrue(ok.ok)
        self.assertIn("     2\ty = 2", ok.output)
        self.assertEqual(self.read("a.py"), "x = 1\ny = 2\nx = 1\n")

    def test_insert_after_a_line(self):
        self.write("a.py", "a\nc")
        self.call("insert", path="a.py", insert_line=1, new_str="b")
        self.call("insert", path="a.py", insert_line=3, new_str="d")
        self.call("insert", path="a.py", insert_line=0, new_str="top")
        self.assertEqual(self.read("a.py"), "top\na\nb\nc\nd\n")
        self.assertIn(
            "between 0 and 5", self.call("insert", path="a.py", insert_line=9, new_str="x").output
        )


if __name__ == "__main__":
    unittest.main()
