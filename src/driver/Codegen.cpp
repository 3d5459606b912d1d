#include "driver/Codegen.h"

#include "autoscheduler/Autoschedule.h"
#include "driver/CopyGroups.h"
#include "driver/FormGroups.h"
#include "driver/HbmVariables.h"
#include "driver/LoweringCache.h"
#include "driver/ResidentOutputs.h"
#include "neff/ForwardStores.h"
#include "neff/InsertSemaphores.h"
#include "neff/LowerGroup.h"
#include "neff/NarrowStores.h"
#include "neff/ScheduleInstructions.h"
#include "neff/SelectGroup.h"
#include "neff/TileWeights.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/ScheduleScript.h"
#include "support/Error.h"
#include "support/Log.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

namespace nhc {

namespace {

using codegen_copies::CopyTarget;
using codegen_groups::is_view;

using codegen::isa_dtype_of;

autosched::SearchOptions search_options(const CompileOptions &o) {
    autosched::SearchOptions so;
    so.optlevel = o.optlevel;
    so.model_type = o.model_type;
    so.db = o.tuning;
    so.record_trials = o.tune_trials;
    so.fixed = o.fixed_plans;
    so.jobs = parallel_jobs(o);
    so.whole_model_moves = o.whole_model_moves;
    return so;
}

class ProgramBuilder {
public:
    /** `consumed`: the same graph as `g`, whose constants build() may release (or null). */
    ProgramBuilder(const Graph &g, const CompileOptions &o, Graph *consumed = nullptr)
        : g_(g), consumed_(consumed), o_(o), target_(&target::target_by_name(o.target)),
          autoscheduler_(g, *target_, search_options(o)), values_(index_values(g)) {
        prog_.target = o.target;
        prog_.name = g.name;
    }

    neff::Program build() {
        plan_memory();
        groups_ = form_groups();
        resident_ = std::make_unique<ResidentOutputs>(g_, values_, groups_);
        nhc_assert(!o_.prefetch_bytes || o_.prefetch_bytes->size() == groups_.size(),
                   "prefetch sizes for " << o_.prefetch_bytes->size() << " groups, the program has "
                                         << groups_.size());
        if (o_.group_lifetime_bytes)
            o_.group_lifetime_bytes->assign(groups_.size(), 0);
        ProgressMeter progress("code generation", static_cast<int64_t>(groups_.size()), "groups");
        for (current_ = 0; current_ < groups_.size(); current_++) {
            compile_group(groups_[current_]);
            resident_->compiled(current_);
            progress.advance();
        }
        if (autosched::measured_budget(o_.optlevel) > 0 || o_.tuning)
            log_info(autoscheduler_.summary());
        log_info("lowering: ", lowering_.lowered_count(), " groups lowered through Halide, ",
                 lowering_.reused_count(), " reused an earlier group's (same workload and plan)");
        if (o_.chosen_plans)
            *o_.chosen_plans = autoscheduler_.chosen();
        if (o_.window_gains)
            *o_.window_gains = autoscheduler_.window_gains();
        copy_outputs_without_producer();
        if (o_.used_schedules)
            o_.used_schedules->trailing_comments = std::move(unscheduled_);
        keep_tensors_resident();
        round_on_engines();
        release_graph_constants();
        tile_weight_layouts();
        {
            TimedStep step("schedule instructions");
            codegen::schedule_instructions(selected_, *target_, dependency_aware_schedule());
        }
        {
            TimedStep step("insert semaphores");
            codegen::insert_semaphores(selected_, prog_);
        }
        prog_.layout_hbm();
        return std::move(prog_);
    }

private:
    /** The HBM plan (HbmVariables.h); a Transpose its producer writes has no group, so a block
     *  for it is refused. */
    void plan_memory() {
        hbm_ = std::make_unique<HbmVariables>(g_, values_, prog_, o_.without_weight_bytes);
        for (const Node *t : hbm_->folded_transposes())
            refuse_block_of_folded(*t);
    }

    // A block for a Transpose its producer writes transposed would be ignored: refuse it.
    void refuse_block_of_folded(const Node &transpose) const {
        const sched::ScriptBlock *b = o_.schedule ? o_.schedule->find(transpose.name) : nullptr;
        if (!b)
            return;
        std::string producer;
        for (const Node &m : g_.nodes)
            if (std::find(m.outputs.begin(), m.outputs.end(), transpose.inputs[0]) !=
                m.outputs.end())
                producer = m.name;
        user_error("NHC_ESCH118", o_.schedule->file, ":", b->line, ": node \"", transpose.name,
                   "\": this Transpose has no instruction of its own: its producer \"", producer,
                   "\" writes its output in the transposed layout; schedule the producer's group "
                   "instead");
    }

    int var(const std::string &value) { return hbm_->var(value); }

    std::vector<std::vector<const Node *>> form_groups() const {
        codegen_groups::GroupingContext cx{g_, *target_, o_.schedule, values_, {}};
        for (const Node &n : g_.nodes)
            if ((is_view(n) &&
                 (!hbm_->graph_outputs().count(n.outputs[0]) || hbm_->written_in_place(n))) ||
                (n.op_type == "Concat" && n.domain.empty() &&
                 std::all_of(n.inputs.begin(), n.inputs.end(),
                             [&](const std::string &in) { return hbm_->computed_in_place(in); })) ||
                (n.op_type == "Transpose" && n.inputs.size() == 1 &&
                 hbm_->transposed_perm(n.inputs[0]))) // its producer writes the transposed layout
                cx.without_group.insert(n.name);
        return codegen_groups::form_groups(cx);
    }

    void compile_group(const std::vector<const Node *> &nodes) {
        const Node &n = *nodes.back();
        std::string name;
        for (const Node *m : nodes)
            name += (name.empty() ? "" : "+") + m->name;
        TimedStep step("codegen: " + name);
        if (is_view(n)) {
            note_unscheduled(n, "a view copied to its graph output by one DMA");
            flat_copy(n.inputs[0], n.outputs[0], n.name);
            return;
        }
        if (n.op_type == "Concat") {
            note_unscheduled(n, "each input copied through SBUF");
            CopyTarget t = copy_target();
            t.target = target_;
            t.sbuf_history = &sbuf_history_;
            t.reserved_sbuf = resident_->reserved();
            t.in_place = [&](const std::string &in) { return hbm_->computed_in_place(in); };
            codegen_copies::concat(t, n);
            return;
        }
        if (n.op_type == "Im2Col") {
            note_unscheduled(n, "gathered by DMAs");
            codegen_copies::im2col(copy_target(), n);
            return;
        }
        // A --schedule block for this node replaces its default schedule.
        std::map<std::string, std::vector<int64_t>> output_perm = output_perm_of(nodes);
        sched::Group grp = sched::build_group(g_, values_, nodes, output_perm);
        const sched::ScriptBlock *block =
            o_.schedule ? o_.schedule->find(nodes.front()->name) : nullptr;
        sched::SchedulePlan plan;
        if (block)
            sched::apply_schedule_block(*o_.schedule, *block, grp);
        else {
            plan = autoscheduler_.plan_for(
                grp, output_perm,
                [&] { return sched::build_group(g_, values_, nodes, output_perm); },
                [&] { return program_context(); });
            // A plan chosen for the workload elsewhere keeps this output only where the next
            // group is all that reads it.
            plan.output_resident = plan.output_resident && may_keep_output();
            sched::apply_default_schedule(grp, *target_, plan);
        }
        if (o_.used_schedules)
            record_schedule(grp, plan);
        codegen::LoweredGroup lg =
            block ? sched::lower_scripted(*o_.schedule, *block, grp,
                                          [&] { return codegen::lower_group(grp); })
                  : lower_default(grp, output_perm, plan);
        codegen::SelectOptions so;
        so.target = target_;
        so.node_name = name;
        so.sbuf_history = sbuf_history_;
        so.psum_history = psum_history_;
        so.keep_for_next = prefetch_bytes(current_ + 1);
        so.reserved_sbuf = resident_->reserved();
        so.broadcast_on_pe = o_.broadcast_on_pe;
        std::vector<codegen::SelectedInstr> ins = codegen::select_group(
            lg, so, [this](const std::string &v) { return hbm_->binding(v); });
        sbuf_history_ = std::move(so.sbuf_history);
        psum_history_ = std::move(so.psum_history);
        if (o_.group_lifetime_bytes)
            (*o_.group_lifetime_bytes)[current_] = so.group_lifetime_bytes;
        resident_->keep(current_, so.kept_sbuf);
        log_debug(name, ": ", ins.size(), " instructions");
        group_starts_.push_back(selected_.size());
        selected_.insert(selected_.end(), ins.begin(), ins.end());
    }

    // A default-scheduled group: lowered once per workload and plan (driver/LoweringCache.h).
    codegen::LoweredGroup lower_default(const sched::Group &grp,
                                        const std::map<std::string, std::vector<int64_t>> &perm,
                                        const sched::SchedulePlan &plan) {
        if (!o_.reuse_lowered_groups)
            return codegen::lower_group(grp);
        autosched::Workload w = autosched::workload_of(g_, grp, perm, target_->name);
        return lowering_.lowered(grp, w.text + w.literals, plan,
                                 [&] { return codegen::lower_group(grp); });
    }

    // Groups whose outputs their consumer Transpose folds are stored permuted (plan_memory).
    std::map<std::string, std::vector<int64_t>>
    output_perm_of(const std::vector<const Node *> &nodes) const {
        std::map<std::string, std::vector<int64_t>> output_perm;
        for (const Node *m : nodes)
            for (const std::string &out : m->outputs)
                if (const std::vector<int64_t> *perm = hbm_->transposed_perm(out))
                    output_perm[out] = *perm;
        return output_perm;
    }

    // The groups after the current one, lowered with their default schedules (or --schedule
    // blocks), for the autoscheduler's measurements; those compiled without a schedule or that
    // cannot be lowered (their own compile reports why, in its place) are left out.
    std::vector<autosched::FollowingGroup> following_groups() const {
        std::vector<autosched::FollowingGroup> following;
        for (size_t i = current_ + 1;
             i < groups_.size() && following.size() < size_t(autosched::kContextGroups); i++)
            if (std::optional<autosched::FollowingGroup> f = following_group(groups_[i]))
                following.push_back(std::move(*f));
        return following;
    }

    std::optional<autosched::FollowingGroup>
    following_group(const std::vector<const Node *> &nodes) const {
        const Node &n = *nodes.back();
        if (is_view(n) || n.op_type == "Concat" || n.op_type == "Im2Col")
            return std::nullopt;
        try {
            std::map<std::string, std::vector<int64_t>> perm = output_perm_of(nodes);
            sched::Group next = sched::build_group(g_, values_, nodes, perm);
            autosched::FollowingGroup f;
            f.values = sched::hbm_values(next);
            const sched::ScriptBlock *block =
                o_.schedule ? o_.schedule->find(nodes.front()->name) : nullptr;
            if (block) {
                sched::apply_schedule_block(*o_.schedule, *block, next);
            } else {
                f.workload = autosched::workload_of(g_, next, perm, target_->name).text;
                sched::apply_default_schedule(next, *target_);
            }
            f.lowered = std::make_shared<const codegen::LoweredGroup>(codegen::lower_group(next));
            return f;
        } catch (const UserError &) {
            return std::nullopt;
        } catch (const Halide::CompileError &) {
            return std::nullopt;
        }
    }

    // What the autoscheduler measures a group between: the last groups' instructions, the
    // variables so far (without their bytes), the allocation cursors and the next groups.
    autosched::ProgramContext program_context() const {
        autosched::ProgramContext cx;
        size_t groups = group_starts_.size(), first = 0;
        if (groups > static_cast<size_t>(autosched::kContextGroups))
            first = group_starts_[groups - autosched::kContextGroups];
        cx.prefix.assign(selected_.begin() + static_cast<std::ptrdiff_t>(first), selected_.end());
        for (const neff::Variable &v : prog_.vars) { // metadata only: weights stay here
            neff::Variable meta;
            meta.name = v.name;
            meta.kind = v.kind;
            meta.dtype = v.dtype;
            meta.shape = v.shape;
            cx.vars.push_back(std::move(meta));
        }
        cx.existing_var = [this](const std::string &v) { return hbm_->existing_var(v); };
        cx.offset_in_var = [this](const std::string &v) { return hbm_->offset_in_var(v); };
        cx.sbuf_history = sbuf_history_;
        cx.psum_history = psum_history_;
        cx.reserved_sbuf = resident_->reserved();
        cx.may_keep_output = may_keep_output();
        cx.dependency_overhead = dependency_aware_schedule();
        cx.forward_loads = o_.optlevel >= 2 && o_.keep_resident; // as keep_tensors_resident
        cx.read_in_place = o_.read_in_place;
        cx.broadcast_on_pe = o_.broadcast_on_pe;
        cx.round_on_engines = o_.optlevel >= 2; // as round_on_engines
        cx.tile_weights = o_.optlevel >= 2;     // as tile_weight_layouts
        cx.following = following_groups();
        return cx;
    }

    bool may_keep_output() const { return resident_->may_keep(current_); }

    /** CompileOptions::prefetch_bytes of group `i` (0 past the last group). */
    int64_t prefetch_bytes(size_t i) const {
        return o_.prefetch_bytes && i < o_.prefetch_bytes->size() ? (*o_.prefetch_bytes)[i] : 0;
    }

    // --dump-schedules: the group's schedule as a block, named by its nodes.
    void record_schedule(const sched::Group &grp, const sched::SchedulePlan &plan) {
        sched::ScriptBlock b = sched::describe_schedule(grp);
        std::string what;
        for (const Node *m : grp.nodes)
            what += (what.empty() ? " " : " + ") + m->describe();
        b.leading_comments = std::move(unscheduled_);
        unscheduled_.clear();
        b.leading_comments.push_back(what);
        if (!plan.is_default())
            b.leading_comments.push_back(" chosen by the autoscheduler: " + plan.describe());
        o_.used_schedules->blocks.push_back(std::move(b));
    }

    // --dump-schedules: a node compiled without a schedule, said in the script as a comment.
    void note_unscheduled(const Node &n, const std::string &how) {
        if (!o_.used_schedules)
            return;
        unscheduled_.push_back(" " + n.describe() + ": " + how + ", no schedule");
    }

    // One DMA moving a whole tensor's bytes (views that are graph outputs, inputs returned as is).
    CopyTarget copy_target() {
        return {g_, prog_, [this](const std::string &v) { return var(v); }, selected_};
    }

    void flat_copy(const std::string &from, const std::string &to, const std::string &name) {
        codegen_copies::flat_copy(copy_target(), var(from), var(to), name);
    }

    /** At -O2 and -O3 the instruction scheduler counts the overhead of dependent instructions
     *  and interleaves independent chains to avoid it (neff/ScheduleInstructions.h); -O1 keeps
     *  the schedule it had. */
    bool dependency_aware_schedule() const { return o_.optlevel >= 2; }

    /** Whole-model move: loads of tensors still in SBUF become on-chip copies. */
    void keep_tensors_resident() {
        if (o_.optlevel < 2 || !o_.keep_resident)
            return;
        TimedStep step("keep tensors resident");
        codegen::ForwardStats f = codegen::forward_stores(
            selected_, prog_, /*drop_unread_stores=*/true, o_.read_in_place);
        if (o_.loads_kept_resident)
            *o_.loads_kept_resident = f.loads_forwarded;
        log_info("residency: ", f.loads_forwarded, " loads of tensors still in SBUF and ",
                 f.repeated_loads_forwarded, " repeated loads became ", f.copies,
                 " on-chip copies, ", f.read_in_place, " reads of the tiles where they are; ",
                 f.stores_dropped, " stores of tensors no longer read from HBM dropped");
    }

    /** Whole-model move: stores that round fp32 tiles to 16 bits take tiles the engines wrote
     *  in 16 bits instead, moving half the bytes; then, with tensors kept resident, those that
     *  no load reads any more are dropped (keep_tensors_resident dropped the others). */
    void round_on_engines() {
        if (o_.optlevel < 2)
            return;
        TimedStep step("round on the engines");
        int narrowed = codegen::narrow_stores(selected_);
        int dropped = o_.keep_resident ? codegen::drop_unread_stores(selected_, prog_, true) : 0;
        log_info("rounding: ", narrowed,
                 " stores to 16-bit tensors take tiles the engines wrote in 16 bits; ", dropped,
                 " stores that cast, of tensors no longer read from HBM, dropped");
    }

    /** Nothing reads the graph's constants after this point: the program's weights share the
     *  bytes they need, or the tensors they are made from (HbmVariables::add_var), and the
     *  graph's references go, so that a constant no weight needs is freed. */
    void release_graph_constants() {
        if (!consumed_)
            return;
        for (auto &[name, v] : consumed_->values)
            v.constant.reset();
    }

    /** Whole-model move: weights stored in the order their loads read them, loads of adjacent
     *  K-chunks merged into long rows. */
    void tile_weight_layouts() {
        if (o_.optlevel < 2)
            return;
        TimedStep step("tile weight layouts");
        codegen::TileWeightStats t = codegen::tile_weights(selected_, prog_, *target_);
        log_info("weight layouts: ", t.weights, " weights stored in load order, ", t.loads_merged,
                 " of their loads merged into the one before");
    }

    void copy_outputs_without_producer() {
        std::set<std::string> produced;
        for (const Node &n : g_.nodes)
            produced.insert(n.outputs.begin(), n.outputs.end());
        for (const std::string &out : g_.outputs) {
            if (produced.count(out))
                continue;
            // A constant returned as an output (a model folded away entirely) is copied from its
            // weight variable; a graph input returned as an output has no variable of its own.
            const Value &v = g_.value(out);
            if (v.is_constant()) {
                std::string weight = out + "__constant";
                hbm_->add_weight(weight, v);
                flat_copy(weight, out, out);
                continue;
            }
            user_error("NHC_EGEN017", "graph output '", out,
                       "' is a graph input or a constant; "
                       "outputs computed by no node are not supported yet");
        }
    }

    const Graph &g_;
    Graph *consumed_ = nullptr; ///< g_, when the builder may release its constants
    const CompileOptions &o_;
    const target::TargetInfo *target_ = nullptr;
    autosched::Autoscheduler autoscheduler_;
    ValueIndex values_; ///< who computes and reads each value, for build_group
    LoweringCache lowering_;
    neff::Program prog_;
    std::unique_ptr<HbmVariables> hbm_; ///< which variable holds each value (plan_memory)
    /// on-chip allocation rotates across groups
    codegen::AllocationHistory sbuf_history_, psum_history_;
    std::vector<codegen::SelectedInstr> selected_;
    std::vector<size_t> group_starts_; ///< where each scheduled group's instructions begin
    std::vector<std::vector<const Node *>> groups_; ///< every group, in compile order
    size_t current_ = 0;                            ///< the group being compiled
    std::unique_ptr<ResidentOutputs> resident_;     ///< SBUF regions outputs keep for readers
    std::vector<std::string> unscheduled_; ///< --dump-schedules comments before the next block
};

} // namespace

neff::Program generate_program(const Graph &g, const CompileOptions &options) {
    return ProgramBuilder(g, options).build();
}

neff::Program generate_program(Graph &&g, const CompileOptions &options) {
    Graph consumed = std::move(g);
    return ProgramBuilder(consumed, options, &consumed).build();
}

} // namespace nhc
