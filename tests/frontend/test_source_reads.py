"""Whether a guard may compute a source (`Source.guardable`): found by walking the sources
it reads (`Source.reads`: its fields that are sources or tuples of them), whatever its
class, down to one with an effect (`InPlaceCallSource`: a C call on a list the region
makes once, ``heappop``).  A guard computing such a source would make the call again --
once more per check, on the caller's list -- so none may: a composite source, of a class
the walk does not know, built on one is no more guardable than the call itself."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from bcfront.frontend.model.sources import (
    InPlaceCallSource,
    ItemSource,
    LocalSource,
    PureCallSource,
    RecheckedSource,
    Ref,
    Source,
)


@dataclass(frozen=True, slots=True)
class EitherSource(Source):
    """A composite of a kind `sources` does not have: ``first or second``."""

    first: Source
    second: object  # a source, or a tuple of sources and constants

    def readable(self):
        return f"{self.first.readable()} or {self.second!r}"

    def expr(self, ns):
        return f"({ns.spell(self.first)} or {ns.spell(self.second)})"


POPPED = InPlaceCallSource(Ref(heapq.heappop, "heappop"), (LocalSource("xs"),), 0)


def test_a_call_with_an_effect_and_what_is_read_from_it_are_not_guardable():
    assert not POPPED.guardable
    assert not ItemSource(POPPED, 0).guardable
    assert not PureCallSource(Ref(abs, "abs"), (POPPED,), (Source,)).guardable
    assert LocalSource("xs").guardable and ItemSource(LocalSource("xs"), 0).guardable


def test_a_composite_source_built_on_an_in_place_call_is_not_guardable():
    plain = EitherSource(LocalSource("a"), (LocalSource("b"), 1))
    assert plain.guardable
    assert not EitherSource(LocalSource("a"), ItemSource(POPPED, 0)).guardable
    assert not EitherSource(LocalSource("a"), (1, ItemSource(POPPED, 0))).guardable
    # deeper: a derived source of a pure call on the composite
    deep = ItemSource(PureCallSource(Ref(abs, "abs"), (EitherSource(POPPED, 2),), (Source,)), 0)
    assert not deep.guardable
    assert set(EitherSource(LocalSource("a"), (LocalSource("b"), 1)).reads()) == {
        LocalSource("a"),
        LocalSource("b"),
    }


def test_a_rechecked_fact_reads_no_source():
    src = RecheckedSource(Ref(object, "version"), Ref(object, "holder"))
    assert src.guardable and list(src.reads()) == []
