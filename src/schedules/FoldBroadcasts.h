#ifndef NHC_SCHEDULES_FOLDBROADCASTS_H
#define NHC_SCHEDULES_FOLDBROADCASTS_H
/** \file
 * Builds each broadcast stage of a group once instead of once per output tile.
 *
 * A broadcast stage (a Gemm bias, LayerNorm's gamma and beta, an elementwise operand broadcast:
 * roles "bias", "gamma_b", "beta_b", "bcast*") copies a smaller tensor across the partition axis
 * of the output, so its value does not depend on its partition dim (Halide dim 1) or on the dims
 * outside it. Computed per tile it is one partition-broadcast DMA per output tile, the same bytes
 * again for every row tile. This pass rewrites every read of such a stage in the group from
 * `b(x, y, z...)` to `b(x, y % P, 0...)` (P = the partitions of a tile; `y` as is when the
 * partition extent is at most P), which reads the same values, and computes the stage at root:
 * Halide's bounds inference then sizes it to one tile of partitions, loaded once per group
 * (../shared/reference/isel-prototype.md, "tiled-hoist").
 *
 * Assumes the default schedule's tiling: the partition axis is split into tiles of exactly P (a
 * partition extent that P divides), so `(yo * P + yi) % P` simplifies to `yi`; other extents, and
 * stages wider than `max_bytes_per_partition` on one partition, are left per tile.
 */
#include "schedules/Group.h"

#include <set>
#include <string>

namespace nhc::sched {

/** Folds the group's broadcast stages; returns the names of the stages it folded (the caller
 *  computes them at root, in SBUF). Each fold is recorded in g.folded_broadcasts. */
std::set<std::string> fold_broadcast_stages(Group &g, int partitions,
                                            int64_t max_bytes_per_partition);

/** Folds one stage (Func name) with period `period`, whatever its size (a schedule script's
 *  `hint fold_broadcast`); returns "" or why it cannot be folded. The rewrite reads the same
 *  values under any tiling; the tiling decides only how much of the stage a tile needs. */
std::string fold_broadcast_stage(Group &g, const std::string &func_name, int period);

} // namespace nhc::sched

#endif
