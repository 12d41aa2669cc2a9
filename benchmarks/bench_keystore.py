"""Wraps and unwraps of participants' data keys per second: the file keyring against a PKCS#11 token
(SoftHSM2), one thread and several at once, through the bank's own KeyRing.

A wrap is what making a participant's key and a rotation's re-wrap cost; an unwrap is what every read
of a participant's sealed data costs once per request (the key is unwrapped, then used in process).

Run: python -m benchmarks.bench_keystore [--seconds 5] [--threads 1,4] [--quick]
(needs Debian's softhsm2; the token is made in a temporary directory and removed)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console

from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore, KeyStore
from benchmarks.common import save

SECRET = "benchmark-secret-" * 3
PIN = "bench-pin-1234"
MODULES = ("/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so")


def softhsm(root: Path) -> Path:
    """A fresh SoftHSM2 token labelled "bench" under ``root``; returns the module's path."""
    module = next((Path(m) for m in MODULES if Path(m).exists()), None)
    if module is None or shutil.which("softhsm2-util") is None:
        raise SystemExit("SoftHSM2 is not installed: apt-get install softhsm2")
    (root / "tokens").mkdir()
    conf = root / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {root / 'tokens'}\nobjectstore.backend = file\nlog.level = ERROR\n")
    os.environ["SOFTHSM2_CONF"] = str(conf)  # read when the module is loaded, below
    subprocess.run(
        ["softhsm2-util", "--init-token", "--free", "--label", "bench", "--pin", PIN, "--so-pin", "so-" + PIN],
        check=True, capture_output=True,
    )  # fmt: skip
    return module


def rate(operation: Callable[[int], object], seconds: float, threads: int) -> float:
    """Operations per second over ``seconds``, with ``threads`` callers at once."""
    deadline = time.perf_counter() + seconds

    def caller(n: int) -> int:
        done = 0
        while time.perf_counter() < deadline:
            operation(n * 1_000_000 + done)
            done += 1
        return done

    began = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(caller, range(threads)))
    return total / (time.perf_counter() - began)


def measure(store: KeyStore, seconds: float, threads: list[int]) -> dict[str, float]:
    keys = KeyRing(SECRET, store)
    people = [uuid.uuid4() for _ in range(64)]
    wrapped = [keys.new_key(p)[0] for p in people]
    version = store.current_version()
    figures = {}
    for n in threads:
        figures[f"wrap_per_s_{n}_threads"] = rate(
            lambda i: keys.rewrap(people[i % 64], wrapped[i % 64], version), seconds, n
        )  # a re-wrap: one unwrap and one wrap
        figures[f"unwrap_per_s_{n}_threads"] = rate(
            lambda i: keys.data_key(people[i % 64], wrapped[i % 64]), seconds, n
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds each figure is measured over")
    parser.add_argument("--threads", default="1,4", help="callers at once, comma-separated")
    parser.add_argument("--quick", action="store_true", help="a fraction of a second each: checks it runs")
    args = parser.parse_args()
    seconds = 0.2 if args.quick else args.seconds
    threads = [int(t) for t in args.threads.split(",")]
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-keys-"))
    try:
        from agentbank.keys.hsm import Pkcs11KeyStore  # after SOFTHSM2_CONF is set

        module = softhsm(root)
        figures = {
            "file": measure(FileKeyStore(root / "keyring.json", SECRET), seconds, threads),
            "pkcs11_softhsm2": measure(Pkcs11KeyStore(module, "bench", PIN, "bench"), seconds, threads),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for store, values in figures.items():
        for key, value in values.items():
            console.print(f"{store} {key}: {value:,.0f}")
    if not args.quick:
        console.print(f"saved to {save('keystore', figures)}")
    first = f"unwrap_per_s_{threads[0]}_threads"
    ratio = figures["file"][first] / figures["pkcs11_softhsm2"][first]
    console.print(f"unwrap with {threads[0]} thread(s): the file keyring at {ratio:.1f} times the token's rate")


if __name__ == "__main__":
    main()
