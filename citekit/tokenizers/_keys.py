"""A :class:`~citekit.tokenizers.simple.SimpleTokenizer` token's key and id.

A token's key is its normalized form (typographic apostrophes and hyphens to ASCII,
thousands separators dropped, symbols and plural currency words to their word); its id
is the 64-bit FNV-1a hash of the key's UTF-8 bytes with the top bit cleared. The kernel
hashes keys the same way (``citekit.kernels._tokenize``).
"""

from __future__ import annotations

from citekit.kernels._hash import fnv1a
from citekit.kernels._tokenize import ID_MASK
from citekit.normalize import CURRENCY_WORDS, PERCENT_SIGNS, THOUSANDS_COMMA_RE, symbol_word

__all__ = ["KEY_TRANSLATION", "PLURAL_CURRENCY", "key_id", "token_key"]

# Typographic apostrophes and hyphens fold to the ASCII ones inside a token's key.
KEY_TRANSLATION = str.maketrans({"’": "'", "ʼ": "'", "‐": "-", "‑": "-"})

PLURAL_CURRENCY = {
    word + "s": word for word in CURRENCY_WORDS.values() if word not in {"yen", "won", "dong"}
}


def token_key(
    surface: str, normalize_numbers: bool, normalize_percent: bool, normalize_currency: bool
) -> str:
    """The key of a token found in the normalized text, under the tokenizer's switches.

    Examples
    --------
    >>> token_key("1,200", True, True, True), token_key("$", True, True, False)
    ('1200', '$')
    >>> token_key("dollars", True, True, True), token_key("company’s", True, True, True)
    ('dollar', "company's")
    """
    key = surface.translate(KEY_TRANSLATION)
    if normalize_numbers and "," in key:
        key = THOUSANDS_COMMA_RE.sub("", key)
    if len(key) == 1:
        word = symbol_word(key)
        if word is not None:
            enabled = normalize_percent if key in PERCENT_SIGNS else normalize_currency
            if enabled:
                key = word
    if normalize_currency:
        key = PLURAL_CURRENCY.get(key, key)
    return key


def key_id(key: str) -> int:
    """The id of a key (not checked: :func:`~citekit.tokenizers.simple.token_id` checks).

    Examples
    --------
    >>> hex(key_id("a"))  # FNV-1a("a") = 0xaf63dc4c8601ec8c, top bit cleared
    '0x2f63dc4c8601ec8c'
    """
    return fnv1a(key.encode("utf-8", "surrogatepass")) & ID_MASK
