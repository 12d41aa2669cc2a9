"""An HTTP transport whose requests in flight can be cut from another thread.

A worker that stops must not wait minutes for a model call it no longer needs: llama.cpp's server (and
most OpenAI-compatible servers) cancel a generation when its client hangs up. A blocked socket read is
only woken by shutting the socket down, so the transport remembers the sockets it opens.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import weakref
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx


class _TrackedSockets(httpcore.SyncBackend):
    """httpcore's default network backend, remembering every connection it opens."""

    def __init__(self) -> None:
        self._streams: weakref.WeakSet[httpcore.NetworkStream] = weakref.WeakSet()
        self._lock = threading.Lock()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = super().connect_tcp(host, port, timeout, local_address, socket_options)
        with self._lock:
            self._streams.add(stream)
        return stream

    def cut(self) -> int:
        """Shut every open connection down; a read blocked on one fails at once. Returns how many."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            with contextlib.suppress(OSError):  # already closed by its owner
                stream.get_extra_info("socket").shutdown(socket.SHUT_RDWR)
        return len(streams)


class AbortableTransport(httpx.HTTPTransport):
    """httpx's transport (no proxy) whose open connections ``abort()`` cuts."""

    def __init__(self) -> None:
        super().__init__()
        self._sockets = _TrackedSockets()
        # httpx has no option for httpcore's network backend, so its pool is rebuilt with one that
        # tracks sockets; the limits are httpx's defaults.
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=self._sockets,
        )

    def abort(self) -> int:
        """Cut every request in flight (they fail with a connection error); returns the connections cut."""
        return self._sockets.cut()
