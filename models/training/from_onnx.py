#!/usr/bin/env python3
"""Rebuild a training checkpoint from a shipped ONNX model, so a fine-tune (train.py) or a weight-space ensemble
(interpolate.py) can start from exactly the weights the service runs, without the (unversioned, gitignored)
checkpoint of the run that made them.

  git show b8e4b11:models/disease-classifier.onnx > /tmp/prev.onnx
  git show b8e4b11:models/classes.json > /tmp/prev-classes.json
  /usr/bin/python3 models/training/from_onnx.py --onnx /tmp/prev.onnx --classes /tmp/prev-classes.json \
      --out models/training/runs/shipped/best.pt
  /usr/bin/python3 models/training/train.py --init models/training/runs/shipped/best.pt ...
The field model was fine-tuned from the model shipped before it (mnv3s-cam144flip-ft-ep15, commit b8e4b11):
its class activation head and features are rebuilt here; the leaf finder is new and starts untrained. A field
model's file (outputs `logits`, `leaf`, `distance`; d17553b) gives its leaf finder too, and its distance (`proj`,
class means) goes to distance.npz beside the checkpoint, as export.py writes it. The two-expert files shipped since
(common.Mixture) hold two networks: rebuild each expert from its own file instead.

Checked against the file itself: --check val photos go through ONNX Runtime (models/eval/onnx-outputs.ts, so
the repository's npm packages must be installed) and through the rebuilt checkpoint as common.Served runs it;
logits, leaf maps and distances must agree.

The export folded every BatchNorm into the convolution before it (W' = W*g/s, b' = beta - g*mu/s), and the
separate factors cannot be recovered. Any BatchNorm with gamma = sqrt(var+eps) and beta = mean + b' reproduces
the folded layer in eval mode, whatever (mean, var) are; so (mean, var) are set to the statistics of each
BatchNorm's input over the val photos. In train mode the layer then normalises by batch statistics close to
those, and fine-tuning starts from the shipped model's behaviour instead of a rescaled network.
"""
import argparse, json, os
import numpy as np
import onnx
import torch
from onnx import numpy_helper
import common as C

p = argparse.ArgumentParser()
p.add_argument('--onnx', required=True)
p.add_argument('--classes', required=True, help='the classes.json of that model')
p.add_argument('--out', required=True)
p.add_argument('--stat-images', type=int, default=2048, help='val photos used for the BatchNorm statistics')
p.add_argument('--check', type=int, default=16, help='val photos read by ONNX Runtime and the checkpoint')
args = p.parse_args()
torch.set_num_threads(2)

meta = json.load(open(args.classes))
classes = meta['classes']
g = onnx.load(args.onnx).graph
inits = {i.name: numpy_helper.to_array(i).copy() for i in g.initializer}  # writable, as torch wants
onnx_convs = [(inits[n.input[1]], inits[n.input[2]]) for n in g.node if n.op_type == 'Conv']
outputs = [o.name for o in g.output]
has_leaf = 'leaf' in outputs

net = C.LeafNet(len(classes), dropout=0.0)
# The graph runs the modules in their registration order (features, the CAM head, then the leaf finder when the
# model has one); each conv is followed by its BatchNorm when it has one, which is what the folding consumed.
heads = [net.cam] + ([net.leaf] if has_leaf else [])
pairs = C.conv_bn_pairs(list(net.features.modules()) + [m for h in heads for m in h.modules()])
assert len(pairs) == len(onnx_convs), (len(pairs), len(onnx_convs))

unfolded = []
with torch.no_grad():
    for (conv, bn), (w, b) in zip(pairs, onnx_convs):
        assert tuple(conv.weight.shape) == w.shape, (conv.weight.shape, w.shape)
        conv.weight.copy_(torch.from_numpy(w))
        if bn is None:
            conv.bias.copy_(torch.from_numpy(b))
        else:
            # identity BatchNorm carrying the folded bias, while the input statistics are measured
            bn.running_mean.zero_(); bn.running_var.fill_(1.0 - bn.eps)
            bn.weight.fill_(1.0); bn.bias.copy_(torch.from_numpy(b))
            unfolded.append(bn)

rows = C.read_split()
val_rows, Xva = C.eval_cache('val', rows)
idx = np.random.default_rng(0).permutation(len(Xva))[:args.stat_images]
sums = {bn: [0.0, 0.0, 0] for bn in unfolded}


def hook(bn):
    def f(_m, inp, _out):
        x = inp[0].double()
        s = sums[bn]
        s[0] = s[0] + x.sum(dim=(0, 2, 3)); s[1] = s[1] + (x * x).sum(dim=(0, 2, 3))
        s[2] += x.shape[0] * x.shape[2] * x.shape[3]
    return f


@torch.no_grad()
def stat_logits():
    return torch.cat([net(C.to_input(Xva[np.sort(idx[i:i + 128])]))[0] for i in range(0, len(idx), 128)])


handles = [bn.register_forward_hook(hook(bn)) for bn in unfolded]
net.eval()
ref = stat_logits()
for h in handles:
    h.remove()

with torch.no_grad():
    for bn in unfolded:
        b = bn.bias.clone()  # still the folded bias: the BatchNorm is the identity until now
        s0, s1, n = sums[bn]
        mean = (s0 / n).float()
        var = (s1 / n - (s0 / n) ** 2).clamp_min(1e-6).float()
        bn.running_mean.copy_(mean); bn.running_var.copy_(var)
        bn.weight.copy_(torch.sqrt(var + bn.eps)); bn.bias.copy_(mean + b)
err = (stat_logits() - ref).abs().max().item()
print(f'{len(pairs)} convs, {len(unfolded)} BatchNorms unfolded; max |logit change| {err:.2e}')
assert err < 1e-3, err

proj = means = None
if 'distance' in outputs:
    # the graph holds the whitening matrix and the class means (broadcast to [1, classes, dims]) as constants
    proj = inits['proj']
    sub = next(n for n in g.node if n.op_type == 'Sub' and n.input[1] in inits)
    means = inits[sub.input[1]][0]


def check():
    """Max |difference| per output between ONNX Runtime and the rebuilt checkpoint on --check val photos."""
    size = meta['input']['size']
    pick = [val_rows[i] for i in np.sort(idx[:args.check])]
    x = C.to_input(np.stack([C.preprocess_uint8(os.path.join(C.ROOT, r['file']), size) for r in pick]))
    ort = C.onnx_runtime(args.onnx, x)
    with torch.no_grad():
        logits, leaf, dist = (t.numpy() for t in C.Served(net, proj, means).eval()(x))
    diff = {'logits': float(np.abs(ort['logits'] - logits).max())}
    if has_leaf:
        diff['leaf'] = float(np.abs(ort['leaf'] - leaf).max())
    if proj is not None:
        diff['distance_rel'] = float((np.abs(ort['distance'] - dist) / ort['distance']).max())
    return diff


diff = check()
print(f'against ONNX Runtime on {args.check} val photos: ' + ', '.join(f'max |{k}| {v:.2e}' for k, v in diff.items()))
assert max(diff.values()) < 1e-3, diff

os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
if proj is not None:
    np.savez(os.path.join(os.path.dirname(os.path.abspath(args.out)), 'distance.npz'), proj=proj, means=means)
# a leaf finder the file lacks stays out, so train.py starts it afresh
torch.save({'model': {k: v for k, v in net.state_dict().items() if has_leaf or not k.startswith('leaf.')}, 'ema': None,
            'classes': classes, 'args': {'width_mult': 1.0},
            'val': {'source': f'{os.path.basename(args.onnx)} {meta["model_version"]}'}}, args.out)
print('wrote', args.out, 'from', meta['model_version'])
