"""The Python module (issue 18): import from Debian's python3, compile from a path, bytes or an
onnx.ModelProto with the CLI's options as keywords, call with NumPy arrays by position or name,
summary and profile, save and load, coded errors, and torch modules traced through
torch.onnx.export matching torch. Run by `meson test python` (PYTHONPATH = build/python)."""

import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import neuron_halide

SOURCE = os.environ.get("NHC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(SOURCE, "examples", "mlp")
SHARED_MODELS = os.path.join(SOURCE, "..", "shared", "models")


def example_data():
    def tensor(name):
        path = os.path.join(EXAMPLE, "test_data_set_0", name)
        return numpy_helper.to_array(onnx.load_tensor(path))
    return tensor("input_0.pb"), tensor("output_0.pb")


def rel_l2(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def example():
    return neuron_halide.compile(os.path.join(EXAMPLE, "model.onnx"))


def test_debian_python_imports_the_built_module():
    # No PYTHONPATH: scripts/build.sh put the build's package on /usr/bin/python3's path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(["/usr/bin/python3", "-c",
                        "import neuron_halide; print(neuron_halide.__file__)"],
                       capture_output=True, text=True, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    assert os.path.realpath(r.stdout.strip()) == os.path.realpath(neuron_halide.__file__)


def test_compile_a_path_and_call_by_position_or_name(example):
    x, ref = example_data()
    assert example.input_names == ["input"]
    assert example.output_names == ["logits"]
    assert rel_l2(example(x), ref) <= 1e-4
    assert rel_l2(example(input=x), ref) <= 1e-4
    assert rel_l2(example.run({"input": x})["logits"], ref) <= 1e-4


def test_bytes_and_modelproto_compile_to_the_same_neff(tmp_path, example):
    path = os.path.join(EXAMPLE, "model.onnx")
    with open(path, "rb") as f:
        from_bytes = neuron_halide.compile(f.read())
    from_proto = neuron_halide.compile(onnx.load(path))
    for i, m in enumerate([example, from_bytes, from_proto]):
        m.save(tmp_path / ("%d.neff" % i))
    neffs = [(tmp_path / ("%d.neff" % i)).read_bytes() for i in range(3)]
    assert neffs[0] == neffs[1] == neffs[2]
    with pytest.raises(TypeError):
        neuron_halide.compile(42)


def test_keyword_options_are_the_command_lines(example):
    x, ref = example_data()
    cast = neuron_halide.compile(os.path.join(EXAMPLE, "model.onnx"), optlevel=1,
                                 auto_cast="matmult", auto_cast_type="bf16")
    error = rel_l2(cast(x), ref)
    assert 1e-4 < error < 2e-2  # bf16 operands: not the fp32 NEFF
    with pytest.raises(neuron_halide.Error) as e:
        neuron_halide.compile(os.path.join(EXAMPLE, "model.onnx"), optlevel=7)
    assert e.value.code == "NHC_EARG002"
    with pytest.raises(neuron_halide.Error) as e:
        neuron_halide.compile(os.path.join(EXAMPLE, "model.onnx"), no_such_option=1)
    assert e.value.code == "NHC_EARG003"
    with pytest.raises(neuron_halide.Error) as e:
        neuron_halide.compile(os.path.join(EXAMPLE, "missing.onnx"))
    assert e.value.code.startswith("NHC_E")


def test_runtime_errors_carry_their_codes(example):
    x, _ = example_data()
    with pytest.raises(neuron_halide.Error) as e:
        example(x[:, :32])
    assert e.value.code == "NHC_ERT003"
    with pytest.raises(neuron_halide.Error) as e:
        example.run({})
    assert e.value.code == "NHC_ERT001"
    with pytest.raises(neuron_halide.Error) as e:
        example.run({"nope": x})
    assert e.value.code == "NHC_ERT002"
    with pytest.raises(neuron_halide.Error) as e:
        example(x.astype(np.complex64))  # a type no NEFF takes, refused before the runtime
    assert e.value.code == "NHC_ERT003"
    with pytest.raises(TypeError):
        example(x, x)


def test_summary_and_profile(example):
    x, _ = example_data()
    example(x)
    summary = example.summary()
    assert summary["total_time_us"] > 0
    assert set(summary["engines"]) >= {"pe", "act", "dve"}
    rows = example.profile()["rows"]
    assert abs(sum(r["time_us"] for r in rows) - summary["total_time_us"]) < 1e-6
    assert {r["group"] for r in rows} == {"fc1+relu1", "fc2"}


def test_save_and_load(tmp_path, example):
    x, ref = example_data()
    example.save(tmp_path / "m.neff")
    loaded = neuron_halide.load(tmp_path / "m.neff")
    assert np.array_equal(loaded(x), example(x))


def test_torch_resnet_matches_torch():
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    import neuron_halide.torch
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    x = torch.randn(1, 3, 64, 64)
    traced = neuron_halide.torch.trace(model, x)
    y = traced(x)
    assert isinstance(y, torch.Tensor) and y.shape == (1, 10)
    assert rel_l2(y.numpy(), model(x).detach().numpy()) <= 1e-4


def test_torch_bert_layer_matches_torch():
    torch = pytest.importorskip("torch")
    import importlib.util
    import neuron_halide.torch
    spec = importlib.util.spec_from_file_location(
        "make_dev_models", os.path.join(SHARED_MODELS, "make_dev_models.py"))
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    model, inputs, _, _, _ = dev.build("dev_bert_layer", 7002)
    traced = neuron_halide.torch.trace(model, inputs)
    y = traced(*inputs)
    assert rel_l2(y.numpy(), model(*inputs).detach().numpy()) <= 1e-4


def test_torch_detector_runs_with_host_fallback_and_matches_torch():
    # TopK and NonMaxSuppression after a small CNN: host segments between device ones, one
    # artifact, called like the module.
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    import neuron_halide.torch

    class Detector(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 2, 1), torch.nn.ReLU(),
                                            torch.nn.Conv2d(16, 32, 3, 2, 1), torch.nn.ReLU())
            self.box = torch.nn.Conv2d(32, 4, 1)
            self.score = torch.nn.Conv2d(32, 1, 1)

        def forward(self, x):
            f = self.body(x)  # [1, 32, 16, 16]
            t = self.box(f).flatten(2)[0].t()
            grid = torch.arange(16, dtype=torch.float32) * 4 + 2
            anchors = torch.stack([grid.view(1, 16).expand(16, 16).reshape(-1),
                                   grid.view(16, 1).expand(16, 16).reshape(-1)], 1)
            centre = anchors + torch.tanh(t[:, :2]) * 4
            size = torch.exp(t[:, 2:].clamp(max=2.0)) * 8
            boxes = torch.cat([centre - size / 2, centre + size / 2], 1)
            scores = torch.sigmoid(self.score(f).flatten())
            top, idx = scores.topk(64)
            keep = torchvision.ops.nms(boxes[idx], top, 0.5)
            return boxes[idx][keep], top[keep]

    torch.manual_seed(0)
    model = Detector().eval()
    x = torch.randn(1, 3, 64, 64)
    traced = neuron_halide.torch.trace(model, x)
    boxes, scores = traced(x)
    want_boxes, want_scores = model(x)
    assert boxes.shape == want_boxes.shape and boxes.shape[0] > 1
    assert rel_l2(boxes.numpy(), want_boxes.detach().numpy()) <= 1e-4
    assert rel_l2(scores.numpy(), want_scores.detach().numpy()) <= 1e-4
    assert traced.compiled.summary()["host"]["nodes"] >= 2


def test_torch_lstm_and_gru_run_on_the_host_and_match_torch():
    # A 2-layer bidirectional LSTM and a GRU between Linear layers: the recurrences run in a
    # host segment (RNN, GRU and LSTM have host evaluators), the Linears and softmax on device.
    torch = pytest.importorskip("torch")
    import neuron_halide.torch

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = torch.nn.Linear(16, 32)
            self.lstm = torch.nn.LSTM(32, 24, num_layers=2, bidirectional=True)
            self.gru = torch.nn.GRU(48, 20)
            self.out = torch.nn.Linear(20, 5)

        def forward(self, x):
            h, _ = self.lstm(torch.relu(self.inp(x)))
            g, _ = self.gru(h)
            return self.out(g).softmax(-1)

    torch.manual_seed(0)
    model = Tagger().eval()
    x = torch.randn(10, 2, 16)
    traced = neuron_halide.torch.trace(model, x)
    y = traced(x)
    assert y.shape == (10, 2, 5)
    assert rel_l2(y.numpy(), model(x).detach().numpy()) <= 1e-4
    assert traced.compiled.summary()["host"]["nodes"] == 3  # two LSTM layers, one GRU
