#!/usr/bin/env python3
"""Build the leaf-grouped train/val/test split -> models/training/split.csv

Columns: file,label,source_kind,group,split
  file   path relative to ../shared/datasets (e.g. leaf-photos/tomato__healthy/xx.jpg)

Grouping rule (variants of one leaf never straddle splits):
  1. PlantVillage file names are '<uuid>___<series> <number>[.k][ Day d].JPG'.
     * Series named '... Leaf N[.k] [Day d]' (GH_HL Leaf, GHLB Leaf, GHLB_PS Leaf, UF.GRC_BS_Lab Leaf, ...):
       the photos N, N.1, N.2 and every 'Day d' of leaf N show the same leaf -> group = class|series|N.
     * Other series ('RS_HL 1864', 'JR_B.Spot 8964', ...): one photo number = one group
       (class|series|number). The uuid is ignored (it differs between re-shots of one leaf).
     * No augmentation suffixes (_flipLR, _180deg, _new30degFliplr, ...) occur in this copy of the data; the
       rule strips them anyway if present, so they would join the group of their original.
  2. Every other source has no leaf id in its names (maize 'Corn_Blight (N).jpg', iBean '00042.jpg',
     rice 'DSC_0365.JPG'): group = the file itself.
  3. On top of 1-2, near-duplicate images are merged into one group (union-find) within a class: a 64-bit
     difference hash (dHash, 256 bits from a 17x16 grey thumbnail) of each image is compared with the
     dHash of every other image of the same class and of its horizontal flip, vertical flip and 180-degree
     rotation; Hamming distance <= 24 bits -> same group. (A 64-bit hash chained unrelated look-alike
     leaves into components of hundreds; with 256 bits the nearest-neighbour distance of ordinary photos
     is 40-100 bits, so <= 24 only joins real near-copies.) This catches re-shots and flipped/rotated copies that the names do not reveal.
Splits: per stratum (class x source_kind, so maize field photos are split 70/15/15 on their own), groups are shuffled with a fixed seed (1234) and assigned greedily so that each split
reaches ~70/15/15 % of the stratum's images (val and test first, the rest train).
Non-plant photos (non-plant/manifest.csv): label non_plant, source_kind non_plant, 60/20/20.

source_kind:
  lab            PlantVillage photos (pepper, potato, tomato, and the PlantVillage part of maize)
  maize_plantdoc maize photos from PlantDoc inside leaf-photos/. The source paths carry no source tag ('Corn_Blight (12).jpg'),
                 so this is a documented heuristic, checked against the known PlantVillage corn counts
                 (common rust 1192, gray leaf spot 513, healthy 1162, northern leaf blight 985):
                   non-square image              -> field_plantdoc (PlantVillage photos are all 256x256)
                   extension '.JPG' (upper case) -> lab
                   square lower-case '.jpg'      -> lab for healthy / gray_leaf_spot (counts match PV exactly),
                                                    field_plantdoc for common_rust (the 1192 '.JPG' files
                                                    already match the PV count), lab for northern_leaf_blight
                                                    (120 files; the PV count implies ~5 of them are PlantDoc
                                                    photos that this rule mislabels as lab).
  field_ibean    bean photos (iBean, phone photos in Ugandan fields)
  white_bg_rice  UCI rice leaf photos on a white background
  non_plant      ImageNet sample photos with no plant
  field_plantdoc PlantDoc field photos (field-photos/), several leaves in clutter, with leaf boxes
  other_plant    leaves of crops we do not cover (other-plants/), label other_plant

Field photos (field-photos/), after the rows above, 60/20/20 per class (more val and test photos than 15 %
would give, so that field figures are not read off a handful of photos):
  * Near-duplicates (the same dHash rule, any of the four orientations) are grouped across the whole set.
  * A field photo that near-duplicates a leaf-photos image of the same class joins that image's split (the
    maize ones: PlantDoc photos already inside leaf-photos/maize__*), so no photo is in train and test.
  * A group whose photos carry different classes, here or in leaf-photos, is left out (label conflict).
  * The remaining groups are shuffled per class (seed 1234) and filled into val and test first.
Other plants (other-plants/): grouped the same way, 60/20/20 per PlantDoc class, label other_plant.
"""
import csv, os, re, random, collections, sys
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
# ../shared/datasets beside the repository (read-only); DATASETS overrides it.
ROOT = os.environ.get('DATASETS') or os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'datasets'))
OUT = os.path.join(HERE, 'split.csv')
SEED = 1234
FRACS = {'train': 0.70, 'val': 0.15, 'test': 0.15}
NP_FRACS = {'train': 0.60, 'val': 0.20, 'test': 0.20}
HAMMING = 24  # of 256 bits

AUG_SUFFIX = re.compile(r'(_flipLR|_flipTB|_180deg|_90deg|_270deg|_new30degFliplr|_new30deg|_final_masked|_change)+$', re.I)


def source_kind(r):
    crop, sp = r['crop'], r['source_path']
    if crop == 'bean':
        return 'field_ibean'
    if crop == 'rice':
        return 'white_bg_rice'
    if crop == 'maize':
        ext = os.path.splitext(sp)[1]
        if r['width'] != r['height']:
            return 'maize_plantdoc'
        if ext == '.JPG':
            return 'lab'
        if r['label'] == 'maize__common_rust':
            return 'maize_plantdoc'
        return 'lab'
    return 'lab'


def name_group(r):
    sp = r['source_path']
    base = os.path.splitext(os.path.basename(sp))[0].strip()
    if 'PlantVillage' not in sp:
        return r['label'] + '|' + base
    m = re.match(r'^[0-9a-fA-F-]{36}___(.*)$', base)
    rest = AUG_SUFFIX.sub('', (m.group(1) if m else base)).strip()
    lm = re.match(r'^(.*?[Ll]eaf)\s*(\d+)', rest)
    if lm:
        return r['label'] + '|' + lm.group(1) + '|' + lm.group(2)
    return r['label'] + '|' + rest


def dhash_bits(a):
    # a: 16x17 float grey -> 256 bits
    return (a[:, 1:] > a[:, :-1]).flatten()


def hashes(path):
    im = Image.open(path).convert('L')
    out = []
    for t in (None, Image.FLIP_LEFT_RIGHT, Image.FLIP_TOP_BOTTOM, Image.ROTATE_180):
        j = im if t is None else im.transpose(t)
        a = np.asarray(j.resize((17, 16), Image.BILINEAR), dtype=np.float32)
        out.append(np.packbits(dhash_bits(a)))
    return out


def popcount_rows(x):
    return np.unpackbits(x, axis=-1).sum(-1)


class UF:
    def __init__(s, n): s.p = list(range(n))
    def f(s, i):
        while s.p[i] != i:
            s.p[i] = s.p[s.p[i]]; i = s.p[i]
        return i
    def u(s, a, b):
        a, b = s.f(a), s.f(b)
        if a != b: s.p[max(a, b)] = min(a, b)


def main():
    rows = list(csv.DictReader(open(os.path.join(ROOT, 'leaf-photos/manifest.csv'))))
    by = collections.defaultdict(list)
    for r in rows:
        by[(r['label'], source_kind(r))].append(r)
    out = []
    stats = collections.Counter()
    for label, kind in sorted(by):
        rs = by[(label, kind)]
        n = len(rs)
        uf = UF(n)
        ng = {}
        for i, r in enumerate(rs):
            g = name_group(r)
            if g in ng: uf.u(i, ng[g]); stats['name_merge'] += 1
            else: ng[g] = i
        H = [hashes(os.path.join(ROOT, 'leaf-photos', r['file'])) for r in rs]
        base = np.stack([h[0] for h in H])            # n x 32 bytes
        for t in range(4):
            q = np.stack([h[t] for h in H])
            for i in range(n):
                d = popcount_rows(np.bitwise_xor(base, q[i][None]))
                d[i] = 99
                for j in np.nonzero(d <= HAMMING)[0]:
                    if uf.f(i) != uf.f(int(j)):
                        stats['hash_merge'] += 1
                    uf.u(i, int(j))
        groups = collections.defaultdict(list)
        for i in range(n):
            groups[uf.f(i)].append(i)
        # group key: the name group of the group's first member (stable, readable)
        gl = sorted(groups.values(), key=lambda m: name_group(rs[m[0]]))
        rnd = random.Random(f'{SEED}:{label}:{kind}')
        rnd.shuffle(gl)
        target = {k: FRACS[k] * n for k in FRACS}
        cnt = {'val': 0, 'test': 0, 'train': 0}
        for m in gl:
            if cnt['val'] < target['val'] and (cnt['val'] + len(m) / 2) <= target['val'] + 0.5:
                s = 'val'
            elif cnt['test'] < target['test'] and (cnt['test'] + len(m) / 2) <= target['test'] + 0.5:
                s = 'test'
            else:
                s = 'train'
            cnt[s] += len(m)
            gkey = name_group(rs[m[0]])
            for i in m:
                r = rs[i]
                out.append({'file': 'leaf-photos/' + r['file'], 'label': label, 'source_kind': source_kind(r),
                            'group': gkey, 'split': s})
        stats['groups'] += len(gl)
        print(f'{label:28s} {kind:15s} n={n:5d} groups={len(gl):5d} train={cnt["train"]:5d} val={cnt["val"]:4d} test={cnt["test"]:4d}', flush=True)
    np_rows = list(csv.DictReader(open(os.path.join(ROOT, 'non-plant/manifest.csv'))))
    np_rows.sort(key=lambda r: r['file'])
    rnd = random.Random(f'{SEED}:non_plant')
    rnd.shuffle(np_rows)
    n = len(np_rows)
    ntr, nva = round(NP_FRACS['train'] * n), round(NP_FRACS['val'] * n)
    for i, r in enumerate(np_rows):
        s = 'train' if i < ntr else ('val' if i < ntr + nva else 'test')
        out.append({'file': 'non-plant/' + r['file'], 'label': 'non_plant', 'source_kind': 'non_plant',
                    'group': 'non_plant|' + os.path.splitext(r['file'])[0], 'split': s})
    print(f'non_plant n={n} train={ntr} val={nva} test={n-ntr-nva}')
    out += field_rows(rows, out, stats)
    with open(OUT, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=['file', 'label', 'source_kind', 'group', 'split'])
        w.writeheader()
        for r in out:
            w.writerow(r)
    c = collections.Counter((r['source_kind'], r['split']) for r in out)
    for k in sorted(set(k[0] for k in c)):
        print(f'{k:16s}', {s: c[(k, s)] for s in ('train', 'val', 'test')})
    print(dict(stats), 'rows', len(out), '->', OUT)


FIELD_FRACS = {'val': 0.20, 'test': 0.20}


def group_near(paths):
    """Union-find over near-duplicates (dHash, four orientations); returns the hashes and the finder."""
    H = [hashes(p) for p in paths]
    base = np.stack([h[0] for h in H])
    uf = UF(len(paths))
    for t in range(4):
        q = np.stack([h[t] for h in H])
        for i in range(len(paths)):
            d = popcount_rows(np.bitwise_xor(base, q[i][None]))
            d[i] = 99
            for j in np.nonzero(d <= HAMMING)[0]:
                uf.u(i, int(j))
    return H, uf


def assign(groups, n, rnd, fixed=None):
    """groups: lists of indices; fixed: index -> split forced by a duplicate elsewhere. Returns index -> split."""
    fixed = fixed or {}
    out, cnt = {}, {'val': 0, 'test': 0, 'train': 0}
    free = []
    for m in groups:
        forced = {fixed[i] for i in m if i in fixed}
        if forced:
            s = sorted(forced)[0]
            for i in m:
                out[i] = s
            cnt[s] += len(m)
        else:
            free.append(m)
    rnd.shuffle(free)
    for m in free:
        for s in ('val', 'test'):
            if cnt[s] + len(m) / 2 <= FIELD_FRACS[s] * n + 0.5:
                break
        else:
            s = 'train'
        cnt[s] += len(m)
        for i in m:
            out[i] = s
    return out


def field_rows(leaf_rows, leaf_out, stats):
    split_of = {r['file']: r['split'] for r in leaf_out}
    out = []
    # field-photos: against the leaf-photos images of the same crop, then among themselves
    fr = list(csv.DictReader(open(os.path.join(ROOT, 'field-photos/manifest.csv'))))
    fr.sort(key=lambda r: r['file'])
    H, uf = group_near([os.path.join(ROOT, 'field-photos', r['file']) for r in fr])
    crops = sorted({r['label'].split('__')[0] for r in fr})
    lp = [r for r in leaf_rows if r['crop'] in crops]
    LH = np.stack([hashes(os.path.join(ROOT, 'leaf-photos', r['file']))[0] for r in lp])
    fixed, conflict = {}, set()
    for i, r in enumerate(fr):
        for t in range(4):
            d = popcount_rows(np.bitwise_xor(LH, H[i][t][None]))
            for j in np.nonzero(d <= HAMMING)[0]:
                if lp[j]['label'] == r['label']:
                    fixed[i] = split_of['leaf-photos/' + lp[j]['file']]
                else:
                    conflict.add(i)
    groups = collections.defaultdict(list)
    for i in range(len(fr)):
        groups[uf.f(i)].append(i)
    keep = []
    for m in groups.values():
        if len({fr[i]['label'] for i in m}) > 1 or any(i in conflict for i in m):
            stats['field_conflict_left_out'] += len(m)
            continue
        keep.append(m)
    stats['field_follow_leaf_photos'] += sum(len(m) for m in keep if any(i in fixed for i in m))
    for label in sorted({r['label'] for r in fr}):
        gl = sorted([m for m in keep if fr[m[0]]['label'] == label], key=lambda m: fr[m[0]]['file'])
        n = sum(len(m) for m in gl)
        sp = assign(gl, n, random.Random(f'{SEED}:field:{label}'), fixed)
        for m in gl:
            for i in m:
                out.append({'file': 'field-photos/' + fr[i]['file'], 'label': label, 'source_kind': 'field_plantdoc',
                            'group': 'field|' + fr[m[0]]['file'], 'split': sp[i]})
    # other-plants: one class for us, split per PlantDoc class
    orow = list(csv.DictReader(open(os.path.join(ROOT, 'other-plants/manifest.csv'))))
    orow.sort(key=lambda r: r['file'])
    _, uf = group_near([os.path.join(ROOT, 'other-plants', r['file']) for r in orow])
    groups = collections.defaultdict(list)
    for i in range(len(orow)):
        groups[uf.f(i)].append(i)
    for label in sorted({r['label'] for r in orow}):
        gl = sorted([m for m in groups.values() if orow[m[0]]['label'] == label], key=lambda m: orow[m[0]]['file'])
        n = sum(len(m) for m in gl)
        sp = assign(gl, n, random.Random(f'{SEED}:other:{label}'))
        for m in gl:
            for i in m:
                out.append({'file': 'other-plants/' + orow[i]['file'], 'label': 'other_plant',
                            'source_kind': 'other_plant', 'group': 'other|' + orow[m[0]]['file'], 'split': sp[i]})
    return out


if __name__ == '__main__':
    main()
