"""OpenAI-compatible backend against a real llama-cpp-python server on 127.0.0.1."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest

from docchat.backends import GenerationRequest, Message
from docchat.backends.llamacpp import bundled_model_path
from docchat.backends.openai_http import OpenAIBackend
from docchat.errors import BackendError, BackendUnavailable, ContextTooLong


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server_url(tmp_path_factory):
    """llama-cpp-python's server with the bundled GGUF (docchat's launcher: same load settings)."""
    port = free_port()
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w+b")
    process = subprocess.Popen(
        [sys.executable, "-m", "docchat.backends.llamacpp", "--model", str(bundled_model_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1",
         # By default it cuts a running stream short whenever another request (even
         # /extras/tokenize) waits for the model.
         "--interrupt_requests", "False"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                log.seek(0)
                pytest.fail(f"server exited: {log.read().decode(errors='replace')[-2000:]}")
            try:
                if httpx.get(url + "/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("server did not become ready in 120s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="module")
def backend(server_url) -> OpenAIBackend:
    return OpenAIBackend(server_url, context_window=2048, timeout=60)


def ask(text: str, **options) -> GenerationRequest:
    return GenerationRequest(messages=[Message("user", text)], **options)


def test_model_and_window(backend, server_url):
    assert backend.model == str(bundled_model_path())  # the server's alias is its path
    assert backend.context_window == 2048 and backend.device == server_url
    assert OpenAIBackend(server_url).context_window == 8192  # not reported: the default


def test_stream_equals_non_streamed_answer(backend):
    # The server keeps the last prompt in its KV cache and re-reads only the last token of
    # a repeated prompt, while a cold prompt is read in one batch: other batch shapes round
    # differently and can flip near-tied greedy choices, so the first answer to a prompt
    # may legitimately differ from later ones. What is deterministic is compared: after a
    # warm-up, the streamed and the non-streamed answers both start from the same cache
    # state (the prompt cached, its last token re-read).
    question = "Name three colours."
    options = dict(model=backend.model, messages=[{"role": "user", "content": question}],
                   max_tokens=16, temperature=0.0, seed=0, extra_body={"repeat_penalty": 1.0})
    backend.client.chat.completions.create(stream=False, **options)  # warm-up
    request = ask(question, max_new_tokens=16, seed=0)
    pieces = list(backend.stream(request))
    whole = backend.client.chat.completions.create(stream=False, **options)
    assert "".join(pieces) == whole.choices[0].message.content
    assert not any("\ufffd" in p for p in pieces)
    assert request.stats.completion_tokens == whole.usage.completion_tokens
    assert request.stats.finish_reason == whole.choices[0].finish_reason


def test_progress_is_reported_as_unknown(backend):
    events = []
    request = ask("Say hi.", max_new_tokens=4, on_progress=events.append)
    assert "".join(backend.stream(request))
    assert [e.done for e in events] == [0, request.stats.prompt_tokens]
    assert not any(e.known for e in events) and backend.prefill_rate() is None
    assert request.stats.prefill_started_at is not None
    backend.prefetch([Message("system", "Be brief.")])  # a no-op for servers


def test_count_tokens_uses_the_server_tokenizer(backend):
    from llama_cpp import Llama

    vocab = Llama(model_path=str(bundled_model_path()), vocab_only=True, verbose=False)
    text = "你好，世界"
    # The server counts as its Llama.tokenize does (with BOS); cl100k would say 4.
    assert backend.count_tokens(text) == len(vocab.tokenize(text.encode(), special=True)) == 10
    assert backend._tokenize == ("/extras/tokenize", "input")


def test_cancel_closes_the_stream(backend):
    request = ask("Write a long story about a dragon.", max_new_tokens=300)
    pieces = []
    for piece in backend.stream(request):
        pieces.append(piece)
        if len(pieces) == 3:
            request.cancel.set()
    assert len(pieces) == 3 and request.stats.stopped
    assert request.stats.completion_tokens <= 3 + 1
    # The server is free again at once (it stopped on the disconnect).
    after = ask("Say hi.", max_new_tokens=4)
    assert "".join(backend.stream(after)) and after.stats.completion_tokens <= 4


def test_prompt_too_long_raises_before_sending(backend):
    with pytest.raises(ContextTooLong, match="context window is 2,048 tokens"):
        next(backend.stream(ask("dragon " * 2100, max_new_tokens=64)))


def test_server_side_context_error_is_clear(server_url):
    lying = OpenAIBackend(server_url, context_window=100_000)
    # Refused with HTTP 400 (streamed, llama-cpp-python's server just ends the stream:
    # see test_stream_cut_before_finish).
    with pytest.raises(ContextTooLong, match="maximum context length is 2048"):
        lying._call(lambda: lying.client.chat.completions.create(
            model=lying.model, max_tokens=64,
            messages=[{"role": "user", "content": "dragon " * 2100}]))


def test_dead_server():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(BackendUnavailable, match=f"No server at {url}; is vLLM"):
        OpenAIBackend(url)


def mocked(chat: httpx.Response) -> OpenAIBackend:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"object": "list", "data": [
                {"id": "m", "object": "model", "owned_by": "me", "max_model_len": 4096}]})
        return chat

    url = f"http://127.0.0.1:{free_port()}/v1"  # tokenize probes fail fast: tiktoken
    client = openai.OpenAI(base_url=url, api_key="x", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    return OpenAIBackend(url, client=client)


def test_stream_cut_before_finish():
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]}
    body = f"data: {json.dumps(chunk)}\n\n".encode()
    backend = mocked(httpx.Response(200, content=body,
                                    headers={"content-type": "text/event-stream"}))
    pieces = []
    with pytest.raises(BackendError, match="ended the answer early.*lower max_new_tokens"):
        for piece in backend.stream(ask("hello", max_new_tokens=8)):
            pieces.append(piece)
    assert pieces == ["Hel"]


def test_http_500_becomes_backend_error():
    backend = mocked(httpx.Response(500, json={"error": {"message": "engine crashed"}}))
    assert backend.model == "m" and backend.context_window == 4096
    with pytest.raises(BackendError, match="answered HTTP 500: engine crashed"):
        list(backend.stream(ask("hello", max_new_tokens=8)))


def test_waiting_request_learns_its_place(backend):
    import threading

    narrow = OpenAIBackend(backend.base_url, context_window=2048, max_concurrency=1)
    first = ask("Count to twenty.", max_new_tokens=20)
    places = []
    second = ask("Say hi.", max_new_tokens=4, on_queue=places.append)
    stream = narrow.stream(first)
    next(stream)  # the first holds the only slot
    worker = threading.Thread(target=lambda: list(narrow.stream(second)))
    worker.start()
    deadline = time.monotonic() + 10
    while not places and time.monotonic() < deadline:
        time.sleep(0.01)
    list(stream)
    worker.join(30)
    assert places == [1, 0] and second.stats.completion_tokens > 0


def recording_server(owned_by: str, final: dict, meta: bool = False):
    """A mocked server listing one model; the chat bodies it got, and the backend."""
    bodies = []
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]},
              {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [], **final}]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    entry = {"id": "m", "object": "model", "owned_by": owned_by}
    if meta:
        entry["meta"] = {"n_ctx_train": 4096}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"object": "list", "data": [entry]})
        if request.url.path.endswith("/chat/completions"):
            bodies.append(json.loads(request.content))
            return httpx.Response(200, content=body.encode(),
                                  headers={"content-type": "text/event-stream"})
        return httpx.Response(404)

    url = f"http://127.0.0.1:{free_port()}/v1"
    client = openai.OpenAI(base_url=url, api_key="x", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    return bodies, OpenAIBackend(url, client=client)


USAGE = {"prompt_tokens": 900, "completion_tokens": 1, "total_tokens": 901}


def test_llama_cpp_server_gets_cache_prompt_and_reports_its_reuse():
    timings = {"cache_n": 850, "prompt_n": 50, "prompt_ms": 120.0}
    bodies, backend = recording_server("llamacpp", {"usage": USAGE, "timings": timings},
                                       meta=True)
    request = ask("hello", max_new_tokens=8)
    assert "".join(backend.stream(request)) == "Hi"
    assert bodies[0]["cache_prompt"] is True
    assert bodies[0]["stream_options"] == {"include_usage": True}
    assert request.stats.prompt_tokens == 900 and request.stats.prompt_reused == 850


def test_other_servers_report_cached_tokens_and_get_no_cache_prompt():
    usage = {**USAGE, "prompt_tokens_details": {"cached_tokens": 768}}
    bodies, backend = recording_server("vllm", {"usage": usage})
    request = ask("hello", max_new_tokens=8)
    assert "".join(backend.stream(request)) == "Hi"
    assert "cache_prompt" not in bodies[0]
    assert request.stats.prompt_reused == 768
