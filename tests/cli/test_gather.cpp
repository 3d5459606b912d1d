// An embedding lookup (Gather of rows of a 2-D table) through the shipped tools: compiled to
// indirect DMAs that move only the rows used, exact, negative indices from the end, and an
// index outside the table stopping the run with NHC_ERT020 (the runtime's NRT_OOB).

#include "CliRun.h"

#include "support/Npy.h"

#include <cstdlib>
#include <doctest/doctest.h>
#include <fstream>
#include <sstream>

using nhc::test::TempDir;
using namespace nhc::cli_test;

namespace {

constexpr int kRows = 2000, kWidth = 4, kBatch = 2, kSeq = 150; // 300 ids: three index tiles

float table_value(int row, int col) {
    return float(row) + 0.25f * float(col);
}

/** The model: y = Gather(table, ids) with ids [batch, seq], the table a constant of kRows x
 *  kWidth. */
std::string model_text(int batch = kBatch, int seq = kSeq) {
    std::ostringstream os;
    os << "<ir_version: 8, opset_import: [\"\" : 17]>\n"
       << "g (int64[" << batch << ", " << seq << "] ids) => (float[" << batch << ", " << seq << ", "
       << kWidth << "] y) {\n"
       << "  table = Constant <value = float[" << kRows << ", " << kWidth << "] {";
    for (int r = 0; r < kRows; r++)
        for (int c = 0; c < kWidth; c++)
            os << (r || c ? ", " : "") << table_value(r, c);
    os << "}> ()\n  y = Gather <axis = 0> (table, ids)\n}\n";
    return os.str();
}

void write_ids(const TempDir &dir, const std::vector<int64_t> &ids,
               std::vector<int64_t> shape = {kBatch, kSeq}) {
    nhc::NpyTensor t;
    t.dtype = "int64";
    t.shape = std::move(shape);
    const auto *b = reinterpret_cast<const uint8_t *>(ids.data());
    t.data.assign(b, b + ids.size() * sizeof(int64_t));
    std::vector<uint8_t> bytes = nhc::make_npy(t);
    std::ofstream(dir.file("ids.npy"), std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

/** Runs file.neff in `dir` on ids.npy, race-checked, outputs in out/. */
Run run_gather(const TempDir &dir) {
    return run_neff("file.neff --check-races --input ids=ids.npy --output-dir out",
                    dir.path.string());
}

std::vector<int64_t> some_ids() {
    std::vector<int64_t> ids(kBatch * kSeq);
    for (size_t i = 0; i < ids.size(); i++)
        ids[i] = int64_t((i * 613 + 5) % kRows);
    ids[1] = -1;          // the last row
    ids[2] = -kRows;      // the first
    ids[299] = kRows - 1; // the last tile's last index
    return ids;
}

} // namespace

TEST_CASE("an embedding lookup gathers only the rows it uses, exactly") {
    TempDir dir;
    std::string m = model_file(dir, "emb.onnx", model_text());
    Run compiled = run(m, dir.path.string());
    INFO(compiled.out);
    REQUIRE(compiled.status == 0);
    std::vector<int64_t> ids = some_ids();
    write_ids(dir, ids);
    Run ran = run_gather(dir);
    INFO(ran.out);
    REQUIRE(ran.status == 0);
    nhc::NpyTensor y = read_npy(dir, "out/y.npy");
    REQUIRE(y.data.size() == ids.size() * kWidth * 4);
    const float *yv = reinterpret_cast<const float *>(y.data.data());
    int bad = 0;
    for (size_t i = 0; i < ids.size(); i++) {
        int row = int(ids[i] < 0 ? ids[i] + kRows : ids[i]);
        for (int c = 0; c < kWidth; c++)
            bad += yv[i * kWidth + size_t(c)] != table_value(row, c);
    }
    CHECK(bad == 0);
    // The table (32,000 bytes) is not read whole: the run moves the ids (as int32), the rows
    // gathered and the output. Each row of 150 ids is two tiles of 75 (balanced, none
    // overlapping another), so each id moves once: 2 rows x 150 x (4 + 16 + 16) bytes.
    size_t at = ran.out.find("dma: ");
    REQUIRE(at != std::string::npos);
    long moved = std::strtol(ran.out.c_str() + at + 5, nullptr, 10);
    CHECK(moved == 2 * 150 * (4 + 2 * kWidth * 4));
    CHECK(moved < kRows * kWidth * 4);
}

TEST_CASE("an index outside the table stops the run with NHC_ERT020 (NRT_OOB)") {
    TempDir dir;
    std::string m = model_file(dir, "emb.onnx", model_text());
    REQUIRE(run(m, dir.path.string()).status == 0);
    for (int64_t bad : {int64_t(kRows), int64_t(-kRows - 1)}) {
        std::vector<int64_t> ids = some_ids();
        ids[200] = bad;
        write_ids(dir, ids);
        Run ran = run_gather(dir);
        INFO(ran.out);
        CHECK(ran.status == 1);
        CHECK(ran.has("NHC_ERT020"));
        CHECK(ran.has("NRT_OOB"));
    }
}

TEST_CASE("a one-token lookup gathers one row; a schedule that gathers into HBM is refused") {
    TempDir dir;
    std::string m = model_file(dir, "one.onnx", model_text(1, 1));
    Run compiled = run(m, dir.path.string());
    INFO(compiled.out);
    REQUIRE(compiled.status == 0); // no partition loop left: used to crash the code generator
    write_ids(dir, {-7}, {1, 1});
    REQUIRE(run_gather(dir).status == 0);
    nhc::NpyTensor y = read_npy(dir, "out/y.npy");
    REQUIRE(y.data.size() == kWidth * 4);
    const float *yv = reinterpret_cast<const float *>(y.data.data());
    for (int c = 0; c < kWidth; c++)
        CHECK(yv[c] == table_value(kRows - 7, c));
    // The gathered rows inlined into the output: the DMA would write HBM.
    std::ofstream(dir.file("s.sched"))
        << "node \"Gather_0\":\n  rows.compute_root().store_in(SBUF)\n"
        << "  stage_1.compute_root().store_in(SBUF)\n"
        << "  hint partition_dim stage_1 0\n"
        << "  hint partition_dim rows 0\n";
    Run refused = run(m + " --schedule s.sched", dir.path.string());
    expect_user_error(refused, "NHC_EGEN008");
    CHECK(refused.has("which an indirect DMA writes only into SBUF"));
}
