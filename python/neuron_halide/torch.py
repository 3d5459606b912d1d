"""neuron_halide.torch.trace: a torch module compiled through torch.onnx.export, called with and
returning torch tensors (as torch_neuronx.trace does for neuronx-cc's users)."""

import os
import tempfile

import neuron_halide


class TracedModule:
    """A compiled torch module: torch tensors in, torch tensors out (on the simulator)."""

    def __init__(self, compiled):
        self.compiled = compiled

    def __call__(self, *tensors):
        import torch
        outputs = self.compiled(*[t.detach().cpu().numpy() for t in tensors])
        if isinstance(outputs, tuple):
            return tuple(torch.from_numpy(o) for o in outputs)
        return torch.from_numpy(outputs)


def trace(module, example_inputs, **options):
    """Exports `module` on `example_inputs` (a tensor or a tuple of them) to ONNX (opset 17) and
    compiles it with neuron-halide-cc's options as keywords."""
    import torch
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    module.eval()
    with tempfile.TemporaryDirectory(prefix="neuron_halide_trace_") as folder:
        path = os.path.join(folder, "model.onnx")
        names = ["input_%d" % i for i in range(len(example_inputs))]
        with torch.no_grad():
            torch.onnx.export(module, tuple(example_inputs), path, opset_version=17,
                              input_names=names, do_constant_folding=True)
        return TracedModule(neuron_halide.compile(path, **options))
