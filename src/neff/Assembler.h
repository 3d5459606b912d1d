#ifndef NHC_NEFF_ASSEMBLER_H
#define NHC_NEFF_ASSEMBLER_H

/** \file
 * The text form of a Program: what tests write by hand, what neff-dump prints and what neff-as
 * assembles. print_program(parse_program(t)) == t for text in canonical form, and
 * parse_program(print_program(p)) == p for any program (weight bytes excepted: text names them).
 *
 *   ; comment
 *   .target trn1
 *   .name tiny
 *   .option auto_cast="none"
 *   .var x input f32 [128,512]
 *   .var w weight bf16 [128,128] file="w.npy"      ; file= is read by neff-as only
 *   .engine sp
 *     dma queue=0 dst=sbuf.f32[0:128,0][[1,512]] src=hbm.f32[x,0][[2048,128],[4,512]] signal=s0
 *   .engine pe
 *     matmul dst=psum.f32[0:128,0][[1,512]] stationary=... moving=... accumulate wait=s0>=1
 *
 * Access patterns: `space.dtype[start:count,byte_offset][[step,num],...]` on chip (steps in
 * elements), `hbm.dtype[var,byte_offset][[row_step,rows],[step,num],...]` in HBM (steps in bytes;
 * the first pair is the partition (row) dimension). Errors are NHC_EASM codes naming the line.
 */

#include "neff/Isa.h"

#include <string>
#include <utility>
#include <vector>

namespace nhc::neff {

/** A default-initialised instruction of this opcode (activation scale 1, ...). */
Instr default_instr(Opcode op);

std::string print_access_pattern(const AccessPattern &ap, const Program &p);
/** One instruction without its engine, e.g. "memset dst=... value=0". */
std::string print_instr(const Instr &i, const Program &p);
std::string print_program(const Program &p);

/** `weight_files` (optional) receives (variable, file) for each `.var ... file="..."`. */
Program parse_program(const std::string &text,
                      std::vector<std::pair<std::string, std::string>> *weight_files = nullptr);
/** Parses one instruction line in the context of `p` (its variables), for engine `e`. */
Instr parse_instr(const std::string &line, const Program &p, Engine e);

} // namespace nhc::neff

#endif
