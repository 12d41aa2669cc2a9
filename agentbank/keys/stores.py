"""Which key store holds the bank's key-encryption keys: one registry, chosen by ``AGENTBANK_KEY_STORE``."""

from __future__ import annotations

from collections.abc import Callable

from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.keys.keystore import FileKeyStore, KeyStore


def _file(settings: Settings, database: str) -> KeyStore:
    return FileKeyStore(settings.keyring_path(database), settings.secret_key.get_secret_value())


def _pkcs11(settings: Settings, database: str) -> KeyStore:
    from agentbank.keys.hsm import Pkcs11KeyStore  # loads the binding only for a bank that uses a token

    module, label, pin = settings.pkcs11_module, settings.pkcs11_token_label, settings.pkcs11_pin
    if module is None or label is None or pin is None:
        raise ConfigurationError(
            "AGENTBANK_KEY_STORE=pkcs11 needs AGENTBANK_PKCS11_MODULE, AGENTBANK_PKCS11_TOKEN_LABEL and "
            "AGENTBANK_PKCS11_PIN"
        )
    return Pkcs11KeyStore(module, label, pin.get_secret_value(), database)


# Each store by the name the setting takes: "file" (the embedded default) or "pkcs11" (a token).
KEY_STORES: dict[str, Callable[[Settings, str], KeyStore]] = {"file": _file, "pkcs11": _pkcs11}


def open_store(settings: Settings, database: str) -> KeyStore:
    """The key store of one database (the bank's, or the evaluation's), as the settings choose."""
    return KEY_STORES[settings.key_store](settings, database)
