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

/** Whether the stage's extents (recorded by alg::broadcast_to) allow the fold. */
bool fits(const alg::Stage &s, int partitions, int64_t max_bytes, Fold &fold) {
    int rank = s.func.dimensions();
    if (static_cast<int>(s.shape.size()) != rank)
        return false;
    int64_t rows = s.shape[rank - 2], row_elems = s.shape[rank - 1];
    if (rows > partitions && rows % partitions != 0)
        return false; // the tiles are shifted inwards: y % P is not the in-tile row
    if (rows <= partitions)
        fold.dims[1] = Fold::Dim::Keep;
    return row_elems * s.func.output_types()[0].bytes() <= max_bytes;
}

} // namespace

std::set<std::string> fold_broadcast_stages(Group &g, int partitions,
                                            int64_t max_bytes_per_partition) {
    std::map<std::string, Fold> folds;
    for (const alg::Stage &s : g.op.stages) {
        std::optional<Fold> fold = fold_of(s, partitions);
        if (fold && fits(s, partitions, max_bytes_per_partition, *fold))
            folds[s.func.name()] = *fold;
    }
    std::set<std::string> folded;
    if (folds.empty())
        return folded;
    FoldReads rewrite(folds);
    for (alg::Stage &s : g.op.stages)
        s.func.function().mutate(&rewrite);
    for (GroupOutput &o : g.outputs)
        o.func.function().mutate(&rewrite);
    for (const auto &[name, fold] : folds)
        folded.insert(name);
    return folded;
}

} // namespace nhc::sched
