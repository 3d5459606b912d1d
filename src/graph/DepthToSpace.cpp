#include "graph/DepthToSpace.h"

#include "graph/GraphRewriter.h"
#include "support/Error.h"

namespace nhc {

namespace {

void rearrange(Graph &g, const Node &n, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    int64_t b = n.attr_int("blocksize", 0);
    if (x.shape.size() != 4 || b < 1)
        user_error("NHC_EALG001", n.describe(), ": expected a 4-D input and a positive blocksize");
    int64_t batch = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
    GraphRewriter r(g, n, "__rearrange", out);
    Shape six;
    std::vector<int64_t> perm;
    if (n.op_type == "SpaceToDepth") {
        six = {batch, c, h / b, b, w / b, b};
        perm = {0, 3, 5, 1, 2, 4};
    } else if (n.attr_string("mode", "DCR") == "CRD") {
        six = {batch, c / (b * b), b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
    } else {
        six = {batch, b, b, c / (b * b), h, w};
        perm = {0, 3, 4, 1, 5, 2};
    }
    r.reshape(r.transpose(r.reshape(n.inputs[0], six), perm), g.value(n.outputs[0]).shape,
              n.outputs[0]);
}

} // namespace

int lower_depth_space(Graph &g) {
    return rewrite_each(g, "DepthToSpace", rearrange) + rewrite_each(g, "SpaceToDepth", rearrange);
}

} // namespace nhc
