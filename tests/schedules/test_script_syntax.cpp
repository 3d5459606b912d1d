// Schedule scripts without groups: canonical round trips and the parse errors (NHC_ESCH101..103),
// each with the file name and line number in its message.

#include "ScheduleTestUtil.h"

#include <cstdio>
#include <doctest/doctest.h>
#include <fstream>

using namespace nhc;
using nhc::test::error_code;

namespace {

std::string round_trip(const std::string &text) {
    return sched::parse_schedule(text, "t.sched").to_string();
}

/** The code of parsing `text`, and its message in `msg`. */
std::string parse_error(const std::string &text, std::string *msg = nullptr) {
    return error_code([&] { sched::parse_schedule(text, "t.sched"); }, msg);
}

} // namespace

TEST_CASE("canonical scripts print back unchanged") {
    const char *scripts[] = {
        // The matmul schedule of DESIGN.md §4.
        "# attention projection\n"
        "node \"/attn/query/MatMul\":\n"
        "  final0.tile(v0, v1, no, mo, ni, mi, 512, 128)\n"
        "  acc.compute_at(final0, no).store_in(PSUM)\n"
        "  acc.update().split(k, ko, ki, 128).reorder(ki, v0, v1, ko)\n"
        "  lhs_t.compute_at(acc, ko).store_in(SBUF)\n"
        "  hint partition_dim lhs_t 1\n",
        // Two blocks, comments everywhere, every directive.
        "# leading\n"
        "node \"a\":\n"
        "  # inside\n"
        "  out.split(v1, v1o, v1i, 128, TailStrategy::GuardWithIf).compute_root()  # trailing\n"
        "  max.update(1).fuse(r.x, r.y, rf).reorder(rf, v0)\n"
        "  exp.tile(v0, v1, xi, yi, 64, 32).compute_inline()\n"
        "  sum.store_at(out, v1o).compute_at(out, v1i).store_root()\n"
        "\n"
        "# second\n"
        "node \"b \\\"quoted\\\" \\\\ name\":\n"
        "  stage_0.compute_root().store_in(SBUF)\n"
        "\n"
        "# the end\n",
        // The block of a fused group, with a folded broadcast.
        "node \"/attn/MatMul\", \"/attn/Div\", \"b \\\"q\\\"\":\n"
        "  n2_final0.split(v0, vo, vi, 64)\n"
        "  n0_acc.compute_at(n2_final0, vo).store_in(PSUM)\n"
        "  hint fold_broadcast n1_bcast1 128\n",
        // Nothing but comments; and nothing at all.
        "# only a comment\n",
        "",
    };
    for (const char *s : scripts) {
        CAPTURE(s);
        CHECK(round_trip(s) == s);
    }
}

TEST_CASE("free formatting is made canonical, and stays so") {
    std::string messy = "\n\n   # c\nnode   \"n\"  :   # on the header\n"
                        "final0 . tile ( v0 ,v1,no,mo,ni,mi , 512,128 ) ;\n"
                        "\t\tacc.update(0).split(k.x, ko, ki, 128)\n"
                        "# unindented, inside the block\n"
                        "    hint   partition_dim  acc   1   \n";
    std::string canonical = "# c\n"
                            "node \"n\":\n"
                            "  # on the header\n"
                            "  final0.tile(v0, v1, no, mo, ni, mi, 512, 128)\n"
                            "  acc.update().split(k.x, ko, ki, 128)\n"
                            "  # unindented, inside the block\n"
                            "  hint partition_dim acc 1\n";
    CHECK(round_trip(messy) == canonical);
    CHECK(round_trip(canonical) == canonical);
}

TEST_CASE("blocks are found by node name") {
    sched::ScheduleScript s = sched::parse_schedule("node \"x\":\n  out.compute_root()\n"
                                                    "node \"y\":\n  hint partition_dim out 0\n");
    REQUIRE(s.find("y") != nullptr);
    CHECK(s.find("y")->line == 3);
    CHECK(s.find("y")->lines.size() == 1);
    CHECK(s.find("z") == nullptr);
    // A fused group's block is found by any of its nodes.
    sched::ScheduleScript g = sched::parse_schedule("node \"a\", \"b\", \"c\":\n");
    REQUIRE(g.find("b") != nullptr);
    CHECK(g.find("b") == g.find("c"));
    CHECK(g.find("b")->nodes == std::vector<std::string>{"a", "b", "c"});
    CHECK(g.find("b")->quoted_nodes() == "\"a\", \"b\", \"c\"");
}

TEST_CASE("a syntax error is NHC_ESCH101 with the file and line") {
    std::string msg;
    struct Case {
        const char *text;
        const char *expect; // in the message
    } cases[] = {
        {"node \"n\":\n  out.split(v0, a, b, 128\n",
         "t.sched:2: expected ')' after the arguments of split"},
        {"node \"n\":\n  out.compute_root(\n", "t.sched:2:"},
        {"node \"n\":\n\n  out compute_root()\n",
         "t.sched:3: expected '.' after the stage name 'out'"},
        {"node n:\n", "t.sched:1: expected the node name as a string"},
        {"node \"n\"\n", "t.sched:1: expected ':' after the node name"},
        {"node \"n:\n", "t.sched:1: expected '\"' to close"},
        {"out.compute_root()\n", "t.sched:1: expected 'node \"<onnx node name>\":' before"},
        {"node \"n\":\n  out.split(v0, a, b, 12x)\n", "t.sched:2: expected a number, found '12x'"},
        {"node \"n\":\n  out.compute_root() extra\n", "t.sched:2: expected '.' or end of line"},
        {"node \"n\":\n  out.split(v0, a, b, 1280000000000)\n", "t.sched:2: number"},
        {"node \"n\":\n  out.store_in(SBUF) @\n", "t.sched:2: unexpected character '@'"},
        {"node \"n\":\n  hint partition_dim acc, 1\n",
         "t.sched:2: expected a stage name, a number"},
        {"node \"n\": extra\n", "t.sched:1: expected end of line after"},
        {"node \"a\", b:\n", "t.sched:1: expected another node name as a string after ','"},
        {"node \"a\", \"b\" \"c\":\n", "t.sched:1: expected ':' after the node names"},
    };
    for (const Case &c : cases) {
        CAPTURE(c.text);
        CHECK(parse_error(c.text, &msg) == "NHC_ESCH101");
        CHECK(msg.find(c.expect) != std::string::npos);
        CAPTURE(msg);
    }
}

TEST_CASE("an unknown directive or wrong arguments is NHC_ESCH102") {
    std::string msg;
    struct Case {
        const char *line;
        const char *expect;
    } cases[] = {
        {"out.parallel(v0)", "unknown directive 'parallel'"},
        {"out.split(v0, vo, vi)", "wrong arguments for split: expected split(old, outer, inner"},
        {"out.split(v0, vo, vi, 0)", "found split(v0, vo, vi, 0)"},
        {"out.split(v0, vo.x, vi, 8)", "wrong arguments for split"},
        {"out.split(v0, vo, vi, 8, TailStrategy::Sideways)", "wrong arguments for split"},
        {"out.split(v0, vo, vi, 8, MemoryType::VTCM)", "wrong arguments for split"},
        {"out.tile(v0, v1, a, b, c, 8, 8)", "wrong arguments for tile"},
        {"out.store_in(HBM)", "store_in(SBUF) or store_in(PSUM)"},
        {"out.reorder()", "reorder(innermost, ..., outermost)"},
        {"out.compute_at(final0)", "compute_at(stage, loop)"},
        {"out.compute_root(v0)", "compute_root()"},
        {"acc.split(k, ko, ki, 8).update()", "update() must come right after the stage name"},
        {"acc.update().compute_root()", "compute_root applies to the whole stage"},
        {"hint speed acc fast", "unknown hint 'speed'; expected partition_dim"},
        {"hint speed acc fast", "fold_broadcast, buffers, resident, pe_order or engine"},
        {"hint engine acc ACT", "expected 'hint engine <stage> act|dve|pool'"},
        {"hint engine acc", "expected 'hint engine <stage> act|dve|pool'"},
        {"hint engine 2 act", "expected 'hint engine <stage> act|dve|pool'"},
        {"hint partition_dim acc", "expected 'hint partition_dim <stage> <dim>'"},
        {"hint partition_dim 1 acc", "expected 'hint partition_dim <stage> <dim>'"},
        {"hint fold_broadcast bias", "expected 'hint fold_broadcast <stage> <period>'"},
        {"hint buffers acc", "expected 'hint buffers <stage> <count>'"},
        {"hint resident", "expected 'hint resident <stage>'"},
        {"hint resident out 2", "expected 'hint resident <stage>'"},
        {"hint pe_order", "expected 'hint pe_order critical_path', found 'hint pe_order '"},
        {"hint pe_order program", "expected 'hint pe_order critical_path'"},
        {"hint pe_order critical_path 2", "expected 'hint pe_order critical_path'"},
    };
    for (const Case &c : cases) {
        CAPTURE(c.line);
        CHECK(parse_error(std::string("node \"n\":\n  # c\n  ") + c.line + "\n", &msg) ==
              "NHC_ESCH102");
        CAPTURE(msg);
        CHECK(msg.find("t.sched:3: ") == 0);
        CHECK(msg.find(c.expect) != std::string::npos);
    }
}

TEST_CASE("a node in two blocks is NHC_ESCH103") {
    std::string msg;
    CHECK(parse_error("node \"n\":\n  out.compute_root()\nnode \"m\":\nnode \"n\":\n", &msg) ==
          "NHC_ESCH103");
    CHECK(msg == "t.sched:4: node \"n\" already has a block at line 1; merge the two blocks");
    // Also when one of the blocks is a fused group's.
    CHECK(parse_error("node \"m\", \"n\":\n\nnode \"n\":\n", &msg) == "NHC_ESCH103");
    CHECK(msg.find("t.sched:3: node \"n\" already has a block at line 1") == 0);
}

TEST_CASE("scripts parse from files; a missing file is NHC_EIO001") {
    std::string path = "nhc_schedule_test.sched";
    {
        std::ofstream f(path);
        f << "node \"n\":\n  out.compute_root(\n";
    }
    std::string msg;
    CHECK(error_code([&] { sched::parse_schedule_file(path); }, &msg) == "NHC_ESCH101");
    CHECK(msg.find(path + ":2:") == 0);
    {
        std::ofstream f(path);
        f << "node \"n\":\n  out.compute_root()\n";
    }
    CHECK(sched::parse_schedule_file(path).file == path);
    std::remove(path.c_str());
    CHECK(error_code([&] { sched::parse_schedule_file(path); }) == "NHC_EIO001");
}
