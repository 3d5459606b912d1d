#include "autoscheduler/TuningDb.h"

#include "support/Error.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sqlite3.h>
#include <thread>

namespace nhc::autosched {

namespace {

// How long a writer waits for another tuner's lock before giving up.
constexpr int kBusyTimeoutMs = 60000;

const char *kSchema = R"(
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  workload_hash TEXT NOT NULL,
  workload TEXT NOT NULL,
  target TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  plan TEXT NOT NULL,
  schedule TEXT NOT NULL,
  feasible INTEGER NOT NULL,
  predicted_ns REAL,
  simulated_ns REAL,
  error TEXT,
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
CREATE INDEX IF NOT EXISTS records_by_workload
  ON records (workload, target, compiler_version);
)";

[[noreturn]] void db_error(const std::string &path, const std::string &what, sqlite3 *db) {
    user_error("NHC_EIO003", "tuning database '", path, "': ", what,
               db ? std::string(": ") + sqlite3_errmsg(db) : std::string());
}

/** A prepared statement, finalised on scope exit. */
class Statement {
public:
    Statement(sqlite3 *db, const std::string &path, const char *sql) : db_(db), path_(path) {
        if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
            db_error(path, "cannot prepare a query", db);
    }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement &text(int i, const std::string &s) {
        sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
        return *this;
    }
    Statement &real(int i, double v) {
        sqlite3_bind_double(stmt_, i, v);
        return *this;
    }
    Statement &integer(int i, int64_t v) {
        sqlite3_bind_int64(stmt_, i, v);
        return *this;
    }
    /** Steps once; true while a row is available. */
    bool step() {
        int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW)
            return true;
        if (rc != SQLITE_DONE)
            db_error(path_, "a query failed", db_);
        return false;
    }
    std::string column_text(int i) const {
        const unsigned char *t = sqlite3_column_text(stmt_, i);
        return t ? reinterpret_cast<const char *>(t) : "";
    }
    double column_real(int i) const { return sqlite3_column_double(stmt_, i); }
    int64_t column_int(int i) const { return sqlite3_column_int64(stmt_, i); }

private:
    sqlite3 *db_;
    const std::string &path_;
    sqlite3_stmt *stmt_ = nullptr;
};

} // namespace

std::unique_ptr<TuningDb> TuningDb::open(const std::string &path, bool create) {
    std::error_code ec;
    if (!create && !std::filesystem::is_regular_file(path, ec))
        db_error(path, "no such file", nullptr);
    sqlite3 *db = nullptr;
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        db_error(path, "cannot open it (" + why + ")", nullptr);
    }
    std::unique_ptr<TuningDb> t(new TuningDb(db, path));
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    // Two sessions opening a new file at once: switching it to WAL, and creating the table, lock
    // it in ways for which SQLite may answer SQLITE_BUSY at once, without its busy handler (when
    // waiting could deadlock two connections, each holding a lock the other needs: "database
    // is locked"). Each is retried for the busy timeout; a last failure is the error.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (const char *sql : {"PRAGMA journal_mode=WAL", kSchema}) {
        int rc = SQLITE_OK;
        while ((rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr)) == SQLITE_BUSY &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (rc != SQLITE_OK)
            t->exec(sql); // once more, for the error's text
    }
    return t;
}

TuningDb::~TuningDb() {
    sqlite3_close(db_);
}

// The release and the generation of the records' meaning: bump the latter whenever what a plan
// text makes the schedules do, or what a record's figures mean, changes, so that older records
// are not trusted (plans2: A's transposes 4 per PSUM tile by default; plans3: predicted_ns is the
// list schedule's estimate of the window, no longer the busiest engine of the group alone;
// plans4: convolutions and poolings have plans, ImagePlan, so older records of their workloads
// lack a candidate; plans5: A^T in blocks beside output tiles of a quarter bank, a candidate
// older records of matmul workloads lack; plans6: predicted_ns is the replay of the window's
// scheduled order, codegen::replay_estimate).
std::string TuningDb::compiler_version() {
    return NHC_VERSION "+plans6";
}

void TuningDb::exec(const std::string &sql) const {
    char *err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string what = err ? err : "unknown error";
        sqlite3_free(err);
        db_error(path_, "not a tuning database, or not writable (" + what + ")", nullptr);
    }
}

void TuningDb::record(const TuningRecord &r) {
    Statement s(db_, path_,
                "INSERT INTO records (workload_hash, workload, target, compiler_version, plan, "
                "schedule, feasible, predicted_ns, simulated_ns, error) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    s.text(1, r.workload_hash)
        .text(2, r.workload_text)
        .text(3, r.target)
        .text(4, compiler_version())
        .text(5, r.plan)
        .text(6, r.schedule)
        .integer(7, r.feasible)
        .real(8, r.predicted_ns)
        .real(9, r.simulated_ns)
        .text(10, r.error);
    s.step();
}

std::vector<std::string> TuningDb::recorded_plans(const std::string &workload_text,
                                                  const std::string &target) const {
    Statement s(db_, path_,
                "SELECT plan FROM records WHERE workload = ?1 AND target = ?2 AND "
                "compiler_version = ?3 ORDER BY id");
    s.text(1, workload_text).text(2, target).text(3, compiler_version());
    std::vector<std::string> plans;
    while (s.step())
        plans.push_back(s.column_text(0));
    return plans;
}

std::optional<std::pair<std::string, double>> TuningDb::best_plan(const std::string &workload_text,
                                                                  const std::string &target) const {
    Statement s(db_, path_,
                "SELECT plan, simulated_ns FROM records WHERE workload = ?1 AND target = ?2 AND "
                "compiler_version = ?3 AND feasible = 1 ORDER BY simulated_ns, id LIMIT 1");
    s.text(1, workload_text).text(2, target).text(3, compiler_version());
    if (!s.step())
        return std::nullopt;
    return std::make_pair(s.column_text(0), s.column_real(1));
}

void TuningDb::visit_usable_records(const std::string &target,
                                    const std::function<void(const std::string &)> &visit) const {
    Statement s(db_, path_,
                "SELECT workload, plan, simulated_ns FROM records WHERE target = ?1 AND "
                "compiler_version = ?2 AND feasible = 1 ORDER BY id");
    s.text(1, target).text(2, compiler_version());
    while (s.step()) {
        char time[40];
        std::snprintf(time, sizeof time, "%a", s.column_real(2)); // exact, as stored
        visit(s.column_text(0) + "\n" + s.column_text(1) + "\n" + time);
    }
}

int64_t TuningDb::foreign_rows() const {
    Statement s(db_, path_, "SELECT COUNT(*) FROM records WHERE compiler_version != ?1");
    s.text(1, compiler_version());
    return s.step() ? s.column_int(0) : 0;
}

int64_t TuningDb::rows() const {
    Statement s(db_, path_, "SELECT COUNT(*) FROM records WHERE compiler_version = ?1");
    s.text(1, compiler_version());
    return s.step() ? s.column_int(0) : 0;
}

} // namespace nhc::autosched
