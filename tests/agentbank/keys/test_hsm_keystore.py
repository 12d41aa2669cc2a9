"""The key-encryption keys in a PKCS#11 token (SoftHSM2): wrapped and unwrapped inside it, destroyed there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pkcs11 import Attribute
from pkcs11.exceptions import AttributeSensitive
from sqlalchemy import create_engine, text

from agentbank.audit import log as audit
from agentbank.building.transcripts import store_interview
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.keys.crypto import DataKeyDestroyedError, DecryptionError, KeyRing
from agentbank.keys.hsm import Pkcs11KeyStore
from agentbank.keys.stores import open_store
from agentbank.participants.withdrawal import withdraw
from tests.support.factories import SECRET, interview
from tests.support.keys import first_turn, keys_that_open

PIN = "4711-token-user"
MODULES = ("/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so")


@pytest.fixture(scope="module")
def token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A SoftHSM2 token of its own (module path, token directory), labelled "bank", with a user PIN.

    SoftHSM reads its configuration once per process, when the module is loaded: every test of this
    module shares the token, each under a database name of its own."""
    module = next((Path(m) for m in MODULES if Path(m).exists()), None)
    if module is None or shutil.which("softhsm2-util") is None:
        pytest.skip("SoftHSM2 is not installed (Debian: apt-get install softhsm2); .ci/run installs it")
    root = tmp_path_factory.mktemp("softhsm")
    (root / "tokens").mkdir()
    conf = root / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {root / 'tokens'}\nobjectstore.backend = file\nlog.level = ERROR\n")
    os.environ["SOFTHSM2_CONF"] = str(conf)
    subprocess.run(
        ["softhsm2-util", "--init-token", "--free", "--label", "bank", "--pin", PIN, "--so-pin", "so-" + PIN],
        check=True, capture_output=True,
    )  # fmt: skip
    yield module, root / "tokens"


def objects(tokens: Path) -> int:
    """The objects SoftHSM keeps on disk: one file each."""
    return len(list(tokens.rglob("*.object"))) - 1  # the token's own object aside


def test_wrap_and_unwrap_happen_in_the_token_and_destroying_a_version_destroys_its_object(token):
    module, tokens = token
    store = Pkcs11KeyStore(module, "bank", PIN, f"unit_{uuid.uuid4().hex[:8]}")
    keys = KeyRing(SECRET, store)
    before = objects(tokens)
    alice = uuid.uuid4()
    wrapped, cipher = keys.new_key(alice)
    sealed = cipher.seal("my words")
    assert store.versions() == [1] and objects(tokens) == before + 1
    assert keys.cipher(alice, wrapped).open(sealed) == "my words"
    with pytest.raises(AttributeSensitive):  # the KEK itself never leaves the token
        store._objects()[1][0][Attribute.VALUE]
    with pytest.raises(DecryptionError):  # bound to its participant
        keys.data_key(uuid.uuid4(), wrapped)

    # Another process (another store on the same token) sees the same versions, and rotates.
    other = KeyRing(SECRET, Pkcs11KeyStore(module, "bank", PIN, store.prefix.split(":")[1]))
    version = other.store.add_version()
    rewrapped = other.rewrap(alice, wrapped, version)
    assert version == 2 and store.versions() == [1, 2] and objects(tokens) == before + 2
    store.destroy({1})
    assert other.store.versions() == [2] and objects(tokens) == before + 1  # the object's file is gone
    with pytest.raises(DataKeyDestroyedError):
        other.data_key(alice, wrapped)
    assert other.cipher(alice, rewrapped).open(sealed) == "my words"
    # Stores of other databases on the same token are apart.
    assert Pkcs11KeyStore(module, "bank", PIN, "another_database").versions() == []


def test_the_setting_chooses_the_token_and_a_wrong_pin_or_label_is_a_clear_error(token, tmp_path):
    module, _ = token
    settings = Settings(data_dir=tmp_path, key_store="pkcs11", pkcs11_module=module, pkcs11_token_label="bank",
                        pkcs11_pin=PIN)  # fmt: skip
    store = open_store(settings, "setting_test")
    assert isinstance(store, Pkcs11KeyStore) and store.current_version() == 1
    assert not (tmp_path / "keyring").exists()  # no keyring file is written
    with pytest.raises(ValueError, match="AGENTBANK_PKCS11_MODULE"):
        Settings(key_store="pkcs11")
    # A process is logged in to a token once (PKCS#11): a wrong PIN shows in a process of its own.
    wrong = subprocess.run(
        [sys.executable, "-c", "from agentbank.keys.hsm import Pkcs11KeyStore as S; import sys; "
         "S(sys.argv[1], 'bank', 'wrong', 'x').versions()", str(module)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert wrong.returncode == 1 and "refused AGENTBANK_PKCS11_PIN" in wrong.stderr
    with pytest.raises(ConfigurationError, match="no PKCS#11 token labelled 'nobody'"):
        Pkcs11KeyStore(module, "nobody", PIN, "x").versions()


@pytest.mark.slow
def test_after_withdrawal_nothing_the_token_or_any_file_holds_opens_the_persons_data(token, bank_files):
    module, tokens = token
    settings, url = bank_files
    engine = create_engine(url)
    sessions = make_sessionmaker(engine)
    store = Pkcs11KeyStore(module, "bank", PIN, f"scan_{uuid.uuid4().hex[:8]}")
    keys = KeyRing(SECRET, store)
    with transaction(sessions) as session:
        alice = store_interview(session, interview("file:alice.json"), keys)
        bob = store_interview(session, interview("file:bob.json"), keys)
    with sessions() as session:
        alice_turn, bob_turn = first_turn(session, alice.id), first_turn(session, bob.id)
    assert keys_that_open(settings.data_dir, SECRET, alice.id, alice_turn, token=store) >= 1  # the scan works

    with transaction(sessions) as session:
        withdraw(session, keys, alice.id, audit.Actor("participant", str(alice.id)), ledger=None)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM participants"))
        conn.execute(text("CHECKPOINT"))

    assert store.versions() == [2]  # version 1, which wrapped Alice's key, is no object of the token any more
    assert keys_that_open(settings.data_dir, SECRET, alice.id, alice_turn, token=store) == 0
    assert keys_that_open(tokens, SECRET, alice.id, alice_turn, token=store) == 0  # nor the token's own files
    assert keys_that_open(settings.data_dir, SECRET, bob.id, bob_turn, token=store) >= 1
    assert not (settings.data_dir / "keyring").exists()
    engine.dispose()


def test_a_forked_process_logs_in_on_its_own(token):
    # Workers and servers fork: the child's copy of the parent's login is not its own (it was refused
    # with "user already logged in" until the library was initialized again in the child).
    module, _ = token
    store = Pkcs11KeyStore(module, "bank", PIN, f"fork_{uuid.uuid4().hex[:8]}")
    blob = store.wrap(store.current_version(), b"k" * 32, b"context")
    pid = os.fork()
    if pid == 0:  # the child reports by its exit status alone
        try:
            os._exit(0 if store.unwrap(1, blob, b"context") == b"k" * 32 else 1)
        except BaseException:
            os._exit(2)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert store.unwrap(1, blob, b"context") == b"k" * 32  # the parent's session still serves
