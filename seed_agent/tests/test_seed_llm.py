"""The gateway client against a fake gateway: transports, retries, refusals."""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # the agent's root and this folder

from coder.llm import LLMClient, LLMError  # noqa: E402
from seed_fake_gateway import FakeGateway, completion  # noqa: E402

MESSAGES = [{"role": "user", "content": "hi"}]


def answers(*replies):
    """A script that plays `replies` in order."""
    queue = list(replies)
    return lambda request: queue.pop(0)


def client(gateway):
    llm = LLMClient.from_env(gateway.env())
    llm.retry_delays = (0.01, 0.01)
    return llm


def later():
    return time.monotonic() + 30


class LLMClientTest(unittest.TestCase):
    def test_unix_socket_and_tcp_carry_model_tools_and_token(self):
        for unix in (True, False):
            with FakeGateway(answers(completion("hello")), unix=unix) as gateway:
                reply = client(gateway).chat(MESSAGES, [{"type": "function"}], later())
                self.assertEqual(reply["choices"][0]["message"]["content"], "hello")
                sent = gateway.requests[0]
                self.assertEqual(sent["path"], "/v1/chat/completions")
                self.assertEqual(sent["headers"]["Authorization"], "Bearer test-token")
                self.assertEqual(sent["body"]["model"], "fake")
                self.assertEqual(sent["body"]["tools"], [{"type": "function"}])

    def test_transient_errors_are_retried(self):
        with FakeGateway(answers((503, {}), (429, {}), completion("ok"))) as gateway:
            reply = client(gateway).chat(MESSAGES, [], later())
            self.assertEqual(reply["choices"][0]["message"]["content"], "ok")
            self.assertEqual(len(gateway.requests), 3)

    def test_budget_refusal_is_not_retried(self):
        refusal = (402, {"error": {"type": "budget_exceeded", "message": "job budget spent"}})
        with FakeGateway(answers(refusal)) as gateway:
            with self.assertRaises(LLMError) as caught:
                client(gateway).chat(MESSAGES, [], later())
            self.assertEqual(caught.exception.status, "budget_exceeded")
            self.assertIn("job budget spent", str(caught.exception))
            self.assertEqual(len(gateway.requests), 1)

    def test_persistent_errors_end_as_gateway_error(self):
        with FakeGateway(answers((400, {"error": {"message": "bad model"}}))) as gateway:
            with self.assertRaises(LLMError) as caught:
                client(gateway).chat(MESSAGES, [], later())
            self.assertEqual(caught.exception.status, "gateway_error")
            self.assertIn("bad model", str(caught.exception))
        with self.assertRaises(LLMError) as caught:  # nobody listening on the socket any more
            client(gateway).chat(MESSAGES, [], later())
        self.assertEqual(caught.exception.status, "gateway_error")

    def test_bad_configuration_is_reported(self):
        with self.assertRaises(LLMError) as caught:
            LLMClient.from_env({})
        self.assertEqual(caught.exception.status, "config_error")
        with self.assertRaises(LLMError):
            LLMClient("ftp://example.org")


if __name__ == "__main__":
    unittest.main()
