#!/usr/bin/env python3
"""Train the field model (classifier + leaf finder) on CPU, or on a lent GPU (--device cuda --pack, README).

  /usr/bin/python3 models/training/train.py --minutes 70 --run main --init runs/shipped/best.pt
Reads split.csv, builds (once) uint8 caches under models/training/data/, trains with batched-tensor
augmentation and sampling by source (lab / field / leaf crops / other plants / non-plants, class-balanced
within each), evaluates on val every few minutes as the service reads photos (centre view, mirror average) and
keeps runs/<run>/best.pt (by --select: best field val accuracy with the crop given, lab val accuracy as the
tie-break; or best lab val accuracy with the crop given among evaluations that hold the field accuracy) and
last.pt. Leaf crops: squares around the PlantDoc leaf boxes of the train photos, labelled with the photo's class.
"""
import argparse, copy, io, json, math, multiprocessing, os, time, random, collections
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
import common as C
import views as V

p = argparse.ArgumentParser()
p.add_argument('--minutes', type=float, default=60.0, help='wall-clock training budget (lr schedule follows it)')
p.add_argument('--bs', type=int, default=64)
p.add_argument('--lr', type=float, default=3e-3)
p.add_argument('--wd', type=float, default=0.02)
p.add_argument('--smoothing', type=float, default=0.05)
p.add_argument('--width-mult', type=float, default=1.0)
p.add_argument('--arch', default='mnv3s', choices=C.ARCHS, help='backbone (common.backbone)')
p.add_argument('--ema', type=float, default=0.998)
p.add_argument('--mix', default='lab=0.45,field=0.22,leafcrop=0.15,other=0.11,non_plant=0.07',
               help='share of each sample group in a batch (lab = every leaf-photos source)')
p.add_argument('--leaf-weight', type=float, default=1.0, help='weight of the leaf-finder loss')
p.add_argument('--eval-minutes', type=float, default=8.0, help='evaluate on val every this many minutes')
p.add_argument('--run', default='main')
p.add_argument('--seed', type=int, default=0)
p.add_argument('--threads', type=int, default=2)
p.add_argument('--init', default='', help='optional checkpoint to start from')
p.add_argument('--select', default='field', choices=('field', 'lab'),
               help='which val evaluation best.pt keeps: field = field accuracy with the crop given + a quarter of lab '
                    'accuracy; lab = the highest lab accuracy with the crop given among evaluations whose field '
                    'accuracy with the crop given is at least --field-floor (none kept if no evaluation reaches it)')
p.add_argument('--field-floor', type=float, default=0.0, help='with --select lab: the field accuracy to hold')
p.add_argument('--aug', type=float, default=1.0, help='augmentation strength (1 = full; <1 scales the probabilities of rotation/background/degradations and the colour ranges)')
p.add_argument('--viz', default='', help='write a PNG grid of one augmented batch to this path and exit')
p.add_argument('--device', default='cpu', help="cuda: augmentation and training on the GPU, bf16 autocast")
p.add_argument('--pack', default='', help='read the train cache from a pack.py file instead of ../shared')
p.add_argument('--snapshots', default='',
               help='comma-separated minutes at which the EMA weights join runs/<run>/snapshots.pt (float16), for '
                    'runs without val (--eval-minutes 0, e.g. on a GPU machine without ../shared); snapshots.py '
                    'reads them on val afterwards')
p.add_argument('--run-dir', default='', help='where the run writes (default runs/<run>)')
p.add_argument('--peers', type=int, default=1,
               help='train this many models at once on the same batches, each also pulled toward the mean prediction '
                    'of the others (deep mutual learning, --mutual); each peer keeps its own EMA, snapshots and '
                    'best.pt under <run dir>/peer<k>/')
p.add_argument('--mutual', type=float, default=1.0, help='with --peers: weight of each peer\'s KL to the others')
p.add_argument('--teachers', default='',
               help='comma-separated snapshots.pt files: the mean prediction of their last snapshots on each batch is a '
                    'soft target (knowledge distillation, Hinton et al. 2015), weighted by --distill')
p.add_argument('--distill', type=float, default=1.0, help='with --teachers: weight of the KL from their mean prediction')
args = p.parse_args()

torch.set_num_threads(args.threads)
dev = torch.device(args.device)
torch.manual_seed(args.seed); np.random.seed(args.seed); random.seed(args.seed)
T0 = time.time()
rows = C.read_split()
classes = C.class_names(rows)
cidx = {c: i for i, c in enumerate(classes)}
os.makedirs(C.DATA, exist_ok=True)
run_dir = args.run_dir or os.path.join(C.RUNS, args.run)
os.makedirs(run_dir, exist_ok=True)
log_f = open(os.path.join(run_dir, 'log.txt'), 'a')


def log(*a):
    s = ' '.join(str(x) for x in a)
    print(s, flush=True)
    log_f.write(s + '\n'); log_f.flush()


log(f'== run {args.run} start {time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())} UTC args={vars(args)}')


# ---------------------------------------------------------------- caches
def fg_mask(u8, kind):
    """Rough foreground (leaf) mask for plain-background photos, uint8 0..255."""
    a = u8.astype(np.float32) / 255.0
    mx, mn = a.max(2), a.min(2)
    sat = (mx - mn) / (mx + 1e-3)
    if kind == 'white_bg_rice':
        m = ((sat > 0.12) | (mx < 0.55)).astype(np.float32)
    else:  # PlantVillage grey/black/white backgrounds
        m = ((sat > 0.20) & (mx > 0.12)).astype(np.float32)
    im = Image.fromarray((m * 255).astype(np.uint8)).filter(__import__('PIL.ImageFilter', fromlist=['x']).MaxFilter(3))
    im = im.filter(__import__('PIL.ImageFilter', fromlist=['x']).GaussianBlur(1.5))
    return np.asarray(im, dtype=np.uint8)


def leaf_mask(u8, kind):
    """The mask background replacement pastes with: plain-background photos only, none (zeros) for the rest."""
    return fg_mask(u8, kind) if kind in ('lab', 'white_bg_rice') else np.zeros(u8.shape[:2], np.uint8)


GROUP_OF = {'lab': 'lab', 'maize_plantdoc': 'lab', 'field_ibean': 'lab', 'white_bg_rice': 'lab',
            'field_plantdoc': 'field', 'other_plant': 'other', 'non_plant': 'non_plant'}
KINDS = ['lab', 'maize_plantdoc', 'field_ibean', 'white_bg_rice', 'field_plantdoc', 'other_plant', 'non_plant', 'leafcrop']
MAXB = 12  # leaf boxes kept per sample


def decode_pack(blob_kind):
    blob, kind = blob_kind
    u8 = np.asarray(Image.open(io.BytesIO(blob)).convert('RGB'), dtype=np.uint8)
    return u8, leaf_mask(u8, kind)


def pack_cache(path):
    z = np.load(path, allow_pickle=False)
    assert json.loads(str(z['classes'])) == classes and int(z['size']) == C.TRAIN_SIZE, 'pack of another split'
    blob, offs = z['blob'], z['offs']
    work = [(blob[offs[i]:offs[i + 1]].tobytes(), KINDS[k]) for i, k in enumerate(z['kind'])]
    with multiprocessing.Pool(os.cpu_count()) as pool:
        XM = pool.map(decode_pack, work, chunksize=64)
    return (np.stack([a for a, _ in XM]), np.stack([m for _, m in XM]), z['y'], z['kind'], z['src'], z['B'])


def train_cache():
    if args.pack:
        return pack_cache(args.pack)
    path = os.path.join(C.DATA, f'train_cache_{C.TRAIN_SIZE}.npz')
    sel = [r for r in rows if r['split'] == 'train']
    key = [r['file'] for r in sel]
    if os.path.exists(path):
        z = np.load(path, allow_pickle=False)
        if json.loads(str(z['key'])) == key:
            return z['X'], z['M'], z['y'], z['kind'], z['src'], z['B']
    S_ = C.TRAIN_SIZE
    X, M, Y, K, S, B = [], [], [], [], [], []

    def add(u8, r, kind, i, boxes=()):
        X.append(u8)
        M.append(leaf_mask(u8, kind))
        Y.append(cidx[r['label']]); K.append(KINDS.index(kind)); S.append(i)
        b = np.full((MAXB, 4), -1.0, np.float32)
        for j, bx in enumerate(sorted(boxes, key=lambda q: -q[2] * q[3])[:MAXB]):
            b[j] = bx
        B.append(b)

    t = time.time()
    for i, r in enumerate(sel):
        im = C.load_rgb(os.path.join(C.ROOT, r['file']))
        kd = r['source_kind']
        boxes = C.leaf_boxes(r)
        if boxes:
            # photos with leaf boxes are squares (PlantDoc's export): the whole photo, boxes unchanged
            add(np.asarray(im.resize((S_, S_), Image.BILINEAR, reducing_gap=None), dtype=np.uint8), r, kd, i, boxes)
            W, H = im.size
            for bx in sorted(boxes, key=lambda q: -q[2] * q[3])[:6]:
                if bx[2] * bx[3] > 0.5:
                    continue
                x0, y0, side = V.crop_window(bx)
                c = im.crop((round(x0 * W), round(y0 * H), round((x0 + side) * W), round((y0 + side) * H)))
                add(np.asarray(c.resize((S_, S_), Image.BILINEAR, reducing_gap=None), dtype=np.uint8), r, 'leafcrop', i)
            continue
        im = C.resize_short(im, S_)
        w, h = im.size
        # centre crop (the serving view) + extra crops along the long side of elongated photos (rice, some maize)
        L = max(w, h)
        offs = [(L - S_) // 2]
        if L > 1.3 * S_:
            n = min(6, int(math.ceil((L - S_) / (S_ * 0.5))) + 1)
            offs = sorted(set(offs + [int(round(k * (L - S_) / (n - 1))) for k in range(n)]))
        for o in offs:
            box = (o, (h - S_) // 2, o + S_, (h - S_) // 2 + S_) if w >= h else ((w - S_) // 2, o, (w - S_) // 2 + S_, o + S_)
            add(np.asarray(im.crop(box), dtype=np.uint8), r, kd, i)
        if i % 3000 == 0:
            log(f'  cache {i}/{len(sel)} {time.time()-t:.0f}s')
    X, M, Y, K, S, B = np.stack(X), np.stack(M), np.array(Y, np.int64), np.array(K, np.int64), np.array(S, np.int64), np.stack(B)
    np.savez(path, X=X, M=M, y=Y, kind=K, src=S, B=B, key=json.dumps(key))
    return X, M, Y, K, S, B


Xtr, Mtr, ytr, ktr, srctr, Btr = train_cache()
log(f'train cache {Xtr.shape} built/loaded at {time.time()-T0:.0f}s')
if args.eval_minutes > 0:
    val_rows, Xva, yva, kva = C.val_set(rows, classes)
    log(f'val cache {Xva.shape} at {time.time()-T0:.0f}s')
NONPLANT = cidx[C.NON_PLANT]
bg_pool = torch.from_numpy(Xtr[ytr == NONPLANT]).permute(0, 3, 1, 2).contiguous().to(dev)  # uint8 N,3,H,W

# ---------------------------------------------------------------- sampling weights
mix = {k: float(v) for k, v in (kv.split('=') for kv in args.mix.split(','))}
group = np.array([('leafcrop' if KINDS[k] == 'leafcrop' else GROUP_OF[KINDS[k]]) for k in ktr])
n_img = collections.Counter(zip(srctr.tolist(), group.tolist()))  # samples per source image and group
w = np.zeros(len(ytr))
for gname, share in mix.items():
    gm = group == gname
    for c in np.unique(ytr[gm]):
        m = gm & (ytr == c)
        per = np.array([1.0 / n_img[(s_, gname)] for s_ in srctr[m]])
        w[m] = per / per.sum() / len(np.unique(ytr[gm])) * share
w /= w.sum()
log('sample groups: ' + ', '.join(f'{g_}={int((group == g_).sum())} ({w[group == g_].sum():.2f})' for g_ in mix))
Xtr_t = torch.from_numpy(Xtr).permute(0, 3, 1, 2).to(dev)  # uint8 (a view on the CPU)
Mtr_t = torch.from_numpy(Mtr).to(dev)
ktr_t, ytr_t, Btr_t = (torch.from_numpy(a).to(dev) for a in (ktr, ytr, Btr))
MEAN = torch.tensor(C.MEAN, device=dev).view(1, 3, 1, 1)
STD = torch.tensor(C.STD, device=dev).view(1, 3, 1, 1)


# ---------------------------------------------------------------- augmentation on batched tensors
def rand(n, a, b):
    return torch.empty(n, device=dev).uniform_(a, b)


def coin(n, p_):
    return torch.rand(n, device=dev) < p_


def augment(idx):
    B = len(idx)
    x = Xtr_t[idx].float().div_(255)                      # B,3,H,W in [0,1]
    m = Mtr_t[idx].float().div_(255).unsqueeze(1)          # B,1,H,W
    kind = ktr_t[idx]
    y = ytr_t[idx]
    # -- geometry: random resized crop + rotation + flips, one affine grid for the batch
    A = args.aug
    composite = ((kind == 0) | (kind == 3)) & coin(B, 0.45 * A)
    scale = torch.where(composite, rand(B, 0.55, 1.15), rand(B, 1 - 0.5 * A, 1.0))  # fraction of the side kept (>1 = zoom out)
    aspect = torch.exp(rand(B, -0.2, 0.2))
    sx, sy = scale * aspect.sqrt(), scale / aspect.sqrt()
    boxes = Btr_t[idx]                                      # B,MAXB,4 (x,y,w,h; -1 = none)
    has_box = boxes[:, 0, 0] >= 0
    # photos with leaf boxes keep them upright (an axis-aligned box stays one under scale, shift and flips)
    ang = rand(B, -math.pi, math.pi) * (coin(B, 0.7 * A) & ~has_box).float()
    fx = torch.where(coin(B, 0.5), -1.0, 1.0)
    fy = torch.where(coin(B, 0.3), -1.0, 1.0)
    tx = (1 - sx).clamp(min=0) * rand(B, -1, 1) + torch.where(composite, rand(B, -0.25, 0.25), 0.0)
    ty = (1 - sy).clamp(min=0) * rand(B, -1, 1) + torch.where(composite, rand(B, -0.25, 0.25), 0.0)
    cos, sin = torch.cos(ang), torch.sin(ang)
    theta = torch.zeros(B, 2, 3, device=dev)
    theta[:, 0, 0] = cos * sx * fx; theta[:, 0, 1] = -sin * sy; theta[:, 0, 2] = tx
    theta[:, 1, 0] = sin * sx * fx; theta[:, 1, 1] = cos * sy * fy; theta[:, 1, 2] = ty
    grid = F.affine_grid(theta, (B, 3, C.TRAIN_SIZE, C.TRAIN_SIZE), align_corners=False)
    x = F.grid_sample(x, grid, mode='bilinear', padding_mode='reflection', align_corners=False)
    m = F.grid_sample(m, grid, mode='bilinear', padding_mode='zeros', align_corners=False)
    # -- cluttered backgrounds for plain-background photos: paste the leaf (soft mask) onto a non-plant
    #    photo crop or a random smooth texture
    ci = torch.nonzero(composite).flatten()
    if len(ci):
        nb = len(ci)
        bg = bg_pool[torch.randint(len(bg_pool), (nb,), device=dev)].float().div_(255)
        # random crop/zoom of the background photo
        th = torch.zeros(nb, 2, 3, device=dev); s = rand(nb, 0.4, 1.0)
        th[:, 0, 0] = s * torch.where(coin(nb, 0.5), -1.0, 1.0); th[:, 1, 1] = s
        th[:, 0, 2] = (1 - s) * rand(nb, -1, 1); th[:, 1, 2] = (1 - s) * rand(nb, -1, 1)
        bg = F.grid_sample(bg, F.affine_grid(th, (nb, 3, C.TRAIN_SIZE, C.TRAIN_SIZE), align_corners=False),
                           padding_mode='reflection', align_corners=False)
        tex = torch.rand(nb, 3, 1, 1, device=dev) * 0.8 + 0.1 + 0.25 * F.interpolate(torch.randn(nb, 3, 8, 8, device=dev), size=C.TRAIN_SIZE, mode='bicubic', align_corners=False)
        # greenish foliage-like textures sometimes (fields are green)
        use_tex = coin(nb, 0.3).view(-1, 1, 1, 1).float()
        bg = use_tex * tex.clamp(0, 1) + (1 - use_tex) * bg
        bg = bg * rand(nb, 0.5, 1.1).view(-1, 1, 1, 1)  # background often darker / out of exposure
        # slight blur on the background (depth of field)
        bgb = F.avg_pool2d(bg, 5, 1, 2, count_include_pad=False)
        sel = coin(nb, 0.5).view(-1, 1, 1, 1).float()
        bg = sel * bgb + (1 - sel) * bg
        mm = m[ci].clamp(0, 1)
        x[ci] = mm * x[ci] + (1 - mm) * bg
    # -- colour: brightness, contrast, saturation, per-channel gain (white balance), gamma
    b = rand(B, 1 - 0.35 * A, 1 + 0.35 * A).view(-1, 1, 1, 1)
    x = x * b
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * rand(B, 1 - 0.35 * A, 1 + 0.35 * A).view(-1, 1, 1, 1) + mean
    g = x.mean(1, keepdim=True)
    x = (x - g) * rand(B, 1 - 0.4 * A, 1 + 0.4 * A).view(-1, 1, 1, 1) + g
    x = x * (1 + 0.08 * A * torch.randn(B, 3, 1, 1, device=dev))
    x = x.clamp(0, 1) ** torch.exp(rand(B, -0.25 * A, 0.25 * A)).view(-1, 1, 1, 1)
    # -- blur (defocus / motion-ish) on a subset
    bi = torch.nonzero(coin(B, 0.25 * A)).flatten()
    if len(bi):
        k = 3 if random.random() < 0.6 else 5
        x[bi] = F.avg_pool2d(x[bi], k, 1, k // 2, count_include_pad=False)
    # -- resolution loss (JPEG/phone-like degradation): down-up sample a subset
    di = torch.nonzero(coin(B, 0.25 * A)).flatten()
    if len(di):
        r = random.choice([48, 64, 80, 96])
        x[di] = F.interpolate(F.interpolate(x[di], size=r, mode='bilinear', align_corners=False, antialias=True),
                              size=C.TRAIN_SIZE, mode='bilinear', align_corners=False)
    # -- blocky 8x8 quantisation-like artefact + sensor noise
    ni = torch.nonzero(coin(B, 0.3 * A)).flatten()
    if len(ni):
        x[ni] = x[ni] + torch.randn(len(ni), 1, 1, 1, device=dev).abs() * 0.04 * torch.randn(len(ni), 3, C.TRAIN_SIZE, C.TRAIN_SIZE, device=dev)
    qi = torch.nonzero(coin(B, 0.15 * A)).flatten()
    if len(qi):
        blk = F.interpolate(F.avg_pool2d(x[qi], 8), scale_factor=8, mode='nearest')
        x[qi] = 0.75 * x[qi] + 0.25 * blk
    x = x.clamp(0, 1)
    return (x - MEAN) / STD, y, leaf_targets(boxes, has_box, sx * fx, sy * fy, tx, ty)


def leaf_targets(boxes, has_box, ax, ay, tx, ty):
    """CenterNet targets on the G x G grid after the affine map (input = a * output + t in [-1, 1] coordinates):
    Gaussian heat at each visible leaf's centre cell, the centre's offset in its cell and the log size there.
    A leaf less than 40 % inside the output is dropped; where two leaves share a centre cell the later one's
    offset and size stay."""
    G = C.TRAIN_SIZE // 16
    Bn = boxes.shape[0]
    x, y, w, h = boxes.unbind(-1)                                        # B,MAXB
    ax, ay, tx, ty = (v.view(-1, 1) for v in (ax, ay, tx, ty))
    # box corners through the inverse map, in [0, 1] of the output
    xa, xb = ((2 * x - 1 - tx) / ax + 1) / 2, ((2 * (x + w) - 1 - tx) / ax + 1) / 2
    ya, yb = ((2 * y - 1 - ty) / ay + 1) / 2, ((2 * (y + h) - 1 - ty) / ay + 1) / 2
    x0, x1, y0, y1 = torch.minimum(xa, xb), torch.maximum(xa, xb), torch.minimum(ya, yb), torch.maximum(ya, yb)
    cx0, cx1, cy0, cy1 = x0.clamp(min=0), x1.clamp(max=1), y0.clamp(min=0), y1.clamp(max=1)
    ok = ((w > 0) & (cx1 > cx0) & (cy1 > cy0) & ((cx1 - cx0) * (cy1 - cy0) >= 0.4 * (x1 - x0) * (y1 - y0))
          & has_box.view(-1, 1))
    cx, cy, bw, bh = (cx0 + cx1) / 2, (cy0 + cy1) / 2, (cx1 - cx0).clamp(min=1e-6), (cy1 - cy0).clamp(min=1e-6)
    j, i = (cx * G).long().clamp(0, G - 1), (cy * G).long().clamp(0, G - 1)
    sig = (torch.sqrt(bw * bh) * G / 5).clamp(min=0.6)
    grid = torch.arange(G, device=boxes.device).float() + 0.5
    gx = (grid.view(1, 1, 1, G) - (cx * G).view(Bn, -1, 1, 1)) ** 2
    gy = (grid.view(1, 1, G, 1) - (cy * G).view(Bn, -1, 1, 1)) ** 2
    g = torch.exp(-(gx + gy) / (2 * sig * sig).view(Bn, -1, 1, 1)) * ok.view(Bn, -1, 1, 1).float()
    heat = g.max(1).values if g.shape[1] else torch.zeros(Bn, G, G, device=boxes.device)
    reg = torch.zeros(Bn, 4, G, G, device=boxes.device)
    regm = torch.zeros(Bn, G, G, device=boxes.device)
    vals = torch.stack([cx * G - j, cy * G - i, torch.log(bw), torch.log(bh)], -1)   # B,MAXB,4
    for k in range(boxes.shape[1]):  # in box order, so a later leaf in the same cell wins as before
        b = torch.nonzero(ok[:, k]).flatten()
        heat[b, i[b, k], j[b, k]] = 1.0
        reg[b, :, i[b, k], j[b, k]] = vals[b, k]
        regm[b, i[b, k], j[b, k]] = 1.0
    return heat, reg, regm, has_box


def leaf_loss(pred, heat, reg, regm, has_box):
    """CenterNet focal loss on the heat map + L1 on offsets and log sizes at leaf centres, photos with boxes only."""
    if not has_box.any():
        return pred.sum() * 0
    pred, heat, reg, regm = pred[has_box], heat[has_box], reg[has_box], regm[has_box]
    p = torch.sigmoid(pred[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    focal = -(pos * (1 - p) ** 2 * torch.log(p) + (1 - pos) * (1 - heat) ** 4 * p ** 2 * torch.log(1 - p)).sum()
    npos = pos.sum().clamp(min=1)
    off = (torch.abs(torch.sigmoid(pred[:, 1:3]) - reg[:, 0:2]) * regm.unsqueeze(1)).sum()
    size = (torch.abs(pred[:, 3:5] - reg[:, 2:4]) * regm.unsqueeze(1)).sum()
    return (focal + off + 0.5 * size) / npos


def draw(n):
    return torch.from_numpy(np.random.choice(len(ytr), size=n, p=w)).to(dev)


if args.viz:
    xb, yb, _ = augment(draw(64))
    u = ((xb * STD + MEAN).clamp(0, 1) * 255).byte().permute(0, 2, 3, 1).cpu().numpy()
    sheet = np.zeros((8 * C.TRAIN_SIZE, 8 * C.TRAIN_SIZE, 3), np.uint8)
    for i in range(64):
        sheet[(i // 8) * C.TRAIN_SIZE:(i // 8 + 1) * C.TRAIN_SIZE, (i % 8) * C.TRAIN_SIZE:(i % 8 + 1) * C.TRAIN_SIZE] = u[i]
    Image.fromarray(sheet).save(args.viz)
    print([classes[i] for i in yb.tolist()])
    raise SystemExit(0)

# ---------------------------------------------------------------- model / optimiser
def start_weights():
    """--init's weights in this run's class order, or None."""
    if not args.init:
        return None
    ck = torch.load(args.init, map_location='cpu', weights_only=False)
    assert ck['args'].get('arch', 'mnv3s') == args.arch, f'--init is an {ck["args"].get("arch")} checkpoint'
    sd = ck['ema'] if ck.get('ema') is not None else ck['model']
    if 'cam.weight' in sd and ck['classes'] != classes:
        # a model with fewer classes (the shipped one has no other_plant): its rows move to their class, a new
        # class starts from the mean of the others
        old = ck['classes']
        for k in ('cam.weight', 'cam.bias'):
            t = sd[k]
            rows_ = [t[old.index(c)] if c in old else t.mean(0) for c in classes]
            sd[k] = torch.stack(rows_)
    log(f'init from {args.init} ({ck.get("val")})')
    return sd


def make_peer(sd):
    """One model and its EMA; each peer draws its own new heads."""
    net = C.net_for(classes, vars(args), dropout=0.2)
    if sd is not None:
        missing, unexpected = net.load_state_dict(sd, strict=False)
        # a backbone-only start (nsfwjs.py) leaves both heads new; a LeafNet start at most the leaf finder
        heads = ('leaf.', 'cam.') if 'cam.weight' not in sd else ('leaf.',)
        assert not unexpected and all(k.startswith(heads) for k in missing), (missing, unexpected)
    ema = C.net_for(classes, vars(args), dropout=0.2)
    ema.load_state_dict(net.state_dict())
    net.to(dev, memory_format=layout); ema.to(dev)
    for q in ema.parameters():
        q.requires_grad_(False)
    return net, ema


cuda = dev.type == 'cuda'
# oneDNN's convolutions, depthwise ones included, run faster on channels-last batches on a CPU too: d's recipe
# trained 26 images/s against 19.6 on two Xeon cores (model card, "What was tried")
layout = torch.channels_last
sd0 = start_weights()
peers = [make_peer(sd0) for _ in range(args.peers)]
peer_dirs = [run_dir] if args.peers == 1 else [os.path.join(run_dir, f'peer{k}') for k in range(args.peers)]
for d_ in peer_dirs:
    os.makedirs(d_, exist_ok=True)
decay, no_decay = [], []
for net, _ in peers:
    for n_, q in net.named_parameters():
        (no_decay if q.ndim <= 1 else decay).append(q)
opt = torch.optim.AdamW([{'params': decay, 'weight_decay': args.wd}, {'params': no_decay, 'weight_decay': 0}], lr=args.lr)
crit = nn.CrossEntropyLoss(label_smoothing=args.smoothing)
ema_float = [(e, n_) for net, ema in peers for e, n_ in zip(ema.state_dict().values(), net.state_dict().values())
             if e.is_floating_point()]
ema_other = [(e, n_) for net, ema in peers for e, n_ in zip(ema.state_dict().values(), net.state_dict().values())
             if not e.is_floating_point()]


@torch.no_grad()
def ema_update(step):
    d = min(args.ema, (1 + step) / (10 + step))
    torch._foreach_mul_([e for e, _ in ema_float], d)
    torch._foreach_add_([e for e, _ in ema_float], [n_ for _, n_ in ema_float], alpha=1 - d)
    for e, n_ in ema_other:
        e.copy_(n_)


def kl_from(target, lg):
    """KL(target || softmax(lg)), the mean over the photos of the batch."""
    return F.kl_div(torch.log_softmax(lg, 1), target, reduction='batchmean')


def mutual_loss(logits):
    """Deep mutual learning (Zhang et al. 2018): each peer's KL from the mean prediction of the others, which are
    held fixed for it; with too few field photos to fit one model, the others' softened view of a photo regularises
    each, and what they agree on becomes one network's."""
    probs = [torch.softmax(lg, 1).detach() for lg in logits]
    total = sum(probs)
    return sum(kl_from((total - pk) / (len(logits) - 1), lg) for lg, pk in zip(logits, probs))


def load_teacher(path):
    """The last snapshot of a snapshots.pt file, frozen."""
    pack = torch.load(path, map_location='cpu', weights_only=False)
    assert pack['classes'] == classes, f'{path}: another class list'
    t = C.net_from_state(pack['snaps'][-1]['ema'], classes, pack['args'])
    t.to(dev, memory_format=layout)
    for q in t.parameters():
        q.requires_grad_(False)
    log(f'teacher {path}: snapshot at {pack["snaps"][-1]["minutes"]:.1f} min')
    return t


teachers = [load_teacher(f) for f in args.teachers.split(',') if f]


# ---------------------------------------------------------------- loop
budget = args.minutes * 60.0
T_train = time.time()


def lr_at(frac):
    warm = 0.03
    if frac < warm:
        return args.lr * frac / warm
    return args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, (frac - warm) / (1 - warm)))))


def score(ve):
    """Checkpoint choice on val. field: field accuracy with the crop given first, lab accuracy as the tie-break.
    lab: for a fine-tune from a field model that must win lab accuracy back without giving up the field accuracy
    it starts from, so an evaluation under the floor is never kept (-1 never beats the starting best)."""
    if args.select == 'lab':
        return ve['lab_crop'] if ve['field_plantdoc_crop'] >= args.field_floor else -1.0
    return C.field_score(ve)


def save_snapshot(ema, snaps, out_dir):
    """The EMA weights so far (float16 halves the file: it travels back from a lent GPU machine), written whole
    each time, so a run stopped at its time limit still leaves the ones taken."""
    snaps.append({'minutes': (time.time() - T_train) / 60, 'step': step,
                  'ema': {k: (v.half() if v.is_floating_point() else v).cpu() for k, v in ema.state_dict().items()}})
    path = os.path.join(out_dir, 'snapshots.pt')
    torch.save({'classes': classes, 'args': vars(args), 'snaps': snaps}, path + '.tmp')
    os.replace(path + '.tmp', path)
    log(f'  snapshot at {snaps[-1]["minutes"]:.1f} min, step {step} -> {path}')


snap_at = sorted(float(m) for m in args.snapshots.split(',') if m)
snaps = [[] for _ in peers]
evaluating = args.eval_minutes > 0
step, next_eval = 0, (args.eval_minutes * 60 if evaluating else math.inf)
best = [-1.0 for _ in peers]
tl = tc = tn = tleaf = tkl = tdist = 0.0
te = time.time()
K = len(peers)
while True:
    frac = (time.time() - T_train) / budget
    if frac >= 1.0:
        break
    for net, _ in peers:
        net.train()
    for gq in opt.param_groups:
        gq['lr'] = lr_at(frac)
    xb, yb, (heat, reg, regm, has_box) = augment(draw(args.bs))
    xb = xb.contiguous(memory_format=layout)
    with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
        outs = [net(xb) for net, _ in peers]
        if teachers:
            with torch.no_grad():
                taught = sum(torch.softmax(t(xb)[0].float(), 1) for t in teachers) / len(teachers)
    logits = [o[0].float() for o in outs]
    lleaf = sum(leaf_loss(o[1].float(), heat, reg, regm, has_box) for o in outs)
    loss = sum(crit(lg, yb) for lg in logits) + args.leaf_weight * lleaf
    if K > 1:
        lkl = mutual_loss(logits)
        loss = loss + args.mutual * lkl
        tkl += lkl.detach() * len(yb)
    if teachers:
        ldist = sum(kl_from(taught, lg) for lg in logits)
        loss = loss + args.distill * ldist
        tdist += ldist.detach() * len(yb)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    ema_update(step)
    step += 1
    # running sums stay on the device: no wait for the GPU at every step; with peers, their mean
    tl += loss.detach() * len(yb) / K; tleaf += lleaf.detach() * len(yb) / K
    tc += sum((lg.argmax(1) == yb).sum() for lg in logits) / K; tn += len(yb)
    if step % 50 == 0:
        print(f'  step {step} loss {tl/tn:.3f} (leaf {tleaf/tn:.3f}' + (f', mutual {tkl/tn/K:.3f}' if K > 1 else '') +
              (f', distil {tdist/tn/K:.3f}' if teachers else '') +
              f') acc {tc/tn:.3f} lr {lr_at(frac):.2e} {tn/(time.time()-te):.0f} img/s '
              f'elapsed {(time.time()-T_train)/60:.1f}m', flush=True)
    end = (time.time() - T_train) >= budget
    if args.snapshots and ((snap_at and (time.time() - T_train) >= snap_at[0] * 60) or end):
        snap_at = [m for m in snap_at if m * 60 > time.time() - T_train]
        for (_, ema), sn, d_ in zip(peers, snaps, peer_dirs):
            save_snapshot(ema, sn, d_)
    if not evaluating or ((time.time() - T_train) < next_eval and not end):
        continue
    next_eval += args.eval_minutes * 60
    for k, ((net, ema), d_) in enumerate(zip(peers, peer_dirs)):
        ve = C.evaluate(copy.deepcopy(ema).cpu(), Xva, yva, kva, classes)
        log((f'peer {k} ' if K > 1 else '') + f'step {step} train_loss {tl/tn:.3f} leaf {tleaf/tn:.3f} '
            f'train_acc {tc/tn:.3f} | val(EMA) ' + ' '.join(f'{k_}={v:.4f}' for k_, v in ve.items()) +
            f' | {(time.time()-T_train)/60:.1f} min')
        ck = {'model': {k_: v.cpu() for k_, v in net.state_dict().items()},
              'ema': {k_: v.cpu() for k_, v in ema.state_dict().items()}, 'classes': classes, 'args': vars(args),
              'step': step, 'val': ve, 'minutes': (time.time() - T_train) / 60}
        torch.save(ck, os.path.join(d_, 'last.pt'))
        if score(ve) > best[k]:
            best[k] = score(ve)
            torch.save(ck, os.path.join(d_, 'best.pt'))
            log(f'  new best {best[k]:.4f} -> {d_}/best.pt')
    tl = tc = tn = tleaf = tkl = tdist = 0.0
    te = time.time()
log(f'== done: steps {step} train time {(time.time()-T_train)/60:.1f} min, total {(time.time()-T0)/60:.1f} min, '
    + (f'best {", ".join(f"{b:.4f}" for b in best)}' if min(best) >= 0
       else f'{len(snaps[0])} snapshots' if not evaluating else 'an evaluation did not qualify, no best.pt there'))
