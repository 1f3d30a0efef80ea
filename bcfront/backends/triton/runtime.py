"""Runtime: the per-user kernel cache, module loading, launching and autotuning.

Generated kernel modules are written to ``<cache>/kernels/k<sha256>.py`` (the
name is the hash of the content, checked again before every import) and
imported from there, since Triton's JIT reads kernel source from files.
Nothing is ever unpickled: the only other files are JSON autotune results.
The cache root is ``$BCFRONT_CACHE_DIR``, else ``$XDG_CACHE_HOME/bcfront``,
else ``~/.cache/bcfront``; it must belong to the current user and must not be
writable by group or others, because importing a planted file would run it.

On a GPU each kernel benchmarks a few block-size / warp configurations the
first time it runs and remembers the winner (in memory and on disk, per GPU
name); under ``TRITON_INTERPRET=1`` one interpreter-friendly configuration runs.

Kernels that gather through index tensors assert their indices are in range
(`KernelSource.checked`).  Triton drops ``tl.device_assert`` unless a kernel is
compiled with ``debug``, so those kernels are launched with ``debug=True`` (and
without the integer-overflow sanitizer that debug would also switch on: int32
arithmetic that wraps is torch semantics, not an error); under the interpreter,
which has no per-launch debug option, the interpreter's options are switched for
the launch and a failed assert is raised as the IndexError eager raises.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import stat
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from bcfront.errors import BcfrontError

from .codegen import INDEX_ASSERT, KernelSource, next_pow2


class CacheDirError(BcfrontError):
    """The kernel cache directory is unsafe or unusable."""


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def cache_root(override: str | None = None) -> Path:
    if override:
        return Path(override)
    env = os.environ.get("BCFRONT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bcfront"


def private_dir(path: Path) -> Path:
    """Create `path` (mode 0700) or check an existing one is ours and not shared."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(path)
    except OSError as e:
        raise CacheDirError(f"cannot use kernel cache directory {path}: {e}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise CacheDirError(f"kernel cache path {path} is not a directory")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise CacheDirError(
            f"kernel cache directory {path} belongs to another user (uid "
            f"{st.st_uid}); set BCFRONT_CACHE_DIR to a directory you own"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheDirError(
            f"kernel cache directory {path} is writable by group or others, so "
            f"anyone could plant code in it; run `chmod go-w {path}` or set "
            f"BCFRONT_CACHE_DIR to a private directory"
        )
    return path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


_MODULES: dict[str, object] = {}


def load_module(source: str, root: Path):
    """Import the module holding `source`, writing it to the cache if needed."""
    data = source.encode()
    digest = _sha(data)
    mod = _MODULES.get(digest)
    if mod is not None:
        return mod
    kdir = private_dir(private_dir(root) / "kernels")
    path = kdir / f"k{digest}.py"
    try:
        ok = path.read_bytes() == data
    except OSError:
        ok = False
    if not ok:
        _atomic_write(path, data)
    name = f"bcfront_kernels.k{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _MODULES[digest] = mod
    return mod


# ---------------------------------------------------------------- configurations


@dataclass(frozen=True, slots=True)
class LaunchConfig:
    blocks: tuple  # ((name, value), ...) constexpr block sizes
    num_warps: int = 4

    def kwargs(self, interpret: bool) -> dict:
        kw = dict(self.blocks)
        if not interpret:
            kw["num_warps"] = self.num_warps
        return kw

    def to_json(self) -> dict:
        return {"blocks": dict(self.blocks), "num_warps": self.num_warps}


# The interpreter pays per operation, not per element: big numpy blocks are cheap.
INTERP_ELEMS = 65536


def _cap(block: int, numel: int) -> int:
    return max(1, min(block, next_pow2(max(numel, 1))))


def candidate_configs(ks: KernelSource, interpret: bool) -> list[LaunchConfig]:
    """A few block shapes worth trying for this kernel (one under the interpreter,
    which runs fastest with big numpy blocks)."""
    out: list[LaunchConfig] = []
    if ks.kind == "pointwise":
        (n,) = ks.numels
        if interpret:
            return [LaunchConfig((("XBLOCK", _cap(INTERP_ELEMS, n)),))]
        for xb, nw in ((1024, 4), (512, 4), (2048, 8)):
            xb = _cap(xb, n)
            out.append(LaunchConfig((("XBLOCK", xb),), max(1, min(nw, xb // 64))))
    elif ks.kind == "tiled":
        y, x = ks.numels
        if interpret:
            return [LaunchConfig((("YBLOCK", _cap(256, y)), ("XBLOCK", _cap(256, x))))]
        for yb, xb, nw in ((32, 32, 4), (64, 64, 8), (32, 128, 4)):
            out.append(LaunchConfig((("YBLOCK", _cap(yb, y)), ("XBLOCK", _cap(xb, x))), nw))
    elif ks.kind == "persistent":
        x, r = ks.numels
        rb = ks.rblock or next_pow2(r)
        if interpret:
            return [LaunchConfig((("XBLOCK", _cap(max(1, INTERP_ELEMS // rb), x)), ("RBLOCK", rb)))]
        for xb in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            xb_c = _cap(xb, x)
            if xb_c * rb > 8192 and xb_c > 1:
                continue
            nw = max(2, min(16, xb_c * rb // 256))
            out.append(LaunchConfig((("XBLOCK", xb_c), ("RBLOCK", rb)), nw))
        out = list(dict.fromkeys(out))[-3:]  # the widest blocks that fit
    else:
        x, r = ks.numels
        if interpret:
            rb = ks.rblock or _cap(4096, r)
            return [LaunchConfig((("XBLOCK", _cap(max(1, INTERP_ELEMS // rb), x)), ("RBLOCK", rb)))]
        if ks.columns:  # contiguous along x: wide in x, short in r
            shapes = ((64, 32, 4), (128, 16, 8), (32, 64, 4))
        else:
            shapes = ((1, 2048, 8), (1, 4096, 16), (4, 512, 8))
        if ks.rblock:
            shapes = ((1, ks.rblock, 8),)
        for xb, rb, nw in shapes:
            out.append(LaunchConfig((("XBLOCK", _cap(xb, x)), ("RBLOCK", _cap(rb, r))), nw))
    return list(dict.fromkeys(out))


def grid_for(ks: KernelSource, cfg: LaunchConfig) -> tuple:
    b = dict(cfg.blocks)
    if ks.kind == "tiled":
        y, x = ks.numels
        return (-(-y // b["YBLOCK"]) * -(-x // b["XBLOCK"]),)
    return (-(-ks.numels[0] // b["XBLOCK"]),)


# ---------------------------------------------------------------- launching

# Launch options of kernels that hold index asserts (see the module docstring).
CHECKED_OPTIONS = {"debug": True, "sanitize_overflow": False}


@contextmanager
def _interpreter_asserts():
    """Make the interpreter run `tl.device_assert` for one launch; its failure
    becomes the IndexError eager raises for an out-of-range index."""
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    old = builder.options
    builder.options = replace(old, **CHECKED_OPTIONS)
    try:
        yield
    except Exception as e:  # the interpreter wraps the AssertionError
        if INDEX_ASSERT not in str(e):
            raise
        raise IndexError(
            "index out of range in a Triton gather (an index tensor holds a "
            "value outside the indexed dimension)"
        ) from None
    finally:
        builder.options = old


class Launcher:
    """Calls one generated kernel; picks its launch configuration on first use."""

    def __init__(self, ks: KernelSource, root: Path, autotune: bool = True, fn=None):
        self.ks = ks
        self.root = root
        self.interpret = interpreting()
        self.fn = fn if fn is not None else getattr(load_module(ks.source, root), ks.name)
        self.configs = candidate_configs(ks, self.interpret)
        self.best: LaunchConfig | None = None
        self.extra = CHECKED_OPTIONS if ks.checked and not self.interpret else {}
        self.autotune = autotune and not self.interpret and len(self.configs) > 1
        if not self.autotune:
            self._use(self.configs[0])

    def _use(self, cfg: LaunchConfig):
        self.best = cfg
        self.grid = grid_for(self.ks, cfg)
        self.kwargs = {**cfg.kwargs(self.interpret), **self.extra}

    def __call__(self, *args):
        if self.best is None:
            self._use(self.tune(args))
        if self.interpret and self.ks.checked:
            with _interpreter_asserts():
                self.fn[self.grid](*args, **self.kwargs)
            return
        self.fn[self.grid](*args, **self.kwargs)

    # ---- autotuning (GPU only)
    def _record_path(self) -> Path:
        d = private_dir(private_dir(self.root) / "autotune")
        return d / f"{_sha(self.ks.source.encode())}.json"

    def _device_key(self, args) -> str:
        import torch

        t = next((a for a in args if isinstance(a, torch.Tensor)), None)
        return torch.cuda.get_device_name(t.device) if t is not None else "unknown"

    def _recall(self, device: str) -> LaunchConfig | None:
        try:
            rec = json.loads(self._record_path().read_text())
            entry = rec[device]
            cfg = LaunchConfig(
                tuple(sorted((str(k), int(v)) for k, v in entry["blocks"].items())), int(entry["num_warps"])
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        by_key = {(tuple(sorted(c.blocks)), c.num_warps): c for c in self.configs}
        return by_key.get((cfg.blocks, cfg.num_warps))  # only a known candidate is trusted

    def _remember(self, device: str, cfg: LaunchConfig):
        path = self._record_path()
        try:
            rec = json.loads(path.read_text())
            if not isinstance(rec, dict):
                rec = {}
        except (OSError, ValueError):
            rec = {}
        rec[device] = cfg.to_json()
        _atomic_write(path, json.dumps(rec, indent=1, sort_keys=True).encode())

    def tune(self, args) -> LaunchConfig:
        device = self._device_key(args)
        known = self._recall(device)
        if known is not None:
            return known
        from triton.testing import do_bench

        timings, error = [], None
        for cfg in self.configs:
            grid, kw = grid_for(self.ks, cfg), {**cfg.kwargs(False), **self.extra}
            try:
                ms = do_bench(lambda: self.fn[grid](*args, **kw), warmup=5, rep=20)  # noqa: B023 - run now
            except Exception as e:  # noqa: BLE001 - e.g. out of shared memory / registers for this shape
                error = e
                continue
            timings.append((ms, cfg))
        if not timings:
            raise BcfrontError(f"no launch configuration of {self.ks.name} could run: {error}")
        best = min(timings, key=lambda t: t[0])[1]
        self.timings = timings
        self._remember(device, best)
        return best


class SizedLauncher:
    """Launches a kernel of a symbolic lowering: each call passes the numels first, and
    the grid and block sizes follow from them (a `Launcher` per numels seen, sharing the
    one compiled kernel; on a GPU its autotune record is per source, so a new size reuses
    the winner when it is a candidate for that size)."""

    def __init__(self, ks: KernelSource, root: Path, autotune: bool = True):
        self.ks, self.root, self.autotune = ks, root, autotune
        self.fn = getattr(load_module(ks.source, root), ks.name)
        self.by_numels: dict = {}

    def __call__(self, numels: tuple, *args):
        launch = self.by_numels.get(numels)
        if launch is None:
            ks = replace(self.ks, numels=numels)
            launch = self.by_numels[numels] = Launcher(ks, self.root, self.autotune, fn=self.fn)
        launch(*args)
