#!/usr/bin/env python3
"""Rewrite the measured parts of the model card (models/README.md) from the files the pipeline wrote.

  /usr/bin/python3 models/training/card.py
Reads models/training/export-meta.json (export.py), models/training/eval-torch.json (evaluate.py),
models/training/tta-sweep.json (tta_sweep.py) and the run logs in models/training/logs/, and replaces the text
between the <!-- runs:start/end -->, <!-- serving:start/end -->, <!-- facts:start/end --> and
<!-- torch:start/end --> markers, so no figure in
the card is copied by hand. The served-path section is written by `npm run eval -- --write`, the latency line
by `npm run bench`.
"""
import ast, glob, json, os, re
import common as C

CARD = os.path.join(C.MODELS, 'README.md')
LOGS = os.path.join(C.HERE, 'logs')
meta = json.load(open(os.path.join(C.HERE, 'export-meta.json')))
ev = json.load(open(os.path.join(C.HERE, 'eval-torch.json')))
sweep = json.load(open(os.path.join(C.HERE, 'tta-sweep.json')))
cal = meta['calibration_val']


def pct(v):
    return '–' if v is None else f'{100 * v:.1f} %'


def table(head, rows):
    line = lambda cells: '| ' + ' | '.join(str(c) for c in cells) + ' |'
    return '\n'.join([line(head), line(['---'] * len(head))] + [line(r) for r in rows])


def facts():
    return table(['', 'value', 'meaning'], [
        ['version', f"`{meta['model_version']}`", f"checkpoint epoch {meta['checkpoint_epoch']} "
         f"({meta['weights']} weights), exported {meta['exported_utc']} UTC"],
        ['size', f"{meta['onnx_mb']} MB", f"ONNX opset {meta['opset']}, sha256 `{meta['onnx_sha256'][:16]}…`"],
        ['temperature', f"{cal['temperature']}", 'probabilities are softmax(logits / T); T minimises val '
         f"negative log-likelihood ({cal['val_nll_before']:.3f} -> {cal['val_nll_after']:.3f})"],
        ['`non_plant_threshold`', f"{cal['non_plant_threshold']}", '"not a plant" when P(non_plant) reaches '
         f"it; on val: {pct(cal['val_nonplant_false_accept'])} of non-plant photos accepted, "
         f"{pct(cal['val_leaf_false_reject'])} of leaf photos rejected"],
        ['`unsure_threshold`', f"{cal['unsure_threshold']}", 'below it no disease is named and the farmer is '
         'asked for a better photo: the smallest value for which the val answers above it are >= '
         f"{pct(cal['target_accuracy'])} correct "
         f"(on val {pct(cal['val_accepted_accuracy'])} correct, "
         f"{pct(cal['val_coverage_of_all_leaf_photos'])} of leaf photos answered)"],
    ])


def serving_table():
    """The val sweep that chose the serving input size and the mirror average."""
    kinds = list(sweep['results'][0]['top1'])
    return '\n'.join([
        f"Val split, weights `{sweep['checkpoint']}`, `{sweep['command']}` (writes `models/training/tta-sweep.json`); "
        f"NLL at temperature {sweep['temperature']}. The served setting is {meta['input_size']} px with the mirror "
        'average.', '',
        table(['input px', 'mirror average', 'leaf photos top-1', 'NLL'] + [f'{k} top-1' for k in kinds],
              [[r['size'], 'yes' if r['mirror_average'] else 'no', pct(r['top1_leaf']), f"{r['nll']:.4f}"]
               + [pct(r['top1'][k]) for k in kinds] for r in sweep['results']])])


def torch_tables():
    out = [f"Test split, {ev['n']} photos, model `{ev['model_version']}`.", '',
           '**Per source** (top-1 / top-3 over all 26 outputs)', '',
           table(['source', 'photos', 'top-1', 'top-3'],
                 [[k, v['n'], pct(v['top1']), pct(v['top3'])] for k, v in ev['per_source_kind'].items()]
                 + [['**all leaf photos**', ev['overall_leaf']['n'], pct(ev['overall_leaf']['top1']),
                     pct(ev['overall_leaf']['top3'])]]),
           '', '**Per class and source**', '',
           table(['class', 'source', 'photos', 'top-1', 'top-3'],
                 [[*key.split('|'), v['n'], pct(v['top1']), pct(v['top3'])]
                  for key, v in ev['per_class_source_kind'].items()]),
           '', '**Most frequent confusions**', '',
           table(['true class', 'predicted', 'photos'],
                 [[d['true'], d['pred'], d['count']] for d in ev['top_confusions'][:10]])]
    e, ip, un = ev['ece'], ev['is_plant'], ev['unsure']
    out += ['', '**Calibration, is-plant and unsure rates** (model outputs only; the service adds the colour '
            'veto and the quality checks, see the served-path section)', '',
            table(['measure', 'value'], [
                ['expected calibration error (15 bins), before temperature', f"{e['before_temperature']:.4f}"],
                ['expected calibration error, after temperature', f"{e['after_temperature']:.4f}"],
                ['is-plant false accepts (non-plant photos called plants)',
                 f"{pct(ip['false_accept_rate'])} ({ip['false_accept_n']}/{ip['non_plant_test_n']})"],
                ['is-plant false rejects (leaf photos called non-plant)',
                 f"{pct(ip['false_reject_rate'])} ({ip['false_reject_n']}/{ip['leaf_test_n']})"],
                ['leaf photos answered "unsure"', pct(un['unsure_rate_leaf'])],
                ['leaf photos given a diagnosis', pct(un['answered_rate_leaf'])],
                ['top-1 of the diagnoses given', pct(un['accuracy_of_answered_leaf'])],
            ]),
            '', table(['source', 'unsure', 'answered', 'top-1 of answered', 'false rejects'],
                      [[k, pct(v['unsure_rate']), pct(v['answered_rate']), pct(v['accuracy_of_answered']),
                        pct(ip['false_reject_rate_per_source_kind'].get(k))]
                       for k, v in un['per_source_kind'].items()])]
    return '\n'.join(out)


def runs_table():
    """The training runs behind the shipped model, from the logs train.py wrote (copied to training/logs/)."""
    rows = []
    for path in sorted(glob.glob(os.path.join(LOGS, '*.txt'))):
        lines = open(path).read().splitlines()
        start = next(l for l in lines if l.startswith('== run '))
        a = ast.literal_eval(start.split('args=', 1)[1])
        vals = [l for l in lines if 'val(EMA)' in l]
        last = dict(kv.split('=') for kv in vals[-1].split('val(EMA) ')[1].split(' | ')[0].split()) if vals else {}
        done = next((l for l in lines if l.startswith('== done')), '')
        m = re.search(r'epochs (\d+) .*train time ([\d.]+) min', done)
        rows.append([f"`{a['run']}`", start.split(' start ')[1].split(' args=')[0],
                     f"`{os.path.relpath(a['init'], C.MODELS)}`" if a['init'] else 'random',
                     a['minutes'], m.group(1) if m else '?', m.group(2) if m else '?', a['lr'], a['aug']]
                    + [pct(float(last[k])) if last else '–' for k in ('lab', 'field_ibean', 'field_plantdoc', 'acc')])
    rebuilt = (f", rebuilt by `from_onnx.py` from {meta['rebuilt_from']}"
               if meta.get('rebuilt_from') else '')
    return '\n'.join([
        f"Run logs: `models/training/logs/` (copies of `runs/<run>/log.txt`). The shipped weights: "
        f"`{meta['checkpoint']}` (epoch {meta['checkpoint_epoch']}{rebuilt}). The val columns are what "
        "train.py logged during the run (runs before 2026-11-25 08:00 UTC: 128 px, no mirror average).", '',
        table(['run', 'started (UTC)', 'initial weights', 'budget min', 'epochs', 'train min', 'peak lr',
               'augmentation', 'val lab', 'val iBean', 'val PlantDoc', 'val all'], rows)])


def replace(text, name, body):
    pattern = re.compile(rf'<!-- {name}:start -->.*?<!-- {name}:end -->', re.S)
    if not pattern.search(text):
        raise SystemExit(f'{CARD} has no <!-- {name}:start --> ... <!-- {name}:end --> markers')
    return pattern.sub(lambda _: f'<!-- {name}:start -->\n{body}\n<!-- {name}:end -->', text)


card = open(CARD).read()
card = replace(card, 'runs', runs_table())
card = replace(card, 'serving', serving_table())
card = replace(card, 'facts', facts())
card = replace(card, 'torch', torch_tables())
open(CARD, 'w').write(card)
print('wrote', CARD)
