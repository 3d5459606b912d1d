#ifndef NHC_TESTS_SCHEDULES_SCHEDULEFUZZ_H
#define NHC_TESTS_SCHEDULES_SCHEDULEFUZZ_H

// The schedule fuzzer (issue 14: every schedule the compiler accepts is correct). A case is a
// graph of one group (one node of an operator family, or a chain the code generator fuses) with
// seeded inputs and its host reference; a variant is the group's default schedule, printed as
// one block (sched::describe_schedule), mutated by a
// few seeded random edits (split factors, tails, new splits, reorders, fuses, unrolls, compute
// and store levels, memory types, partition hints, split reductions computed at outer loops).
// Each variant is compiled with the production code generator (generate_program with the script),
// run on the simulator with race detection and compared with the reference. The only acceptable
// outcomes are a match and a refusal with a coded user error at compile time; anything else is a
// compiler bug. Used by tests/schedules/test_schedule_fuzz.cpp (a short deterministic subset) and
// bench/schedule_fuzz.cpp (thousands of variants, figures in bench/README.md).

#include "graph/Graph.h"
#include "graph/HostTensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nhc::fuzz {

/** A deterministic generator (splitmix64): the same variants on every machine and library. */
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next();
    /** Uniform in [0, n); n > 0. */
    int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
    bool chance(int percent) { return below(100) < percent; }
    template <typename T>
    const T &pick(const std::vector<T> &v) {
        return v[below(int(v.size()))];
    }

private:
    uint64_t state_;
};

/** One family's graph, after the graph passes the compiler runs on it (a Conv becomes ConvTaps,
 *  a pooling PoolTaps): one node, or the nodes of one fused group. */
struct FuzzCase {
    std::string family;   ///< "matmul", "gemm", "softmax", ...
    std::string describe; ///< operator and shapes, for reports
    Graph graph;          ///< the graph the code generator compiles: one group
    std::map<std::string, HostTensor> inputs;
    std::map<std::string, HostTensor> want; ///< the host reference of the original graph
    std::string base_script;                ///< the group's default schedule as a script
};

/** The families the fuzzer covers, in report order. */
const std::vector<std::string> &families();
/** A case of `family` with shapes drawn from `rng` (the reference is computed here). */
FuzzCase make_case(const std::string &family, Rng &rng);

/** A mutated script and the edits that made it (for reports). */
struct Variant {
    std::string script;
    std::vector<std::string> edits;
};
/** The base script with 1 to `max_edits` random edits. */
Variant mutate(const FuzzCase &c, Rng &rng, int max_edits = 3);

/** Matched and Refused are the acceptable outcomes. Internal: an internal error (assertion) or an
 *  exception that is no user error; Crashed: the child died of a signal; TimedOut: it ran past
 *  the time limit (a hang, or a schedule of so many tiles that compiling it takes minutes). */
enum class Outcome { Matched, Refused, Wrong, RuntimeRefused, Internal, Crashed, TimedOut };
const char *outcome_name(Outcome o);
/** Whether the outcome is a compiler bug. */
inline bool is_bug(Outcome o) {
    return o != Outcome::Matched && o != Outcome::Refused;
}

struct Result {
    Outcome outcome = Outcome::Crashed;
    std::string code;    ///< the user error's code (refused, runtime-refused)
    std::string message; ///< the error, or the comparison for a wrong value
};

/** Compiles, runs and compares one variant in this process (exceptions are classified). */
Result run_variant(const FuzzCase &c, const std::string &script);
/** The same in a forked child with a time limit: a crash or a hang is a result too. */
Result run_variant_forked(const FuzzCase &c, const std::string &script, unsigned timeout_s);

/** Counts per family and outcome, refusals per code. */
struct Tally {
    struct Row {
        std::map<Outcome, int> outcomes;
        std::map<std::string, int> refused_codes;
    };
    std::map<std::string, Row> rows;
    void add(const std::string &family, const Result &r);
    int bugs() const;
    std::string to_string() const;
};

} // namespace nhc::fuzz

#endif
