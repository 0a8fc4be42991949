"""transformer_lib.data.vocab: ids are checked, never truncated, and a malformed saved
vocabulary is a clear error. (Building, encoding and round trips: tests/test_data.py.)"""

import json

import numpy as np
import pytest
import torch

from transformer_lib.data.vocab import SPECIALS, Vocab


@pytest.fixture(scope="module")
def vocab() -> Vocab:
    return Vocab([*SPECIALS, "der", "Hund", "."])


def test_decode_takes_python_numpy_and_tensor_ids(vocab):
    expected = ["der", "Hund"]
    assert vocab.decode([4, 5, 3, 6]) == expected
    assert vocab.decode([np.int64(4), np.int32(5)]) == expected
    assert vocab.decode(torch.tensor([4, 5], dtype=torch.int32)) == expected


def test_decode_rejects_ids_that_are_not_ints(vocab):
    with pytest.raises(TypeError, match=r"`ids\[1\]` must be an int; got float 4.9"):
        vocab.decode([4, 4.9])  # used to become id 4
    with pytest.raises(TypeError, match=r"`ids` must be an integer tensor .*Convert with \.long"):
        vocab.decode(torch.tensor([4.9]))
    with pytest.raises(ValueError, match=r"`ids\[2\]` must be an id in \[0, 7\)"):
        vocab.decode([4, 5, 7])
    with pytest.raises(ValueError, match=r"`index` must be an id in \[0, 7\)"):
        vocab.id_to_token(-1)


@pytest.mark.parametrize(
    ("data", "error", "match"),
    [
        ({"tokens": 5}, TypeError, r"`data\['tokens'\]` must be a list of str tokens; got int 5"),
        ({"tokens": "abc"}, TypeError, r"`data\['tokens'\]` must be a list of str tokens; got str"),
        (
            {"tokens": [*SPECIALS, 5]},
            TypeError,
            r"`data\['tokens'\]\[4\]` must be a str token; got int 5",
        ),
        ({"words": []}, TypeError, r"`data` must be a dict .*; got a dict without 'tokens'"),
        ([*SPECIALS], TypeError, r"`data` must be a dict .*; got list"),
        ({"tokens": ["a", "b"]}, ValueError, r"`tokens` must be a list starting with the specials"),
    ],
)
def test_a_malformed_saved_vocabulary_is_named(data, error, match):
    with pytest.raises(error, match=match):
        Vocab.from_dict(data)
    with pytest.raises(error, match=match):
        Vocab.from_json(json.dumps(data))


def test_tokens_must_be_strings():
    with pytest.raises(TypeError, match=r"`tokens\[4\]` must be a str token; got int 7"):
        Vocab([*SPECIALS, 7])
    with pytest.raises(TypeError, match="`tokens` must be a list of str tokens; got int 3"):
        Vocab(3)
