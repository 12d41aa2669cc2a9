"""Sending a study's mail: the interface (``Sender``), SMTP through the standard library's ``smtplib`` when
the bank is given a server, and an ``Outbox`` that keeps what it is given (tests, a dry run)."""

from __future__ import annotations

import smtplib
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Protocol

from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings


class Sender(Protocol):
    """Something that delivers one message to one address, or raises ``ProviderError``."""

    def send(self, to: str, subject: str, body: str) -> None: ...


@dataclass(frozen=True)
class Message:
    """One message as an ``Outbox`` keeps it."""

    to: str
    subject: str
    body: str


@dataclass
class Outbox:
    """A sender that keeps every message in ``sent``; an address in ``refusing`` fails as a mail server's refusal
    does (``ProviderError``, the address left out), until it is taken out again."""

    sent: list[Message] = field(default_factory=list)
    refusing: set[str] = field(default_factory=set)

    def send(self, to: str, subject: str, body: str) -> None:
        if to in self.refusing:
            raise ProviderError("the mail server refused the reminder (SMTPRecipientsRefused)")
        self.sent.append(Message(to, subject, body))


@dataclass(frozen=True)
class SmtpSender:
    """One connection per sending; STARTTLS and a login when the settings ask for them."""

    host: str
    port: int
    sender: str
    starttls: bool = False
    username: str | None = None
    password: str | None = None
    timeout_s: float = 30.0

    @classmethod
    def of(cls, settings: Settings) -> SmtpSender | None:
        """The sender the settings configure, or None when no SMTP server is set."""
        if not settings.smtp_host:
            return None
        password = settings.smtp_password.get_secret_value() if settings.smtp_password else None
        return cls(settings.smtp_host, settings.smtp_port, settings.smtp_from, settings.smtp_starttls,
                   settings.smtp_username, password)  # fmt: skip

    def send(self, to: str, subject: str, body: str) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        message.set_content(body)
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout_s) as smtp:
                if self.starttls:
                    smtp.starttls()
                if self.username and self.password:
                    smtp.login(self.username, self.password)
                smtp.send_message(message)
        except (OSError, smtplib.SMTPException) as exc:
            # The address stays out of the message: errors are logged.
            raise ProviderError(f"the mail server refused the reminder ({type(exc).__name__})") from None
