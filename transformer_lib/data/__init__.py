"""Text -> tokens -> ids -> padded batches, for the bundled corpus or any Tatoeba-style tsv.

Modules: ``text`` (tokenize/detokenize; its docstring says which text round-trips),
``corpus`` (sentence pairs, gold alignments, reading the tsv files; its docstring gives the
file formats), ``batching`` (vocabularies, ids, padded batches, next-token batches),
``vocab`` (the token <-> id map; ``joint_vocab``: one vocabulary for translation as
language modelling; ``encoder_vocab``: the encoder-only model's, with ``<mask>``),
``masking`` (BERT's masked-token batches) and ``classification`` (the subject-number task
and (tokens, labels) batches), the last two for notebook 10.

Shapes:
    B batch, S source length, T target length (both padded to the longest in the batch).
"""

import importlib

# name -> the module that defines it
_MODULE_OF = {
    "Batch": "batching",
    "build_vocabs": "batching",
    "collate": "batching",
    "concatenate_pairs": "batching",
    "encode_pairs": "batching",
    "language_model_batches": "batching",
    "make_batches": "batching",
    "SUBJECT_NUMBER_CLASSES": "classification",
    "classification_batches": "classification",
    "subject_number_task": "classification",
    "mask_tokens": "masking",
    "maskable": "masking",
    "masked_token_batches": "masking",
    "DATA_DIR": "corpus",
    "SPLITS": "corpus",
    "Example": "corpus",
    "alignment_matrix": "corpus",
    "format_alignment": "corpus",
    "load_split": "corpus",
    "parse_alignment": "corpus",
    "read_tsv": "corpus",
    "detokenize": "text",
    "tokenize": "text",
    "MASK": "vocab",
    "SEP": "vocab",
    "Vocab": "vocab",
    "encoder_vocab": "vocab",
    "joint_vocab": "vocab",
    "special_ids": "vocab",
}
__all__ = list(_MODULE_OF)


def __getattr__(name: str):
    """The names above, each imported from its module on first use (PEP 562): the
    vocabulary alone (``data.vocab``, what decoding and the exercise checks need) loads
    neither the corpus nor the batching."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'transformer_lib.data' has no attribute {name!r}")
    return getattr(importlib.import_module(f"transformer_lib.data.{_MODULE_OF[name]}"), name)
