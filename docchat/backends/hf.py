"""transformers backend (ChatGLM3-6B-32k by default, or any causal LM with a chat template).

The backend drives the model itself, in the caller's thread: the prompt is read in
chunks over the KV cache (cancel checked and progress reported between chunks, the
prefix shared with the previous prompt skipped), then tokens are chosen one at a time
with transformers' logits processors. There is no generate() thread and no streamer
to hand pieces across, so Stop never waits on another thread: it lands after the
chunk or token being computed.
"""
from __future__ import annotations

import time
from typing import Iterator

from docchat.backends import GenerationRequest, Message, greedy, plain_prompt
from docchat.backends.base import (
    BATCH_SECONDS,
    MIN_BATCH,
    RateMeter,
    StreamingBackend,
    common_prefix,
)
from docchat.errors import BackendError, BackendUnavailable

DEFAULT_PATH = "THUDM/chatglm3-6b-32k"
CHATGLM_TRANSFORMERS = "4.40.2"  # the last release ChatGLM3's remote code runs on
PROBE_TOKENS = 512  # read at load to measure the prefill rate (probe)
MAX_CHUNK = 2048  # prompt tokens in one forward pass at most (GPU memory for activations)


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _is_oom(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.cuda.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "out of memory" in str(error))


class Detokenizer:
    """Token ids in, text pieces out, decoding only a short window per token.

    As vLLM and TGI do: the window starts at the last clean boundary, and a piece is
    released only once it no longer ends in U+FFFD (half a character of a byte-level
    tokenizer), so no character is ever split across pieces; the window's own decode
    is subtracted, so tokenizers that drop a leading space at the start of a decode
    still give the right spacing. Bytes that never complete a character are dropped.
    """

    def __init__(self, tokenizer, skip_special_tokens: bool = True) -> None:
        self.tokenizer = tokenizer
        self.skip = skip_special_tokens
        self.ids: list[int] = []
        self._prefix = self._read = 0

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=self.skip)

    def add(self, token_id: int) -> str:
        """The new text this token completes ("" while a character is unfinished)."""
        self.ids.append(int(token_id))
        before = self._decode(self.ids[self._prefix:self._read])
        text = self._decode(self.ids[self._prefix:])
        if len(text) <= len(before) or text.endswith("\ufffd"):
            return ""
        self._prefix, self._read = self._read, len(self.ids)
        return text[len(before):].replace("\ufffd", "")


class HFBackend(StreamingBackend):
    """In-process transformers model; one generation at a time through a shared queue.

    Keeps the KV cache of the last request (prompt and answer) and reuses its longest
    common prefix with the next prompt, so follow-ups and prefetched prefixes are
    not read twice.
    """

    name = "hf"
    supports_prefetch = True

    def __init__(self, model=None, tokenizer=None, path: str | None = None,
                 revision: str | None = None, device: str | None = None, dtype=None,
                 timeout: float = 120.0, probe_tokens: int = PROBE_TOKENS,
                 prefill_chunk: int | None = None) -> None:
        import torch
        import transformers

        super().__init__()
        self.rate_meter = RateMeter(questions=0)  # counted: a first question plans a margin (qa)
        self.path = path or DEFAULT_PATH
        if model is None or tokenizer is None:
            model, tokenizer = self._load(self.path, revision, device, dtype)
        self.hf_model, self.tokenizer = model, tokenizer
        self.chatglm = getattr(model.config, "model_type", "") == "chatglm"
        if self.chatglm and transformers.__version__ != CHATGLM_TRANSFORMERS:
            raise BackendUnavailable(
                f"ChatGLM3 needs transformers {CHATGLM_TRANSFORMERS} (found "
                f"{transformers.__version__}): run pip install transformers=={CHATGLM_TRANSFORMERS}"
            )
        self.model = getattr(model.config, "_name_or_path", "") or self.path
        self.device = str(getattr(model, "device", torch.device("cpu")))
        self.context_window = int(
            getattr(model.config, "seq_length", 0)  # ChatGLM's name for it
            or getattr(model.config, "max_position_embeddings", 0) or 2048)
        self.timeout = float(timeout)  # kept for callers; nothing waits on a thread now
        self.stop_token_ids = self._stop_token_ids()
        self._cache = None  # past_key_values of _cache_ids
        self._cache_ids: list[int] = []
        self._answer_at: int | None = None  # where the last answer's ids start in the cache
        self._answers: list[tuple[int, int]] = []  # earlier answers' [start, end) there
        # Prompt tokens per forward pass: fixed if given, else sized from the measured rate
        # to take about BATCH_SECONDS, and adapted after each chunk.
        self.prefill_chunk = prefill_chunk
        self.chunk_tokens: int | None = None
        self.last_output_ids: list[int] = []  # the last answer's token ids (tests, debugging)
        if probe_tokens:
            self.probe(probe_tokens)

    @staticmethod
    def _load(path: str, revision: str | None, device: str | None, dtype):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        cuda = torch.cuda.is_available() and device != "cpu"
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, revision=revision,
                                                      trust_remote_code=True)
            model = AutoModelForCausalLM.from_pretrained(
                path, revision=revision, trust_remote_code=True,
                torch_dtype=dtype or (torch.bfloat16 if cuda else torch.float32),
                device_map=(device or "auto") if cuda else None)
        except (OSError, ValueError) as e:
            raise BackendUnavailable(
                f"Cannot load the transformers model {path!r} ({e}); download it first "
                f"(huggingface-cli download {path}) or set DOCCHAT_MODEL to a local folder."
            ) from e
        return model.eval(), tokenizer

    def _stop_token_ids(self) -> list[int]:
        ids = [self.tokenizer.eos_token_id] if self.tokenizer.eos_token_id is not None else []
        if self.chatglm:
            ids += [self.tokenizer.get_command(t) for t in ("<|user|>", "<|observation|>")]
        return ids

    def prompt_ids(self, messages: list[Message] | tuple[Message, ...]):
        """Token ids (a 1 x n tensor) of the chat-formatted prompt."""
        turns = [{"role": m.role, "content": m.content} for m in messages]
        if self.chatglm and hasattr(self.tokenizer, "build_chat_input"):
            # ChatGLM3: <|system|>/<|user|>/<|assistant|> turns, the last user turn is the query.
            *history, last = turns
            return self.tokenizer.build_chat_input(last["content"], history=history,
                                                   role=last["role"])["input_ids"]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(turns, add_generation_prompt=True,
                                                      return_tensors="pt")
        return self.tokenizer(plain_prompt(messages), return_tensors="pt")["input_ids"]

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return int(self.prompt_ids(messages).shape[-1])

    # -- the KV cache -----------------------------------------------------------

    def reset(self) -> None:
        """Forget the KV cache."""
        self._cache, self._cache_ids, self._answer_at = None, [], None
        self._answers = []

    def _spliced(self, ids: list[int]) -> list[int]:
        """ids with the earlier answers as the model generated them, where the prompt
        re-tokenizes them: the cache holds each prompt and the answer's own token ids, and
        the next prompt renders the answers' text, which a tokenizer rarely spells with the
        same ids (ChatGLM3 encodes each message with a dummy-prefix piece the model never
        generates). Answer by answer, from the first: where the new prompt matches the
        cache up to an answer and goes on with tokens whose text is the answer's (whitespace
        aside), those tokens are replaced by the cached ones, so the next turn reads only
        what is new, as ChatGLM3's own stream_chat does with past_key_values (without
        re-adding [gMASK] sop). It stops at the first answer it cannot splice."""
        cached = self._cache_ids
        spans = list(self._answers)
        if self._answer_at is not None:
            spans.append((self._answer_at, len(cached)))
        for at, end in spans:
            if end > len(cached) or at >= end or len(ids) <= at or ids[:at] != cached[:at]:
                break
            answer = cached[at:end]
            if ids[at:end] == answer:
                continue
            want = _squeezed(self.tokenizer.decode(answer, skip_special_tokens=False))
            span = self._span_of(ids, at, want, len(answer)) if want else None
            if span is None:
                break
            ids = ids[:at] + answer + ids[at + span:]
        return ids

    def _keep_answers(self, reused: int) -> None:
        """After a read that kept `reused` cached positions: the answers wholly inside them
        stay spliceable (the last one too, now that its end is known)."""
        spans = list(self._answers)
        if self._answer_at is not None:
            spans.append((self._answer_at, len(self._cache_ids)))
        self._answers = [(a, b) for a, b in spans if b <= reused]
        self._answer_at = None

    def _span_of(self, ids: list[int], at: int, want: str, hint: int) -> int | None:
        """The most tokens from ids[at] whose text, whitespace removed, is want; None if no
        run of them is (a binary search on the text's length, then a check)."""
        def text(k: int) -> str:
            return _squeezed(self.tokenizer.decode(ids[at:at + k], skip_special_tokens=False))

        lo, hi = 0, min(len(ids) - at, 2 * hint + 16)
        while lo < hi:  # the most tokens whose text is no longer than want
            mid = (lo + hi + 1) // 2
            if len(text(mid)) <= len(want):
                lo = mid
            else:
                hi = mid - 1
        return lo if lo and text(lo) == want else None

    def _crop(self, n: int) -> None:
        """Keep the first n cached positions."""
        if n >= len(self._cache_ids):
            return
        if n == 0 or self._cache is None:
            self.reset()
            return
        if hasattr(self._cache, "crop"):  # a Cache object (later transformers)
            self._cache.crop(n)
        else:  # legacy tuples: ChatGLM3 keeps [seq, batch, heads, dim], Llama [b, h, seq, d]
            dim = 0 if self.chatglm else 2
            self._cache = tuple(tuple(t.narrow(dim, 0, n) for t in layer)
                                for layer in self._cache)
        self._cache_ids = self._cache_ids[:n]

    def _forward(self, ids: list[int]):
        """Feed ids after the cached positions; returns the logits of the last one."""
        import torch

        device = self.hf_model.device
        start, end = len(self._cache_ids), len(self._cache_ids) + len(ids)
        options = dict(input_ids=torch.tensor([ids], device=device),
                       position_ids=torch.arange(start, end, device=device)[None],
                       attention_mask=torch.ones((1, end), dtype=torch.long, device=device),
                       past_key_values=self._cache, use_cache=True, return_dict=True)
        if self.chatglm:
            options["return_last_logit"] = True
        with torch.inference_mode():
            out = self.hf_model(**options)
        self._cache = out.past_key_values
        self._cache_ids = self._cache_ids + list(ids)
        return out.logits[0, -1]

    def probe(self, n: int = PROBE_TOKENS) -> float | None:
        """Seed prefill_rate() by reading n prompt tokens from a cold cache in chunks, as
        a prompt is read (_read), after one untimed chunk that warms the kernels; capped at
        half the window. One 64-token forward promised more than a real prompt gets."""
        n = max(MIN_BATCH, min(n, self.context_window // 2))
        ids = self.tokenizer.encode("Rivers carve valleys and carry silt. " * (n // 4 + 2),
                                    add_special_tokens=False)[:n]
        self.reset()
        self._forward(ids[:MIN_BATCH])
        self._sync()
        self.reset()
        start = time.perf_counter()
        done = self._read(ids, len(ids), GenerationRequest(messages=[]), lambda: False)
        self.rate_meter.add(done, time.perf_counter() - start)
        self.reset()
        return self.prefill_rate()

    def _sync(self) -> None:
        import torch

        if self.device.startswith("cuda"):
            torch.cuda.synchronize()

    def _read(self, ids: list[int], upto: int, request: GenerationRequest, interrupted) -> int:
        """Put ids[:upto] in the KV cache chunk by chunk, reusing the cached prefix.

        Returns the number of prompt tokens now cached; fewer than upto if interrupted.
        """
        stats = request.stats
        reused = common_prefix(self._cache_ids, ids[:upto])
        self._keep_answers(reused)
        self._crop(reused)
        stats.prompt_reused = reused
        started = stats.prefill_started_at = time.perf_counter()
        self._progress(request, reused, len(ids), reused, started)
        n = self.prefill_chunk or self.chunk_tokens or max(
            MIN_BATCH, min(MAX_CHUNK, int((self.prefill_rate() or 128) * BATCH_SECONDS)))
        pos = reused
        while pos < upto and not interrupted():
            step = time.perf_counter()
            chunk = ids[pos:min(upto, pos + n)]
            self._forward(chunk)
            self._sync()
            pos += len(chunk)
            took = time.perf_counter() - step
            if len(chunk) == n and took > 0 and not self.prefill_chunk:
                n = max(MIN_BATCH, min(MAX_CHUNK, int((n * n * BATCH_SECONDS / took) ** 0.5)))
            self._progress(request, pos, len(ids), reused, started)
        self.chunk_tokens = n
        return pos

    # -- warm start -------------------------------------------------------------

    def _cached_ids(self) -> list[int]:
        return list(self._cache_ids)

    def _prefix(self, messages: list[Message]) -> list[int]:
        """The prompt's token ids up to the end of the last message's content."""
        if self.chatglm and hasattr(self.tokenizer, "build_chat_input"):
            return self.prompt_ids(messages)[0].tolist()[:-1]  # drop <|assistant|>
        content = messages[-1].content
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                [{"role": m.role, "content": m.content} for m in messages], tokenize=False)
            end = text.rfind(content)
            return self.tokenizer.encode(text[:end + len(content)] if end >= 0 else text,
                                         add_special_tokens=False)
        text = plain_prompt(messages)
        end = text.rfind(content)
        return self.tokenizer(text[:end + len(content)])["input_ids"]

    def _warm(self, request: GenerationRequest, ids: list[int], interrupted) -> None:
        ids = self._spliced(ids)
        started = time.perf_counter()
        try:
            done = self._read(ids, len(ids), request, interrupted)
        except (RuntimeError, ValueError) as e:
            self.reset()
            raise self._error(e) from e
        self.rate_meter.add(done - request.stats.prompt_reused, time.perf_counter() - started)

    # -- the token source -------------------------------------------------------

    def _prompt_ids(self, messages) -> list[int]:
        return self._spliced(self.prompt_ids(messages)[0].tolist())

    def _prepare(self, request: GenerationRequest) -> tuple[int, list[int]]:
        ids = self.prompt_ids(request.messages)[0].tolist()
        return len(ids), ids

    def _pieces(self, request: GenerationRequest, ids: list[int]) -> Iterator[str]:
        try:
            yield from self._decode_loop(request, ids)
        except (RuntimeError, ValueError, TypeError, IndexError) as e:
            self.reset()  # the cache may hold half a step
            raise self._error(e) from e

    def _decode_loop(self, request: GenerationRequest, ids: list[int]) -> Iterator[str]:
        import torch

        stats = request.stats
        ids, read = self._read_prompt(self._spliced(ids), request)
        if read < len(ids) - 1:
            stats.prefill_ms = (time.perf_counter() - stats.prefill_started_at) * 1000
            return  # cancelled while reading
        logits = self._forward(ids[-1:])
        self._answer_at = len(ids)  # the answer's ids follow in the cache
        self._sync()
        seconds = time.perf_counter() - stats.prefill_started_at
        stats.prefill_ms = seconds * 1000
        self.rate_meter.add(len(ids) - stats.prompt_reused + stats.prompt_dropped, seconds)
        self.rate_meter.question_read()
        self._progress(request, len(ids), len(ids), stats.prompt_reused, stats.prefill_started_at)

        processors, sample = self._processors(request), not greedy(request)
        generator = None
        if sample and request.seed is not None:
            generator = torch.Generator(device=logits.device).manual_seed(request.seed)
        seen, stop_ids = list(ids), set(self.stop_token_ids)
        detokenizer = Detokenizer(self.tokenizer)
        self.last_output_ids = detokenizer.ids
        while True:
            scores = processors(torch.tensor([seen], device=logits.device),
                                logits[None].float())
            if sample:
                probs = torch.softmax(scores, dim=-1)
                token = int(torch.multinomial(probs, 1, generator=generator)[0, 0])
            else:
                token = int(torch.argmax(scores, dim=-1)[0])
            if token in stop_ids:
                stats.finish_reason = "stop"
                return
            stats.completion_tokens += 1
            yield detokenizer.add(token)
            if stats.completion_tokens >= request.max_new_tokens:
                stats.finish_reason = "length"
                return
            if request.cancel.is_set():
                return
            logits = self._forward([token])
            seen.append(token)

    @staticmethod
    def _processors(request: GenerationRequest):
        from transformers import (
            LogitsProcessorList,
            RepetitionPenaltyLogitsProcessor,
            TemperatureLogitsWarper,
            TopPLogitsWarper,
        )

        processors = LogitsProcessorList()
        if request.repetition_penalty and request.repetition_penalty != 1.0:
            processors.append(RepetitionPenaltyLogitsProcessor(request.repetition_penalty))
        if not greedy(request):
            processors.append(TemperatureLogitsWarper(request.temperature))
            if request.top_p < 1.0:
                processors.append(TopPLogitsWarper(request.top_p))
        return processors

    def _error(self, error: BaseException) -> BackendError:
        if _is_oom(error):
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            return BackendError(
                "The GPU ran out of memory for this prompt: shorten the documents "
                "or lower max_new_tokens.")
        return BackendError(f"The transformers model failed: {error}")
