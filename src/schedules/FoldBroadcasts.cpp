#include "schedules/FoldBroadcasts.h"

#include <map>
#include <optional>

namespace nhc::sched {

namespace {

using namespace Halide::Internal;

bool is_broadcast_role(const std::string &role) {
    return role == "bias" || role == "gamma_b" || role == "beta_b" || role.rfind("bcast", 0) == 0;
}

/** Whether any expression of `f`'s pure definition reads the Var named `name`. */
bool reads_var(const Halide::Func &f, const std::string &name) {
    struct Finder : IRVisitor {
        const std::string &name;
        bool found = false;
        explicit Finder(const std::string &n) : name(n) {}
        using IRVisitor::visit;
        void visit(const Variable *v) override { found = found || v->name == name; }
    } finder(name);
    for (const Halide::Expr &e : f.function().definition().values())
        e.accept(&finder);
    return finder.found;
}

/** How the reads of one folded stage are rewritten: per Halide dim, keep, `% period` or 0. */
struct Fold {
    enum class Dim { Keep, Modulo, Zero };
    std::vector<Dim> dims;
    int period = 0;
};

/** Rewrites the reads of folded stages in one consumer's definitions. */
class FoldReads : public IRMutator {
public:
    explicit FoldReads(const std::map<std::string, Fold> &folds) : folds_(folds) {}
    using IRMutator::visit;

    Halide::Expr visit(const Call *c) override {
        auto it = c->call_type == Call::Halide ? folds_.find(c->name) : folds_.end();
        if (it == folds_.end())
            return IRMutator::visit(c);
        std::vector<Halide::Expr> args;
        for (size_t d = 0; d < c->args.size(); d++) {
            Halide::Expr a = mutate(c->args[d]);
            switch (it->second.dims[d]) {
            case Fold::Dim::Keep:
                args.push_back(a);
                break;
            case Fold::Dim::Modulo:
                args.push_back(a % it->second.period);
                break;
            case Fold::Dim::Zero:
                args.push_back(0);
                break;
            }
        }
        return Call::make(c->type, c->name, args, c->call_type, c->func, c->value_index, c->image,
                          c->param);
    }

private:
    const std::map<std::string, Fold> &folds_;
};

/** The fold of one broadcast stage, or nullopt when it must stay per tile. */
std::optional<Fold> fold_of(const alg::Stage &s, int partitions) {
    Halide::Func f = s.func;
    int rank = f.dimensions();
    if (!is_broadcast_role(s.role) || rank < 2 || f.function().has_update_definition())
        return std::nullopt;
    const std::vector<std::string> args = f.function().args();
    Fold fold;
    fold.period = partitions;
    fold.dims.assign(rank, Fold::Dim::Keep);
    for (int d = 1; d < rank; d++) {
        if (reads_var(f, args[d]))
            return std::nullopt; // the value changes along it: not a broadcast there
        fold.dims[d] = d == 1 ? Fold::Dim::Modulo : Fold::Dim::Zero;
    }
    return fold;
}

/** Why the stage's extents (recorded by alg::broadcast_to) do not allow the fold, or "". */
std::string extents_refuse(const alg::Stage &s, int partitions, Fold &fold) {
    int rank = s.func.dimensions();
    if (static_cast<int>(s.shape.size()) != rank)
        return "its extents are not known";
    int64_t rows = s.shape[rank - 2];
    if (rows > partitions && rows % partitions != 0)
        return "its " + std::to_string(rows) + " rows are not a multiple of the period " +
               std::to_string(partitions) + " (tiles shifted inwards: y % P is not the row)";
    if (rows <= partitions)
        fold.dims[1] = Fold::Dim::Keep;
    return "";
}

int64_t row_bytes(const alg::Stage &s) {
    return s.shape.back() * s.func.output_types()[0].bytes();
}

/** Rewrites the reads of the folded stages in every definition of the group. */
void apply_folds(Group &g, const std::map<std::string, Fold> &folds) {
    if (folds.empty())
        return;
    FoldReads rewrite(folds);
    for (alg::Stage &s : g.op.stages)
        s.func.function().mutate(&rewrite);
    for (GroupOutput &o : g.outputs)
        o.func.function().mutate(&rewrite);
    for (const auto &[name, fold] : folds)
        g.folded_broadcasts[name] = fold.period;
}

} // namespace

std::set<std::string> fold_broadcast_stages(Group &g, int partitions,
                                            int64_t max_bytes_per_partition) {
    std::map<std::string, Fold> folds;
    for (const alg::Stage &s : g.op.stages) {
        std::optional<Fold> fold = fold_of(s, partitions);
        if (fold && extents_refuse(s, partitions, *fold).empty() &&
            row_bytes(s) <= max_bytes_per_partition)
            folds[s.func.name()] = *fold;
    }
    apply_folds(g, folds);
    std::set<std::string> folded;
    for (const auto &[name, fold] : folds)
        folded.insert(name);
    return folded;
}

std::string fold_broadcast_stage(Group &g, const std::string &func_name, int period) {
    for (const alg::Stage &s : g.op.stages) {
        if (s.func.name() != func_name)
            continue;
        if (g.folded_broadcasts.count(func_name))
            return "it is folded already";
        std::optional<Fold> fold = fold_of(s, period);
        if (!fold)
            return "it is not a broadcast stage (roles bias, gamma_b, beta_b, bcast*, of rank 2 "
                   "or more, whose value is the same along every dim but the innermost)";
        if (std::string why = extents_refuse(s, period, *fold); !why.empty())
            return why;
        apply_folds(g, {{func_name, *fold}});
        return "";
    }
    return "it is not a stage of the algorithm";
}

} // namespace nhc::sched
