"""No graph breaks: control flow on shapes, Python values, containers and None only."""
import torch
import torch.nn.functional as F

import bcfront


@bcfront.capture
def mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, act: str = "gelu"):
    h = x @ w1
    h = F.gelu(h) if act == "gelu" else F.relu(h)
    return h @ w2


@bcfront.capture
def masked_mean(x, mask=None):
    if mask is None:
        return x.mean(-1)
    return (x * mask).sum(-1) / mask.sum(-1).clamp(min=1)


@bcfront.capture
def stack_all(xs):
    out = []
    for t in xs:
        if t.ndim == 1:
            t = t.unsqueeze(0)
        out.append(t * 2)
    return torch.cat(out)


@bcfront.capture
def layer_norm(x, eps: float = 1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps)


@bcfront.capture
def loop_layers(x, weights):
    for i, w in enumerate(weights):
        x = x @ w
        if i < len(weights) - 1:
            x = torch.relu(x)
    return x


def main():
    torch.manual_seed(0)
    w1, w2 = torch.randn(8, 16), torch.randn(16, 8)
    for _ in range(3):
        x = torch.randn(4, 8)
        print(mlp(x, w1, w2).shape, masked_mean(x).shape, masked_mean(x, x > 0).shape)
        print(stack_all([x[0], x]).shape, layer_norm(x).shape, loop_layers(x, [w1, w2]).shape)


if __name__ == "__main__":
    main()
