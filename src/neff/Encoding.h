#ifndef NHC_NEFF_ENCODING_H
#define NHC_NEFF_ENCODING_H

/** \file
 * The binary encoding of one engine's instruction stream (ours: the real one is not public,
 * neuron-compiler.md §8). Little-endian, schema-driven (Isa.h), versioned:
 *
 *   "NHCI" | u32 isa_version | u8 engine | 3 x u8 zero | u32 count | count x instruction
 *   instruction = u8 opcode | u8 flags | fields in schema order | u8 n_waits | n x (u32 sem,
 *                 u32 value) | i32 signal | u16 name_len | name bytes
 *
 * The decoder checks every read against the end of the buffer and every enum against its range;
 * a violation is user error NHC_ENEFF007 naming the stream, the byte offset and the instruction.
 */

#include "neff/Isa.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nhc::neff {

/** Bump when the encoding changes; the loader rejects other versions (NHC_ENEFF002). */
constexpr uint32_t kIsaVersion = 2; // 2: dma has an optional index (indirect DMA)

std::vector<uint8_t> encode_stream(Engine e, const std::vector<Instr> &instrs);
/** `what` names the stream in messages (e.g. "sg00/pe.bin"). */
std::vector<Instr> decode_stream(const std::vector<uint8_t> &bytes, Engine expected,
                                 const std::string &what);

} // namespace nhc::neff

#endif
