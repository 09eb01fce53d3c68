#!/usr/bin/env python3
"""Rewrite the measured parts of the model card (models/README.md) from the files the pipeline wrote.

  /usr/bin/python3 models/training/card.py
Reads models/training/export-meta.json (export.py), models/training/eval-torch.json (evaluate.py),
models/training/wise-scan.json (interpolate.py), models/training/mixture-scan.json (mixture.py) and the training
logs in models/training/logs/, and replaces the text between the <!-- runs -->, <!-- choices -->, <!-- facts -->,
<!-- torch -->, <!-- wise --> and <!-- mixture --> start/end markers, so no figure in the card is copied by hand.
The served-path section is written by `npm run eval -- --write`.
"""
import json, os, re
import common as C

CARD = os.path.join(C.MODELS, 'README.md')
LOGS = os.path.join(C.HERE, 'logs')
meta = json.load(open(os.path.join(C.HERE, 'export-meta.json')))
ev = json.load(open(os.path.join(C.HERE, 'eval-torch.json')))
cfg = json.load(open(os.path.join(C.MODELS, 'classes.json')))
wise = json.load(open(os.path.join(C.HERE, 'wise-scan.json')))
mixture = json.load(open(os.path.join(C.HERE, 'mixture-scan.json')))
val = meta['val']
SOURCES = ['lab', 'maize_plantdoc', 'field_ibean', 'white_bg_rice', 'field_plantdoc', 'other_plant', 'non_plant']


def pct(v):
    return '–' if v is None else f'{100 * v:.1f} %'


def table(head, rows):
    line = lambda cells: '| ' + ' | '.join(str(c) for c in cells) + ' |'
    return '\n'.join([line(head), line(['---'] * len(head))] + [line(r) for r in rows])


def runs():
    """Each run's val evaluations, as its log printed them (field and lab with and without the crop given)."""
    out = []
    for name in sorted(os.listdir(LOGS)):
        evals = []
        for line in open(os.path.join(LOGS, name)):
            m = re.search(r'val\(EMA\) (.*) \| ([\d.]+) min', line)
            if m:
                v = dict(kv.split('=') for kv in m.group(1).split())
                evals.append([m.group(2)] + [pct(float(v[k])) if k in v else '–' for k in (
                    'field_plantdoc_crop', 'field_plantdoc', 'lab_crop', 'lab', 'field_ibean_crop', 'other_plant',
                    'non_plant')])
        if not evals:
            out.append(f'`logs/{name}`: no val evaluation during the run (a GPU run: `snapshots.py` read its EMA '
                       'snapshots on val afterwards, here on CPU).')
        else:
            out.append(f'`logs/{name}`\n\n' + table(
                ['minutes', 'field, crop given', 'field, no crop', 'lab, crop given', 'lab, no crop',
                 'iBean, crop given', 'other plants', 'non-plant'], evals))
    return '\n\n'.join(out)


def choices():
    leaf = [[t, f'{v[0]:.3f}', pct(v[1]), pct(v[2])] for t, v in val['leaf_threshold_scan'].items()]
    crops = [[k, pct(v['field_crop_given']), pct(v['lab_crop_given'])] for k, v in val['leaf_crops_scan'].items()]
    zooms = [[v['zoom'] or 'none', v['below'] if v['zoom'] else '–', pct(v['field_crop_given']),
              pct(v['lab_crop_given']), pct(v['ibean_crop_given']), pct(v['val_photos_zoomed'])]
             for v in val['zoom_scan']]
    return '\n\n'.join([
        'Leaf finder heat threshold (field val photos, leaves matched to PlantDoc boxes at IoU >= 0.5):',
        table(['threshold', 'F1', 'precision', 'recall'], leaf),
        'Leaf crops read beside the centre view (val, top-1 with the crop given, temperature 1):',
        table(['leaf crops', 'field', 'lab'], crops),
        f"Closer view of the middle, for photos with a leaf found, fewer than {cfg['views']['leaf_crops']} leaves "
        "cropped and a centre view whose likeliest leaf class is under *below* (val, top-1 with the crop given, "
        "temperature 1; side as a share of the centre view's). Chosen: among those losing at most "
        f"{100 * meta['args']['zoom_lab_slack']:g} points of lab and nothing of iBean, and within one field photo "
        f"of the best field figure, the one reading the fewest closer views: side {cfg['views']['zoom']}, below "
        f"{cfg['views']['zoom_below']}:",
        table(['side', 'below', 'field', 'lab', 'iBean', 'val photos read closer'], zooms)])


def origin():
    if meta['train_minutes'] is not None:
        return f"EMA weights at {meta['train_minutes']:.0f} training minutes, {meta['train_steps']} steps"
    return meta['checkpoint_val']['source']


def facts():
    v = cfg['views']
    return table(['', 'value', 'meaning'], [
        ['version', f"`{meta['model_version']}`", f"`{meta['checkpoint']}` ({origin()}), exported "
         f"{meta['exported_utc']} UTC"],
        ['size', f"{meta['onnx_mb']} MB", f"ONNX opset {meta['opset']}, sha256 `{meta['onnx_sha256'][:16]}…`"],
        ['input', f"{cfg['input']['size']} px", f"working image {v['working_size']} px, up to {v['leaf_crops']} leaf "
         f"crops (margin {v['margin']}, at least {v['min_side']} of the side, leaves over {v['max_area']} of the "
         'photo not cropped)' + (f"; with fewer leaves cropped and the centre view under {v['zoom_below']}, a "
                                 f"closer view of the middle {v['zoom']} of the side" if v['zoom'] else '')],
        ['temperature', cfg['temperature'], f"view-averaged val NLL {val['nll_before']:.3f} -> {val['nll_after']:.3f}"],
        ['`leaves.threshold`', cfg['leaves']['threshold'], 'best F1 against the field val leaf boxes'],
        ['`non_plant_threshold`, `distance_threshold`', f"{cfg['non_plant_threshold']}, "
         f"{cfg['distance_threshold']:.1f}", f"val: {pct(val['non_plant_called_plant'])} of non-plant photos "
         f"called a plant, {pct(val['plant_called_not_plant'])} of plant photos called not a plant"],
        ['`other_plant_threshold`', cfg['other_plant_threshold'], f"val: {pct(val['other_plant_caught'])} of "
         'other-plant photos called "not supported" (no crop given), at most '
         f"{pct(meta['args']['max_other_flag'])} of our crops' field photos and of the lab photos"],
        ['`unsure_threshold`', cfg['unsure_threshold'], f"val, crop given: field photos answered "
         f"{pct(val['field_answered'])} at {pct(val['field_answered_accuracy'])} right, lab "
         f"{pct(val['lab_answered'])} at {pct(val['lab_answered_accuracy'])}"],
    ])


def torch_table():
    per = ev['per_source']
    rows = [[s, d['photos'], pct(d['top1_crop_given']) if s not in ('other_plant', 'non_plant') else '–',
             pct(d['top1_no_crop']) if s not in ('other_plant', 'non_plant') else '–',
             pct(d['answered_crop_given']) if s not in ('other_plant', 'non_plant') else '–',
             pct(d['answered_accuracy']) if s not in ('other_plant', 'non_plant') else '–',
             pct(d['not_plant']), pct(d['not_supported_no_crop'])]
            for s, d in sorted(per.items(), key=lambda kv: SOURCES.index(kv[0]))]
    b = ev['boxes']
    return '\n\n'.join([
        'Test split, `/usr/bin/python3 models/training/evaluate.py` (writes `eval-torch.json`); the colour veto of '
        'the service is not in this twin.',
        table(['source', 'photos', 'top-1, crop given', 'top-1, no crop', 'answered (crop given)',
               'answered right', 'not a plant', 'not supported (no crop)'], rows),
        f"Leaf boxes on field test photos with a disease named ({b['photos_with_disease_named']}; "
        f"{b['photos_with_a_box']} with at least one box): precision {pct(b['precision'])}, recall "
        f"{pct(b['recall'])} at IoU >= {b['iou']} ({b['predicted']} boxes, {b['true_boxes']} PlantDoc leaf boxes)."])


def wise_table():
    mark = ' (chosen)' if wise['rule_met'] else ' (fallback)'
    rows = [[f"{r['alpha']:g}" + (mark if r['alpha'] == wise['chosen'] else '')] +
            [pct(r[k]) for k in ('field_plantdoc_crop', 'field_plantdoc', 'lab_crop', 'lab', 'field_ibean_crop',
                                     'maize_plantdoc_crop', 'white_bg_rice_crop', 'other_plant', 'non_plant')] +
            [f"{r['leaf_f1']:.3f} ({r['leaf_threshold']})"] for r in wise['scan']]
    n = wise['val_photos']
    return '\n\n'.join([
        f"`/usr/bin/python3 models/training/interpolate.py --scan ...` (writes `wise-scan.json`): alpha x "
        f"{wise['old']} + (1 - alpha) x {wise['new']}. Val as `train.py` reads it (centre view, mirror average, top-1; "
        f"{n['field_plantdoc']} field, {n['lab']} lab, {n['field_ibean']} iBean, {n['other_plant']} other-plant, "
        f"{n['non_plant']} non-plant photos); leaf F1 at the best heat threshold against the field val leaf boxes.",
        table(['alpha', 'field, crop given', 'field', 'lab, crop given', 'lab', 'iBean, crop given',
               'maize PlantDoc, crop given', 'rice, crop given', 'other plants', 'non-plant', 'leaf F1 (threshold)'],
              rows),
        f"Rule, fixed before the scan: among the alphas with lab >= {pct(wise['min_lab'])} and iBean >= "
        f"{pct(wise['min_ibean'])} (val, crop given), the highest field top-1 with the crop given; if none, the "
        f"highest field + lab. " + (f"Chosen: alpha {wise['chosen']:g}." if wise['rule_met'] else
                             f"No alpha met it; the highest field + lab is alpha {wise['chosen']:g}.")])


def mixture_table():
    cols = ('field_plantdoc_crop', 'field_plantdoc', 'field_answered_at_target', 'lab_crop', 'lab',
            'field_ibean_crop', 'maize_plantdoc_crop', 'white_bg_rice_crop', 'other_plant', 'non_plant')
    rows = [[r['candidate'] + (' (chosen)' if r['candidate'] == mixture['chosen'] else '')] +
            [pct(r[k]) for k in cols] for r in mixture['scan']]
    rule, n = mixture['rule'], mixture['val_photos']
    return '\n\n'.join([
        f"`/usr/bin/python3 models/training/mixture.py --out ...` (writes `mixture-scan.json`): field expert "
        f"{mixture['field']}, lab expert {mixture['lab']}; router fitted on {mixture['router_train_photos']} train "
        f"photos. Val, centre view as `train.py` reads it ({n['field_plantdoc']} field, {n['lab']} lab, "
        f"{n['field_ibean']} iBean, {n['other_plant']} other-plant, {n['non_plant']} non-plant photos); the router's "
        'mean weight on the lab expert per source: ' + ', '.join(
            f'{k} {v:.3f}' for k, v in mixture['router_mean_on_val'].items()) + '.',
        table(['candidate', 'field, crop given', 'field', f"field answered at {pct(rule['answered_target'])} right",
               'lab, crop given', 'lab', 'iBean, crop given', 'maize PlantDoc, crop given', 'rice, crop given',
               'other plants', 'non-plant'], rows),
        f"Rule: among the candidates with lab >= {pct(rule['min_lab'])}, iBean >= {pct(rule['min_ibean'])} and field "
        f"at most {100 * rule['field_slack']:.1f} points under the field model's (val, crop given), the most field "
        f"photos answered at {pct(rule['answered_target'])} right. Router weights under {rule['lab_floor']:g} count as "
        "none, and the graph does not read the lab expert for them (`lab_gate.py`). " + (
            f"Chosen: {mixture['chosen']}." if mixture['rule_met'] else 'None met it: the field model alone.')])


card = open(CARD).read()
for name, text in (('runs', runs()), ('choices', choices()), ('facts', facts()), ('torch', torch_table()),
                   ('wise', wise_table()), ('mixture', mixture_table())):
    card, n = re.subn(rf'(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)',
                      lambda m: m.group(1) + text + '\n' + m.group(2), card, flags=re.S)
    assert n == 1, f'marker {name} missing in {CARD}'
open(CARD, 'w').write(card)
print('model card updated:', CARD)
