// The profile folder (runtime/ProfileReport.h, runtime/TimelineSvg.h): the per-node table sums to
// the latency, largest first, with its busiest engine and bound; the critical path follows what
// each instruction started after; the SVG has a lane per engine and DMA queue; the folder's
// files are written, and a folder that cannot be made is NHC_ERT023.

#include "../unit/TestModels.h"
#include "runtime/ProfileReport.h"
#include "runtime/TimelineSvg.h"
#include "support/Error.h"
#include "target/Target.h"

#include <doctest/doctest.h>
#include <fstream>

using namespace nhc;

namespace {

// Group "a+b" (two ONNX nodes) computes on the PE 2-10 us; "load" is DMA on two queues 0-8 us;
// "c" waits from 10 to 14 and works on DVE 14-15 us (a dependency: its span 10-15 mostly idle).
std::vector<rt::TraceEvent> three_groups() {
    return {{"pe", "matmul a+b", 0, 2000, 10000, 0},
            {"dma q0", "dma load", 0, 0, 8000, 1 << 20},
            {"dma q1", "dma load", 0, 0, 8000, 1 << 20},
            {"sp", "nop c", 0, 10000, 10100, 0},
            {"dve", "tensor_copy c", 0, 14000, 15000, 0}};
}

size_t count(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        n++;
    return n;
}

} // namespace

TEST_CASE("the per-node table sums to the latency, largest first, with engine and bound") {
    std::vector<rt::NodeTimeRow> rows = rt::node_time_rows(three_groups(), 16000);
    REQUIRE(rows.size() == 4);
    double sum = 0;
    for (const rt::NodeTimeRow &r : rows)
        sum += r.time_ns;
    CHECK(sum == 16000);
    // Largest first: load adds 8 us, c 5 (from a+b's end to its own), a+b 2 (after load's end).
    CHECK(rows[0].group == "load");
    CHECK(rows[0].time_ns == 8000);
    CHECK(rows[0].engine == "dma");
    CHECK(rows[0].bound == "dma"); // both queues busy all its 8 us, the PE 6 of them
    CHECK(rows[1].group == "c");
    CHECK(rows[1].time_ns == 5000);
    CHECK(rows[1].engine == "dve");
    CHECK(rows[1].bound == "dependency"); // DVE busy 1 us of its 5
    CHECK(rows[2].group == "a+b");
    CHECK(rows[2].nodes == std::vector<std::string>{"a", "b"});
    CHECK(rows[2].time_ns == 2000);
    CHECK(rows[2].engine == "pe");
    CHECK(rows[2].bound == "compute");
    CHECK(rows[3].group == "(after the last instruction)");
    CHECK(rows[3].time_ns == 1000);

    std::string md = rt::node_table_markdown(rows, 16000);
    CHECK(md.find("| 5.000 | 31.2% | 5.000 | dve | dependency | `c` |") != std::string::npos);
    CHECK(md.find("`a`, `b`") != std::string::npos);
    std::string json = rt::node_table_json(rows, 16000);
    CHECK(json.find("\"total_time_us\": 16") != std::string::npos);
    CHECK(count(json, "\"bound\"") == 4);
}

TEST_CASE("the critical path goes back through what each instruction started after") {
    std::vector<rt::TraceEvent> ev = three_groups();
    // c's copy starts at 14 us: the latest end before it is the sp nop (10.1 us), whose start
    // (10 us) follows the matmul's end; nothing ends by the matmul's start (2 us).
    std::vector<size_t> path = rt::critical_path(ev);
    CHECK(path == std::vector<size_t>{4, 3, 0});
    CHECK(rt::critical_path({}).empty());
}

TEST_CASE("the timeline has a lane per engine, per DMA queue used and for the critical path") {
    std::string svg = rt::timeline_svg(three_groups(), 16000, "m<1>");
    CHECK(svg.rfind("<svg ", 0) == 0);
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(count(svg, "class=\"lane\"") == size_t(neff::kNumEngines) + 2 + 1);
    for (int k = 0; k < neff::kNumEngines; k++)
        CHECK(svg.find("data-lane=\"" + std::string(target::engine_name(neff::Engine(k))) + "\"") !=
              std::string::npos);
    CHECK(svg.find("data-lane=\"dma q1\"") != std::string::npos);
    CHECK(svg.find("data-lane=\"critical path\"") != std::string::npos);
    CHECK(svg.find("m&lt;1&gt;") != std::string::npos); // names are escaped
    CHECK(svg.find("<title>a+b: 2.000 to 10.000 us</title>") != std::string::npos);
    // The critical path's three marks (on pe, sp and dve) are the only black shapes.
    CHECK(count(svg, "fill=\"#000000\"") == 3);
}

TEST_CASE("the profile folder holds the four files; one that cannot be made is NHC_ERT023") {
    nhc::test::TempDir dir;
    rt::write_profile_dir(dir.file("p"), three_groups(), 16000, "m");
    for (const char *f : {"trace.json", "timeline.svg", "nodes.md", "nodes.json"})
        CHECK(std::filesystem::file_size(dir.file("p") + "/" + f) > 0);
    std::ofstream(dir.file("file")) << "x";
    try {
        rt::write_profile_dir(dir.file("file") + "/p", three_groups(), 16000, "m");
        FAIL("expected NHC_ERT023");
    } catch (const UserError &e) {
        CHECK(e.code() == "NHC_ERT023");
    }
}
