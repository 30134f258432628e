"""Long trajectories on a large repository stay inside a small context window.

The fake gateway plays a provider with a hard context limit: a request longer than
LIMIT_TOKENS (its JSON length / 4) gets the HTTP 400 a provider sends. The scripted
model reads the repository's files one by one until it finds the secret, writes it
down and finishes, so it succeeds only if it still sees its latest tool output.
"""

import json
import os
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import test_seed_run  # noqa: E402
from coder.context import ContextWindow  # noqa: E402
from seed_fake_gateway import FakeGateway, tool_call  # noqa: E402

LIMIT_TOKENS = 8000
FILES = 30
SECRET_FILE = 23


class Provider:
    """The scripted model behind a provider that refuses prompts over its limit."""

    def __init__(self, limit_tokens: int = LIMIT_TOKENS) -> None:
        self.limit_tokens = limit_tokens
        self.refused = 0
        self.lock = threading.Lock()

    def __call__(self, request):
        tokens = len(json.dumps(request)) // 4
        if tokens > self.limit_tokens:
            with self.lock:
                self.refused += 1
            message = f"prompt is too long: {tokens} tokens > {self.limit_tokens} maximum"
            return 400, {"error": {"message": message, "type": "upstream_error"}}
        outputs = [m for m in request["messages"] if m["role"] == "tool"]
        last = outputs[-1]["content"] if outputs else ""
        if "wrote answer.txt" in last or "Created" in last:
            return tool_call("finish", call_id="call_done", summary="answer written")
        if "SECRET = '" in last:
            secret = last.split("SECRET = '")[1].split("'")[0]
            return tool_call("create", call_id="call_answer", path="answer.txt", file_text=secret)
        n = len(outputs)
        return tool_call("view", call_id=f"call_{n}", path=f"pkg/mod_{n:02d}.py")


class ContextTest(unittest.TestCase):
    setUp = test_seed_run.RunTest.setUp
    tearDown = test_seed_run.RunTest.tearDown
    solve = test_seed_run.RunTest.solve

    def make_repository(self):
        os.mkdir(os.path.join(self.workdir, "pkg"))
        for i in range(FILES):
            lines = [
                f"def function_{i}_{j}(value):\n    return value * {j} + {i}\n" for j in range(60)
            ]
            if i == SECRET_FILE:
                lines.insert(30, "SECRET = 'k9z-417'\n")
            with open(os.path.join(self.workdir, "pkg", f"mod_{i:02d}.py"), "w") as f:
                f.write("".join(lines))

    def test_a_large_repository_fits_a_small_configured_window(self):
        self.make_repository()
        provider = Provider()
        with FakeGateway(provider) as gateway:
            proc, trajectory = self.solve(gateway, context_window_tokens=LIMIT_TOKENS)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(trajectory["exit_status"], "finished", trajectory["exit_message"])
        with open(os.path.join(self.workdir, "answer.txt")) as f:
            self.assertEqual(f.read(), "k9z-417")
        self.assertEqual(provider.refused, 0)  # it fitted before sending, never too late
        # The whole conversation is far larger than the window; the record keeps all of it.
        self.assertGreater(len(json.dumps(trajectory["messages"])) // 4, 3 * LIMIT_TOKENS)
        self.assertNotIn("elided", json.dumps(trajectory["messages"]))
        self.assertGreater(trajectory["context"]["elided_messages"], 10)
        sent = [r["body"]["messages"] for r in gateway.requests]
        for messages in sent:  # system prompt and task always intact
            self.assertEqual(messages[:2], trajectory["messages"][:2])
        self.assertIn("elided to fit the context window", json.dumps(sent[-1]))

    def test_a_provider_refusal_trims_harder_and_retries_once(self):
        self.make_repository()
        provider = Provider()
        with FakeGateway(provider) as gateway:  # the configured window is far too generous
            proc, trajectory = self.solve(gateway, context_window_tokens=100_000)
        self.assertEqual(trajectory["exit_status"], "finished", trajectory["exit_message"])
        self.assertEqual(provider.refused, 1)  # once refused, it stays under the real limit
        self.assertLess(trajectory["context"]["budget_tokens"], LIMIT_TOKENS)

    def test_a_task_too_large_for_the_window_ends_with_a_clear_reason(self):
        provider = Provider()
        with FakeGateway(provider) as gateway:
            proc, trajectory = self.solve(gateway, problem_statement="Fix it. " * 5000)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(trajectory["exit_status"], "context_exceeded")
        self.assertIn("does not fit the model's context window", trajectory["exit_message"])
        self.assertIn("prompt is too long", trajectory["exit_message"])
        self.assertEqual(provider.refused, 2)  # the call and its one retry

    def test_the_window_comes_from_the_task_else_the_environment(self):
        env = {"DGM_LLM_CONTEXT_TOKENS": "9000"}
        self.assertEqual(ContextWindow.configured({}, env).window_tokens, 9000)
        task = {"context_window_tokens": 20000}
        self.assertEqual(ContextWindow.configured(task, env).window_tokens, 20000)
        self.assertEqual(ContextWindow.configured({}, {}).window_tokens, 128_000)

    def test_elisions_are_kept_so_the_sent_prefix_is_stable(self):
        window = ContextWindow(8000)
        messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
        prefixes = []
        for i in range(40):
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": str(i), "function": {"name": "view", "arguments": "{}"}}],
                }
            )
            messages.append({"role": "tool", "tool_call_id": str(i), "content": "x" * 1500})
            prefixes.append(json.dumps(window.fit(messages, [])[:-2]))
        trims = window.trims
        self.assertTrue(0 < trims <= 40 // 3)  # each trim makes room for several steps
        unchanged = sum(
            prefixes[k + 1].startswith(prefixes[k][:-1]) for k in range(len(prefixes) - 1)
        )
        self.assertGreaterEqual(unchanged, 39 - trims)
        self.assertEqual(len(messages[2 + 1]["content"]), 1500)  # the record is untouched


if __name__ == "__main__":
    unittest.main()
