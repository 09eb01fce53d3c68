"""The service's decisions on a photo's probabilities (CONTRACT step 6), as the Python twin applies them.
The colour veto of src/diagnosis/image/is-plant.ts is not reproduced here: `npm run eval` measures the
served path with it."""
import numpy as np
import common as C


class Rules:
    def __init__(self, classes, th):
        self.classes = classes
        self.np = classes.index(C.NON_PLANT)
        self.other = classes.index(C.OTHER)
        self.leaf = C.leaf_classes(classes)
        self.crop = np.array([classes[i].split('__')[0] for i in self.leaf])
        self.th = th

    def decide(self, p, distance, crop=None, p_plant=None):
        """-> (outcome, ranked leaf class indices, their probabilities) with outcome one of not_plant,
        crop_not_supported, unsure, answered. p_plant (p by default): the probabilities without the closer view,
        which judge whether the photo shows a plant and one we cover."""
        th = self.th
        pp = p if p_plant is None else p_plant
        if pp[self.np] >= th['non_plant_threshold'] or distance >= th['distance_threshold']:
            return 'not_plant', [], []
        if crop is None and pp[self.other] >= th['other_plant_threshold']:
            return 'crop_not_supported', [], []
        q = p[self.leaf].astype(np.float64)
        if crop is not None:
            q = np.where(self.crop == crop, q, 0.0)
        q = q / max(q.sum(), 1e-12)
        order = np.argsort(-q)[:3]
        ranked = [self.leaf[i] for i in order]
        probs = [float(q[i]) for i in order]
        return ('answered' if probs[0] >= th['unsure_threshold'] else 'unsure'), ranked, probs
