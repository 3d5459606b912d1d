#ifndef NHC_SCHEDULES_SCHEDULESCRIPT_H
#define NHC_SCHEDULES_SCHEDULESCRIPT_H

/** \file
 * Schedule scripts (DESIGN.md §4, docs/schedules.md): hand-written schedules in Halide's own
 * syntax, one block per ONNX node, one directive per line:
 *
 *     node "/attn/query/MatMul":
 *       final0.tile(v0, v1, no, mo, ni, mi, 512, 128)
 *       acc.compute_at(final0, no).store_in(PSUM)
 *       acc.update().split(k, ko, ki, 128).reorder(ki, v0, v1, ko)
 *       lhs_t.compute_at(acc, ko).store_in(SBUF)
 *       hint partition_dim lhs_t 1
 *
 * Stages are named by their role in the node's group (the algorithm's roles such as `acc`,
 * `stage_<i>` for the staged inputs, `final<o>` for the outputs); loops by the Halide names of the
 * stage's vars (`v0`, `v1`, ...; `k` is the first RVar of the RDom `k`, `k.y` its second). A block
 * REPLACES the default schedule of its node: it is applied to a freshly built group, and a stage
 * it does not mention keeps Halide's default (inlined, or computed at root when it has updates).
 *
 * A block for one node compiles that node as a group of its own. A block may also name several
 * nodes, `node "/attn/MatMul", "/attn/Div", "/attn/Softmax":`, that the code generator fuses
 * into one group (as --dump-schedules writes it); the stages of node i are then `n<i>_<role>`
 * (`n0_acc`, `n2_max`, `n2_final0`) and the staged inputs keep `stage_<j>`.
 *
 * Parsing checks syntax and the directives' signatures; applying checks names against the group.
 * Both report user errors NHC_ESCH1xx with the file name and the line. print(parse(text)) is
 * canonical: printing the parsed canonical text gives it back unchanged.
 */

#include "schedules/Group.h"
#include "target/Target.h"

#include <map>
#include <string>
#include <vector>

namespace nhc::sched {

/** An argument of a directive, as written (canonical spelling). */
struct ScriptArg {
    enum class Kind {
        Name,      ///< `v0`, `ko`, `k.x`: a loop, a stage, a new loop name, SBUF / PSUM
        Int,       ///< `128`
        Qualified, ///< `TailStrategy::GuardWithIf`
    };
    Kind kind = Kind::Name;
    std::string text;
    int64_t value = 0; ///< Int only
};

/** One method call of a directive chain: `split(v0, vo, vi, 128)`. */
struct ScriptCall {
    std::string method;
    std::vector<ScriptArg> args;
};

struct ScriptLine {
    enum class Kind { Comment, Directive, Hint };
    Kind kind = Kind::Directive;
    int line = 0; ///< 1-based line in the script file
    /** Directive: the stage the chain starts from, and its calls in order. */
    std::string stage;
    std::vector<ScriptCall> calls;
    /** Hint: `hint <name> <args...>`. */
    std::string hint;
    std::vector<ScriptArg> hint_args;
    /** Comment lines: the text after '#'; other lines: a trailing comment, if not empty. */
    std::string comment;
    bool has_comment = false;
};

/** The schedule of one group: one node, or the nodes of a fused group in graph order. */
struct ScriptBlock {
    std::vector<std::string> nodes;            ///< the ONNX node names of the header
    int line = 0;                              ///< line of the `node "...":` header
    std::vector<std::string> leading_comments; ///< top-level comment lines before the header
    std::vector<ScriptLine> lines;

    /** The header's names as written: `"a"` or `"a", "b"` (for messages). */
    std::string quoted_nodes() const;
};

class ScheduleScript {
public:
    using Block = ScriptBlock;

    std::string file = "<schedule>"; ///< for messages
    std::vector<Block> blocks;
    std::vector<std::string> trailing_comments; ///< top-level comments after the last block

    /** The block whose header names this ONNX node, or nullptr. */
    const Block *find(const std::string &node_name) const;
    /** Canonical text: two-space indentation, one blank line between blocks. */
    std::string to_string() const;
};

/** Parses a script; `file` names it in messages. NHC_ESCH101 (syntax), NHC_ESCH102 (unknown
 *  directive or hint, wrong arguments), NHC_ESCH103 (two blocks for one node). */
ScheduleScript parse_schedule(const std::string &text, const std::string &file = "<schedule>");
/** Reads and parses a file; NHC_EIO001 if it cannot be read. */
ScheduleScript parse_schedule_file(const std::string &path);

/** Checks the blocks' node names against the graph the code generator compiles (after the graph
 *  passes): NHC_ESCH110 for a name not in it (a name of `onnx_ops`, the ONNX nodes before the
 *  passes with their operators, is reported as rewritten, with the nodes made of it);
 *  NHC_ESCH118 for a node compiled without a schedule (Concat: copies per input; views;
 *  Im2Col). */
void check_schedule_nodes(const ScheduleScript &s, const Graph &g,
                          const std::map<std::string, std::string> &onnx_ops = {});

/** One device segment of a model compiled with host fallback: its graph after the passes and
 *  its ONNX nodes' operators before them. */
struct SegmentNodes {
    const Graph *graph = nullptr;
    const std::map<std::string, std::string> *onnx_ops = nullptr;
};

/** check_schedule_nodes for a model compiled in device segments: each block is checked against
 *  the segment of its first node. NHC_ESCH110 also for a block whose nodes are in two segments
 *  and for a node that runs on the host (`host_ops`: the host segments' nodes' operators). */
void check_schedule_nodes(const ScheduleScript &s, const std::vector<SegmentNodes> &segments,
                          const std::map<std::string, std::string> &host_ops);

/** Applies the block of the group's node, if the script has one, and returns whether it did;
 *  otherwise the caller applies the default schedule. The group must be fresh (never scheduled):
 *  Halide directives compose, so a block on top of the default schedule would tile twice. */
bool apply_schedule_script(const ScheduleScript &s, Group &g);
/** Applies one block to a fresh group. NHC_ESCH111 (unknown stage), NHC_ESCH112 (unknown loop),
 *  NHC_ESCH113 (no such update), NHC_ESCH114 (Halide rejects a directive), NHC_ESCH115 (hint
 *  out of range), NHC_ESCH117 (a split the lowering cannot take: a PredicateStores tail, an
 * output's tiles leaving the tensor). */
void apply_schedule_block(const ScheduleScript &s, const ScriptBlock &b, Group &g);

/** Turns a Halide::CompileError raised while lowering a group scheduled by block `b` into
 *  NHC_ESCH116, naming the line of the directive that placed the stage Halide complains about
 *  (or the block's header). */
[[noreturn]] void report_lowering_error(const ScheduleScript &s, const ScriptBlock &b,
                                        const Group &g, const Halide::CompileError &e);

/** Runs `lower()` (lowering of a group scheduled by block `b`) and reports Halide's compile
 *  errors as NHC_ESCH116. */
template <typename F>
auto lower_scripted(const ScheduleScript &s, const ScriptBlock &b, const Group &g, F &&lower)
    -> decltype(lower()) {
    try {
        return lower();
    } catch (const Halide::CompileError &e) {
        report_lowering_error(s, b, g, e);
    }
}

/** The schedule a group carries, written as a block of directives (splits, reorders, compute
 *  and store levels, memory types, partition_dim hints). Locks the group's LoopLevels. */
ScriptBlock describe_schedule(const Group &g);

/** The default schedule of a node as script text (a starting point for --schedule). */
std::string print_default_schedule(const Graph &g, const Node &node,
                                   const target::TargetInfo &target);

/** The role names a script may use for the stages of a group, in group order: staged inputs
 *  (`stage_<i>`), the algorithm's stages, the outputs (`final<o>`). */
std::vector<std::pair<std::string, Halide::Func>> named_stages(const Group &g);

} // namespace nhc::sched

#endif
