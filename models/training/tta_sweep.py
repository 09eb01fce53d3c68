#!/usr/bin/env python3
"""How the serving input was chosen: the shipped weights on the VAL split at several input sizes, each with and
without averaging over the mirror image. Never looks at the test split.

  /usr/bin/python3 models/training/tta_sweep.py [--ckpt models/training/runs/shipped/best.pt]
Writes models/training/tta-sweep.json and prints top-1 per source and the NLL (temperature of classes.json).
"""
import argparse, json, os
import numpy as np
import torch
import torch.nn.functional as F
import common as C

p = argparse.ArgumentParser()
p.add_argument('--ckpt', default=os.path.join(C.RUNS, 'shipped', 'best.pt'))
p.add_argument('--sizes', default='112,128,144,160')
args = p.parse_args()
torch.set_num_threads(2)

net, ck = C.load_checkpoint(args.ckpt)
classes = ck['classes']
T = json.load(open(os.path.join(C.MODELS, 'classes.json')))['temperature']
rows = C.read_split()
out = {'checkpoint': os.path.relpath(os.path.abspath(args.ckpt), C.MODELS), 'split': 'val', 'temperature': T,
       'command': '/usr/bin/python3 models/training/tta_sweep.py', 'results': []}
for size in [int(s) for s in args.sizes.split(',')]:
    val_rows, X = C.eval_cache('val', rows, size)
    y = np.array([classes.index(r['label']) for r in val_rows])
    kind = np.array([r['source_kind'] for r in val_rows])
    for flip in (False, True):
        model = C.FlipAverage(net) if flip else net
        with torch.no_grad():
            logits = torch.cat([model(C.to_input(X[i:i + 256])) for i in range(0, len(X), 256)])
        ok = logits.argmax(1).numpy() == y
        r = {'size': size, 'mirror_average': flip,
             'top1': {k: round(float(ok[kind == k].mean()), 4) for k in sorted(set(kind))},
             'top1_leaf': round(float(ok[kind != 'non_plant'].mean()), 4),
             'nll': round(F.cross_entropy(logits / T, torch.from_numpy(y)).item(), 4)}
        out['results'].append(r)
        print(f"{size:4d} {'mirror' if flip else 'plain ':6s} leaf {r['top1_leaf']:.4f} nll {r['nll']:.4f} "
              + ' '.join(f'{k} {v:.4f}' for k, v in r['top1'].items()), flush=True)
json.dump(out, open(os.path.join(C.HERE, 'tta-sweep.json'), 'w'), indent=2)
