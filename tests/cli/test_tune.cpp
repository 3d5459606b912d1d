// neuron-halide-tune and neuron-halide-cc --tuning-db (issue 16): sessions record every measured
// candidate; a session killed with SIGKILL leaves a readable database and loses no committed
// record; two sessions on one database lose nothing; replay gives the same NEFF every time.

#include "CliRun.h"

#include <chrono>
#include <signal.h>
#include <sqlite3.h>
#include <thread>

using namespace nhc::cli_test;

namespace {

std::string tuner() {
    const char *p = std::getenv("NHC_TUNE");
    REQUIRE_MESSAGE(p != nullptr, "set NHC_TUNE to the neuron-halide-tune binary");
    return p;
}

Run tune(const std::string &args, const std::string &cwd) {
    return run_shell(in_dir(cwd) + tuner() + " " + args);
}

// The BERT layer of ../shared/models: four matmul workloads, a few seconds of tuning.
std::string bert_layer() {
    return std::string(NHC_SOURCE_DIR) + "/../shared/models/dev_bert_layer/model.onnx";
}

/** One integer the query returns (-1 when the file cannot be read as a database). */
int64_t query_int(const std::string &db_path, const std::string &sql) {
    sqlite3 *db = nullptr;
    int64_t value = -1;
    if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 10000);
        sqlite3_stmt *s = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW)
            value = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return value;
}

/** The text the query's first column returns ("" when the file cannot be read as one). */
std::string query_text(const std::string &db_path, const std::string &sql) {
    sqlite3 *db = nullptr;
    std::string value;
    if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt *s = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            value = reinterpret_cast<const char *>(sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return value;
}

int64_t rows(const std::string &db) {
    return query_int(db, "SELECT COUNT(*) FROM records");
}

/** "N candidates recorded" from a session's summary line. */
int recorded_by(const Run &r) {
    size_t at = r.out.find(" candidates recorded");
    REQUIRE(at != std::string::npos);
    size_t start = r.out.rfind(' ', at - 1) + 1;
    return std::stoi(r.out.substr(start, at - start));
}

} // namespace

TEST_CASE("a tuning session records every candidate; replay gives one NEFF, with exact values") {
    TempDir dir;
    Run t = tune(example_model() + " --db t.db --trials 3 -O3 --verbose info --output tuned.neff",
                 dir.path.string());
    INFO(t.out);
    REQUIRE(t.status == 0);
    CHECK(t.has("Tuning status PASS"));
    CHECK(t.has("code generation: 100% (")); // progress, with the time left
    int recorded = recorded_by(t);
    CHECK(recorded >= 2);
    CHECK(rows(dir.file("t.db")) == recorded);
    CHECK(query_int(dir.file("t.db"), "SELECT COUNT(DISTINCT workload_hash) FROM records") >= 1);
    CHECK(query_int(dir.file("t.db"), "SELECT COUNT(*) FROM records WHERE schedule = ''") == 0);
    // A second session measures only what is not recorded yet: nothing, with the same budget.
    Run again =
        tune(example_model() + " --db t.db --trials 3 -O3 --verbose info", dir.path.string());
    INFO(again.out);
    CHECK(again.status == 0);
    CHECK(recorded_by(again) == 0);
    CHECK(rows(dir.file("t.db")) == recorded);
    // Replay: the database's best plans, the same NEFF at every run, the reference values.
    for (const char *neff : {"a.neff", "b.neff"}) {
        Run r = run(example_model() + " --tuning-db t.db --verbose info --output " + neff,
                    dir.path.string());
        INFO(r.out);
        CHECK(r.status == 0);
        CHECK(r.has("from the tuning database"));
        CHECK(r.has("0 workloads searched"));
    }
    CHECK(read_file(dir.file("a.neff")) == read_file(dir.file("b.neff")));
    CHECK(example_rel_l2(dir, "a.neff") <= 1e-4);
}

TEST_CASE("a tuner measures every time: it refuses --cache-dir") {
    TempDir dir;
    expect_user_error(
        tune(example_model() + " --db t.db --trials 1 --cache-dir c", dir.path.string()),
        "NHC_EARG003");
}

TEST_CASE("records of another compiler version are ignored with a warning") {
    TempDir dir;
    REQUIRE(tune(example_model() + " --db t.db --trials 2", dir.path.string()).status == 0);
    int64_t n = rows(dir.file("t.db"));
    REQUIRE(n > 0);
    sqlite3 *db = nullptr;
    REQUIRE(sqlite3_open(dir.file("t.db").c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "UPDATE records SET compiler_version = '0.0.0-elsewhere'", nullptr,
                         nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    Run r = run(example_model() + " --tuning-db t.db --verbose info", dir.path.string());
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(r.has(std::to_string(n) + " records written by another compiler version are ignored"));
    CHECK(r.has("0 from the tuning database"));
}

TEST_CASE("a session killed with SIGKILL leaves a readable database; the next one completes it") {
    TempDir dir;
    std::string db = dir.file("t.db");
    std::string cmd = in_dir(dir.path.string()) + tuner() + " " + bert_layer() +
                      " --db t.db --trials 16 -O3 --output killed.neff > session.log 2>&1 & "
                      "echo $!";
    Run started = run_shell(cmd);
    REQUIRE(started.status == 0);
    int pid = std::stoi(started.out);
    // Kill it once it has committed a record or two, in the middle of its work.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (rows(db) < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    INFO(read_file(dir.file("session.log")));
    CHECK_FALSE(std::filesystem::exists(dir.file("killed.neff")));
    int64_t committed = rows(db);
    CHECK(committed >= 2);
    CHECK(query_int(db, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check = "
                        "'ok'") == 1);
    Run rest = tune(bert_layer() + " --db t.db --trials 16 -O3 --verbose info --output done.neff",
                    dir.path.string());
    INFO(rest.out);
    CHECK(rest.status == 0);
    CHECK(rows(db) == committed + recorded_by(rest));
    // Nothing measured twice: one record per (workload, plan).
    CHECK(query_int(db, "SELECT COUNT(*) FROM (SELECT DISTINCT workload, plan FROM records)") ==
          rows(db));
}

TEST_CASE("two sessions on one database at once lose nothing") {
    TempDir dir;
    std::string one = tuner() + " " + bert_layer() + " --db t.db --trials 6 --verbose info " +
                      "--output one.neff --logfile one.log > one.out 2>&1";
    std::string two = tuner() + " " + bert_layer() + " --db t.db --trials 6 --verbose info " +
                      "--output two.neff --logfile two.log > two.out 2>&1";
    Run both = run_shell(in_dir(dir.path.string()) + "{ (" + one + ") & (" + two + ") & wait; }");
    REQUIRE(both.status == 0);
    Run first{0, read_file(dir.file("one.out"))}, second{0, read_file(dir.file("two.out"))};
    INFO(first.out);
    INFO(second.out);
    REQUIRE(first.has("Tuning status PASS"));
    REQUIRE(second.has("Tuning status PASS"));
    CHECK(rows(dir.file("t.db")) == recorded_by(first) + recorded_by(second));
}

TEST_CASE("a session measuring candidates in parallel records what one at a time records") {
    TempDir dir;
    for (const char *jobs : {"1", "2"}) {
        Run r = tune(bert_layer() + " --db j" + jobs + ".db --trials 4 --jobs " + jobs +
                         " --output j" + jobs + ".neff",
                     dir.path.string());
        INFO(r.out);
        REQUIRE(r.has("Tuning status PASS"));
    }
    // Every record but its time of day: workload, plan, schedule, estimate, simulated time.
    const std::string records = "SELECT group_concat(workload_hash || plan || schedule || feasible "
                                "|| predicted_ns || simulated_ns || coalesce(error, ''), '|') "
                                "FROM (SELECT * FROM records ORDER BY id)";
    std::string one = query_text(dir.file("j1.db"), records);
    CHECK(!one.empty());
    CHECK(query_text(dir.file("j2.db"), records) == one);
    CHECK(read_file(dir.file("j1.neff")) == read_file(dir.file("j2.neff")));
}

TEST_CASE("tuning errors are coded: no database, --trials 0, a database that is not one") {
    TempDir dir;
    Run help = tune("--help", dir.path.string());
    CHECK(help.status == 0);
    CHECK(help.has("--trials N"));
    expect_user_error(tune(example_model() + " --trials 2", dir.path.string()), "NHC_EARG017");
    expect_user_error(tune(example_model() + " --db t.db --trials 0", dir.path.string()),
                      "NHC_EARG002");
    expect_user_error(tune(example_model() + " --db t.db --jobs 0", dir.path.string()),
                      "NHC_EARG002");
    expect_user_error(run(example_model() + " --tuning-db missing.db", dir.path.string()),
                      "NHC_EIO003");
    expect_user_error(run(example_model() + " --tuning-db=", dir.path.string()), "NHC_EARG002");
    std::ofstream(dir.file("text.db")) << "not a database, just text that is long enough\n";
    expect_user_error(run(example_model() + " --tuning-db text.db", dir.path.string()),
                      "NHC_EIO003");
    // A record whose plan this compiler does not write: the file is damaged, not trusted.
    REQUIRE(tune(example_model() + " --db bad.db --trials 2", dir.path.string()).status == 0);
    sqlite3 *db = nullptr;
    REQUIRE(sqlite3_open(dir.file("bad.db").c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "UPDATE records SET plan = 'matmul sideways', simulated_ns = 1",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    Run damaged = run(example_model() + " --tuning-db bad.db", dir.path.string());
    expect_user_error(damaged, "NHC_EIO003");
    CHECK(damaged.has("'matmul sideways'"));
}
