#include "schedules/SchedulePlan.h"

#include "support/Error.h"

#include <vector>

namespace nhc::sched {

const char *operands_name(MatmulPlan::Operands o) {
    switch (o) {
    case MatmulPlan::Operands::Auto:
        return "auto";
    case MatmulPlan::Operands::WholeRows:
        return "whole_rows";
    case MatmulPlan::Operands::AResident:
        return "a_resident";
    case MatmulPlan::Operands::BResident:
        return "b_resident";
    case MatmulPlan::Operands::Streamed:
        return "streamed";
    case MatmulPlan::Operands::KBlocked:
        return "k_blocked";
    }
    return "?";
}

namespace {

/** The attention plan's parts: the text around each number, and the field it sets. */
struct AttentionPart {
    const char *prefix, *suffix;
    int AttentionPlan::*field;
};
constexpr AttentionPart kAttentionParts[] = {
    {"q/k transposes in ", " buffers", &AttentionPlan::qk_transpose_buffers},
    {"p transposes in ", " buffers", &AttentionPlan::p_transpose_buffers},
    {"scores in ", " buffers", &AttentionPlan::score_buffers},
    {"outputs in ", " buffers", &AttentionPlan::output_buffers},
    {"p transposes ", " per bank", &AttentionPlan::p_transposes_per_bank},
};

/** The number that `part` holds between `prefix` and `suffix`, or -1. */
int number_in(const std::string &part, const std::string &prefix, const std::string &suffix) {
    if (part.size() <= prefix.size() + suffix.size() ||
        part.size() > prefix.size() + suffix.size() + 6 ||
        part.compare(0, prefix.size(), prefix) != 0 ||
        part.compare(part.size() - suffix.size(), suffix.size(), suffix) != 0)
        return -1;
    std::string digits = part.substr(prefix.size(), part.size() - prefix.size() - suffix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos)
        return -1;
    return std::stoi(digits);
}

constexpr const char *kPerBatchItem = "outputs stored per batch item";
constexpr const char *kOperandsPerHead = "operands loaded per head";

std::string describe_attention(const AttentionPlan &a) {
    std::string s = "attention";
    for (const AttentionPart &part : kAttentionParts)
        if (a.*part.field != AttentionPlan().*part.field)
            s += std::string(", ") + part.prefix + std::to_string(a.*part.field) + part.suffix;
    if (a.outputs_per_batch_item)
        s += std::string(", ") + kPerBatchItem;
    if (a.operands_per_head)
        s += std::string(", ") + kOperandsPerHead;
    return s;
}

constexpr const char *kImagePaddedOnChip = "image padded on chip";
constexpr const char *kOutputResident = "output resident";
constexpr const char *kPeCriticalPath = "PE in critical-path order";

std::string describe_matmul(const MatmulPlan &m) {
    const MatmulPlan d; // the defaults, left out of the text
    std::string s = std::string("matmul ") + operands_name(m.operands);
    if (m.max_tile_n != d.max_tile_n)
        s += ", n <= " + std::to_string(m.max_tile_n);
    if (m.transposes_per_tile != d.transposes_per_tile)
        s += ", transposes " + std::to_string(m.transposes_per_tile) + " per tile";
    if (m.transpose_buffers != d.transpose_buffers)
        s += ", " + std::to_string(m.transpose_buffers) + " buffers";
    if (m.resident_block != d.resident_block)
        s += ", blocks of " + std::to_string(m.resident_block);
    if (m.staging_buffers != d.staging_buffers)
        s += ", staging in " + std::to_string(m.staging_buffers) + " buffers";
    if (m.store_columns != d.store_columns)
        s += ", stores of " + std::to_string(m.store_columns) + " columns";
    if (m.k_block != d.k_block)
        s += ", k blocks of " + std::to_string(m.k_block);
    return s;
}

/** Reads describe_attention's parts ("attention", then its numbers). */
bool parse_attention(const std::vector<std::string> &parts, AttentionPlan &a) {
    for (size_t i = 1; i < parts.size(); i++) {
        bool matched = parts[i] == kPerBatchItem || parts[i] == kOperandsPerHead;
        if (parts[i] == kPerBatchItem)
            a.outputs_per_batch_item = true;
        if (parts[i] == kOperandsPerHead)
            a.operands_per_head = true;
        for (const AttentionPart &part : kAttentionParts)
            if (int n = number_in(parts[i], part.prefix, part.suffix); n > 0) {
                a.*part.field = n;
                matched = true;
            }
        if (!matched)
            return false;
    }
    return true;
}

/** Reads describe_matmul's parts ("matmul <operands>", then its numbers). */
bool parse_matmul(const std::vector<std::string> &parts, MatmulPlan &m) {
    bool known = false;
    for (MatmulPlan::Operands o : {MatmulPlan::Operands::Auto, MatmulPlan::Operands::WholeRows,
                                   MatmulPlan::Operands::AResident, MatmulPlan::Operands::BResident,
                                   MatmulPlan::Operands::Streamed, MatmulPlan::Operands::KBlocked})
        if (parts[0] == std::string("matmul ") + operands_name(o)) {
            m.operands = o;
            known = true;
        }
    if (!known)
        return false;
    for (size_t i = 1; i < parts.size(); i++) {
        int n = -1;
        if ((n = number_in(parts[i], "n <= ", "")) > 0)
            m.max_tile_n = n;
        else if ((n = number_in(parts[i], "transposes ", " per tile")) > 0)
            m.transposes_per_tile = n;
        else if ((n = number_in(parts[i], "staging in ", " buffers")) > 0)
            m.staging_buffers = n;
        else if ((n = number_in(parts[i], "stores of ", " columns")) > 0)
            m.store_columns = n;
        else if ((n = number_in(parts[i], "", " buffers")) > 0)
            m.transpose_buffers = n;
        else if ((n = number_in(parts[i], "k blocks of ", "")) > 0)
            m.k_block = n;
        else if ((n = number_in(parts[i], "blocks of ", "")) > 0)
            m.resident_block = n;
        else
            return false;
    }
    return true;
}

} // namespace

std::string SchedulePlan::describe() const {
    if (is_default())
        return "default";
    nhc_assert(int(!(matmul == MatmulPlan())) + int(!(attention == AttentionPlan())) +
                       int(!(image == ImagePlan())) <=
                   1,
               "a plan for more than one kind of group");
    std::vector<std::string> parts;
    if (image.pad_on_chip)
        parts.push_back(kImagePaddedOnChip);
    else if (!(attention == AttentionPlan()))
        parts.push_back(describe_attention(attention));
    else if (!(matmul == MatmulPlan()))
        parts.push_back(describe_matmul(matmul));
    if (pe_critical_path)
        parts.push_back(kPeCriticalPath);
    if (output_resident)
        parts.push_back(kOutputResident);
    std::string s;
    for (const std::string &part : parts)
        s += (s.empty() ? "" : ", ") + part;
    return s;
}

bool parse_plan(const std::string &text, SchedulePlan &plan) {
    plan = SchedulePlan();
    if (text == "default")
        return true;
    std::vector<std::string> parts;
    for (size_t at = 0; at <= text.size();) {
        size_t comma = text.find(", ", at);
        parts.push_back(
            text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        at = comma == std::string::npos ? text.size() + 1 : comma + 2;
    }
    // The flags, last and in describe()'s order.
    if (!parts.empty() && parts.back() == kOutputResident) {
        plan.output_resident = true;
        parts.pop_back();
    }
    if (!parts.empty() && parts.back() == kPeCriticalPath) {
        plan.pe_critical_path = true;
        parts.pop_back();
    }
    bool parsed = parts.empty();
    if (!parsed && parts.size() == 1 && parts[0] == kImagePaddedOnChip)
        parsed = plan.image.pad_on_chip = true;
    else if (!parsed)
        parsed = parts[0] == "attention" ? parse_attention(parts, plan.attention)
                                         : parse_matmul(parts, plan.matmul);
    // One way to write each plan ("matmul auto" alone is written "default").
    return parsed && !plan.is_default() && plan.describe() == text;
}

} // namespace nhc::sched
