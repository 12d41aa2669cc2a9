"""One error hierarchy for the domain.

Each error carries a machine code and the HTTP status an API would answer with, so entry points
(HTTP, command line, workers) translate errors in one place. Messages are written for the person who
must act on them and never include secrets or participant text.
"""


class AgentBankError(Exception):
    """Base of every error the bank raises on purpose."""

    code = "error"
    status_code = 500
    # The caller's transaction holds the audit record of this refusal: it is committed, not rolled back.
    recorded = False

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
    """The model reached max_tokens before its structured answer was complete.

    ``partial`` is what it wrote, for a caller whose first fields may be complete already; it never
    enters the message, which may be logged (a model's text can quote its prompt).
    """

    code = "output_truncated"

    def __init__(self, message: str, *, partial: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.partial = partial


class ProviderTimeoutError(ProviderError):
    """The model did not finish within the call's time limit."""

    code = "provider_timeout"
    status_code = 504


class InvalidRequestError(AgentBankError):
    """A request that is well-formed but cannot be carried out as asked."""

    code = "invalid_request"
    status_code = 422


class AuthenticationRequiredError(AgentBankError):
    """No valid credential came with the request."""

    code = "unauthenticated"
    status_code = 401


class PermissionDeniedError(AgentBankError):
    """The principal is known but may not do this."""

    code = "forbidden"
    status_code = 403


class NotFoundError(AgentBankError):
    """Nothing of that name exists for this principal (or it may not know that it exists)."""

    code = "not_found"
    status_code = 404


class ConflictError(AgentBankError):
    """The request conflicts with the current state (a duplicate, a job still running)."""

    code = "conflict"
    status_code = 409


class RateLimitedError(AgentBankError):
    """Too many requests from one client; ``retry_after`` says when to come back."""

    code = "rate_limited"
    status_code = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
