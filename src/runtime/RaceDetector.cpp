#include "runtime/RaceDetector.h"

#include "runtime/Machine.h"
#include "support/Error.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace nhc::rt {

using neff::AccessPattern;
using neff::Engine;
using neff::Footprint;
using neff::Instr;
using neff::MemSpace;

namespace {

using Clock = std::vector<uint32_t>;

void join(Clock &a, const Clock &b) {
    for (size_t k = 0; k < a.size(); k++) {
        a[k] = std::max(a[k], b[k]);
    }
}

/** An access as equally spaced runs of contiguous bytes: `rows` runs of `len` bytes, `stride`
 *  apart, from `first` (on chip: within every partition of the box; in HBM: within the
 *  variable). Most DMA and engine operands have this form, and two of them meet or not in O(1). */
struct Runs {
    bool valid = false;
    int64_t first = 0, stride = 0, rows = 1, len = 0;
};

Runs runs_of(const AccessPattern &ap) {
    bool hbm = ap.space == MemSpace::HBM;
    int64_t esize = neff::dtype_size(ap.dtype);
    int64_t unit = hbm ? 1 : esize; // dims step in bytes in HBM, in elements on chip
    std::vector<neff::Dim> dims;
    for (const neff::Dim &d : ap.dims) {
        if (d.num > 1) {
            dims.push_back(d);
        }
    }
    Runs r;
    r.first = ap.offset;
    // The inner dims must form one contiguous run; an outer one may space such runs.
    int64_t run = 1;
    size_t k = dims.size();
    while (k > 0 && dims[k - 1].step * unit == run * esize) {
        run *= dims[--k].num;
    }
    r.len = run * esize;
    if (k > 1 || (k == 1 && dims[0].step <= 0)) {
        return r; // not runs
    }
    if (k == 1) {
        r.stride = dims[0].step * unit;
        r.rows = dims[0].num;
    }
    if (hbm && ap.num_partitions > 1) {
        if (r.rows > 1 && ap.partition_step != r.stride * r.rows) {
            return r; // rows of runs that do not continue one another
        }
        if (r.rows == 1) {
            r.stride = ap.partition_step;
        }
        r.rows *= ap.num_partitions;
        if (r.stride <= 0) {
            return r;
        }
    }
    if (r.rows > 1 && r.stride < r.len) {
        return r; // overlapping runs
    }
    r.valid = true;
    return r;
}

int64_t floor_div(int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

/** Whether a run set meets the byte interval [x0, x1). */
bool runs_meet_interval(const Runs &b, int64_t x0, int64_t x1) {
    if (b.rows == 1) {
        return b.first < x1 && x0 < b.first + b.len;
    }
    // Row i meets it iff first + i*stride < x1 and first + i*stride + len > x0.
    int64_t lo = floor_div(x0 - b.first - b.len, b.stride) + 1;
    int64_t hi = floor_div(x1 - 1 - b.first, b.stride);
    return std::max<int64_t>(lo, 0) <= std::min<int64_t>(hi, b.rows - 1);
}

/** 1: the run sets share a byte; 0: they do not; -1: not decidable in O(1) (other strides). */
int runs_meet(const Runs &a, const Runs &b) {
    if (a.rows == 1) {
        return runs_meet_interval(b, a.first, a.first + a.len);
    }
    if (b.rows == 1) {
        return runs_meet_interval(a, b.first, b.first + b.len);
    }
    if (a.stride != b.stride) {
        return -1;
    }
    int64_t s = a.stride, diff = b.first - a.first;
    int64_t q = floor_div(diff, s), d = diff - q * s; // b's row j starts d into a's row q + j
    auto rows_meet = [&](int64_t shift) {
        return std::max<int64_t>(0, q + shift) < std::min<int64_t>(a.rows, q + shift + b.rows);
    };
    return (d < a.len && rows_meet(0)) || (d + b.len > s && rows_meet(1));
}

/** One recorded access: who made it (thread and its clock), where, and how. */
struct Access {
    Footprint box;
    const AccessPattern *ap = nullptr;
    bool write = false;
    Runs runs; ///< the bytes as runs (Runs::valid), for an O(1) overlap test
    int thread = 0;
    uint32_t clock = 0;
    Engine engine = Engine::SP; ///< the instruction (for a DMA, the one that issued it)
    size_t index = 0;
    const Instr *instr = nullptr;
    bool dma = false;
};

/** Whether two accesses whose boxes overlap touch a common byte. */
bool bytes_overlap(const Access &a, const Access &b) {
    if (a.runs.valid && b.runs.valid) {
        int meet = runs_meet(a.runs, b.runs);
        if (meet >= 0) {
            return meet == 1;
        }
    }
    // Else the bytes themselves; too many runs to list gives the strict answer.
    constexpr int64_t kMaxRuns = int64_t(1) << 20;
    std::optional<neff::ByteIntervals> x = neff::byte_intervals(*a.ap, kMaxRuns);
    std::optional<neff::ByteIntervals> y = neff::byte_intervals(*b.ap, kMaxRuns);
    return !x || !y || neff::intervals_meet(*x, *y);
}

std::string describe(const Access &a) {
    std::string who = Where{a.engine, a.index, a.instr}.str();
    return a.dma ? "the DMA transfer of " + who + " (queue " + std::to_string(a.instr->queue) + ")"
                 : who;
}

std::string describe_bytes(const Footprint &f) {
    std::string where = neff::mem_space_name(f.space);
    if (f.space == MemSpace::HBM) {
        where += " variable " + std::to_string(f.var);
    } else {
        where +=
            " partitions [" + std::to_string(f.first_row) + ", " + std::to_string(f.end_row) + ")";
    }
    return where + " bytes [" + std::to_string(f.begin) + ", " + std::to_string(f.end) + ")";
}

} // namespace

struct RaceDetector::State {
    const neff::Program &program;
    int num_threads = neff::kNumEngines;
    std::map<int32_t, int> queue_thread; ///< DMA queue -> its clock component
    Clock engine_clock[neff::kNumEngines];
    std::map<int, Clock> queue_join; ///< by thread: what a queue's completions release
    std::map<int, uint32_t> queue_count;
    std::map<uint32_t, std::vector<Clock>> sem_prefix; ///< clock released by the first v signals
    std::map<int64_t, Clock> pending;                  ///< releases not yet signalled
    int64_t next_release = 0;
    std::unordered_map<uint64_t, std::vector<Access>> buckets;
    Clock frontier; ///< every engine still to issue is ordered after these clocks
    size_t issued[neff::kNumEngines] = {};
    int64_t issues_since_frontier = 0;

    explicit State(const neff::Program &p) : program(p) {
        std::set<int32_t> queues;
        for (const auto &stream : p.streams) {
            for (const Instr &i : stream) {
                if (i.op == neff::Opcode::Dma) {
                    queues.insert(i.queue);
                }
            }
        }
        for (int32_t q : queues) {
            queue_thread[q] = num_threads++;
        }
        for (Clock &c : engine_clock) {
            c.assign(size_t(num_threads), 0);
        }
        frontier.assign(size_t(num_threads), 0);
    }

    /** The buckets a box falls in: an index over byte ranges (2 KiB of each partition on chip,
     *  64 KiB of an HBM variable) so that an access is compared with nearby records only. */
    template <typename F>
    void for_each_bucket(const Footprint &f, F &&fn) {
        uint64_t area = f.space == MemSpace::HBM ? 2 + uint64_t(f.var) : uint64_t(f.space);
        int64_t size = f.space == MemSpace::HBM ? 65536 : 2048;
        for (int64_t b = std::max<int64_t>(0, f.begin) / size; b * size < f.end; b++) {
            fn(buckets[(area << 40) | uint64_t(b)]);
        }
    }

    void update_frontier() {
        std::fill(frontier.begin(), frontier.end(), std::numeric_limits<uint32_t>::max());
        for (int e = 0; e < neff::kNumEngines; e++) {
            if (issued[e] < program.streams[size_t(e)].size()) {
                for (size_t k = 0; k < frontier.size(); k++) {
                    frontier[k] = std::min(frontier[k], engine_clock[e][k]);
                }
            }
        }
    }

    /** Checks `a` against the unordered earlier accesses it overlaps, then records it. Records
     *  every engine is already ordered after are dropped, and so are those a dense write covers
     *  (a later access racing with them races with the write too). */
    void access(Access a, const Clock &knows) {
        if (!a.ap->present()) {
            return;
        }
        a.box = neff::footprint(*a.ap);
        a.runs = runs_of(*a.ap);
        for_each_bucket(a.box, [&](std::vector<Access> &records) {
            size_t w = 0;
            for (size_t r = 0; r < records.size(); r++) {
                const Access &old = records[r];
                bool ordered = old.clock <= knows[size_t(old.thread)];
                if (!ordered && (old.write || a.write) && old.box.overlaps(a.box) &&
                    !(old.thread == a.thread && old.clock == a.clock) && bytes_overlap(old, a)) {
                    report(old, a);
                }
                bool stale = old.clock <= frontier[size_t(old.thread)];
                bool dense = a.runs.valid && (a.runs.rows == 1 || a.runs.stride == a.runs.len);
                bool covered = a.write && dense && ordered && inside(old.box, a.box);
                if (!stale && !covered) {
                    records[w++] = old;
                }
            }
            records.resize(w);
            records.push_back(a);
        });
    }

    static bool inside(const Footprint &in, const Footprint &out) {
        return in.space == out.space && in.var == out.var && in.first_row >= out.first_row &&
               in.end_row <= out.end_row && in.begin >= out.begin && in.end <= out.end;
    }

    [[noreturn]] void report(const Access &old, const Access &now) {
        Footprint common = now.box;
        common.first_row = std::max(old.box.first_row, now.box.first_row);
        common.end_row = std::min(old.box.end_row, now.box.end_row);
        common.begin = std::max(old.box.begin, now.box.begin);
        common.end = std::min(old.box.end, now.box.end);
        user_error("NHC_ERT019", "data race on ", describe_bytes(common), ": ", describe(now),
                   now.write ? " writes" : " reads", " bytes that ", describe(old),
                   old.write ? " wrote" : " read",
                   ", and no semaphore orders the two (one must wait for the other's completion)");
    }

    int64_t release(const Clock &c, int32_t signal) {
        if (signal < 0) {
            return -1;
        }
        pending[next_release] = c;
        return next_release++;
    }
};

RaceDetector::RaceDetector(const neff::Program &p) : s_(std::make_unique<State>(p)) {}
RaceDetector::~RaceDetector() = default;

int64_t RaceDetector::on_issue(Engine e, size_t index, const Instr &i) {
    State &s = *s_;
    int ei = int(e);
    Clock &c = s.engine_clock[ei];
    for (const neff::SemWait &w : i.waits) {
        if (w.value > 0) {
            const auto &prefix = s.sem_prefix[w.sem];
            nhc_assert(prefix.size() >= w.value, "semaphore wait issued before it held");
            join(c, prefix[w.value - 1]);
        }
    }
    c[size_t(ei)]++;
    s.issued[ei]++;
    if (++s.issues_since_frontier >= 64) {
        s.update_frontier();
        s.issues_since_frontier = 0;
    }
    Access a;
    a.engine = e;
    a.index = index;
    a.instr = &i;
    if (i.op == neff::Opcode::Dma) {
        int q = s.queue_thread.at(i.queue);
        uint32_t k = ++s.queue_count[q];
        a.dma = true;
        a.thread = q;
        a.clock = k;
        // src1: an indirect DMA's index, read like its source.
        for (auto [ap, write] :
             {std::pair{&i.src, false}, std::pair{&i.src1, false}, std::pair{&i.dst, true}}) {
            a.ap = ap;
            a.write = write;
            s.access(a, c); // ordered after what its issuer knows, not after its queue
        }
        Clock &qj = s.queue_join.try_emplace(q, Clock(size_t(s.num_threads), 0)).first->second;
        join(qj, c);
        qj[size_t(q)] = k;
        return s.release(qj, i.signal);
    }
    a.thread = ei;
    a.clock = c[size_t(ei)];
    neff::for_each_operand(i, [&](const AccessPattern &ap, bool write) {
        a.ap = &ap;
        a.write = write;
        s.access(a, c);
    });
    return s.release(c, i.signal);
}

void RaceDetector::on_signal(uint32_t sem, int64_t release) {
    State &s = *s_;
    auto &prefix = s.sem_prefix[sem];
    Clock c = prefix.empty() ? Clock(size_t(s.num_threads), 0) : prefix.back();
    if (release >= 0) {
        auto it = s.pending.find(release);
        nhc_assert(it != s.pending.end(), "release " << release << " signalled twice");
        join(c, it->second);
        s.pending.erase(it);
    }
    prefix.push_back(std::move(c));
}

} // namespace nhc::rt
