"""Fails any test that tries to reach a host beyond this machine (a hosted model, say).

Loopback stays open: stub servers and the embedded model's local server live there. A blocked
attempt raises at once and also fails the test at teardown, so an adapter that turns the error into
its own cannot hide it.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class NetworkBlockedError(RuntimeError):
    """A test tried to open a connection beyond loopback."""


def _is_local(host: object) -> bool:
    if host is None:
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _network_guard(monkeypatch: pytest.MonkeyPatch) -> object:
    attempts: list[str] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def refuse(host: object) -> None:
        attempts.append(str(host))
        raise NetworkBlockedError(f"tests may not reach {host}: use a fake or a loopback stub")

    def connect(self: socket.socket, address: object) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):  # type: ignore[index]
            refuse(address[0])  # type: ignore[index]
        return real_connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):  # type: ignore[index]
            refuse(address[0])  # type: ignore[index]
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if not _is_local(host):
            refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    if attempts:
        pytest.fail(f"the test tried to reach the network: {sorted(set(attempts))}", pytrace=False)
