#!/usr/bin/env python3
"""Train the compact CAM classifier from scratch on CPU.

  /usr/bin/python3 models/training/train.py --minutes 60 --run main
Reads split.csv, builds (once) uint8 caches under models/training/data/, trains with batched-tensor
augmentation and class-balanced sampling, evaluates on val each epoch (serving preprocessing) and keeps
runs/<run>/best.pt (by val accuracy of the EMA weights) and last.pt.
"""
import argparse, json, math, os, time, random, collections
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
import common as C

p = argparse.ArgumentParser()
p.add_argument('--minutes', type=float, default=60.0, help='wall-clock training budget (lr schedule follows it)')
p.add_argument('--epochs', type=int, default=1000, help='upper bound on epochs')
p.add_argument('--epoch-size', type=int, default=0, help='samples per epoch (default: number of train images)')
p.add_argument('--bs', type=int, default=64)
p.add_argument('--lr', type=float, default=3e-3)
p.add_argument('--wd', type=float, default=0.02)
p.add_argument('--smoothing', type=float, default=0.05)
p.add_argument('--width-mult', type=float, default=1.0)
p.add_argument('--ema', type=float, default=0.998)
p.add_argument('--field-boost', type=float, default=3.0, help='sampling weight of PlantDoc maize photos within their class')
p.add_argument('--run', default='main')
p.add_argument('--seed', type=int, default=0)
p.add_argument('--threads', type=int, default=2)
p.add_argument('--init', default='', help='optional checkpoint to start from')
p.add_argument('--aug', type=float, default=1.0, help='augmentation strength (1 = full; <1 scales the probabilities of rotation/background/degradations and the colour ranges)')
p.add_argument('--viz', default='', help='write a PNG grid of one augmented batch to this path and exit')
args = p.parse_args()

torch.set_num_threads(args.threads)
torch.manual_seed(args.seed); np.random.seed(args.seed); random.seed(args.seed)
T0 = time.time()
rows = C.read_split()
classes = C.class_names(rows)
cidx = {c: i for i, c in enumerate(classes)}
os.makedirs(C.DATA, exist_ok=True)
run_dir = os.path.join(C.RUNS, args.run)
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


def train_cache():
    path = os.path.join(C.DATA, 'train_cache.npz')
    sel = [r for r in rows if r['split'] == 'train']
    key = [r['file'] for r in sel]
    if os.path.exists(path):
        z = np.load(path, allow_pickle=False)
        if json.loads(str(z['key'])) == key:
            return z['X'], z['M'], z['y'], z['kind'], z['src']
    kinds = ['lab', 'field_plantdoc', 'field_ibean', 'white_bg_rice', 'non_plant']
    X, M, Y, K, S = [], [], [], [], []
    t = time.time()
    for i, r in enumerate(sel):
        im = C.load_rgb(os.path.join(C.ROOT, r['file']))
        im = C.resize_short(im, C.TRAIN_SIZE)
        w, h = im.size
        # centre crop (the serving view) + extra crops along the long side of elongated photos (rice, some maize)
        L = max(w, h)
        offs = [(L - C.TRAIN_SIZE) // 2]
        if L > 1.3 * C.TRAIN_SIZE:
            n = min(6, int(math.ceil((L - C.TRAIN_SIZE) / (C.TRAIN_SIZE * 0.5))) + 1)
            offs = sorted(set(offs + [int(round(k * (L - C.TRAIN_SIZE) / (n - 1))) for k in range(n)]))
        for o in offs:
            box = (o, (h - C.TRAIN_SIZE) // 2, o + C.TRAIN_SIZE, (h - C.TRAIN_SIZE) // 2 + C.TRAIN_SIZE) if w >= h else \
                  ((w - C.TRAIN_SIZE) // 2, o, (w - C.TRAIN_SIZE) // 2 + C.TRAIN_SIZE, o + C.TRAIN_SIZE)
            u8 = np.asarray(im.crop(box), dtype=np.uint8)
            X.append(u8)
            kd = r['source_kind']
            M.append(fg_mask(u8, kd) if kd in ('lab', 'white_bg_rice') else np.zeros((C.TRAIN_SIZE, C.TRAIN_SIZE), np.uint8))
            Y.append(cidx[r['label']]); K.append(kinds.index(kd)); S.append(i)
        if i % 3000 == 0:
            log(f'  cache {i}/{len(sel)} {time.time()-t:.0f}s')
    X, M, Y, K, S = np.stack(X), np.stack(M), np.array(Y, np.int64), np.array(K, np.int64), np.array(S, np.int64)
    np.savez(path, X=X, M=M, y=Y, kind=K, src=S, key=json.dumps(key))
    return X, M, Y, K, S


Xtr, Mtr, ytr, ktr, srctr = train_cache()
log(f'train cache {Xtr.shape} built/loaded at {time.time()-T0:.0f}s')
val_rows, Xva = C.eval_cache('val', rows)
yva = np.array([cidx[r['label']] for r in val_rows])
kva = np.array([r['source_kind'] for r in val_rows])
log(f'val cache {Xva.shape} at {time.time()-T0:.0f}s')
NONPLANT = cidx['non_plant']
bg_pool = torch.from_numpy(Xtr[ytr == NONPLANT]).permute(0, 3, 1, 2).contiguous()  # uint8 N,3,H,W

# ---------------------------------------------------------------- sampling weights
n_img = collections.Counter(srctr.tolist())  # crops per source image
cls_cnt = collections.Counter()
w = np.zeros(len(ytr))
for i in range(len(ytr)):
    w[i] = 1.0 / n_img[srctr[i]] * (args.field_boost if ktr[i] == 1 else 1.0)
for c in range(len(classes)):
    m = ytr == c
    w[m] /= w[m].sum()
w /= w.sum()
epoch_size = args.epoch_size or len(set(srctr.tolist()))
Xtr_t = torch.from_numpy(Xtr).permute(0, 3, 1, 2)  # view, uint8
Mtr_t = torch.from_numpy(Mtr)
MEAN = torch.tensor(C.MEAN).view(1, 3, 1, 1)
STD = torch.tensor(C.STD).view(1, 3, 1, 1)


# ---------------------------------------------------------------- augmentation on batched tensors
def rand(n, a, b):
    return torch.empty(n).uniform_(a, b)


def augment(idx):
    B = len(idx)
    x = Xtr_t[idx].float().div_(255)                      # B,3,H,W in [0,1]
    m = Mtr_t[idx].float().div_(255).unsqueeze(1)          # B,1,H,W
    kind = torch.from_numpy(ktr[idx])
    y = torch.from_numpy(ytr[idx])
    # -- geometry: random resized crop + rotation + flips, one affine grid for the batch
    A = args.aug
    composite = ((kind == 0) | (kind == 3)) & (torch.rand(B) < 0.45 * A)
    scale = torch.where(composite, rand(B, 0.55, 1.15), rand(B, 1 - 0.5 * A, 1.0))  # fraction of the side kept (>1 = zoom out)
    aspect = torch.exp(rand(B, -0.2, 0.2))
    sx, sy = scale * aspect.sqrt(), scale / aspect.sqrt()
    ang = rand(B, -math.pi, math.pi) * (torch.rand(B) < 0.7 * A).float()
    fx = torch.where(torch.rand(B) < 0.5, -1.0, 1.0)
    fy = torch.where(torch.rand(B) < 0.3, -1.0, 1.0)
    tx = (1 - sx).clamp(min=0) * rand(B, -1, 1) + torch.where(composite, rand(B, -0.25, 0.25), torch.zeros(B))
    ty = (1 - sy).clamp(min=0) * rand(B, -1, 1) + torch.where(composite, rand(B, -0.25, 0.25), torch.zeros(B))
    cos, sin = torch.cos(ang), torch.sin(ang)
    theta = torch.zeros(B, 2, 3)
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
        bg = bg_pool[torch.randint(len(bg_pool), (nb,))].float().div_(255)
        # random crop/zoom of the background photo
        th = torch.zeros(nb, 2, 3); s = rand(nb, 0.4, 1.0)
        th[:, 0, 0] = s * torch.where(torch.rand(nb) < 0.5, -1.0, 1.0); th[:, 1, 1] = s
        th[:, 0, 2] = (1 - s) * rand(nb, -1, 1); th[:, 1, 2] = (1 - s) * rand(nb, -1, 1)
        bg = F.grid_sample(bg, F.affine_grid(th, (nb, 3, C.TRAIN_SIZE, C.TRAIN_SIZE), align_corners=False),
                           padding_mode='reflection', align_corners=False)
        tex = torch.rand(nb, 3, 1, 1) * 0.8 + 0.1 + 0.25 * F.interpolate(torch.randn(nb, 3, 8, 8), size=C.TRAIN_SIZE, mode='bicubic', align_corners=False)
        # greenish foliage-like textures sometimes (fields are green)
        use_tex = (torch.rand(nb) < 0.3).view(-1, 1, 1, 1).float()
        bg = use_tex * tex.clamp(0, 1) + (1 - use_tex) * bg
        bg = bg * rand(nb, 0.5, 1.1).view(-1, 1, 1, 1)  # background often darker / out of exposure
        # slight blur on the background (depth of field)
        bgb = F.avg_pool2d(bg, 5, 1, 2, count_include_pad=False)
        sel = (torch.rand(nb) < 0.5).view(-1, 1, 1, 1).float()
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
    x = x * (1 + 0.08 * A * torch.randn(B, 3, 1, 1))
    x = x.clamp(0, 1) ** torch.exp(rand(B, -0.25 * A, 0.25 * A)).view(-1, 1, 1, 1)
    # -- blur (defocus / motion-ish) on a subset
    bi = torch.nonzero(torch.rand(B) < 0.25 * A).flatten()
    if len(bi):
        k = 3 if random.random() < 0.6 else 5
        x[bi] = F.avg_pool2d(x[bi], k, 1, k // 2, count_include_pad=False)
    # -- resolution loss (JPEG/phone-like degradation): down-up sample a subset
    di = torch.nonzero(torch.rand(B) < 0.25 * A).flatten()
    if len(di):
        r = random.choice([48, 64, 80, 96])
        x[di] = F.interpolate(F.interpolate(x[di], size=r, mode='bilinear', align_corners=False, antialias=True),
                              size=C.TRAIN_SIZE, mode='bilinear', align_corners=False)
    # -- blocky 8x8 quantisation-like artefact + sensor noise
    ni = torch.nonzero(torch.rand(B) < 0.3 * A).flatten()
    if len(ni):
        x[ni] = x[ni] + torch.randn(len(ni), 1, 1, 1).abs() * 0.04 * torch.randn(len(ni), 3, C.TRAIN_SIZE, C.TRAIN_SIZE)
    qi = torch.nonzero(torch.rand(B) < 0.15 * A).flatten()
    if len(qi):
        blk = F.interpolate(F.avg_pool2d(x[qi], 8), scale_factor=8, mode='nearest')
        x[qi] = 0.75 * x[qi] + 0.25 * blk
    x = x.clamp(0, 1)
    return (x - MEAN) / STD, y


if args.viz:
    xb, yb = augment(torch.from_numpy(np.random.choice(len(ytr), size=64, p=w)))
    u = ((xb * STD + MEAN).clamp(0, 1) * 255).byte().permute(0, 2, 3, 1).numpy()
    sheet = np.zeros((8 * C.TRAIN_SIZE, 8 * C.TRAIN_SIZE, 3), np.uint8)
    for i in range(64):
        sheet[(i // 8) * C.TRAIN_SIZE:(i // 8 + 1) * C.TRAIN_SIZE, (i % 8) * C.TRAIN_SIZE:(i % 8 + 1) * C.TRAIN_SIZE] = u[i]
    Image.fromarray(sheet).save(args.viz)
    print([classes[i] for i in yb.tolist()])
    raise SystemExit(0)

# ---------------------------------------------------------------- model / optimiser
net = C.CamNet(len(classes), width_mult=args.width_mult)
if args.init:
    ck = torch.load(args.init, map_location='cpu')
    net.load_state_dict(ck['ema'] if ck.get('ema') is not None else ck['model'])
    log(f'init from {args.init} (epoch {ck["epoch"]}, val {ck["val"]})')
ema = C.CamNet(len(classes), width_mult=args.width_mult)
ema.load_state_dict(net.state_dict())
for q in ema.parameters():
    q.requires_grad_(False)
decay, no_decay = [], []
for n_, q in net.named_parameters():
    (no_decay if q.ndim <= 1 else decay).append(q)
opt = torch.optim.AdamW([{'params': decay, 'weight_decay': args.wd}, {'params': no_decay, 'weight_decay': 0}], lr=args.lr)
crit = nn.CrossEntropyLoss(label_smoothing=args.smoothing)
budget = args.minutes * 60.0
T_train = time.time()


def lr_at(frac):
    warm = 0.03
    if frac < warm:
        return args.lr * frac / warm
    return args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, (frac - warm) / (1 - warm)))))


@torch.no_grad()
def ema_update(step):
    d = min(args.ema, (1 + step) / (10 + step))
    for pe, pn in zip(ema.state_dict().values(), net.state_dict().values()):
        if pe.dtype.is_floating_point:
            pe.mul_(d).add_(pn.detach(), alpha=1 - d)
        else:
            pe.copy_(pn)


@torch.no_grad()
def evaluate(model):
    model.eval()
    served = C.FlipAverage(model)  # val is judged as the service will run the model
    out = []
    for i in range(0, len(Xva), 256):
        out.append(served(C.to_input(Xva[i:i + 256])))
    lg = torch.cat(out)
    pred = lg.argmax(1).numpy()
    res = {'acc': float((pred == yva).mean()),
           'nll': float(F.cross_entropy(lg, torch.from_numpy(yva)).item())}
    for k in sorted(set(kva)):
        mk = kva == k
        res[k] = float((pred[mk] == yva[mk]).mean())
    return res


step, best, epoch = 0, -1.0, 0
done = False
while epoch < args.epochs and not done:
    epoch += 1
    net.train()
    order = np.random.choice(len(ytr), size=epoch_size, replace=True, p=w)
    tl, tc, tn, te = 0.0, 0, 0, time.time()
    for bi in range(0, epoch_size - args.bs + 1, args.bs):
        frac = (time.time() - T_train) / budget
        if frac >= 1.0:
            done = True
            break
        for gq in opt.param_groups:
            gq['lr'] = lr_at(frac)
        xb, yb = augment(torch.from_numpy(order[bi:bi + args.bs]))
        logits = net(xb)
        loss = crit(logits, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ema_update(step)
        step += 1
        tl += loss.item() * len(yb); tc += (logits.argmax(1) == yb).sum().item(); tn += len(yb)
        if step % 50 == 0:
            print(f'  ep {epoch} step {step} loss {tl/tn:.3f} acc {tc/tn:.3f} lr {lr_at(frac):.2e} '
                  f'{tn/(time.time()-te):.0f} img/s elapsed {(time.time()-T_train)/60:.1f}m', flush=True)
    if tn == 0:
        break
    frac_now = (time.time() - T_train) / budget
    if not (done or epoch >= args.epochs or frac_now > 0.6 or epoch % 3 == 0):
        log(f'epoch {epoch} steps {step} train_loss {tl/tn:.3f} train_acc {tc/tn:.3f} | {(time.time()-T_train)/60:.1f} min')
        continue
    ve = evaluate(ema)
    log(f'epoch {epoch} steps {step} train_loss {tl/tn:.3f} train_acc {tc/tn:.3f} | val(EMA) ' +
        ' '.join(f'{k}={v:.4f}' for k, v in ve.items()) + f' | {(time.time()-T_train)/60:.1f} min')
    ck = {'model': net.state_dict(), 'ema': ema.state_dict(), 'classes': classes, 'args': vars(args),
          'epoch': epoch, 'step': step, 'val': ve, 'minutes': (time.time() - T_train) / 60}
    torch.save(ck, os.path.join(run_dir, 'last.pt'))
    if ve['acc'] > best:
        best = ve['acc']
        torch.save(ck, os.path.join(run_dir, 'best.pt'))
        log(f'  new best {best:.4f} -> {run_dir}/best.pt')
log(f'== done: epochs {epoch} steps {step} train time {(time.time()-T_train)/60:.1f} min, total {(time.time()-T0)/60:.1f} min, best val acc {best:.4f}')
