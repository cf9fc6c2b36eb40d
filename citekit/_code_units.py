"""A text as one unsigned integer per character, the input of the tokenizer and
segmentation kernels.

Both kernels read the same text one after the other (a corpus segments and tokenizes
each source; an answer is segmented, then tokenized), so the array of the last text of
each thread is kept and given again when that same ``str`` object comes back (encoding
a text costs a third of what segmenting it does).
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["code_units"]

# texts up to this many characters are kept (the array of a longer one would hold a lot
# of memory until the thread's next text)
_KEEP_LIMIT = 1 << 20
_last = threading.local()


def code_units(text: str) -> np.ndarray:
    """``text`` as its code points, one per character (a read-only array).

    ASCII text as ``uint8``, text in the Basic Multilingual Plane as ``uint16`` (UTF-16,
    one unit per character), other text as ``uint32`` (lone surrogates kept): three
    kernel signatures at most.

    Examples
    --------
    >>> [(a.dtype.name, a.tolist()) for a in map(code_units, ["Hi", "€1", "a😀"])]
    [('uint8', [72, 105]), ('uint16', [8364, 49]), ('uint32', [97, 128512])]
    >>> code_units("ok").flags.writeable
    False
    """
    last = getattr(_last, "pair", None)
    if last is not None and last[0] is text:
        return last[1]
    if text.isascii():
        units = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        # UTF-16 is the cheapest encoding of a non-ASCII str; a character beyond the BMP
        # (a surrogate pair) makes it longer than two bytes per character
        encoded = text.encode("utf-16-le", "surrogatepass")
        if len(encoded) == 2 * len(text):
            units = np.frombuffer(encoded, dtype=np.uint16)
        else:
            units = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if len(text) <= _KEEP_LIMIT:
        _last.pair = (text, units)
    return units
