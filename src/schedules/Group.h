#ifndef NHC_SCHEDULES_GROUP_H
#define NHC_SCHEDULES_GROUP_H

/** \file
 * A fused group: the unit that is scheduled, lowered through Halide and turned into instructions
 * (DESIGN.md §2, §6). It holds the algorithm's stages, one staging Func per input (an identity
 * copy of the HBM input, kept in SBUF or inlined by the schedule) and one identity output Func per
 * group output (written to HBM by DMA).
 */

#include "algorithms/Algorithm.h"
#include "graph/ValueIndex.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nhc::sched {

struct GroupInput {
    std::string value;        ///< Graph value name (an HBM tensor)
    Halide::ImageParam param; ///< its Halide input buffer
    Halide::Func staged;      ///< identity copy the algorithm reads
    Shape shape;              ///< the value's shape (ONNX order)
};

struct GroupOutput {
    std::string value;  ///< Graph value name
    Halide::Func func;  ///< identity output Func (HBM)
    alg::Tensor result; ///< the algorithm's stage it copies
};

struct Group {
    const Node *node = nullptr;      ///< the first node (the group's operator family)
    std::vector<const Node *> nodes; ///< every node of the group, in graph order
    std::vector<GroupInput> inputs;
    std::vector<GroupOutput> outputs;
    alg::OpResult op;
    /** NeuronCore layout hint per on-chip stage (Func name): the Halide dimension that lies on
     *  partitions. Halide's flattened IR does not keep the layout, so the schedule declares it
     *  (DESIGN.md §4); dims inside it are contiguous in each partition, dims outside it must have
     *  extent 1 in the stage's allocation. */
    std::map<std::string, int> partition_dim;
    /** Optional: the partition dim is split, index % split on partitions and index / split as
     *  chunks laid out in the free axis (a K of 2048 staged as 16 chunks of 128). */
    std::map<std::string, int64_t> partition_split;
    /** Optional: the stage's tiles take turns in this many fixed buffers, allocated once for the
     *  group, instead of a new region per tile from the rotating allocator (OnChipAllocator).
     *  Two or three are double or triple buffering; with PSUM's 8 banks, a stage bounded to a
     *  few leaves the others to the accumulators, which then never wait for its reuse. */
    std::map<std::string, int> buffers;
    /** Optional: SBUF stages whose tiles stay where they are after the group, each in a region
     *  of its own, until the groups that read the group's output have run (a whole-model move
     *  of -O3: the output stays resident for its consumer, which then reads the tiles where
     *  they are, or copies them, instead of loading them, neff/ForwardStores.h). */
    std::set<std::string> resident;
    /** Optional: the list scheduler orders the group's PE instructions by their longest path to
     *  the end of the program rather than by program order (SchedulePlan::pe_critical_path). */
    bool pe_critical_path = false;
    /** Optional: the engine ("act", "dve" or "pool") that runs a stage's elementwise and
     *  reduction instructions where it can, instead of the load balance between ACT and DVE
     *  that instruction selection otherwise strikes (neff/SelectCompute). */
    std::map<std::string, std::string> engines;

    /** Broadcast stages whose reads are folded to one tile of partitions (Func name -> the
     *  period P: reads b(x, y, z...) rewritten as b(x, y % P, 0...), schedules/FoldBroadcasts). */
    std::map<std::string, int> folded_broadcasts;

    /** Reductions computed in two stages (Halide's rfactor, RFactor.h), in the order made: the
     *  split of the reducing stage's update that rfactor consumed, kept so that a printed
     *  schedule can make the same stage again (Halide's definitions no longer show it). */
    struct RFactorSplit {
        std::string of;           ///< the Func whose update(0) was split and rfactored
        std::string intm;         ///< the new stage's Func (role: the reducing stage's + "_intm")
        std::string rvar;         ///< the split RVar, as a script names it (`k`)
        std::string outer, inner; ///< the split's loops; `outer` became the pure var `var`
        int factor = 0;
        std::string var;
    };
    std::vector<RFactorSplit> rfactors;

    /** The values computed inside the group, by graph value name. */
    std::map<std::string, alg::Tensor> values;
    /** Per entry of op.stages: the index in `nodes` of the node whose algorithm made it. */
    std::vector<int> stage_node;
    /** The algorithm stage with this role (of node `node_index`, when given), or an undefined
     *  Func. */
    Halide::Func stage(const std::string &role, int node_index = -1) const;
};

/** Builds the group of one node: staging Funcs, the algorithm, identity outputs with constant
 *  output bounds and dense strides. */
Group build_node_group(const Graph &g, const Node &node);

/** Builds a fused group of several nodes (graph order): a value produced inside the group is read
 *  as the producer's Func (it never goes to HBM); the group's outputs are the values that a node
 *  outside it (`values`' consumers, of `g`), or the graph, reads. A caller that builds many
 *  groups indexes the graph once, so that a group's cost does not grow with the graph. An output
 *  named in `output_perm` is stored as Transpose(value, perm) would be (Codegen folds such a
 *  Transpose into the group). */
Group build_group(const Graph &g, const ValueIndex &values, const std::vector<const Node *> &nodes,
                  const std::map<std::string, std::vector<int64_t>> &output_perm = {});
/** A group's HBM values in a fixed order: its inputs, then its outputs (what a lowering of one
 *  group of a workload is rebound to for another, codegen::rebound). */
std::vector<std::string> hbm_values(const Group &g);

} // namespace nhc::sched

#endif
