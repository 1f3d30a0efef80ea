"""The generated ``__call__`` of a captured function (`bcfront.fast_call`) does what the plain
loop over its entries (``CapturedFunction.__call__``) does: same entry taken, same result or
exception, same call count, misses and keyword calls handed to the loop.  Oracle: the plain
loop on the same entries, and the plain Python function.  Pure Python."""

from __future__ import annotations

import os

import pytest

import bcfront
from bcfront import fast_call
from bcfront.capture import CapturedFunction


def pick(x, y=10):
    if x > 2:
        return x * y
    return [x, y]


def fails(x):
    return x[0] + 1  # a TypeError for an int: raised by the region, not a miss


class Box:
    def __init__(self, k):
        self.k = k

    def scaled(self, x):
        return self.k * x


def _both(cf, *args, **kwargs):
    """The call through the generated __call__, then through the plain loop."""
    before = cf.calls
    fast = cf(*args, **kwargs)
    plain = CapturedFunction.__call__(cf, *args, **kwargs)
    assert cf.calls == before + 2
    return fast, plain


def _plain_call(cf) -> bool:
    """`cf`'s call is the plain loop: itself, or the C call (where built) going only there."""
    if type(cf).__dict__["python_call"] is not CapturedFunction.__call__:
        return False
    return not fast_call.HAVE_C or cf._dispatch_pick() is None


def test_a_captured_function_gets_its_own_generated_call():
    cf = bcfront.capture(pick)
    assert _plain_call(cf)  # no entry yet
    cf(3)
    assert type(cf).__call__ is not CapturedFunction.__call__
    assert isinstance(cf, CapturedFunction) and type(cf).__name__ == "CapturedFunction"
    other = bcfront.capture(pick)
    assert type(other) is not type(cf)  # each its own: one's entries are not the other's


@pytest.mark.parametrize("args", [(3,), (1,), (5, 2), (0, 0), (3,), (1,)])
def test_generated_call_and_plain_loop_agree(args):
    cf = bcfront.capture(pick)
    for a in [(3,), (1,), (5, 2)]:  # several entries, in this order
        cf(*a)
    fast, plain = _both(cf, *args)
    assert fast == plain == pick(*args)


def test_keyword_calls_go_through_the_plain_loop():
    cf = bcfront.capture(pick)
    cf(3)
    assert cf(3, y=2) == pick(3, y=2) == 6
    assert cf(x=4) == pick(x=4)


def test_an_exception_from_the_region_is_raised_not_taken_for_a_miss():
    cf = bcfront.capture(fails)
    with pytest.raises(TypeError) as native:
        fails(1)
    for _ in range(3):
        with pytest.raises(TypeError) as got:
            cf(1)
        assert str(got.value) == str(native.value)
    assert len(cf.entries) == 1
    assert cf([1]) == 2


def test_a_call_that_does_not_bind_raises_pythons_error():
    cf = bcfront.capture(pick)
    cf(3)
    with pytest.raises(TypeError) as native:
        pick(1, 2, 3)
    with pytest.raises(TypeError) as got:
        cf(1, 2, 3)
    assert str(got.value) == str(native.value)


def test_bound_methods_pass_their_self():
    b = Box(3)
    cf = bcfront.capture(b.scaled)
    for x in (1, 2, 2, 1):
        fast, plain = _both(cf, x)
        assert fast == plain == b.scaled(x)


def test_reset_goes_back_to_the_plain_loop_and_recaptures():
    cf = bcfront.capture(pick)
    cf(3)
    cf.reset()
    assert _plain_call(cf)
    assert cf(3) == pick(3) and len(cf.entries) == 1


def test_after_the_recompile_limit_calls_run_natively_and_count():
    cf = bcfront.capture(pick, recompile_limit=2)
    with pytest.warns(bcfront.report.NativeFallbackWarning):
        for x in range(3, 9):  # y a str: specialized per value (an int would be symbolic)
            assert cf(x, str(x)) == pick(x, str(x))
    assert len(cf.entries) == 2 and cf.calls == 6


# -- the chain of link functions (roots without defaults) ----------------------------------


@pytest.fixture(params=["exact", "chain"])
def links(request):
    """Each link test runs both fast ways: the C call with exact links, the Python chain."""
    if request.param == "exact" and os.environ.get("BCFRONT_PURE_PYTHON"):
        pytest.skip("BCFRONT_PURE_PYTHON is set: the C call is not used")
    if request.param == "exact" and not fast_call.HAVE_C:
        pytest.fail(
            "bcfront._cfast (the C call) is not built: reinstall with a C compiler "
            "(pip install -e .), or set BCFRONT_PURE_PYTHON=1 to test the pure-Python paths only"
        )
    return request.param


def cap(fn, links):
    cf = bcfront.capture(fn)
    cf.exact_links = links == "exact"
    return cf


def plain_sum(x, y):
    return x + y


def star_kw(a, *rest, k, **kw):
    return [a, rest, k, sorted(kw.items())]


def _error(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except TypeError as e:
        return str(e)
    raise AssertionError("expected a TypeError")


def test_a_root_without_defaults_is_called_through_its_entries_links(links):
    cf = cap(plain_sum, links)
    cf(1, 2)
    cf("a", "b")
    call = type(cf).__dict__["__call__"]
    if links == "exact":  # the C call, armed with the first link
        assert call is fast_call.DispatchBase.__call__ and cf.entries[0].link_names.exact
    else:
        if fast_call.HAVE_C:  # the C call, not armed: it goes to the chain
            assert call is fast_call.DispatchBase.__call__ and cf._dispatch_pick() is None
        call = type(cf).__dict__["python_call"]
        assert isinstance(call, staticmethod) and call.__func__ is cf.entries[0].link
    assert [cf(1, 2), cf("a", "b"), cf(y=2, x=1), cf(2.5, 1)] == [3, "ab", 3, 3.5]
    assert len(cf.entries) == 3 and cf.calls == 6


@pytest.mark.parametrize(
    "args, kwargs",
    [((1,), {}), ((1, 2, 3), {}), ((1,), {"x": 2}), ((), {"z": 1}), ((1, 2), {"y": 3})],
)
def test_a_call_the_links_cannot_bind_raises_pythons_error(args, kwargs, links):
    cf = cap(plain_sum, links)
    cf(1, 2)
    assert _error(cf, *args, **kwargs) == _error(plain_sum, *args, **kwargs)


@pytest.mark.parametrize(
    "args, kwargs",
    [((1, 2, 3), {"k": 4}), ((1,), {"k": 4, "z": 5}), ((1,), {"k": 4}), ((), {"a": 1, "k": 2})],
)
def test_star_and_keyword_only_parameters_pass_through_the_links(args, kwargs, links):
    cf = cap(star_kw, links)
    for _ in range(2):
        fast, plain = _both(cf, *args, **kwargs)
        assert fast == plain == star_kw(*args, **kwargs)
    assert _error(cf, 1) == _error(star_kw, 1)  # k missing


def star_only(a, *rest):
    return [a, rest]


@pytest.mark.parametrize("args", [(1,), (1, 2), (1, 2, 3), (), (2, 2)])
def test_a_root_taking_star_args_passes_them_through_the_links(args, links):
    cf = cap(star_only, links)
    for a in [(1,), (1, 2), (1, 2, 3)]:  # several entries, in this order
        cf(*a)
    if not args:
        assert _error(cf) == _error(star_only)
        return
    for _ in range(2):
        fast, plain = _both(cf, *args)
        assert fast == plain == star_only(*args)


def with_default(x, y=10):
    return x * y


@pytest.mark.parametrize("args", [(2,), (2, 3), (2,), (4,)])
def test_a_root_with_defaults_takes_them_through_the_links(args, links):
    cf = cap(with_default, links)
    for a in [(2,), (2, 3)]:
        cf(*a)
    fast, plain = _both(cf, *args)
    assert fast == plain == with_default(*args)


class AllDefaults:
    def m(self=None, x=1):
        return [x, self is None]


@pytest.mark.parametrize("args", [(), (5,), (), (5,)])
def test_a_bound_method_whose_self_has_a_default_too(args, links):
    bound = AllDefaults().m
    cf = bcfront.capture(bound)
    cf.exact_links = links == "exact"
    cf()
    cf(5)
    fast, plain = _both(cf, *args)
    assert fast == plain == bound(*args)


def test_defaults_changed_after_capture_are_used(links):
    def f(x, y=10):
        return x * y

    cf = cap(f, links)
    assert [cf(2), cf(2), cf(2, 3)] == [20, 20, 6]
    f.__defaults__ = (100,)
    assert [cf(2), cf(2), cf(2, 3)] == [f(2), f(2), f(2, 3)] == [200, 200, 6]


def test_a_mutable_default_replaced_by_an_equal_one_is_the_new_one(links):
    def f(x, acc=[]):  # noqa: B006 - the shared default is the point
        acc.append(x)
        return len(acc)

    def g(x, acc=[]):  # noqa: B006
        acc.append(x)
        return len(acc)

    cf = cap(f, links)
    assert [cf(1), cf(1), cf(1)] == [g(1), g(1), g(1)] == [1, 2, 3]
    f.__defaults__ = ([],)
    g.__defaults__ = ([],)
    assert [cf(1), cf(1)] == [g(1), g(1)] == [1, 2]
    assert f.__defaults__[0] == [1, 1]


def test_defaults_given_to_the_root_after_capture_are_used(links):
    def f(x, y):
        return x * y

    cf = cap(f, links)
    assert cf(2, 3) == 6
    f.__defaults__ = (10,)  # the links were made for a root without defaults
    assert cf(2) == f(2) == 20
    assert cf(2, 3) == 6


def test_a_root_whose_code_is_replaced_takes_its_new_signature(links):
    def f(x):
        return x + 1

    def g(x, y, *, z):
        return x + y + z

    cf = cap(f, links)
    assert cf(1) == 2
    f.__code__ = g.__code__  # as a reloader does
    assert cf(1, 2, z=3) == f(1, 2, z=3) == 6
    assert _error(cf, 1) == _error(f, 1)


def test_a_root_whose_code_is_replaced_by_one_of_the_same_signature_runs_it(links):
    def f(x):
        return x + 1

    def g(x):
        return x - 1

    cf = cap(f, links)
    assert [cf(1), cf(1)] == [2, 2]
    f.__code__ = g.__code__
    assert [cf(1), cf(1)] == [f(1), f(1)] == [0, 0]


def test_replacing_an_entrys_region_rebuilds_the_chain(links):
    cf = cap(plain_sum, links)
    cf(1, 2)
    seen = []
    region = cf.entries[0].region

    def spy(*args, **kwargs):
        seen.append(args)
        return region(*args, **kwargs)

    cf.entries[0].region = spy
    assert cf(1, 2) == 3 and seen == [(1, 2)]


def test_the_chain_does_not_keep_its_captured_function_alive(links):
    import gc
    import weakref

    cf = cap(plain_sum, links)
    cf(1, 2)
    cf(1.5, 2)
    chain = [e.link.__globals__ for e in cf.entries]
    refs = gc.get_referrers(cf)
    assert not any(r is g for r in refs for g in chain)  # the links reach it weakly
    ref = weakref.ref(cf)
    del cf, refs, chain
    gc.collect()
    assert ref() is None


def test_a_measured_call_goes_the_plain_way_and_is_timed(links):
    cf = cap(plain_sum, links)
    cf(1, 2)
    with bcfront.explain.collect(count_ops=False):
        assert cf(1, 2) == 3
    assert cf(1, 2) == 3
    assert (cf.calls, cf.timed_calls) == (3, 1)


# -- an entry's fused function: compiled when the generated call reads it ----------------------


def _compiled_names(monkeypatch) -> list[str]:
    """The file names of the generated functions compiled from now on (`codegen`'s)."""
    from bcfront.frontend.regions import codegen

    seen: list[str] = []

    def recording(source, filename, mode, *rest, **kw):
        seen.append(filename.split(" ")[0])
        return compile(source, filename, mode, *rest, **kw)

    monkeypatch.setattr(codegen, "compile", recording, raising=False)
    return seen


def test_a_first_call_served_by_links_compiles_no_fused_function(links, monkeypatch):
    # The links (C call or chain) never call `fused`: the first call compiles the region it
    # runs, the guard it checks itself with, and the link the next calls take; nothing else.
    cf = cap(plain_sum, links)
    seen = _compiled_names(monkeypatch)
    assert cf(1, 2) == 3 and cf(1, 2) == 3
    link = "bcfront:exact" if links == "exact" else "bcfront:link"
    assert sorted(seen) == sorted(["bcfront:region", "bcfront:guard", link])
    assert "fused" not in cf.entries[0].__dict__


def test_the_generated_call_compiles_its_entries_fused_functions(monkeypatch):
    cf = bcfront.capture(pick)
    cf.exact_links = False  # a root with defaults: no chain link, the generated call
    seen = _compiled_names(monkeypatch)
    assert [cf(3), cf(1)] == [pick(3), pick(1)]
    assert seen.count("bcfront:entry") == 2  # each entry's, when the call was generated
    for e in cf.entries:
        assert e.fused is e.__dict__["fused"] and e.fused.__defaults__ is e.region.__defaults__


@pytest.mark.parametrize("args", [(3,), (1,), (5, 2), (0, 0), ("a",)])
def test_a_fused_function_does_what_its_guard_then_region_do(args):
    from bcfront.frontend.regions.entry import _guard_then_region

    cf = bcfront.capture(pick)
    cf(3)
    cf(1)
    for e in cf.entries:  # the reference: the entry's own guard, then its region
        want = _guard_then_region(e)
        assert _outcome(e.fused, *args) == _outcome(want, *args)


def _outcome(fn, *args):
    try:
        return ("value", fn(*args))
    except Exception as e:  # noqa: BLE001 - compared, not handled
        return ("raised", type(e), str(e))


def test_a_guard_replaced_before_the_fused_function_is_read_is_the_one_it_calls():
    cf = bcfront.capture(plain_sum)
    cf(1, 2)
    entry = cf.entries[0]
    seen = []
    guard = entry.guard

    def spy(*args, **kwargs):
        seen.append(args)
        return guard(*args, **kwargs)

    entry.guard = spy
    assert entry.fused(1, 2) == 3 and seen == [(1, 2)]
    assert entry.fused("a", 2) is entry.MISS and seen[-1] == ("a", 2)


def test_a_fused_function_that_does_not_compile_is_its_guard_then_region():
    from bcfront.frontend.model.namespace import Namespace
    from bcfront.frontend.regions.codegen import DeferredFunction
    from bcfront.frontend.regions.entry import Entry

    broken = DeferredFunction("def ___entry(x):\n    return (\n", Namespace(), "___entry", "bcfront:entry t")
    entry = Entry(lambda x: x > 0, lambda x: x * 2, fused_source=broken)
    assert [entry.fused(2), entry.fused(-1)] == [4, entry.MISS]
