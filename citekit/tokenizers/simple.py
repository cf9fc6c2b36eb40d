"""``SimpleTokenizer``: rule-based words, numbers and symbols with stable ids and spans into
the text as passed.

Ids are the FNV-1a hash of each token's key (``_keys``). Most text is read by a compiled
kernel that finds tokens and hashes their keys in one pass (the characters it reads:
``_kernel_chars``); the pieces around the characters it cannot read (``_hybrid``) take the
general path (``_general``: normalization, a token pattern and the map back), with the
same result as the general path on the whole text. The token rules and the design are on
the tokenizer design page of the documentation.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Sequence

import numpy as np

from citekit._code_units import code_units
from citekit._frozen import refuse_assignment
from citekit._joined_texts import JoinedTexts
from citekit._validation import check_bool, check_str
from citekit.normalize import NormalizerConfig
from citekit.tokenizers import _hybrid
from citekit.tokenizers._general import tokenize_general
from citekit.tokenizers._kernel_chars import kernel_tables
from citekit.tokenizers._keys import key_id, token_key
from citekit.tokenizers.base import _VALID_BY_CONSTRUCTION, TokenizedText

__all__ = ["TokenizerConfig", "SimpleTokenizer", "token_id", "warmup"]


def token_id(key: str) -> int:
    """The stable 63-bit id of a normalized token string.

    Parameters
    ----------
    key : str
        A token's normalized form (what :meth:`SimpleTokenizer.token_key` returns).

    Returns
    -------
    int
        The 64-bit FNV-1a hash of ``key``'s UTF-8 bytes with the top bit cleared: the
        same in every process and on every machine, in ``[0, 2**63)``.

    Examples
    --------
    >>> hex(token_id("a"))  # FNV-1a("a") = 0xaf63dc4c8601ec8c, top bit cleared
    '0x2f63dc4c8601ec8c'
    >>> token_id("revenue") == int(SimpleTokenizer().token_ids("Revenue")[0])
    True
    """
    check_str(key, "key")
    return key_id(key)


@refuse_assignment
@dataclass(frozen=True)
class TokenizerConfig:
    """Normalization settings of :class:`SimpleTokenizer`.

    Parameters
    ----------
    normalize_numbers : bool, default True
        ``1,200`` and ``1200`` get the same id; script digits count as ASCII digits.
    normalize_percent : bool, default True
        ``%`` gets the id of ``percent``.
    normalize_currency : bool, default True
        Currency symbols get the id of their word (``$`` -> ``dollar``), and plural
        currency words that of the singular.
    nfkc : bool, default True
        Unicode NFKC before tokenizing (``ﬁ``, full-width letters, ``①``).
    casefold : bool, default True
        Case-insensitive ids (``REVENUE``, ``Revenue`` and ``revenue`` are one token).

    Examples
    --------
    >>> TokenizerConfig(normalize_currency=False).normalize_currency
    False

    It is read-only: assigning a field raises ``FrozenFieldError``, a ``ValueError``.
    """

    normalize_numbers: bool = True
    normalize_percent: bool = True
    normalize_currency: bool = True
    nfkc: bool = True
    casefold: bool = True

    def __post_init__(self) -> None:
        for field in fields(self):
            check_bool(getattr(self, field.name), field.name)

    def model_dump(self) -> dict[str, bool]:
        """The switches as a dict (cite-right's name for a configuration's export).

        Examples
        --------
        >>> TokenizerConfig(casefold=False).model_dump()["casefold"]
        False
        """
        return {field.name: getattr(self, field.name) for field in fields(self)}

    def normalizer_config(self) -> NormalizerConfig:
        """The :class:`~citekit.normalize.NormalizerConfig` with the same switches.

        Examples
        --------
        >>> TokenizerConfig(casefold=False).normalizer_config().casefold
        False
        """
        return NormalizerConfig(
            nfkc=self.nfkc,
            casefold=self.casefold,
            normalize_numbers=self.normalize_numbers,
            normalize_percent=self.normalize_percent,
            normalize_currency=self.normalize_currency,
        )


class SimpleTokenizer:
    """Rule-based tokenizer with stable ids and spans into the text as passed.

    Parameters
    ----------
    config : TokenizerConfig, optional
        Normalization switches; all on by default.

    Examples
    --------
    >>> tokenizer = SimpleTokenizer()
    >>> tokenized = tokenizer.tokenize("Revenue rose 15% to $1,200.")
    >>> tokenized.tokens
    ['Revenue', 'rose', '15', '%', 'to', '$', '1,200']
    >>> [tokenizer.token_key(t) for t in ["%", "$", "1,200", "dollars"]]
    ['percent', 'dollar', '1200', 'dollar']
    >>> ids, spans = tokenizer.tokenize("ＲＥＶＥＮＵＥ")
    >>> int(ids[0]) == int(tokenized.token_ids[0]), spans
    (True, [(0, 7)])
    """

    #: How ids are made from token keys; part of the signature a prepared corpus records,
    #: so that a corpus saved under another scheme is refused, not silently misaligned.
    id_scheme = "fnv1a-64"

    def __init__(self, config: TokenizerConfig | None = None) -> None:
        if config is None:
            config = TokenizerConfig()
        elif not isinstance(config, TokenizerConfig):
            raise TypeError(f"config must be a TokenizerConfig, got {type(config).__name__}")
        self.config = config
        self._normalizer_config = config.normalizer_config()
        # surface form (as found in the normalized text) -> id, so each is hashed once
        self._id_cache: dict[str, int] = {}
        # the kernel and its tables for this config (kernel_tables), looked up on first use
        self._kernel: tuple[Any, np.ndarray, np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        return f"SimpleTokenizer(config={self.config!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SimpleTokenizer):
            return NotImplemented
        return self.config == other.config

    def __hash__(self) -> int:
        return hash((SimpleTokenizer, self.config))

    # ------------------------------------------------------------------------------------
    def token_key(self, surface: str) -> str:
        """The normalized form of one token, from which its id is computed.

        Parameters
        ----------
        surface : str
            A token as it appears in the (case-folded / NFKC) text.

        Returns
        -------
        str
            The key: typographic apostrophes/hyphens to ASCII, thousands separators
            dropped, symbols and plural currency words to their word, per the config.

        Examples
        --------
        >>> SimpleTokenizer().token_key("dollars"), SimpleTokenizer().token_key("1,200")
        ('dollar', '1200')
        """
        check_str(surface, "surface")
        config = self.config
        return token_key(
            surface, config.normalize_numbers, config.normalize_percent, config.normalize_currency
        )

    def _ids(self, surfaces: list[str]) -> np.ndarray:
        """Ids of token surfaces found in normalized text (each distinct one hashed once)."""
        cache = self._id_cache
        try:
            return np.fromiter(
                map(cache.__getitem__, surfaces), dtype=np.int64, count=len(surfaces)
            )
        except KeyError:
            pass
        for surface in set(surfaces).difference(cache):
            cache[surface] = token_id(self.token_key(surface))
        return np.fromiter(map(cache.__getitem__, surfaces), dtype=np.int64, count=len(surfaces))

    def tokenize(self, text: str) -> TokenizedText:
        """Split ``text`` into tokens with stable ids and spans into ``text``.

        Parameters
        ----------
        text : str
            Any string.

        Returns
        -------
        TokenizedText
            Unpacks as ``(token_ids, spans)``; ids are ``int64``.

        Raises
        ------
        TypeError
            If ``text`` is not a ``str``.

        Examples
        --------
        >>> SimpleTokenizer().tokenize("東京で 5.2％ 上昇").tokens
        ['東', '京', 'で', '5.2', '％', '上', '昇']
        >>> SimpleTokenizer().tokenize("state-of-the-art company’s").tokens
        ['state-of-the-art', 'company’s']
        """
        check_str(text, "text")
        # ASCII, and English with typographic punctuation whose characters have the same
        # effect on tokens as ASCII stand-ins, one character for one: the kernel alone;
        # with other characters, the general path for the pieces around them (_hybrid)
        code_points = code_units(text)
        ids, starts, ends, n_other = self._kernel_tokens(code_points)
        if n_other == 0:
            return TokenizedText(text, ids, starts, ends)
        pieces = _hybrid.general_pieces(text, code_points)
        if pieces is None:
            return self._tokenize_unicode(text)
        return _hybrid.tokenize_hybrid(self._tokenize_unicode, text, ids, starts, ends, pieces)

    def token_ids(self, text: str) -> np.ndarray:
        """Only the ids of :meth:`tokenize` (``int64`` array).

        Examples
        --------
        >>> tokenizer = SimpleTokenizer()
        >>> bool((tokenizer.token_ids("15%") == tokenizer.token_ids("15 percent")).all())
        True
        """
        return self.tokenize(text).token_ids

    def tokenize_many(
        self, texts: Sequence[str], *, out: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The tokens :meth:`tokenize` gives each of ``texts``, from one kernel call.

        The many-texts method of the :class:`~citekit.tokenizers.base.Tokenizer`
        protocol: :meth:`~citekit.corpus.Corpus.build` reads its sources with it (when
        the segmenter has ``segment_many`` too), which costs less than a call per text.

        Parameters
        ----------
        texts : sequence of str
            The texts.
        out : numpy.ndarray, optional
            ``int64`` memory for the result: three regions of ``len(out) // 3`` tokens
            (ids, starts, ends). The arrays returned are views of it when the kernel's
            tokens fit (a caller that joins several results allocates their memory
            itself); by default they have memory of their own.

        Returns
        -------
        token_ids, starts, ends : numpy.ndarray
            ``int64``: the tokens of every text, concatenated, spans relative to their own
            text.
        offsets : numpy.ndarray
            ``int64``, ``len(texts) + 1`` entries: text ``t`` has tokens
            ``offsets[t]:offsets[t + 1]``.

        Raises
        ------
        TypeError
            If ``texts`` is not a sequence of ``str``.

        Notes
        -----
        A subclass that overrides :meth:`tokenize` overrides this method too, or the
        corpus reader tokenizes text by text with its :meth:`tokenize`.

        Examples
        --------
        >>> ids, starts, ends, offsets = SimpleTokenizer().tokenize_many(["Hi there", "", "5%"])
        >>> starts.tolist(), ends.tolist(), offsets.tolist()
        ([0, 3, 0, 1], [2, 8, 1, 2], [0, 2, 2, 4])
        >>> bool((ids[2:] == SimpleTokenizer().token_ids("5%")).all())
        True
        """
        batch = JoinedTexts.of(texts)
        if out is not None and not (
            isinstance(out, np.ndarray)
            and out.dtype == np.int64
            and out.ndim == 1
            and out.flags.c_contiguous
            and out.flags.writeable
        ):
            raise TypeError("out must be a writeable, contiguous 1-D int64 array")
        return _hybrid.tokenize_many(
            self._kernel_for_config(),
            self._tokenize_unicode,
            batch,
            batch.joined,
            batch.starts,
            out,
        )

    # ------------------------------------------------------------------------------------
    def _kernel_for_config(self) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """The kernel and its tables for this tokenizer's config (looked up once)."""
        kernel = self._kernel
        if kernel is None:
            kernel = self._kernel = kernel_tables(self.config)
        return kernel

    def _kernel_tokens(
        self, code_points: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The kernel's tokens of one text (:func:`~citekit.tokenizers._hybrid.kernel_tokens`)."""
        return _hybrid.kernel_tokens(self._kernel_for_config(), code_points)

    def _tokenize_unicode(self, text: str) -> TokenizedText:
        """The general path on the whole of ``text``
        (:func:`~citekit.tokenizers._general.tokenize_general`)."""
        return tokenize_general(text, self._normalizer_config, self._ids)


# spans in bounds, non-empty, ordered (tests/text/test_tokenizer_simple.py, hypothesis)
_VALID_BY_CONSTRUCTION.add(SimpleTokenizer.tokenize)
_VALID_BY_CONSTRUCTION.add(SimpleTokenizer.tokenize_many)


def warmup() -> None:
    """Compile (or load from the on-disk cache) the tokenizer kernels for all three
    unit types.

    ASCII text reaches the kernels as ``uint8``, other text in the Basic Multilingual
    Plane as ``uint16``, text with characters beyond it as ``uint32``: one compiled
    signature each (of the kernels
    :func:`~citekit.kernels._tokenize.kernel_tokens` and ``kernel_tokens_many``).

    Examples
    --------
    >>> warmup()
    """
    tokenizer = SimpleTokenizer()
    for text in ("a", "a\u2019", "a\U0001f600"):
        tokenizer._kernel_tokens(code_units(text))
        tokenizer.tokenize_many([text])
