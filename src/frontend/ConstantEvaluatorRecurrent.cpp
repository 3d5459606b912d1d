/** \file
 * Host evaluators of the recurrent operators RNN, GRU and LSTM (ONNX Operators.md, opsets
 * 14-17: directions, `layout`, sequence_lens, initial states, peepholes, `clip`,
 * `input_forget`, `linear_before_reset`, the activation list with its alphas and betas). The
 * device runs none of them, so a model holding one runs it in a host segment
 * (driver/HostPartition.h). Arithmetic is in double, rounded once into the output type, as the
 * other host evaluators do.
 *
 * Where the specification is silent, ONNX Runtime's choices: `clip` bounds every gate's input
 * before its activation (not the cell's h(Ct)); with `input_forget` the forget gate is 1 - i;
 * a batch entry's steps past its sequence length give zeros in Y and leave its state as it was;
 * an activation's alpha and beta are taken in list order by the activations that have them, and
 * default as the operator of that name does.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cmath>

namespace nhc::folding {

namespace {

struct Activation {
    std::string name;
    double alpha = 0, beta = 0;

    double operator()(double x) const {
        if (name == "Sigmoid")
            return 1.0 / (1.0 + std::exp(-x));
        if (name == "Tanh")
            return std::tanh(x);
        if (name == "Relu")
            return std::max(x, 0.0);
        if (name == "LeakyRelu")
            return x >= 0 ? x : alpha * x;
        if (name == "ThresholdedRelu")
            return x > alpha ? x : 0.0;
        if (name == "ScaledTanh")
            return alpha * std::tanh(beta * x);
        if (name == "HardSigmoid")
            return std::clamp(alpha * x + beta, 0.0, 1.0);
        if (name == "Elu")
            return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
        if (name == "Softsign")
            return x / (1.0 + std::fabs(x));
        if (name == "Softplus")
            return std::log1p(std::exp(x));
        return alpha * x + beta; // Affine (names are checked by activation_list)
    }
};

/** An activation's default alpha and beta, and how many of the attribute lists it takes (the
 *  defaults of the ONNX operators of those names; ONNX Runtime's for Affine and ScaledTanh). */
bool activation_defaults(const std::string &name, Activation *a, int *takes) {
    struct Known {
        const char *name;
        double alpha, beta;
        int takes; // 0: neither, 1: alpha, 2: alpha and beta
    };
    static const Known known[] = {
        {"Sigmoid", 0, 0, 0},         {"Tanh", 0, 0, 0},     {"Relu", 0, 0, 0},
        {"Softsign", 0, 0, 0},        {"Softplus", 0, 0, 0}, {"LeakyRelu", 0.01, 0, 1},
        {"ThresholdedRelu", 1, 0, 1}, {"Elu", 1, 0, 1},      {"HardSigmoid", 0.2, 0.5, 2},
        {"ScaledTanh", 1, 1, 2},      {"Affine", 1, 0, 2}};
    for (const Known &k : known)
        if (name == k.name) {
            *a = {name, k.alpha, k.beta};
            *takes = k.takes;
            return true;
        }
    return false;
}

/** The `per_direction` activations of each direction: the attribute's, else the defaults. */
std::vector<Activation> activation_list(const Ctx &c, const std::vector<std::string> &defaults,
                                        int directions) {
    std::vector<std::string> names;
    if (const auto *a = c.attr("activations"))
        names.assign(a->strings().begin(), a->strings().end());
    else
        for (int d = 0; d < directions; d++)
            names.insert(names.end(), defaults.begin(), defaults.end());
    if (names.size() != defaults.size() * size_t(directions))
        c.fail("activations lists " + std::to_string(names.size()) + " functions; " +
               std::to_string(defaults.size() * size_t(directions)) + " expected");
    std::vector<float> alphas, betas;
    if (const auto *a = c.attr("activation_alpha"))
        alphas.assign(a->floats().begin(), a->floats().end());
    if (const auto *a = c.attr("activation_beta"))
        betas.assign(a->floats().begin(), a->floats().end());
    std::vector<Activation> out;
    size_t next_alpha = 0, next_beta = 0;
    for (const std::string &name : names) {
        Activation act;
        int takes = 0;
        if (!activation_defaults(name, &act, &takes))
            c.fail("activation '" + name + "' is not one ONNX defines for recurrent operators");
        if (takes >= 1 && next_alpha < alphas.size())
            act.alpha = alphas[next_alpha++];
        if (takes >= 2 && next_beta < betas.size())
            act.beta = betas[next_beta++];
        out.push_back(act);
    }
    return out;
}

std::vector<double> doubles(const HostTensor &t) {
    std::vector<double> v(size_t(t.numel()));
    for (size_t i = 0; i < v.size(); i++)
        v[i] = t.get_f64(int64_t(i));
    return v;
}

enum class Cell { Rnn, Gru, Lstm };

/** One recurrent node: its inputs as doubles, its dimensions and its attributes. */
class Recurrence {
public:
    Recurrence(const Ctx &c, Cell cell) : c_(c), cell_(cell) {
        gates_ = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
        layout_ = c.attr_int("layout", 0);
        const std::string dir = direction(c);
        dirs_ = dir == "bidirectional" ? 2 : 1;
        reverse_only_ = dir == "reverse";
        const Shape &xs = c.input(0).shape(), &ws = c.input(1).shape(), &rs = c.input(2).shape();
        if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3)
            c.fail("X, W and R must be 3-D; found " + shapes_str({xs, ws, rs}));
        seq_ = xs[layout_ ? 1 : 0], batch_ = xs[layout_ ? 0 : 1], in_ = xs[2];
        hidden_ = c.attr_int("hidden_size", rs[2]);
        if (ws != Shape{dirs_, gates_ * hidden_, in_} ||
            rs != Shape{dirs_, gates_ * hidden_, hidden_})
            c.fail("W and R must be " + shape_str({dirs_, gates_ * hidden_, in_}) + " and " +
                   shape_str({dirs_, gates_ * hidden_, hidden_}) + "; found " +
                   shapes_str({ws, rs}));
        x_ = doubles(c.input(0)), w_ = doubles(c.input(1)), r_ = doubles(c.input(2));
        b_ = optional_input(3, {dirs_, 2 * gates_ * hidden_});
        lengths_.assign(size_t(batch_), seq_);
        if (c.has_input(4))
            for (int64_t b = 0; b < batch_; b++)
                lengths_[size_t(b)] = std::clamp<int64_t>(c.input(4).get_i64(b), 0, seq_);
        Shape state = layout_ ? Shape{batch_, dirs_, hidden_} : Shape{dirs_, batch_, hidden_};
        h0_ = optional_input(5, state);
        if (cell == Cell::Lstm) {
            c0_ = optional_input(6, state);
            p_ = optional_input(7, {dirs_, 3 * hidden_});
        }
        if (const auto *a = c.attr("clip"))
            clip_ = a->f();
    }

    Outputs run(const std::vector<std::string> &default_activations) {
        acts_ = activation_list(c_, default_activations, int(dirs_));
        const DType dt = c_.input(0).dtype();
        Shape y_shape =
            layout_ ? Shape{batch_, seq_, dirs_, hidden_} : Shape{seq_, dirs_, batch_, hidden_};
        Shape state_shape = layout_ ? Shape{batch_, dirs_, hidden_} : Shape{dirs_, batch_, hidden_};
        if (too_big(y_shape))
            return std::nullopt;
        y_.assign(size_t(shape_numel(y_shape)), 0.0);
        yh_.assign(size_t(shape_numel(state_shape)), 0.0);
        yc_ = yh_;
        for (int64_t d = 0; d < dirs_; d++)
            for (int64_t b = 0; b < batch_; b++)
                run_sequence(d, b);
        std::vector<HostTensor> out = {tensor(dt, y_shape, y_), tensor(dt, state_shape, yh_)};
        if (cell_ == Cell::Lstm)
            out.push_back(tensor(dt, state_shape, yc_));
        return out;
    }

private:
    static std::string direction(const Ctx &c) {
        const auto *a = c.attr("direction");
        std::string d = a ? a->s() : "forward";
        if (d != "forward" && d != "reverse" && d != "bidirectional")
            c.fail("direction '" + d + "' is not forward, reverse or bidirectional");
        return d;
    }

    std::vector<double> optional_input(size_t i, const Shape &expected) const {
        if (!c_.has_input(i))
            return {};
        if (c_.input(i).shape() != expected)
            c_.fail("input " + std::to_string(i) + " must be " + shape_str(expected) + "; found " +
                    shape_str(c_.input(i).shape()));
        return doubles(c_.input(i));
    }

    static HostTensor tensor(DType dt, const Shape &s, const std::vector<double> &v) {
        HostTensor t(dt, s);
        for (size_t i = 0; i < v.size(); i++)
            t.set_f64(int64_t(i), v[i]);
        return t;
    }

    size_t state_at(int64_t d, int64_t b, int64_t j) const {
        return size_t(((layout_ ? b * dirs_ + d : d * batch_ + b)) * hidden_ + j);
    }
    size_t y_at(int64_t t, int64_t d, int64_t b, int64_t j) const {
        return size_t(
            (layout_ ? (b * seq_ + t) * dirs_ + d : (t * dirs_ + d) * batch_ + b) * hidden_ + j);
    }
    const double *x_row(int64_t t, int64_t b) const {
        return &x_[size_t((layout_ ? b * seq_ + t : t * batch_ + b) * in_)];
    }

    /** Row `row` of gate block `gate` of W (or R) of direction d, dotted with `v`. */
    double dot(const std::vector<double> &m, int64_t cols, int64_t d, int64_t gate, int64_t j,
               const double *v) const {
        const double *row = &m[size_t(((d * gates_ + gate) * hidden_ + j) * cols)];
        double s = 0;
        for (int64_t k = 0; k < cols; k++)
            s += row[k] * v[k];
        return s;
    }
    double bias(int64_t d, int64_t gate, int64_t j, bool recurrent) const {
        if (b_.empty())
            return 0.0;
        return b_[size_t((d * 2 + recurrent) * gates_ * hidden_ + gate * hidden_ + j)];
    }
    double bounded(double x) const { return clip_ ? std::clamp(x, -*clip_, *clip_) : x; }
    const Activation &act(int64_t d, int i) const {
        return acts_[size_t(d) * acts_.size() / size_t(dirs_) + size_t(i)];
    }

    void run_sequence(int64_t d, int64_t b) {
        const size_t units = static_cast<size_t>(hidden_);
        std::vector<double> h(units), cell(units), next(units);
        for (int64_t j = 0; j < hidden_; j++) {
            h[size_t(j)] = h0_.empty() ? 0.0 : h0_[state_at(d, b, j)];
            cell[size_t(j)] = c0_.empty() ? 0.0 : c0_[state_at(d, b, j)];
        }
        const bool backward = reverse_only_ || d == 1;
        const int64_t length = lengths_[size_t(b)];
        for (int64_t s = 0; s < length; s++) {
            const int64_t t = backward ? length - 1 - s : s;
            const double *x = x_row(t, b);
            if (cell_ == Cell::Rnn)
                rnn_step(d, x, h, next);
            else if (cell_ == Cell::Gru)
                gru_step(d, x, h, next);
            else
                lstm_step(d, x, h, cell, next);
            h.swap(next);
            for (int64_t j = 0; j < hidden_; j++)
                y_[y_at(t, d, b, j)] = h[size_t(j)];
        }
        for (int64_t j = 0; j < hidden_; j++) {
            yh_[state_at(d, b, j)] = h[size_t(j)];
            yc_[state_at(d, b, j)] = cell[size_t(j)];
        }
    }

    /** x W_gate^T + h R_gate^T + Wb + Rb for unit j. */
    double gate_input(int64_t d, int64_t gate, int64_t j, const double *x,
                      const std::vector<double> &h) const {
        return dot(w_, in_, d, gate, j, x) + dot(r_, hidden_, d, gate, j, h.data()) +
               bias(d, gate, j, false) + bias(d, gate, j, true);
    }

    void rnn_step(int64_t d, const double *x, const std::vector<double> &h,
                  std::vector<double> &next) const {
        for (int64_t j = 0; j < hidden_; j++)
            next[size_t(j)] = act(d, 0)(bounded(gate_input(d, 0, j, x, h)));
    }

    // Gates z, r, h (ONNX's W[zrh]).
    void gru_step(int64_t d, const double *x, const std::vector<double> &h,
                  std::vector<double> &next) const {
        const bool linear_before_reset = c_.attr_int("linear_before_reset", 0) != 0;
        const size_t units = static_cast<size_t>(hidden_);
        std::vector<double> z(units), reset_h(units), r(units);
        for (int64_t j = 0; j < hidden_; j++) {
            z[size_t(j)] = act(d, 0)(bounded(gate_input(d, 0, j, x, h)));
            r[size_t(j)] = act(d, 0)(bounded(gate_input(d, 1, j, x, h)));
            reset_h[size_t(j)] = r[size_t(j)] * h[size_t(j)];
        }
        for (int64_t j = 0; j < hidden_; j++) {
            double in = dot(w_, in_, d, 2, j, x) + bias(d, 2, j, false);
            if (linear_before_reset)
                in += r[size_t(j)] * (dot(r_, hidden_, d, 2, j, h.data()) + bias(d, 2, j, true));
            else
                in += dot(r_, hidden_, d, 2, j, reset_h.data()) + bias(d, 2, j, true);
            double candidate = act(d, 1)(bounded(in));
            next[size_t(j)] = (1.0 - z[size_t(j)]) * candidate + z[size_t(j)] * h[size_t(j)];
        }
    }

    // Gates i, o, f, c (ONNX's W[iofc]); peepholes P[iof].
    void lstm_step(int64_t d, const double *x, const std::vector<double> &h,
                   std::vector<double> &cell, std::vector<double> &next) const {
        const bool input_forget = c_.attr_int("input_forget", 0) != 0;
        auto peep = [&](int which, int64_t j) {
            return p_.empty() ? 0.0 : p_[size_t((d * 3 + which) * hidden_ + j)];
        };
        for (int64_t j = 0; j < hidden_; j++) {
            const double c_prev = cell[size_t(j)];
            double i = act(d, 0)(bounded(gate_input(d, 0, j, x, h) + peep(0, j) * c_prev));
            double f = input_forget
                           ? 1.0 - i
                           : act(d, 0)(bounded(gate_input(d, 2, j, x, h) + peep(2, j) * c_prev));
            double g = act(d, 1)(bounded(gate_input(d, 3, j, x, h)));
            double c_new = f * c_prev + i * g;
            double o = act(d, 0)(bounded(gate_input(d, 1, j, x, h) + peep(1, j) * c_new));
            cell[size_t(j)] = c_new;
            next[size_t(j)] = o * act(d, 2)(c_new);
        }
    }

    const Ctx &c_;
    Cell cell_;
    int64_t gates_ = 1, layout_ = 0, dirs_ = 1, seq_ = 0, batch_ = 0, in_ = 0, hidden_ = 0;
    bool reverse_only_ = false;
    std::optional<double> clip_;
    std::vector<double> x_, w_, r_, b_, h0_, c0_, p_;
    std::vector<int64_t> lengths_;
    std::vector<Activation> acts_;
    std::vector<double> y_, yh_, yc_;
};

} // namespace

Outputs recurrent(const Ctx &c) {
    const std::string &op = c.node.op_type();
    if (op == "RNN")
        return Recurrence(c, Cell::Rnn).run({"Tanh"});
    if (op == "GRU")
        return Recurrence(c, Cell::Gru).run({"Sigmoid", "Tanh"});
    return Recurrence(c, Cell::Lstm).run({"Sigmoid", "Tanh", "Tanh"});
}

} // namespace nhc::folding
