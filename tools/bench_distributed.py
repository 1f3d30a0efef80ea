"""DDP and FSDP2 training steps on 2 gloo ranks: bcfront vs eager vs torch.compile(backend="eager").

Each rank trains the small GPT of `tests/distributed/workers.py` (wider), wrapped in DDP
and, separately, with every block and the root ``fully_shard``'ed (FSDP2), one copy per
contender, and times full steps (forward, backward with DDP's bucketed all-reduce or
FSDP's all-gathers and reduce-scatters, SGD step) after a warm-up; it reports, per
wrapping, the median step time, the recompiles after step 1 and the graph breaks in
forward.  Rank 0 writes ``tools/results/bench_distributed.json``.

    PYTHONPATH=. python tools/bench_distributed.py [--steps 30] [--wrap ddp fsdp2]
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import platform
import socket
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tools" / "results" / "bench_distributed.json"


def _wrapped(wrap: str, base):
    """A copy of `base` wrapped for `wrap`: the module to call and the one to optimize."""
    if wrap == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(copy.deepcopy(base))
        return model, model
    from torch.distributed.fsdp import fully_shard

    model = copy.deepcopy(base)
    for b in model.blocks:
        fully_shard(b)
    return fully_shard(model), model


def _worker(rank: int, world: int, port: int, steps: int, wraps: list) -> None:
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "tests"))
    import torch
    import torch.distributed as dist
    from distributed import workers  # the test's GPT

    torch.set_num_threads(1)
    workers.DIM, workers.SEQ, workers.BATCH = 64, 32, 4
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=120),
    )
    try:
        torch.manual_seed(0)
        base = workers.GPT()
        g = torch.Generator().manual_seed(rank)
        idx = torch.randint(0, workers.VOCAB, (workers.BATCH, workers.SEQ), generator=g)
        tgt = torch.roll(idx, -1, 1)
        results = {wrap: _bench(wrap, base, idx, tgt, steps) for wrap in wraps}
        if rank == 0:
            OUT.parent.mkdir(parents=True, exist_ok=True)
            data = {
                "date": datetime.date.today().isoformat(),
                "machine": f"{platform.machine()}, {platform.processor() or platform.system()}, torch "
                + torch.__version__,
                "world_size": world,
                "backend": "gloo",
                "steps": steps,
                "model": f"GPT dim={workers.DIM} seq={workers.SEQ} batch/rank={workers.BATCH}",
                "results": results,
            }
            OUT.write_text(json.dumps(data, indent=2) + "\n")
            print(json.dumps(data, indent=2))
    finally:
        dist.destroy_process_group()


def _bench(wrap: str, base, idx, tgt, steps: int) -> dict:
    """Every contender's median step, recompiles after step 1 (and bcfront's breaks)."""
    import torch
    import torch._dynamo
    import torch.distributed as dist

    import bcfront

    results, runs = {}, {}
    for name in ("eager", "bcfront", "torch.compile(eager)"):
        model, params = _wrapped(wrap, base)
        if name == "bcfront":
            fwd = bcfront.capture(model)
        elif name == "eager":
            fwd = model
        else:
            fwd = torch.compile(model, backend="eager")
        opt = torch.optim.SGD(params.parameters(), lr=0.01)
        with bcfront.explain.collect() as run:  # step 1 only: collecting counts ops (slow)
            fwd(idx, tgt).backward()
        opt.zero_grad(set_to_none=True)
        runs[name] = (fwd, opt, run, _compiles(name, fwd), [])
    # lockstep: step i of every contender before step i + 1 of any, so a load spike on
    # the shared machine hits them alike; the order reversed every other step, so no
    # contender always runs right after another
    order = list(runs.values())
    for i in range(steps + 3):
        for fwd, opt, _, _, times in order if i % 2 else order[::-1]:
            dist.barrier()
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            fwd(idx, tgt).backward()
            opt.step()
            times.append(time.perf_counter() - t0)
    for name, (fwd, _, run, after_first, times) in runs.items():
        entry = {"median_ms": statistics.median(times[3:]) * 1e3}
        entry["recompiles_after_step_1"] = _compiles(name, fwd) - after_first
        if name == "bcfront":
            report = run.report()
            entry["breaks"] = len(report.graph_breaks)
            entry["graphs"] = len(report.graphs)
        results[name] = entry
    return results


def _compiles(name: str, fwd) -> int:
    if name == "bcfront":  # every capture's: the module's and those it made (continuations,
        import bcfront  # FSDP2's forwards)

        return sum(len(c.recompiles) for c in bcfront.capture.registry())
    if name.startswith("torch.compile"):
        from torch._dynamo.utils import counters

        return sum(counters["recompiles"].values()) if "recompiles" in counters else 0
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--wrap", nargs="+", choices=("ddp", "fsdp2"), default=["ddp", "fsdp2"])
    args = ap.parse_args()
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_worker, args=(2, port, args.steps, args.wrap), nprocs=2)


if __name__ == "__main__":
    main()
