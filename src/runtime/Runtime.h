#ifndef NHC_RUNTIME_RUNTIME_H
#define NHC_RUNTIME_RUNTIME_H

/** \file
 * A small runtime in the spirit of libnrt (neuron-compiler.md §4.3): load a NEFF, ask for tensor
 * info by name, execute with named inputs and get named outputs, unload. Execution runs on the
 * simulator (Simulator.h) of the NEFF's target.
 *
 * Two styles: Model's methods throw nhc::UserError (codes NHC_ENEFF* at load, NHC_ERT* at
 * execute); the nrt_* functions catch them and return a Result with the NRT-like status
 * (Status.h) next to the code and message.
 */

#include "neff/NeffFile.h"
#include "runtime/Simulator.h"
#include "runtime/Status.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nhc::rt {

struct Partition;

struct TensorInfo {
    std::string name;
    bool is_input = true;
    neff::DType dtype = neff::DType::F32;
    std::vector<int64_t> shape;
    int64_t size = 0; ///< bytes; -1 when a dimension is known only at run time
};

/** A host tensor: dtype, shape and little-endian bytes. */
struct Tensor {
    neff::DType dtype = neff::DType::F32;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
};

struct LoadOptions {
    std::string target; ///< the device's target; empty = accept the NEFF's own
    /** The weights' bytes are not read (neff::ReadOptions::weights): the model then runs only
     *  with ExecOptions::timing_only (NHC_ERT021 otherwise), in a fraction of the memory. */
    bool timing_only = false;
};

struct ExecOptions {
    bool trace = false;
    /** Timing only: every instruction is checked and timed from its operands' shapes, but no
     *  value is computed. Inputs are optional (checked when given), no output is returned, and
     *  the Summary is the same as a functional run's (the timing model never looks at values).
     *  For simulating large kernels fast (docs/timing.md); the default is functional. */
    bool timing_only = false;
    /** Race detection (runtime/RaceDetector.h): two accesses to the same bytes, one a write,
     *  that no semaphore orders are NHC_ERT019. Works in timing-only mode too. */
    bool check_races = false;
    /** The most instructions the run may execute (0: no limit): a NEFF with more is NHC_ERT022
     *  before anything runs, so that a NEFF from a stranger cannot keep the simulator busy
     *  without end (neuron-halide-run --max-instructions). The streams have no branches: a run
     *  executes each instruction once. */
    int64_t max_instructions = 0;
};

struct ExecResult {
    std::map<std::string, Tensor> outputs;
    Summary summary;
    std::vector<TraceEvent> trace;
};

/** A loaded NEFF. A partitioned one (host fallback: runtime/Partition.h) runs its segments in
 *  order; its program() then holds only its inputs and outputs (and info.json's name, target and
 *  options), each typed by the segment that reads or writes it, a dimension known only at run
 *  time being -1. */
class Model {
public:
    /** Loads NEFF bytes (read_neff plus the target check, NHC_ENEFF009). */
    static std::unique_ptr<Model> load(const std::vector<uint8_t> &neff,
                                       const LoadOptions &opt = {});
    /** Loads a NEFF file, read in chunks (neff::read_neff_file): never held whole. */
    static std::unique_ptr<Model> load_file(const std::string &path, const LoadOptions &opt = {});
    /** Loads a program directly (tests and neff-as), with the same checks as a NEFF. */
    static std::unique_ptr<Model> load_program(neff::Program p, const LoadOptions &opt = {});

    const std::vector<TensorInfo> &tensors() const { return tensors_; }
    /** NHC_ERT014 if no input or output has this name. */
    const TensorInfo &tensor_info(const std::string &name) const;
    /** Runs once; inputs by name (NHC_ERT001/002/003 when missing, unknown or misshapen; a
     *  missing input is allowed in timing-only mode). NHC_ERT021 for a functional run of a
     *  model loaded for timing only. */
    ExecResult execute(const std::map<std::string, Tensor> &inputs,
                       const ExecOptions &opt = {}) const;

    const neff::Program &program() const { return program_; }
    const neff::NeffHeader &header() const { return header_; }
    const target::TargetInfo &target() const { return *target_; }
    /** The segments of a partitioned NEFF, else null. */
    const Partition *partition() const { return partition_.get(); }
    ~Model();

private:
    Model();
    /** load_program of a read NEFF, keeping its header. */
    static std::unique_ptr<Model> from_contents(neff::NeffContents c, const LoadOptions &opt);

    neff::Program program_;
    neff::NeffHeader header_;
    const target::TargetInfo *target_ = nullptr;
    std::vector<TensorInfo> tensors_;
    std::shared_ptr<const Partition> partition_;
};

Result nrt_load(const std::vector<uint8_t> &neff, const LoadOptions &opt,
                std::unique_ptr<Model> &out);
Result nrt_load_file(const std::string &path, const LoadOptions &opt, std::unique_ptr<Model> &out);
Result nrt_get_tensor_info(const Model &m, const std::string &name, TensorInfo &out);
Result nrt_execute(const Model &m, const std::map<std::string, Tensor> &inputs,
                   const ExecOptions &opt, ExecResult &out);
void nrt_unload(std::unique_ptr<Model> &m);

std::string shape_str(const std::vector<int64_t> &shape);

} // namespace nhc::rt

#endif
