"""Read-only records that refuse assignment with a validation error.

A frozen dataclass raises :class:`dataclasses.FrozenInstanceError`, an ``AttributeError``.
cite-right's configuration models raise a validation error, a ``ValueError``, on
assignment. :func:`refuse_assignment` makes a frozen dataclass raise
:class:`FrozenFieldError`, which is both, so code catching either keeps working.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["FrozenFieldError", "refuse_assignment"]

RecordType = TypeVar("RecordType", bound=type)


class FrozenFieldError(dataclasses.FrozenInstanceError, ValueError):
    """Assignment to a field of a read-only record (an ``AttributeError`` and a
    ``ValueError``).

    Examples
    --------
    >>> issubclass(FrozenFieldError, ValueError), issubclass(FrozenFieldError, AttributeError)
    (True, True)
    """


def refuse_assignment(cls: RecordType) -> RecordType:
    """Make the frozen dataclass ``cls`` raise :class:`FrozenFieldError` on assignment and
    deletion of attributes (construction, ``copy`` and ``pickle`` are unaffected: they set
    fields through ``object.__setattr__`` or ``__init__``).

    Examples
    --------
    >>> @refuse_assignment
    ... @dataclasses.dataclass(frozen=True)
    ... class Limits:
    ...     top_k: int = 3
    >>> Limits().top_k = 1
    Traceback (most recent call last):
    ...
    citekit._frozen.FrozenFieldError: Limits is read-only: cannot assign to field 'top_k'
    """
    if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen):  # type: ignore
        raise TypeError(f"{cls.__name__} must be a frozen dataclass")

    def __setattr__(self: Any, name: str, value: Any) -> None:
        raise FrozenFieldError(
            f"{type(self).__name__} is read-only: cannot assign to field {name!r}"
        )

    def __delattr__(self: Any, name: str) -> None:
        raise FrozenFieldError(
            f"{type(self).__name__} is read-only: cannot delete field {name!r}"
        )

    # (assigned after the dataclass decorator, which refuses a class that defines them)
    cls.__setattr__ = __setattr__  # type: ignore[assignment]
    cls.__delattr__ = __delattr__  # type: ignore[assignment]
    return cls
