#ifndef NHC_RUNTIME_HOSTSEGMENT_H
#define NHC_RUNTIME_HOSTSEGMENT_H

/** \file
 * A host segment of a partitioned NEFF (driver/HostPartition.h): an ONNX model whose nodes the
 * runtime evaluates on the CPU in order, with the host evaluators of frontend/ConstantEvaluator.h
 * (arithmetic in double, rounded once into each output's type). Its tensors cross to and from
 * the device segments in the runtime's types, as a NEFF holds them: an ONNX int64 as i32 (each
 * value checked to fit), a bool as u8 marked holds_bool; float16/bfloat16/float32, float64 and
 * uint64 as themselves (the last two only between segments and in model I/O: neff/DType.h).
 * Dimensions known only at run time (NonMaxSuppression's output) are -1 in io().
 */

#include "graph/DType.h"
#include "runtime/Runtime.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nhc::rt {

/** The runtime type that carries an ONNX tensor of element type `t` between segments (see the
 *  file comment); nullopt for those no NEFF tensor carries (strings, complex). */
std::optional<neff::DType> carrier_dtype(nhc::DType t, bool *holds_bool);

class HostSegment {
public:
    /** The segment in `file` of a partitioned NEFF; NHC_ENEFF015 when its bytes are not an
     *  ONNX model, a node has no host evaluator, or a value's type has no runtime type. */
    static std::shared_ptr<const HostSegment> load(const std::vector<uint8_t> &onnx,
                                                   const std::string &file);
    ~HostSegment();

    const std::string &name() const { return name_; }
    int node_count() const;
    /** Inputs (kind Input) then outputs (kind Output), in the model's order. */
    const std::vector<neff::Variable> &io() const { return io_; }
    /** Evaluates the nodes on `inputs` (every input of io(), in its type); returns the outputs.
     *  NHC_ERT024 naming the node when one fails (its inputs do not suit it, or an int64
     *  value does not fit the i32 that carries it). */
    std::map<std::string, Tensor> run(const std::map<std::string, Tensor> &inputs) const;

private:
    HostSegment() = default;
    struct State;
    std::unique_ptr<State> state_;
    std::string name_;
    std::vector<neff::Variable> io_;
};

} // namespace nhc::rt

#endif
