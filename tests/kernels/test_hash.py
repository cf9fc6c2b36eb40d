"""FNV-1a is defined once (citekit.kernels._hash), and every user hashes through it."""

import pathlib

import numpy as np
import pytest

import citekit
from citekit.kernels._hash import FNV_OFFSET, FNV_OFFSET_U64, FNV_PRIME, FNV_PRIME_U64, fnv1a

# the published test vectors of 64-bit FNV-1a
VECTORS = [(b"", 0xCBF29CE484222325), (b"a", 0xAF63DC4C8601EC8C), (b"foobar", 0x85944171F73967E8)]


@pytest.mark.parametrize("data, expected", VECTORS)
def test_fnv1a_gives_the_published_values(data, expected):
    assert fnv1a(data) == expected
    assert fnv1a(list(data)) == expected


def test_the_kernel_constants_are_the_python_ones():
    assert int(FNV_OFFSET_U64) == FNV_OFFSET and int(FNV_PRIME_U64) == FNV_PRIME
    assert FNV_OFFSET_U64.dtype == FNV_PRIME_U64.dtype == np.uint64


def test_token_ids_and_abbreviation_keys_hash_through_it():
    from citekit.kernels._segment import key_hash
    from citekit.kernels._tokenize import ID_MASK
    from citekit.tokenizers.simple import token_id

    for key in ("revenue", "15%", "東京", "é"):
        assert token_id(key) == fnv1a(key.encode("utf-8")) & ID_MASK
        assert key_hash(map(ord, key)) == fnv1a(map(ord, key))


def test_the_highlight_kernel_hashes_spans_as_python_does():
    from citekit.kernels._highlight import hash_spans

    text = "Revenue grew 15% in Osaka 東京"
    pool = np.array([ord(c) for c in text], dtype=np.uint32)
    starts = np.array([0, 8, 13, 26, 0], dtype=np.int64)
    ends = np.array([7, 12, 16, 28, 0], dtype=np.int64)
    hashes = hash_spans(pool, starts, ends)
    assert hashes.tolist() == [fnv1a(map(ord, text[s:e])) for s, e in zip(starts, ends)]


def test_no_other_module_defines_the_constants():
    package = pathlib.Path(citekit.__file__).parent
    holders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "cbf29ce484222325" in path.read_text(encoding="utf-8").lower()
        or "100000001b3" in path.read_text(encoding="utf-8").lower()
    ]
    assert holders == ["kernels/_hash.py"]
