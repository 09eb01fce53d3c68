#!/usr/bin/env python3
"""The exported model's Python twin on the TEST split, read as the service reads it (views.py, decide.py).

  /usr/bin/python3 models/training/evaluate.py
Loads the checkpoint named in export-meta.json with its distance.npz and the settings of models/classes.json,
writes models/training/eval-torch.json (per source: top-1 with and without the crop given, answered share and
accuracy, unsure, not a plant, not supported; leaf boxes against the PlantDoc boxes) and models/parity.json
(a dozen photos' probabilities, distances and leaves, which test/diagnosis/parity.test.ts asks the service to
reproduce). The test split chooses nothing: every setting was fixed on val by export.py.
"""
import argparse, json, os, time
import numpy as np
import torch
import common as C
import views as V
from decide import Rules

ap = argparse.ArgumentParser()
ap.add_argument('--ckpt', default='', help='default: the checkpoint export-meta.json names')
ap.add_argument('--model-dir', default=C.MODELS, help='folder of the classes.json to follow; parity.json goes there')
ap.add_argument('--limit', type=int, default=0, help='at most this many test photos per source (quick trials only)')
args = ap.parse_args()
torch.set_num_threads(2)
cfg = json.load(open(os.path.join(args.model_dir, 'classes.json')))
ckpt = args.ckpt or os.path.join(C.MODELS, json.load(open(os.path.join(C.HERE, 'export-meta.json')))['checkpoint'])
net, ck = C.load_checkpoint(ckpt)
dz = np.load(os.path.join(os.path.dirname(ckpt), 'distance.npz'))
served = C.served_for(net, ck, dz['proj'], dz['means'])
classes = cfg['classes']
size = cfg['input']['size']
assert size == C.checkpoint_size(ck), 'classes.json and the checkpoint name different input sizes'
rules = Rules(classes, cfg)
params = {'leaf_threshold': cfg['leaves']['threshold'], 'leaf_crops': cfg['views']['leaf_crops'],
          'margin': cfg['views']['margin'], 'max_area': cfg['views']['max_area'],
          'min_side': cfg['views']['min_side'], 'zooms': [cfg['views']['zoom']] if cfg['views']['zoom'] else [],
          'zoom_below': cfg['views']['zoom_below'], 'leaf': rules.leaf}
SECONDARY = 0.15  # src/diagnosis/result.ts SECONDARY_DIAGNOSIS_FLOOR

rows = C.read_split()
test_rows, X = C.eval_cache('test', rows, size)
if args.limit:
    keep = C.per_source(test_rows, args.limit)
    test_rows, X = [r for r, k in zip(test_rows, keep) if k], X[keep]
t0 = time.time()
reads = V.read_photos(served, [os.path.join(C.ROOT, r['file']) for r in test_rows], X, params, cfg['temperature'])
print(f'test split read in {time.time() - t0:.0f}s', flush=True)


def named_diseases(ranked, probs):
    if not ranked or classes[ranked[0]].endswith('__healthy'):
        return []
    return [c for i, (c, q) in enumerate(zip(ranked, probs))
            if i == 0 or (q >= SECONDARY and not classes[c].endswith('__healthy'))]


def boxes_for(leaves, logits, crop, named):
    """CONTRACT step 7: leaves whose own reading's top leaf class (within the crop given) is a named disease, in
    the service's order (src/diagnosis/result.ts detectionsOf): by confidence rounded to 3 decimals, then the
    named order, then the unrounded confidence, then reading order."""
    out = []
    leaf = [i for i, c in enumerate(classes) if c.split('__')[0] == crop]
    for i, (box, z) in enumerate(zip(leaves, logits)):
        q = V.softmax_t(z, cfg['temperature'])[leaf]
        top = leaf[int(np.argmax(q))]
        if top in named:
            p = float(q.max() / q.sum())
            out.append((-V.js_round(p * 1000) / 1000, named.index(top), -p, i, box))
    return [o[-1] for o in sorted(out, key=lambda o: o[:4])]


per = {}
box_tp = box_pred = box_gt = box_photos = photos_named = 0
for r, o in zip(test_rows, reads):
    s = r['source_kind']
    d = per.setdefault(s, {'n': 0, 'top1_crop': 0, 'top1': 0, 'answered': 0, 'answered_ok': 0, 'unsure': 0,
                           'not_plant': 0, 'not_supported': 0, 'disease_named': 0})
    d['n'] += 1
    y = classes.index(r['label'])
    crop = r['label'].split('__')[0] if '__' in r['label'] else None
    out0, rk0, _ = rules.decide(o['p'], o['distance'], None, o['p_plant'])
    d['not_plant'] += out0 == 'not_plant'
    d['not_supported'] += out0 == 'crop_not_supported'
    d['top1'] += bool(rk0) and rk0[0] == y
    d['disease_named'] += out0 == 'answered' and not classes[rk0[0]].endswith('__healthy')
    if crop is None:
        continue
    out, rk, pr = rules.decide(o['p'], o['distance'], crop, o['p_plant'])
    d['top1_crop'] += bool(rk) and rk[0] == y
    d['unsure'] += out == 'unsure'
    if out == 'answered':
        d['answered'] += 1
        d['answered_ok'] += rk[0] == y
    if s == 'field_plantdoc' and out == 'answered':
        named = named_diseases(rk, pr)
        if named:
            photos_named += 1
            # the answer's crops, the leaves filling the view (read by the centre view) and the other leaves the
            # service reads for their boxes alone
            whole = V.split_leaves(o['leaves'], params['leaf_crops'], params['max_area'])[2]
            others, other_logits = V.read_other_leaves(served, os.path.join(C.ROOT, r['file']), o, params, size)
            pred = boxes_for(o['cropped'] + whole + others,
                             np.concatenate([o['crops'], np.repeat(o['centre'][None], len(whole), 0), other_logits]),
                             crop, named)
            gt = C.leaf_boxes(r)
            box_pred += len(pred); box_gt += len(gt); box_photos += bool(pred)
            used = set()
            for b in pred:
                best = max(((V.iou(b, q), j) for j, q in enumerate(gt) if j not in used), default=(0, -1))
                if best[0] >= 0.5:
                    used.add(best[1]); box_tp += 1

result = {'model_version': cfg['model_version'], 'split': 'test', 'per_source': {}}
for s, d in sorted(per.items()):
    n = d['n']
    result['per_source'][s] = {
        'photos': n, 'top1_crop_given': d['top1_crop'] / n, 'top1_no_crop': d['top1'] / n,
        'answered_crop_given': d['answered'] / n, 'answered_accuracy': d['answered_ok'] / max(1, d['answered']),
        'unsure_crop_given': d['unsure'] / n, 'not_plant': d['not_plant'] / n,
        'not_supported_no_crop': d['not_supported'] / n, 'disease_named_no_crop': d['disease_named'] / n}
result['boxes'] = {'photos_with_disease_named': photos_named, 'photos_with_a_box': box_photos,
                   'precision': box_tp / max(1, box_pred), 'recall': box_tp / max(1, box_gt),
                   'predicted': box_pred, 'true_boxes': box_gt, 'iou': 0.5}
if not args.limit:
    json.dump(result, open(os.path.join(C.HERE, 'eval-torch.json'), 'w'), indent=1)
print(json.dumps(result, indent=1))

# parity photos: a few of each source, fixed by position in the test split
pick = []
for s, k in (('field_plantdoc', 5), ('lab', 3), ('field_ibean', 1), ('other_plant', 2), ('non_plant', 2)):
    idx = [i for i, r in enumerate(test_rows) if r['source_kind'] == s]
    pick += idx[::max(1, len(idx) // k)][:k]
# a mixture's centre-view router weight: the parity photos must read the lab expert for some and not for others
lab_weight = None
if isinstance(served, C.Mixture):
    with torch.no_grad():
        lab_weight = served.gate(served.field(C.to_input(X[pick]))[3]).tolist()
parity = {'model_version': cfg['model_version'], 'tolerance': {'p': 0.02, 'distance_rel': 0.02, 'box': 0.02},
          'photos': [{'file': test_rows[i]['file'], 'p': [round(float(v), 5) for v in reads[i]['p']],
                      'distance': round(reads[i]['distance'], 3),
                      'leaves': [[round(v, 4) for v in l] for l in reads[i]['leaves']],
                      'crops': len(reads[i]['windows']), 'zoomed': V.reads_zoom(reads[i]),
                      'non_plant': round(float(reads[i]['p_plant'][rules.np]), 5),
                      'other_plant': round(float(reads[i]['p_plant'][rules.other]), 5),
                      **({'lab_weight': round(lab_weight[n], 5)} if lab_weight is not None else {})}
                     for n, i in enumerate(pick)]}
json.dump(parity, open(os.path.join(args.model_dir, 'parity.json'), 'w'), indent=1)
print('wrote eval-torch.json and models/parity.json')
