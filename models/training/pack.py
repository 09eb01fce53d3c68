#!/usr/bin/env python3
"""Pack train.py's train cache small enough to travel to a machine without ../shared (a GPU lent for a few
minutes, with a 64 MiB limit on what it is sent), for `train.py --pack`.

  /usr/bin/python3 models/training/pack.py --lab-share 0.4 --out .gpu/pack.npz

Every sample is stored as WebP (quality --quality); lab photos (PlantVillage, source_kind `lab`) are kept for a
fixed, seeded --lab-share of each class, every other sample (field photos and their leaf crops, iBean, rice, the
PlantDoc maize, other plants, non-plants) whole. The leaf masks are not stored: train.py recomputes them from the
decoded pixels.
"""
import argparse, io, json, os
from multiprocessing import Pool
import numpy as np
from PIL import Image
import common as C

KINDS_LAB = 0  # train.py KINDS.index('lab')


def webp(args):
    u8, q = args
    b = io.BytesIO()
    Image.fromarray(u8).save(b, 'WEBP', quality=q, method=6)
    return b.getvalue()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--lab-share', type=float, default=0.4, help='share of each lab class kept')
    p.add_argument('--quality', type=int, default=75)
    p.add_argument('--seed', type=int, default=1234)
    p.add_argument('--out', required=True)
    args = p.parse_args()
    z = np.load(os.path.join(C.DATA, f'train_cache_{C.TRAIN_SIZE}.npz'), allow_pickle=False)
    X, y, kind, src, B = z['X'], z['y'], z['kind'], z['src'], z['B']
    rng = np.random.default_rng(args.seed)
    keep = kind != KINDS_LAB
    for c in np.unique(y[kind == KINDS_LAB]):
        idx = np.nonzero((kind == KINDS_LAB) & (y == c))[0]
        keep[rng.choice(idx, int(round(len(idx) * args.lab_share)), replace=False)] = True
    sel = np.nonzero(keep)[0]
    with Pool(os.cpu_count()) as pool:
        blobs = pool.map(webp, [(X[i], args.quality) for i in sel], chunksize=64)
    offs = np.cumsum([0] + [len(b) for b in blobs]).astype(np.int64)
    np.savez_compressed(args.out, blob=np.frombuffer(b''.join(blobs), np.uint8), offs=offs, y=y[sel], kind=kind[sel],
             src=src[sel], B=B[sel], classes=json.dumps(C.class_names()), size=C.TRAIN_SIZE)
    print(f'{len(sel)} of {len(y)} samples ({int((kind[sel] == KINDS_LAB).sum())} lab), '
          f'{offs[-1] / 2**20:.1f} MiB -> {args.out}')


if __name__ == '__main__':
    main()
