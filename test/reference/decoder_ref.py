"""Independent PyTorch reference for maso's decoder engine (plain torch, float64, written by us).

Given a case spec (JSON on argv[1]) it builds a random Llama/Qwen2/Qwen3-style decoder, optional
LoRA adapters and a value head, runs every sequence *separately* (so maso's packing is checked,
not assumed), and writes to argv[2]: manifest.json + tensors.bin (raw little-endian f32) holding
the parameters, the batch, per-token log-probs/entropies/values, every gradient, and the loss
after each of a few AdamW steps. With "autocast": true in the spec it also runs the same forward
and backward on float32 copies under torch.autocast("cpu", dtype=torch.bfloat16) and writes those
outputs and gradients under bf16/. Never imports maso code.
"""
import json
import math
import sys

import torch

torch.set_default_dtype(torch.float64)


def rmsnorm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, pos, theta):
    # HF rotate_half convention: dims [0, HS/2) pair with [HS/2, HS)
    hs = x.shape[-1]
    half = hs // 2
    inv = 1.0 / (theta ** (torch.arange(0, hs, 2, dtype=torch.float64) / hs))
    ang = pos[:, None].double() * inv[None, :]
    cos, sin = ang.cos()[:, None, :].to(x.dtype), ang.sin()[:, None, :].to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


LORA_MODULE = {"q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
               "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp"}


def build(spec):
    c = spec["config"]
    g = torch.Generator().manual_seed(spec["seed"])
    C, HS, F, V = c["hiddenSize"], c["headDim"], c["intermediateSize"], c["vocabSize"]
    NH, KVH = c["numHeads"], c["numKvHeads"]

    def rn(*shape, s=0.02):
        return torch.randn(*shape, generator=g) * s

    P = {"model.embed_tokens.weight": rn(V, C, s=0.5)}
    for l in range(c["numLayers"]):
        p = f"model.layers.{l}"
        P[f"{p}.input_layernorm.weight"] = 1 + rn(C, s=0.1)
        dims = {"q_proj": (NH * HS, C), "k_proj": (KVH * HS, C), "v_proj": (KVH * HS, C), "o_proj": (C, NH * HS)}
        for t, (o, i) in dims.items():
            P[f"{p}.self_attn.{t}.weight"] = rn(o, i, s=1 / math.sqrt(i))
            if (t != "o_proj" and c["qkvBias"]) or (t == "o_proj" and c["oBias"]):
                P[f"{p}.self_attn.{t}.bias"] = rn(o, s=0.1)
        if c["qkNorm"]:
            P[f"{p}.self_attn.q_norm.weight"] = 1 + rn(HS, s=0.1)
            P[f"{p}.self_attn.k_norm.weight"] = 1 + rn(HS, s=0.1)
        P[f"{p}.post_attention_layernorm.weight"] = 1 + rn(C, s=0.1)
        P[f"{p}.mlp.gate_proj.weight"] = rn(F, C, s=1 / math.sqrt(C))
        P[f"{p}.mlp.up_proj.weight"] = rn(F, C, s=1 / math.sqrt(C))
        P[f"{p}.mlp.down_proj.weight"] = rn(C, F, s=1 / math.sqrt(F))
    P["model.norm.weight"] = 1 + rn(C, s=0.1)
    if not c["tieWordEmbeddings"]:
        P["lm_head.weight"] = rn(V, C, s=1 / math.sqrt(C))

    adapters = {}
    for name, lora in spec.get("adapters", {}).items():
        A = {}
        for l in range(c["numLayers"]):
            for t in lora["targets"]:
                w = P[f"model.layers.{l}.{LORA_MODULE[t]}.{t}.weight"]
                base = f"base_model.model.model.layers.{l}.{LORA_MODULE[t]}.{t}"
                A[f"{base}.lora_A.weight"] = rn(lora["rank"], w.shape[1], s=0.3)
                A[f"{base}.lora_B.weight"] = rn(w.shape[0], lora["rank"], s=0.3)
        adapters[name] = A

    VH = {}
    if spec.get("valueHead"):
        H = spec["valueHead"]["hidden"]
        VH = {"value_head.0.weight": rn(H, C, s=0.2), "value_head.0.bias": rn(H, s=0.1),
              "value_head.2.weight": rn(1, H, s=0.2), "value_head.2.bias": rn(1, s=0.1)}

    seqs = []
    for s in spec["sequences"]:
        T = s["length"]
        tokens = torch.randint(0, V, (T,), generator=g)
        mask = (torch.rand(T, generator=g) < s.get("scoreFraction", 0.7)).long()
        mask[0] = 0
        seqs.append({"tokens": tokens, "mask": mask, "adapter": s.get("adapter")})
    return P, adapters, VH, seqs


def forward(c, P, adapters, VH, seq, temperature):
    NH, KVH, HS, eps = c["numHeads"], c["numKvHeads"], c["headDim"], c["rmsNormEps"]
    ad = adapters.get(seq["adapter"]) if seq["adapter"] else None
    lora = None
    tokens = seq["tokens"]
    T = tokens.shape[0]
    pos = torch.arange(T)

    def lin(x, l, mod, t):
        base = f"model.layers.{l}.{mod}.{t}"
        y = x @ P[f"{base}.weight"].T
        if f"{base}.bias" in P:
            y = y + P[f"{base}.bias"]
        key = f"base_model.model.{base}"
        if ad is not None and f"{key}.lora_A.weight" in ad:
            y = y + lora_scale[seq["adapter"]] * (x @ ad[f"{key}.lora_A.weight"].T) @ ad[f"{key}.lora_B.weight"].T
        return y

    x = P["model.embed_tokens.weight"][tokens]
    for l in range(c["numLayers"]):
        h = rmsnorm(x, P[f"model.layers.{l}.input_layernorm.weight"], eps)
        q = lin(h, l, "self_attn", "q_proj").view(T, NH, HS)
        k = lin(h, l, "self_attn", "k_proj").view(T, KVH, HS)
        v = lin(h, l, "self_attn", "v_proj").view(T, KVH, HS)
        if c["qkNorm"]:
            q = rmsnorm(q, P[f"model.layers.{l}.self_attn.q_norm.weight"], eps)
            k = rmsnorm(k, P[f"model.layers.{l}.self_attn.k_norm.weight"], eps)
        q, k = rope(q, pos, c["ropeTheta"]), rope(k, pos, c["ropeTheta"])
        k = k.repeat_interleave(NH // KVH, dim=1)
        v = v.repeat_interleave(NH // KVH, dim=1)
        s = torch.einsum("ihd,jhd->hij", q, k) / math.sqrt(HS)
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        att = torch.einsum("hij,jhd->ihd", s.softmax(-1), v).reshape(T, NH * HS)
        x = x + lin(att, l, "self_attn", "o_proj")
        h = rmsnorm(x, P[f"model.layers.{l}.post_attention_layernorm.weight"], eps)
        gate = lin(h, l, "mlp", "gate_proj")
        up = lin(h, l, "mlp", "up_proj")
        x = x + lin(torch.nn.functional.silu(gate) * up, l, "mlp", "down_proj")
    h = rmsnorm(x, P["model.norm.weight"], eps)
    rows = torch.nonzero(seq["mask"]).flatten()
    hs = h[rows - 1]
    head = P["model.embed_tokens.weight"] if c["tieWordEmbeddings"] else P["lm_head.weight"]
    logits = hs @ head.T / temperature
    lp = logits.log_softmax(-1)
    logp = lp.gather(1, tokens[rows][:, None]).squeeze(1)
    ent = -(lp.exp() * lp).sum(-1)
    val = None
    if VH:
        val = (torch.tanh(hs @ VH["value_head.0.weight"].T + VH["value_head.0.bias"]) @ VH["value_head.2.weight"].T
               + VH["value_head.2.bias"]).squeeze(1)
    return logp, ent, val


lora_scale = {}


def autocast_bf16(c, P, adapters, VH, seqs, temperature, weights, tensors):
    """The forward and backward under CPU bf16 autocast, on float32 copies of the parameters."""
    f32 = lambda d: {k: v.detach().float().requires_grad_(True) for k, v in d.items()}
    P32, A32, V32 = f32(P), {n: f32(a) for n, a in adapters.items()}, f32(VH)
    w_logp, w_ent, w_val = (w.float() for w in weights)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        outs = [forward(c, P32, A32, V32, s, temperature) for s in seqs]
    logp = torch.cat([o[0].float() for o in outs])
    ent = torch.cat([o[1].float() for o in outs])
    loss = (w_logp * logp).sum() + (w_ent * ent).sum()
    if V32:
        val = torch.cat([o[2].float() for o in outs])
        loss = loss + (w_val * val).sum()
        tensors["bf16/out/values"] = val.detach()
    loss.backward()
    tensors["bf16/out/logp"], tensors["bf16/out/entropy"] = logp.detach(), ent.detach()
    for k, v in P32.items():
        tensors[f"bf16/grad/param/{k}"] = v.grad.detach().clone()
    for an, a in A32.items():
        for k, v in a.items():
            tensors[f"bf16/grad/adapter/{an}/{k}"] = v.grad.detach().clone()
    for k, v in V32.items():
        tensors[f"bf16/grad/value/{k}"] = v.grad.detach().clone()


def main():
    spec = json.loads(sys.argv[1])
    out = sys.argv[2]
    c = spec["config"]
    for name, lora in spec.get("adapters", {}).items():
        lora_scale[name] = lora["alpha"] / lora["rank"]
    P, adapters, VH, seqs = build(spec)
    temperature = spec.get("temperature", 1.0)
    g = torch.Generator().manual_seed(spec["seed"] + 1)
    n_scored = sum(int(s["mask"].sum()) for s in seqs)
    w_logp = torch.randn(n_scored, generator=g)
    w_ent = torch.randn(n_scored, generator=g)
    w_val = torch.randn(n_scored, generator=g)

    trainable = []
    if spec["trainBase"]:
        trainable += list(P.values())
    for a in adapters.values():
        trainable += list(a.values())
    trainable += list(VH.values())
    for t in trainable:
        t.requires_grad_(True)

    def loss_fn():
        logps, ents, vals = [], [], []
        for s in seqs:
            lp, e, v = forward(c, P, adapters, VH, s, temperature)
            logps.append(lp)
            ents.append(e)
            if v is not None:
                vals.append(v)
        logp, ent = torch.cat(logps), torch.cat(ents)
        val = torch.cat(vals) if vals else None
        loss = (w_logp * logp).sum() + (w_ent * ent).sum()
        if val is not None:
            loss = loss + (w_val * val).sum()
        return loss, logp, ent, val

    tensors = {}
    for k, v in P.items():
        tensors[f"param/{k}"] = v.detach().clone()
    for an, a in adapters.items():
        for k, v in a.items():
            tensors[f"adapter/{an}/{k}"] = v.detach().clone()
    for k, v in VH.items():
        tensors[f"value/{k}"] = v.detach().clone()

    loss, logp, ent, val = loss_fn()
    loss.backward()
    tensors["out/logp"], tensors["out/entropy"] = logp.detach(), ent.detach()
    if val is not None:
        tensors["out/values"] = val.detach()
    tensors["in/w_logp"], tensors["in/w_ent"], tensors["in/w_val"] = w_logp, w_ent, w_val
    for k, v in P.items():
        if v.grad is not None:
            tensors[f"grad/param/{k}"] = v.grad.detach().clone()
    for an, a in adapters.items():
        for k, v in a.items():
            tensors[f"grad/adapter/{an}/{k}"] = v.grad.detach().clone()
    for k, v in VH.items():
        tensors[f"grad/value/{k}"] = v.grad.detach().clone()

    if spec.get("autocast"):
        autocast_bf16(c, P, adapters, VH, seqs, temperature, (w_logp, w_ent, w_val), tensors)

    # a few AdamW steps with global-norm clipping: the loss before each step
    opt_spec = spec["optimizer"]
    opt = torch.optim.AdamW(trainable, lr=opt_spec["lr"], betas=(opt_spec["beta1"], opt_spec["beta2"]),
                            eps=opt_spec["eps"], weight_decay=opt_spec["weightDecay"])
    losses = []
    norms = []
    for _ in range(opt_spec["steps"]):
        opt.zero_grad()
        loss, _, _, _ = loss_fn()
        losses.append(loss.item())
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(trainable, opt_spec["maxGradNorm"]).item())
        opt.step()
    loss, _, _, _ = loss_fn()
    losses.append(loss.item())

    manifest = {"tensors": {}, "sequences": [], "losses": losses, "gradNorms": norms}
    blob = bytearray()
    for k, v in tensors.items():
        arr = v.detach().to(torch.float32).contiguous().numpy().tobytes()
        manifest["tensors"][k] = {"shape": list(v.shape), "offset": len(blob) // 4}
        blob += arr
    for s in seqs:
        manifest["sequences"].append({"tokens": s["tokens"].tolist(), "mask": s["mask"].tolist(), "adapter": s["adapter"]})
    with open(f"{out}/tensors.bin", "wb") as f:
        f.write(blob)
    with open(f"{out}/manifest.json", "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main()
