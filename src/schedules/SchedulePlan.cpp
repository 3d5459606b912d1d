#include "schedules/SchedulePlan.h"

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
    }
    return "?";
}

std::string SchedulePlan::describe() const {
    if (is_default())
        return "default";
    std::string s = std::string("matmul ") + operands_name(matmul.operands);
    if (matmul.max_tile_n > 0)
        s += ", n <= " + std::to_string(matmul.max_tile_n);
    return s;
}

bool parse_plan(const std::string &text, SchedulePlan &plan) {
    plan = SchedulePlan();
    if (text == "default")
        return true;
    const std::string head = "matmul ";
    if (text.compare(0, head.size(), head) != 0)
        return false;
    std::string rest = text.substr(head.size()), operands = rest.substr(0, rest.find(','));
    bool known = false;
    for (MatmulPlan::Operands o : {MatmulPlan::Operands::Auto, MatmulPlan::Operands::WholeRows,
                                   MatmulPlan::Operands::AResident, MatmulPlan::Operands::BResident,
                                   MatmulPlan::Operands::Streamed})
        if (operands == operands_name(o)) {
            plan.matmul.operands = o;
            known = true;
        }
    if (!known)
        return false;
    if (rest.size() == operands.size())
        return !plan.is_default(); // "matmul auto" alone is written "default"
    const std::string tile = ", n <= ";
    std::string n = rest.substr(operands.size());
    if (n.compare(0, tile.size(), tile) != 0 || n.size() == tile.size() ||
        n.size() > tile.size() + 6 ||
        n.find_first_not_of("0123456789", tile.size()) != std::string::npos)
        return false;
    plan.matmul.max_tile_n = std::stoi(n.substr(tile.size()));
    return plan.matmul.max_tile_n > 0 && plan.describe() == text;
}

} // namespace nhc::sched
