#!/usr/bin/env python3
"""Export a checkpoint to models/disease-classifier.onnx + models/classes.json (with calibration).

  /usr/bin/python3 models/training/export.py --ckpt models/training/runs/main/best.pt

* ONNX: opset 17, input `input` float32 [N,3,144,144] (dynamic N), outputs `logits` [N,C] (raw, before
  temperature) and `cam` [N,C,9,9] (per-class activation maps before the global average pool;
  logits == cam.mean over h,w). The graph is common.FlipAverage: the network runs on the image and its mirror
  image and averages the two, so every caller gets the served model from the one file.
* Calibration on the VAL split (serving preprocessing, see common.RESIZE_RULE):
  - temperature T: minimises val NLL of softmax(logits/T)  (grid search + golden refinement)
  - non_plant_threshold q: the service answers "not a plant" when calibrated P(non_plant) >= q.
    q = the value that minimises (false-accept rate of non-plant val photos + false-reject rate of leaf
    val photos), searched over [0.05, 0.95], ties -> the smaller false-reject rate.
  - unsure_threshold p: among val leaf photos that pass the plant check, the answer is the top class
    over all 26 probabilities; p = the smallest threshold on that max probability for which the accepted
    answers (max prob >= p, top class != non_plant) are >= 98% correct. (It was 97% until the model itself
    reached 97% on val, where that rule stopped turning any answer into "unsure".)
Also writes models/training/export-meta.json (which checkpoint, sha256, val calibration numbers), used by
evaluate.py to load the identical weights as the torch twin.
"""
import argparse, hashlib, json, os, time
import numpy as np
import torch
import torch.nn.functional as F
import onnx
import common as C

p = argparse.ArgumentParser()
p.add_argument('--ckpt', required=True)
p.add_argument('--no-ema', action='store_true')
p.add_argument('--target-acc', type=float, default=0.98)
p.add_argument('--version', default='')
args = p.parse_args()
torch.set_num_threads(2)

net, ck = C.load_checkpoint(args.ckpt, use_ema=not args.no_ema)
served = C.FlipAverage(net).eval()
classes = ck['classes']
assert classes[-1] == 'non_plant' and classes[:-1] == sorted(classes[:-1]) and len(classes) == 26
NP = len(classes) - 1
onnx_path = os.path.join(C.MODELS, 'disease-classifier.onnx')
wrap = C.ExportWrapper(served).eval()
dummy = torch.zeros(2, 3, C.SIZE, C.SIZE)
torch.onnx.export(wrap, dummy, onnx_path, opset_version=17, input_names=['input'], output_names=['logits', 'cam'],
                  dynamic_axes={'input': {0: 'N'}, 'logits': {0: 'N'}, 'cam': {0: 'N'}}, do_constant_folding=True)
m = onnx.load(onnx_path)
onnx.checker.check_model(m)
with torch.no_grad():
    lg, cam = served(dummy, with_cam=True)
cam_size = list(cam.shape[2:])
size_mb = os.path.getsize(onnx_path) / 1e6
sha = hashlib.sha256(open(onnx_path, 'rb').read()).hexdigest()
print(f'onnx {onnx_path} {size_mb:.2f} MB cam {cam_size} sha256 {sha[:16]}')
assert size_mb < 20

# ---------------------------------------------------------------- calibration on val
rows = C.read_split()
val_rows, Xva = C.eval_cache('val', rows)
y = torch.tensor([classes.index(r['label']) for r in val_rows])
with torch.no_grad():
    logits = torch.cat([served(C.to_input(Xva[i:i + 256])) for i in range(0, len(Xva), 256)])


def nll(T):
    return F.cross_entropy(logits / T, y).item()


grid = np.exp(np.linspace(np.log(0.3), np.log(5), 200))
T = float(grid[int(np.argmin([nll(t) for t in grid]))])
lo, hi = T / 1.05, T * 1.05
for _ in range(40):  # golden-section refinement
    a, b = lo + 0.382 * (hi - lo), lo + 0.618 * (hi - lo)
    if nll(a) < nll(b): hi = b
    else: lo = a
T = round(float((lo + hi) / 2), 4)
prob = F.softmax(logits / T, 1).numpy()
yv = y.numpy()
is_np = yv == NP
pnp = prob[:, NP]
best = None
for q in np.round(np.arange(0.05, 0.951, 0.01), 2):
    fa = float(np.mean(pnp[is_np] < q))    # non-plant photo accepted as plant
    fr = float(np.mean(pnp[~is_np] >= q))  # leaf photo rejected as non-plant
    key = (fa + fr, fr, q)
    if best is None or key < best[0]:
        best = (key, q, fa, fr)
_, q, fa, fr = best
q = float(q)
# unsure threshold on leaf photos that pass the plant check
acc_m = (~is_np) & (pnp < q)
mp = prob.max(1)
top = prob.argmax(1)
ok = (top == yv)
cands = np.unique(np.round(mp[acc_m], 4))
pth = 1.0
for t in np.concatenate([[0.0], cands]):
    a = acc_m & (mp >= t) & (top != NP)
    if a.sum() and ok[a].mean() >= args.target_acc:
        pth = float(t)
        break
pth = round(min(max(pth, 0.0), 0.99), 4)
a = acc_m & (mp >= pth) & (top != NP)
cal = {'temperature': T, 'target_accuracy': args.target_acc, 'val_nll_before': nll(1.0), 'val_nll_after': nll(T),
       'non_plant_threshold': q, 'val_nonplant_false_accept': fa, 'val_leaf_false_reject': fr,
       'unsure_threshold': pth, 'val_accepted_accuracy': float(ok[a].mean()),
       'val_coverage_of_plant_passing_leaf_photos': float(a.sum() / max(1, acc_m.sum())),
       'val_coverage_of_all_leaf_photos': float(a.sum() / (~is_np).sum()),
       'val_top1_all': float(ok.mean()), 'val_top1_leaf': float(ok[~is_np].mean())}
print(json.dumps(cal, indent=1))
version = args.version or f'mnv3s-cam{C.SIZE}flip-{os.path.basename(os.path.dirname(os.path.abspath(args.ckpt)))}-' \
                          f'ep{ck["epoch"]}-{time.strftime("%Y%m%d", time.gmtime())}'
cls_json = {'model_version': version,
            'input': {'size': C.SIZE, 'resize': C.RESIZE_RULE, 'color': 'RGB', 'scale': 255,
                      'mean': C.MEAN, 'std': C.STD, 'layout': 'NCHW'},
            'classes': classes, 'temperature': T, 'unsure_threshold': pth, 'non_plant_threshold': q,
            'cam_size': cam_size}
json.dump(cls_json, open(os.path.join(C.MODELS, 'classes.json'), 'w'), indent=2)
meta = {'model_version': version, 'checkpoint': os.path.relpath(os.path.abspath(args.ckpt), C.MODELS),
        'weights': 'model' if args.no_ema else 'ema', 'checkpoint_epoch': ck['epoch'],
        'train_minutes': ck.get('minutes'), 'rebuilt_from': ck.get('val', {}).get('source'),
        'input_size': C.SIZE, 'onnx_sha256': sha, 'onnx_mb': round(size_mb, 3),
        'opset': 17, 'calibration_val': cal, 'exported_utc': time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}
json.dump(meta, open(os.path.join(C.HERE, 'export-meta.json'), 'w'), indent=2)
print('wrote', onnx_path, os.path.join(C.MODELS, 'classes.json'), 'version', version)
