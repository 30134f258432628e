"""A unix socket that forwards to the machine's Docker engine and can be cut and restored,
so a test can make "Docker" unreachable for a while without touching the real daemon."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

ENGINE = "/var/run/docker.sock"


class DockerProxy:
    def __init__(self, path: Path, target: str = ENGINE) -> None:
        self.path = Path(path)
        self.target = target
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.cuts = 0

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def start(self) -> DockerProxy:
        self._thread.start()
        self.restore()
        return self

    def _run(self, coro) -> object:  # noqa: ANN001
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    def restore(self) -> None:
        self._run(self._listen())

    def cut(self) -> None:
        """Stop listening and drop every open connection (the engine 'went away')."""
        self.cuts += 1
        self._run(self._close())

    def stop(self) -> None:
        self._run(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    async def _listen(self) -> None:
        if self.path.exists():
            os.unlink(self.path)
        self._server = await asyncio.start_unix_server(self._handle, str(self.path))

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()
        if self.path.exists():
            os.unlink(self.path)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(self.target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        self._writers -= {writer, up_writer}
