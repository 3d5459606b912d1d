#include "neff/Encoding.h"

#include "support/Error.h"

#include <cstring>

namespace nhc::neff {

namespace {

class Writer {
public:
    std::vector<uint8_t> out;

    template <typename T>
    void put(T v) {
        uint8_t b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T)); // hosts are little-endian (x86-64, aarch64)
        out.insert(out.end(), b, b + sizeof(T));
    }
    void ap(const AccessPattern &a) {
        put<uint8_t>(uint8_t(a.space));
        if (!a.present()) {
            return;
        }
        put<uint8_t>(uint8_t(a.dtype));
        put<int32_t>(a.var);
        put<int32_t>(a.start_partition);
        put<int32_t>(a.num_partitions);
        put<int64_t>(a.partition_step);
        put<int64_t>(a.offset);
        put<uint8_t>(uint8_t(a.dims.size()));
        for (const auto &d : a.dims) {
            put<int64_t>(d.step);
            put<int64_t>(d.num);
        }
    }
};

class Reader {
public:
    Reader(const std::vector<uint8_t> &b, const std::string &w) : bytes(b), what(w) {}
    const std::vector<uint8_t> &bytes;
    const std::string &what;
    size_t pos = 0;
    size_t instr = 0;

    [[noreturn]] void fail(const std::string &msg) const {
        user_error("NHC_ENEFF007", "instruction stream ", what, ": ", msg, " at byte ", pos,
                   " (instruction ", instr, ")");
    }
    template <typename T>
    T get() {
        if (bytes.size() - pos < sizeof(T)) {
            fail("truncated: needs " + std::to_string(sizeof(T)) + " more bytes, " +
                 std::to_string(bytes.size() - pos) + " left");
        }
        T v;
        std::memcpy(&v, bytes.data() + pos, sizeof(T));
        pos += sizeof(T);
        return v;
    }
    template <typename E>
    E get_enum(int count, const char *kind) {
        uint8_t v = get<uint8_t>();
        if (v >= count) {
            pos--;
            fail(std::string("unsupported ") + kind + " code " + std::to_string(v));
        }
        return static_cast<E>(v);
    }
    AccessPattern ap() {
        AccessPattern a;
        a.space = get_enum<MemSpace>(4, "memory space");
        if (!a.present()) {
            return a;
        }
        a.dtype = get_enum<DType>(kNumDeviceDTypes, "dtype"); // no f64, u64 on an engine
        a.var = get<int32_t>();
        a.start_partition = get<int32_t>();
        a.num_partitions = get<int32_t>();
        a.partition_step = get<int64_t>();
        a.offset = get<int64_t>();
        uint8_t n = get<uint8_t>();
        if (n > kMaxFreeDims) {
            pos--;
            fail(std::to_string(n) + " free dimensions (at most " + std::to_string(kMaxFreeDims) +
                 ")");
        }
        a.dims.resize(n);
        for (auto &d : a.dims) {
            d.step = get<int64_t>();
            d.num = get<int64_t>();
        }
        return a;
    }
};

void encode_field(Writer &w, const Instr &i, const FieldSpec &f) {
    switch (f.kind) {
    case FieldKind::Ap:
        w.ap(slot_ap(i, f.slot));
        break;
    case FieldKind::Scalar: {
        const Scalar &s = slot_scalar(i, f.slot);
        w.put<uint8_t>(s.is_ap ? 1 : 0);
        if (s.is_ap) {
            w.ap(s.ap);
        } else {
            w.put<float>(s.imm);
        }
        break;
    }
    case FieldKind::Alu:
        w.put<uint8_t>(uint8_t(slot_alu(i, f.slot)));
        break;
    case FieldKind::Func:
        w.put<uint8_t>(uint8_t(i.func));
        break;
    case FieldKind::Float:
        w.put<float>(i.value);
        break;
    case FieldKind::Affine:
        w.put<int64_t>(i.pattern.base);
        w.put<int64_t>(i.pattern.partition_mult);
        w.put<uint8_t>(uint8_t(i.pattern.steps.size()));
        for (int64_t s : i.pattern.steps) {
            w.put<int64_t>(s);
        }
        break;
    case FieldKind::Int:
        w.put<int32_t>(slot_int(i, f.slot));
        break;
    case FieldKind::Flag:
        break; // carried in the flags byte
    }
}

void decode_field(Reader &r, Instr &i, const FieldSpec &f) {
    switch (f.kind) {
    case FieldKind::Ap:
        slot_ap(i, f.slot) = r.ap();
        break;
    case FieldKind::Scalar: {
        Scalar &s = slot_scalar(i, f.slot);
        s.is_ap = r.get_enum<uint8_t>(2, "scalar kind") != 0;
        if (s.is_ap) {
            s.ap = r.ap();
        } else {
            s.imm = r.get<float>();
        }
        break;
    }
    case FieldKind::Alu:
        slot_alu(i, f.slot) = r.get_enum<AluOp>(kNumAluOps, "alu op");
        break;
    case FieldKind::Func:
        i.func = r.get_enum<ActFunc>(kNumActFuncs, "activation function");
        break;
    case FieldKind::Float:
        i.value = r.get<float>();
        break;
    case FieldKind::Affine: {
        i.pattern.base = r.get<int64_t>();
        i.pattern.partition_mult = r.get<int64_t>();
        uint8_t n = r.get<uint8_t>();
        if (n > kMaxFreeDims) {
            r.fail("affine pattern with " + std::to_string(n) + " steps");
        }
        i.pattern.steps.resize(n);
        for (auto &s : i.pattern.steps) {
            s = r.get<int64_t>();
        }
        break;
    }
    case FieldKind::Int:
        slot_int(i, f.slot) = r.get<int32_t>();
        break;
    case FieldKind::Flag:
        break;
    }
}

} // namespace

std::vector<uint8_t> encode_stream(Engine e, const std::vector<Instr> &instrs) {
    Writer w;
    w.out = {'N', 'H', 'C', 'I'};
    w.put<uint32_t>(kIsaVersion);
    w.put<uint8_t>(uint8_t(e));
    w.put<uint8_t>(0);
    w.put<uint8_t>(0);
    w.put<uint8_t>(0);
    w.put<uint32_t>(uint32_t(instrs.size()));
    for (const auto &i : instrs) {
        w.put<uint8_t>(uint8_t(i.op));
        w.put<uint8_t>(i.flags);
        for (const auto &f : opcode_schema(i.op).fields) {
            encode_field(w, i, f);
        }
        nhc_assert(i.waits.size() < 256, "too many semaphore waits");
        w.put<uint8_t>(uint8_t(i.waits.size()));
        for (const auto &s : i.waits) {
            w.put<uint32_t>(s.sem);
            w.put<uint32_t>(s.value);
        }
        w.put<int32_t>(i.signal);
        nhc_assert(i.name.size() < 65536, "instruction name too long");
        w.put<uint16_t>(uint16_t(i.name.size()));
        w.out.insert(w.out.end(), i.name.begin(), i.name.end());
    }
    return w.out;
}

std::vector<Instr> decode_stream(const std::vector<uint8_t> &bytes, Engine expected,
                                 const std::string &what) {
    Reader r(bytes, what);
    if (bytes.size() < 4 || std::memcmp(bytes.data(), "NHCI", 4) != 0) {
        r.fail("bad magic (expected \"NHCI\")");
    }
    r.pos = 4;
    uint32_t version = r.get<uint32_t>();
    if (version != kIsaVersion) {
        user_error("NHC_ENEFF002", "instruction stream ", what, " has isa version ", version,
                   ", this runtime supports ", kIsaVersion);
    }
    Engine e = r.get_enum<Engine>(kNumEngines, "engine");
    if (e != expected) {
        r.fail(std::string("stream is for engine ") + target::engine_name(e) + ", expected " +
               target::engine_name(expected));
    }
    for (int k = 0; k < 3; k++) {
        r.get<uint8_t>(); // padding
    }
    uint32_t count = r.get<uint32_t>();
    std::vector<Instr> out;
    for (r.instr = 0; r.instr < count; r.instr++) {
        Instr i;
        i.op = r.get_enum<Opcode>(kNumOpcodes, "instruction operator");
        i.flags = r.get<uint8_t>();
        for (const auto &f : opcode_schema(i.op).fields) {
            decode_field(r, i, f);
        }
        uint8_t nw = r.get<uint8_t>();
        for (uint8_t k = 0; k < nw; k++) {
            SemWait s;
            s.sem = r.get<uint32_t>();
            s.value = r.get<uint32_t>();
            i.waits.push_back(s);
        }
        i.signal = r.get<int32_t>();
        uint16_t len = r.get<uint16_t>();
        if (bytes.size() - r.pos < len) {
            r.fail("truncated instruction name");
        }
        i.name.assign(reinterpret_cast<const char *>(bytes.data() + r.pos), len);
        r.pos += len;
        out.push_back(std::move(i));
    }
    if (r.pos != bytes.size()) {
        r.fail(std::to_string(bytes.size() - r.pos) + " trailing bytes after the last instruction");
    }
    return out;
}

} // namespace nhc::neff
