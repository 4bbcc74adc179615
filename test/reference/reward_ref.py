"""PyTorch reference for maso's reward-model loss (plain torch, float64, written by us).

Builds the random decoder + value head of decoder_ref.py from a case spec (JSON on argv[1]), reads
each sequence's value at its LAST token, pairs the sequences (0 with 1, 2 with 3, ...) as
(chosen, rejected), and differentiates the mean Bradley-Terry loss -log sigmoid(r_c - r_r) with
respect to every parameter. Writes manifest.json + tensors.bin to argv[2] as decoder_ref.py does.
Never imports maso code.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_ref  # noqa: E402  (same folder; sets float64 as the default dtype)


def main():
    spec = json.loads(sys.argv[1])
    out = sys.argv[2]
    c = spec["config"]
    P, adapters, VH, seqs = decoder_ref.build(spec)
    assert not adapters and VH and len(seqs) % 2 == 0
    trainable = list(P.values()) + list(VH.values())
    for t in trainable:
        t.requires_grad_(True)
    # the value at the last token: one extra (probe) position scored alone reads the hidden state
    # of the sequence's last token, which causal attention keeps independent of the probe
    rewards = []
    for s in seqs:
        T = s["tokens"].shape[0]
        probe = {"tokens": torch.cat([s["tokens"], s["tokens"][-1:]]), "mask": torch.zeros(T + 1, dtype=torch.long),
                 "adapter": None}
        probe["mask"][T] = 1
        _, _, val = decoder_ref.forward(c, P, adapters, VH, probe, 1.0)
        rewards.append(val[0])
    r = torch.stack(rewards)
    rc, rr = r[0::2], r[1::2]
    loss = -torch.nn.functional.logsigmoid(rc - rr).mean()
    loss.backward()

    tensors = {}
    for k, v in P.items():
        tensors[f"param/{k}"] = v.detach().clone()
        tensors[f"grad/param/{k}"] = v.grad.detach().clone()
    for k, v in VH.items():
        tensors[f"value/{k}"] = v.detach().clone()
        tensors[f"grad/value/{k}"] = v.grad.detach().clone()
    tensors["out/rewards"] = r.detach()
    manifest = {"tensors": {}, "sequences": [], "losses": [loss.item()], "gradNorms": []}
    blob = bytearray()
    for k, v in tensors.items():
        manifest["tensors"][k] = {"shape": list(v.shape), "offset": len(blob) // 4}
        blob += v.detach().to(torch.float32).contiguous().numpy().tobytes()
    for s in seqs:
        manifest["sequences"].append({"tokens": s["tokens"].tolist(), "mask": [], "adapter": None})
    with open(f"{out}/tensors.bin", "wb") as f:
        f.write(blob)
    with open(f"{out}/manifest.json", "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main()
