"""The real embedded models: SmolLM2 through llama.cpp and MiniLM through onnxruntime."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from agentbank.providers.chat import ChatRequest
from agentbank.providers.embedded_llm import EmbeddedChatModel
from agentbank.providers.embeddings import LocalMiniLMEmbedder

pytestmark = pytest.mark.slow

ENUM_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["1", "2", "8"]}},
    "required": ["answer"],
    "additionalProperties": False,
}
PREFIX = (
    "You are answering a survey as the person described below.\n"
    "I am a 54-year-old retired machinist from Dayton, Ohio. I raised three children, go to church "
    "most Sundays, and worry about the cost of groceries and gas. " * 6
)
QUESTIONS = [
    "Do you favor or oppose the death penalty for persons convicted of murder? 1 favor, 2 oppose, 8 don't know",
    "Should marijuana be made legal? 1 legal, 2 not legal, 8 don't know",
    "Would you say most people can be trusted? 1 can trust, 2 cannot, 8 don't know",
    "Is the government spending too little on the environment? 1 yes, 2 no, 8 don't know",
    "Do you think a woman should be able to get a legal abortion for any reason? 1 yes, 2 no, 8 don't know",
]


@pytest.fixture(scope="module")
def llm():
    model = EmbeddedChatModel(threads=2)
    yield model
    model.close()


def ask(llm, question):
    return llm.complete(
        ChatRequest(
            [{"role": "system", "content": PREFIX}, {"role": "user", "content": question}],
            schema=ENUM_SCHEMA,
            max_tokens=24,
        )
    )


def test_enum_schema_answers_are_always_valid(llm):
    answers = [ask(llm, q).data["answer"] for q in QUESTIONS]
    assert len(answers) == 5 and set(answers) <= {"1", "2", "8"}


def test_second_call_with_same_prefix_reports_cached_tokens(llm):
    first = ask(llm, QUESTIONS[0])
    second = ask(llm, QUESTIONS[1])
    assert first.usage.prompt_tokens > 100
    # Everything up to the question is the shared prefix and must come from the cache.
    assert second.usage.cached_tokens >= 0.8 * first.usage.prompt_tokens
    assert second.usage.evaluated_prompt_tokens < 0.3 * second.usage.prompt_tokens


@pytest.fixture(scope="module")
def embedder():
    return LocalMiniLMEmbedder()


def test_local_embedder_gives_unit_vectors_of_384(embedder):
    vectors = embedder.embed(["one", "two words", "a longer sentence with more words in it"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_related_texts_are_closer_than_unrelated(embedder):
    farm, grandma, bonds = embedder.embed(
        [
            "My grandmother raised me on a farm and taught me to bake bread.",
            "I grew up in the countryside where my grandma showed me how to make bread.",
            "Corporate bond yields rose half a point this quarter.",
        ]
    )
    assert farm @ grandma > 0.5 > farm @ bonds


def test_texts_are_read_up_to_256_tokens(embedder):
    filler = "people " * 140
    within = filler + "bond yields inflation " * 10  # about 170 tokens: past the file's 128, under 256
    beyond = within + "people " * 150
    base, changed, long, longer = embedder.embed([filler, within, beyond, beyond + "zebra giraffe " * 20])
    assert base @ changed < 0.99  # words after token 128 still count
    np.testing.assert_allclose(long, longer, atol=1e-6)  # words after token 256 are cut


def test_batches_match_single_texts(embedder):
    texts = [f"sentence number {i} about the weather" for i in range(20)]
    np.testing.assert_allclose(embedder.embed(texts)[7], embedder.embed([texts[7]])[0], atol=1e-5)


def test_builds_side_by_side_embed_one_batch_at_a_time():
    """Agents built at once share the process's model; their batches take turns instead of racing for the cores."""
    embedder = LocalMiniLMEmbedder(batch_size=4)
    model, running, most = embedder._session, [0], [0]
    lock = threading.Lock()

    class Watched:
        def run(self, *args, **kwargs):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            try:
                time.sleep(0.01)  # long enough for another thread to come in, were it let in
                return model.run(*args, **kwargs)
            finally:
                with lock:
                    running[0] -= 1

    embedder._session = Watched()
    callers = [[f"caller {c} tells of the weather on day {i}" for i in range(12)] for c in range(6)]
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(embedder.embed, callers))
    assert most[0] == 1
    for texts, vectors in zip(callers, results, strict=True):  # every caller gets its own texts' vectors back
        np.testing.assert_allclose(vectors, embedder.embed(texts), atol=1e-5)
