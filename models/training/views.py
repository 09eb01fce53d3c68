"""The serving rule's Python twin (CONTRACT in models/README.md "How the service reads a photo"): centre view,
leaves from the leaf finder, leaf crops cut from the working image, probabilities averaged over the views.
src/diagnosis/model/leaves.ts and views.ts do the same in the service; test/diagnosis/parity.test.ts checks it."""
import math
import numpy as np
import torch
from PIL import Image
import common as C


def js_round(x):
    """JavaScript's Math.round: halves go up."""
    return int(math.floor(x + 0.5))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def iou(a, b):
    ax1, ay1, bx1, by1 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    iw = max(0.0, min(ax1, bx1) - max(a[0], b[0]))
    ih = max(0.0, min(ay1, by1) - max(a[1], b[1]))
    inter = iw * ih
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def decode_leaves(leaf, threshold, max_leaves=10, nms_iou=0.5):
    """leaf: [5, G, G] numpy -> [[x, y, w, h, heat]] (fractions of the view), strongest first."""
    G = leaf.shape[-1]
    heat = sigmoid(leaf[0])
    padded = np.pad(heat, 1, constant_values=-1)
    found = []
    for i in range(G):
        for j in range(G):
            h = heat[i, j]
            if h < threshold or h < padded[i:i + 3, j:j + 3].max():
                continue
            cx = (j + sigmoid(leaf[1, i, j])) / G
            cy = (i + sigmoid(leaf[2, i, j])) / G
            w, hh = math.exp(leaf[3, i, j]), math.exp(leaf[4, i, j])
            x0, y0 = max(0.0, cx - w / 2), max(0.0, cy - hh / 2)
            x1, y1 = min(1.0, cx + w / 2), min(1.0, cy + hh / 2)
            if x1 > x0 and y1 > y0:
                found.append([x0, y0, x1 - x0, y1 - y0, float(h)])
    found.sort(key=lambda b: -b[4])
    kept = []
    for b in found:
        if all(iou(b, k) <= nms_iou for k in kept):
            kept.append(b)
        if len(kept) == max_leaves:
            break
    return kept


def leaf_f1(leaf_maps, gt, threshold):
    """(F1, precision, recall) of the leaves decoded at a heat threshold against true boxes [[x, y, w, h]] per
    photo, each true box matched once at IoU >= 0.5."""
    tp = n_pred = n_gt = 0
    for lm, g in zip(leaf_maps, gt):
        pred = decode_leaves(lm, threshold)
        n_pred += len(pred); n_gt += len(g)
        used = set()
        for b in pred:
            best = max(((iou(b, q), j) for j, q in enumerate(g) if j not in used), default=(0, -1))
            if best[0] >= 0.5:
                used.add(best[1]); tp += 1
    prec, rec = tp / max(1, n_pred), tp / max(1, n_gt)
    return 2 * prec * rec / max(1e-9, prec + rec), prec, rec


LEAF_THRESHOLDS = np.round(np.arange(0.1, 0.61, 0.05), 2)  # the heat thresholds export.py chooses among


MARGIN = 1.3    # a leaf crop's side over the leaf box's longer side
MIN_SIDE = 0.2  # a leaf crop's smallest side, as a fraction of the photo's


def crop_window(box, margin=MARGIN, min_side=MIN_SIDE):
    """The square (x0, y0, side) the service cuts around one leaf box (x, y, w, h): the box's longer side with a
    margin, at least min_side, at most the whole photo, centred on the box and shifted (not shrunk) inside."""
    x, y, w, h = box[:4]
    side = min(1.0, max(min_side, max(w, h) * margin))
    x0 = min(max(x + w / 2 - side / 2, 0.0), 1.0 - side)
    y0 = min(max(y + h / 2 - side / 2, 0.0), 1.0 - side)
    return x0, y0, side


def zoom_window(zoom):
    """The closer view of the centre view's middle: a centred square whose side is `zoom` of the view's."""
    return (1 - zoom) / 2, (1 - zoom) / 2, zoom


def split_leaves(leaves, k, max_area):
    """Where each leaf is read, as src/diagnosis/model/views.ts splitLeaves: (answer, others, whole). A leaf over
    max_area of the view is read by the centre view (whole); of the others, the strongest k are cropped for the
    answer and the rest for their boxes alone."""
    croppable = [l for l in leaves if l[2] * l[3] <= max_area]
    return croppable[:k], croppable[k:], [l for l in leaves if l[2] * l[3] > max_area]


def working_image(path, size=C.WORKING):
    return C.center_crop(C.resize_short(C.load_rgb(path), size), size)


def cut(work, window, size):
    W = work.size[0]
    x0, y0, side = window
    s = max(1, js_round(side * W))
    left, top = min(js_round(x0 * W), W - s), min(js_round(y0 * W), W - s)
    c = work.crop((left, top, left + s, top + s))
    return np.asarray(c.resize((size, size), Image.BILINEAR, reducing_gap=None), dtype=np.uint8)


def softmax_t(logits, T):
    z = logits / T
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


@torch.no_grad()
def read_photos(served, paths, centre_u8, params, T=1.0, batch=64):
    """Runs the serving rule on photos whose centre views (uint8 [N,S,S,3]) are given. params: leaf_threshold,
    leaf_crops, margin, max_area, min_side, zooms (the closer views' sides to read, [] for none; the first is the
    one `p` takes), zoom_below (`p` takes it only when the centre view's likeliest leaf class, at temperature 1,
    has less probability: centre_top), leaf (the leaf classes' indices). Returns one dict per photo: centre logits, crop
    logits [k,K], zooms {side: logits} (read when a leaf was found but fewer than leaf_crops were cropped), p (mean
    over the views at temperature T), p_plant (p without the closer view, which judges whether the photo shows a
    plant and one we cover), distance, leaves, the leaves cropped and their windows. Leaf crops and closer views
    are cut at the centre views' size."""
    size = centre_u8.shape[1]
    zooms = list(params.get('zooms', []))
    out = []
    for i in range(0, len(paths), batch):
        lg, leaf, dist = served(C.to_input(centre_u8[i:i + batch]))
        for j in range(lg.shape[0]):
            leaves = decode_leaves(leaf[j].numpy(), params['leaf_threshold'])
            cropped = split_leaves(leaves, params['leaf_crops'], params['max_area'])[0]
            wins = [crop_window(l, params['margin'], params['min_side']) for l in cropped]
            # a leaf found, but fewer cropped than slots: most often leaves that fill the view
            closer = [zoom_window(z) for z in zooms] if leaves and len(cropped) < params['leaf_crops'] else []
            crops = np.zeros((0, lg.shape[1]), np.float32)
            read = np.zeros((0, lg.shape[1]), np.float32)
            if wins or closer:
                work = working_image(paths[i + j])
                read = served(C.to_input(np.stack([cut(work, w, size) for w in wins + closer])))[0].numpy()
                crops = read[:len(wins)]
            out.append({'centre': lg[j].numpy(), 'crops': crops, 'distance': float(dist[j]), 'leaves': leaves,
                        'cropped': cropped, 'windows': wins, 'leaf_crops': params['leaf_crops'],
                        'zoom': zooms[0] if zooms else 0, 'zoom_below': params.get('zoom_below', 1.0),
                        'leaf': params.get('leaf'),
                        'zooms': dict(zip(zooms, read[len(wins):])) if closer else {}})
    for o in out:
        o['p'] = mean_probability(o, T)
        o['p_plant'] = mean_probability(o, T, zoom=0)
    return out


@torch.no_grad()
def read_other_leaves(served, path, o, params, size):
    """The leaves of a read_photos result past the answer's crops (none over max_area), each read on its own for
    its box, as the service reads them for a diagnosed photo asked for boxes. -> (leaves, logits [m, K])."""
    others = split_leaves(o['leaves'], o['leaf_crops'], params['max_area'])[1]
    if not others:
        return [], np.zeros((0, len(o['centre'])), np.float32)
    work = working_image(path)
    wins = [crop_window(l, params['margin'], params['min_side']) for l in others]
    return others, served(C.to_input(np.stack([cut(work, w, size) for w in wins])))[0].numpy()


def centre_top(o):
    """The probability of the centre view's likeliest leaf class, over the leaf classes, at the model's own
    temperature (1): export.py chooses zoom_below before it fits the temperature, so the criterion is read as chosen."""
    q = softmax_t(o['centre'][None], 1.0)[0][o['leaf']]
    return float(q.max() / q.sum())


def reads_zoom(o, k=None, zoom=None, below=None):
    """Whether the closer view joins the views (mean_probability's rule, with its defaults)."""
    k = o['leaf_crops'] if k is None else k
    zoom = o['zoom'] if zoom is None else zoom
    below = o['zoom_below'] if below is None else below
    return bool(zoom) and bool(o['leaves']) and len(o['crops'][:k]) < k and centre_top(o) < below


def mean_probability(o, T, k=None, zoom=None, below=None):
    """The mean of the views' probabilities at temperature T: the centre view, the first k leaf crops (those the
    photo was read with by default) and, when a leaf was found but fewer than k were cropped and the centre view's
    likeliest leaf class has less than `below`, the closer view of side `zoom` (by default the one read first and
    the read's zoom_below; zoom 0 for none)."""
    k = o['leaf_crops'] if k is None else k
    zoom = o['zoom'] if zoom is None else zoom
    crops = o['crops'][:k]
    views = [o['centre'][None]] + ([crops] if len(crops) else [])
    if reads_zoom(o, k, zoom, below):
        views.append(o['zooms'][zoom][None])
    return softmax_t(np.concatenate(views), T).mean(0)
