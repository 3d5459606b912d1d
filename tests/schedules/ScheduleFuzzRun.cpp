// Schedule fuzzer, part three (ScheduleFuzz.h): one variant compiled by the production code
// generator (generate_program with the script as --schedule), run on the simulator with race
// detection, compared with the host reference; its outcome classified, in this process or in a
// forked child (tests/ForkedRun.h) so that a crash or a hang does not end the run; the tally.

#include "ScheduleFuzz.h"

#include "../ForkedRun.h"
#include "../e2e/E2E.h"
#include "schedules/ScheduleScript.h"

#include <cstdio>
#include <sstream>

namespace nhc::fuzz {

namespace {

// Simulated fp32 against the host's fp32: the bound of the other schedule tests (rel L2 1e-4),
// and every element close (a few wrong elements barely move the L2 error).
constexpr double kMaxRelL2 = 1e-4, kRtol = 1e-3, kAtol = 1e-4;

Result classify_compile_error(const std::string &code, const std::string &what) {
    return {Outcome::Refused, code, what};
}

neff::Program compile(const FuzzCase &c, const sched::ScheduleScript &script) {
    CompileOptions o;
    o.schedule = &script;
    return generate_program(c.graph, o);
}

Result compare_outputs(const FuzzCase &c, const test::E2EResult &got) {
    for (const auto &[name, want] : c.want) {
        test::Comparison cmp = test::compare(got.outputs.at(name), want, kRtol, kAtol);
        if (!cmp.ok || cmp.rel_l2 > kMaxRelL2) {
            std::ostringstream os;
            os << "output " << name << ": rel L2 " << cmp.rel_l2 << ", max abs error "
               << cmp.max_abs_err << (cmp.why.empty() ? "" : ", first: " + cmp.why);
            return {Outcome::Wrong, "", os.str()};
        }
    }
    return {Outcome::Matched, "", ""};
}

} // namespace

const char *outcome_name(Outcome o) {
    switch (o) {
    case Outcome::Matched:
        return "matched";
    case Outcome::Refused:
        return "refused";
    case Outcome::Wrong:
        return "wrong";
    case Outcome::RuntimeRefused:
        return "runtime-refused";
    case Outcome::Internal:
        return "internal";
    case Outcome::Crashed:
        return "crashed";
    case Outcome::TimedOut:
        return "timed-out";
    }
    return "?";
}

Result run_variant(const FuzzCase &c, const std::string &text) {
    neff::Program p;
    try {
        sched::ScheduleScript script = sched::parse_schedule(text, "fuzz.sched");
        p = compile(c, script);
    } catch (const UserError &e) {
        return classify_compile_error(e.code(), e.what());
    } catch (const InternalError &e) {
        return {Outcome::Internal, "", e.what()};
    } catch (const Halide::Error &e) { // Halide's own assertions, or an error left unreported
        return {Outcome::Internal, "", std::string("halide: ") + e.what()};
    } catch (const std::exception &e) {
        return {Outcome::Internal, "", std::string("exception: ") + e.what()};
    }
    try {
        return compare_outputs(c, test::run_program(std::move(p), c.graph, c.inputs));
    } catch (const UserError &e) {
        return {Outcome::RuntimeRefused, e.code(), e.what()};
    } catch (const std::exception &e) {
        return {Outcome::Internal, "", std::string("while running: ") + e.what()};
    }
}

Result run_variant_forked(const FuzzCase &c, const std::string &script, unsigned timeout_s) {
    // The child writes "<outcome> <code>\n<message>" through ForkedRun's pipe.
    test::ForkedResult fr = test::run_forked(
        [&]() -> std::pair<int, std::string> {
            // In the child: Halide's warnings about directives on inlined stages, one per such
            // variant, would drown the report (errors are exceptions, classified below).
            if (!std::freopen("/dev/null", "w", stderr))
                return {static_cast<int>(Outcome::Internal), "\ncannot silence stderr"};
            Result r = run_variant(c, script);
            return {static_cast<int>(r.outcome), r.code + "\n" + r.message};
        },
        timeout_s);
    if (fr.kind == test::ForkedResult::TimedOut)
        return {Outcome::TimedOut, "", "no result after " + std::to_string(timeout_s) + " s"};
    if (fr.kind != test::ForkedResult::Exited)
        return {Outcome::Crashed, "", fr.message};
    size_t nl = fr.message.find('\n');
    return {static_cast<Outcome>(fr.code), fr.message.substr(0, nl),
            nl == std::string::npos ? "" : fr.message.substr(nl + 1)};
}

void Tally::add(const std::string &family, const Result &r) {
    Row &row = rows[family];
    row.outcomes[r.outcome]++;
    if (r.outcome == Outcome::Refused || r.outcome == Outcome::RuntimeRefused)
        row.refused_codes[r.code]++;
}

int Tally::bugs() const {
    int n = 0;
    for (const auto &[family, row] : rows)
        for (const auto &[o, count] : row.outcomes)
            n += is_bug(o) ? count : 0;
    return n;
}

std::string Tally::to_string() const {
    std::ostringstream os;
    const Outcome all[] = {Outcome::Matched,        Outcome::Refused,  Outcome::Wrong,
                           Outcome::RuntimeRefused, Outcome::Internal, Outcome::Crashed,
                           Outcome::TimedOut};
    os << "family        ";
    for (Outcome o : all)
        os << " " << outcome_name(o);
    os << "  refused by code\n";
    std::map<Outcome, int> total;
    for (const auto &[family, row] : rows) {
        os << family << std::string(family.size() < 14 ? 14 - family.size() : 1, ' ');
        for (Outcome o : all) {
            int n = row.outcomes.count(o) ? row.outcomes.at(o) : 0;
            total[o] += n;
            std::string cell = std::to_string(n);
            os << " " << std::string(std::string(outcome_name(o)).size() - cell.size(), ' ')
               << cell;
        }
        os << " ";
        for (const auto &[code, n] : row.refused_codes)
            os << " " << code << ":" << n;
        os << "\n";
    }
    os << "total         ";
    for (Outcome o : all) {
        std::string cell = std::to_string(total[o]);
        os << " " << std::string(std::string(outcome_name(o)).size() - cell.size(), ' ') << cell;
    }
    os << "\n";
    return os.str();
}

} // namespace nhc::fuzz
