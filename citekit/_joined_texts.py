"""Many texts read as one string, for the kernels that read many texts in one call.

The tokenizer's and the segmenter's ``*_many`` methods each read the concatenation of
their texts; a :class:`JoinedTexts` given to both is joined (and encoded, see
:func:`~citekit._code_units.code_units`) once.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Iterator, overload

import numpy as np

__all__ = ["JoinedTexts"]


class JoinedTexts(Sequence):  # type: ignore[type-arg]
    """A sequence of texts with their concatenation and where each starts in it.

    Parameters
    ----------
    texts : iterable of str
        The texts (copied into a tuple).
    name : str, default "texts"
        How to call them in error messages.

    Raises
    ------
    TypeError
        If ``texts`` is a ``str`` or holds something else than ``str``.

    Examples
    --------
    >>> batch = JoinedTexts(["Hi.", "", "Ok"])
    >>> batch.joined, batch.starts.tolist(), list(batch)
    ('Hi.Ok', [0, 3, 3, 5], ['Hi.', '', 'Ok'])
    >>> batch[0], len(batch), JoinedTexts.of(batch) is batch
    ('Hi.', 3, True)
    """

    __slots__ = ("texts", "joined", "starts")

    def __init__(self, texts: Any, name: str = "texts") -> None:
        if isinstance(texts, (str, bytes)) or not hasattr(texts, "__iter__"):
            raise TypeError(f"{name} must be a sequence of str, got {type(texts).__name__}")
        self.texts: tuple[str, ...] = tuple(texts)
        try:
            self.joined = "".join(self.texts)  # (checks that every item is a str)
        except TypeError:
            position, item = next(
                (position, item)
                for position, item in enumerate(self.texts)
                if not isinstance(item, str)
            )
            raise TypeError(
                f"{name}[{position}] must be a str, got {type(item).__name__}"
            ) from None
        #: ``int64``, ``len(texts) + 1`` entries: text ``t`` is
        #: ``joined[starts[t]:starts[t + 1]]``.
        self.starts = np.fromiter(
            accumulate(map(len, self.texts), initial=0), np.int64, len(self.texts) + 1
        )

    @classmethod
    def of(cls, texts: Any, name: str = "texts") -> "JoinedTexts":
        """``texts`` itself if it is a :class:`JoinedTexts`, else its texts joined."""
        return texts if isinstance(texts, cls) else cls(texts, name)

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: Any) -> Any:
        return self.texts[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __repr__(self) -> str:
        return f"JoinedTexts({len(self)} texts, {len(self.joined)} characters)"
