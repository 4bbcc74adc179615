"""Independent torch (autograd, float64) reference for maso's RL losses (src/rl/losses).

Reads one JSON object on stdin -- the packed batch (offsets, mask, logp, oldLogp, advantages, refLogp,
entropy, values, oldValues, returns) plus a list of cases -- and writes, per case, the loss and the
gradient w.r.t. its per-token input. Formulas follow verl's core_algos; nothing here imports maso.
"""
import json
import sys

import torch


def t64(x):
    return torch.tensor(x, dtype=torch.float64)


def aggregate(loss_mat, mask, seq_ids, n_seq, mode, norm_const):
    masked = loss_mat * mask
    if mode == "token-mean":
        return masked.sum() / mask.sum()
    if mode == "token-sum-norm":
        return masked.sum() / norm_const
    seq_sum = torch.zeros(n_seq, dtype=torch.float64).index_add(0, seq_ids, masked)
    seq_cnt = torch.zeros(n_seq, dtype=torch.float64).index_add(0, seq_ids, mask)
    keep = seq_cnt > 0
    if mode == "seq-mean-token-sum":
        return seq_sum[keep].mean()
    if mode == "seq-mean-token-mean":
        return (seq_sum[keep] / seq_cnt[keep]).mean()
    raise ValueError(mode)


def ppo(b, c, logp):
    adv, old = t64(b["advantages"]), t64(b["oldLogp"])
    neg_kl = torch.clamp(logp - old, -20.0, 20.0)
    ratio = torch.exp(neg_kl)
    pg1 = -adv * ratio
    pg2 = -adv * torch.clamp(ratio, 1 - c["clipLow"], 1 + c["clipHigh"])
    clip1 = torch.maximum(pg1, pg2)
    if c.get("dualClip") is not None:
        pg3 = -adv * c["dualClip"]
        clip2 = torch.min(pg3, clip1)
        return torch.where(adv < 0, clip2, clip1)
    return clip1


def kl(b, c, logp):
    ref = t64(b["refLogp"])
    if c["estimator"] == "k1":
        return logp - ref
    if c["estimator"] == "k2":
        return 0.5 * (logp - ref) ** 2
    d = ref - logp
    return torch.exp(d) - d - 1


def value(b, c, v):
    old, ret = t64(b["oldValues"]), t64(b["returns"])

    def f(e):
        if c.get("huber") is None:
            return 0.5 * e**2
        return torch.nn.functional.huber_loss(e, torch.zeros_like(e), reduction="none", delta=c["huber"])

    l1 = f(v - ret)
    if c.get("clip") is None:
        return l1
    vc = old + torch.clamp(v - old, -c["clip"], c["clip"])
    return torch.maximum(l1, f(vc - ret))


def main():
    b = json.load(sys.stdin)
    offsets = b["offsets"]
    n_seq = len(offsets) - 1
    seq_ids = torch.tensor([s for s in range(n_seq) for _ in range(offsets[s], offsets[s + 1])], dtype=torch.long)
    mask = t64(b["mask"])
    out = []
    for c in b["cases"]:
        kind = c["kind"]
        x = t64(b[{"ppo": "logp", "kl": "logp", "entropy": "entropy", "value": "values"}[kind]]).requires_grad_(True)
        if kind == "ppo":
            mat = ppo(b, c, x)
        elif kind == "kl":
            mat = c["coef"] * kl(b, c, x)
        elif kind == "entropy":
            mat = -c["coef"] * x
        else:
            mat = c.get("coef", 1.0) * value(b, c, x)
        loss = aggregate(mat, mask, seq_ids, n_seq, c.get("mode", "token-mean"), c.get("normConst", 1.0))
        loss.backward()
        out.append({"loss": loss.item(), "grad": x.grad.tolist()})
    json.dump({"torch": torch.__version__, "results": out}, sys.stdout)


if __name__ == "__main__":
    main()
