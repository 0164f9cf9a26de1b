"""The Python API's door: a public method's arguments are checked against its annotations before any work.

A call with a wrong type (``report(None)``, parameters as a list of pairs, ``query(b"...")``) or a count
below zero (``seed=-1``) raises :class:`dicegraph.Error` in one line naming the argument, as the CLI refuses a
bad option, instead of an AttributeError from deep inside after minutes of building.

>>> from collections.abc import Mapping
>>> def report(game: str, params: Mapping[str, int] | None = None, seed: int = 1) -> None: ...
>>> check_call(report, ("jackpot",), {"params": {"cells": 4}})
>>> check_call(report, ("jackpot", [("cells", 4)]), {})
Traceback (most recent call last):
...
dicegraph.graphs.errors.DicegraphError: report(): params must be a mapping of text to whole numbers, or None (not a list: [('cells', 4)])
>>> check_call(report, ("jackpot",), {"seed": -1})
Traceback (most recent call last):
...
dicegraph.graphs.errors.DicegraphError: report(): seed must be 0 or more (it is -1)
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dicegraph.graphs.errors import DicegraphError

COUNTS = ("seed", "games", "limit", "top", "depth", "max_nodes", "timeout", "dpi")  # arguments never below zero
SHOWN = 40  # the most of a wrong value a message shows
WORDS = {str: "text", int: "a whole number", float: "a number", bool: "True or False", bytes: "bytes",
         Path: "a path", type(None): "None"}


def check_call(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise DicegraphError in one line when ``function(*args, **kwargs)`` would be called with an argument that
    is missing, unknown, of a type its annotation does not admit, or (those named in :data:`COUNTS`) below 0."""
    signature, hints = _described(function)
    name = f"{function.__name__}()"
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise DicegraphError(f"{name}: {error}") from None
    for argument, value in bound.arguments.items():
        hint = hints.get(argument)
        if argument in ("self", "cls") or hint is None or signature.parameters[argument].kind in (
                inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
            continue
        if not fits(value, hint):
            shown = repr(value)
            shown = shown if len(shown) <= SHOWN else shown[:SHOWN] + "..."
            raise DicegraphError(f"{name}: {argument} must be {described(hint)} (not {_article(value)}: {shown})")
        if argument in COUNTS and isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            raise DicegraphError(f"{name}: {argument} must be 0 or more (it is {value})")


@functools.cache
def _described(function: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    """Return ``function``'s signature and resolved annotations (read once a function)."""
    return inspect.signature(function), typing.get_type_hints(function)


def fits(value: Any, hint: Any) -> bool:
    """Return whether ``value`` is of the annotated type ``hint`` (unions, mappings, sequences and callables
    looked into as far as their items; a protocol or anything unknown admits everything).

    >>> fits(3, int), fits(True, int), fits(3, float), fits(["a"], collections.abc.Sequence[str]), fits("ab", list[str])
    (True, False, True, True, False)
    """
    if hint is Any or hint is object:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, option) for option in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is type(None) or hint is None:
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin is None:
        if getattr(hint, "_is_protocol", False):  # a protocol (a game): what it offers, by name
            return all(hasattr(value, member) for member in _members(hint))
        return isinstance(value, hint) if isinstance(hint, type) else True
    if origin is collections.abc.Callable:
        return callable(value)
    items = typing.get_args(hint)
    if isinstance(origin, type) and issubclass(origin, collections.abc.Mapping):
        return isinstance(value, collections.abc.Mapping) and (not items or all(
            fits(key, items[0]) and fits(item, items[1]) for key, item in value.items()))
    if origin is tuple:
        return isinstance(value, tuple)
    if isinstance(origin, type) and issubclass(origin, collections.abc.Iterable):
        return isinstance(value, origin) and not isinstance(value, (str, bytes)) and (not items or all(
            fits(item, items[0]) for item in value))
    return True


@functools.cache
def _members(protocol: type) -> frozenset[str]:
    """Return the names a protocol class declares (its annotations and functions, not its dunder names)."""
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls is object or cls.__name__ in ("Protocol", "Generic"):
            continue
        names |= set(getattr(cls, "__annotations__", {})) | {key for key in vars(cls) if not key.startswith("_")}
    return frozenset(names)


def described(hint: Any) -> str:
    """Return what the annotation ``hint`` admits, in words.

    >>> described(str | None), described(collections.abc.Sequence[str])
    ('text, or None', 'a sequence of text')
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [described(option) for option in typing.get_args(hint)]
        return ", ".join(options[:-1]) + f", or {options[-1]}" if len(options) > 1 else options[0]
    if hint in WORDS:
        return WORDS[hint]
    items = typing.get_args(hint)
    if isinstance(origin, type) and issubclass(origin, collections.abc.Mapping):
        return f"a mapping of {described(items[0])} to {_plural(described(items[1]))}" if items else "a mapping"
    if origin is collections.abc.Callable:
        return "a function"
    if isinstance(origin, type) and issubclass(origin, collections.abc.Iterable):
        return f"a {origin.__name__.lower()} of {_plural(described(items[0]))}" if items else "a sequence"
    if hint is Any:
        return "anything"
    return f"a {getattr(hint, '__name__', str(hint))}"


def _plural(words: str) -> str:
    """Return a described type as many of them: ``a whole number`` -> ``whole numbers``."""
    return words[2:] + "s" if words.startswith("a ") else words


def _article(value: Any) -> str:
    """Return what kind of value ``value`` is: ``a list``, ``None``."""
    kind = type(value).__name__
    return "None" if value is None else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
