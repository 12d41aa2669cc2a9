"""Foundation figures: embedded database start, embedded LLM speed and prefix cache, embedder speed.

Run: python -m benchmarks.bench_foundation
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agentbank.providers.chat import ChatRequest
from agentbank.providers.embedded_llm import EmbeddedChatModel
from agentbank.providers.embeddings import LocalMiniLMEmbedder
from benchmarks.common import save

START = (
    "import sys; from pathlib import Path; from agentbank.db.embedded import start_embedded_server as s; "
    "r = s(Path(sys.argv[1])); print(r.start_seconds)"
)
HOLD = START + "; import time; time.sleep(60)"


def database_starts() -> dict[str, float]:
    """Seconds to start: a new data directory (initdb), a stopped server, a server another process runs."""
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    pgdata = str(root / "postgres")

    def once() -> float:
        out = subprocess.run([sys.executable, "-c", START, pgdata], capture_output=True, text=True, check=True)
        return float(out.stdout.strip())

    try:
        initdb = once()
        cold = min(once() for _ in range(3))
        holder = subprocess.Popen([sys.executable, "-c", HOLD, pgdata], stdout=subprocess.PIPE, text=True)
        holder.stdout.readline()
        warm = min(once() for _ in range(3))
        holder.terminate()
        holder.wait()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"db_first_start_s": initdb, "db_cold_start_s": cold, "db_warm_start_s": warm}


TRANSCRIPT = (
    "Interviewer: Tell me about where you grew up.\n"
    "Participant: I grew up in a small town in Ohio, the second of four kids. My father worked at the tire "
    "plant and my mother kept the books for a grocery. We went to church on Sundays and I spent summers at "
    "my uncle's farm, baling hay and learning to fix engines. I left for the army at eighteen.\n"
) * 14


def llm_figures() -> dict[str, float]:
    """Load time, prompt and generation speed, and what a repeated prefix costs."""
    began = time.perf_counter()
    model = EmbeddedChatModel(threads=2)
    load = time.perf_counter() - began
    try:
        system = {"role": "system", "content": "You are the participant of this interview.\n" + TRANSCRIPT}
        first = model.complete(
            ChatRequest([system, {"role": "user", "content": "Where did you grow up?"}], max_tokens=1)
        )
        second = model.complete(
            ChatRequest([system, {"role": "user", "content": "What did your father do?"}], max_tokens=1)
        )
        story = model.complete(
            ChatRequest(
                [{"role": "user", "content": "Write a long story about a farm in winter."}],
                max_tokens=160,
                temperature=0.7,
                seed=1,
            )
        )
    finally:
        model.close()
    return {
        "llm_load_s": load,
        "prompt_tokens": first.usage.prompt_tokens,
        "prompt_tokens_per_s": first.usage.prompt_tokens / first.seconds,
        "repeat_prompt_tokens_evaluated": second.usage.evaluated_prompt_tokens,
        "repeat_cached_tokens": second.usage.cached_tokens,
        "repeat_seconds": second.seconds,
        "first_seconds": first.seconds,
        "generation_tokens": story.usage.completion_tokens,
        "generation_tokens_per_s": story.usage.completion_tokens / story.seconds,
    }


def embedder_figures() -> dict[str, float]:
    """Chunks of about 180 words per second, and one short query's latency."""
    embedder = LocalMiniLMEmbedder()
    chunks = [" ".join(TRANSCRIPT.split()[i : i + 180]) for i in range(0, 180 * 15, 180)] * 4
    began = time.perf_counter()
    embedder.embed(chunks)
    chunk_rate = len(chunks) / (time.perf_counter() - began)
    began = time.perf_counter()
    for _ in range(20):
        embedder.embed(["what did your father do for a living?"])
    return {"embed_chunks_per_s": chunk_rate, "embed_query_ms": (time.perf_counter() - began) / 20 * 1000}


def main() -> None:
    console = Console()
    figures: dict[str, float] = {}
    for label, step in [("database", database_starts), ("chat model", llm_figures), ("embedder", embedder_figures)]:
        with console.status(f"measuring the {label}..."):
            figures.update(step())
    table = Table("figure", "value")
    for key, value in figures.items():
        table.add_row(key, f"{value:.3f}" if isinstance(value, float) else str(value))
    console.print(table)
    console.print(f"saved to {save('foundation', figures)}")


if __name__ == "__main__":
    main()
