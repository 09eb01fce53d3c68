#!/usr/bin/env python3
"""Read the snapshots of a run trained without val (`train.py --eval-minutes 0 --snapshots ...`, e.g. on a lent
GPU machine that has no ../shared) on val, as train.py would have, and keep the best as a checkpoint for export.py.

  /usr/bin/python3 models/training/snapshots.py runs/gpu-a/snapshots.pt runs/gpu-b/snapshots.pt --out runs/gpu/best.pt

Each snapshot is read by common.served_logits (centre view as served, mirror average; every non-lab val photo and
the fixed 1,200 lab ones) and scored as train.py's --select field does (field accuracy with the crop given + a
quarter of lab accuracy). Beside the score, not in it: the share of field photos it would answer at
--answered-target right (`field_answered_at_target`, as mixture.py's rule reads a mixture), with the probabilities
at the temperature export.py would fit on the same val photos (`temperature`), as the service would read them. The
table goes to stdout and --json, the best snapshot to --out in train.py's checkpoint format.
"""
import argparse, json, os
import numpy as np
import torch
import common as C


def main():
    p = argparse.ArgumentParser()
    p.add_argument('files', nargs='+', help='snapshots.pt files')
    p.add_argument('--out', required=True, help='checkpoint of the best snapshot')
    p.add_argument('--json', default='', help='write every snapshot\'s val figures here')
    p.add_argument('--last', type=int, default=0, help='read only the last N snapshots of each file (0: all)')
    p.add_argument('--soup', action='store_true',
                   help='also read the uniform average of the last snapshot of every file (a "model soup", Wortsman '
                        'et al. 2022: fine-tunes of one start averaged in weight space)')
    p.add_argument('--ensemble', action='store_true',
                   help='also read the mean of the probabilities of the last snapshot of every file (an output '
                        'ensemble: it costs all of them to serve, so it is never written to --out; it says what '
                        'distilling them into one network could at most keep)')
    p.add_argument('--answered-target', type=float, default=0.85,
                   help='field_answered_at_target: the share of field photos answered at this accuracy (crop given)')
    p.add_argument('--size', type=int, default=C.SIZE,
                   help='serving size to read val at; the checkpoint written keeps it (common.checkpoint_size)')
    args = p.parse_args()
    torch.set_num_threads(2)
    rows = C.read_split()
    classes = C.class_names(rows)
    _, Xva, yva, kva = C.val_set(rows, classes, args.size)
    best, table, candidates, lasts = None, [], [], []
    for f in args.files:
        pack = torch.load(f, map_location='cpu', weights_only=False)
        assert pack['classes'] == classes, f'{f}: another class list'
        chosen = pack['snaps'][-args.last:] if args.last else pack['snaps']
        candidates += [(f, pack['args'], s) for s in chosen]
        lasts.append(pack['snaps'][-1])
    if args.soup:
        soup = {k: (sum(s['ema'][k].double() for s in lasts) / len(lasts)).float() if v.is_floating_point()
                else v for k, v in lasts[0]['ema'].items()}
        soup_args = {**candidates[0][1], 'run': 'soup'}
        candidates.append(('soup of ' + ' '.join(args.files), soup_args,
                           {'minutes': max(s['minutes'] for s in lasts), 'step': 0, 'ema': soup}))

    def report(name, run_args, lg, net, s):
        ve = C.source_accuracy(lg, yva, kva, classes)
        score = C.field_score(ve)
        # reported beside the score, not in it: mixture.py's rule asks for coverage too (model card, 27 November)
        probs = lambda t: torch.softmax(torch.from_numpy(lg / t), 1).numpy()
        ve['temperature'] = C.fit_temperature(lambda t: C.source_nll(probs(t), yva, kva))
        ve['field_answered_at_target'] = C.field_answered_at(probs(ve['temperature']), yva, kva, classes,
                                                             args.answered_target)
        row = {'file': name, 'run': run_args['run'], 'arch': run_args.get('arch', 'mnv3s'), 'size': args.size,
               'mmacs_per_view': round(sum(C.conv_macs(n, args.size) for n in net) / 1e6),
               'minutes': round(s['minutes'], 2), 'step': s['step'], 'score': score, **ve}
        table.append(row)
        print(f"{row['run']} ({row['arch']} at {args.size} px: {row['mmacs_per_view']} M multiply-adds per image) "
              f"{row['minutes']:5.1f} min step {row['step']:6d}  score {score:.4f}  " +
              ' '.join(f'{k}={v:.4f}' for k, v in ve.items()), flush=True)
        return score, ve

    last_reads = {}
    for f, run_args, s in candidates:
        net = C.net_from_state(s['ema'], classes, run_args)
        lg = C.served_logits(net, Xva)
        if any(s is last for last in lasts):
            last_reads[f] = (lg, net)
        score, ve = report(f, run_args, lg, [net], s)
        if best is None or score > best[0]:
            sd = net.state_dict()
            best = (score, {'model': sd, 'ema': sd, 'classes': classes, 'args': run_args, 'size': args.size,
                            'step': s['step'], 'val': ve, 'minutes': s['minutes'], 'snapshot_of': f})
    if args.ensemble:
        assert len(last_reads) == len(args.files), '--ensemble reads the last snapshot of every file (--last 1)'
        mean = np.mean([torch.softmax(torch.from_numpy(lg), 1).numpy() for lg, _ in last_reads.values()], 0)
        report('ensemble of ' + ' '.join(args.files), {**candidates[0][1], 'run': 'ensemble'}, np.log(mean),
               [n for _, n in last_reads.values()], {'minutes': max(s['minutes'] for s in lasts), 'step': 0})
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save(best[1], args.out)
    print(f"best: {best[1]['args']['run']} at {best[1]['minutes']:.1f} min, score {best[0]:.4f} -> {args.out}")
    if args.json:
        json.dump(table, open(args.json, 'w'), indent=1)


if __name__ == '__main__':
    main()
