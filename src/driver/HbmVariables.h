#ifndef NHC_DRIVER_HBMVARIABLES_H
#define NHC_DRIVER_HBMVARIABLES_H

/** \file
 * The code generator's HBM plan: which variable of the program holds each graph value, and
 * where in it. Graph inputs and outputs have variables of their own, made first; a view
 * aliases its input's bytes; a value whose only reader is a Transpose that keeps the last axis is
 * written transposed, into the Transpose's output (attention's heads merged back); a graph output
 * that views a computed value has that value computed straight into it; a Concat's inputs are
 * computed in its output where they can be (ConcatInPlace.h). Weights and intermediates get a
 * variable when generated code first touches them (var()): a constant used only as an attribute
 * and a value that stays inside a fused group never reach HBM.
 */

#include "driver/ConcatInPlace.h"
#include "graph/Graph.h"
#include "graph/ValueIndex.h"
#include "neff/Isa.h"
#include "neff/SelectInstructions.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace nhc {

class HbmVariables {
public:
    /** Plans `g`'s values (`values`: who computes and reads each); the variables go into
     *  `prog` (weights without their bytes when `without_weight_bytes`). */
    HbmVariables(const Graph &g, const ValueIndex &values, neff::Program &prog,
                 bool without_weight_bytes);

    /** The variable holding `value`, made on first touch. */
    int var(const std::string &value);
    /** The variable `value` already has, or -1; makes none. */
    int existing_var(const std::string &value) const;
    /** `value`'s variable, type, bytes and offset, for instruction selection. */
    codegen::HbmBinding binding(const std::string &value);
    /** Where `value`'s bytes start in its variable (through views and transposed outputs). */
    int64_t offset_in_var(const std::string &value) const;
    /** Whether a Concat input's bytes are computed in the Concat's output (the value or the
     *  value it views). */
    bool computed_in_place(std::string value) const;
    /** A weight variable of `v`'s bytes under a name of its own (a constant graph output). */
    int add_weight(const std::string &name, const Value &v);

    const std::set<std::string> &graph_outputs() const { return graph_outputs_; }
    /** Whether view `n` is a graph output that its viewed value is computed into. */
    bool written_in_place(const Node &n) const { return written_in_place_.count(n.outputs[0]); }
    /** The permutation `value` is stored in, when written into its Transpose's output, or
     *  nullptr. */
    const std::vector<int64_t> *transposed_perm(const std::string &value) const;
    /** The Transposes whose input's group writes their output (no group of their own), in
     *  graph order. */
    const std::vector<const Node *> &folded_transposes() const { return folded_; }

private:
    int add_var(const std::string &name, neff::VarKind kind, const Value &v);
    void plan_transposed_outputs();
    void plan_outputs_written_in_place();

    const Graph &g_;
    const ValueIndex &values_;
    neff::Program &prog_;
    bool without_weight_bytes_;
    std::map<std::string, int> var_of_;
    std::map<std::string, std::string> alias_of_; ///< view output -> the value it aliases
    std::map<std::string, InPlace> in_place_;     ///< Concat inputs computed in its output
    std::set<std::string> written_in_place_;      ///< graph outputs their viewed value fills
    /** value -> (the Transpose output it is written as, perm) */
    std::map<std::string, std::pair<std::string, std::vector<int64_t>>> transposed_into_;
    std::set<std::string> graph_outputs_;
    std::vector<const Node *> folded_;
};

} // namespace nhc

#endif
