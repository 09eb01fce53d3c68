"""The exported mixture's lab expert behind an ONNX `If`: read only for a batch in which some view's router weight
is above 0 (common.Mixture.floored takes weights under the mixture's lab_floor as 0), as common.Mixture.forward
does. On two cores the lab expert, 48 M of the graph's 333 M multiply-adds, is a third of a view's inference
time (the 144 px resize, the mirror image and MobileNetV3's small layers), and field photos give it no weight.

torch.onnx traces one path, not a condition: `Traced` reads the lab expert always and hands out its
probabilities and the router weights as two more outputs; `gated` moves every node that only the lab
probabilities need into the If's then-branch (the else-branch is zeros of the same shape, which the mix
multiplies by a weight of 0) and drops the two outputs. Per view the result does not depend on the other views
of its batch."""
import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto, helper

import common as C

OUTPUTS = ['logits', 'leaf', 'distance']
LAB, GATE = 'lab_probs', 'lab_gate'
TRACED_OUTPUTS = OUTPUTS + [LAB, GATE]


class Traced(nn.Module):
    """common.Mixture with the lab expert always read, and its probabilities and the router weights as outputs."""

    def __init__(self, mixture):
        super().__init__()
        self.mixture = mixture
        # torch.onnx.export restores the traced module's mode afterwards, and with it the mixture's: a fresh module
        # is in training mode, which would leave the twin reading val with batch statistics
        self.train(mixture.training)

    def forward(self, input):
        m = self.mixture
        logits, leaf, d, feat = m.field(input)
        g, pl = m.gate(feat), m.lab_probs(input)
        return torch.log(m.mix(logits, pl, g).clamp_min(1e-12)), leaf, d, pl, g


def _ancestors(producer, names, stop=frozenset()):
    """The nodes (by index) that `names` are computed from, not looking past the values in `stop`."""
    seen, pending = set(), [n for n in names if n not in stop]
    while pending:
        i = producer.get(pending.pop())
        if i is None or i in seen:
            continue
        seen.add(i)
        pending.extend(t for t in producer.nodes[i].input if t and t not in stop)
    return seen


class _Producers(dict):
    def __init__(self, nodes):
        super().__init__((out, i) for i, n in enumerate(nodes) for out in n.output)
        self.nodes = nodes


def _const(name, value, dtype=TensorProto.INT64):
    return helper.make_node('Constant', [], [name], value=helper.make_tensor(name, dtype, [len(value)], value))


def _topological(nodes, available):
    """Nodes in an order where each comes after what it reads, a branch's reads from the outer graph included."""
    def reads(n):
        names = set(n.input)
        for attr in n.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                made = {o for m in attr.g.node for o in m.output}
                names |= {t for m in attr.g.node for t in m.input if t not in made}
        return {t for t in names if t}
    done, order, waiting = set(available), [], list(nodes)
    while waiting:
        ready = [n for n in waiting if reads(n) <= done]
        assert ready, 'the graph has a cycle or reads a value nothing makes'
        for n in ready:
            order.append(n)
            done.update(n.output)
        waiting = [n for n in waiting if n not in ready]
    return order


def gated(model):
    """The graph exported from Traced, with the lab expert behind an If and only OUTPUTS left."""
    g = model.graph
    nodes = list(g.node)
    producer = _Producers(nodes)
    rest = _ancestors(producer, OUTPUTS, stop={LAB})
    branch = sorted(_ancestors(producer, [LAB]) - rest)
    assert branch and producer[LAB] in branch, 'no lab expert to gate'
    k = next(o for o in g.output if o.name == LAB).type.tensor_type.shape.dim[1].dim_value
    assert k > 0, 'the lab probabilities must have a fixed number of classes'

    read = [onnx.NodeProto.FromString(nodes[i].SerializeToString()) for i in branch]
    for n in read:
        n.output[:] = [LAB + '_read' if o == LAB else o for o in n.output]
    out_type = [helper.make_tensor_value_info(LAB + '_read', TensorProto.FLOAT, ['N', k])]
    then_branch = helper.make_graph(read, 'read_lab_expert', [], out_type)
    zeros = [helper.make_node('Shape', ['input'], ['lab_shape_in']),
             _const('lab_first', [0]), _const('lab_one', [1]), _const('lab_k', [k]),
             helper.make_node('Slice', ['lab_shape_in', 'lab_first', 'lab_one'], ['lab_n']),
             helper.make_node('Concat', ['lab_n', 'lab_k'], ['lab_shape'], axis=0),
             helper.make_node('ConstantOfShape', ['lab_shape'], [LAB + '_none'],
                              value=helper.make_tensor('zero', TensorProto.FLOAT, [1], [0.0]))]
    else_branch = helper.make_graph(zeros, 'no_lab_expert', [],
                                    [helper.make_tensor_value_info(LAB + '_none', TensorProto.FLOAT, ['N', k])])
    decide = [helper.make_node('ReduceMax', [GATE], ['lab_gate_max'], keepdims=0),
              _const('lab_gate_zero', [0.0], TensorProto.FLOAT),
              helper.make_node('Squeeze', ['lab_gate_zero'], ['lab_gate_zero_scalar']),
              helper.make_node('Greater', ['lab_gate_max', 'lab_gate_zero_scalar'], ['lab_needed']),
              helper.make_node('If', ['lab_needed'], [LAB], then_branch=then_branch, else_branch=else_branch)]

    moved = {o for i in branch for o in nodes[i].output}
    kept = [n for i, n in enumerate(nodes) if i not in set(branch)]
    available = {t.name for t in g.input} | {t.name for t in g.initializer}
    g.ClearField('node')
    g.node.extend(_topological(kept + decide, available))
    outputs = [o for o in g.output if o.name in OUTPUTS]
    g.ClearField('output')
    g.output.extend(outputs)
    info = [v for v in g.value_info if v.name not in moved]
    g.ClearField('value_info')
    g.value_info.extend(info)
    onnx.checker.check_model(model)
    return model


@torch.no_grad()
def check(mixture, onnx_path, u8, per_batch=8, tolerance=1e-4):
    """ONNX Runtime against the twin on a batch of views that all give the lab expert no weight (the If's
    else-branch) and a batch that all give it some (its then-branch), drawn from the views u8: the largest
    |probability| difference of each batch there are views for (a mixture without a floor has no weightless ones)."""
    order = np.random.default_rng(0).permutation(len(u8))
    weightless, weighted = [], []
    for i in range(0, len(order), 64):
        part = order[i:i + 64]
        g = mixture.gate(mixture.field(C.to_input(u8[part]))[3])
        weightless += part[(g == 0).numpy()].tolist()
        weighted += part[(g > 0).numpy()].tolist()
        if len(weightless) >= per_batch and len(weighted) >= per_batch:
            break
    gaps = {}
    for name, idx in (('lab expert not read', weightless), ('lab expert read', weighted)):
        if not idx:
            continue
        x = C.to_input(u8[np.sort(idx[:per_batch])])
        ort = C.onnx_runtime(onnx_path, x)['logits']
        gaps[name] = float(np.abs(np.exp(ort) - mixture(x)[0].exp().numpy()).max())
    assert weighted and max(gaps.values()) < tolerance, gaps
    return gaps
