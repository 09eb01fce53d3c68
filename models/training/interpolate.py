#!/usr/bin/env python3
"""Weight-space ensembling of the field model with the model it was fine-tuned from (WiSE-FT, Wortsman et al.
2022): theta(alpha) = alpha * theta_old + (1 - alpha) * theta_new, to win back lab and iBean accuracy the field
fine-tune cost while keeping most of its field gain.

  /usr/bin/python3 models/training/interpolate.py --scan 0,0.2,0.3,0.4,0.5,0.6,0.7,0.8,1   # val only
  /usr/bin/python3 models/training/interpolate.py --alpha 0.5 --out models/training/runs/wise0.5/best.pt
--old and --new are checkpoints rebuilt from the two ONNX files by from_onnx.py (models/training/README.md).
Shared are the features and the class-head rows of the classes both models have (matched by name); what only
the new model has (the other_plant row, the leaf finder) stays as it is. Both checkpoints are BatchNorm-folded
reconstructions whose BatchNorm statistics were measured, not trained, so each conv's effective (folded) weight
and bias is interpolated; the checkpoint written carries them with identity BatchNorms (export and evaluation
only: fine-tuning from it would first need from_onnx.py's measured statistics).

--scan reads each alpha on val as train.py does (common.evaluate: centre view as served, mirror average, every
non-lab val photo and a fixed 1,200 lab ones) plus the leaf finder's best F1 against the field val leaf boxes,
writes wise-scan.json (card.py puts it in the model card) and names the alpha the rule below picks. The rule was
fixed before the first scan: among the alphas with lab >= --min-lab and iBean >= --min-ibean (val top-1 with
the crop given, a margin above the issue's test targets of 97 % and 92 %), the highest field top-1 with the crop
given (PlantDoc), ties to the higher lab figure; if none qualifies, the highest field + lab.
"""
import argparse, json, os
import numpy as np
import torch
import common as C
import views as V

p = argparse.ArgumentParser()
p.add_argument('--old', default=os.path.join(C.RUNS, 'shipped', 'best.pt'), help='the model fine-tuned from')
p.add_argument('--new', default=os.path.join(C.RUNS, 'field', 'best.pt'), help='the fine-tuned model')
p.add_argument('--alpha', type=float, help='write the checkpoint at this alpha to --out')
p.add_argument('--out', help='checkpoint to write')
p.add_argument('--scan', help='comma-separated alphas to read on val')
p.add_argument('--min-lab', type=float, default=0.975)
p.add_argument('--min-ibean', type=float, default=0.93)
p.add_argument('--size', type=int, default=C.SIZE, help='serving size the scan reads val at (the export serves C.SIZE)')
p.add_argument('--json', default=os.path.join(C.HERE, 'wise-scan.json'), help='where the scan goes')
args = p.parse_args()
assert args.scan or (args.alpha is not None and args.out), 'give --scan, or --alpha with --out'
torch.set_num_threads(2)


def load(path):
    ck = torch.load(path, map_location='cpu', weights_only=False)
    return C.net_from_state(ck['model'], ck['classes'], ck['args']), ck


@torch.no_grad()
def folded(net):
    """Each conv's effective weight and bias in eval mode, its BatchNorm folded in, as an export runs it."""
    out = []
    for conv, bn in C.conv_bn_pairs(net.modules()):
        w = conv.weight
        b = conv.bias if conv.bias is not None else torch.zeros(w.shape[0])
        if bn is not None:
            s = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            w, b = w * s.view(-1, 1, 1, 1), (b - bn.running_mean) * s + bn.bias
        out.append((w.clone(), b.clone()))
    return out


old, ck_old = load(args.old)
new, ck_new = load(args.new)
classes = ck_new['classes']
shared = [i for i, c in enumerate(classes) if c in ck_old['classes']]
old_rows = [ck_old['classes'].index(classes[i]) for i in shared]
old_folded, new_folded = folded(old), folded(new)


@torch.no_grad()
def interpolate(alpha):
    net = C.LeafNet(len(classes), dropout=0.0)
    net.load_state_dict(new.state_dict())
    leaf = set(net.leaf.modules())
    for (conv, bn), (wo, bo), (wn, bn_) in zip(C.conv_bn_pairs(net.modules()), old_folded, new_folded):
        if conv in leaf:
            continue
        if conv is net.cam:
            # class rows by name; a class the old model lacks keeps the new row, i.e. alpha 0 for it
            wo_, bo_ = wn.clone(), bn_.clone()
            wo_[shared], bo_[shared] = wo[old_rows], bo[old_rows]
            wo, bo = wo_, bo_
        conv.weight.copy_(alpha * wo + (1 - alpha) * wn)
        b = alpha * bo + (1 - alpha) * bn_
        if bn is None:
            conv.bias.copy_(b)
        else:
            bn.running_mean.zero_(); bn.running_var.fill_(1.0 - bn.eps)
            bn.weight.fill_(1.0); bn.bias.copy_(b)
    return net.eval()


def source(alpha):
    return (f'WiSE-FT alpha={alpha:g}: {alpha:g} x {ck_old["val"]["source"]} + {1 - alpha:g} x '
            f'{ck_new["val"]["source"]} (models/training/interpolate.py)')


if args.alpha is not None:
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save({'model': interpolate(args.alpha).state_dict(), 'ema': None, 'classes': classes,
                'args': {'width_mult': 1.0, 'alpha': args.alpha}, 'val': {'source': source(args.alpha)}}, args.out)
    print('wrote', args.out, source(args.alpha))

if args.scan:
    val_rows, Xva, y, kind = C.val_set(classes=classes, size=args.size)
    field = np.nonzero(kind == 'field_plantdoc')[0]
    gt = [C.leaf_boxes(val_rows[i]) for i in field]
    scan = []
    for alpha in (float(a) for a in args.scan.split(',')):
        net = interpolate(alpha)
        res = {'alpha': alpha, **C.evaluate(net, Xva, y, kind, classes)}
        with torch.no_grad():
            maps = torch.cat([C.Served(net)(C.to_input(Xva[field[i:i + 64]]))[1]
                              for i in range(0, len(field), 64)]).numpy()
        f1 = {float(t): V.leaf_f1(maps, gt, t)[0] for t in V.LEAF_THRESHOLDS}
        res['leaf_threshold'] = max(f1, key=f1.get)
        res['leaf_f1'] = f1[res['leaf_threshold']]
        scan.append(res)
        print(' '.join(f'{k}={v:.4f}' for k, v in res.items()), flush=True)
    ok = [r for r in scan if r['lab_crop'] >= args.min_lab and r['field_ibean_crop'] >= args.min_ibean]
    if ok:
        chosen = max(ok, key=lambda r: (r['field_plantdoc_crop'], r['lab_crop']))
    else:
        chosen = max(scan, key=lambda r: r['field_plantdoc_crop'] + r['lab_crop'])
    print(f'chosen alpha {chosen["alpha"]:g} ({"meets" if ok else "no alpha meets"} lab >= {args.min_lab}, '
          f'iBean >= {args.min_ibean})')
    json.dump({'old': ck_old['val']['source'], 'new': ck_new['val']['source'], 'min_lab': args.min_lab,
               'min_ibean': args.min_ibean, 'rule_met': bool(ok), 'chosen': chosen['alpha'], 'val_photos': {
                   k: int((kind == k).sum()) for k in sorted(set(kind))}, 'scan': scan},
              open(args.json, 'w'), indent=1)
    print('wrote', args.json)
