"""Vocabulary: a fixed, deterministic map between tokens and integer ids.

The four special tokens always come first, with the same ids in every vocabulary:
``<pad>`` 0 (fills short sequences), ``<unk>`` 1 (any unseen token),
``<bos>`` 2 (starts the decoder input) and ``<eos>`` 3 (ends every target).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NoReturn

import torch

from transformer_lib._checks import check_int, check_tensor, fail
from transformer_lib.model.contract import check_model

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


class Vocab:
    """Token <-> id lookup. Build one with :meth:`Vocab.build`.

    Order: the specials, then tokens by frequency (most frequent first), ties alphabetical,
    so the same corpus always gives the same ids.
    """

    PAD, UNK, BOS, EOS = PAD, UNK, BOS, EOS
    pad_id, unk_id, bos_id, eos_id = PAD_ID, UNK_ID, BOS_ID, EOS_ID

    def __init__(self, tokens: Sequence[str]) -> None:
        tokens = _token_list("tokens", tokens)
        if tuple(tokens[:4]) != SPECIALS:
            fail(
                "tokens",
                "a list starting with the specials {specials}",
                repr(tokens[:4]),
                "Use Vocab.build() to make a vocabulary.",
                specials=list(SPECIALS),
            )
        if len(set(tokens)) != len(tokens):
            duplicates = sorted({t for t in tokens if tokens.count(t) > 1})
            fail("tokens", "a list without duplicates", f"repeated {duplicates[:5]}")
        self._tokens = tokens
        self._ids = {token: i for i, token in enumerate(tokens)}

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]], min_freq: int = 1) -> Vocab:
        """Count tokens over `token_lists` and keep those seen at least `min_freq` times."""
        check_int("min_freq", min_freq, minimum=1)
        counts: Counter[str] = Counter()
        for tokens in token_lists:
            if isinstance(tokens, str):
                fail(
                    "token_lists",
                    "an iterable of token lists",
                    "an iterable of str",
                    "Tokenize first: Vocab.build(tokenize(s) for s in sentences).",
                    error=TypeError,
                )
            counts.update(tokens)
        kept = sorted(
            (t for t, c in counts.items() if c >= min_freq and t not in SPECIALS),
            key=lambda t: (-counts[t], t),
        )
        return cls([*SPECIALS, *kept])

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token: str) -> bool:
        return token in self._ids

    def __getitem__(self, token: str) -> int:
        return self._ids.get(token, UNK_ID)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self._tokens == other._tokens

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, tokens={self._tokens[:8]}...)"

    @property
    def tokens(self) -> list[str]:
        """All tokens in id order (a copy)."""
        return list(self._tokens)

    def token_to_id(self, token: str) -> int:
        """Id of `token`; unknown tokens map to ``unk_id``."""
        return self._ids.get(token, UNK_ID)

    def id_to_token(self, index: int) -> str:
        self._check_id("index", index)
        return self._tokens[index]

    def _check_id(self, name: str, index: object) -> None:
        check_int(name, index)  # 4.9 is no id: never truncated to 4
        if not 0 <= index < len(self):
            fail(name, "an id in [0, {size}) (the vocabulary size)", repr(index), size=len(self))

    def encode(
        self, tokens: Sequence[str], add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        """Tokens -> ids (unknown tokens -> ``unk_id``), optionally framed by <bos>/<eos>."""
        if isinstance(tokens, str):
            fail(
                "tokens",
                "a list of tokens",
                f"str {tokens[:40]!r}",
                "Tokenize first: vocab.encode(tokenize(text)).",
                error=TypeError,
            )
        ids = [self._ids.get(t, UNK_ID) for t in tokens]
        return [BOS_ID] * add_bos + ids + [EOS_ID] * add_eos

    def decode(self, ids: Sequence[int] | torch.Tensor, strip_special: bool = True) -> list[str]:
        """Ids -> tokens. With `strip_special`, stop at the first <eos> and drop <pad>/<bos>.

        Shapes: ids (L,) or a list of ints.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                fail(
                    "ids",
                    "a 1-D tensor or list of ids (L,)",
                    f"shape {tuple(ids.shape)}",
                    "Decode one sequence at a time: vocab.decode(batch[b]).",
                )
            check_tensor("ids", ids, integer=True, shape_hint="(L,)")
            ids = ids.tolist()
        tokens = []
        for k, i in enumerate(ids):
            self._check_id(f"ids[{k}]", i)
            if strip_special and i == EOS_ID:
                break
            if strip_special and i in (PAD_ID, BOS_ID):
                continue
            tokens.append(self._tokens[i])
        return tokens

    def to_dict(self) -> dict[str, list[str]]:
        """A JSON-serialisable form for checkpoints (no pickle)."""
        return {"tokens": list(self._tokens)}

    @classmethod
    def from_dict(cls, data: dict[str, list[str]]) -> Vocab:
        """The inverse of :meth:`to_dict`; a malformed dict (e.g. from a damaged file) is a
        clear error naming the bad part."""
        if not isinstance(data, dict) or "tokens" not in data:
            got = "a dict without 'tokens'" if isinstance(data, dict) else type(data).__name__
            fail("data", "a dict {{'tokens': [...]}} from Vocab.to_dict()", got, error=TypeError)
        if not isinstance(data["tokens"], list):
            _fail_tokens("data['tokens']", data["tokens"])
        return cls(_token_list("data['tokens']", data["tokens"]))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Vocab:
        return cls.from_dict(json.loads(text))


def check_vocabularies(model: object, src_vocab: object, tgt_vocab: object) -> None:
    """The vocabularies must be the ones the model was built for: at least their sizes match."""
    check_model("model", model)
    sizes = {"src_vocab": model.src_vocab_size, "tgt_vocab": model.tgt_vocab_size}
    for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if not isinstance(vocab, Vocab):
            fail(name, "a transformer_lib.vocab.Vocab", type(vocab).__name__, error=TypeError)
    swapped = (len(src_vocab), len(tgt_vocab)) == (sizes["tgt_vocab"], sizes["src_vocab"])
    for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if len(vocab) != sizes[name]:
            fail(
                name,
                "a vocabulary of the model's {side}_vocab_size={size} tokens",
                f"{len(vocab)} tokens",
                "Were src_vocab and tgt_vocab passed in the wrong order?"
                if swapped
                else "Use the vocabularies the model was trained with.",
                side=name[:3],
                size=sizes[name],
            )


def _fail_tokens(name: str, got: object, expected: str = "a list of str tokens") -> NoReturn:
    fail(
        name,
        expected,
        f"{type(got).__name__} {got!r}"[:60],
        "Use Vocab.build() or Vocab.from_dict(vocab.to_dict()).",
        error=TypeError,
    )


def _token_list(name: str, tokens: object) -> list[str]:
    """``tokens`` as a list, checked to be strings (a str itself is not a token list)."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
        _fail_tokens(name, tokens)
    tokens = list(tokens)
    for k, token in enumerate(tokens):
        if not isinstance(token, str):
            _fail_tokens(f"{name}[{k}]", token, "a str token")
    return tokens


SEP = "<sep>"  # between the source and its translation
MASK = "<mask>"  # stands for a hidden token (masked-token pretraining, notebook 10)


def joint_vocab(token_lists: Sequence[Sequence[str]]) -> Vocab:
    """One vocabulary for both languages, with ``<sep>``: ``token_lists`` are the
    tokenized sentences of both sides."""
    return Vocab.build([*token_lists, [SEP]])


def encoder_vocab(token_lists: Iterable[Sequence[str]], min_freq: int = 1) -> Vocab:
    """The encoder-only model's vocabulary (notebook 10): the four specials, ``<mask>``
    (id 4), then the tokens by frequency as :meth:`Vocab.build` orders them. Every other
    vocabulary keeps its ids: this one is built apart, for one language."""
    words = Vocab.build(token_lists, min_freq).tokens[len(SPECIALS) :]
    return Vocab([*SPECIALS, MASK, *(token for token in words if token != MASK)])


def special_ids(vocab: Vocab) -> list[int]:
    """The ids of the vocabulary's special tokens (the four, and ``<mask>``, ``<sep>``
    where it has them), in id order."""
    return sorted(vocab[token] for token in (*SPECIALS, MASK, SEP) if token in vocab)
