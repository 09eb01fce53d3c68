#!/usr/bin/env python3
"""Two experts and a router, to win back the lab and iBean accuracy the field fine-tune cost without giving up
its field accuracy: the field model (--field, 224 px) and the model it was fine-tuned from (--lab, trained and
served at 144 px: lab 98.5 %, iBean 94.9 % on val, but 31.9 % on field photos), mixed per photo.

  /usr/bin/python3 models/training/mixture.py --field-classes /tmp/field-classes.json \
      --lab-classes /tmp/prev-classes.json --out models/training/runs/mixture/best.pt   # val only, ~3 min
  /usr/bin/python3 models/training/export.py --ckpt models/training/runs/mixture/best.pt ...
--field and --lab are checkpoints rebuilt from the two ONNX files by from_onnx.py (models/training/README.md).

How a photo is read (common.Mixture, one ONNX graph; the service's input stays the 224 px view):
* the field expert as before: logits, leaf maps, pooled features, distance;
* the lab expert on the same view shrunk to 144 px inside the graph (bilinear), mirror-averaged (without the
  mirror image, half its cost, val lab top-1 fell from 98.2 % to 97.75 %, too close to the issue's 97 %);
* the router: r = sigmoid(w . f + b) on the field expert's pooled features f, a logistic regression fitted on
  TRAIN photos to tell PlantVillage-style lab photos (source_kind lab) from every other source;
* g = beta + (1 - beta) * r; over the 25 leaf classes the expert probabilities (each at its own temperature,
  renormalised over the leaf classes) are mixed g * lab + (1 - g) * field, scaled by the field expert's leaf
  mass; p(other_plant) and p(non_plant) stay the field expert's (it alone was trained on other plants);
* the graph's `logits` are the log of that distribution, so the service's softmax(logits / T) still applies.

The scan reads on val (centre view, as train.py reads it): the field model alone, the router with beta in
--betas, and a constant g (no router) in --constants. Rule: among the candidates with lab >= --min-lab and
iBean >= --min-ibean (val top-1 with the crop given; margins above the issue's test targets of 97 % and 92 %)
and field >= the field model's less --field-slack, the one that leaves the most field photos answered at
--answered-target right (crop given; `field_answered_at_target`), ties to the higher field top-1; if none
qualifies, the field model alone (nothing is written). The chosen mixture goes to --out as a checkpoint
export.py and evaluate.py read (common.served_for).

The rule first fixed picked the highest field top-1 instead. It chose beta 0.25, whose export answered 3.4 % of
the field val photos at its unsure threshold (the field model: 15.2 %), because the lab expert's confident
guesses moved into the field photos' probabilities. So the rule was amended on val before the test split was
read; the model card has both (What was tried).
"""
import argparse, json, os
import numpy as np
import torch
import torch.nn.functional as F
import common as C

p = argparse.ArgumentParser()
p.add_argument('--field', default=os.path.join(C.RUNS, 'field', 'best.pt'), help='from_onnx.py of the field model')
p.add_argument('--lab', default=os.path.join(C.RUNS, 'shipped', 'best.pt'), help='from_onnx.py of the 144 px model')
# each expert's classes.json, for its temperature and input size (models/classes.json is the mixture's once exported)
p.add_argument('--field-classes', required=True)
p.add_argument('--lab-classes', required=True)
p.add_argument('--router-per-source', type=int, default=600, help='train photos per source kind for the router')
p.add_argument('--betas', default='0,0.1,0.25')
p.add_argument('--constants', default='0.25,0.5')
p.add_argument('--min-lab', type=float, default=0.975)
p.add_argument('--min-ibean', type=float, default=0.93)
p.add_argument('--field-slack', type=float, default=0.015)
p.add_argument('--answered-target', type=float, default=0.85)
p.add_argument('--json', default=os.path.join(C.HERE, 'mixture-scan.json'))
p.add_argument('--out', help='checkpoint of the chosen mixture')
args = p.parse_args()
torch.set_num_threads(2)

rows = C.read_split()
field_net, ck_f = C.load_checkpoint(args.field)
ck_l = torch.load(args.lab, map_location='cpu', weights_only=False)
lab_net = C.net_from_state(ck_l['model'], ck_l['classes'], ck_l['args'])
classes, lab_classes = ck_f['classes'], ck_l['classes']
T_f = json.load(open(args.field_classes))['temperature']
T_l = json.load(open(args.lab_classes))['temperature']
LEAF = [i for i, c in enumerate(classes) if c not in (C.OTHER, C.NON_PLANT)]
LAB_ROWS = [lab_classes.index(classes[i]) for i in LEAF]
LAB_SIZE = json.load(open(args.lab_classes))['input']['size']


@torch.no_grad()
def expert_outputs(u8, batch=100):
    """Field logits, pooled features and lab logits on the view shrunk in-graph, each mirror-averaged."""
    zf, ff, zl = [], [], []
    for i in range(0, len(u8), batch):
        x = C.to_input(u8[i:i + batch])
        xx = torch.cat([x, x.flip(3)])
        lg, _, f = field_net(xx)
        n = len(x)
        zf.append((lg[:n] + lg[n:]) / 2); ff.append((f[:n] + f[n:]) / 2)
        small = F.interpolate(xx, size=(LAB_SIZE, LAB_SIZE), mode='bilinear', align_corners=False)
        ll = lab_net(small)[0]
        zl.append((ll[:n] + ll[n:]) / 2)
    return torch.cat(zf).numpy(), torch.cat(ff).numpy(), torch.cat(zl).numpy()


def softmax(z):
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def mix(zf, zl, g):
    pf, pl = softmax(zf / T_f), softmax(zl / T_l)
    mass = pf[:, LEAF].sum(1, keepdims=True)
    qf = pf[:, LEAF] / mass
    ql = pl[:, LAB_ROWS] / pl[:, LAB_ROWS].sum(1, keepdims=True)
    out = pf.copy()
    out[:, LEAF] = mass * (g[:, None] * ql + (1 - g[:, None]) * qf)
    return out


def fit_router(feats, target, l2=1e-3):
    mu, sd = feats.mean(0), feats.std(0) + 1e-6
    X = torch.as_tensor((feats - mu) / sd, dtype=torch.float64)
    t = torch.as_tensor(target, dtype=torch.float64)
    w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=500, line_search_fn='strong_wolfe')

    def closure():
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(X @ w + b, t) + l2 * (w ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    w_raw = w.detach().numpy() / sd
    return w_raw, float(b.detach()) - float(mu @ w_raw)


def answered_share(conf, right):
    """The largest share of photos answered (confidence at or above a threshold) of which at least
    --answered-target are right: how much the unsure threshold leaves answered."""
    order = np.argsort(-conf)
    acc = np.cumsum(right[order]) / np.arange(1, len(order) + 1)
    # a threshold answers every photo with the same confidence at once
    ends = np.r_[conf[order][1:] != conf[order][:-1], True]
    ok = np.nonzero(ends & (acc >= args.answered_target))[0]
    return float((ok.max() + 1) / len(conf)) if len(ok) else 0.0


def metrics(P, y, kind):
    pred = P.argmax(1)
    crop_of = np.array([c.split('__')[0] for c in classes])
    same = crop_of[None, :] == crop_of[y][:, None]
    pred_crop = np.where(same, P, -1).argmax(1)
    top = np.where(same, P, 0).max(1) / np.where(same, P, 0).sum(1)
    res = {'field_answered_at_target': answered_share(top[kind == 'field_plantdoc'],
                                                      pred_crop[kind == 'field_plantdoc'] == y[kind == 'field_plantdoc'])}
    for k in sorted(set(kind)):
        mk = kind == k
        res[k] = float((pred[mk] == y[mk]).mean())
        if k not in (C.NON_PLANT, C.OTHER):
            res[k + '_crop'] = float((pred_crop[mk] == y[mk]).mean())
    return res


def router_photos():
    """Up to --router-per-source train photos of each source kind, at the serving size (cached)."""
    train_rows = [r for r in rows if r['split'] == 'train']
    keep = C.per_source(train_rows, args.router_per_source, seed=0)
    chosen = [r for r, k in zip(train_rows, keep) if k]
    files = [r['file'] for r in chosen]
    cache = os.path.join(C.DATA, f'router_{args.router_per_source}_{C.SIZE}.npz')
    if os.path.exists(cache) and list(np.load(cache)['files']) == files:
        return chosen, np.load(cache)['X']
    X = np.stack([C.preprocess_uint8(os.path.join(C.ROOT, f)) for f in files])
    np.savez(cache, X=X, files=np.array(files))
    return chosen, X


router_rows, Xr = router_photos()
_, fr, _ = expert_outputs(Xr)
is_lab = np.array([r['source_kind'] == 'lab' for r in router_rows], dtype=np.float64)
w, b = fit_router(fr, is_lab)
print(f'router fitted on {len(router_rows)} train photos ({int(is_lab.sum())} lab)', flush=True)

val_rows, Xva, y, kind = C.val_set(classes=classes)
zf, fv, zl = expert_outputs(Xva)
r = 1 / (1 + np.exp(-(fv @ w + b)))
router_mean = {k: float(r[kind == k].mean()) for k in sorted(set(kind))}
print('router on val, mean r per source:', {k: round(v, 3) for k, v in router_mean.items()})
# (name, beta, router used); g = beta + (1 - beta) r with the router, beta without
cands = [('field model', 0.0, False)]
cands += [(f'router, beta {bt:g}', bt, True) for bt in map(float, args.betas.split(','))]
cands += [(f'constant {c:g}', c, False) for c in map(float, args.constants.split(','))]
cands += [('lab model alone', 1.0, False)]
scan = []
for name, beta, routed in cands:
    g = beta + (1 - beta) * r if routed else np.full(len(y), beta)
    res = {'candidate': name, 'beta': beta, 'router': routed, **metrics(mix(zf, zl, g), y, kind)}
    scan.append(res)
    print(' '.join(f'{k}={v:.4f}' if isinstance(v, float) else f'{k}={v}' for k, v in res.items()), flush=True)
base = scan[0]['field_plantdoc_crop']
ok = [s for s in scan[1:-1] if s['lab_crop'] >= args.min_lab and s['field_ibean_crop'] >= args.min_ibean
      and s['field_plantdoc_crop'] >= base - args.field_slack]
chosen = max(ok, key=lambda s: (s['field_answered_at_target'], s['field_plantdoc_crop'])) if ok else scan[0]
print('chosen:', chosen['candidate'], '(rule met)' if ok else '(no candidate meets the rule: nothing written)')
json.dump({'field': ck_f['val'].get('source'), 'lab': ck_l['val'].get('source'), 'rule': {
    'min_lab': args.min_lab, 'min_ibean': args.min_ibean, 'field_slack': args.field_slack,
    'answered_target': args.answered_target}, 'rule_met': bool(ok),
    'chosen': chosen['candidate'], 'router_train_photos': len(router_rows), 'router_mean_on_val': router_mean,
    'val_photos': {k: int((kind == k).sum()) for k in sorted(set(kind))}, 'scan': scan},
    open(args.json, 'w'), indent=1)
print('wrote', args.json)

if ok and args.out:
    mix_cfg = {'lab_model': lab_net.state_dict(), 'lab_classes': lab_classes, 'lab_args': ck_l['args'],
               'lab_size': LAB_SIZE, 'n_leaf': len(LEAF), 'lab_rows': torch.tensor(LAB_ROWS),
               'router_w': torch.tensor(w if chosen['router'] else np.zeros_like(w), dtype=torch.float32),
               'router_b': torch.tensor(b if chosen['router'] else -50.0, dtype=torch.float32),
               'beta': torch.tensor(chosen['beta'], dtype=torch.float32),
               't_field': torch.tensor(T_f, dtype=torch.float32), 't_lab': torch.tensor(T_l, dtype=torch.float32)}
    ck = {'model': field_net.state_dict(), 'ema': None, 'classes': classes, 'args': ck_f['args'], 'mixture': mix_cfg,
          'val': {'source': f'{chosen["candidate"]}: {ck_f["val"].get("source")} with {ck_l["val"].get("source")} '
                            '(models/training/mixture.py)', **{k: v for k, v in chosen.items() if k != 'candidate'}}}
    # the graph must give what the scan measured
    served = C.served_for(field_net, ck)
    with torch.no_grad():
        lg = torch.cat([served(C.to_input(Xva[i:i + 100]))[0] for i in range(0, len(Xva), 100)]).numpy()
    g = chosen['beta'] + (1 - chosen['beta']) * r if chosen['router'] else np.full(len(y), chosen['beta'])
    gap = float(np.abs(np.exp(lg) - mix(zf, zl, g)).max())
    assert gap < 1e-4, gap
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save(ck, args.out)
    print(f'wrote {args.out} (graph against the scan on val: max |p| difference {gap:.1e})')
