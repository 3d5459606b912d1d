#ifndef NHC_AUTOSCHEDULER_TUNINGDB_H
#define NHC_AUTOSCHEDULER_TUNINGDB_H

/** \file
 * The tuning database (issue 16): every candidate `neuron-halide-tune` measures, one row each,
 * in an SQLite file (Debian's libsqlite3) that `neuron-halide-cc --tuning-db` compiles from.
 * A row holds the workload (Workload.h: its text is the key, its hash for people), the target,
 * the compiler version, the plan (SchedulePlan::describe, read back by parse_plan), the schedule
 * as script text, the analytic estimate of the window the candidate is measured in (the list
 * schedule's finish, MeasureGroup.h) and its simulated time, or the refusal.
 *
 * Durability and sharing: WAL journal, each row committed on its own, so a tuner killed with
 * SIGKILL loses at most the row it was writing and leaves a readable file; several tuners may
 * write one file at once (SQLite's locking, waiting up to a minute for a busy file). Rows of
 * another compiler version or target are never used: the count of other versions' rows is
 * reported so that the caller can warn. Failures are user errors NHC_EIO003 naming the file.
 */

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace nhc::autosched {

struct TuningRecord {
    std::string workload_hash, workload_text;
    std::string target;
    std::string plan;     ///< SchedulePlan::describe()
    std::string schedule; ///< the group's schedule as a script block
    bool feasible = false;
    double predicted_ns = 0, simulated_ns = 0;
    std::string error; ///< the refusal, when not feasible
};

class TuningDb {
public:
    /** Opens (creating if `create`) the database at `path`; NHC_EIO003 if it cannot be opened,
     *  is not a tuning database, or (without `create`) does not exist. */
    static std::unique_ptr<TuningDb> open(const std::string &path, bool create);
    ~TuningDb();
    TuningDb(const TuningDb &) = delete;
    TuningDb &operator=(const TuningDb &) = delete;

    /** The version rows are written and read with: NHC_VERSION and the plans' generation. */
    static std::string compiler_version();

    /** Commits one row (this compiler version). */
    void record(const TuningRecord &r);
    /** The plans of this version's rows for a workload on a target, feasible or not. */
    std::vector<std::string> recorded_plans(const std::string &workload_text,
                                            const std::string &target) const;
    /** This version's fastest feasible plan for a workload on a target (ties: the first
     *  recorded), with its simulated time. */
    std::optional<std::pair<std::string, double>> best_plan(const std::string &workload_text,
                                                            const std::string &target) const;
    /** Calls `visit` with each feasible row of this version for `target`, in the order recorded,
     *  as its workload, plan and simulated time: what best_plan chooses from, so what a compile
     *  with this database depends on (driver/CompileCache.h keys on it). */
    void visit_usable_records(const std::string &target,
                              const std::function<void(const std::string &)> &visit) const;
    /** Rows written by other compiler versions (ignored). */
    int64_t foreign_rows() const;
    /** All rows of this version. */
    int64_t rows() const;

private:
    TuningDb(sqlite3 *db, std::string path) : db_(db), path_(std::move(path)) {}
    void exec(const std::string &sql) const;

    sqlite3 *db_;
    std::string path_;
};

} // namespace nhc::autosched

#endif
