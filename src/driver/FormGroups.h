#ifndef NHC_DRIVER_FORMGROUPS_H
#define NHC_DRIVER_FORMGROUPS_H

/** \file
 * Which nodes are compiled together (DESIGN.md §2): nodes in graph order, one group each, except
 * chains whose intermediate values can stay on chip: a matmul and its elementwise epilogue (and a
 * Softmax or LayerNorm over whole rows), attention's context MatMul after its probabilities, and
 * compute-family chains (elementwise, Softmax, LayerNorm, Reduce) of one output shape, which an
 * Expand of their [.., R, 1] value along the last axis may end (a GroupNorm's group statistics
 * spread over its rows). A value a node outside the group reads ends the group after its
 * producer. Attention's P·V joins its group also past groups that do not read it (a Slice of V
 * that PyTorch exports between the Softmax and P·V), which then come before it.
 *
 * A schedule script decides too (docs/schedules.md, "Fused groups"): a node with a block of its
 * own is a group of its own; the nodes of a block that names several form exactly one group, and
 * must be a chain the rules above would fuse (NHC_ESCH119 otherwise).
 */

#include "graph/Graph.h"
#include "graph/ValueIndex.h"
#include "schedules/ScheduleScript.h"
#include "target/Target.h"

#include <set>
#include <string>
#include <vector>

namespace nhc::codegen_groups {

struct GroupingContext {
    const Graph &graph;
    const target::TargetInfo &target;
    const sched::ScheduleScript *schedule; ///< --schedule, or nullptr
    const ValueIndex &values;              ///< of `graph`
    /** Nodes compiled without a group of their own (views of a value, Transposes their
     *  producer writes), by name: skipped. */
    std::set<std::string> without_group;
};

/** The groups of the graph, each its nodes in graph order. */
std::vector<std::vector<const Node *>> form_groups(const GroupingContext &cx);

/** Operators whose output is the input's bytes reinterpreted: no instruction, the same variable. */
bool is_view(const Node &n);

} // namespace nhc::codegen_groups

#endif
