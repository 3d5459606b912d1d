#ifndef NHC_SCHEDULES_MEMORYTYPES_H
#define NHC_SCHEDULES_MEMORYTYPES_H

/** \file
 * Our names for Halide's memory types (DESIGN.md §4): SBUF is MemoryType::VTCM and PSUM is
 * MemoryType::LockedCache; HBM is Halide's default heap and the input/output buffers. Never
 * AMXTile (Halide's AMX extraction would claim it, ../shared/reference/halide14.md §3).
 */

#include <Halide.h>

namespace nhc::sched {

constexpr Halide::MemoryType SBUF = Halide::MemoryType::VTCM;
constexpr Halide::MemoryType PSUM = Halide::MemoryType::LockedCache;

} // namespace nhc::sched

#endif
