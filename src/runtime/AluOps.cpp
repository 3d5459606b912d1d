#include "runtime/AluOps.h"

#include <cmath>
#include <limits>

namespace nhc::rt {

using neff::ActFunc;
using neff::AluOp;

bool alu_supported(AluOp op) {
    switch (op) {
    case AluOp::BitwiseAnd:
    case AluOp::BitwiseOr:
    case AluOp::BitwiseXor:
    case AluOp::ShiftLeft:
    case AluOp::ShiftRight:
        return false;
    default:
        return true;
    }
}

float alu(AluOp op, float a, float b) {
    auto nan_max = [](float x, float y) {
        return (std::isnan(x) || std::isnan(y)) ? std::numeric_limits<float>::quiet_NaN()
                                                : (x > y ? x : y);
    };
    auto nan_min = [](float x, float y) {
        return (std::isnan(x) || std::isnan(y)) ? std::numeric_limits<float>::quiet_NaN()
                                                : (x < y ? x : y);
    };
    switch (op) {
    case AluOp::Bypass:
        return a;
    case AluOp::Add:
        return a + b;
    case AluOp::Subtract:
        return a - b;
    case AluOp::Mult:
        return a * b;
    case AluOp::Divide:
        return a / b;
    case AluOp::Max:
        return nan_max(a, b);
    case AluOp::Min:
        return nan_min(a, b);
    case AluOp::Pow:
        return std::pow(a, b);
    case AluOp::Mod:
        return std::fmod(a, b);
    case AluOp::AbsMax:
        return nan_max(std::fabs(a), std::fabs(b));
    case AluOp::AbsMin:
        return nan_min(std::fabs(a), std::fabs(b));
    case AluOp::IsEqual:
        return a == b ? 1.0f : 0.0f;
    case AluOp::NotEqual:
        return a != b ? 1.0f : 0.0f;
    case AluOp::IsGt:
        return a > b ? 1.0f : 0.0f;
    case AluOp::IsGe:
        return a >= b ? 1.0f : 0.0f;
    case AluOp::IsLt:
        return a < b ? 1.0f : 0.0f;
    case AluOp::IsLe:
        return a <= b ? 1.0f : 0.0f;
    case AluOp::LogicalAnd:
        return (a != 0 && b != 0) ? 1.0f : 0.0f;
    case AluOp::LogicalOr:
        return (a != 0 || b != 0) ? 1.0f : 0.0f;
    case AluOp::LogicalXor:
        return ((a != 0) != (b != 0)) ? 1.0f : 0.0f;
    default:
        return std::numeric_limits<float>::quiet_NaN(); // bitvec: guarded by alu_supported
    }
}

bool is_reduce_op(AluOp op) {
    // nc.md:L343 "Legal reduction ops" (bitvec ones excluded until implemented).
    switch (op) {
    case AluOp::Add:
    case AluOp::Subtract:
    case AluOp::Mult:
    case AluOp::Max:
    case AluOp::Min:
    case AluOp::AbsMax:
    case AluOp::LogicalAnd:
    case AluOp::LogicalOr:
    case AluOp::LogicalXor:
        return true;
    default:
        return false;
    }
}

float reduce_identity(AluOp op) {
    switch (op) {
    case AluOp::Mult:
    case AluOp::LogicalAnd:
        return 1.0f;
    case AluOp::Max:
        return -std::numeric_limits<float>::infinity();
    case AluOp::Min:
        return std::numeric_limits<float>::infinity();
    default:
        return 0.0f;
    }
}

namespace {

double sigmoid(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}
double phi(double x) {
    return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}
double gelu(double x) {
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double softplus(double x) {
    return x > 20 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
constexpr double kGeluSigmoidSlope = 1.702; // Hendrycks & Gimpel 2016, §2 (a definition)

double act_double(ActFunc f, double x, double alpha) {
    switch (f) {
    case ActFunc::Copy:
        return x;
    case ActFunc::Square:
        return x * x;
    case ActFunc::Sigmoid:
        return sigmoid(x);
    case ActFunc::Relu:
        return x > 0 ? x : 0.0;
    case ActFunc::Prelu:
        return x > 0 ? x : alpha * x;
    case ActFunc::Gelu:
        return gelu(x);
    case ActFunc::GeluDx:
        return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * phi(x);
    case ActFunc::GeluApprxTanh: {
        double k = std::sqrt(2.0 / M_PI);
        return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case ActFunc::GeluApprxSigmoid:
        return x * sigmoid(kGeluSigmoidSlope * x);
    case ActFunc::GeluApprxSigmoidDx: {
        double s = sigmoid(kGeluSigmoidSlope * x);
        return s + kGeluSigmoidSlope * x * s * (1.0 - s);
    }
    case ActFunc::Silu:
        return x * sigmoid(x);
    case ActFunc::SiluDx: {
        double s = sigmoid(x);
        return s * (1.0 + x * (1.0 - s));
    }
    case ActFunc::Tanh:
        return std::tanh(x);
    case ActFunc::Softplus:
        return softplus(x);
    case ActFunc::Mish:
        return x * std::tanh(softplus(x));
    case ActFunc::Erf:
        return std::erf(x);
    case ActFunc::ErfDx:
        return 2.0 / std::sqrt(M_PI) * std::exp(-x * x);
    case ActFunc::Exp:
        return std::exp(x);
    case ActFunc::Sign:
        return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case ActFunc::Abs:
        return std::fabs(x);
    case ActFunc::Log:
        return std::log(x);
    case ActFunc::Sin:
        return std::sin(x);
    case ActFunc::Arctan:
        return std::atan(x);
    case ActFunc::Sqrt:
        return std::sqrt(x);
    case ActFunc::Rsqrt:
        return 1.0 / std::sqrt(x);
    case ActFunc::Reciprocal:
        return 1.0 / x;
    }
    return x;
}

} // namespace

float activation(ActFunc f, float x, float alpha) {
    return float(act_double(f, double(x), double(alpha)));
}

} // namespace nhc::rt
