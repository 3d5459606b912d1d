// docs/schedules.md's script examples, read from the file so that the docs cannot drift: every
// fenced block with a `node "..."` header is compiled on the development model (../shared/models)
// that the text before it names, as --schedule does (the node must survive the graph passes, so
// the block applies), run on the simulator with race detection and compared with PyTorch's
// outputs (relative L2 error at most 1e-4). A block that starts with `# default schedule of` must
// be what print_default_schedule writes for its node.

#include "../e2e/E2E.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "schedules/ScheduleScript.h"
#include "support/Log.h"
#include "target/Target.h"

#include <doctest/doctest.h>
#include <fstream>
#include <regex>
#include <sstream>

using namespace nhc;
namespace fs = std::filesystem;

namespace {

struct DocExample {
    int line = 0;      ///< of the opening fence
    std::string model; ///< the dev model the text before the block names
    std::string text;  ///< the script
};

/** The script blocks of a markdown file, each with the one dev model named since the last block
 *  (empty when none or several are named). */
std::vector<DocExample> script_examples(const fs::path &md) {
    std::ifstream in(md);
    REQUIRE(in.good());
    std::vector<DocExample> out;
    std::string line, prose, block;
    bool inside = false;
    int at = 0, start = 0;
    const std::regex model_name("dev_[a-z0-9_]+");
    while (std::getline(in, line)) {
        at++;
        if (line.rfind("```", 0) != 0) {
            (inside ? block : prose) += line + "\n";
            continue;
        }
        if (!inside) {
            inside = true;
            start = at;
            block.clear();
            continue;
        }
        inside = false;
        if (block.find("node \"") == std::string::npos)
            continue; // not a script (shell commands, grammar)
        std::set<std::string> models;
        for (std::sregex_iterator it(prose.begin(), prose.end(), model_name), end; it != end; ++it)
            models.insert(it->str());
        out.push_back({start, models.size() == 1 ? *models.begin() : "", block});
        prose.clear();
    }
    return out;
}

fs::path models_dir() {
    return fs::path(NHC_SOURCE_DIR) / ".." / "shared" / "models";
}

struct Quiet {
    Quiet() {
        Logger::instance().set_console_level(100);
        register_codegen_operators();
    }
} quiet;

/** Compiles the model with the example as its schedule, runs it and compares with PyTorch. */
void check_example(const DocExample &ex) {
    fs::path dir = models_dir() / ex.model;
    sched::ScheduleScript script =
        sched::parse_schedule(ex.text, "docs/schedules.md:" + std::to_string(ex.line));
    REQUIRE(script.blocks.size() == 1);
    const std::string &node = script.blocks[0].nodes.front();
    Graph g = run_frontend((dir / "model.onnx").string(), {});
    sched::check_schedule_nodes(script, g);
    CompileOptions o;
    o.schedule = &script;
    apply_graph_passes(g, o);
    const Node *scheduled = nullptr;
    for (const Node &n : g.nodes)
        scheduled = n.name == node ? &n : scheduled;
    REQUIRE_MESSAGE(scheduled, "node " << node << " does not survive the graph passes");
    if (ex.text.find("# default schedule of") != std::string::npos)
        CHECK(sched::print_default_schedule(g, *scheduled, target::target_by_name("trn1")) ==
              ex.text);
    test::E2EResult r =
        test::run_program(generate_program(g, o), g, test::read_inputs(g, dir / "test_data_set_0"));
    for (size_t i = 0; i < g.outputs.size(); i++) {
        HostTensor want =
            test::read_pb(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
        test::Comparison cmp = test::compare(r.outputs.at(g.outputs[i]), want, 1e-3, 1e-4);
        INFO("output " << g.outputs[i] << ": rel L2 " << cmp.rel_l2);
        CHECK(cmp.rel_l2 <= 1e-4);
    }
}

} // namespace

TEST_CASE("every script example of docs/schedules.md compiles on its dev model and matches") {
    std::vector<DocExample> examples =
        script_examples(fs::path(NHC_SOURCE_DIR) / "docs" / "schedules.md");
    CHECK(examples.size() >= 3);
    for (const DocExample &ex : examples) {
        CAPTURE(ex.line);
        CAPTURE(ex.text);
        REQUIRE_MESSAGE(!ex.model.empty(), "the text before the example at docs/schedules.md:"
                                               << ex.line << " names no dev model (or several)");
        if (!fs::exists(models_dir() / ex.model / "model.onnx")) {
            MESSAGE("../shared/models/" << ex.model << " not present: example not checked");
            continue;
        }
        check_example(ex);
    }
}
