"""One error hierarchy for the domain.

Each error carries a machine code and the HTTP status an API would answer with, so entry points
(HTTP, command line, workers) translate errors in one place. Messages are written for the person who
must act on them and never include secrets or participant text.
"""


class AgentBankError(Exception):
    """Base of every error the bank raises on purpose."""

    code = "error"
    status_code = 500

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigurationError(AgentBankError):
    """The settings or the installed components cannot work as configured."""

    code = "configuration_error"
    status_code = 500


class DatabaseUnavailableError(AgentBankError):
    """The database server could not be started or reached."""

    code = "database_unavailable"
    status_code = 503


class ProviderError(AgentBankError):
    """A model provider (chat, embeddings) failed; SDK exceptions are translated into this one."""

    code = "provider_error"
    status_code = 502

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        status: int | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.retryable = retryable


class TruncatedOutputError(ProviderError):
    """The model reached max_tokens before its structured answer was complete."""

    code = "output_truncated"
