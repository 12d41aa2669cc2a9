"""The interviewer's follow-up decision with the embedded chat model, by llama.cpp thread count.

The decision is the whole of a spoken turn's wait (see bench_voice), so its thread count is chosen
by measuring it: each count gets its own server, and the counts are alternated (1, 2, then 2, 1) so
a change in the machine's load falls on both. The first call of each server evaluates the prompt;
the later ones find its prefix cached, as a running interview does, and are the ones timed.

Run: python -m benchmarks.bench_decision [--calls 6] [--threads 1 2]
(on idle cores: other work on two cores distorts every figure.)
"""

from __future__ import annotations

import argparse
import statistics

from agentbank.core.settings import Settings
from agentbank.providers.chat import ChatRequest, Message
from agentbank.providers.factory import build_chat_model
from benchmarks.common import machine, save
from interviewer.deciding.decisions import DECISION_MAX_TOKENS, DECISION_SCHEMA
from interviewer.deciding.model_prompts import Exchange, decision_prompt
from interviewer.session.script import load_script

ANSWER = "I grew up in a small town near the sea; my father was a fisherman and my mother taught school."


def decision_messages() -> list[Message]:
    """The decision prompt after the first answer of the interview's first question."""
    question = load_script().modules[0].questions[0].text
    turns = [Exchange("interviewer", question), Exchange("participant", ANSWER)]
    return decision_prompt(turns, (), question, 0, ANSWER, 100)


def timed_calls(threads: int, calls: int) -> list[tuple[float, int, float]]:
    """(seconds, completion tokens, completion tokens/s) of each call after the first."""
    chat = build_chat_model(Settings(chat_provider="embedded", embedded_threads=threads))
    messages, rows = decision_messages(), []
    try:
        for i in range(calls):
            result = chat.complete(
                ChatRequest(
                    messages, schema=DECISION_SCHEMA, temperature=0.7, max_tokens=DECISION_MAX_TOKENS, seed=100 + i
                )
            )
            if i > 0:
                speed = result.speed.completion_tps if result.speed else 0.0
                rows.append((result.seconds, result.usage.completion_tokens, speed))
    finally:
        chat.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=6, help="calls per server (the first is not timed)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    rows: dict[int, list[tuple[float, int, float]]] = {t: [] for t in args.threads}
    for order in (args.threads, list(reversed(args.threads))):
        for threads in order:
            rows[threads] += timed_calls(threads, args.calls)
    figures = {}
    for threads, timed in rows.items():
        figures[f"threads_{threads}"] = {
            "calls": len(timed),
            "decision_s_median": round(statistics.median(r[0] for r in timed), 2),
            "decision_s_max": round(max(r[0] for r in timed), 2),
            "completion_tokens_median": statistics.median(r[1] for r in timed),
            "completion_tps_median": round(statistics.median(r[2] for r in timed), 1),
        }
        f = figures[f"threads_{threads}"]
        print(
            f"threads {threads}: decision median {f['decision_s_median']} s (max {f['decision_s_max']} s), "
            f"{f['completion_tps_median']} tokens/s, {f['completion_tokens_median']} tokens"
        )
    print(f"load average at the end: {machine()['load_average_1_5_15_min']}")
    print(f"figures in {save('decision', figures)}")


if __name__ == "__main__":
    main()
