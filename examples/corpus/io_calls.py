"""I/O and calls the interpreter cannot see into: print, logging, numpy, math."""
import logging
import math

import numpy as np
import torch

import bcfront

log = logging.getLogger("corpus")


@bcfront.capture
def noisy(x):
    y = torch.relu(x)
    print("relu done")                          # expect-break: io
    return y * 2


@bcfront.capture
def logged(x):
    y = x.sin()
    log.debug("sin done")                       # Python code, followed; disabled: no I/O
    return y


@bcfront.capture
def via_numpy(x):
    y = x + 1
    z = np.asarray(y).clip(-1, 1)               # expect-break: numpy
    return torch.as_tensor(z) * 2               # expect-break: numpy-array


@bcfront.capture
def to_numpy(x):
    arr = x.detach().numpy()                    # expect-break: numpy
    return arr.sum()                            # expect-break: numpy-array


@bcfront.capture
def scaled(x, d: int):
    return x / math.sqrt(d)                     # math on a Python int: no break


def main():
    torch.manual_seed(0)
    for _ in range(3):
        x = torch.randn(3)
        print(noisy(x).shape, logged(x).shape, via_numpy(x).shape)
        print(float(to_numpy(x)) == float(x.sum()), scaled(x, 4).shape)


if __name__ == "__main__":
    main()
