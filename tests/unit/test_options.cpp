#include "driver/Options.h"
#include "support/Error.h"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace nhc;

namespace {

ParsedCommandLine parse(std::vector<const char *> args) {
    args.insert(args.begin(), "neuron-halide-cc");
    return parse_command_line(static_cast<int>(args.size()), args.data());
}

std::string error_code(std::vector<const char *> args) {
    try {
        parse(std::move(args));
    } catch (const UserError &e) {
        return e.code();
    }
    return "no error";
}

} // namespace

TEST_CASE("defaults follow neuronx-cc") {
    CompileOptions o = parse({"compile", "m.onnx"}).options;
    CHECK(o.model_path == "m.onnx");
    CHECK(o.framework == "ONNX");
    CHECK(o.target == "trn1");
    CHECK(o.optlevel == 2);
    CHECK(o.model_type == "generic");
    CHECK(o.auto_cast == "none");
    CHECK(o.auto_cast_type == "bf16");
    CHECK(o.mixed_precision_accumulation);
    CHECK_FALSE(o.enable_fast_loading_neuron_binaries);
    CHECK(o.logical_nc_config == 1);
    CHECK(o.output == "file.neff");
    CHECK(o.logfile == "log-neuron-cc.txt");
    CHECK(o.verbose == 30);
    CHECK(o.num_parallel_jobs == 0); // the machine's threads: the NEFF is the same for any count
}

TEST_CASE("a model file as the first argument means compile") {
    ParsedCommandLine p = parse({"model.onnx", "-O3"});
    CHECK(p.command == Command::Compile);
    CHECK(p.options.model_path == "model.onnx");
    CHECK(p.options.optlevel == 3);
    CHECK(parse({"list-operators"}).command == Command::ListOperators);
}

TEST_CASE("every documented option is parsed") {
    CompileOptions o = parse({"compile",
                              "m.onnx",
                              "--framework",
                              "onnx",
                              "--target=trn2",
                              "--model-type",
                              "transformer",
                              "--auto-cast",
                              "matmult",
                              "--auto-cast-type",
                              "fp8_e4m3",
                              "--enable-saturate-infinity",
                              "--enable-fast-loading-neuron-binaries",
                              "--output",
                              "out.neff",
                              "--logfile",
                              "x.log",
                              "--verbose",
                              "info",
                              "--num-parallel-jobs",
                              "4",
                              "--input-shape",
                              "ids=1,128",
                              "--input-shape",
                              "mask=1,128",
                              "--schedule",
                              "s.txt",
                              "--dump-graph",
                              "--lnc",
                              "2"})
                           .options;
    CHECK(o.framework == "ONNX");
    CHECK(o.target == "trn2");
    CHECK(o.model_type == "transformer");
    CHECK(o.auto_cast == "matmult");
    CHECK(o.auto_cast_type == "fp8_e4m3");
    CHECK(o.enable_saturate_infinity);
    CHECK(o.enable_fast_loading_neuron_binaries);
    CHECK(o.output == "out.neff");
    CHECK(o.logfile == "x.log");
    CHECK(o.verbose == 20);
    CHECK(o.num_parallel_jobs == 4);
    REQUIRE(o.input_shapes.size() == 2);
    CHECK(o.input_shapes[0].name == "ids");
    CHECK(o.input_shapes[0].shape == Shape{1, 128});
    CHECK(o.input_shapes[1].name == "mask");
    CHECK(o.schedule_file == "s.txt");
    CHECK(o.dump_graph);
    CHECK(o.logical_nc_config == 2);
}

TEST_CASE("one physical core per logical core on every target, trn2 too (2 is refused when "
          "compiling)") {
    CHECK(parse({"m.onnx", "--target", "trn2"}).options.logical_nc_config == 1);
    CHECK(parse({"m.onnx", "--target", "trn2", "-lnc", "2"}).options.logical_nc_config == 2);
}

TEST_CASE("the right-most occurrence wins") {
    CHECK(parse({"m.onnx", "--target", "inf2", "--target", "trn1n"}).options.target == "trn1n");
    CHECK(parse({"m.onnx", "-O1", "--optlevel", "3"}).options.optlevel == 3);
    CHECK(parse({"m.onnx", "--optlevel", "3", "-O1"}).options.optlevel == 1);
    CHECK(parse({"m.onnx", "--auto-cast", "all", "--auto-cast", "none"}).options.auto_cast ==
          "none");
    CHECK_FALSE(parse({"m.onnx", "--enable-mixed-precision-accumulation",
                       "--disable-mixed-precision-accumulation"})
                    .options.mixed_precision_accumulation);
    CHECK(parse({"m.onnx", "--disable-mixed-precision-accumulation",
                 "--enable-mixed-precision-accumulation"})
              .options.mixed_precision_accumulation);
    CHECK(parse({"m.onnx", "--verbose", "debug", "--verbose=35"}).options.verbose == 35);
}

TEST_CASE("parsing twice in one process starts from the defaults") {
    CHECK(parse({"m.onnx", "--target", "inf2", "--input-shape", "x=1"}).options.target == "inf2");
    CompileOptions o = parse({"m.onnx"}).options;
    CHECK(o.target == "trn1");
    CHECK(o.input_shapes.empty());
}

TEST_CASE("bad command lines give coded errors") {
    CHECK(error_code({"m.onnx", "--no-such-option"}) == "NHC_EARG003");
    CHECK(error_code({"m.onnx", "--target", "trn9"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "-O4"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--optlevel", "two"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--framework", "XLA"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--auto-cast", "some"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--auto-cast-type", "int8"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--model-type", "cnn"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--verbose", "loud"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--num-parallel-jobs", "0"}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--output="}) == "NHC_EARG002");
    CHECK(error_code({"m.onnx", "--logical-nc-config", "2"}) == "NHC_EARG001");
    CHECK(error_code({"m.onnx", "--target", "inf2", "--lnc", "2"}) == "NHC_EARG001");
    CHECK(error_code({"m.onnx", "--input-shape", "x"}) == "NHC_EARG011");
    CHECK(error_code({"m.onnx", "--input-shape", "x=1,,2"}) == "NHC_EARG011");
    CHECK(error_code({"m.onnx", "--input-shape", "x=1,-2"}) == "NHC_EARG011");
    CHECK(error_code({"compile"}) == "NHC_EARG010");
    CHECK(error_code({}) == "NHC_EARG010");
}

TEST_CASE("error messages name the option, the value and what was expected") {
    try {
        parse({"m.onnx", "--target", "trn9"});
        FAIL("no error");
    } catch (const UserError &e) {
        std::string m = e.what();
        CHECK(m.find("--target") != std::string::npos);
        CHECK(m.find("trn9") != std::string::npos);
        CHECK(m.find("inf2|trn1|trn1n|trn2") != std::string::npos);
    }
}

TEST_CASE("version text names the compiler and its libraries") {
    std::string v = version_text();
    CHECK(v.find("neuron-halide-cc version") != std::string::npos);
    CHECK(v.find("Halide version 14") != std::string::npos);
    CHECK(v.find("LLVM version 14") != std::string::npos);
    CHECK(v.find("ONNX version 1.12") != std::string::npos);
}
