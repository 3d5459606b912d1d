/** \file
 * Host evaluators of ONNX's signal operators (Operators.md, opset 17): DFT, STFT and
 * MelWeightMatrix, an audio model's front end, which the device does not run. They fold on
 * constants (MelWeightMatrix's inputs usually are) and otherwise run in a host segment
 * (driver/HostPartition.h). Complex values are a last dimension of 2 (real, imaginary), a real
 * input's last dimension is 1. The transforms are direct sums in double, O(n^2) per line, with
 * the twiddle factors computed once per length; MelWeightMatrix follows the operator's reference
 * (onnx/backend/test/case/node/melweightmatrix.py) step for step.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <optional>
#include <string>

namespace nhc::folding {

namespace {

using Complex = std::complex<double>;

/** The DFT of `in` (zero-padded or cut to `length`), its first `bins` outputs; the inverse one
 *  divides by the length. */
std::vector<Complex> transform(const std::vector<Complex> &in, int64_t length, int64_t bins,
                               bool inverse) {
    const double sign = inverse ? 1.0 : -1.0, pi = std::acos(-1.0);
    std::vector<Complex> twiddle(static_cast<size_t>(std::max<int64_t>(length, 1)));
    for (int64_t k = 0; k < length; k++)
        twiddle[size_t(k)] = std::polar(1.0, sign * 2 * pi * double(k) / double(length));
    std::vector<Complex> out(static_cast<size_t>(bins));
    const int64_t used = std::min<int64_t>(length, int64_t(in.size()));
    for (int64_t k = 0; k < bins; k++) {
        Complex sum = 0;
        for (int64_t n = 0; n < used; n++)
            sum += in[size_t(n)] * twiddle[size_t((k * n) % length)];
        out[size_t(k)] = inverse ? sum / double(length) : sum;
    }
    return out;
}

/** 1 for a real signal, 2 for a complex one: the input's last dimension; NHC_EFLD001 else. */
int64_t components(const Ctx &c, const HostTensor &x) {
    const int64_t last = x.rank() ? x.shape().back() : 0;
    if (x.rank() < 2 || (last != 1 && last != 2) || !dtype_is_float(x.dtype()))
        c.fail("the input " + shape_str(x.shape()) +
               " is not a float signal whose last "
               "dimension is 1 (real) or 2 (complex)");
    return last;
}

int64_t scalar_input(const Ctx &c, size_t i, const char *what) {
    const HostTensor &t = c.input(i);
    if (t.numel() != 1)
        c.fail(std::string(what) + " is not one value");
    return t.get_i64(0);
}

} // namespace

Outputs dft(const Ctx &c) {
    const HostTensor &x = c.input(0);
    const int64_t parts = components(c, x);
    const int64_t axis = c.attr_int("axis", 1);
    if (axis < 1 || axis >= x.rank() - 1)
        c.fail("axis " + std::to_string(axis) + " is not a signal dimension of " +
               shape_str(x.shape()));
    const bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
    const int64_t extent = x.shape()[size_t(axis)];
    const int64_t length = c.has_input(1) ? scalar_input(c, 1, "dft_length") : extent;
    if (length < 1 || (onesided && parts == 2))
        c.fail("dft_length " + std::to_string(length) +
               " is not positive, or onesided asks for "
               "a complex input's half");
    const int64_t bins = onesided ? length / 2 + 1 : length;
    Shape out_shape = x.shape();
    out_shape[size_t(axis)] = bins;
    out_shape.back() = 2;
    HostTensor out(x.dtype(), out_shape);
    // Lines along axis: outer dims before it, inner dims after it (without the last).
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; d++)
        outer *= x.shape()[size_t(d)];
    for (int64_t d = axis + 1; d < x.rank() - 1; d++)
        inner *= x.shape()[size_t(d)];
    std::vector<Complex> line(static_cast<size_t>(extent));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t n = 0; n < extent; n++) {
                const int64_t at = ((o * extent + n) * inner + i) * parts;
                line[size_t(n)] = {x.get_f64(at), parts == 2 ? x.get_f64(at + 1) : 0.0};
            }
            const std::vector<Complex> y = transform(line, length, bins, inverse);
            for (int64_t k = 0; k < bins; k++) {
                const int64_t at = ((o * bins + k) * inner + i) * 2;
                out.set_f64(at, y[size_t(k)].real());
                out.set_f64(at + 1, y[size_t(k)].imag());
            }
        }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs stft(const Ctx &c) {
    const HostTensor &signal = c.input(0);
    const int64_t parts = components(c, signal);
    if (signal.rank() != 3)
        c.fail("the signal " + shape_str(signal.shape()) + " is not [batch, length, 1 or 2]");
    const int64_t step = scalar_input(c, 1, "frame_step");
    const HostTensor *window = c.optional_input(2);
    const int64_t frame = c.has_input(3) ? scalar_input(c, 3, "frame_length")
                          : window       ? window->numel()
                                         : 0;
    const bool onesided = c.attr_int("onesided", 1) != 0;
    const int64_t batch = signal.shape()[0], length = signal.shape()[1];
    if (step < 1 || frame < 1 || frame > length || (window && window->numel() != frame) ||
        (onesided && parts == 2))
        c.fail("frame_step " + std::to_string(step) + ", frame_length " + std::to_string(frame) +
               " and the window do not frame a signal of " + std::to_string(length) +
               " samples (a complex signal needs onesided = 0)");
    const int64_t frames = (length - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
    HostTensor out(signal.dtype(), {batch, frames, bins, 2});
    std::vector<Complex> line(static_cast<size_t>(frame));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t n = 0; n < frame; n++) {
                const int64_t at = (b * length + f * step + n) * parts;
                const double w = window ? window->get_f64(n) : 1.0;
                line[size_t(n)] = {w * signal.get_f64(at),
                                   parts == 2 ? w * signal.get_f64(at + 1) : 0.0};
            }
            const std::vector<Complex> y = transform(line, frame, bins, false);
            for (int64_t k = 0; k < bins; k++) {
                const int64_t at = ((b * frames + f) * bins + k) * 2;
                out.set_f64(at, y[size_t(k)].real());
                out.set_f64(at + 1, y[size_t(k)].imag());
            }
        }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs mel_weight_matrix(const Ctx &c) {
    const int64_t mel_bins = scalar_input(c, 0, "num_mel_bins");
    const int64_t dft_length = scalar_input(c, 1, "dft_length");
    const int64_t sample_rate = scalar_input(c, 2, "sample_rate");
    const double lower = c.input(3).get_f64(0), upper = c.input(4).get_f64(0);
    if (mel_bins < 1 || dft_length < 1 || sample_rate < 1 || lower < 0 || upper <= lower)
        c.fail("num_mel_bins, dft_length and sample_rate must be positive and the edges "
               "0 <= lower < upper");
    std::optional<DType> type = DType::Float32;
    if (const auto *a = c.attr("output_datatype"))
        type = dtype_from_onnx(int(a->i()));
    if (!type)
        c.fail("output_datatype is not a type the compiler holds");
    const int64_t spectrogram_bins = dft_length / 2 + 1;
    // The mel scale's edges, num_mel_bins + 2 of them, mapped back to DFT bins (the reference
    // divides the mel range by that count, not by the count of steps).
    auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
    const double low_mel = mel(lower), step = (mel(upper) - low_mel) / double(mel_bins + 2);
    std::vector<int64_t> edge;
    for (int64_t i = 0; i < mel_bins + 2; i++) {
        const double hz = 700 * (std::pow(10.0, (double(i) * step + low_mel) / 2595) - 1);
        edge.push_back(int64_t(std::floor(double(dft_length + 1) * hz / double(sample_rate))));
    }
    HostTensor out(*type, {spectrogram_bins, mel_bins});
    auto set = [&](int64_t bin, int64_t m, double v) {
        if (bin < 0 || bin >= spectrogram_bins)
            c.fail("the mel edges reach DFT bin " + std::to_string(bin) + " of " +
                   std::to_string(spectrogram_bins) + " (upper_edge_hertz above sample_rate/2?)");
        out.set_f64(bin * mel_bins + m, v);
    };
    for (int64_t m = 0; m < mel_bins; m++) {
        const int64_t left = edge[size_t(m)], centre = edge[size_t(m + 1)],
                      right = edge[size_t(m + 2)];
        if (centre == left)
            set(centre, m, 1);
        else
            for (int64_t j = left; j <= centre; j++)
                set(j, m, double(j - left) / double(centre - left));
        for (int64_t j = centre; j < right; j++)
            set(j, m, double(right - j) / double(right - centre));
    }
    return std::vector<HostTensor>{std::move(out)};
}

} // namespace nhc::folding
