"""Headless Chromium driven over the DevTools protocol (aiohttp websocket; no Selenium).

Just enough for the report tests: open a page, wait for it to say it is ready, evaluate
JavaScript, click an element with real mouse events, take a screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        binary = chromium_path()
        if binary is None:
            raise RuntimeError("chromium is not installed (apt-get install chromium)")
        self._profile = tempfile.mkdtemp(prefix="dgm-chromium-")
        self._proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "--allow-file-access-from-files",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._loop = asyncio.new_event_loop()
        self._id = 0
        try:
            self._run(self._connect())
        except BaseException:
            self.close()
            raise

    # -- public ------------------------------------------------------------------------
    def open(self, url: str, timeout: float = 30.0) -> float:
        """Navigate and wait for `window.dgmReady`; returns seconds from navigate to ready."""
        start = time.perf_counter()
        self.call("Page.navigate", url=url)
        while time.perf_counter() - start < timeout:
            if self.evaluate("typeof window.dgmReady === 'number'"):
                return time.perf_counter() - start
            time.sleep(0.02)
        raise TimeoutError(f"{url} did not become ready in {timeout} s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JS error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element matching `selector`."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center', inline: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise LookupError(f"no element matches {selector}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self._run(self._call(method, params))

    def close(self) -> None:
        if getattr(self, "_ws", None) is not None:
            self._run(self._ws.close())
            self._run(self._session.close())
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._loop.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- protocol ----------------------------------------------------------------------
    def _run(self, coro):
        return self._loop.run_until_complete(coro)

    async def _connect(self) -> None:
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.is_file() or not port_file.read_text().strip():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            await asyncio.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        self._session = aiohttp.ClientSession()
        async with self._session.get(f"http://127.0.0.1:{port}/json/list") as resp:
            targets = await resp.json()
        page = next(t for t in targets if t["type"] == "page")
        self._ws = await self._session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        await self._call("Page.enable", {})

    async def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        await self._ws.send_json({"id": self._id, "method": method, "params": params})
        while True:
            message = await asyncio.wait_for(self._ws.receive_json(), timeout=60)
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
