"""The one typed configuration of the bank, read from ``AGENTBANK_*`` environment variables."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Values that show a secret was never set; refused outside development.
PLACEHOLDER_SECRETS = frozenset({"", "change-me", "changeme", "secret", "placeholder", "dev", "test", "xxx"})
MIN_SECRET_LENGTH = 32


def default_data_dir() -> Path:
    """Where the bank keeps its database and files when ``AGENTBANK_DATA_DIR`` is unset.

    As root, the embedded PostgreSQL server opens every parent directory of its data directory to
    other users, so root's default lives outside its home directory.
    """
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/agentbank")
    return platformdirs.user_data_path("agentbank")


def project_root() -> Path | None:
    """The checkout this package runs from (where ``pyproject.toml`` is), or None once installed elsewhere."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def default_reference_data_dir() -> Path:
    """``shared/data`` beside the project's checkout, the same from whatever directory a command runs."""
    return ((project_root() or Path.cwd()) / ".." / "shared" / "data").resolve()


class WitnessSetting(BaseModel):
    """One witness the bank asks to cosign: where it listens and the key it cosigns with."""

    url: str = Field(pattern=r"^https?://")
    key: str = Field(min_length=8)


class ModelPrice(BaseModel):
    """What a model's tokens cost, per million, as the operator's contract with its endpoint says."""

    prompt: float = Field(ge=0, description="per million prompt tokens the model reads")
    cached: float | None = Field(default=None, ge=0, description="per million prompt tokens from its cache")
    completion: float = Field(ge=0, description="per million tokens it writes")
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")


class Settings(BaseSettings):
    """Every setting of the bank. Secrets are ``SecretStr`` so they never print."""

    model_config = SettingsConfigDict(env_prefix="AGENTBANK_", env_file=None, extra="ignore")

    environment: Literal["development", "test", "production"] = "development"
    data_dir: Path = Field(default_factory=default_data_dir)
    secret_key: SecretStr = SecretStr("change-me")

    # Unset: the embedded PostgreSQL server in data_dir/postgres. Set: any PostgreSQL >= 15 with pgvector.
    database_url: SecretStr | None = None
    # The owner's URL, for migrations only (unset: database_url). In production database_url names the
    # application role, which cannot alter tables or rewrite the audit log; the embedded server sets
    # both up itself (its superuser migrates, the application connects as agentbank_app).
    migration_database_url: SecretStr | None = None

    chat_provider: Literal["embedded", "openai", "fake"] = "embedded"
    chat_base_url: str | None = None
    chat_api_key: SecretStr | None = None
    chat_model: str | None = None
    # Seconds one chat call may take. Unset: 120 for a remote endpoint; for the embedded model, what the
    # call's prompt and token budget need at the speed measured on this machine, with a margin.
    chat_timeout_s: float | None = Field(default=None, gt=0)
    chat_max_retries: int = Field(default=3, ge=0, le=10)
    # Model calls one process keeps in flight against a remote endpoint (the embedded model answers one
    # at a time whatever this says). A worker takes as many tasks at once.
    chat_calls_in_flight: int = Field(default=8, ge=1, le=256)
    # A limit every process of the bank shares (kept in its database), per chat endpoint; unset: none.
    chat_requests_per_minute: int | None = Field(default=None, ge=1)
    chat_tokens_per_minute: int | None = Field(default=None, ge=1)
    # Prices of models by name, for estimates (JSON: {"model": {"prompt": 0.15, "cached": 0.075,
    # "completion": 0.6, "currency": "USD"}}, per million tokens). None is shipped: prices change and
    # differ by contract. The embedded model costs nothing; a model without a price gets no price.
    chat_prices: dict[str, ModelPrice] = Field(default_factory=dict)

    embedded_model_path: Path | None = None
    embedded_context_tokens: int = Field(default=8192, ge=512)
    embedded_threads: int = Field(default_factory=lambda: os.cpu_count() or 2, ge=1)

    embedder_provider: Literal["local", "openai", "fake"] = "local"
    embedding_base_url: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_model: str | None = None
    embedding_dimension: int = Field(default=384, ge=8, le=4096)

    # The key-encryption keys that wrap participants' data keys, one file per database; unset: under
    # data_dir. Keep it out of database backups: destroying a version here is what makes a withdrawal final.
    keyring_dir: Path | None = None
    # Where the key-encryption keys live: "file" (the keyring files above, the default) or "pkcs11", a
    # PKCS#11 token (an HSM; SoftHSM2 for a test) that keeps them and wraps and unwraps inside it: its
    # module (the vendor's .so), the token's label and the user PIN.
    key_store: Literal["file", "pkcs11"] = "file"
    pkcs11_module: Path | None = None
    pkcs11_token_label: str | None = None
    pkcs11_pin: SecretStr | None = None

    # Optional data the bank reads but does not ship (the WPA life histories, BFI-44): nothing it needs by default.
    # A relative value is taken from the current directory; the default is beside the checkout.
    reference_data_dir: Path = Field(default_factory=default_reference_data_dir)
    # Transcript tokens an answer prompt may hold; beyond it, passages are retrieved through pgvector.
    # Sized for the embedded model (8k context, ~200 prompt tokens/s); raise it for a large-context endpoint.
    memory_token_budget: int = Field(default=1200, ge=200)
    # Respondents of evaluation datasets live in this database on the same server, never in the bank's.
    evaluation_database: str = Field(default="agentbank_evaluation", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    # Parity gaps compare only subgroups of at least this many scored people.
    evaluation_min_group: int = Field(default=20, ge=1)
    # The participant's own survey after the interview: the GSS subset ("default", about 60 items
    # covering its topics, or "all" 173), the Big Five inventory (IPIP-50 is public domain; BFI-44 needs
    # its licence and the reference data), and the days until the retest is offered.
    battery_gss: Literal["default", "all"] = "default"
    battery_big_five: Literal["ipip50", "bfi44"] = "ipip50"
    retest_after_days: float = Field(default=14.0, ge=0)
    # Retest reminders for studies (``agentbank study reminders --send``): an SMTP server, unset by default.
    smtp_host: str | None = None
    smtp_port: int = Field(default=25, ge=1, le=65535)
    smtp_from: str = "agentbank@localhost"
    smtp_starttls: bool = False
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    # Transcript words each expert reflects on; 0 means the whole transcript. Sized like the budget above.
    reflection_word_budget: int = Field(default=1500, ge=0)

    # The HTTP API.
    token_lifetime_s: int = Field(default=3600, ge=60)
    # People sign in to the consoles through this OpenID Connect provider, by its issuer URL (its
    # discovery document is read from ISSUER/.well-known/openid-configuration); unset: no console sign-in.
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret: SecretStr | None = None
    console_session_s: int = Field(default=8 * 3600, ge=300, le=7 * 86400)
    participant_token_lifetime_s: int = Field(default=1800, ge=60)
    rate_limit_per_minute: int = Field(default=120, ge=1)
    # Where request counts live: this process's memory, or a store API servers share (redis://...).
    rate_limit_storage: SecretStr = SecretStr("memory://")
    # The bearer token a Prometheus scraper presents at /metrics; unset, the route does not exist.
    metrics_token: SecretStr | None = None
    # Logs as text for a terminal, or one JSON object per line for a log collector.
    log_format: Literal["text", "json"] = "text"
    max_body_bytes: int = Field(default=65_536, ge=1024)
    max_query_chars: int = Field(default=2048, ge=256)
    suppression_k: int = Field(default=10, ge=2)
    # Population margins the open tier's weights are raked to (a JSON file; see open_tier/weighting/targets.py).
    # Unset: the GSS 2022 margins of sex, age band, race, education and region shipped with the bank.
    weight_targets: Path | None = None
    # Reviewers who must approve a project, none of them its member: 2 keeps one reviewer from opening
    # individual answers alone (the first approval waits for a second; a rejection is final).
    review_approvals: int = Field(default=1, ge=1, le=2)
    # When workers try to cut a new release of the open tier (cron); one is cut only when the policy allows.
    release_cron: str = "*/5 * * * *"
    # The open tier's protection (open_tier/privacy.py): what one release spends on each answer (Gaussian
    # DP's mu), what a member may spend over every release they are in, at most how often a release is
    # cut when something changed, and the bound on one person's weight.
    release_mu: float = Field(default=1.0, gt=0, le=10)
    # Unset: sized so that a member who stays is in every release cut over release_horizon_days, releases
    # being at least release_min_interval_s apart (privacy.Budget.for_horizon: mu 7.8 at the defaults).
    release_lifetime_mu: float | None = Field(default=None, gt=0, le=100)
    release_horizon_days: float = Field(default=1826.0, gt=0)  # five years
    release_min_interval_s: float = Field(default=30 * 86_400.0, ge=0)  # a release a month at most
    # Where published releases are kept as files (open_tier/publication.py); unset: data_dir/releases. A
    # file server (nginx) may serve this directory as it is.
    release_files_dir: Path | None = None
    # The share of each answer's budget (of mu**2) kept for tables researchers ask for; the standing tables share
    # the rest. 0.30 on benchmarks/bench_release_privacy: standing one-way and asked tables then carry equal noise.
    release_reserve_share: float = Field(default=0.30, gt=0, le=0.6)
    # The breakdowns every release measures (its standing workload); the others, and pairs, are measured
    # when researchers ask for them, from the budget reserved for asked tables (open_tier/workload.py).
    release_standing_breakdowns: list[str] = Field(
        default_factory=lambda: ["sex", "age_band", "race", "education", "region", "party"], min_length=1
    )
    release_weight_cap: float = Field(default=2.0, ge=1, le=10)
    # The worker: how often it proves it is alive, and when others take over its tasks.
    worker_heartbeat_s: float = Field(default=10.0, gt=0)
    worker_stalled_after_s: float = Field(default=30.0, gt=0)
    # Audit checkpoints: workers sign the log's head once this many events are not yet covered by one,
    # or once the newest checkpoint is this old and events came after it.
    audit_checkpoint_events: int = Field(default=100, ge=1)
    audit_checkpoint_interval_s: float = Field(default=60.0, ge=1)
    # How often each API and worker process chains new audit events: a participant's receipt (the
    # event's place in the chain) is there within about this long after the use.
    audit_sequence_interval_s: float = Field(default=1.0, gt=0, le=60)
    # Where every checkpoint is appended as it is signed; unset: data_dir/audit-checkpoints. Point it at
    # another volume (or a directory a witness mirrors), out of reach of whoever can rewrite the database.
    audit_checkpoint_dir: Path | None = None
    # The Ed25519 key (PEM, PKCS#8) that signs checkpoints. Unset: derived from a real secret_key, or,
    # in development with a placeholder secret, a random key kept in data_dir/audit-signing-key.pem.
    audit_signing_key_file: Path | None = None
    # The log's name in its signed tree heads (the C2SP checkpoint's origin line and the key name of the
    # bank's note signature): a schema-less URL without spaces or "+", normally the bank's own host and a
    # path. Witnesses know the log by it, so it never changes once witnesses cosign.
    audit_origin: str = Field(default="agentbank.invalid/audit", pattern=r"^[^\s+]+$")
    # Independent witnesses (c2sp.org/tlog-witness) asked to cosign each new tree head: a JSON list of
    # {"url": their submission prefix, "key": their verifier key, name+id+base64}. Unset: none.
    audit_witnesses: list[WitnessSetting] = Field(default_factory=list)
    # How long one witness may take to answer before the bank goes on without its cosignature.
    audit_witness_timeout_s: float = Field(default=5.0, gt=0, le=60)
    # On Ctrl-C or SIGTERM, how long tasks in flight may go on before their model calls are cut and
    # they go back to the queue (their attempt not counted).
    shutdown_grace_s: float = Field(default=10.0, ge=0)

    # Interviewer: speech
    transcriber: Literal["embedded", "fake"] = "embedded"
    speaker: Literal["embedded", "openai", "fake"] = "embedded"
    # An OpenAI-compatible /audio/speech endpoint, used when speaker is "openai" (unset: OpenAI's).
    tts_base_url: str | None = None
    tts_api_key: SecretStr | None = None
    tts_model: str = "tts-1"
    tts_voice: str = "alloy"
    # The end of a spoken turn (interviewer/hearing/turn_end.py): at a pause of end_of_turn_pause_s the words so far
    # are judged; a finished thought ends the turn after end_of_turn_finished_s of silence, anything else
    # (an "um", an "and", a sentence without its end) after end_of_turn_silence_s, longer than a pause to think.
    end_of_turn_pause_s: float = Field(default=0.3, ge=0.1, le=5.0)
    # 1.2 s, not 0.7: on the bank's own corpus 0.7 s cut 9.5% of answers inside a sentence (Whisper writes "was."
    # and "is mine." with a full stop), 1.2 s 1.6% with no more missed ends; half a second of waiting costs
    # less than an interrupted story.
    end_of_turn_finished_s: float = Field(default=1.2, ge=0.1, le=10.0)
    end_of_turn_silence_s: float = Field(default=3.0, ge=0.3, le=30.0)
    # A pause read as finished is heard again on its last words alone, this many seconds of them (each in
    # turn): if any ends on an "and" or an "um", the thought is not finished.
    end_of_turn_tails_s: list[float] = Field(default=[1.2], min_length=1, max_length=4)
    # ...and a tail whose last word is not the last word heard before (Whisper guessing at a word, "this
    # mine." then "this, Mike.") leaves the thought unknown: the turn waits end_of_turn_silence_s.
    end_of_turn_tail_must_agree: bool = False
    # A turn with less than end_of_turn_short_speech_s of speech so far waits end_of_turn_short_finished_s
    # after a finished thought: people pause to plan just after they begin (a very short answer waits longer).
    end_of_turn_short_speech_s: float = Field(default=2.5, ge=0.0, le=30.0)
    # (never less than end_of_turn_finished_s, nor more than end_of_turn_silence_s).
    end_of_turn_short_finished_s: float = Field(default=1.2, ge=0.1, le=10.0)
    # What hears at each pause, before the words, whether the voice sounds finished: "smart-turn" (Smart Turn
    # v3.2, from the pipecat-ai package) or "none" (the words alone). When it hears a finished voice with at
    # least end_of_turn_sure_above probability (after end_of_turn_short_speech_s of speech), the turn ends
    # after end_of_turn_sure_s, without waiting for the words.
    end_of_turn_voice: Literal["smart-turn", "none"] = "smart-turn"
    end_of_turn_sure_s: float = Field(default=0.5, ge=0.1, le=10.0)
    end_of_turn_sure_above: float = Field(default=0.5, ge=0.0, le=1.0)
    # After a scripted question whose time budget is at least end_of_turn_story_question_s (follow-ups under
    # it included), a finished thought or a sure voice waits end_of_turn_story_finished_s instead: a story is
    # told in finished sentences with pauses between them, and neither the words nor the voice tell those
    # pauses from its end. On the answers that go on after a finished sentence (pauses of 0.5 to 1.5 s), by a
    # fan, 58.3% were ended between their sentences with the waits above and none with 1.8 s, which stays under
    # the 2 s after which an end counts as missed (benchmarks/results/turn-end-quick-2026-11-29-2.json).
    end_of_turn_story_question_s: float = Field(default=60.0, ge=0.0)
    end_of_turn_story_finished_s: float = Field(default=1.8, ge=0.1, le=10.0)
    # Which voice activity detector hears answers: "silero" (the model shipped with faster-whisper), or
    # "energy" (a level meter that hears any loud sound as speech; for tests that speak in tones).
    voice_detector: Literal["silero", "energy"] = "silero"
    # One uploaded audio chunk: 2 MiB holds a minute of 16 kHz WAV and several minutes of browser Opus.
    max_audio_chunk_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)

    @field_validator("metrics_token")
    @classmethod
    def _blank_is_unset(cls, token: SecretStr | None) -> SecretStr | None:
        # An empty line in an env file must not open /metrics to a scraper sending an empty token.
        return token if token is not None and token.get_secret_value().strip() else None

    @field_validator("reference_data_dir")
    @classmethod
    def _absolute(cls, path: Path) -> Path:
        # Absolute, so errors name the real place and later changes of directory do not move it.
        return path.expanduser().resolve()

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.environment != "development":
            for name in ("secret_key", "chat_api_key", "embedding_api_key", "tts_api_key", "metrics_token"):
                value: SecretStr | None = getattr(self, name)
                if value is None:
                    continue
                raw = value.get_secret_value()
                if raw.strip().lower() in PLACEHOLDER_SECRETS:
                    raise ValueError(
                        f"AGENTBANK_{name.upper()} holds a placeholder; set a real secret outside development"
                    )
            if len(self.secret_key.get_secret_value()) < MIN_SECRET_LENGTH:
                raise ValueError(
                    f"AGENTBANK_SECRET_KEY must be at least {MIN_SECRET_LENGTH} characters outside development"
                )
        if self.chat_provider == "openai" and not self.chat_model:
            raise ValueError(
                "AGENTBANK_CHAT_PROVIDER=openai needs AGENTBANK_CHAT_MODEL "
                "(and AGENTBANK_CHAT_BASE_URL for endpoints other than OpenAI's)"
            )
        if self.key_store == "pkcs11" and not (self.pkcs11_module and self.pkcs11_token_label and self.pkcs11_pin):
            raise ValueError(
                "AGENTBANK_KEY_STORE=pkcs11 needs AGENTBANK_PKCS11_MODULE, AGENTBANK_PKCS11_TOKEN_LABEL and "
                "AGENTBANK_PKCS11_PIN"
            )
        if self.embedder_provider == "openai" and not self.embedding_model:
            raise ValueError("AGENTBANK_EMBEDDER_PROVIDER=openai needs AGENTBANK_EMBEDDING_MODEL")
        if not self.end_of_turn_pause_s <= self.end_of_turn_finished_s <= self.end_of_turn_silence_s:
            raise ValueError(
                "the end of turn's silences must grow: AGENTBANK_END_OF_TURN_PAUSE_S <= "
                "AGENTBANK_END_OF_TURN_FINISHED_S <= AGENTBANK_END_OF_TURN_SILENCE_S"
            )
        if not self.end_of_turn_pause_s <= self.end_of_turn_sure_s <= self.end_of_turn_finished_s:
            raise ValueError(
                "a sure end of turn waits between the pause and a finished thought's silence: "
                "AGENTBANK_END_OF_TURN_PAUSE_S <= AGENTBANK_END_OF_TURN_SURE_S <= AGENTBANK_END_OF_TURN_FINISHED_S"
            )
        if not self.end_of_turn_pause_s <= self.end_of_turn_story_finished_s <= self.end_of_turn_silence_s:
            raise ValueError(
                "a story's finished thought waits between the pause and an unfinished thought's silence: "
                "AGENTBANK_END_OF_TURN_PAUSE_S <= AGENTBANK_END_OF_TURN_STORY_FINISHED_S <= "
                "AGENTBANK_END_OF_TURN_SILENCE_S"
            )
        if self.embedder_provider == "local" and self.embedding_dimension != 384:
            raise ValueError("the local MiniLM embedder has 384 dimensions; unset AGENTBANK_EMBEDDING_DIMENSION")
        return self

    @property
    def calls_in_flight(self) -> int:
        """How many chat calls one process makes at once: one for the embedded model."""
        return 1 if self.chat_provider == "embedded" else self.chat_calls_in_flight

    @property
    def postgres_dir(self) -> Path:
        """Data directory of the embedded PostgreSQL server."""
        return self.data_dir / "postgres"

    @property
    def has_placeholder_secret(self) -> bool:
        """Whether secret_key is a placeholder or too short to derive anything from (allowed only in development)."""
        raw = self.secret_key.get_secret_value()
        return raw.strip().lower() in PLACEHOLDER_SECRETS or len(raw) < MIN_SECRET_LENGTH

    @property
    def audit_checkpoint_path(self) -> Path:
        """The append-only file of signed checkpoints kept outside the database."""
        return (self.audit_checkpoint_dir or self.data_dir / "audit-checkpoints") / "checkpoints.jsonl"

    @property
    def release_files_path(self) -> Path:
        """The shelf of published releases."""
        return self.release_files_dir or self.data_dir / "releases"

    @property
    def audit_tiles_dir(self) -> Path:
        """The audit log's tiles kept outside the database (``audit.tiles``), beside the outside checkpoints."""
        return self.audit_checkpoint_path.with_name("tiles")

    @property
    def withdrawal_ledger_path(self) -> Path:
        """The append-only, signed file of withdrawals, beside the outside checkpoints (``participants.ledger``)."""
        return self.audit_checkpoint_path.with_name("withdrawals.jsonl")

    def keyring_path(self, database: str) -> Path:
        """The keyring file of one database (the bank's, or the evaluation's)."""
        return (self.keyring_dir or self.data_dir / "keyring") / f"{database}.json"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once from the environment."""
    return Settings()
