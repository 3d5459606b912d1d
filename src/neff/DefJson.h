#ifndef NHC_NEFF_DEFJSON_H
#define NHC_NEFF_DEFJSON_H

/** \file
 * The JSON members of a NEFF (neuron-compiler.md §4.2), through llvm::json (keys printed sorted):
 *  - info.json: {"tool", "tool_version", "neff_version", "isa_version", "target", "name",
 *    "options"}
 *  - sg00/def.json: {"var": [{"var_id", "name", "type" (input | output | file | tmp-buf, the NEFF
 *    vocabulary), "dtype", "shape", "size", "hbm_offset", "file_name"?}], "engines": [{"engine",
 *    "file", "num_instructions"}], "dma_queue": [{"queue", "owner", "num_transfers"}]}.
 * Parsing errors are NHC_ENEFF006 naming the member and the field.
 */

#include "neff/Isa.h"

#include <string>
#include <vector>

namespace nhc::neff {

std::string make_info_json(const Program &p);
std::string make_def_json(const Program &p);
/** Name of the archive member holding engine e's stream / weight variable v's bytes. */
std::string stream_member(Engine e);
std::string weight_member(int var_id);
/** Whether an archive member is a weight's file (weight_member). */
bool is_weight_member(const std::string &name);

/** Fills target, name and options. */
void parse_info_json(const std::string &text, Program &p);
/** Fills vars (without weight bytes); returns the stream member name per engine. */
std::vector<std::string> parse_def_json(const std::string &text, Program &p);

} // namespace nhc::neff

#endif
