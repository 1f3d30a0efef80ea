"""Types of bcfront's C fast paths (`_cfast.c`); see `bcfront/cfast.py`."""

from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

class DispatchBase:
    _dispatch_calls: int
    def _dispatch_set(
        self,
        first: Callable[..., Any] | None,
        root: FunctionType = ...,
        code: CodeType = ...,
        defaults: tuple[Any, ...] | None = ...,
        slow: Callable[..., Any] = ...,
        on: list[Any] = ...,
        self_args: tuple[Any, ...] = ...,
        nargs: int = ...,
        most: int = ...,
        kwdefaults: dict[str, Any] | None = ...,
        keywords: bool = ...,
        /,
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def _dispatch_key(
        self,
        positions: tuple[int, ...] | None,
        table: dict[Any, Any] = ...,
        missed: Callable[..., Any] = ...,
        first: Callable[..., Any] = ...,
        general: bool = ...,
        /,
    ) -> None: ...
    def _dispatch_pick(self, *args: Any) -> Callable[..., Any] | None: ...

INTERFACE: int

def dict_version(d: dict[Any, Any], /) -> int: ...
def dicts_unchanged(cell: list[Any], /, *dicts: dict[Any, Any]) -> bool: ...
def codes_are(functions: tuple[Any, ...], codes: tuple[Any, ...], /) -> bool: ...
def bound_to(method: object, descriptor: object, /) -> Any: ...
def members_are(s: object, member_types: dict[Any, type], /) -> bool: ...
def items_are(
    seq: object, indices: tuple[int, ...], types: tuple[type, ...], values: tuple[Any, ...], /
) -> bool: ...
def raised(exc: BaseException, chain: bool, /) -> object: ...
def _vectorcall_class(cls: type, /) -> bool: ...
def _direct_calls(on: bool, /) -> bool: ...
def _key_filters(on: bool, /) -> bool: ...

CHECK_OPS: int

class CheckedLink:
    next: Callable[..., Any] | None
    link: FunctionType
    body: Callable[..., Any]
    hits: int
    @property
    def cache_hits(self) -> int: ...
    def __init__(
        self,
        code: tuple[int, ...],
        consts: tuple[Any, ...],
        nlocals: int,
        depth: int,
        npos: int,
        star: bool,
        guarded: bool,
        body: Callable[..., Any],
        link: FunctionType,
        result: tuple[Any, ...],
        kept: int = -1,
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def passes(self, *args: Any) -> bool: ...
