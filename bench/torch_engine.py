"""PyTorch side of `npm run bench:engine`: the same decoder shape in plain torch, timed for full
training steps (forward + backward + AdamW) at a given thread count, in float32 or under
torch.autocast("cpu", dtype=torch.bfloat16) (fp32 master weights, bf16 matmuls: what a torch user
runs on a CPU with bf16). Prints one JSON line.
Attention uses F.scaled_dot_product_attention when this torch has it (2.0+), else the
matmul-softmax-matmul a torch user would write."""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

spec = json.loads(sys.argv[1])
torch.set_num_threads(spec["threads"])
torch.manual_seed(0)
c = spec["config"]
C, Fd, V, L = c["hiddenSize"], c["intermediateSize"], c["vocabSize"], c["numLayers"]
NH, KVH, HS = c["numHeads"], c["numKvHeads"], c["headDim"]
B, T = spec["batch"], spec["seqLen"]


def p(*shape, s=0.02):
    return torch.nn.Parameter(torch.randn(*shape) * s)


params = {"emb": p(V, C)}
for l in range(L):
    params[f"{l}.ln1"] = torch.nn.Parameter(torch.ones(C))
    params[f"{l}.ln2"] = torch.nn.Parameter(torch.ones(C))
    params[f"{l}.q"] = p(NH * HS, C)
    params[f"{l}.k"] = p(KVH * HS, C)
    params[f"{l}.v"] = p(KVH * HS, C)
    if c["qkvBias"]:
        params[f"{l}.qb"] = p(NH * HS)
        params[f"{l}.kb"] = p(KVH * HS)
        params[f"{l}.vb"] = p(KVH * HS)
    if c.get("qkNorm"):
        params[f"{l}.qn"] = torch.nn.Parameter(torch.ones(HS))
        params[f"{l}.kn"] = torch.nn.Parameter(torch.ones(HS))
    params[f"{l}.o"] = p(C, NH * HS)
    params[f"{l}.g"] = p(Fd, C)
    params[f"{l}.u"] = p(Fd, C)
    params[f"{l}.d"] = p(C, Fd)
params["norm"] = torch.nn.Parameter(torch.ones(C))
if not c["tieWordEmbeddings"]:
    params["head"] = p(V, C)

inv = 1.0 / (c["ropeTheta"] ** (torch.arange(0, HS, 2).float() / HS))
ang = torch.arange(T).float()[:, None] * inv[None, :]
cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def rot(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


causal = torch.triu(torch.full((T, T), float("-inf")), 1)
sdpa = getattr(F, "scaled_dot_product_attention", None)


def attention(q, k, v):
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=True)
    return ((q @ k.transpose(-1, -2)) / math.sqrt(HS) + causal).softmax(-1) @ v


def step_loss(tokens):
    P = params
    x = P["emb"][tokens]
    for l in range(L):
        h = rms(x, P[f"{l}.ln1"])
        q = F.linear(h, P[f"{l}.q"], P.get(f"{l}.qb")).view(B, T, NH, HS).transpose(1, 2)
        k = F.linear(h, P[f"{l}.k"], P.get(f"{l}.kb")).view(B, T, KVH, HS).transpose(1, 2)
        v = F.linear(h, P[f"{l}.v"], P.get(f"{l}.vb")).view(B, T, KVH, HS).transpose(1, 2)
        if c.get("qkNorm"):
            q, k = rms(q, P[f"{l}.qn"]), rms(k, P[f"{l}.kn"])
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        k = k.repeat_interleave(NH // KVH, 1)
        v = v.repeat_interleave(NH // KVH, 1)
        a = attention(q, k, v).transpose(1, 2).reshape(B, T, NH * HS)
        x = x + F.linear(a, P[f"{l}.o"])
        h = rms(x, P[f"{l}.ln2"])
        x = x + F.linear(F.silu(F.linear(h, P[f"{l}.g"])) * F.linear(h, P[f"{l}.u"]), P[f"{l}.d"])
    h = rms(x, P["norm"])
    logits = F.linear(h[:, :-1], P["emb"] if c["tieWordEmbeddings"] else P["head"])
    logp = logits.log_softmax(-1).gather(-1, tokens[:, 1:, None]).squeeze(-1)
    return -logp.mean()


opt = torch.optim.AdamW(params.values(), lr=1e-4)
tokens = torch.randint(0, V, (B, T))
times = []
for i in range(spec["warmup"] + spec["steps"]):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=spec.get("precision") == "bf16"):
        loss = step_loss(tokens)
    loss.backward()
    opt.step()
    if i >= spec["warmup"]:
        times.append(time.perf_counter() - t0)
times.sort()
med = times[len(times) // 2]
print(json.dumps({"seconds_per_step": med, "tokens_per_s": B * T / med, "torch": torch.__version__,
                  "threads": torch.get_num_threads(), "precision": spec.get("precision", "fp32")}))
