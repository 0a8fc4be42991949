"""Text -> tokens -> ids -> padded batches, for the bundled corpus or any Tatoeba-style tsv.

Modules: ``text`` (tokenize/detokenize; its docstring says which text round-trips),
``corpus`` (sentence pairs, gold alignments, reading the tsv files; its docstring gives the
file formats) and ``batching`` (vocabularies, ids, padded batches).

Shapes:
    B batch, S source length, T target length (both padded to the longest in the batch).
"""

from transformer_lib.data.batching import (
    Batch,
    build_vocabs,
    collate,
    concatenate_pairs,
    encode_pairs,
    make_batches,
)
from transformer_lib.data.corpus import (
    DATA_DIR,
    SPLITS,
    Example,
    alignment_matrix,
    format_alignment,
    load_split,
    parse_alignment,
    read_tsv,
)
from transformer_lib.data.text import detokenize, tokenize
from transformer_lib.vocab import Vocab  # re-exported for convenience

__all__ = [
    "DATA_DIR",
    "SPLITS",
    "Example",
    "tokenize",
    "detokenize",
    "parse_alignment",
    "format_alignment",
    "alignment_matrix",
    "read_tsv",
    "load_split",
    "Vocab",
    "build_vocabs",
    "encode_pairs",
    "concatenate_pairs",
    "Batch",
    "collate",
    "make_batches",
]
