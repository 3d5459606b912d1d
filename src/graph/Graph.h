#ifndef NHC_GRAPH_GRAPH_H
#define NHC_GRAPH_GRAPH_H

/** \file
 * The Graph IR: what the front end hands to the rest of the compiler. A graph of typed,
 * statically shaped values and the ONNX nodes between them, keeping ONNX node and tensor names
 * for messages and profiles. Constants (weights, folded values) are values with data.
 *
 * Invariants established by the front end (checked by Graph::verify):
 *  - every value has a dtype and a fully static shape (no unknown or symbolic dims);
 *  - nodes are in topological order and every node input is a graph input, a constant or the
 *    output of an earlier node (an empty input name is an omitted optional input);
 *  - values are keyed by name in a sorted map, so every iteration order is deterministic.
 */

#include "graph/HostTensor.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace nhc {

/** A node attribute; graph-valued attributes (control flow) are not representable and make
 *  the front end reject the node. */
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, HostTensor>;

struct Value {
    std::string name;
    DType dtype = DType::Float32;
    Shape shape;
    /** Set for weights and folded constants. */
    std::shared_ptr<const HostTensor> constant;
    bool is_constant() const { return constant != nullptr; }
};

struct Node {
    std::string name; ///< the ONNX node name, or a generated "<op>_<index>" when it had none
    std::string op_type;
    std::string domain; ///< "" for the default ONNX domain
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::map<std::string, AttrValue> attrs;
    /** Set by the auto-cast pass on matmul-engine nodes: their contraction operands are rounded
     *  to this type (the accumulation stays fp32). */
    std::optional<DType> operand_cast;
    /** Set on matmuls that stand for exact data movement or interpolation (graph/ResizeMatmul):
     *  the auto-cast pass leaves their operands fp32. */
    bool keep_precision = false;
    /** Set by the transpose-folding pass: input i is read through this permutation (it is the
     *  input of a Transpose with that `perm` that the pass removed). */
    std::map<int, std::vector<int64_t>> input_perm;

    bool has_attr(const std::string &key) const { return attrs.count(key) != 0; }
    int64_t attr_int(const std::string &key, int64_t fallback) const;
    double attr_float(const std::string &key, double fallback) const;
    std::vector<int64_t> attr_ints(const std::string &key) const;
    std::string attr_string(const std::string &key, const std::string &fallback) const;
    /** "Gemm 'fc1'": how messages name a node. */
    std::string describe() const;
    /** A Transpose's permutation for an input of `rank`: its `perm`, or the reversed axes when
     *  it has none, negative axes resolved. */
    std::vector<int64_t> transpose_perm(int64_t rank) const;
};

struct Graph {
    std::string name;
    int opset = 0;                    ///< default-domain opset after conversion
    int original_opset = 0;           ///< as the model file declared it
    std::vector<std::string> inputs;  ///< runtime inputs (not initializers), in model order
    std::vector<std::string> outputs; ///< in model order
    std::map<std::string, Value> values;
    std::vector<Node> nodes; ///< topological order

    const Value &value(const std::string &name) const;
    bool has_value(const std::string &name) const { return values.count(name) != 0; }
    /** Checks the invariants in the file comment; a violation is a compiler bug. */
    void verify() const;
    /** Number of weight bytes (constant values that some node reads). */
    int64_t constant_bytes() const;
};

/** A readable text form of the graph (`--dump-graph`): inputs, outputs, constants, then one
 *  line per node with its operands' types and shapes. */
std::string dump_graph(const Graph &g);

/** Adds the constant int64 tensor `shape` as value `name` (a Reshape's shape operand); returns
 *  `name`. */
std::string shape_constant(Graph &g, const std::string &name, const Shape &shape);

} // namespace nhc

#endif
