"""A TCP proxy on loopback that a test can switch down, slow or up, in front of a real service."""

from __future__ import annotations

import asyncio
import contextlib


class FaultProxy:
    """Forwards 127.0.0.1:<port> to a target; `mode` is "up", "down" (connections dropped) or "slow"."""

    def __init__(self, target_host: str, target_port: int, delay_s: float = 5.0) -> None:
        self.target = (target_host, target_port)
        self.mode = "up"
        self.delay_s = delay_s
        self.port = 0
        self._server: asyncio.base_events.Server | None = None
        self._conns: set[asyncio.StreamWriter] = set()

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def set_mode(self, mode: str) -> None:
        self.mode = mode
        if mode == "down":  # existing connections die too, as when a server goes away
            for w in list(self._conns):
                w.close()
            self._conns.clear()

    async def stop(self) -> None:
        await self.set_mode("down")
        if self._server:
            self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.mode == "down":
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        if self.mode == "down":  # went down while this connection was being made: it dies with the others
            writer.close()
            up_writer.close()
            return
        self._conns |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, slow: bool) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    if slow and self.mode == "slow":
                        await asyncio.sleep(self.delay_s)
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.close()

        await asyncio.gather(pipe(reader, up_writer, False), pipe(up_reader, writer, True))
        self._conns -= {writer, up_writer}
