"""Shared pieces of the disease-classifier pipeline: classes, preprocessing rule, model."""
import csv, json, os, subprocess, tempfile
import numpy as np
import torch
import torch.nn as nn
import torchvision
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
# ../shared/datasets beside the repository (read-only); DATASETS overrides it.
ROOT = os.environ.get('DATASETS') or os.path.normpath(os.path.join(MODELS, '..', '..', 'shared', 'datasets'))
SPLIT = os.path.join(HERE, 'split.csv')
DATA = os.path.join(HERE, 'data')
RUNS = os.path.join(HERE, 'runs')
TRAIN_SIZE = 160  # training crops
SIZE = 224        # serving input of a checkpoint that names none (checkpoint_size): chosen on val, above the
                  # training size as FixRes predicts
WORKING = 256     # the working image the leaf crops are cut from (same field of view as the centre view)
OTHER = 'other_plant'
NON_PLANT = 'non_plant'
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
def resize_rule(size, mirror=True):
    """The serving rule at `size` px, as classes.json states it for the service; `mirror`: whether the graph also
    reads each view's mirror image (field_mirror: a mixture whose field expert reads the views alone does not, and
    only its lab expert does)."""
    reads = ('The graph runs the network on the image and on its mirror image and averages the two (logits, and the '
             'leaf maps with the mirrored one flipped back).' if mirror else
             'The graph runs the field network on the image alone, and the lab network on the image and on its mirror '
             'image, averaging the two.')
    return (f'resize so the shorter side is {size} px (bilinear with antialiasing, i.e. a triangle filter scaled to '
            f'the reduction; the longer side becomes round(long*{size}/short)), then centre-crop {size}x{size} '
            f'(left=ceil((w-{size})/2), top=ceil((h-{size})/2)), as sharp does; sharp: resize({{width:{size},'
            f'height:{size},fit:"cover",position:"centre",kernel:"linear"}}) after .rotate() for EXIF orientation; '
            'then RGB, /255, (x-mean)/std, NCHW float32. ' + reads)


def checkpoint_size(ck):
    """The serving size a checkpoint is read at: its own `size` (snapshots.py --size, kept by mixture.py), else
    SIZE."""
    return int(ck.get('size', SIZE))


def read_split():
    return list(csv.DictReader(open(SPLIT)))


def class_names(rows=None):
    rows = rows or read_split()
    leaf = sorted({r['label'] for r in rows if r['label'] not in (OTHER, NON_PLANT)})
    assert len(leaf) == 25, len(leaf)
    return leaf + [OTHER, NON_PLANT]


def load_rgb(path):
    im = Image.open(path)
    try:
        from PIL import ImageOps
        im = ImageOps.exif_transpose(im)
    except Exception:
        pass
    return im.convert('RGB')


def resize_short(im, short=SIZE):
    w, h = im.size
    if w <= h:
        nw, nh = short, max(short, int(round(h * short / w)))
    else:
        nw, nh = max(short, int(round(w * short / h))), short
    if (nw, nh) != (w, h):
        im = im.resize((nw, nh), Image.BILINEAR, reducing_gap=None)
    return im


def center_crop(im, size=SIZE):
    w, h = im.size
    # sharp/libvips 'centre' gravity puts the odd pixel on the left/top: offset = ceil((w-size)/2)
    l, t = (w - size + 1) // 2, (h - size + 1) // 2
    return im.crop((l, t, l + size, t + size))


def preprocess_uint8(path, size=SIZE):
    """The serving rule: shorter side -> size (bilinear, antialiased), centre crop size x size. Returns HxWx3 uint8."""
    return np.asarray(center_crop(resize_short(load_rgb(path), size), size), dtype=np.uint8)


def to_input(u8):
    """uint8 NHWC (numpy or tensor) -> normalised float NCHW tensor."""
    x = torch.as_tensor(u8).permute(0, 3, 1, 2).float().div_(255.0)
    m = torch.tensor(MEAN).view(1, 3, 1, 1)
    s = torch.tensor(STD).view(1, 3, 1, 1)
    return (x - m) / s


ARCHS = ('mnv3s', 'mnv2')


def backbone(arch, width_mult=1.0):
    """Feature layers at stride 16 (a 14x14 map at 224 px): the last stride-2 block set to stride 1.
    mnv3s: torchvision MobileNetV3-small (576 channels), the shipped model's. mnv2: torchvision MobileNetV2 (1280
    channels, 4.9x the multiply-adds: conv_macs), the layout nsfwjs.py fills with ImageNet-derived weights."""
    if arch == 'mnv3s':
        feats, last_s2 = torchvision.models.mobilenet_v3_small(width_mult=width_mult).features, 9
    elif arch == 'mnv2':
        feats, last_s2 = torchvision.models.mobilenet_v2(width_mult=width_mult).features, 14
    else:
        raise ValueError(f'unknown arch {arch!r}; one of {ARCHS}')
    for mod in feats[last_s2].modules():
        if isinstance(mod, nn.Conv2d) and mod.stride == (2, 2):
            mod.stride = (1, 1)
    return feats


def out_channels(feats):
    return [m for m in feats.modules() if isinstance(m, nn.Conv2d)][-1].out_channels


class LeafNet(nn.Module):
    """Backbone features at stride 16 (`backbone`) with two 1x1 heads on that map: class activation maps (their
    mean = the logits) and a leaf finder (CenterNet-style: leaf-centre heat, x/y offset within the cell, log
    width/height as fractions of the image)."""

    def __init__(self, num_classes, width_mult=1.0, dropout=0.2, arch='mnv3s'):
        super().__init__()
        self.features = backbone(arch, width_mult)
        ch = out_channels(self.features)
        self.drop = nn.Dropout2d(dropout) if dropout > 0 else nn.Identity()
        self.cam = nn.Conv2d(ch, num_classes, 1)
        self.leaf = nn.Sequential(nn.Conv2d(ch, 64, 1), nn.ReLU(inplace=True), nn.Conv2d(64, 5, 1))
        nn.init.constant_(self.leaf[2].bias, 0.0)
        with torch.no_grad():
            self.leaf[2].bias[0] = -2.2  # heat starts near 0.1, as CenterNet does, so the focal loss is stable

    def forward(self, x):
        """-> logits [N,K], leaf [N,5,G,G], pooled features [N,C]."""
        f = self.features(x)
        logits = self.cam(self.drop(f)).mean(dim=(2, 3))
        return logits, self.leaf(f), f.mean(dim=(2, 3))


class Served(nn.Module):
    """What the service runs: the network on the image and on its mirror image, averaged (the mirrored leaf map
    flipped back, its x offset mirrored within the cell), and the squared Mahalanobis distance of the pooled
    features to the nearest training class (tied covariance, whitened with `proj`, class means `means`)."""

    def __init__(self, net, proj=None, means=None):
        super().__init__()
        self.net = net
        c = net.cam.in_channels
        self.register_buffer('proj', torch.as_tensor(proj if proj is not None else np.zeros((c, 1)), dtype=torch.float32))
        self.register_buffer('means', torch.as_tensor(means if means is not None else np.zeros((1, 1)), dtype=torch.float32))

    def forward(self, input):
        return self.read(torch.cat([input, input.flip(3)]))[:3]

    def read(self, both):
        """both: the views and their mirror images, stacked -> logits, leaf maps, distance, pooled features."""
        n = both.shape[0] // 2
        logits, leaf, feat = self.net(both)
        lm = leaf[n:].flip(3)
        lm = torch.cat([lm[:, :1], -lm[:, 1:2], lm[:, 2:]], 1)  # sigmoid(-a) = 1 - sigmoid(a): x offset mirrored
        return self.with_distance((logits[:n] + logits[n:]) / 2, (leaf[:n] + lm) / 2, (feat[:n] + feat[n:]) / 2)

    def read_once(self, views):
        """read without the mirror images (the network's output on the views alone)."""
        return self.with_distance(*self.net(views))

    def with_distance(self, logits, leaf, feat):
        z = feat @ self.proj
        d = ((z.unsqueeze(1) - self.means.unsqueeze(0)) ** 2).sum(-1).min(1).values
        return logits, leaf, d, feat


class Mixture(Served):
    """Served, with a second expert for the leaf classes (mixture.py): the model trained and served at `lab_size`
    before the field fine-tune, reading the same views shrunk inside the graph, and a router on the field
    expert's pooled features, r = sigmoid(w.f + b), g = beta + (1 - beta) r, taken as 0 under `lab_floor`. The
    leaf-class probabilities (each expert at its own temperature, renormalised over the leaf classes) are mixed
    g lab + (1 - g) field, scaled by the field expert's leaf mass; other_plant and non_plant stay the field
    expert's. `logits` are the log of that distribution, so softmax(logits / T) still gives probabilities; leaf
    maps and distance are unchanged."""

    def __init__(self, net, lab, mix, proj=None, means=None):
        super().__init__(net, proj, means)
        self.lab = lab
        self.lab_size = int(mix['lab_size'])
        self.field_mirror = field_mirror(mix)
        self.n_leaf = int(mix['n_leaf'])  # the leaf classes come first, then other_plant and non_plant
        for k in ('router_w', 'router_b', 'beta', 't_field', 't_lab', 'lab_rows'):
            self.register_buffer(k, torch.as_tensor(mix[k]))
        # mixtures written before the floor existed read the lab expert for every view
        self.register_buffer('lab_floor', torch.as_tensor(float(mix.get('lab_floor', 0.0))))

    def forward(self, input):
        logits, leaf, d, feat = self.field(input)
        g = self.gate(feat)
        # The lab expert is a third of a view's inference time, and field photos give it no weight: it is read only
        # for a batch where some view needs it, as the exported graph's If node does (lab_gate.py).
        pl = self.lab_probs(input) if bool((g > 0).any()) else input.new_zeros(input.shape[0], self.n_leaf)
        return torch.log(self.mix(logits, pl, g).clamp_min(1e-12)), leaf, d

    def field(self, input):
        """The field expert's logits, leaf maps, distance and pooled features: on the views and their mirror
        images, averaged, or on the views alone where the mixture says so (field_mirror)."""
        return self.read(torch.cat([input, input.flip(3)])) if self.field_mirror else self.read_once(input)

    def experts(self, input):
        """-> field(input), and the lab expert's logits over the leaf classes."""
        return (*self.field(input), self.lab_logits(input))

    def lab_logits(self, input):
        """The lab expert on the views and their mirror images, shrunk to its size, averaged, over the leaf classes."""
        both = torch.cat([input, input.flip(3)])
        zl = self.lab(nn.functional.interpolate(both, size=(self.lab_size, self.lab_size), mode='bilinear',
                                                align_corners=False))[0]
        n = input.shape[0]
        return ((zl[:n] + zl[n:]) / 2).index_select(1, self.lab_rows)

    def lab_probs(self, input):
        return torch.softmax(self.lab_logits(input) / self.t_lab, 1)

    def gate(self, feat):
        """The router's weight on the lab expert for each view."""
        return self.floored(self.beta + (1 - self.beta) * torch.sigmoid(feat @ self.router_w + self.router_b))

    def floored(self, g):
        """g, with weights under lab_floor taken as none: such a weight moves no probability by more than the floor."""
        return torch.where(g >= self.lab_floor, g, torch.zeros_like(g))

    def mix(self, logits, pl, g):
        """The mixed class probabilities for the lab expert's leaf probabilities pl and the router's weight g [N]."""
        pf = torch.softmax(logits / self.t_field, 1)
        k, g = self.n_leaf, g.unsqueeze(1)
        leaf_mass = pf[:, :k].sum(1, keepdim=True)
        # the field expert's leaf probabilities are its share already: no division by a mass that may underflow
        leaf = g * leaf_mass * pl + (1 - g) * pf[:, :k]
        return torch.cat([leaf, pf[:, k:]], 1)


def field_mirror(mix):
    """Whether a mixture's field expert also reads the mirror images (mixture.py --no-field-mirror: half its
    cost); a model without a mixture always does."""
    return bool(mix.get('field_mirror', True)) if mix else True


def served_for(net, ck, proj=None, means=None):
    """What the service runs for a checkpoint: Served, or Mixture when mixture.py wrote it."""
    mix = ck.get('mixture')
    if mix is None:
        return Served(net, proj, means).eval()
    return Mixture(net, net_from_state(mix['lab_model'], mix['lab_classes'], mix['lab_args']), mix, proj,
                   means).eval()


def net_from_state(state, classes, run_args):
    """A LeafNet in eval mode from weights that may lack the leaf finder (the model before the field model had
    none: from_onnx.py leaves it out), float32 whatever their type (a snapshot's are float16)."""
    net = net_for(classes, run_args)
    missing, unexpected = net.load_state_dict(state, strict=False)
    assert not unexpected and all(k.startswith('leaf.') for k in missing), (missing, unexpected)
    return net.eval()


@torch.no_grad()
def conv_macs(net, size=SIZE):
    """Multiply-adds of the network's convolutions for one size x size image: what a view costs, whatever the
    runtime (the service reads each view and its mirror image)."""
    total, hooks = [0], []
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(lambda m, i, o: total.__setitem__(
                0, total[0] + o.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1])))
    was = net.training
    net.eval()
    net(torch.zeros(1, 3, size, size))
    net.train(was)
    for h in hooks:
        h.remove()
    return total[0]


def conv_bn_pairs(modules):
    """(conv, the BatchNorm right after it or None) for every conv of a list of modules in registration order,
    which is forward order here: the pairs an export folds into one conv each."""
    mods = list(modules)
    return [(m, mods[i + 1] if i + 1 < len(mods) and isinstance(mods[i + 1], nn.BatchNorm2d) else None)
            for i, m in enumerate(mods) if isinstance(m, nn.Conv2d)]


def val_subset(rows, X, n_lab=1200):
    """The val photos train.py evaluates on: every non-lab one and a fixed random n_lab of the lab ones."""
    keep = np.array([r['source_kind'] != 'lab' for r in rows])
    keep[np.random.default_rng(0).choice(np.nonzero(~keep)[0], n_lab, replace=False)] = True
    return [r for r, k in zip(rows, keep) if k], X[keep]


def val_set(rows=None, classes=None, size=SIZE):
    """The val photos that checkpoints are read on (val_subset, at `size`): their rows, uint8 views, class
    indices and source kinds."""
    rows = rows or read_split()
    classes = classes or class_names(rows)
    val_rows, X = val_subset(*eval_cache('val', rows, size))
    return (val_rows, X, np.array([classes.index(r['label']) for r in val_rows]),
            np.array([r['source_kind'] for r in val_rows]))


def field_score(ve):
    """The val score that picks a checkpoint (train.py --select field, snapshots.py): field accuracy with the crop
    given, a quarter of lab accuracy as the tie-break."""
    return ve['field_plantdoc_crop'] + 0.25 * ve['lab']


@torch.no_grad()
def served_logits(model, X):
    """The logits of val as the service reads it (centre view at the serving size, mirror average)."""
    model.eval()
    # channels-last: about 2x faster on CPU for these depthwise networks, the same eager maths
    served = Served(model).to(memory_format=torch.channels_last)
    return torch.cat([served(to_input(X[i:i + 200]).contiguous(memory_format=torch.channels_last))[0]
                      for i in range(0, len(X), 200)]).numpy()


def evaluate(model, X, y, kind, classes):
    """source_accuracy of val as the service reads it (served_logits)."""
    return source_accuracy(served_logits(model, X), y, kind, classes)


def answered_share(conf, right, target):
    """The largest share of photos answered (confidence at or above a threshold) of which at least `target` are
    right: how much an unsure threshold fitted for that accuracy leaves answered."""
    order = np.argsort(-conf)
    acc = np.cumsum(right[order]) / np.arange(1, len(order) + 1)
    # a threshold answers every photo with the same confidence at once
    ends = np.r_[conf[order][1:] != conf[order][:-1], True]
    ok = np.nonzero(ends & (acc >= target))[0]
    return float((ok.max() + 1) / len(conf)) if len(ok) else 0.0


def field_answered_at(P, y, kind, classes, target):
    """The PlantDoc field photos' answered share at `target` right, crop given (P: [N, K] probabilities)."""
    narrowed = np.where(same_crop(y, classes), P, 0)
    field = kind == 'field_plantdoc'
    top = narrowed.max(1) / narrowed.sum(1)
    right = narrowed.argmax(1) == y
    return answered_share(top[field], right[field], target)


def leaf_classes(classes):
    """The indices of the leaf classes (every class but other_plant and non_plant): what a stated crop narrows."""
    return [i for i, c in enumerate(classes) if c not in (NON_PLANT, OTHER)]


TEMPERATURES = np.exp(np.linspace(np.log(0.4), np.log(4), 60))


def source_nll(P, y, kind):
    """The negative log-likelihood of the true classes under P [N, K], averaged per source and then over the
    sources, so that 1,200 lab photos do not outweigh 263 field ones."""
    return float(np.mean([-np.log(np.clip(P[kind == s, y[kind == s]], 1e-12, 1)).mean() for s in sorted(set(kind))]))


def fit_temperature(nll_at):
    """The temperature of TEMPERATURES at which nll_at(T), a val NLL at temperature T, is lowest."""
    return float(TEMPERATURES[int(np.argmin([nll_at(t) for t in TEMPERATURES]))])


def same_crop(y, classes):
    """[N, K]: which classes belong to the crop of each photo's true class (other_plant and non_plant are their
    own "crop"): the classes a stated crop narrows to."""
    crop_of = np.array([c.split('__')[0] for c in classes])
    return crop_of[None, :] == crop_of[y][:, None]


def source_accuracy(scores, y, kind, classes):
    """Accuracy per source over all classes, and with the crop given (argmax within the true crop's classes) for
    the leaf sources; scores [N, K] are logits or probabilities."""
    pred = scores.argmax(1)
    pred_crop = np.where(same_crop(y, classes), scores, -np.inf).argmax(1)
    res = {}
    for k in sorted(set(kind)):
        mk = kind == k
        res[k] = float((pred[mk] == y[mk]).mean())
        if k not in (NON_PLANT, OTHER):
            res[k + '_crop'] = float((pred_crop[mk] == y[mk]).mean())
    return res


def net_for(classes, run_args, dropout=0.0):
    """The LeafNet a checkpoint's or snapshot's train.py arguments describe."""
    return LeafNet(len(classes), width_mult=run_args.get('width_mult', 1.0), dropout=dropout,
                   arch=run_args.get('arch', 'mnv3s'))


def load_checkpoint(path, use_ema=True):
    ck = torch.load(path, map_location='cpu', weights_only=False)
    net = net_for(ck['classes'], ck['args'])
    sd = ck['ema'] if (use_ema and ck.get('ema') is not None) else ck['model']
    net.load_state_dict(sd)
    net.eval()
    return net, ck


def per_source(rows, n, seed=None):
    """A mask keeping at most n rows of each source_kind: the first ones, or a fixed random subset with a seed."""
    keep = np.zeros(len(rows), bool)
    for kind in {r['source_kind'] for r in rows}:
        idx = [i for i, r in enumerate(rows) if r['source_kind'] == kind]
        if seed is not None:
            idx = np.random.default_rng(seed).permutation(idx)
        keep[idx[:n]] = True
    return keep


def leaf_boxes(r):
    """A split row's leaf boxes [[x, y, w, h]] (fractions of the photo) from its dataset's manifest, or []."""
    return MANIFEST_BOXES().get(r['file'], [])


_boxes = {}


def MANIFEST_BOXES():
    if not _boxes:
        for d in ('field-photos', 'other-plants'):
            for r in csv.DictReader(open(os.path.join(ROOT, d, 'manifest.csv'))):
                _boxes[f'{d}/{r["file"]}'] = json.loads(r['leaf_boxes'])
    return _boxes


def views_cache(name, files, size=SIZE):
    """uint8 serving-rule views [N, size, size, 3] of these dataset files, kept in data/<name>.npz beside their
    file list and rebuilt when the list changes."""
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, f'{name}.npz')
    if os.path.exists(path) and list(np.load(path)['files']) == list(files):
        return np.load(path)['X']
    X = np.stack([preprocess_uint8(os.path.join(ROOT, f), size) for f in files])
    np.savez(path, X=X, files=np.array(files))
    return X


def eval_cache(split_name, rows=None, size=SIZE):
    """uint8 cache of the serving-rule size x size crops for one split (val/test/train), built once."""
    os.makedirs(DATA, exist_ok=True)
    rows = rows or read_split()
    sel = [r for r in rows if r['split'] == split_name]
    path = os.path.join(DATA, f'eval_{split_name}_{size}.npy')
    files_path = os.path.join(DATA, f'eval_{split_name}_{size}.files.json')
    if os.path.exists(path) and os.path.exists(files_path):
        files = json.load(open(files_path))
        if files == [r['file'] for r in sel]:
            return sel, np.load(path)
    X = np.zeros((len(sel), size, size, 3), np.uint8)
    for i, r in enumerate(sel):
        X[i] = preprocess_uint8(os.path.join(ROOT, r['file']), size)
    np.save(path, X)
    json.dump([r['file'] for r in sel], open(files_path, 'w'))
    return sel, X


def onnx_runtime(onnx_path, x):
    """The outputs of an ONNX file run by ONNX Runtime, the service's engine, on the float32 NCHW batch x, by name
    (models/eval/onnx-outputs.ts: Debian's Python has no onnxruntime)."""
    with tempfile.TemporaryDirectory() as tmp:
        x.numpy().astype(np.float32).tofile(os.path.join(tmp, 'input.f32'))
        shapes = json.loads(subprocess.run(
            ['npx', 'tsx', 'models/eval/onnx-outputs.ts', os.path.abspath(onnx_path), os.path.join(tmp, 'input.f32'),
             str(x.shape[0]), str(x.shape[-1]), os.path.join(tmp, 'out-')], cwd=os.path.dirname(MODELS), check=True,
            capture_output=True, text=True).stdout.strip().splitlines()[-1])
        return {k: np.fromfile(os.path.join(tmp, f'out-{k}.f32'), np.float32).reshape(v) for k, v in shapes.items()}
