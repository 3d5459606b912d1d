#ifndef NHC_AUTOSCHEDULER_CANDIDATES_H
#define NHC_AUTOSCHEDULER_CANDIDATES_H

/** \file
 * The schedule plans the search tries for a group (issue 16), in the order they are measured,
 * the default plan first. A matmul (sched::takes_matmul_plan) varies how its operands move
 * (SchedulePlan.h), its output tile and how A's PE transposes use PSUM: -O2 tries A's
 * transposes in fixed buffers, each operand movement with the default tiles, then narrower tiles
 * with the default movement (8 plans, the -O2 budget); -O3 every movement with every tile width,
 * and the transpose variants with the default, A-resident and B-resident movements. A
 * convolution or pooling with padded rows (sched::takes_image_plan) at -O2 and -O3, under every
 * model type, tries its image padded on chip (ImagePlan). Other groups have no choices yet: only
 * the default plan. Tile limits are fractions of the target's (one PSUM bank, the partitions), so
 * no hardware number lives here.
 *
 * `--model-type transformer` adds the attention moves: a fused attention group
 * (sched::takes_attention_plan) tries its PSUM stages in fixed buffers (AttentionPlan). Under
 * `generic` and `unet-inference` an attention group has only its default plan.
 */

#include "schedules/Group.h"
#include "schedules/SchedulePlan.h"
#include "target/Target.h"

#include <string>
#include <vector>

namespace nhc::autosched {

std::vector<sched::SchedulePlan> candidate_plans(const sched::Group &g,
                                                 const target::TargetInfo &target, int optlevel,
                                                 const std::string &model_type = "generic");

} // namespace nhc::autosched

#endif
