"""transformers backend (ChatGLM3-6B-32k by default, or any causal LM with a chat template).

``generate()`` runs in a thread and feeds a TextIteratorStreamer; a StoppingCriteria
checks ``request.cancel`` between tokens, and errors in the thread reach the caller.
"""
from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from typing import Iterator

from docchat.backends import (
    GenerationQueue,
    GenerationRequest,
    Message,
    ensure_fits,
    greedy,
    plain_prompt,
)
from docchat.errors import BackendError, BackendUnavailable

logger = logging.getLogger(__name__)

DEFAULT_PATH = "THUDM/chatglm3-6b-32k"
CHATGLM_TRANSFORMERS = "4.40.2"  # the last release ChatGLM3's remote code runs on


def _is_oom(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.cuda.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "out of memory" in str(error))


class HFBackend:
    """In-process transformers model; one generation at a time through a shared queue."""

    name = "hf"

    def __init__(self, model=None, tokenizer=None, path: str | None = None,
                 revision: str | None = None, device: str | None = None, dtype=None,
                 timeout: float = 120.0) -> None:
        import torch
        import transformers

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
        self.timeout = float(timeout)
        self.queue = GenerationQueue()
        self.stop_token_ids = self._stop_token_ids()

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

    def prefill_rate(self) -> float | None:
        return None

    def prefetch(self, messages: list[Message]) -> None:
        """Not supported yet: a no-op."""

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer piece by piece from a generate() thread."""
        ids = self.prompt_ids(request.messages)
        ensure_fits(int(ids.shape[-1]), request.max_new_tokens, self.context_window)
        request.stats.prompt_tokens = int(ids.shape[-1])
        with self.queue.turn(request) as turn:
            if turn.cancelled:
                return
            yield from self._generate(ids, request)

    def _generate(self, ids, request: GenerationRequest) -> Iterator[str]:
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        stats, prompt_len, stop_ids = request.stats, int(ids.shape[-1]), set(self.stop_token_ids)
        streamer = _clean_streamer_class()(self.tokenizer, skip_prompt=True,
                                           timeout=self.timeout, skip_special_tokens=True)
        ended: list[str] = []

        class Progress(StoppingCriteria):
            """Counts new tokens and stops once cancelled or abandoned (checked per token)."""

            def __call__(self, input_ids, scores, **kwargs) -> bool:
                new = int(input_ids.shape[-1]) - prompt_len
                if int(input_ids[0, -1]) in stop_ids:
                    ended.append("stop")
                    new -= 1
                stats.completion_tokens = new
                return request.cancel.is_set() or streamer.abandoned.is_set()

        sample = not greedy(request)
        device = self.hf_model.device
        options = dict(
            input_ids=ids.to(device), attention_mask=torch.ones_like(ids).to(device),
            max_new_tokens=request.max_new_tokens, do_sample=sample,
            repetition_penalty=request.repetition_penalty, streamer=streamer,
            stopping_criteria=StoppingCriteriaList([Progress()]),
            eos_token_id=self.stop_token_ids or None,
            pad_token_id=self.tokenizer.pad_token_id or (self.stop_token_ids or [0])[0])
        if sample:
            options.update(temperature=request.temperature, top_p=request.top_p)
        else:
            options.update(temperature=None, top_p=None, top_k=None)
        errors: list[BaseException] = []

        def run() -> None:
            try:
                if request.seed is not None:
                    torch.manual_seed(request.seed)
                with torch.inference_mode():
                    self.hf_model.generate(**options)
            except BaseException as e:  # thread boundary: re-raised in the caller
                errors.append(e)
                streamer.end()

        start = time.perf_counter()
        thread = threading.Thread(target=run, name="docchat-hf-generate", daemon=True)
        thread.start()
        try:
            for piece in streamer:
                if stats.first_token_at is None:
                    stats.first_token_at = time.perf_counter()
                yield piece
                if request.cancel.is_set():
                    break
                streamer.demand.release()
            thread.join()
            if errors:
                self._raise_from_thread(errors[0])
        except queue.Empty:
            raise BackendError(
                f"The transformers model produced nothing for {self.timeout:g}s; "
                f"shorten the documents, lower max_new_tokens or raise the timeout."
            ) from None
        except GeneratorExit:
            stats.stopped = True
            raise
        finally:
            streamer.abandoned.set()
            thread.join(timeout=self.timeout)
            if ended:
                stats.finish_reason = "stop"
            elif request.cancel.is_set() or stats.stopped:
                stats.stopped, stats.finish_reason = True, "cancelled"
            elif stats.completion_tokens >= request.max_new_tokens:
                stats.finish_reason = "length"
            stats.finished_at = time.perf_counter()
            logger.info("hf %s: %d prompt + %d new tokens in %.2fs", self.model,
                        stats.prompt_tokens, stats.completion_tokens, stats.finished_at - start)

    def _raise_from_thread(self, error: BaseException) -> None:
        if _is_oom(error):
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            raise BackendError(
                "The GPU ran out of memory for this prompt: shorten the documents "
                "or lower max_new_tokens.") from error
        raise BackendError(f"The transformers model failed: {error}") from error


@functools.cache
def _clean_streamer_class():
    from transformers import TextIteratorStreamer

    class CleanStreamer(TextIteratorStreamer):
        """TextIteratorStreamer that never emits U+FFFD from bytes split across tokens.

        Byte-level tokenizers decode half a character to U+FFFD; the text is held back
        until the character completes, and dropped if the answer ends inside it.
        After each piece the generating thread waits for the caller to ask for more
        (one piece of look-ahead), so a cancel lands within one token.
        """

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.demand = threading.Semaphore(1)
            self.abandoned = threading.Event()

        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            super().on_finalized_text(text, stream_end)
            if text and not stream_end:
                while not self.demand.acquire(timeout=0.05):
                    if self.abandoned.is_set():
                        return

        def put(self, value) -> None:
            if len(value.shape) > 1 and value.shape[0] > 1:
                raise ValueError("CleanStreamer only supports batch size 1")
            if len(value.shape) > 1:
                value = value[0]
            if self.skip_prompt and self.next_tokens_are_prompt:
                self.next_tokens_are_prompt = False
                return
            self.token_cache.extend(value.tolist())
            text = self.tokenizer.decode(self.token_cache, **self.decode_kwargs)
            complete = text.rstrip("\ufffd")
            if len(complete) > self.print_len:
                piece = complete[self.print_len:].replace("\ufffd", "")
                self.print_len = len(complete)
                if piece:
                    self.on_finalized_text(piece)

        def end(self) -> None:
            if self.token_cache:
                text = self.tokenizer.decode(self.token_cache, **self.decode_kwargs)
                tail = text.rstrip("\ufffd")[self.print_len:].replace("\ufffd", "")
                self.token_cache, self.print_len = [], 0
                if tail:
                    self.on_finalized_text(tail)
            self.next_tokens_are_prompt = True
            self.on_finalized_text("", stream_end=True)

    return CleanStreamer
