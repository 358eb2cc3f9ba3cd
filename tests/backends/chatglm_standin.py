"""A ChatGLM3 stand-in: a tiny random model and a tokenizer with ChatGLM3-6B's traits.

What HFBackend relies on, as THUDM/chatglm3-6b's remote code (tokenization_chatglm.py,
modeling_chatglm.py) has it:
- ``[gMASK] sop`` (64790, 64792) open the sequence, once: ``build_chat_input`` adds them to
  the ids it returns, so the official ``stream_chat``, which with ``past_key_values`` calls
  ``build_chat_input(query)`` for the new turn alone, inserts them again mid-sequence;
- role tokens ``<|system|> <|user|> <|assistant|> <|observation|>`` (64794-64797); a message
  is ``[role] + encode(metadata + "\\n") + encode(text)``, and SentencePiece's encode starts
  with a dummy-prefix piece (30910, "▁"), so the model's own answer ("\\n" then the text, as
  it generates it) never re-tokenizes to the same ids;
- stop ids [2, 64795, 64797]: eos, and the model ends a reply by starting a user (or an
  observation) turn;
- the cache is a tuple of (key, value) per layer laid out (seq, batch, heads, dim), and
  forward takes ``return_last_logit``.
The model is a real (random) 2-layer attention model, so a wrong cache changes its logits,
and it records every token it is run on, with its position.
"""
from __future__ import annotations

from types import SimpleNamespace

import torch

EOS, DUMMY, NEWLINE = 2, 30910, 13
GMASK, SOP = 64790, 64792
ROLES = {"<|system|>": 64794, "<|user|>": 64795, "<|assistant|>": 64796,
         "<|observation|>": 64797}
COMMANDS = {"[gMASK]": GMASK, "sop": SOP, **ROLES}
VOCAB = 64798
TEXT_BASE = 100  # a character c is token TEXT_BASE + ord(c) (CJK fits below 64790)


class GLMTokenizer:
    """Character-level, with ChatGLMTokenizer's commands, prefix and chat building."""

    eos_token_id = EOS
    chat_template = None

    def get_command(self, token: str) -> int:
        return COMMANDS[token]

    def get_prefix_tokens(self) -> list[int]:
        return [GMASK, SOP]

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """As SPTokenizer.encode: a dummy-prefix piece, then the text's pieces."""
        ids = [DUMMY] + [NEWLINE if c == "\n" else TEXT_BASE + ord(c) for c in text] if text \
            else []
        return self.get_prefix_tokens() + ids if add_special_tokens else ids

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        names = {v: k for k, v in COMMANDS.items()}
        out = []
        for i in (int(i) for i in ids):
            if i == NEWLINE:
                out.append("\n")
            elif i >= TEXT_BASE and i not in names and i != DUMMY:
                out.append(chr(i - TEXT_BASE))
            elif i in names and not skip_special_tokens:
                out.append(names[i])
        return "".join(out)

    def build_single_message(self, role: str, metadata: str, message: str) -> list[int]:
        return [ROLES[f"<|{role}|>"]] + self.encode(f"{metadata}\n", False) + \
            self.encode(message, False)

    def build_chat_input(self, query: str, history=None, role: str = "user") -> dict:
        ids = []
        for item in history or []:
            ids += self.build_single_message(item["role"], item.get("metadata", ""),
                                             item["content"])
        ids += self.build_single_message(role, "", query) + [ROLES["<|assistant|>"]]
        return {"input_ids": torch.tensor([self.get_prefix_tokens() + ids])}


class GLMModel(torch.nn.Module):
    """A random 2-layer attention model with ChatGLM3's interface and cache layout.

    ``replies`` (lists of token ids) script the answers: after a forward that ends on
    <|assistant|>, the next reply is given one token per step, then <|user|> ends it.
    ``fed`` records (position, token) for every token the model is run on.
    """

    def __init__(self, replies=(), seq_length: int = 1024, width: int = 32, heads: int = 4,
                 layers: int = 2) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.config = SimpleNamespace(model_type="chatglm", seq_length=seq_length,
                                      _name_or_path="chatglm3-standin")
        self.heads, self.dim = heads, width // heads
        self.embed = torch.nn.Embedding(VOCAB, width)
        self.positions = torch.nn.Embedding(seq_length, width)
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(width, 3 * width) for _ in range(layers))
        self.head = torch.nn.Linear(width, VOCAB)
        self.replies = [list(r) for r in replies]
        self.fed: list[tuple[int, int]] = []
        self._reply: list[int] | None = None
        self._step = 0

    @property
    def device(self):
        return torch.device("cpu")

    def forward(self, input_ids, position_ids, attention_mask, past_key_values=None,
                use_cache=True, return_dict=True, return_last_logit=False):
        assert return_last_logit and use_cache
        past = past_key_values[0][0].shape[0] if past_key_values else 0
        assert attention_mask.shape[-1] == past + input_ids.shape[-1]
        assert int(position_ids[0, 0]) == past, "positions must follow the cache"
        self.fed += list(zip(position_ids[0].tolist(), input_ids[0].tolist()))
        x = self.embed(input_ids) + self.positions(position_ids)  # (batch, new, width)
        cache = []
        for i, layer in enumerate(self.qkv):
            q, k, v = (t.view(t.shape[0], t.shape[1], self.heads, self.dim).transpose(0, 1)
                       for t in layer(x).chunk(3, dim=-1))  # each (new, batch, heads, dim)
            if past_key_values:
                k = torch.cat([past_key_values[i][0], k], dim=0)
                v = torch.cat([past_key_values[i][1], v], dim=0)
            cache.append((k, v))
            n = q.shape[0]
            scores = torch.einsum("qbhd,kbhd->bhqk", q, k) / self.dim ** 0.5
            causal = torch.ones(n, k.shape[0], dtype=torch.bool).tril(k.shape[0] - n)
            weights = scores.masked_fill(~causal, float("-inf")).softmax(-1)
            x = x + torch.einsum("bhqk,kbhd->bqhd", weights, v).flatten(2)
        logits = self.head(x[:, -1:])
        return SimpleNamespace(logits=self._scripted(input_ids[0].tolist(), logits),
                               past_key_values=tuple(cache))

    def _scripted(self, ids: list[int], logits):
        if ids[-1] == ROLES["<|assistant|>"] and self.replies:
            self._reply, self._step = self.replies.pop(0) + [ROLES["<|user|>"]], 0
        elif len(ids) == 1 and self._reply is not None:
            self._step += 1
        else:
            self._reply = None
        if self._reply is None or self._step >= len(self._reply):
            return logits
        scripted = torch.full_like(logits, -1e9)
        scripted[..., self._reply[self._step]] = 0.0
        return scripted

    def sequence(self) -> list[int]:
        """The token the model last saw at each position (what its cache now holds)."""
        seen: dict[int, int] = {}
        for pos, token in self.fed:
            seen[pos] = token
        return [seen[p] for p in range(len(seen))]


def reply_ids(text: str) -> list[int]:
    """What ChatGLM3 generates after <|assistant|>: the empty metadata line, then text."""
    return [NEWLINE] + [NEWLINE if c == "\n" else TEXT_BASE + ord(c) for c in text]
