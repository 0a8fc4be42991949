"""Exercises that check themselves.

Each ``check_*`` calls the student's function on seeded random CPU inputs (its own
``torch.Generator``: the global seed is neither used nor changed), compares the result
with the library / PyTorch reference, prints a short "✓ ..." line when right, and
raises :class:`ExerciseFailed` (an ``AssertionError``) with a specific hint when wrong.
Each check carries its catalogue of known mistakes (``check.mistakes``): wrong code written
the way well-known tutorial code gets it wrong, each with a hint that says what to change.
The check runs them on its own inputs, and when the student's result (or error) is the same
as a mistake's, the student gets that mistake's hint. ``check.reference`` is the library's
own answer in the student's signature: the expected result always comes from it. Every
call gets its own deep copies of the inputs, so an edit in place reaches no other call. A
stub that raises ``NotImplementedError`` gives "... is not implemented yet", ``sys.exit()``
"... called sys.exit()", and any other exception from the student's function a short
"... raised X: message", never a traceback from inside the library (``KeyboardInterrupt``
still stops the cell).

Notebook convention: an exercise is a function (or class) cell whose solution lives inside
the body, between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (nbgrader's markers), and
right after it a check cell with one ``exercises.check_...(...)`` call (nbgrader's
autograded test cell), after two lines that load the checks afresh (``graded``), so that a
student's cell cannot have replaced them; ``tools/nbgrader_metadata.py`` writes them.
``make student`` replaces the solution with ``raise NotImplementedError(...)``, and the
check then says "not implemented yet".

Layout: one or more modules per notebook (``ch00_introduction`` ... ``ch10_encoder_only``),
each check beside its catalogue; ``_core`` (declaring a check, calling the student's
function, messages) and ``_compare`` (comparing results, naming a mistake) hold what they
share; ``graded`` loads a check afresh for grading. ``CHAPTERS`` below names each
chapter's module and its checks: ``exercises.check_x`` imports ``check_x``'s module (and what
it imports) on first use, so a notebook's check cell loads its chapter's checks and the
library code they check, not the whole library.

The checks, with the signature of the function they take (masks: bool, True = may attend):

00 introduction
    check_logits_shape(fn)          fn(config, batch_size, src_len, tgt_len) -> tuple, the shape
                                    of the model's logits (B, T, V_tgt).  Names: src_len instead
                                    of tgt_len, source vocabulary, d_model instead of the
                                    vocabulary, missing batch axis, last position only.
    check_next_token_probabilities(fn)
                                    fn(logits (B, T, V)) -> softmax over the vocabulary axis.
                                    Names: softmax over positions or over the batch (dim left
                                    out), log_softmax, raw logits, sigmoid, sum over the whole
                                    tensor, missing keepdim, overflow (no max subtraction).
01 embeddings
    check_embedding_lookup(fn)      fn(ids (B, L) int64, weight (V, D)) -> (B, L, D), e.g.
                                    one_hot(ids, V).float() @ weight or weight[ids].
                                    Names: scaled by √D too early, one_hot without num_classes,
                                    num_classes = D, one-hot left as int64, one-hot not
                                    multiplied by the weight, float64 result.
    check_scaled_embedding(fn)      fn(ids, weight) -> weight[ids] * √D   (§3.4).
                                    Names: no scaling, divided, × D, √V or √L instead of √D.
02 positional encoding
    check_positional_encoding(fn)   fn(max_len, d_model) -> (max_len, d_model) float32, paper
                                    layout (sin even columns, cos odd).  Names: sin/cos swapped,
                                    concatenated layout, tensor2tensor's table, exponent i
                                    instead of 2i, one frequency per column, multiplied by
                                    10000^(2i/d), positions from 1, transposed, float64.
    check_pe_relative_shift(fn)     fn(offset, d_model) -> M (d_model, d_model) with
                                    PE[pos + offset] == M @ PE[pos] for every pos (a rotation
                                    per (sin, cos) pair).  Names: backwards shift (transposed
                                    blocks), cos-only diagonal, angle ω instead of offset·ω,
                                    blocks in the concatenated layout.
03 attention
    check_softmax(fn)               fn(x, dim) -> softmax of x along dim, stable for large x.
                                    Names: ignored dim, missing keepdim, sum over all entries,
                                    overflow (no max subtraction), global max instead of per dim.
    check_attention_scores(fn)      fn(q (..., T, d_k), k (..., S, d_k)) -> q kᵀ / √d_k (..., T, S).
                                    Names: no scaling, / d_k, × √d_k, √S, q transposed instead
                                    of k, k.transpose(1, 2) / k.T on 4-D, k.t().
    check_scaled_dot_product_attention(fn)
                                    fn(q, k, v, mask=None) -> (output (..., T, d_v),
                                    weights (..., T, S)); mask broadcastable to (..., T, S).
                                    Also run in float16 and with a fully masked query (NaN or
                                    zeros accepted there).  Names: forgotten √d_k, / d_k, × √d_k,
                                    √d_v, √S, softmax over the query axis, inverted or ignored
                                    mask, mask applied after softmax, masked scores 0, -1e9-style
                                    finite fills, a float32 -1e9 mask bias, a float32 tensor
                                    scale, swapped return order, output alone, k used instead of
                                    v, k.transpose(1, 2) on 4-D; a float32 result from float16.
04 masking
    check_causal_mask(fn)           fn(T) -> bool (T, T) or (1, 1, T, T), True = may attend.
                                    Names: inverted (s > t), diagonal excluded (< for <=), upper
                                    triangle, nothing masked, float 0/1 and additive 0/-inf masks.
    check_padding_mask(fn)          fn(tokens (B, S), pad_id) -> bool (B, 1, 1, S); the batch is
                                    right- and left-padded.  Names: inverted, hard-coded pad 0,
                                    a mask from the lengths (right padding only; any mask wrong
                                    on the left-padded rows alone gets its hint, in
                                    check_target_mask too),
                                    PyTorch's key_padding_mask (B, S), missing axes (B, S) and
                                    (B, 1, S), queries only (B, 1, S, 1) and (B, 1, S, S), keys
                                    AND queries (B, 1, S, S) and (B, S, S), the tutorials'
                                    get_attn_pad_mask (B, S, S), keys expanded to (B, 1, S, S).
    check_target_mask(fn)           fn(tgt (B, T), pad_id) -> bool (B, 1, T, T) = causal AND
                                    padding; right- and left-padded batch.  Names: causal only,
                                    padding only, OR instead of AND, inverted, diagonal excluded,
                                    hard-coded pad 0, queries instead of keys, padded query rows
                                    masked as well as keys.
05 multi-head attention
    check_split_heads(fn)           fn(x (B, L, D), n_heads) -> (B, H, L, Dh).  Names: view(B, H,
                                    L, Dh) without transpose, forgotten transpose, (Dh, H) order,
                                    the (B, H, Dh, L) layout of Kᵀ.
    check_merge_heads(fn)           fn(x (B, H, L, Dh)) -> (B, L, D).  Names: reshape without
                                    transpose, .view on a non-contiguous tensor, (Dh, H) order,
                                    transpose without the reshape.
    check_multi_head_attention(cls) cls(d_model, n_heads) with nn.Linear(D, D) w_q, w_k, w_v, w_o;
                                    forward(query (B, T, D), key (B, S, D), value (B, S, D),
                                    mask=None) -> (B, T, D).  Weights copied into
                                    nn.MultiheadAttention; forward and backward on self-, causal
                                    (evaluation mode) and cross-attention with S != T.  Names: K/V
                                    split with the query length, no scaling, √d_model or d_k
                                    instead of √d_k, softmax over queries, V projected with w_k,
                                    mask only in training mode, masked_fill not assigned, inverted
                                    mask, merge without transpose, .view after transpose, no W^O.
    check_mha_parameter_count(fn)   fn(d_model, n_heads) -> int, parameters of multi-head
                                    attention with biases.  Names: no biases, no W^O, × n_heads,
                                    one head's share, a float; no biases, no W^O and an added
                                    LayerNorm, alone or together.
06 encoder and decoder
    check_layer_norm(fn)            fn(x (..., D), gamma (D,), beta (D,), eps=1e-5) -> like
                                    nn.LayerNorm.  Names: unbiased variance, std + eps, both,
                                    batch axis, (L, D) axes, no gamma/beta, gamma and beta
                                    swapped, eps ignored, no keepdim.
    check_feed_forward(fn)          fn(x (B, L, D), w1 (d_ff, D), b1, w2 (D, d_ff), b2) -> (B, L, D),
                                    weights in nn.Linear layout.  Names: no ReLU, ReLU at the end,
                                    GELU, weights not transposed, LayerNorm on the input, residual
                                    + LayerNorm inside, F.dropout inside.
    check_residual_post_norm(fn)    fn(x, sublayer, norm, dropout) -> norm(x + dropout(sublayer(x)))
                                    (§3.1, §5.4), run in training mode.
    check_residual_pre_norm(fn)     fn(x, sublayer, norm, dropout) -> x + dropout(sublayer(norm(x))).
                                    Both name dropout after the norm, on the residual path (the
                                    sum), forgotten, the other placement, a missing residual, a
                                    missing or misplaced norm (post-norm: dropout on the input).
07 toy translator
    check_label_smoothing(fn)       fn(logits (N, V), target (N,), epsilon, pad_id) -> scalar:
                                    mean over non-pad positions of (1-ε)(-log p_y) + ε·mean_v
                                    (-log p_v) (§5.4; ε/V to every class, <pad> included, as
                                    F.cross_entropy(label_smoothing=ε)).  Names: ε over V-1
                                    classes, the Annotated Transformer's V-2 (no <pad> share),
                                    gold counted twice, (1-ε) forgotten, pads not ignored, / N,
                                    sum, hard-coded pad 0, ε term summed, ε ignored, KL instead
                                    of cross-entropy, log_softmax over dim 0, no log_softmax.
    check_lr_schedule(fn)           fn(index, d_model, warmup) -> float, the rate LambdaLR sets
                                    for update index (from 0): d_model^-0.5·min(s^-0.5,
                                    s·warmup^-1.5), s = index + 1 (§5.3).  Names: step 0 -> 1
                                    guard (Annotated), s = index (0^-0.5 crash), first rate 0,
                                    warmup^1.5, max, warmup^-0.5, no or √d_model factor.
    check_greedy_decode(fn)         fn(model, src (B, S), max_len, bos_id, eos_id) -> (B, L) like
                                    decode.greedy_decode.  Names: start from <pad>, <bos> kept, no
                                    source mask, first position read, only the last token fed,
                                    argmax without dim, no stop at <eos>, no padding after it, no
                                    early exit, .any() stop, <eos> padded away, max_len ± 1.
    check_length_penalty(fn)        fn(log_prob, length, alpha) -> log_prob / ((5+length)/6)^alpha
                                    (GNMT, §6.1).  Names: multiplied, |Y|^α, (5+|Y|)^α/6, α
                                    forgotten, × α, / |Y|, integer division.
    check_alignment_error_rate(fn)  fn(predicted, sure, possible) -> float, sets of (i, j):
                                    1 - (|A∩S| + |A∩P∪S|)/(|A| + |S|).  Names: no "1 -", P
                                    ignored, |A| + |P|, empty case dividing by zero, 1 -
                                    precision, 1 - recall, P not joined with S.
08 what matters
    check_xavier_bound(fn)          fn(fan_out, fan_in) -> float, nn.init.xavier_uniform_'s bound
                                    √(6 / (fan_in + fan_out)).  Names: the normal draw's std
                                    √(2 / ...), √(6 / fan_in), no square root, fan_in · fan_out.
    check_clearly_better(fn)        fn(ours, theirs) -> bool, lists of one score per seed: every
                                    seed of ours above every seed of theirs, min(ours) >
                                    max(theirs).  Names: means compared, ranges merely touching
                                    (max > min), seeds compared pairwise, a tie counted as a win.
09 language model (the mistakes each names: see the three ch09_* modules)
    check_decoder_only_mask(fn)     fn(tokens (B, L), pad_id) -> bool (B, 1, L, L): causal AND
                                    not padding (keys), as masks.target_mask.
    check_next_token_targets(fn)    fn(sequences (B, L), rows <bos> y <eos> then padding) ->
                                    (inputs (B, L - 1), targets (B, L - 1)): the next tokens.
    check_prompt_loss_mask(fn)      fn(targets (B, L), prompt_lengths (B,), pad_id) -> targets
                                    with row b's first prompt_lengths[b] positions set to pad_id.
    check_next_token_distribution(fn)
                                    fn(logits (N, V), temperature, top_k) -> probabilities
                                    (N, V), the distribution generation.sample_next draws from.
10 encoder-only model (the mistakes each names: see ch10_masked_tokens, ch10_encoder_only)
    check_bert_masking(fn)          fn(tokens (B, L), maskable (B, L) bool, choose (B, L), kind
                                    (B, L) uniform draws, random_ids (B, L), mask_id, pad_id,
                                    mask_rate) -> (inputs, targets), as masking.mask_tokens:
                                    chosen = maskable & (choose < mask_rate); mask_id where kind
                                    < 0.8, random_ids where 0.8 <= kind < 0.9; targets the
                                    originals where chosen, pad_id elsewhere.
    check_masked_token_loss(fn)     fn(logits (B, L, V), targets (B, L), pad_id) -> scalar: the
                                    mean cross-entropy over the positions whose target is not
                                    pad_id (the chosen ones).
    check_bidirectional_mask(fn)    fn(tokens (B, L), pad_id) -> bool (B, 1, 1, L), the padding
                                    mask alone (no causal part), as masks.padding_mask.
    check_sentence_vector(fn)       fn(hidden (B, L, D), tokens (B, L), pad_id) -> (B, D), the
                                    mean over each sentence's real tokens (mean_over_tokens).
"""

from __future__ import annotations

import importlib

from transformer_lib.teaching.exercises._core import ExerciseFailed

# Each chapter's module and the checks it holds. A check is imported on first use, with its
# chapter's module and what that module imports, and nothing else: notebook 00's graded cell
# never loads the training loop, checkpoints, the studies or sacrebleu. A new chapter's
# checks module registers here, one line.
CHAPTERS: dict[str, tuple[str, ...]] = {
    "ch00_introduction": ("check_logits_shape", "check_next_token_probabilities"),
    "ch01_embeddings": ("check_embedding_lookup", "check_scaled_embedding"),
    "ch02_positional_encoding": ("check_positional_encoding", "check_pe_relative_shift"),
    "ch03_attention": ("check_softmax", "check_attention_scores"),
    "ch03_scaled_attention": ("check_scaled_dot_product_attention",),
    "ch04_masking": ("check_causal_mask",),
    "ch04_padding": ("check_padding_mask", "check_target_mask"),
    "ch05_multi_head_attention": (
        "check_split_heads",
        "check_merge_heads",
        "check_mha_parameter_count",
    ),
    "ch05_attention_layer": ("check_multi_head_attention",),
    "ch06_encoder_decoder": ("check_layer_norm", "check_feed_forward"),
    "ch06_residual": ("check_residual_post_norm", "check_residual_pre_norm"),
    "ch07_label_smoothing": ("check_label_smoothing",),
    "ch07_schedule": ("check_lr_schedule",),
    "ch07_decoding": ("check_greedy_decode",),
    "ch07_length_penalty": ("check_length_penalty",),
    "ch07_evaluation": ("check_alignment_error_rate",),
    "ch08_what_matters": ("check_xavier_bound", "check_clearly_better"),
    "ch09_language_model": ("check_decoder_only_mask", "check_next_token_targets"),
    "ch09_prompt_loss": ("check_prompt_loss_mask",),
    "ch09_sampling": ("check_next_token_distribution",),
    "ch10_masked_tokens": ("check_bert_masking", "check_masked_token_loss"),
    "ch10_encoder_only": ("check_bidirectional_mask", "check_sentence_vector"),
}
_MODULE_OF = {check: module for module, checks in CHAPTERS.items() for check in checks}

__all__ = ["ExerciseFailed", *_MODULE_OF]


def __getattr__(name: str):
    """``check_x``, imported from its chapter's module on first use (PEP 562)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    check = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = check
    return check


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
