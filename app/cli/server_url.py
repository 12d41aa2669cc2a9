"""Where the running server listens, so that commands print links that work.

``agentbank serve`` writes its address into the data directory when it starts and removes it when it
stops; ``agentbank interview invite`` reads it, so the link names the port actually served.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentbank.core.settings import Settings

DEFAULT_URL = "http://127.0.0.1:8000"
# Listening on every interface is reached on this machine through the loopback address.
_ANY = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}  # noqa: S104 - names, not a bind


def _path(settings: Settings) -> Path:
    return settings.data_dir / "server-url"


def remember(settings: Settings, host: str, port: int) -> str:
    """Record the address the server is about to listen on; the URL recorded."""
    shown = _ANY.get(host, f"[{host}]" if ":" in host else host)
    url = f"http://{shown}:{port}"
    _path(settings).parent.mkdir(parents=True, exist_ok=True)
    _path(settings).write_text(url + "\n", encoding="utf-8")
    return url


def forget(settings: Settings, url: str) -> None:
    """Remove the record, unless another server has since written its own."""
    path = _path(settings)
    try:
        if path.read_text(encoding="utf-8").strip() == url:
            path.unlink()
    except FileNotFoundError:
        pass


def current(settings: Settings) -> str:
    """The running server's URL, or the default address when none has recorded one."""
    try:
        return _path(settings).read_text(encoding="utf-8").strip() or DEFAULT_URL
    except FileNotFoundError:
        return DEFAULT_URL
