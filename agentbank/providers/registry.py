"""Providers by name: each kind of provider (chat models, embedders, and the interviewer's transcribers and
speakers) has a registry its builders register in, under the name a setting gives (``AGENTBANK_CHAT_PROVIDER``
and the like), as plugin systems register models. Choosing one is a lookup, not a chain of conditions, and
a new provider is one more registered builder. Builders import their libraries only when called, so naming
the registered providers loads none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from agentbank.core.errors import ConfigurationError

Builder = TypeVar("Builder", bound=Callable[..., object])


class Registry(Generic[Builder]):
    """The builders of one kind of provider, by name."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._builders: dict[str, Builder] = {}

    def register(self, name: str) -> Callable[[Builder], Builder]:
        """Register the decorated builder under ``name`` (one builder per name)."""

        def add(builder: Builder) -> Builder:
            if name in self._builders:
                raise ValueError(f"a {self.kind} named {name!r} is registered already")
            self._builders[name] = builder
            return builder

        return add

    def __getitem__(self, name: str) -> Builder:
        try:
            return self._builders[name]
        except KeyError:
            known = ", ".join(sorted(self._builders))
            raise ConfigurationError(f"there is no {self.kind} named {name!r}; the bank knows {known}") from None

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names, in order of registration."""
        return tuple(self._builders)
