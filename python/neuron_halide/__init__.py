"""neuron_halide: compile ONNX models to NEFFs for AWS NeuronCores and run them on the simulator.

    import neuron_halide
    model = neuron_halide.compile("model.onnx", optlevel=3, auto_cast="matmult")
    y = model(x)                # NumPy arrays in (by position or name), NumPy arrays out
    model.summary()             # what neuron-halide-run --summary-json gives, of the last run
    model.profile()             # where the time went, per group of ONNX nodes (nodes.json)
    model.save("model.neff"); neuron_halide.load("model.neff")

Options are neuron-halide-cc's (docs/cli.md), `auto_cast_type="bf16"` for `--auto-cast-type
bf16`: a flag takes True, a repeatable option a dict or a list (`input_shape={"x": [1, 128]}`).
Errors of the compiler and the runtime raise neuron_halide.Error, whose .code is the NHC code of
docs/errors.md. neuron_halide.torch.trace exports a torch module through torch.onnx.export.
"""

import json
import os
import shutil
import tempfile
import weakref

import numpy as np


class Error(Exception):
    """A user error of the compiler or the runtime; `code` is its NHC code (docs/errors.md)."""

    def __init__(self, code, message):
        super().__init__("[%s] %s" % (code, message))
        self.code = code
        self.message = message


from . import _native  # noqa: E402  (the native module raises Error, defined above)

# NumPy's names of the types the runtime takes (support/Npy.h); bfloat16 has none in NumPy.
_DTYPES = {"float32", "float16", "float64", "int8", "uint8", "int16", "uint16", "int32",
           "uint32", "int64", "uint64", "bool"}


def _option_args(options):
    """neuron-halide-cc's arguments for keyword options (the CLI parses and checks them)."""
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, dict):
            for name, v in value.items():
                v = ",".join(str(d) for d in v) if isinstance(v, (list, tuple)) else str(v)
                args.append("%s=%s=%s" % (flag, name, v))
        elif isinstance(value, (list, tuple)):
            args.extend("%s=%s" % (flag, v) for v in value)
        else:
            args.append("%s=%s" % (flag, value))
    return args


def _model_path(model, folder):
    """A path to the model: a path as given, bytes or an onnx.ModelProto written to `folder`."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    if isinstance(model, (bytes, bytearray, memoryview)):
        path = os.path.join(folder, "model.onnx")
        with open(path, "wb") as f:
            f.write(model)
        return path
    raise TypeError("neuron_halide.compile takes a path, bytes or an onnx.ModelProto, not %s"
                    % type(model).__name__)


def compile(model, **options):
    """Compiles an ONNX model (a path, bytes or an onnx.ModelProto) with neuron-halide-cc's
    options as keywords; returns a CompiledModel."""
    folder = tempfile.mkdtemp(prefix="neuron_halide_")
    try:
        options.setdefault("output", os.path.join(folder, "model.neff"))
        options.setdefault("logfile", os.path.join(folder, "log-neuron-cc.txt"))
        _native.compile([_model_path(model, folder)] + _option_args(options))
        return CompiledModel(options["output"], _folder=folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def load(path):
    """A CompiledModel of a NEFF file."""
    return CompiledModel(os.fspath(path))


class CompiledModel:
    """A NEFF, called like the model: NumPy arrays in, NumPy arrays out (on the simulator)."""

    def __init__(self, path, _folder=None):
        self.path = path
        self._native = _native.LoadedModel(path)
        self.inputs = [(n, d, tuple(s)) for n, d, s in self._native.tensors(True)]
        self.outputs = [(n, d, tuple(s)) for n, d, s in self._native.tensors(False)]
        self._summary = self._profile = None
        if _folder:  # the compile's folder goes with the object
            self._cleanup = weakref.finalize(self, shutil.rmtree, _folder, True)

    @property
    def input_names(self):
        return [n for n, _, _ in self.inputs]

    @property
    def output_names(self):
        return [n for n, _, _ in self.outputs]

    def run(self, inputs, timing_only=False):
        """Runs on `inputs` ({name: array}); {name: array} of the outputs (none when timing only)."""
        given = {}
        for name, value in inputs.items():
            a = np.ascontiguousarray(value)
            if a.dtype.name not in _DTYPES:
                raise Error("NHC_ERT003", "input '%s' is a NumPy %s array; the runtime takes %s"
                            % (name, a.dtype.name, ", ".join(sorted(_DTYPES))))
            given[name] = (a.dtype.name, list(a.shape), a.tobytes())
        outputs, summary, profile = self._native.run(given, timing_only)
        self._summary, self._profile = json.loads(summary), json.loads(profile)
        return {name: np.frombuffer(data, dtype=dtype).reshape(shape).copy()
                for name, (dtype, shape, data) in outputs.items()}

    def __call__(self, *args, **kwargs):
        """The outputs in the model's order (one array when it has one output)."""
        if len(args) > len(self.inputs):
            raise TypeError("the model takes %d inputs (%s), %d given"
                            % (len(self.inputs), ", ".join(self.input_names), len(args)))
        inputs = dict(zip(self.input_names, args))
        for name in kwargs:
            if name in inputs:
                raise TypeError("input '%s' given by position and by name" % name)
        inputs.update(kwargs)
        outputs = self.run(inputs)
        ordered = tuple(outputs[n] for n in self.output_names)
        return ordered[0] if len(ordered) == 1 else ordered

    def summary(self):
        """The last run's summary (neuron-halide-run --summary-json); times it if not run yet."""
        if self._summary is None:
            self.run({}, timing_only=True)
        return self._summary

    def profile(self):
        """Where the last run's time went per group of ONNX nodes (neuron-halide-run
        --profile-dir's nodes.json); times it if not run yet."""
        if self._profile is None:
            self.run({}, timing_only=True)
        return self._profile

    def save(self, path):
        """Writes the NEFF to `path`."""
        shutil.copyfile(self.path, os.fspath(path))
