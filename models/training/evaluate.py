#!/usr/bin/env python3
"""Evaluate the exported model's torch twin on the TEST split.

  /usr/bin/python3 models/training/evaluate.py
Loads the checkpoint named in models/training/export-meta.json (the weights that export.py put in
models/disease-classifier.onnx) and the calibration in models/classes.json, runs the serving
preprocessing (common.preprocess_uint8) on every test image, and writes
  models/training/eval-torch.json  top-1/top-3 per source_kind and per class, confusions, ECE, unsure and
                                   is-plant rates
  models/parity.json               40 test images with PyTorch logits and calibrated probabilities
Decision rule evaluated (the one the service applies):
  P = softmax(logits / temperature)
  P[non_plant] >= non_plant_threshold            -> "not a plant"
  else top = argmax P; top == non_plant or P[top] < unsure_threshold -> "unsure"
  else answer top.
"""
import collections, json, os, random
import numpy as np
import torch
import torch.nn.functional as F
import common as C

torch.set_num_threads(2)
meta = json.load(open(os.path.join(C.HERE, 'export-meta.json')))
cj = json.load(open(os.path.join(C.MODELS, 'classes.json')))
net, ck = C.load_checkpoint(os.path.join(C.MODELS, meta['checkpoint']), use_ema=meta['weights'] == 'ema')
classes = cj['classes']
assert classes == ck['classes']
T, pth, q = cj['temperature'], cj['unsure_threshold'], cj['non_plant_threshold']
NP = classes.index('non_plant')
rows = C.read_split()
test_rows, X = C.eval_cache('test', rows)
y = np.array([classes.index(r['label']) for r in test_rows])
kind = np.array([r['source_kind'] for r in test_rows])
with torch.no_grad():
    served = C.FlipAverage(net)
    logits = torch.cat([served(C.to_input(X[i:i + 256])) for i in range(0, len(X), 256)])
p1 = F.softmax(logits, 1).numpy()
pT = F.softmax(logits / T, 1).numpy()
top = pT.argmax(1)
top3 = np.argsort(-pT, 1)[:, :3]
ok1 = top == y
ok3 = (top3 == y[:, None]).any(1)


def ece(prob, yy, bins=15):
    conf, pred = prob.max(1), prob.argmax(1)
    e = 0.0
    for lo in np.linspace(0, 1, bins + 1)[:-1]:
        m = (conf > lo) & (conf <= lo + 1 / bins)
        if m.any():
            e += m.mean() * abs((pred[m] == yy[m]).mean() - conf[m].mean())
    return float(e)


def block(mask):
    n = int(mask.sum())
    return {'n': n, 'top1': float(ok1[mask].mean()) if n else None, 'top3': float(ok3[mask].mean()) if n else None}


res = {'model_version': cj['model_version'], 'checkpoint': meta['checkpoint'], 'weights': meta['weights'],
       'split': 'test', 'n': int(len(y)), 'preprocessing': 'common.preprocess_uint8 (PIL) = classes.json input.resize',
       'command': '/usr/bin/python3 models/training/evaluate.py'}
leaf = y != NP
res['overall_leaf'] = block(leaf)
res['overall_all'] = block(np.ones_like(leaf))
res['per_source_kind'] = {k: block(kind == k) for k in sorted(set(kind))}
res['per_class'] = {c: block(y == i) for i, c in enumerate(classes)}
res['per_class_source_kind'] = {f'{c}|{k}': block((y == i) & (kind == k)) for i, c in enumerate(classes)
                                for k in sorted(set(kind[y == i]))}
conf = collections.Counter((classes[a], classes[b]) for a, b in zip(y, top) if a != b)
res['top_confusions'] = [{'true': a, 'pred': b, 'count': n} for (a, b), n in conf.most_common(15)]
res['ece'] = {'before_temperature': ece(p1, y), 'after_temperature': ece(pT, y),
              'nll_before': float(F.cross_entropy(logits, torch.from_numpy(y)).item()),
              'nll_after': float(F.cross_entropy(logits / T, torch.from_numpy(y)).item()), 'temperature': T}
# is-plant check
rej = pT[:, NP] >= q
res['is_plant'] = {'non_plant_threshold': q,
                   'false_accept_rate': float((~rej[~leaf]).mean()), 'false_accept_n': int((~rej[~leaf]).sum()),
                   'non_plant_test_n': int((~leaf).sum()),
                   'false_reject_rate': float(rej[leaf].mean()), 'false_reject_n': int(rej[leaf].sum()),
                   'leaf_test_n': int(leaf.sum()),
                   'false_reject_rate_per_source_kind': {k: float(rej[leaf & (kind == k)].mean())
                                                         for k in sorted(set(kind[leaf]))}}
# unsure
mp = pT.max(1)
unsure = (~rej) & ((mp < pth) | (top == NP))
answered = leaf & ~rej & ~unsure
res['unsure'] = {'unsure_threshold': pth,
                 'unsure_rate_leaf': float(unsure[leaf].mean()),
                 'answered_rate_leaf': float(answered[leaf].mean()),
                 'accuracy_of_answered_leaf': float(ok1[answered].mean()),
                 'per_source_kind': {k: {'unsure_rate': float(unsure[leaf & (kind == k)].mean()),
                                         'answered_rate': float(answered[leaf & (kind == k)].mean()),
                                         'accuracy_of_answered': float(ok1[answered & (kind == k)].mean())
                                         if (answered & (kind == k)).any() else None}
                                     for k in sorted(set(kind[leaf]))}}
json.dump(res, open(os.path.join(C.HERE, 'eval-torch.json'), 'w'), indent=2)

# ------------------------------------------------------------------ print
print(f"model {cj['model_version']}  test n={len(y)}  T={T} unsure<{pth} non_plant>={q}")
print(f"{'source_kind':16s} {'n':>5s} {'top1':>7s} {'top3':>7s}")
for k, v in list(res['per_source_kind'].items()) + [('ALL leaf', res['overall_leaf'])]:
    print(f"{k:16s} {v['n']:5d} {v['top1']:7.4f} {v['top3']:7.4f}")
print('per class:')
for c, v in res['per_class'].items():
    print(f"  {c:32s} {v['n']:5d} {v['top1']:7.4f} {v['top3']:7.4f}")
print('top confusions:', ', '.join(f"{d['true']}->{d['pred']} x{d['count']}" for d in res['top_confusions'][:10]))
print('ECE', res['ece'])
print('is_plant', res['is_plant'])
print('unsure', res['unsure'])

# ------------------------------------------------------------------ parity set
rnd = random.Random(7)
by = collections.defaultdict(list)
for i, r in enumerate(test_rows):
    by[(r['label'], r['source_kind'])].append(i)
keys = sorted(by)
pick = []
# one per class first (mixed sources: field maize, beans, rice, non-plant all included), then fill
for c in classes:
    ks = [k for k in keys if k[0] == c]
    k = sorted(ks, key=lambda kk: kk[1] == 'lab')[0]  # prefer the non-lab source where a class has one
    pick.append(rnd.choice(by[k]))
extra = [k for k in keys if k[1] != 'lab'] + [k for k in keys if k[1] == 'lab']
j = 0
while len(pick) < 40:
    k = extra[j % len(extra)]; j += 1
    i = rnd.choice(by[k])
    if i not in pick:
        pick.append(i)
items = []
for i in pick:
    r = test_rows[i]
    items.append({'file': r['file'], 'label': r['label'], 'source_kind': r['source_kind'],
                  'logits': [round(float(v), 5) for v in logits[i]],
                  'probs': [round(float(v), 6) for v in pT[i]],
                  'top': classes[int(top[i])], 'top_prob': round(float(pT[i].max()), 6)})
parity = {'model_version': cj['model_version'], 'onnx_sha256': meta['onnx_sha256'],
          'root': '../shared/datasets', 'temperature': T, 'classes': classes,
          'note': 'file is relative to root. logits = raw model output (PyTorch, same weights as the ONNX file, '
                  'PIL preprocessing = classes.json input.resize); probs = softmax(logits / temperature). '
                  'Every photo goes through the resize+crop rule (PlantVillage photos are scaled up to it), where '
                  'sharp and PIL may differ by a few grey levels.',
          'items': items}
json.dump(parity, open(os.path.join(C.MODELS, 'parity.json'), 'w'), indent=1)
print('wrote', os.path.join(C.HERE, 'eval-torch.json'), os.path.join(C.MODELS, 'parity.json'))
