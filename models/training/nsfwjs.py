#!/usr/bin/env python3
"""An ImageNet-derived start for train.py --arch mnv2: the MobileNetV2 (Keras 2.2.4, alpha 1.0, 224 px) that the
`nsfwjs` 4.4.0 npm package (MIT) ships inside its tarball, as a backbone-only checkpoint in torchvision's layout.

  npm pack nsfwjs@4.4.0 --pack-destination /tmp                     # the registry's tarball, sha512 checked here
  npm install --prefix /tmp/tfjs nsfwjs@4.4.0 @tensorflow/tfjs@4.22.0  # nsfwjs itself, for the check only
  /usr/bin/python3 models/training/nsfwjs.py --tgz /tmp/nsfwjs-4.4.0.tgz --tfjs /tmp/tfjs/node_modules \
      --out models/training/runs/nsfwjs/init.pt

The package keeps the model as two UMD modules (dist/models/mobilenet_v2/): the Keras topology with a weights
manifest, and the weights as base64 of uint8-quantised arrays (value = q * scale + min). Node evaluates the modules
(they are JavaScript, not JSON); this script dequantises the arrays and maps them onto torchvision's
`mobilenet_v2().features` (kernels HWIO -> OIHW, depthwise HWC1 -> C1HW). Two things differ and are handled:
* Keras BatchNorm has epsilon 1e-3, torchvision 1e-5: the difference is added to the running variances, exactly.
* nsfwjs feeds the network RGB / 255; this pipeline feeds (RGB / 255 - mean) / std. The first convolution is
  scaled by std and its BatchNorm's running mean shifted by the weights times the mean, exactly except at the
  image border (zero padding pads a different grey).
Keras pads stride-2 convolutions asymmetrically (0 before, 1 after), torchvision symmetrically (1, 1): a half-cell
shift that fine-tuning has to absorb (the check prints how far it moves the probabilities); the training layout
stays torchvision's.

The check: the converted network with nsfwjs's own head (average pool, dense 256-128-5) and nsfwjs itself, run
by TensorFlow.js in Node (nsfwjs_reference.cjs, from a scratch `npm install`), read 8 val photos of each source; as
nsfwjs runs it the class probabilities must agree to quantisation noise (a check on the class shares alone would
pass random weights: every photo here is "Neutral"). The checkpoint holds the features only: train.py starts both
heads new.
"""
import argparse, base64, copy, hashlib, json, os, subprocess, tarfile, tempfile
import numpy as np
import torch
import torch.nn as nn
import torchvision
import common as C

INTEGRITY = 'sha512-krC1fgeTLXtZwgdpKJ0jm7hqv0gTSRQQRL+FhOaxaJ9Wj92t42BO3csO2odwgTAgZgf2RvkwPtp0R8Aa7dc+MA=='
MODEL_DIR = 'package/dist/models/mobilenet_v2/'
KERAS_EPS, TORCH_EPS = 1e-3, 1e-5
# node prints what the two modules export: the topology with the manifest, and the base64 weights
DUMP_JS = ('const m=require(process.argv[1]+"/model.min.js"), w=require(process.argv[1]+"/group1-shard1of1.min.js");'
           'process.stdout.write(JSON.stringify({topology: m.modelTopology, manifest: m.weightsManifest, weights: w}))')


def read_package(tgz):
    digest = 'sha512-' + base64.b64encode(hashlib.sha512(open(tgz, 'rb').read()).digest()).decode()
    assert digest == INTEGRITY, f'{tgz} is not the registry\'s nsfwjs 4.4.0 ({digest})'
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(tgz) as tf:
        for name in ('model.min.js', 'group1-shard1of1.min.js'):
            with open(os.path.join(tmp, name), 'wb') as f:
                f.write(tf.extractfile(MODEL_DIR + name).read())
        out = subprocess.run(['node', '-e', DUMP_JS, tmp], check=True, capture_output=True).stdout
    return json.loads(out)


def dequantise(pkg):
    """name -> float32 array, in the manifest's order (the order of the bytes)."""
    raw = base64.b64decode(pkg['weights'])
    arrays, at = {}, 0
    for w in pkg['manifest'][0]['weights']:
        q = w['quantization']
        assert q['dtype'] == 'uint8', q
        n = int(np.prod(w['shape']))
        q8 = np.frombuffer(raw, np.uint8, n, at).reshape(w['shape'])
        arrays[w['name']] = (q8 * q['scale'] + q['min']).astype(np.float32)
        at += n
    assert at == len(raw), (at, len(raw))
    return arrays


def keras_names():
    """The Keras (conv, BatchNorm) layer names in torchvision's features order."""
    names = [('Conv1', 'bn_Conv1'), ('expanded_conv_depthwise', 'expanded_conv_depthwise_BN'),
             ('expanded_conv_project', 'expanded_conv_project_BN')]
    for b in range(1, 17):
        names += [(f'block_{b}_{part}', f'block_{b}_{part}_BN') for part in ('expand', 'depthwise', 'project')]
    return names + [('Conv_1', 'Conv_1_bn')]


@torch.no_grad()
def fill(feats, arrays):
    pairs = C.conv_bn_pairs(feats.modules())
    names = keras_names()
    assert len(pairs) == len(names), (len(pairs), len(names))
    for (conv, bn), (kc, kb) in zip(pairs, names):
        depthwise = kc.endswith('depthwise')
        k = arrays[f'{kc}/depthwise_kernel' if depthwise else f'{kc}/kernel']
        w = torch.from_numpy(k).permute((2, 3, 0, 1) if depthwise else (3, 2, 0, 1))
        assert w.shape == conv.weight.shape, (kc, w.shape, conv.weight.shape)
        conv.weight.copy_(w)
        bn.weight.copy_(torch.from_numpy(arrays[f'{kb}/gamma']))
        bn.bias.copy_(torch.from_numpy(arrays[f'{kb}/beta']))
        bn.running_mean.copy_(torch.from_numpy(arrays[f'{kb}/moving_mean']))
        bn.running_var.copy_(torch.from_numpy(arrays[f'{kb}/moving_variance']) + (KERAS_EPS - TORCH_EPS))


@torch.no_grad()
def fold_normalisation(feats):
    """From RGB/255 input to (RGB/255 - mean)/std input: x01 = x*std + mean, so conv(x01) = (W*std)(x) + sum(W*mean)."""
    conv, bn = C.conv_bn_pairs(feats.modules())[0]
    std = torch.tensor(C.STD).view(1, 3, 1, 1)
    mean = torch.tensor(C.MEAN).view(1, 3, 1, 1)
    bn.running_mean.sub_((conv.weight * mean).sum(dim=(1, 2, 3)))
    conv.weight.mul_(std)


def keras_padding(feats):
    """A copy whose stride-2 convolutions pad as Keras does (0 before, 1 after), for the check only."""
    feats = copy.deepcopy(feats)
    for parent in list(feats.modules()):
        for name, mod in list(parent.named_children()):
            if isinstance(mod, nn.Conv2d) and mod.stride == (2, 2):
                mod.padding = (0, 0)
                setattr(parent, name, nn.Sequential(nn.ZeroPad2d((0, 1, 0, 1)), mod))
    return feats


@torch.no_grad()
def nsfw_head(arrays):
    def dense(name, act):
        lin = nn.Linear(*arrays[f'{name}/kernel'].shape)
        lin.weight.copy_(torch.from_numpy(arrays[f'{name}/kernel']).T)
        lin.bias.copy_(torch.from_numpy(arrays[f'{name}/bias']))
        return [lin, act]
    return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         *dense('dense_1', nn.ReLU()), *dense('dense_2', nn.ReLU()), *dense('dense_3', nn.Softmax(1)))


def reference_probs(u8, tfjs):
    """nsfwjs's own model in TensorFlow.js (nsfwjs_reference.cjs) on the photos: n x 5 probabilities."""
    with tempfile.TemporaryDirectory() as tmp:
        photos, out = os.path.join(tmp, 'photos.bin'), os.path.join(tmp, 'probs.json')
        np.ascontiguousarray(u8).tofile(photos)
        subprocess.run(['node', os.path.join(C.HERE, 'nsfwjs_reference.cjs'), photos, str(len(u8)), out],
                       check=True, capture_output=True, env={**os.environ, 'NODE_PATH': tfjs})
        return torch.tensor(json.load(open(out)))


@torch.no_grad()
def check(raw, folded, arrays, tfjs, n=8):
    """The converted network with nsfwjs's head against nsfwjs itself on n val photos of each source: as nsfwjs
    runs it (RGB/255, Keras padding) the probabilities must agree to quantisation noise; the folded network (this
    pipeline's input) and torchvision's padding are printed beside it."""
    head = nsfw_head(arrays).eval()
    val_rows, X = C.eval_cache('val', C.read_split())
    u8 = X[C.per_source(val_rows, n, seed=0)]
    ref = reference_probs(u8, tfjs)
    x01, x = torch.as_tensor(u8).permute(0, 3, 1, 2).float() / 255, C.to_input(u8)
    diffs = []
    for label, f, inp in (('as nsfwjs runs it (RGB/255, Keras padding)', keras_padding(raw), x01),
                          ('folded (this pipeline\'s input, Keras padding)', keras_padding(folded), x),
                          ('as trained here (this pipeline\'s input, torchvision padding)', folded, x)):
        prob = head(f.eval()(inp))
        diffs.append(float((prob - ref).abs().max()))
        same = float((prob.argmax(1) == ref.argmax(1)).float().mean())
        print(f'{label}: max |p - nsfwjs| {diffs[-1]:.2e}, same top class {same:.0%} ({len(u8)} val photos)')
    assert diffs[0] < 1e-3, 'the conversion does not reproduce nsfwjs'


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--tgz', required=True, help='nsfwjs-4.4.0.tgz from `npm pack nsfwjs@4.4.0`')
    p.add_argument('--tfjs', required=True, help='node_modules with nsfwjs 4.4.0 and @tensorflow/tfjs 4 (the check)')
    p.add_argument('--out', required=True)
    args = p.parse_args()
    torch.set_num_threads(2)
    pkg = read_package(args.tgz)
    assert pkg['topology']['keras_version'] == '2.2.4', pkg['topology']['keras_version']
    arrays = dequantise(pkg)
    raw = torchvision.models.mobilenet_v2().features  # stride 32, as nsfwjs runs it, for the check
    fill(raw, arrays)
    feats = copy.deepcopy(raw)
    fold_normalisation(feats)
    check(raw, feats, arrays, args.tfjs)
    # the same parameters as common.backbone('mnv2'), whose block 13 only has another stride
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save({'model': {f'features.{k}': v for k, v in feats.state_dict().items()}, 'ema': None,
                'classes': None, 'args': {'arch': 'mnv2', 'width_mult': 1.0},
                'val': {'source': 'nsfwjs 4.4.0 MobileNetV2 (MIT), ImageNet-derived backbone'}}, args.out)
    print(f'-> {args.out}')


if __name__ == '__main__':
    main()
