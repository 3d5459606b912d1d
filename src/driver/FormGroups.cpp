#include "driver/FormGroups.h"

#include "graph/CausalMask.h"
#include "graph/FlattenElementwise.h"
#include "graph/GraphLimits.h"
#include "schedules/DefaultSchedule.h"
#include "support/Error.h"

#include <algorithm>
#include <map>

namespace nhc::codegen_groups {

namespace {

class GroupFormer {
public:
    explicit GroupFormer(const GroupingContext &cx) : cx_(cx) {}

    /** The groups in graph order (FormGroups.h): a node joins the group before it when the
     *  fusion rules allow and no block names either; a block's nodes form exactly its group. */
    std::vector<std::vector<const Node *>> form() const {
        auto block_of = [&](const Node &n) {
            return cx_.schedule ? cx_.schedule->find(n.name) : nullptr;
        };
        auto scripted = [&](const Node &n) { return block_of(n) != nullptr; };
        auto fusable = [&](const Node &n) { return !scripted(n) && fusable_op(n); };
        std::vector<std::vector<const Node *>> groups;
        for (const Node &n : cx_.graph.nodes) {
            if (cx_.without_group.count(n.name))
                continue;
            // A block's nodes form its group (one node, or a fused group as written).
            const sched::ScriptBlock *b = block_of(n);
            if (b && n.name != b->nodes.front())
                join_block(groups, n, *b);
            else if (!b && !groups.empty() &&
                     (can_join(groups.back(), n, fusable, scripted) ||
                      closes_attention(groups.back(), n, scripted)))
                groups.back().push_back(&n);
            else if (int at = b ? -1 : attention_past_independent(groups, n, scripted); at >= 0)
                close_attention_at(groups, at, n);
            else
                groups.push_back({&n});
        }
        // A cut can make a value escape that did not before (Exp read by the Sub kept and by an
        // Add cut off): cut again until no group changes.
        for (size_t before = 0; before != groups.size();) {
            before = groups.size();
            groups = split_escaping(groups);
        }
        check_block_groups(groups);
        return groups;
    }

    // Operators a compute chain may fuse (one output, computed by the Compute family).
    static bool fusable_op(const Node &n) {
        return n.outputs.size() == 1 && !is_view(n) && n.op_type != "Concat" &&
               n.op_type != "Im2Col" && sched::schedule_family(n.op_type) == sched::Family::Compute;
    }

    /** Adds `n`, a later node of block `b`, to the block's group: it must follow the block's
     *  previous node and be a node the code generator would fuse there. */
    void join_block(std::vector<std::vector<const Node *>> &groups, const Node &n,
                    const sched::ScriptBlock &b) const {
        auto at = std::find(b.nodes.begin(), b.nodes.end(), n.name);
        bool follows = !groups.empty() && groups.back().front()->name == b.nodes.front() &&
                       groups.back().back()->name == *(at - 1);
        auto never = [](const Node &) { return false; };
        if (int past = follows ? -1 : attention_past_independent(groups, n, never);
            past >= 0 && groups[static_cast<size_t>(past)].front()->name == b.nodes.front() &&
            groups[static_cast<size_t>(past)].back()->name == *(at - 1)) {
            close_attention_at(groups, past, n); // the attention's P·V, past a Slice of V
            return;
        }
        if (!follows || !(can_join(groups.back(), n, fusable_op, never) ||
                          closes_attention(groups.back(), n, never)))
            refuse_block_group(b, n.name);
        groups.back().push_back(&n);
    }

    /** Every block of several nodes is exactly one group (none was cut by split_escaping). */
    void check_block_groups(const std::vector<std::vector<const Node *>> &groups) const {
        if (!cx_.schedule)
            return;
        for (const sched::ScriptBlock &b : cx_.schedule->blocks) {
            if (b.nodes.size() < 2)
                continue;
            for (const auto &group : groups)
                if (group.front()->name == b.nodes.front() && group.size() != b.nodes.size())
                    refuse_block_group(b, b.nodes.at(group.size()));
        }
    }

    [[noreturn]] void refuse_block_group(const sched::ScriptBlock &b,
                                         const std::string &node) const {
        user_error(
            "NHC_ESCH119", cx_.schedule->file, ":", b.line, ": node ", b.quoted_nodes(),
            ": node \"", node, "\" cannot join the group of \"", b.nodes.front(),
            "\"; the nodes of a block must be a chain the code generator fuses, in graph "
            "order, at most ",
            kMaxFusedNodes,
            " nodes (a matmul and its elementwise epilogue, attention, or a compute chain of "
            "one shape whose intermediate values nothing outside the chain reads), as "
            "--dump-schedules writes them");
    }

    /** Whether `n` continues `group`: a compute chain, or elementwise nodes in a matmul's
     *  epilogue; it must read a value the group produces and have the group's output shape. */
    template <typename Fusable, typename Scripted>
    bool can_join(const std::vector<const Node *> &group, const Node &n, Fusable fusable,
                  Scripted scripted) const {
        const Node &front = *group.front();
        if (!fusable(n) || group.size() >= kMaxFusedNodes)
            return false;
        // A convolution's elementwise epilogue joins it when the channels fill the partitions
        // enough (conv_epilogue_joins; FlattenElementwise then left the chain in its shape).
        bool conv_group = front.domain == "nhc" && front.op_type == "ConvTaps" &&
                          conv_epilogue_joins(cx_.graph.value(front.outputs[0]).shape.at(1),
                                              sched::conv_limits(cx_.target));
        bool matmul_group = front.op_type == "MatMul" || front.op_type == "Gemm" || conv_group;
        // A row reduction (Softmax, LayerNorm) joins a matmul's epilogue when one output tile
        // holds whole rows (N within one PSUM bank: attention scores never leave the chip), or
        // a row tile's whole rows fit on chip (a residual + LayerNorm after a linear layer,
        // attention over 2,048 positions).
        const Shape &shape = cx_.graph.value(n.outputs[0]).shape;
        bool softmax = n.op_type == "Softmax";
        bool row_op = !conv_group && (softmax || n.op_type == "LayerNormalization") &&
                      !shape.empty() && n.attr_int("axis", -1) == -1 &&
                      (softmax ? sched::softmax_rows_join_matmul(shape.back(), cx_.target)
                               : sched::row_reduction_joins_matmul(shape.back(), cx_.target));
        bool elementwise = is_elementwise_op(n.op_type) || is_triangular_where(n);
        if (matmul_group
                ? !((elementwise || row_op) && !scripted(front) && front.outputs.size() == 1)
                : !fusable(*group.back()))
            return false;
        bool reads_group = false;
        for (const Node *m : group)
            for (const std::string &in : n.inputs)
                reads_group = reads_group || (!in.empty() && in == m->outputs[0]);
        const Shape &back = cx_.graph.value(group.back()->outputs[0]).shape;
        return reads_group && (back == shape || (!matmul_group && spreads_rows_of(n, back)));
    }

    /** Whether `n` is an Expand of the group's last value [.., R, 1] along its last axis alone:
     *  it then ends a compute chain, each row's value spread along the row on chip (a
     *  GroupNorm's per-group statistics spread over the group's rows, graph/GroupNorm), instead
     *  of a group of its own that loads the values back. */
    bool spreads_rows_of(const Node &n, const Shape &back) const {
        if (n.op_type != "Expand" || !n.domain.empty() || back.empty() || back.back() != 1)
            return false;
        const Shape &out = cx_.graph.value(n.outputs[0]).shape;
        return out.size() == back.size() && out.back() > 1 &&
               std::equal(back.begin(), back.end() - 1, out.begin());
    }

    /** Whether MatMul `n` is attention's context product P·V after a group that computes the
     *  probabilities P (scores MatMul, its epilogue, Softmax over whole rows): it then joins the
     *  group, so P never leaves the chip (DefaultSchedule, "fused attention"). P must be its
     *  first operand as stored, with the scores' batch and row shape; P's rows longer than
     *  the partitions (ViT's 197 positions) are contracted in K chunks, each transposed on the
     *  PE. */
    template <typename Scripted>
    bool closes_attention(const std::vector<const Node *> &group, const Node &n,
                          Scripted scripted) const {
        const Node &front = *group.front(), &back = *group.back();
        if (n.op_type != "MatMul" || !n.domain.empty() || scripted(n) || scripted(front) ||
            front.op_type != "MatMul" || back.op_type != "Softmax" || group.size() < 2 ||
            n.inputs.size() != 2 || n.inputs[0] != back.outputs[0] || n.input_perm.count(0) ||
            std::count_if(group.begin(), group.end(),
                          [](const Node *m) { return m->op_type == "MatMul"; }) != 1)
            return false;
        const Shape &p = cx_.graph.value(back.outputs[0]).shape,
                    &out = cx_.graph.value(n.outputs[0]).shape;
        return p.size() >= 3 && out.size() == p.size() &&
               std::equal(p.begin(), p.end() - 1, out.begin()) &&
               out.back() <= cx_.target.matmul_max_moving;
    }

    /** The earlier group whose attention MatMul `n` closes past the groups after it, none of
     *  which reads it (PyTorch exports `softmax(s) @ v[:, :, :n]` with the Slice of v between the
     *  Softmax and P·V), or -1. */
    template <typename Scripted>
    int attention_past_independent(const std::vector<std::vector<const Node *>> &groups,
                                   const Node &n, Scripted scripted) const {
        if (n.op_type != "MatMul") // what closes_attention asks first: no scan for other nodes
            return -1;
        for (size_t c = groups.size(); c-- > 1;) {
            if (!closes_attention(groups[c - 1], n, scripted))
                continue;
            std::set<std::string> produced;
            for (const Node *m : groups[c - 1])
                produced.insert(m->outputs.begin(), m->outputs.end());
            for (size_t later = c; later < groups.size(); later++)
                for (const Node *m : groups[later])
                    for (const std::string &in : m->inputs)
                        if (produced.count(in))
                            return -1; // a group after it reads it: nothing moves
            return static_cast<int>(c - 1);
        }
        return -1;
    }

    /** `n` joins group `at` (attention_past_independent), and the groups after it move before
     *  it: none reads it, and `n` may read them. */
    static void close_attention_at(std::vector<std::vector<const Node *>> &groups, int at,
                                   const Node &n) {
        std::rotate(groups.begin() + at, groups.begin() + at + 1, groups.end());
        groups.back().push_back(&n);
    }

    /** A value computed inside a group must stay inside it (only the last node's output leaves
     *  the chip): a group whose intermediate is read outside it is cut after that node. */
    std::vector<std::vector<const Node *>>
    split_escaping(const std::vector<std::vector<const Node *>> &groups) const {
        std::vector<std::vector<const Node *>> out;
        for (const auto &group : groups) {
            std::set<const Node *> inside(group.begin(), group.end());
            size_t cut = group.size();
            for (size_t i = 0; i + 1 < group.size() && cut == group.size(); i++) {
                const std::string &v = group[i]->outputs[0];
                bool escapes = cx_.values.graph_outputs.count(v) != 0;
                for (const Node *r : cx_.values.consumers_of(v))
                    escapes = escapes || !inside.count(r);
                if (escapes)
                    cut = i + 1;
            }
            out.emplace_back(group.begin(), group.begin() + cut);
            for (size_t i = cut; i < group.size(); i++)
                out.push_back({group[i]});
        }
        return out;
    }

private:
    const GroupingContext &cx_;
};

} // namespace

std::vector<std::vector<const Node *>> form_groups(const GroupingContext &cx) {
    return GroupFormer(cx).form();
}

bool is_view(const Node &n) {
    return n.domain.empty() &&
           (n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" ||
            n.op_type == "Unsqueeze" || n.op_type == "Identity");
}

} // namespace nhc::codegen_groups
