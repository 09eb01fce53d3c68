#!/usr/bin/env python3
"""Do the field training photos' neighbours rank field answers better than the top probability? A val-only probe
under the rule in tried/trust-score-rule.md (written before it ran):

  /usr/bin/python3 models/training/trust.py [--json models/training/tried/trust-score.json]

The shipped field expert reads the centre view (no mirror image, as shipped) of the train split's field photos
(their pooled features are the memory) and of the PlantDoc field val photos, crop given; four scores rank the
val photos: A the narrowed top probability (the service's), K the share of the 10 nearest memory photos of the
crop labelled with A's class, T the trust score (Jiang et al. 2018), AK their mean (A + K) / 2.
"""
import argparse, json
import numpy as np
import torch
import common as C

FIELD = ('field_plantdoc', 'maize_plantdoc')


@torch.no_grad()
def read(net, X):
    """-> logits [N, K] and L2-normalised pooled features [N, C] of uint8 views, each read once."""
    net = net.to(memory_format=torch.channels_last).eval()
    out = [net(C.to_input(X[i:i + 100]).contiguous(memory_format=torch.channels_last)) for i in range(0, len(X), 100)]
    logits = torch.cat([o[0] for o in out]).numpy()
    feat = torch.nn.functional.normalize(torch.cat([o[2] for o in out]), dim=1).numpy()
    return logits, feat


def area(conf, right):
    """The mean accuracy over the most sure k photos, averaged over every k (ties broken by order)."""
    order = np.argsort(-conf, kind='stable')
    return float(np.mean(np.cumsum(right[order]) / np.arange(1, len(order) + 1)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--checkpoint', default='models/training/checkpoints/gpu-nsfwjs-field-d-7min.pt')
    p.add_argument('--size', type=int, default=160)
    p.add_argument('--k', type=int, default=10)
    p.add_argument('--resamples', type=int, default=2000)
    p.add_argument('--json', default='')
    args = p.parse_args()
    torch.set_num_threads(2)
    rows = C.read_split()
    classes = C.class_names(rows)
    pack = torch.load(args.checkpoint, map_location='cpu', weights_only=False)
    assert pack['classes'] == classes
    net = C.net_from_state(pack['snaps'][-1]['ema'], classes, pack['args'])

    memory = [r for r in rows if r['split'] == 'train' and r['source_kind'] in FIELD]
    val = [r for r in rows if r['split'] == 'val' and r['source_kind'] == 'field_plantdoc']
    _, fm = read(net, C.views_cache(f'trust_train_field_{args.size}', [r['file'] for r in memory], args.size))
    lv, fv = read(net, C.views_cache(f'trust_val_field_{args.size}', [r['file'] for r in val], args.size))
    ym = np.array([classes.index(r['label']) for r in memory])
    yv = np.array([classes.index(r['label']) for r in val])
    crop = np.array([c.split('__')[0] for c in classes])

    P = torch.softmax(torch.from_numpy(lv), 1).numpy()
    narrowed = np.where(C.same_crop(yv, classes), P, 0)
    top = narrowed.argmax(1)
    right = (top == yv).astype(float)
    A = narrowed.max(1) / narrowed.sum(1)
    dist = 1 - fv @ fm.T  # cosine distances to every memory photo
    K, T = np.zeros(len(val)), np.zeros(len(val))
    for i in range(len(val)):
        same = crop[ym] == crop[yv[i]]
        d, lab = dist[i, same], ym[same]
        near = np.argsort(d)[:args.k]
        K[i] = np.mean(lab[near] == top[i])
        own, other = d[lab == top[i]], d[lab != top[i]]
        T[i] = (other.min() if len(other) else 2.0) / max(own.min() if len(own) else 2.0, 1e-6)
    scores = {'A': A, 'K': K, 'T': T, 'AK': (A + K) / 2}

    rng = np.random.default_rng(0)
    boot = [rng.integers(0, len(val), len(val)) for _ in range(args.resamples)]
    base = np.array([area(A[b], right[b]) for b in boot])
    report = {'memory_photos': len(memory), 'val_photos': len(val), 'top1_crop_given': float(right.mean()),
              'k': args.k, 'scores': {}}
    print(f'memory {len(memory)} field train photos; field val {len(val)}, top-1 crop given {right.mean():.3f}')
    print('| score | answered at 85 % right | area (mean accuracy over the most sure k) | above A in resamples |')
    print('| --- | --- | --- | --- |')
    for name, s in scores.items():
        better = float(np.mean(np.array([area(s[b], right[b]) for b in boot]) > base)) if name != 'A' else None
        row = {'answered_at_85': C.answered_share(s, right, 0.85), 'area': area(s, right), 'above_A': better}
        report['scores'][name] = row
        print(f"| {name} | {row['answered_at_85']:.1%} | {row['area']:.4f} | "
              f"{'–' if better is None else f'{better:.1%}'} |")
    if args.json:
        json.dump(report, open(args.json, 'w'), indent=1)


if __name__ == '__main__':
    main()
