"""Shared pieces of the disease-classifier pipeline: classes, preprocessing rule, model."""
import csv, json, os
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
TRAIN_SIZE = 128  # training crops
SIZE = 144        # serving input: chosen on val (tta_sweep.py), above the training size as FixRes predicts
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
RESIZE_RULE = (f'resize so the shorter side is {SIZE} px (bilinear with antialiasing, i.e. a triangle filter scaled to '
               f'the reduction; the longer side becomes round(long*{SIZE}/short)), then centre-crop {SIZE}x{SIZE} '
               f'(left=ceil((w-{SIZE})/2), top=ceil((h-{SIZE})/2)), as sharp does; sharp: resize({{width:{SIZE},'
               f'height:{SIZE},fit:"cover",position:"centre",kernel:"linear"}}) after .rotate() for EXIF orientation; '
               'then RGB, /255, (x-mean)/std, NCHW float32. The graph runs the network on the image and on its mirror '
               'image and averages the two (logits, and the mirrored-back class activation maps).')


def read_split():
    return list(csv.DictReader(open(SPLIT)))


def class_names(rows=None):
    rows = rows or read_split()
    leaf = sorted({r['label'] for r in rows if r['label'] != 'non_plant'})
    assert len(leaf) == 25, len(leaf)
    return leaf + ['non_plant']


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


class CamNet(nn.Module):
    """MobileNetV3-small features (last stride-2 block set to stride 1 -> stride 16, 8x8 maps at 128 px)
    -> dropout -> 1x1 conv to num_classes (class activation maps) -> global average pool -> logits."""

    def __init__(self, num_classes, width_mult=1.0, dropout=0.2):
        super().__init__()
        m = torchvision.models.mobilenet_v3_small(width_mult=width_mult)
        feats = m.features
        # features[9] is the last stride-2 inverted residual (48->96, k5); make it stride 1.
        blk = feats[9]
        for mod in blk.modules():
            if isinstance(mod, nn.Conv2d) and mod.stride == (2, 2):
                mod.stride = (1, 1)
        self.features = feats
        self.drop = nn.Dropout2d(dropout) if dropout > 0 else nn.Identity()
        self.cam = nn.Conv2d(feats[-1].out_channels, num_classes, 1)

    def forward(self, x, with_cam=False):
        f = self.features(x)
        cam = self.cam(self.drop(f))
        logits = cam.mean(dim=(2, 3))
        if with_cam:
            return logits, cam
        return logits


class FlipAverage(nn.Module):
    """What the service runs: the network on the image and on its mirror image, averaged. Mirroring the second
    class activation map back keeps the boxes where the lesions are, and logits == cam.mean still holds."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, with_cam=False):
        logits, cam = self.net(torch.cat([x, x.flip(3)]), with_cam=True)
        n = x.shape[0]
        logits = (logits[:n] + logits[n:]) / 2
        cam = (cam[:n] + cam[n:].flip(3)) / 2
        return (logits, cam) if with_cam else logits


class ExportWrapper(nn.Module):
    """The served module (a FlipAverage) with a forward that torch.onnx.export can trace: both outputs, always."""

    def __init__(self, served):
        super().__init__()
        self.net = served

    def forward(self, input):
        logits, cam = self.net(input, with_cam=True)
        return logits, cam


def load_checkpoint(path, use_ema=True):
    ck = torch.load(path, map_location='cpu')
    net = CamNet(len(ck['classes']), width_mult=ck['args'].get('width_mult', 1.0), dropout=0.0)
    sd = ck['ema'] if (use_ema and ck.get('ema') is not None) else ck['model']
    net.load_state_dict(sd)
    net.eval()
    return net, ck


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
