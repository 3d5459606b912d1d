#include "driver/CompileCache.h"

#include "autoscheduler/TuningDb.h"
#include "neff/NeffFile.h"
#include "neff/Sha256.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/Log.h"
#include "support/Parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <elf.h>
#include <filesystem>
#include <future>
#include <link.h>
#include <system_error>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <variant>

namespace fs = std::filesystem;

namespace nhc {

namespace {

/** Feeds fields to a SHA-256, each prefixed by its size so that no two sequences of fields
 *  give the same stream. */
class KeyHasher {
public:
    void bytes(const void *data, size_t size) {
        uint64_t n = size;
        sha_.update(reinterpret_cast<const uint8_t *>(&n), sizeof n);
        sha_.update(static_cast<const uint8_t *>(data), size);
    }
    void text(const std::string &s) { bytes(s.data(), s.size()); }
    void number(int64_t v) { bytes(&v, sizeof v); }
    void real(double v) { bytes(&v, sizeof v); }
    void ints(const std::vector<int64_t> &v) { bytes(v.data(), v.size() * sizeof(int64_t)); }
    /** A tensor's type and shape, and its bytes' digests (tensor_digests). */
    void tensor(const HostTensor &t, const std::vector<std::array<uint8_t, 32>> &digests) {
        number(static_cast<int64_t>(t.dtype()));
        ints(t.shape());
        for (const std::array<uint8_t, 32> &d : digests)
            bytes(d.data(), d.size());
    }
    std::string hex_digest() {
        std::array<uint8_t, 32> d = sha_.final();
        return neff::hex(d.data(), d.size());
    }

private:
    neff::Sha256 sha_;
};

/** A tensor's bytes are keyed by the SHA-256 of each piece of this size, so that the pieces of
 *  a model's weights are hashed on several threads (the key does not depend on how many). */
constexpr size_t kDigestPieceBytes = size_t(16) << 20;

size_t digest_pieces(ByteView b) {
    return std::max<size_t>(1, (b.size() + kDigestPieceBytes - 1) / kDigestPieceBytes);
}

std::array<uint8_t, 32> piece_digest(ByteView b, size_t piece) {
    size_t begin = piece * kDigestPieceBytes;
    return neff::sha256(b.data() + begin, std::min(kDigestPieceBytes, b.size() - begin));
}

/** The digests of each piece of every tensor, on `jobs` threads. */
std::vector<std::vector<std::array<uint8_t, 32>>>
tensor_digests(const std::vector<const HostTensor *> &tensors, int jobs) {
    std::vector<std::vector<std::array<uint8_t, 32>>> digests(tensors.size());
    std::vector<std::pair<size_t, size_t>> pieces; // (tensor, piece)
    for (size_t t = 0; t < tensors.size(); t++) {
        digests[t].resize(digest_pieces(tensors[t]->bytes()));
        for (size_t p = 0; p < digests[t].size(); p++)
            pieces.emplace_back(t, p);
    }
    for_each_index(pieces.size(), jobs, [&](size_t i) {
        auto [t, p] = pieces[i];
        digests[t][p] = piece_digest(tensors[t]->bytes(), p);
    });
    return digests;
}

/** A loaded ELF object: its path ("" for the executable), build id, the libraries it needs
 *  (DT_NEEDED), and whether it holds a given address. */
struct LoadedObject {
    std::string path, build_id;
    std::vector<std::string> needed;
    bool holds_address = false;
};

/** The build id in an object's PT_NOTE segment at [p, end), or "". */
std::string build_id_note(const uint8_t *p, const uint8_t *end) {
    while (p + sizeof(ElfW(Nhdr)) <= end) {
        auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
        const uint8_t *name = p + sizeof(ElfW(Nhdr));
        const uint8_t *desc = name + ((note->n_namesz + 3) & ~3u);
        if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
            std::equal(name, name + 4, reinterpret_cast<const uint8_t *>("GNU")))
            return neff::hex(desc, note->n_descsz);
        p = desc + ((note->n_descsz + 3) & ~3u);
    }
    return "";
}

/** The DT_NEEDED names of an object's dynamic section. */
std::vector<std::string> needed_libraries(const ElfW(Dyn) * dyn, uintptr_t load_bias) {
    uintptr_t strtab = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_STRTAB)
            strtab = d->d_un.d_ptr;
    // ld.so relocates DT_STRTAB in place on x86-64; where it has not, it is still unbiased.
    if (strtab && strtab < load_bias)
        strtab += load_bias;
    std::vector<std::string> needed;
    for (const ElfW(Dyn) *d = dyn; strtab && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_NEEDED)
            needed.push_back(reinterpret_cast<const char *>(strtab + d->d_un.d_val));
    return needed;
}

std::vector<LoadedObject> loaded_objects(const void *address) {
    struct Walk {
        uintptr_t address;
        std::vector<LoadedObject> objects;
    } walk{reinterpret_cast<uintptr_t>(address), {}};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *out) {
            Walk &w = *static_cast<Walk *>(out);
            LoadedObject o;
            o.path = info->dlpi_name;
            for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                uintptr_t at = info->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD)
                    o.holds_address |= w.address >= at && w.address < at + ph.p_memsz;
                if (ph.p_type == PT_NOTE && o.build_id.empty()) {
                    auto *p = reinterpret_cast<const uint8_t *>(at);
                    o.build_id = build_id_note(p, p + ph.p_memsz);
                }
                if (ph.p_type == PT_DYNAMIC)
                    o.needed =
                        needed_libraries(reinterpret_cast<const ElfW(Dyn) *>(at), info->dlpi_addr);
            }
            w.objects.push_back(std::move(o));
            return 0;
        },
        &walk);
    return walk.objects;
}

void hash_attr(KeyHasher &h, const AttrValue &a) {
    h.number(static_cast<int64_t>(a.index()));
    std::visit(
        [&](const auto &v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, int64_t>)
                h.number(v);
            else if constexpr (std::is_same_v<T, double>)
                h.real(v);
            else if constexpr (std::is_same_v<T, std::string>)
                h.text(v);
            else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
                h.ints(v);
            else if constexpr (std::is_same_v<T, std::vector<double>>)
                h.bytes(v.data(), v.size() * sizeof(double));
            else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                h.number(static_cast<int64_t>(v.size()));
                for (const std::string &s : v)
                    h.text(s);
            } else
                h.tensor(v, tensor_digests({&v}, 1).front());
        },
        a);
}

void hash_graph(KeyHasher &h, const Graph &g, int jobs) {
    // The weights' digests first, on `jobs` threads: most of a model's bytes.
    std::vector<const HostTensor *> constants;
    for (const auto &[name, v] : g.values) // a sorted map
        if (v.is_constant())
            constants.push_back(v.constant.get());
    std::vector<std::vector<std::array<uint8_t, 32>>> digests = tensor_digests(constants, jobs);
    h.text(g.name);
    h.number(g.opset);
    h.number(g.original_opset);
    for (const auto *names : {&g.inputs, &g.outputs}) {
        h.number(static_cast<int64_t>(names->size()));
        for (const std::string &n : *names)
            h.text(n);
    }
    size_t constant = 0;
    for (const auto &[name, v] : g.values) {
        h.text(name);
        h.number(static_cast<int64_t>(v.dtype));
        h.ints(v.shape);
        h.number(v.is_constant());
        if (v.is_constant())
            h.tensor(*v.constant, digests[constant++]);
    }
    for (const Node &n : g.nodes) {
        for (const std::string *s : {&n.name, &n.op_type, &n.domain})
            h.text(*s);
        for (const auto *names : {&n.inputs, &n.outputs}) {
            h.number(static_cast<int64_t>(names->size()));
            for (const std::string &s : *names)
                h.text(s);
        }
        for (const auto &[key, value] : n.attrs) {
            h.text(key);
            hash_attr(h, value);
        }
        // Set by graph passes, not the front end; hashed so that a graph given later is keyed
        // whole.
        h.number(n.operand_cast ? static_cast<int64_t>(*n.operand_cast) : -1);
        h.number(n.keep_precision);
        for (const auto &[input, perm] : n.input_perm) {
            h.number(input);
            h.ints(perm);
        }
    }
}

void hash_options(KeyHasher &h, const CompileOptions &o) {
    for (const std::string *s : {&o.framework, &o.target, &o.model_type, &o.auto_cast})
        h.text(*s);
    h.text(o.auto_cast == "none" ? "" : o.auto_cast_type);
    for (int64_t v : {int64_t(o.optlevel), int64_t(o.logical_nc_config)})
        h.number(v);
    for (bool b : {o.enable_saturate_infinity, o.enable_fast_loading_neuron_binaries,
                   o.mixed_precision_accumulation, o.whole_model_moves, o.reuse_lowered_groups,
                   o.keep_resident, o.broadcast_on_pe, o.read_in_place, o.without_weight_bytes})
        h.number(b);
    std::vector<uint8_t> script;
    if (!o.schedule_file.empty() && !read_whole_file(o.schedule_file, &script))
        user_error("NHC_EIO001", "schedule file '", o.schedule_file,
                   "' (--schedule) cannot be read");
    h.text("schedule");
    h.bytes(script.data(), script.size());
    h.text("tuning");
    if (o.tuning)
        o.tuning->visit_usable_records(o.target, [&](const std::string &row) { h.text(row); });
}

std::string entry_path(const std::string &dir, const std::string &key) {
    return (fs::path(dir) / (key + ".neff")).string();
}

/** A name beside `path` no other thread or process writes. */
std::string temporary_beside(const std::string &path) {
    return path + ".tmp." + std::to_string(getpid()) + "." +
           std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
}

/** Copies `from` to a temporary file beside `to`; the temporary's name, or "" (and `error`). */
std::string copy_beside(const std::string &from, const std::string &to, std::string *error) {
    std::string tmp = temporary_beside(to);
    std::error_code ec;
    fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
    if (!ec)
        return tmp;
    *error = ec.message();
    fs::remove(tmp, ec);
    return "";
}

/** Renames `tmp` to `to` (removing `tmp` if that fails); the error, or "". */
std::string rename_or_remove(const std::string &tmp, const std::string &to) {
    std::error_code ec;
    fs::rename(tmp, to, ec);
    if (!ec)
        return "";
    std::string error = ec.message();
    fs::remove(tmp, ec);
    return error;
}

/** A temporary file this old was left by a compile that was killed while writing it. */
constexpr std::chrono::hours kAbandonedTemporary{24};

/** Removes the entries used least recently until the folder holds at most the limit, and the
 *  temporary files of killed compiles. */
void evict_least_recent(const std::string &dir, uint64_t limit_bytes) {
    std::vector<std::tuple<fs::file_time_type, std::string, uint64_t>> entries;
    uint64_t total = 0;
    std::error_code ec;
    auto now = fs::file_time_type::clock::now();
    for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
        if (!e.is_regular_file(ec))
            continue;
        if (e.path().filename().string().find(".neff.tmp.") != std::string::npos &&
            now - e.last_write_time(ec) > kAbandonedTemporary) {
            fs::remove(e.path(), ec);
            continue;
        }
        if (e.path().extension() != ".neff")
            continue;
        uint64_t size = e.file_size(ec);
        entries.emplace_back(e.last_write_time(ec), e.path().string(), size);
        total += size;
    }
    std::sort(entries.begin(), entries.end());
    for (const auto &[time, path, size] : entries) {
        if (total <= limit_bytes)
            break;
        if (fs::remove(path, ec))
            log_info("compile cache: removed ", path, " (used least recently; the cache holds ",
                     limit_bytes, " bytes at most)");
        total -= size;
    }
}

/** The key's start: what it is a key of (`kind`), the compiler build, the options. */
void hash_build_and_options(KeyHasher &h, const std::string &kind, const CompileOptions &options) {
    h.text(kind);
    static const std::string build = compiler_build_id();
    h.text(build);
    hash_options(h, options);
}

} // namespace

std::string compiler_build_id() {
    std::vector<LoadedObject> objects =
        loaded_objects(reinterpret_cast<const void *>(&loaded_objects));
    auto self = std::find_if(objects.begin(), objects.end(),
                             [](const LoadedObject &o) { return o.holds_address; });
    nhc_assert(self != objects.end(), "the compiler's own object is not loaded");
    auto identity = [](const LoadedObject &o) {
        if (!o.build_id.empty())
            return o.build_id;
        std::vector<uint8_t> bytes;
        std::string path = o.path.empty() ? "/proc/self/exe" : o.path;
        nhc_assert(read_whole_file(path, &bytes), "cannot read " << path);
        std::array<uint8_t, 32> d = neff::sha256(bytes.data(), bytes.size());
        return "sha256 " + neff::hex(d.data(), d.size());
    };
    std::string id = "compiler " + identity(*self) + "\n";
    for (const std::string &name : self->needed) {
        auto lib = std::find_if(objects.begin(), objects.end(), [&](const LoadedObject &o) {
            return fs::path(o.path).filename() == name;
        });
        id += name + " " + (lib == objects.end() ? "not loaded" : identity(*lib)) + "\n";
    }
    return id;
}

std::string default_cache_dir() {
    auto env = [](const char *name) {
        const char *v = std::getenv(name);
        return std::string(v ? v : "");
    };
    std::string disable = env("NEURON_HALIDE_CACHE_DISABLE");
    if (!disable.empty() && disable != "0")
        return "";
    if (!env("NEURON_HALIDE_CACHE_DIR").empty())
        return env("NEURON_HALIDE_CACHE_DIR");
    if (!env("XDG_CACHE_HOME").empty())
        return (fs::path(env("XDG_CACHE_HOME")) / "neuron-halide").string();
    if (!env("HOME").empty())
        return (fs::path(env("HOME")) / ".cache" / "neuron-halide").string();
    return "";
}

std::string compile_cache_key(const Graph &graph, const CompileOptions &options) {
    KeyHasher h;
    hash_build_and_options(h, "neuron-halide-cc compile cache 1", options);
    hash_graph(h, graph, parallel_jobs(options));
    return h.hex_digest();
}

std::string partitioned_cache_key(const std::string &manifest_json, const std::string &model_name,
                                  const std::vector<KeyedSegment> &segments,
                                  const CompileOptions &options) {
    KeyHasher h;
    hash_build_and_options(h, "neuron-halide-cc compile cache 1, partitioned", options);
    h.text(model_name);
    h.text(manifest_json);
    for (const KeyedSegment &seg : segments) {
        h.number(seg.device_graph != nullptr);
        if (seg.device_graph)
            hash_graph(h, *seg.device_graph, parallel_jobs(options));
        else
            h.text(seg.host_onnx);
    }
    return h.hex_digest();
}

bool fetch_cached_neff(const std::string &dir, const std::string &key, const std::string &output) {
    std::string entry = entry_path(dir, key);
    std::error_code ec;
    if (!fs::is_regular_file(entry, ec))
        return false;
    // The entry is checked while it is copied: the NEFF's hash is one stream, and copying is
    // the kernel's work (std::filesystem::copy_file).
    std::future<std::string> check = std::async(std::launch::async, [&]() -> std::string {
        try {
            neff::check_neff_file_hash(entry);
            return "";
        } catch (const UserError &e) {
            return e.formatted();
        }
    });
    std::string error;
    std::string tmp = copy_beside(entry, output, &error);
    std::string corrupt = check.get();
    if (!corrupt.empty()) {
        log_warning("compile cache: entry ", entry, " is corrupt (", corrupt,
                    "); it is removed and the model compiled again");
        fs::remove(tmp, ec);
        fs::remove(entry, ec);
        return false;
    }
    if (tmp.empty()) { // compiling says why the output cannot be written, with its code
        log_info("compile cache: cannot copy ", entry, " to ", output, " (", error, ")");
        return false;
    }
    error = rename_or_remove(tmp, output);
    if (!error.empty()) {
        log_info("compile cache: cannot write ", output, " (", error, ")");
        return false;
    }
    fs::last_write_time(entry, fs::file_time_type::clock::now(), ec); // recently used
    return true;
}

void store_cached_neff(const std::string &dir, const std::string &key, const std::string &neff_path,
                       uint64_t limit_bytes) {
    std::string entry = entry_path(dir, key);
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string error = ec ? ec.message() : "";
    if (error.empty()) {
        std::string tmp = copy_beside(neff_path, entry, &error);
        if (!tmp.empty())
            error = rename_or_remove(tmp, entry);
    }
    if (!error.empty()) {
        log_warning("compile cache: cannot store the NEFF in ", dir, " (", error,
                    "); the NEFF is written, but a next compile will not find it");
        return;
    }
    log_info("compile cache: stored ", entry);
    evict_least_recent(dir, limit_bytes);
}

} // namespace nhc
