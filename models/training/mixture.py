#!/usr/bin/env python3
"""Two experts and a router, to win back the lab and iBean accuracy the field fine-tune cost without giving up
its field accuracy: the field model (--field, served at its checkpoint's size, common.checkpoint_size) and the
model it was fine-tuned from (--lab, trained and served at 144 px: lab 98.5 %, iBean 94.9 % on val, but 31.9 % on
field photos), mixed per photo.

  /usr/bin/python3 models/training/mixture.py --field-classes /tmp/field-classes.json \
      --lab-classes /tmp/prev-classes.json --out models/training/runs/mixture/best.pt   # val only, ~3 min
  /usr/bin/python3 models/training/export.py --ckpt models/training/runs/mixture/best.pt ...
--field and --lab are checkpoints: the field model's (train.py's, or rebuilt from its ONNX file by from_onnx.py) and
the 144 px model's, rebuilt by from_onnx.py (models/training/README.md has the commands behind the shipped model).

How a photo is read (common.Mixture, one ONNX graph; the service's input is the field expert's view):
* the field expert as before: logits, leaf maps, pooled features, distance;
* the lab expert on the same view shrunk to 144 px inside the graph (bilinear), mirror-averaged (without the
  mirror image, half its cost, val lab top-1 fell from 98.2 % to 97.75 %, too close to the issue's 97 %);
* the router: r = sigmoid(w . f + b) on the field expert's pooled features f, a logistic regression fitted on
  TRAIN photos to tell PlantVillage-style lab photos (source_kind lab) from every other source;
* g = beta + (1 - beta) * r, taken as 0 under --lab-floor (there the graph does not read the lab expert at all:
  a third of a view's inference time, for a weight that moves no probability by more than the floor); over the
  25 leaf classes the expert probabilities (each at its own temperature,
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
p.add_argument('--field', default=os.path.join(C.RUNS, 'field', 'best.pt'), help='the field model\'s checkpoint')
p.add_argument('--lab', default=os.path.join(C.RUNS, 'shipped', 'best.pt'), help='from_onnx.py of the 144 px model')
# each expert's classes.json, for its temperature and input size (models/classes.json is the mixture's once exported)
p.add_argument('--field-classes', required=True)
p.add_argument('--lab-classes', required=True)
p.add_argument('--no-field-mirror', action='store_true',
               help='the field expert reads the views alone, not their mirror images too (half its cost)')
p.add_argument('--router-per-source', type=int, default=600, help='train photos per source kind for the router')
p.add_argument('--betas', default='0,0.1,0.25')
p.add_argument('--constants', default='0.25,0.5')
p.add_argument('--min-lab', type=float, default=0.975)
p.add_argument('--min-ibean', type=float, default=0.93)
p.add_argument('--field-slack', type=float, default=0.015)
p.add_argument('--answered-target', type=float, default=0.85)
p.add_argument('--lab-floor', type=float, default=0.01,
               help='router weights under this are taken as 0, and the lab expert is not read for them')
p.add_argument('--json', default=os.path.join(C.HERE, 'mixture-scan.json'))
p.add_argument('--out', help='checkpoint of the chosen mixture')
args = p.parse_args()
torch.set_num_threads(2)

rows = C.read_split()
field_net, ck_f = C.load_checkpoint(args.field)
ck_l = torch.load(args.lab, map_location='cpu', weights_only=False)
lab_net = C.net_from_state(ck_l['model'], ck_l['classes'], ck_l['args'])
classes, lab_classes = ck_f['classes'], ck_l['classes']
size = C.checkpoint_size(ck_f)  # the field expert's; the lab expert reads the same view shrunk to its own
field_cfg, lab_cfg = json.load(open(args.field_classes)), json.load(open(args.lab_classes))
LEAF = [i for i, c in enumerate(classes) if c not in (C.OTHER, C.NON_PLANT)]
assert LEAF == list(range(len(LEAF))), 'common.Mixture needs the leaf classes first'
# the lab expert's leaf finder was never trained (from_onnx.py leaves it out): not carried
lab_state = {k: v for k, v in lab_net.state_dict().items() if not k.startswith('leaf.')}
mix_cfg = {'lab_model': lab_state, 'lab_classes': lab_classes, 'lab_args': ck_l['args'],
           'lab_size': lab_cfg['input']['size'], 'n_leaf': len(LEAF),
           'lab_rows': torch.tensor([lab_classes.index(classes[i]) for i in LEAF]),
           'router_w': torch.zeros(C.out_channels(field_net.features)), 'router_b': torch.tensor(0.0),
           'beta': torch.tensor(0.0), 't_field': torch.tensor(float(field_cfg['temperature'])),
           't_lab': torch.tensor(float(lab_cfg['temperature'])), 'field_mirror': not args.no_field_mirror,
           'lab_floor': args.lab_floor}
experts = C.served_for(field_net, {'mixture': mix_cfg})


def source(ck, path):
    return ck['val'].get('source') or os.path.relpath(path, C.MODELS)


@torch.no_grad()
def expert_outputs(u8, batch=100):
    """The field expert's logits and pooled features and the lab expert's logits (common.Mixture.experts)."""
    out = [experts.experts(C.to_input(u8[i:i + batch])) for i in range(0, len(u8), batch)]
    return tuple(torch.cat([o[k] for o in out]) for k in (0, 3, 4))


@torch.no_grad()
def fit_router(feats, target, l2=1e-3):
    """Logistic regression (L2, standardised features) -> weights and bias on the raw features."""
    feats = feats.double()
    mu, sd = feats.mean(0), feats.std(0) + 1e-6
    X, t = (feats - mu) / sd, torch.as_tensor(target, dtype=torch.float64)
    w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=500, line_search_fn='strong_wolfe')

    def closure():
        opt.zero_grad()
        with torch.enable_grad():
            loss = F.binary_cross_entropy_with_logits(X @ w + b, t) + l2 * (w ** 2).sum()
            loss.backward()
        return loss
    opt.step(closure)
    w_raw = w.detach() / sd
    return w_raw.float(), float(b.detach() - mu @ w_raw)


def metrics(P, y, kind):
    """C.source_accuracy, and the field photos' answered share at --answered-target (crop given)."""
    return {'field_answered_at_target': C.field_answered_at(P, y, kind, classes, args.answered_target),
            **C.source_accuracy(P, y, kind, classes)}


def router_photos():
    """Up to --router-per-source train photos of each source kind, at the serving size (cached)."""
    train_rows = [r for r in rows if r['split'] == 'train']
    keep = C.per_source(train_rows, args.router_per_source, seed=0)
    chosen = [r for r, k in zip(train_rows, keep) if k]
    return chosen, C.views_cache(f'router_{args.router_per_source}_{size}', [r['file'] for r in chosen], size)


router_rows, Xr = router_photos()
is_lab = np.array([r['source_kind'] == 'lab' for r in router_rows], dtype=np.float64)
w, b = fit_router(expert_outputs(Xr)[1], is_lab)
print(f'router fitted on {len(router_rows)} train photos ({int(is_lab.sum())} lab)', flush=True)

_, Xva, y, kind = C.val_set(classes=classes, size=size)
zf, fv, zl = expert_outputs(Xva)
pl = torch.softmax(zl / experts.t_lab, 1)
r = torch.sigmoid(fv @ w + b)
router_mean = {k: float(r[kind == k].mean()) for k in sorted(set(kind))}
print('router on val, mean r per source:', {k: round(v, 3) for k, v in router_mean.items()})
# (name, beta, router used); g = beta + (1 - beta) r with the router, beta without
cands = [('field model', 0.0, False)]
cands += [(f'router, beta {bt:g}', bt, True) for bt in map(float, args.betas.split(','))]
cands += [(f'constant {c:g}', c, False) for c in map(float, args.constants.split(','))]
cands += [('lab model alone', 1.0, False)]
scan = []
for name, beta, routed in cands:
    g = beta + (1 - beta) * r if routed else torch.full((len(y),), beta)
    res = {'candidate': name, 'beta': beta, 'router': routed,
           **metrics(experts.mix(zf, pl, experts.floored(g)).numpy(), y, kind)}
    scan.append(res)
    print(' '.join(f'{k}={v:.4f}' if isinstance(v, float) else f'{k}={v}' for k, v in res.items()), flush=True)
base = scan[0]['field_plantdoc_crop']
ok = [s for s in scan[1:-1] if s['lab_crop'] >= args.min_lab and s['field_ibean_crop'] >= args.min_ibean
      and s['field_plantdoc_crop'] >= base - args.field_slack]
chosen = max(ok, key=lambda s: (s['field_answered_at_target'], s['field_plantdoc_crop'])) if ok else scan[0]
print('chosen:', chosen['candidate'], '(rule met)' if ok else '(no candidate meets the rule: nothing written)')
json.dump({'field': source(ck_f, args.field), 'lab': source(ck_l, args.lab), 'rule': {
    'min_lab': args.min_lab, 'min_ibean': args.min_ibean, 'field_slack': args.field_slack,
    'answered_target': args.answered_target, 'lab_floor': args.lab_floor}, 'rule_met': bool(ok),
    'chosen': chosen['candidate'], 'router_train_photos': len(router_rows), 'router_mean_on_val': router_mean,
    'val_photos': {k: int((kind == k).sum()) for k in sorted(set(kind))}, 'scan': scan},
    open(args.json, 'w'), indent=1)
print('wrote', args.json)

if ok and args.out:
    mix_cfg.update(router_w=w if chosen['router'] else torch.zeros_like(w),
                   router_b=torch.tensor(b if chosen['router'] else -50.0), beta=torch.tensor(chosen['beta']))
    ck = {'model': field_net.state_dict(), 'ema': None, 'classes': classes, 'args': ck_f['args'], 'size': size,
          'mixture': mix_cfg,
          'val': {'source': f'{chosen["candidate"]}: {source(ck_f, args.field)} with {source(ck_l, args.lab)} '
                            '(models/training/mixture.py)', **{k: v for k, v in chosen.items() if k != 'candidate'}}}
    # the graph, rebuilt from the checkpoint, must give what the scan measured
    served = C.served_for(field_net, ck)
    with torch.no_grad():
        lg = torch.cat([served(C.to_input(Xva[i:i + 100]))[0] for i in range(0, len(Xva), 100)])
    g = chosen['beta'] + (1 - chosen['beta']) * r if chosen['router'] else torch.full((len(y),), chosen['beta'])
    gap = float((lg.exp() - experts.mix(zf, pl, experts.floored(g))).abs().max())
    assert gap < 1e-4, gap
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save(ck, args.out)
    print(f'wrote {args.out} (graph against the scan on val: max |p| difference {gap:.1e})')
